"""Answers, judgments, overrides and failure modes in the store: matching, idempotency, conflicts, contracts."""

from __future__ import annotations

import sqlite3

import pytest
from store_helpers import ALICE, QUEUE, import_pairs, make_pair

from benchwright.core.errors import InputFileError, InputProblem, NotFoundError
from benchwright.core.importers.answers import AnswerParseResult, AnswerRecord
from benchwright.core.judgment import JudgmentError, ScoreEntry, answer_id, effective_entries
from benchwright.db import Store
from benchwright.db.answers import AnswerConflictError

Q1, Q2 = QUEUE[0], QUEUE[1]


def rec(line: int, text: str, *, question: str | None = None, pair: str | None = None, **kw) -> AnswerRecord:
    return AnswerRecord(line=line, text=text, pair_ref=pair, questions=[("question", question)] if question else [],
                        **kw)


def imp(store: Store, records, **kw):
    kw.setdefault("model", "gpt")
    kw.setdefault("condition", "direct")
    kw.setdefault("created_by", ALICE)
    kw.setdefault("source_file", "answers.jsonl")
    return store.import_answers(records, **kw)


def count(store: Store, table: str) -> int:
    return store.db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def checklist_entries(scores=(5, 4, 1)):
    return [
        ScoreEntry(key="1", label="Names provider.py", kind="knowledge", score=scores[0], max=5, allowed=[0, 3, 5]),
        ScoreEntry(key="2", label="Explains escaping", kind="knowledge", score=scores[1], max=4, allowed=[0, 4]),
        ScoreEntry(key="3", label="Clarity & Organization", kind="clarity", score=scores[2], max=1, allowed=[0, 1]),
    ]


@pytest.fixture
def answered(loaded: Store) -> tuple[Store, str]:
    report = imp(loaded, [rec(1, "It escapes non-ASCII.", pair=Q1.id)])
    return loaded, report.answer_ids[0]


# ---------------------------------------------------------------------------------------------- import
def test_matches_by_id_and_by_exact_question_trimmed_only(loaded):
    report = imp(loaded, [
        rec(1, "A by id", pair=Q1.id),
        rec(2, "A by question", question="  " + Q2.question + "\n"),
        rec(3, "A with other inner spacing", question=QUEUE[2].question.replace(" ", "  ")),
        rec(4, "A by unknown id", pair="qa_0000000000000000"),
        rec(5, "A by unknown id, known question", pair="qa_0000000000000000", question=QUEUE[3].question),
    ])
    assert report.matched_by == {"qa_pair_id": 1, "question": 2}
    assert report.added == 3 and report.read == 5
    assert len(report.unmatched) == 2
    assert report.unmatched[0].startswith("line 3: 'What is 100 percent") and "no Q&A pair has this question" in \
        report.unmatched[0]
    assert report.unmatched[1] == "line 4: pair qa_0000000000000000 (no Q&A pair with id qa_0000000000000000)"
    stored = {a.qa_pair_id: a for a in loaded.answers()}
    assert set(stored) == {Q1.id, Q2.id, QUEUE[3].id}
    a = stored[Q2.id]
    assert a.id == answer_id(Q2.id, "gpt", "direct", "A by question")
    assert (a.model, a.condition, a.source_format, a.source_file, a.source_line) == (
        "gpt", "direct", "jsonl", "answers.jsonl", 2)


def test_unmatched_question_is_shown_with_its_first_60_characters(loaded):
    long_question = "Where is the thing that nobody asked about in this project and never will be? " * 2
    report = imp(loaded, [rec(7, "A", question=long_question)])
    assert report.unmatched == [f"line 7: {long_question[:60]!r}...".replace("'...", "...'") +
                                " (no Q&A pair has this question; tried question)"]
    assert count(loaded, "answers") == 0


def test_ambiguous_question_is_reported_not_imported(store, tmp_path):
    twins = [make_pair("Same question?", "One answer.", repository=None),
             make_pair("Same question?", "Another answer.", repository=None)]
    import_pairs(store, tmp_path, twins)
    report = imp(store, [rec(1, "A", question="Same question?")])
    assert report.added == 0 and report.matched == 0 and not report.unmatched
    assert len(report.ambiguous) == 1
    assert "question is the question of 2 pairs" in report.ambiguous[0]
    assert twins[0].id in report.ambiguous[0] and twins[1].id in report.ambiguous[0]


def test_second_candidate_question_matches_when_the_first_does_not(loaded):
    r = AnswerRecord(line=1, text="A", questions=[("origin_question", "Original wording?"), ("question", Q1.question)])
    report = imp(loaded, [r], condition="agentic")
    assert report.matched_by == {"question": 1} and report.added == 1


def test_reimport_adds_nothing_and_keeps_trajectory_and_extra(loaded):
    records = [rec(1, "A1", pair=Q1.id, trajectory=[{"type": "result", "result": "x"}], extra={"latency": 1.5})]
    assert imp(loaded, records).added == 1
    again = imp(loaded, records)
    assert (again.added, again.already_present) == (0, 1)
    (a,) = loaded.answers(model="gpt")
    assert a.trajectory == [{"type": "result", "result": "x"}] and a.extra == {"latency": 1.5}
    assert loaded.get_answer(a.id) == a
    assert loaded.answer_models() == [("gpt", "direct", 1)]


def test_a_different_answer_for_the_same_pair_model_and_condition_is_a_conflict(loaded):
    imp(loaded, [rec(1, "First answer", pair=Q1.id)])
    records = [rec(1, "Second answer", pair=Q1.id), rec(2, "New", pair=Q2.id)]
    with pytest.raises(AnswerConflictError) as err:
        imp(loaded, records)
    assert "line 1: pair" in str(err.value) and "already has a different answer by gpt under direct" in str(err.value)
    assert count(loaded, "answers") == 1  # nothing of the second file was written
    report = imp(loaded, records, skip_invalid=True)
    assert report.added == 1 and len(report.conflicts) == 1
    # another model or condition is no conflict
    assert imp(loaded, [rec(1, "Second answer", pair=Q1.id)], model="claude").added == 1
    assert imp(loaded, [rec(1, "Second answer", pair=Q1.id)], condition="closed-book").added == 1


def test_conflicts_and_duplicates_within_one_file(loaded):
    with pytest.raises(AnswerConflictError, match=r"a different answer to pair .* than line 1"):
        imp(loaded, [rec(1, "A", pair=Q1.id), rec(2, "B", question=Q1.question)])
    report = imp(loaded, [rec(1, "A", pair=Q1.id), rec(2, "A", question=Q1.question)])
    assert (report.added, report.duplicates_in_file) == (1, 1)


def test_invalid_records_refuse_the_import_unless_skip_invalid(loaded):
    problem = InputProblem("answers.jsonl", 2, "answer", "required field is missing")
    result = AnswerParseResult("jsonl", "answers.jsonl", read=2, records=[rec(1, "A", pair=Q1.id)], problems=[problem])
    with pytest.raises(InputFileError, match="line 2, field 'answer'"):
        imp(loaded, result)
    assert count(loaded, "answers") == 0
    report = imp(loaded, result, skip_invalid=True)
    assert report.added == 1 and report.skipped == [problem] and report.read == 2


def test_bad_model_condition_and_scale(loaded):
    with pytest.raises(JudgmentError, match="unknown condition 'open-book'"):
        imp(loaded, [rec(1, "A", pair=Q1.id)], condition="open-book")
    with pytest.raises(JudgmentError, match="model name"):
        imp(loaded, [rec(1, "A", pair=Q1.id)], model=" ")
    with pytest.raises(JudgmentError, match="no scale"):
        imp(loaded, [rec(1, "A", pair=Q1.id, scores={"x": 1})])


def test_imported_scores_become_one_judgment_per_answer_idempotently(loaded):
    records = [rec(1, "A", pair=Q1.id, scores={"correctness": 6, "clarity": 14}, critique="Too vague.")]
    report = imp(loaded, records, scale=20, judge_model="gpt-4o")
    assert (report.judgments_added, report.judgments_present) == (1, 0)
    (j,) = loaded.judgments()
    assert (j.judge, j.judge_model, j.status, j.scale_max, j.run_index, j.critique) == (
        "imported", "gpt-4o", "scored", 20, 0, "Too vague.")
    assert [(e.key, e.kind, e.score, e.max, e.allowed) for e in j.entries] == [
        ("correctness", "dimension", 6, 20, None), ("clarity", "dimension", 14, 20, None)]
    assert j.score_rate == pytest.approx(20 / 40)
    again = imp(loaded, records, scale=20, judge_model="gpt-4o")
    assert (again.judgments_added, again.judgments_present) == (0, 1) and count(loaded, "judgments") == 1


# ------------------------------------------------------------------------------------------- judgments
def test_save_judgment_computes_the_rate_and_is_append_only(answered):
    store, aid = answered
    j = store.save_judgment(aid, "checklist", "judge-a", entries=checklist_entries(), checklist_version=1,
                            call_ids=[3, 4], created_by=ALICE, run_index=1, seed=7)
    assert j.score_rate == pytest.approx(1.0) and j.call_ids == [3, 4] and j.checklist_version == 1
    assert store.get_judgment(j.id) == j
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.db.conn.execute("UPDATE judgments SET score_rate = 0 WHERE id = ?", [j.id])
    later = store.save_judgment(aid, "checklist", "judge-a", entries=checklist_entries((3, 0, 1)), run_index=1,
                                created_by=ALICE)
    assert later.score_rate == pytest.approx(0.4)
    assert store.latest_judgment(aid, "checklist", "judge-a", 1) == later
    assert store.latest_judgment(aid, "checklist", "judge-a", 0) is None
    assert [x.id for x in store.judgments(answer_id=aid)] == [j.id, later.id]
    assert [x.id for x in store.judgments(answer_id=aid, latest_only=True)] == [later.id]
    assert store.judgments(judge="swe-qa-pro") == [] and store.judgments(judge_model="judge-b") == []


def test_save_judgment_with_a_uid_is_idempotent(answered):
    store, aid = answered
    first = store.save_judgment(aid, "checklist", "m", entries=checklist_entries(), created_by=ALICE, uid="u1")
    second = store.save_judgment(aid, "checklist", "m", entries=checklist_entries(), created_by=ALICE, uid="u1")
    assert first == second and count(store, "judgments") == 1


def test_unscored_judgments_need_a_reason_and_have_no_rate(answered):
    store, aid = answered
    with pytest.raises(JudgmentError, match="needs the reason"):
        store.save_judgment(aid, "swe-qa-pro", "m", entries=[], status="unscored", created_by=ALICE)
    j = store.save_judgment(aid, "swe-qa-pro", "m", entries=[], status="unscored", reason="score 11 not allowed",
                            raw_text='{"correctness": 11}', created_by=ALICE)
    assert (j.status, j.score_rate, j.raw_text, j.scored) == ("unscored", None, '{"correctness": 11}', False)


def test_save_judgment_refusals(answered):
    store, aid = answered
    with pytest.raises(NotFoundError, match="no answer with id ans_nope"):
        store.save_judgment("ans_nope", "checklist", "m", entries=checklist_entries(), created_by=ALICE)
    with pytest.raises(JudgmentError, match="unknown judge"):
        store.save_judgment(aid, "rubric", "m", entries=checklist_entries(), created_by=ALICE)
    missing = [*checklist_entries()[:2], ScoreEntry(key="3", kind="clarity", score=None, max=1, allowed=[0, 1])]
    with pytest.raises(JudgmentError, match=r"missing: \['3'\]"):
        store.save_judgment(aid, "checklist", "m", entries=missing, created_by=ALICE)
    with pytest.raises(JudgmentError, match="repeat"):
        store.save_judgment(aid, "checklist", "m", entries=checklist_entries() + checklist_entries()[:1],
                            created_by=ALICE)
    too_big = [ScoreEntry(key="correctness", kind="dimension", score=18, max=20)]
    with pytest.raises(JudgmentError, match="outside"):
        store.save_judgment(aid, "swe-qa-pro", "m", entries=too_big, created_by=ALICE)  # 18 / 10 > 1
    with pytest.raises(JudgmentError, match="invalid score entry"):
        store.save_judgment(aid, "checklist", "m", entries=[{"key": "1", "kind": "knowledge", "score": 2, "max": 1}],
                            created_by=ALICE)
    with pytest.raises(JudgmentError, match="run index"):
        store.save_judgment(aid, "checklist", "m", entries=checklist_entries(), run_index=-1, created_by=ALICE)
    assert count(store, "judgments") == 0


# ------------------------------------------------------------------------------------------- overrides
def test_override_keeps_the_original_and_the_latest_wins(answered):
    store, aid = answered
    j = store.save_judgment(aid, "checklist", "m", entries=checklist_entries(), created_by=ALICE)
    o1 = store.add_override(j.id, "1", 3, "only names the module", "bob")
    o2 = store.add_override(j.id, "1", 0, "wrong file entirely", "carol")
    assert (o1.original_score, o1.score, o2.original_score) == (5, 3, 5)
    assert store.get_judgment(j.id).entries[0].score == 5  # the judgment keeps the judge's score
    entries, used = effective_entries(j, store.overrides(j.id))
    assert [e.score for e in entries] == [0, 4, 1] and used == 1
    assert store.overrides() == [o1, o2] and store.overrides(j.id + 1) == []


def test_override_refusals(answered):
    store, aid = answered
    j = store.save_judgment(aid, "checklist", "m", entries=checklist_entries(), created_by=ALICE)
    bad = store.save_judgment(aid, "checklist", "m", entries=[], status="unscored", reason="no JSON", created_by=ALICE)
    with pytest.raises(JudgmentError, match="has no score '4'"):
        store.add_override(j.id, "4", 1, "x", "bob")
    with pytest.raises(JudgmentError, match=r"score 2 is not one of \[0, 3, 5\]"):
        store.add_override(j.id, "1", 2, "x", "bob")
    with pytest.raises(JudgmentError, match="needs a reason"):
        store.add_override(j.id, "1", 3, " ", "bob")
    with pytest.raises(JudgmentError, match="unscored"):
        store.add_override(bad.id, "1", 3, "x", "bob")
    with pytest.raises(JudgmentError, match="annotator"):
        store.add_override(j.id, "1", 3, "x", "")
    with pytest.raises(NotFoundError):
        store.add_override(999, "1", 3, "x", "bob")
    assert count(store, "score_overrides") == 0


# ------------------------------------------------------------------------------------------ failure modes
def test_failure_modes_latest_wins_and_rules(answered):
    store, aid = answered
    assert store.failure_mode(aid) is None
    llm = store.add_failure_mode(aid, "hallucination", "cites a missing file", "llm", judge_model="judge-a",
                                 call_ids=[9])
    fix = store.add_failure_mode(aid, "context-miss", "the file exists; it missed the caller", "annotator",
                                 annotator="bob")
    assert store.failure_mode(aid) == fix and store.failure_mode_history(aid) == [llm, fix]
    assert llm.call_ids == [9] and fix.annotator == "bob"
    with pytest.raises(JudgmentError, match="unknown failure mode"):
        store.add_failure_mode(aid, "laziness", "", "llm", judge_model="m")
    with pytest.raises(JudgmentError, match="annotator's name"):
        store.add_failure_mode(aid, "edit-bias", "", "annotator")
    with pytest.raises(JudgmentError, match="model's name"):
        store.add_failure_mode(aid, "edit-bias", "", "llm")
    with pytest.raises(NotFoundError):
        store.add_failure_mode("ans_nope", "edit-bias", "", "llm", judge_model="m")


# ------------------------------------------------------------------------------ new-user trial findings
def test_changed_imported_scores_conflict_and_identical_ones_are_idempotent(loaded):
    scored = dict(pair=Q1.id, scores={"correctness": 5, "clarity": 9}, critique="ok")
    first = imp(loaded, [rec(1, "A", **scored)], scale=10)
    assert first.judgments_added == 1
    again = imp(loaded, [rec(1, "A", **scored)], scale=10)
    assert (again.judgments_added, again.judgments_present) == (0, 1)
    for records, scale, why in [
        ([rec(3, "A", **scored)], 12, "scale 0-10 there, --scale 12 here"),
        ([rec(4, "A", **{**scored, "scores": {"correctness": 6, "clarity": 9}})], 10, "scores differ (correctness 5 -> 6)"),
        ([rec(5, "A", **{**scored, "critique": "other"})], 10, "the critique differs"),
    ]:
        with pytest.raises(AnswerConflictError) as e:
            imp(loaded, records, scale=scale)
        assert f"line {records[0].line}: pair {Q1.id}: answer " in str(e.value) and why in str(e.value)
        assert "already has imported scores by judge model unknown" in str(e.value)
        assert count(loaded, "judgments") == 1
    report = imp(loaded, [rec(6, "A", **scored), rec(7, "A", **{**scored, "scores": {"correctness": 1, "clarity": 1}})],
                 scale=10, skip_invalid=True)
    assert report.judgments_present == 1 and len(report.conflicts) == 1 and report.conflicts[0].startswith("line 7:")
    assert count(loaded, "judgments") == 1
    # another judge model's scores are a separate series, not a conflict
    other = imp(loaded, [rec(8, "A", **{**scored, "scores": {"correctness": 1, "clarity": 1}})], scale=10,
                judge_model="someone-else")
    assert other.judgments_added == 1


def test_two_lines_giving_one_answer_different_scores_conflict(loaded):
    with pytest.raises(AnswerConflictError, match=r"line 2: .*different imported scores for answer .* than line 1"):
        imp(loaded, [rec(1, "A", pair=Q1.id, scores={"x": 1}), rec(2, "A", pair=Q1.id, scores={"x": 2})], scale=5)
    assert count(loaded, "answers") == 0


def test_id_naming_another_pair_than_the_question_and_position_ids_are_warned(loaded):
    ordinals = {p: loaded.ordinal_of(p) for p in (Q1.id, Q2.id)}
    report = imp(loaded, [
        rec(1, "A", pair=Q1.id, question=Q2.question, pair_field="pair_id"),
        rec(2, "B", pair="#2", question=Q2.question),
        rec(3, "C", pair="#3"),
        rec(4, "D", question=QUEUE[3].question),
    ])
    assert report.warnings == [
        f"line 1: pair_id names #{ordinals[Q1.id]} but its question is #{ordinals[Q2.id]}'s; matched by id",
        "line 2: qa_pair_id '#2' is not a pair id (it looks like a queue position; pair ids look like qa_...); "
        "matched by question",
    ]
    assert report.unmatched == ["line 3: pair #3 (qa_pair_id '#3' is not a pair id (it looks like a queue "
                                "position; pair ids look like qa_...))"]
    assert report.matched_by == {"qa_pair_id": 1, "question": 2}
