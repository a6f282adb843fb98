"""Reading checklist files: our JSON (every container shape), RubberDuckBench point rubrics and CheckEval
yes/no questions converted without rescaling, and every broken file refused with the file (and line) named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.core.checklist import CLARITY_KEY_POINT, Checklist, clarity_item, validate
from benchwright.core.errors import InputFileError
from benchwright.core.importers.checklists import (
    ChecklistRecord,
    conversion_notes,
    convert_checkeval,
    convert_rubberduck,
    read_checklists,
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8", newline="")
    return path


def ours(pair: str | None = "p1", weights=(5, 4), **extra) -> dict:
    items = [
        {"kind": "knowledge", "key_point": f"point {n}", "weight": w,
         "rubric": [{"score": w, "criterion": "covered"}, {"score": 0, "criterion": "missed"}]}
        for n, w in enumerate(weights, start=1)
    ]
    items.append(clarity_item().model_dump(mode="json"))
    return {**({"qa_pair_id": pair} if pair else {}), "items": items, **extra}


def refused(path: Path, **kwargs) -> InputFileError:
    with pytest.raises(InputFileError) as info:
        read_checklists(path, **kwargs)
    assert str(path) in str(info.value)
    assert all(p.file == str(path) for p in info.value.problems)
    assert "nothing was imported" in str(info.value)
    return info.value


# ---------------------------------------------------------------------------------------------- ours
def test_single_object(tmp_path):
    [r] = read_checklists(write(tmp_path / "c.json", json.dumps(ours(), indent=2)))
    assert isinstance(r, ChecklistRecord)
    assert (r.pair_ref, r.question, r.source_format, r.line, r.violations) == ("p1", None, "benchwright", 1, [])
    assert [it.weight for it in r.checklist.items] == [5, 4, 1]
    assert r.checklist == Checklist.model_validate({"items": ours()["items"]})


def test_list_of_objects_and_checklists_key(tmp_path):
    docs = [ours("p1"), ours("p2", (3, 3, 3)), ours("p3", (9,))]
    for text in (json.dumps(docs), json.dumps({"checklists": docs}, indent=1)):
        records = read_checklists(write(tmp_path / "c.json", text))
        assert [r.pair_ref for r in records] == ["p1", "p2", "p3"]
        assert [len(r.checklist.knowledge_items) for r in records] == [2, 3, 1]
        assert all(r.violations == [] and r.source_format == "benchwright" for r in records)


def test_json_lines_keep_their_line_numbers(tmp_path):
    text = json.dumps(ours("p1")) + "\n\n" + json.dumps(ours("p2", (4, 4))) + "\n" + json.dumps(ours("p3")) + "\n"
    records = read_checklists(write(tmp_path / "c.jsonl", text))
    assert [(r.pair_ref, r.line) for r in records] == [("p1", 1), ("p2", 3), ("p3", 4)]
    assert [v.rule for v in records[1].violations] == ["weight-sum"]  # returned with its violations, not fixed
    assert [it.weight for it in records[1].checklist.knowledge_items] == [4, 4]


def test_question_text_or_pair_option_names_the_pair(tmp_path):
    [r] = read_checklists(write(tmp_path / "c.json", json.dumps(ours(None, question="How are routes registered?"))))
    assert (r.pair_ref, r.question) == (None, "How are routes registered?")
    [r] = read_checklists(write(tmp_path / "c.json", json.dumps(ours(None))), pair="given")
    assert r.pair_ref == "given"
    [r] = read_checklists(write(tmp_path / "c.json", json.dumps(ours("in-file"))), pair="given")
    assert r.pair_ref == "in-file"


def test_an_exported_line_reads_back(tmp_path):
    exported = {"qa_pair_id": "p1", "version": 3, "origin": "edited", "draft": False, "valid": True, **ours(None)}
    [r] = read_checklists(write(tmp_path / "c.jsonl", json.dumps(exported, sort_keys=True) + "\n"))
    assert r.pair_ref == "p1" and r.violations == [] and len(r.checklist.items) == 3


@pytest.mark.parametrize(("mutate", "field"), [
    (lambda d: d["items"][0].update(weight="5"), "items.0.weight"),
    (lambda d: d["items"][0].update(weight=5.5), "items.0.weight"),
    (lambda d: d["items"][1]["rubric"][0].update(score=True), "items.1.rubric.0.score"),
    (lambda d: d["items"][0].pop("key_point"), "items.0.key_point"),
    (lambda d: d["items"][0].update(kind="bonus"), "items.0.kind"),
    (lambda d: d["items"][0].update(extra=1), "items.0.extra"),
])
def test_bad_fields_of_our_json_are_named(tmp_path, mutate, field):
    doc = ours()
    mutate(doc)
    lines = json.dumps(ours("p0")) + "\n" + json.dumps(doc) + "\n"
    e = refused(write(tmp_path / "c.jsonl", lines))
    assert [(p.line, p.field) for p in e.problems] == [(2, field)]


# --------------------------------------------------------------------------------------- RubberDuckBench
RUBBERDUCK = [
    {"desc": "Does the answer state or imply that both expressions produce the same result?", "points": 2,
     "subitems": [
         {"desc": "1 point should be deducted if the answer only says they might be equal", "points": 1, "lie": False},
         {"desc": "2 points should be deducted if the answer claims they differ", "points": 2, "lie": True}]},
    {"desc": "Does the answer explain that list.sort() sorts in place and returns None?", "points": 3,
     "subitems": [
         {"desc": "1 point should be deducted if it omits that the return value is None", "points": 1, "lie": False},
         {"desc": "1 point should be deducted if it says a copy is sorted", "points": 1, "lie": True}]},
    {"desc": "Does the answer mention that sorted() accepts any iterable?", "points": 3, "subitems": []},
]


def test_rubberduck_rubric_is_converted_without_rescaling(tmp_path):
    [r] = read_checklists(write(tmp_path / "rubric.json", json.dumps(RUBBERDUCK, indent=2)), pair="p1")
    assert (r.pair_ref, r.source_format) == ("p1", "rubberduck")
    k = r.checklist.knowledge_items
    assert [it.key_point for it in k] == [x["desc"] for x in RUBBERDUCK]
    assert [it.weight for it in k] == [2, 3, 3]  # sums to 8: kept, reported, never rescaled to 9
    assert [v.rule for v in r.violations] == ["weight-sum"]
    assert str(r.violations[0]) == "knowledge weights sum to 8; they must sum to 9"
    # allowed scores: the points, the points minus every total of its deductions (clamped at 0), and 0
    assert [it.allowed_scores for it in k] == [[0, 1, 2], [0, 1, 2, 3], [0, 3]]
    first = {t.score: t.criterion for t in k[0].rubric}
    assert first[2] == f"Fully satisfies: {RUBBERDUCK[0]['desc']}"
    assert first[1] == RUBBERDUCK[0]["subitems"][0]["desc"]
    assert first[0] == RUBBERDUCK[0]["subitems"][1]["desc"] + " (a false claim)"  # the 2-point deduction is 0
    second = {t.score: t.criterion for t in k[1].rubric}
    assert second[2] == (RUBBERDUCK[1]["subitems"][0]["desc"] + " / "
                         + RUBBERDUCK[1]["subitems"][1]["desc"] + " (a false claim)")  # equal scores joined
    assert second[0] == "Does not address the point, or contradicts it."
    assert [t.score for t in k[0].rubric] == [2, 1, 0]  # highest first
    assert r.checklist.items[-1] == clarity_item()


def test_rubberduck_rubric_summing_to_nine_is_valid_and_one_named_pair_per_line(tmp_path):
    rubric = [*RUBBERDUCK, {"desc": "Does it cite the docs?", "points": 1, "subitems": []}]
    lines = "".join(json.dumps({"qa_pair_id": f"p{n}", "rubric": rubric}) + "\n" for n in (1, 2))
    records = read_checklists(write(tmp_path / "rubrics.jsonl", lines))
    assert [(r.pair_ref, r.line, r.source_format, r.violations) for r in records] == [
        ("p1", 1, "rubberduck", []), ("p2", 2, "rubberduck", [])]


def test_rubberduck_deductions_larger_than_the_points_score_zero():
    checklist = convert_rubberduck([{"desc": "d", "points": 9, "subitems": [{"desc": "x", "points": 12}]}])
    assert checklist.items[0].allowed_scores == [0, 9]  # RubberDuckBench never scores an item below 0
    assert checklist.items[0].rubric[-1].criterion == "x"
    assert validate(checklist) == []


def test_rubberduck_deductions_of_no_points_stay_and_are_reported():
    checklist = convert_rubberduck([{"desc": "d", "points": 9, "subitems": [{"desc": "x", "points": -1}]}])
    assert checklist.items[0].allowed_scores == [0, 9, 10]
    assert [v.rule for v in validate(checklist)] == ["rubric-out-of-range"]


# RubberDuckBench java/2 (user2716/RubberDuckBench dataset/java/rubrics/2.json, points and deductions as published):
# its human graders deducted 2a+2b+2c (item 2 scores 1) in 40 of 60 applications, a score no single deduction gives.
JAVA2 = [
    {"desc": "Does the answer discuss key mutability and size differences between HashMap and singletonMap?",
     "points": 3, "subitems": [{"desc": f"1a-{x}", "points": 1, "lie": False} for x in "abc"]},
    {"desc": "Does the answer discuss messageParams?", "points": 4, "subitems": [
        {"desc": "no signature", "points": 1, "lie": False}, {"desc": "no HashMap", "points": 1, "lie": False},
        {"desc": "no read-only usages", "points": 1, "lie": False},
        {"desc": "says the usages modify the map", "points": 2, "lie": True}]},
]


def _human_score(rubric: list[dict], item: int, deducted: str) -> int:
    """RubberDuckBench's scoring of one item: its points minus the deductions applied (``2a,2b``), at least 0."""
    subs = rubric[item]["subitems"]
    taken = [subs[ord(x[1]) - ord("a")]["points"] for x in deducted.split(",") if x and int(x[0]) == item + 1]
    return max(rubric[item]["points"] - sum(taken), 0)


@pytest.mark.parametrize("deducted", ["", "2a", "2a,2b", "2a,2b,2c", "2b,2d", "2a,2b,2d", "2a,2b,2c,2d",
                                      "1a,1b,2a,2b,2c", "1a,1b,1c"])
def test_rubberduck_every_combination_of_deductions_is_an_allowed_score(deducted):
    checklist = convert_rubberduck(JAVA2)
    for n, item in enumerate(checklist.knowledge_items):
        assert _human_score(JAVA2, n, deducted) in item.allowed_scores


def test_rubberduck_combined_deductions_get_their_own_tier_and_the_note_counts_them(tmp_path):
    [r] = read_checklists(write(tmp_path / "java2.json", json.dumps(JAVA2)), pair="p1")
    first, second = r.checklist.knowledge_items
    assert first.allowed_scores == [0, 1, 2, 3] and second.allowed_scores == [0, 1, 2, 3, 4]
    tiers = {t.score: t.criterion for t in second.rubric}
    assert tiers[3] == "no signature / no HashMap / no read-only usages"  # single deductions of 1, joined
    assert tiers[2] == "says the usages modify the map (a false claim)"  # the single deduction of 2 comes first
    assert tiers[1] == ("Several deductions together: (-1) no signature + (-2) says the usages modify the map "
                        "(a false claim)")  # the fewest deductions taking 3 points
    assert conversion_notes(r) == ["item 1 (weight 3): 4 allowed scores (3, 2, 1, 0)",
                                   "item 2 (weight 4): 5 allowed scores (4, 3, 2, 1, 0)"]


def test_rubberduck_many_deductions_convert_without_enumerating_every_subset():
    rubric = [{"desc": "d", "points": 9, "subitems": [{"desc": f"x{i}", "points": 1 + i % 3} for i in range(200)]}]
    assert convert_rubberduck(rubric).items[0].allowed_scores == list(range(10))


@pytest.mark.parametrize(("rubric", "field"), [
    ([RUBBERDUCK[0], {"desc": "no points here", "subitems": []}], "item 2"),
    ([RUBBERDUCK[0], {"desc": "text points", "points": "3"}], "item 2"),
    ([{"desc": "bool points", "points": True}, RUBBERDUCK[1]], "item 1"),
    ([{"desc": "d", "points": 3, "subitems": [{"desc": "x", "points": 1.5}]}], "item 1.subitems[1]"),
    ([{"desc": "d", "points": 3, "subitems": [{"desc": None, "points": 1}]}], "item 1.subitems[1]"),
    ([{"desc": "d", "points": 3, "subitems": ["1 point off"]}], "item 1.subitems[1]"),
])
def test_rubberduck_items_without_integer_points_are_named(tmp_path, rubric, field):
    path = write(tmp_path / "rubric.json", json.dumps(rubric))
    e = refused(path, pair="p1")
    assert [p.field for p in e.problems] == [field]
    e = refused(path, pair="p1", fmt="rubberduck")
    assert [p.field for p in e.problems] == [field]


def test_rubberduck_problems_in_json_lines_name_the_line(tmp_path):
    bad = [{"desc": "d", "points": 3, "subitems": [{"desc": "x"}]}]
    lines = json.dumps({"qa_pair_id": "a", "rubric": RUBBERDUCK}) + "\n" + json.dumps({"qa_pair_id": "b", "rubric": bad})
    e = refused(write(tmp_path / "r.jsonl", lines))
    assert [(p.line, p.field) for p in e.problems] == [(2, "item 1.subitems[1]")]
    assert "r.jsonl, line 2, field 'item 1.subitems[1]'" in str(e)


# ---------------------------------------------------------------------------------------------- CheckEval
CHECKEVAL_SEED = (  # as in CheckEval's prompt/summeval_questions/coherence_seed.yaml (trailing space included)
    "definition: \n"
    "  summeval: the collective quality of all sentences. The summary should be well-structured and well-organized.\n"
    "\n"
    "sub_aspect:\n"
    "  Topic Maintenance:\n"
    "    Does the summary consistently focus on the central topic without deviating into unrelated areas?\n"
    "  Logical Flow:\n"
    "    Does the summary present information in a logical order?\n"
    "  Consistent Point of View:\n"
    "    Is the point of view or perspective in the summary consistent with the source?"
)

# CheckEval's "elaboration" files hold several questions per sub-aspect, which YAML folds into one string.
CHECKEVAL_ELABORATED = (
    "definition: \n"
    "  summeval: the collective quality of all sentences.\n"
    "   \n"
    "sub_aspect:\n"
    "   Topic Maintenance: \n"
    "      Does the summary consistently focus on the central topic without deviating into unrelated areas?\n"
    "      Does each sentence in the summary relate directly to the main topic?\n"
    "   Logical Flow:\n"
    "      Does the summary present information in a logical order?\n"
    "      Are transitions between ideas or paragraphs smooth and logical?\n"
)


def test_checkeval_yaml_questions_become_binary_items_of_weight_one(tmp_path):
    [r] = read_checklists(write(tmp_path / "coherence_seed.yaml", CHECKEVAL_SEED), pair="p1")
    assert (r.pair_ref, r.source_format, r.line) == ("p1", "checkeval", 1)
    k = r.checklist.knowledge_items
    assert [it.key_point for it in k] == [
        "Does the summary consistently focus on the central topic without deviating into unrelated areas?",
        "Does the summary present information in a logical order?",
        "Is the point of view or perspective in the summary consistent with the source?",
    ]
    assert all(it.weight == 1 and it.is_binary for it in k)
    assert {t.score: t.criterion for t in k[1].rubric} == {
        1: "Yes: Does the summary present information in a logical order?", 0: "No."}
    assert [v.rule for v in r.violations] == ["weight-sum"]  # 3 points, not rescaled to 9
    assert r.checklist.items[-1].key_point == CLARITY_KEY_POINT


def test_checkeval_folded_questions_are_split_like_checkeval_does(tmp_path):
    [r] = read_checklists(write(tmp_path / "coherence_elaboration.yaml", CHECKEVAL_ELABORATED), pair="p1")
    assert [it.key_point for it in r.checklist.knowledge_items] == [
        "Does the summary consistently focus on the central topic without deviating into unrelated areas?",
        "Does each sentence in the summary relate directly to the main topic?",
        "Does the summary present information in a logical order?",
        "Are transitions between ideas or paragraphs smooth and logical?",
    ]
    assert [v.rule for v in r.violations] == ["weight-sum"]


def test_checkeval_question_lists(tmp_path):
    questions = [f"Does the answer name step {n}?" for n in range(1, 7)]
    [r] = read_checklists(write(tmp_path / "q.yaml", "".join(f"- {q}\n" for q in questions)), pair="p1")
    assert r.source_format == "checkeval" and [it.key_point for it in r.checklist.knowledge_items] == questions
    assert [v.rule for v in r.violations] == ["knowledge-count", "weight-sum"]
    [r] = read_checklists(write(tmp_path / "q.json", json.dumps(questions[:2])), pair="p1")
    assert len(r.checklist.knowledge_items) == 2
    data = {"definition": "d", "sub_aspect": {"A": ["Is it a?", "Is it b?"], "B": "Is it c?"}}
    [r] = read_checklists(write(tmp_path / "q2.json", json.dumps(data)), pair="p1")
    assert [it.key_point for it in r.checklist.knowledge_items] == ["Is it a?", "Is it b?", "Is it c?"]
    assert [it.key_point for it in convert_checkeval({"questions": ["Is x?", "  ", "Is y?"]}).knowledge_items] \
        == ["Is x?", "Is y?"]


def test_checkeval_repeated_questions_are_a_violation_not_dropped():
    checklist = convert_checkeval({"sub_aspect": {"A": "Is it clear?", "B": "is it  CLEAR?"}})
    assert len(checklist.knowledge_items) == 2
    assert [(v.rule, v.item) for v in validate(checklist)] == [("weight-sum", None), ("key-point-duplicate", 1)]


def test_checkeval_without_questions(tmp_path):
    e = refused(write(tmp_path / "q.yaml", "definition: x\nsub_aspect: {}\n"), pair="p1", fmt="checkeval")
    assert "no yes/no questions" in str(e)


# --------------------------------------------------------------------------------------------- broken
def test_invalid_json_names_the_line_where_it_breaks(tmp_path):
    text = json.dumps(ours(), indent=2).splitlines()
    text.insert(6, "    oops")
    e = refused(write(tmp_path / "c.json", "\n".join(text) + "\n"))
    [p] = e.problems
    assert p.line == 7 and p.message.startswith("invalid JSON: ")


def test_invalid_json_lines_name_the_line(tmp_path):
    lines = [json.dumps(ours("p1")), json.dumps(ours("p2")), '{"qa_pair_id": "p3", "items": [}', json.dumps(ours("p4"))]
    e = refused(write(tmp_path / "c.jsonl", "\n".join(lines) + "\n"))
    [p] = e.problems
    assert p.line == 3 and "invalid JSON" in p.message
    e = refused(write(tmp_path / "one.json", '{"items": [}'))
    assert e.problems[0].line == 1


def test_invalid_yaml_names_the_line(tmp_path):
    text = "definition: x\nsub_aspect:\n  A: Is it?\n  B: Is it: really?\n  C: Is it c?\n"
    [p] = refused(write(tmp_path / "q.yaml", text), pair="p1").problems
    assert (p.line, p.message) == (4, "invalid YAML: mapping values are not allowed here")
    [p] = refused(write(tmp_path / "q.yaml", "sub_aspect:\n  A: [unclosed\n  B: x\n"), pair="p1").problems
    assert p.message.startswith("invalid YAML: while parsing a flow sequence") and "<unicode string>" not in p.message


@pytest.mark.parametrize("text", [
    '{"name": "not a checklist"}',
    '[1, 2, 3]',
    'just some words\n',
    '"a string"',
    '[{"desc": "no points anywhere"}]',
    '{"checklists": [{"foo": 1}]}',
])
def test_unknown_shapes_are_refused(tmp_path, text):
    e = refused(write(tmp_path / "x.json", text), pair="p1")
    assert "not a checklist shape benchwright knows" in str(e)


@pytest.mark.parametrize("text", ["", "   \n\n"])
def test_empty_files_are_refused(tmp_path, text):
    e = refused(write(tmp_path / "empty.json", text))
    assert "the file is empty" in str(e)


def test_missing_file_and_unknown_format(tmp_path):
    assert "no such file" in str(refused(tmp_path / "nope.json"))
    e = refused(write(tmp_path / "c.json", json.dumps(ours())), fmt="excel")
    assert "unknown checklist format" in str(e)


def test_forced_format_that_does_not_fit_is_refused(tmp_path):
    path = write(tmp_path / "c.json", json.dumps(ours()))
    e = refused(path, fmt="rubberduck")
    assert "not a RubberDuckBench rubric" in str(e) and e.problems[0].line == 1
    e = refused(write(tmp_path / "r2.json", json.dumps({"qa_pair_id": "p", "rubric": 5})))
    assert "not a RubberDuckBench rubric" in str(e)
    e = refused(write(tmp_path / "r.json", json.dumps(RUBBERDUCK)), fmt="benchwright", pair="p1")
    assert e.problems
