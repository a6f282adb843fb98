"""Human judgments in the store (issue 20 item 5): the storage contract, its refusals, and that LLM-judge code
paths (report, stability, releases' judge list, judge cycling) do not count human rows unless asked."""

from __future__ import annotations

import pytest
from store_helpers import ALICE, QUEUE

from benchwright.core.checklist import (
    Checklist,
    ChecklistItem,
    ItemKind,
    RubricTier,
    binary_rubric,
    clarity_item,
)
from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.core.human import latest_per_annotator
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.judges import HUMAN_JUDGE, JUDGE_REGISTRY, LLM_JUDGES, human_label, judge_label
from benchwright.core.judgment import JudgmentError, ScoreEntry
from benchwright.core.metrics import build_report
from benchwright.db import Store
from benchwright.db.report import report_inputs

Q1, Q2 = QUEUE[0], QUEUE[1]


def checklist() -> Checklist:
    return Checklist(items=[
        ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point="Names provider.py", weight=5,
                      rubric=[RubricTier(score=s, criterion=f"c{s}") for s in (0, 3, 5)]),
        ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point="Explains escaping", weight=4, rubric=binary_rubric(4)),
        clarity_item(),
    ])


def llm_entries(scores=(5, 4, 1)):
    c = checklist()
    return [ScoreEntry(key=str(n), label=it.key_point, kind=it.kind.value, score=s, max=it.weight,
                       allowed=it.allowed_scores) for n, (it, s) in enumerate(zip(c.items, scores, strict=True), 1)]


@pytest.fixture
def judged(loaded: Store) -> tuple[Store, str, str]:
    """Two answers (gpt) to Q1 and Q2 with checklists, each judged once by the LLM checklist judge."""
    ids = []
    for n, q in enumerate((Q1, Q2), 1):
        loaded.save_checklist(q.id, checklist(), author=ALICE, expected_version=None)
        report = loaded.import_answers([AnswerRecord(line=n, text=f"Answer {n}.", pair_ref=q.id, questions=[])],
                                       model="gpt", condition="direct", created_by=ALICE, source_file="a.jsonl")
        aid = report.answer_ids[0]
        loaded.save_judgment(aid, "checklist", "judge-m", entries=llm_entries((3, 4, 1)), checklist_version=1,
                             created_by=ALICE)
        ids.append(aid)
    return loaded, ids[0], ids[1]


def test_human_is_a_registered_non_llm_checklist_judge_labelled_human_name():
    spec = JUDGE_REGISTRY.get(HUMAN_JUDGE)
    assert not spec.llm and spec.human and spec.scores_checklist and spec.needs_checklist
    assert HUMAN_JUDGE not in LLM_JUDGES
    assert human_label("ada") == "human:ada" == judge_label("human", "ada")
    assert judge_label("checklist", "gpt-4o") == "checklist:gpt-4o"


def test_save_human_judgment_stores_the_checklist_judges_shape_and_rate(judged):
    store, aid, _ = judged
    j = store.save_human_judgment(aid, "ada", {"1": 3, "2": "4", "3": 0})
    assert (j.judge, j.judge_model, j.created_by, j.run_index, j.status) == ("human", "ada", "ada", 0, "scored")
    assert j.checklist_version == 1 and j.score_rate == pytest.approx(0.7)
    assert [(e.key, e.label, e.kind, e.score, e.max, e.allowed) for e in j.entries] == [
        ("1", "Names provider.py", "knowledge", 3, 5, [0, 3, 5]),
        ("2", "Explains escaping", "knowledge", 4, 4, [0, 4]),
        ("3", checklist().items[2].key_point, "clarity", 0, 1, [0, 1]),
    ]
    # entries with rationales are accepted too; label/kind/max come from the checklist, never from the caller
    k = store.save_human_judgment(aid, "bob", [{"key": "1", "score": 5, "rationale": " names it ", "label": "x"},
                                              {"key": "2", "score": 0}, {"key": "3", "score": 1}])
    assert k.entries[0].rationale == "names it" and k.entries[0].label == "Names provider.py"


def test_latest_per_answer_and_annotator_counts_and_rows_are_append_only(judged):
    store, a1, a2 = judged
    first = store.save_human_judgment(a1, "ada", {"1": 0, "2": 0, "3": 0})
    second = store.save_human_judgment(a1, "ada", {"1": 5, "2": 4, "3": 1})
    bob = store.save_human_judgment(a1, "bob", {"1": 3, "2": 0, "3": 1})
    other = store.save_human_judgment(a2, "ada", {"1": 3, "2": 0, "3": 1})
    assert [j.id for j in store.human_judgments()] == [second.id, bob.id, other.id]
    assert [j.id for j in store.human_judgments(answer_id=a1)] == [second.id, bob.id]
    assert [j.id for j in store.human_judgments(annotator="ada")] == [second.id, other.id]
    assert [j.id for j in store.human_judgments(a1, "ada")] == [second.id]
    assert store.get_judgment(first.id).score_rate == 0  # kept
    assert [j.id for j in latest_per_annotator(store.judgments())] == [second.id, bob.id, other.id]
    assert store.human_scored("ada", a1) and not store.human_scored("cy", a1)


@pytest.mark.parametrize(("scores", "message"), [
    ({"1": 4, "2": 4, "3": 1}, "item 1 (Names provider.py): score 4 is not one of the allowed scores [0, 3, 5]"),
    ({"1": 3, "2": 4}, "missing: item 3"),
    ({"1": 3, "2": 4, "3": 1, "9": 1}, "no item 9"),
    ({"1": 3, "2": True, "3": 1}, "item 2 (Explains escaping)"),
    ({"1": "3.5", "2": 4, "3": 1}, "item 1"),
])
def test_bad_scores_are_refused_naming_the_item_and_nothing_is_written(judged, scores, message):
    store, aid, _ = judged
    before = len(store.judgments())
    with pytest.raises(JudgmentError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        store.save_human_judgment(aid, "ada", scores)
    assert len(store.judgments()) == before


def test_other_refusals(judged):
    store, aid, _ = judged
    with pytest.raises(NotFoundError):
        store.save_human_judgment("ans_nope", "ada", {"1": 3, "2": 4, "3": 1})
    with pytest.raises(JudgmentError, match="annotator"):
        store.save_human_judgment(aid, " ", {"1": 3, "2": 4, "3": 1})
    with pytest.raises(NotFoundError):
        store.save_human_judgment(aid, "ada", {"1": 3, "2": 4, "3": 1}, checklist_version=7)
    store.save_checklist(Q1.id, checklist(), author=ALICE, expected_version=1, draft=True)
    with pytest.raises(JudgmentError, match="draft"):
        store.save_human_judgment(aid, "ada", {"1": 3, "2": 4, "3": 1})
    assert store.save_human_judgment(aid, "ada", {"1": 3, "2": 4, "3": 1}, checklist_version=1).checklist_version == 1
    with pytest.raises(JudgmentError, match="given twice"):
        store.save_human_judgment(aid, "ada", [{"key": "1", "score": 3}, {"key": "1", "score": 0}], checklist_version=1)


def _numbers(store: Store):
    """The whole report (every table: summary, stability, strata, failure modes, ...) as a comparable value."""
    return repr(build_report(report_inputs(store)))


def test_the_reports_numbers_do_not_change_when_human_judgments_are_added(judged):
    store, a1, a2 = judged
    before = _numbers(store)
    store.save_human_judgment(a1, "ada", {"1": 0, "2": 0, "3": 0})
    store.save_human_judgment(a2, "bob", {"1": 5, "2": 4, "3": 1})
    assert _numbers(store) == before
    assert all(r.judge != "human" for r in report_inputs(store).runs)
    # asked for by name, the human rows are there
    assert {r.judge_model for r in report_inputs(store, judge="human").runs} == {"ada", "bob"}


def test_judge_cycling_and_the_release_judge_list_leave_human_rows_out(judged):
    from benchwright.tui.services.views import judges_of

    store, a1, _ = judged
    store.save_human_judgment(a1, "ada", {"1": 0, "2": 0, "3": 0})
    assert judges_of(store, a1) == (("checklist", "judge-m"),)


def test_assign_answers_is_balanced_reproducible_and_replaces(judged):
    store, a1, a2 = judged
    loads = store.assign_answers(["ada", "bob", "cy"], 2, seed=3, by=ALICE)
    assert sum(loads.values()) == 4 and max(loads.values()) - min(loads.values()) <= 1
    plan = [(s.answer_id, s.annotator) for s in store.answer_assignments()]
    assert len({a for a, _ in plan}) == 2 and all(len([x for x in plan if x[0] == a]) == 2 for a in (a1, a2))
    store.assign_answers(["ada", "bob", "cy"], 2, seed=3, by=ALICE)
    assert [(s.answer_id, s.annotator) for s in store.answer_assignments()] == plan
    store.assign_answers(["ada"], 1, seed=0, by=ALICE, sample=1)
    assert len(store.answer_assignments()) == 1 and store.answer_assignments()[0].annotator == "ada"
    mine = store.assigned_answers("ada")
    store.save_human_judgment(mine[0][0], "ada", {"1": 3, "2": 4, "3": 1})
    assert store.assigned_answers("ada") == [(mine[0][0], True)]
    with pytest.raises(BenchwrightError, match="overlap"):
        store.assign_answers(["ada"], 2, by=ALICE)
    with pytest.raises(BenchwrightError, match="no answer to hand out"):
        store.assign_answers(["ada"], 1, by=ALICE, model="nobody")
    assert len(store.answer_assignments()) == 1  # left as it was


def test_merge_brings_another_copys_human_judgments_once(judged, db_path, tmp_path):
    from benchwright.db.merge import copy_project, merge_project

    store, a1, a2 = judged
    store.save_human_judgment(a1, "ada", {"1": 3, "2": 4, "3": 1})
    copy = tmp_path / "bob.db"
    copy_project(db_path, copy)
    with Store.open(copy, create=False) as theirs:
        theirs.save_human_judgment(a1, "bob", {"1": 0, "2": 4, "3": 0})
        theirs.save_human_judgment(a2, "bob", {"1": 5, "2": 4, "3": 1})
    report = merge_project(store, copy)
    assert report.added.get("judgments") == 2 and report.skipped_present.get("judgments") == 1
    assert sorted((j.answer_id, j.judge_model, round(j.score_rate, 6)) for j in store.human_judgments()) == sorted(
        [(a1, "ada", 0.8), (a1, "bob", 0.4), (a2, "bob", 1.0)])
    assert all(j.checklist_version == 1 for j in store.human_judgments())
    assert merge_project(store, copy).added.get("judgments") is None  # idempotent
