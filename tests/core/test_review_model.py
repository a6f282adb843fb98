"""The review model: the four criteria, their JSON form, the verdict cycle, comparisons."""

from __future__ import annotations

import json

import pytest

from benchwright.core.review import CRITERIA, Criteria, Verdict, next_verdict


def judged(**verdicts: str | None) -> Criteria:
    c = Criteria()
    for name, v in verdicts.items():
        c.verdicts[name] = Verdict(v) if v else None
    return c


def test_criteria_are_the_four_qa_criteria_in_key_order():
    assert CRITERIA == ("qa_consistency", "checklist_quality", "task_validity", "code_relevance")
    assert Criteria().verdicts == dict.fromkeys(CRITERIA)


def test_json_round_trip_with_verdicts_and_notes():
    c = judged(qa_consistency="pass", checklist_quality="fail", task_validity="pass")
    c.notes = {"checklist_quality": "item 2 conflates two facts", "task_validity": "needs the repo ✓"}
    text = c.to_json()
    assert json.loads(text) == {
        "qa_consistency": {"verdict": "pass", "note": ""},
        "checklist_quality": {"verdict": "fail", "note": "item 2 conflates two facts"},
        "task_validity": {"verdict": "pass", "note": "needs the repo ✓"},
        "code_relevance": {"verdict": None, "note": ""},
    }
    back = Criteria.from_json(text)
    assert back == c
    assert back.verdicts["qa_consistency"] is Verdict.PASS
    assert back.verdicts["code_relevance"] is None
    assert back.to_json() == text  # stable


def test_to_json_is_stable_whatever_the_insertion_order():
    a, b = Criteria(), Criteria(verdicts={})
    a.verdicts["code_relevance"] = Verdict.FAIL
    b.verdicts["code_relevance"] = Verdict.FAIL
    assert a.to_json() == b.to_json()


@pytest.mark.parametrize("text", [None, ""])
def test_from_json_of_nothing_is_unjudged(text):
    c = Criteria.from_json(text)
    assert c.verdicts == dict.fromkeys(CRITERIA)
    assert c.notes == {}


def test_from_json_accepts_plain_verdict_strings_and_missing_criteria():
    c = Criteria.from_json(json.dumps({"qa_consistency": "fail", "task_validity": None}))
    assert c.verdicts["qa_consistency"] is Verdict.FAIL
    assert c.verdicts["task_validity"] is None
    assert c.verdicts["code_relevance"] is None


def test_from_json_keeps_a_note_without_verdict():
    c = Criteria.from_json(json.dumps({"code_relevance": {"verdict": None, "note": "unsure"}}))
    assert c.verdicts["code_relevance"] is None and c.notes == {"code_relevance": "unsure"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (json.dumps({"correctness": {"verdict": "pass"}}), "unknown criterion 'correctness'"),
        (json.dumps({"qa_consistency": {"verdict": "maybe"}}), "maybe"),
        (json.dumps({"qa_consistency": "PASS"}), "PASS"),
        (json.dumps(["qa_consistency"]), "JSON object"),
        ("null", "JSON object"),
        ("{not json", "Expecting"),
    ],
)
def test_from_json_errors_are_value_errors(text, message):
    with pytest.raises(ValueError, match=message):
        Criteria.from_json(text)


def test_next_verdict_cycles_unset_pass_fail_unset():
    assert next_verdict(None) is Verdict.PASS
    assert next_verdict(Verdict.PASS) is Verdict.FAIL
    assert next_verdict(Verdict.FAIL) is None
    v = None
    seen = []
    for _ in range(6):
        v = next_verdict(v)
        seen.append(v)
    assert seen == [Verdict.PASS, Verdict.FAIL, None] * 2


def test_differs_from_lists_differing_criteria_in_order():
    a = judged(qa_consistency="pass", checklist_quality="fail", code_relevance="pass")
    b = judged(qa_consistency="pass", checklist_quality="pass", task_validity="fail", code_relevance="pass")
    assert a.differs_from(b) == ["checklist_quality", "task_validity"]
    assert b.differs_from(a) == ["checklist_quality", "task_validity"]
    assert a.differs_from(a) == []
    assert Criteria().differs_from(Criteria()) == []
    # unjudged versus judged differs; notes do not count
    c = judged(code_relevance="pass")
    c.notes["code_relevance"] = "different note"
    assert Criteria().differs_from(c) == ["code_relevance"]
    d = judged(code_relevance="pass")
    assert c.differs_from(d) == []
