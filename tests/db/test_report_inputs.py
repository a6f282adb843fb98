"""report_inputs (benchwright.db.report): the tables of m009 read into metric inputs, overrides applied."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from store_helpers import ALICE, import_pairs, make_pair

from benchwright.core.errors import BenchwrightError
from benchwright.core.metrics import build_report
from benchwright.core.models import Repository
from benchwright.db import Store
from benchwright.db.report import report_inputs

NOW = "2026-01-01T00:00:00Z"
REPO = Repository(name="flask", version_label="3.1.1", language="Python", theme="Web Framework")


def entries(k1, k2, cl):
    return [
        {"key": "k1", "label": "Names the [bold]module[/bold]", "kind": "knowledge", "score": k1, "max": 5,
         "allowed": [0, 2, 5], "rationale": "r"},
        {"key": "k2", "label": "Explains the flow", "kind": "knowledge", "score": k2, "max": 4,
         "allowed": [0, 2, 4], "rationale": "r"},
        {"key": "clarity", "label": "Clarity", "kind": "clarity", "score": cl, "max": 1, "allowed": [0, 1],
         "rationale": "r"},
    ]


def add_answer(db, pair_id, model, condition="agentic") -> str:
    aid = uuid.uuid4().hex
    db.execute("INSERT INTO answers (id, qa_pair_id, model, condition, text, source_format, created_at, created_by)"
               " VALUES (?, ?, ?, ?, ?, 'jsonl', ?, ?)", [aid, pair_id, model, condition, "An answer.", NOW, ALICE])
    return aid


def add_judgment(db, answer_id, *, judge="checklist", judge_model="jx", run=0, status="scored", scores=None,
                 reason=None) -> int:
    cur = db.execute(
        "INSERT INTO judgments (answer_id, judge, judge_model, run_index, status, scores_json, reason, created_at,"
        " created_by, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [answer_id, judge, judge_model, run, status, json.dumps(scores or []) if not isinstance(scores, str)
         else scores, reason, NOW, ALICE, uuid.uuid4().hex])
    return cur.lastrowid


def add_override(db, judgment_id, key, score, original=None):
    db.execute("INSERT INTO score_overrides (judgment_id, key, original_score, score, reason, annotator, created_at,"
               " uid) VALUES (?, ?, ?, ?, 'judge missed it', ?, ?, ?)",
               [judgment_id, key, original, score, ALICE, NOW, uuid.uuid4().hex])


def add_label(db, answer_id, mode, origin="llm"):
    db.execute("INSERT INTO failure_modes (answer_id, mode, rationale, origin, created_at, uid) "
               "VALUES (?, ?, 'why', ?, ?, ?)", [answer_id, mode, origin, NOW, uuid.uuid4().hex])


@pytest.fixture
def project(tmp_path: Path):
    store = Store.open(tmp_path / "p.db")
    store.add_repository(REPO, ALICE)
    pairs = [
        make_pair("Where is the app context pushed?", qa_type="Where", category="Business Logic", line=1),
        make_pair("Why does Flask use blueprints?", qa_type="Why", category="Project Architecture", line=2)
        .model_copy(update={"language": "Go", "theme": "CLI", "cluster_id": "2.3", "cluster_name": "CLI workflow"}),
    ]
    assert import_pairs(store, tmp_path, pairs).added == 2
    yield store, [p.id for p in pairs]
    store.close()


def test_empty_project_gives_empty_inputs(project):
    store, _ = project
    inputs = report_inputs(store)
    assert inputs.runs == () and inputs.failure_labels == () and inputs.answer_counts == {}
    assert build_report(inputs).is_empty


def test_runs_overrides_strata_labels(project):
    store, (p1, p2) = project
    with store.write() as db:
        a1 = add_answer(db, p1, "m-a")
        a2 = add_answer(db, p2, "m-a")
        add_answer(db, p1, "m-b", "closed-book")  # stored, never judged
        # a1 run 0: first unscored, then judged again: only the newer row counts
        add_judgment(db, a1, status="unscored", reason="item k2 missing")
        j1 = add_judgment(db, a1, scores=entries(2, 4, 1))
        j2 = add_judgment(db, a1, run=1, scores=entries(5, 2, 0))
        add_judgment(db, a2, status="unscored", reason="score 3 not allowed")
        add_judgment(db, a2, judge="swe-qa-pro", judge_model="jy",
                     scores=[{"key": "correctness", "label": "Correctness", "kind": "dimension", "score": 6,
                              "max": 10, "allowed": None, "rationale": ""}])
        # two overrides of k1 on j1: the later (5) wins; one of clarity on j2; one of a key j2 lacks (ignored)
        add_override(db, j1, "k1", 0, original=2)
        add_override(db, j1, "k1", 5, original=2)
        add_override(db, j2, "clarity", 1, original=0)
        add_override(db, j2, "k9", 1)
        # failure label corrected by an annotator: the latest row wins
        add_label(db, a2, "hallucination")
        add_label(db, a2, "context-miss", origin="annotator")

    inputs = report_inputs(store)
    assert inputs.answer_counts == {("m-a", "agentic"): 2, ("m-b", "closed-book"): 1}
    runs = {(r.answer_id, r.judge, r.run_index): r for r in inputs.runs}
    assert set(runs) == {(a1, "checklist", 0), (a1, "checklist", 1), (a2, "checklist", 0), (a2, "swe-qa-pro", 0)}
    r0 = runs[(a1, "checklist", 0)]
    assert r0.status == "scored" and r0.judgment_id == j1 and r0.overrides_used == 1
    assert [(e.key, e.score, e.overridden) for e in r0.entries] == [
        ("k1", 5, True), ("k2", 4, False), ("clarity", 1, False)]
    assert r0.rates().perfect  # 5 + 4 + 1 = 10 after the override
    r1 = runs[(a1, "checklist", 1)]
    assert r1.overrides_used == 1 and r1.rates().score_rate == pytest.approx(0.8)  # 5 + 2 + 1 (override)
    assert r0.entries[0].label == "Names the [bold]module[/bold]"
    un = runs[(a2, "checklist", 0)]
    assert un.status == "unscored" and un.reason == "score 3 not allowed" and not un.is_scored
    # strata: p1 has no language/theme of its own -> the repository's; p2 keeps its own
    assert (r0.strata.language, r0.strata.theme, r0.strata.qa_type, r0.strata.repository) == (
        "Python", "Web Framework", "Where", "flask")
    s2 = runs[(a2, "swe-qa-pro", 0)].strata
    assert (s2.language, s2.theme, s2.value("cluster"), s2.category) == (
        "Go", "CLI", "2.3 CLI workflow", "Project Architecture")
    assert [(lab.answer_id, lab.mode, lab.origin) for lab in inputs.failure_labels] == [
        (a2, "context-miss", "annotator")]

    report = build_report(inputs)
    cov = {(c.model, c.judge): c for c in report.coverage}
    # a1 runs: 10/10 and 8/10 -> 90 %; 2 overrides used; a2's only checklist run is unscored
    assert (cov[("m-a", "checklist")].runs_unscored, cov[("m-a", "checklist")].overrides_used) == (1, 2)
    summary = {(r.model, r.judge): r for r in report.summary}
    assert summary[("m-a", "checklist")].overall_pct == pytest.approx(90)
    assert summary[("m-a", "checklist")].perfect_solve_pct == pytest.approx(50)


def test_filters_by_model_and_judge(project):
    store, (p1, _) = project
    with store.write() as db:
        a = add_answer(db, p1, "m-a")
        b = add_answer(db, p1, "m-b")
        add_judgment(db, a, scores=entries(5, 4, 1))
        add_judgment(db, b, scores=entries(0, 0, 1))
        add_judgment(db, b, judge="code-qa-bench", judge_model="jz",
                     scores=[{"key": "accuracy", "label": "Accuracy", "kind": "dimension", "score": 3, "max": 5,
                              "allowed": None, "rationale": ""}])
        add_label(db, a, "edit-bias")
    only_b = report_inputs(store, models=["m-b"])
    assert {r.model for r in only_b.runs} == {"m-b"} and len(only_b.runs) == 2
    assert only_b.failure_labels == () and only_b.answer_counts == {("m-b", "agentic"): 1}
    checklist_only = report_inputs(store, judge="checklist")
    assert {r.judge for r in checklist_only.runs} == {"checklist"} and len(checklist_only.runs) == 2
    with pytest.raises(BenchwrightError, match="unknown judge 'gpt'"):
        report_inputs(store, judge="gpt")


@pytest.mark.parametrize("scores, message", [
    ("{not json", "not JSON"),
    ('{"key": "k1"}', "expected a list"),
    ('[{"key": "k1", "kind": "knowledge", "score": 1}]', "field 'max'"),
    ('[{"key": "k1", "kind": "weird", "score": 1, "max": 5}]', "field 'kind'"),
    ('[{"key": "k1", "kind": "knowledge", "score": "high", "max": 5}]', "field 'score'"),
    ('[{"key": "k1", "kind": "knowledge", "score": 1, "max": 5}, {"key": "k1", "kind": "knowledge", "score": 1,'
     ' "max": 5}]', "appears twice"),
])
def test_unreadable_scores_name_the_row_and_field(project, scores, message):
    store, (p1, _) = project
    with store.write() as db:
        jid = add_judgment(db, add_answer(db, p1, "m-a"), scores=scores)
    with pytest.raises(BenchwrightError, match=message) as err:
        report_inputs(store)
    assert f"judgments row {jid}" in str(err.value)
