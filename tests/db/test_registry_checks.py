"""Migrations m016 and m017 (issue 13 item 1): ``judgments.judge``, ``curation_results.step``,
``failure_modes.mode`` and ``answers.condition`` lose their CHECKs and are checked on write against core's
registries. A project from before keeps every row, id,
reference, index and trigger; unknown names are refused by the store with a message naming the known ones."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils
from store_helpers import make_pair

import benchwright.db.store as store_module
from benchwright.core.errors import BenchwrightError
from benchwright.core.judgment import JudgmentError, ScoreEntry
from benchwright.core.models import utc_now
from benchwright.core.registry import UnknownNameError
from benchwright.db import Store
from benchwright.db.migrations import migrations

BEFORE = "m016_judges_and_steps_checked_on_write"

_OLD_PAIR_COLUMNS = store_module._PAIR_COLUMNS.replace(", split, cluster_origin", "")
"""The pair columns before m020 (split, cluster_origin), for projects written by older code."""


def _project_before_m016(path: Path) -> dict:
    """A project as the code before m016 wrote it: a pair, an answer, a judgment with an override, a failure-mode
    label and a curation result (its current row kept by trigger)."""
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before=BEFORE)
    now = utc_now()
    pair = make_pair("Where is the app object created?", "In app.py.", line=1)
    db.conn.execute("INSERT INTO repositories (name, version_label, commit_verified, created_at, created_by) "
                    "VALUES (?, '3.1.1', 0, ?, 'alice')", [pair.repository, now])
    db.conn.execute(
        f"INSERT INTO qa_pairs ({_OLD_PAIR_COLUMNS}, import_batch_id, created_at) "
        f"VALUES ({', '.join('?' * (len(_OLD_PAIR_COLUMNS.split(',')) + 2))})", [*store_module._pair_values(pair, 1, "old.jsonl")[:-2], None, now])
    db.conn.execute("INSERT INTO answers (id, qa_pair_id, model, condition, text, source_format, created_at, "
                    "created_by) VALUES ('ans_1', ?, 'm', 'closed-book', 'in app.py', 'jsonl', ?, 'alice')",
                    [pair.id, now])
    entries = '[{"allowed":[0,1,2],"key":"correctness","kind":"dimension","label":"c","max":2,"rationale":"","score":1}]'
    jid = db.conn.execute(
        "INSERT INTO judgments (answer_id, judge, judge_model, run_index, status, scores_json, score_rate, "
        "created_at, created_by, uid) VALUES ('ans_1', 'imported', 'j', 0, 'scored', ?, 0.5, ?, 'alice', 'u1')",
        [entries, now]).lastrowid
    db.conn.execute("INSERT INTO score_overrides (judgment_id, key, original_score, score, reason, annotator, "
                    "created_at, uid) VALUES (?, 'correctness', 1, 2, 'misread', 'alice', ?, 'o1')", [jid, now])
    db.conn.execute("INSERT INTO failure_modes (answer_id, mode, rationale, origin, annotator, created_at, uid) "
                    "VALUES ('ans_1', 'hallucination', 'invented a file', 'annotator', 'alice', ?, 'f1')", [now])
    rid = db.conn.execute(
        "INSERT INTO curation_results (qa_pair_id, step, status, created_at, created_by, uid) "
        "VALUES (?, 'classify', 'ok', ?, 'alice', 'c1')", [pair.id, now]).lastrowid
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):  # before m016 the names were frozen in SQL
        db.conn.execute("INSERT INTO curation_results (qa_pair_id, step, status, created_at, created_by, uid) "
                        "VALUES (?, 'toy-step', 'ok', ?, 'alice', 'c2')", [pair.id, now])
    db.conn.commit()
    db.close()
    return {"pair": pair.id, "judgment": jid, "result": rid}


def test_upgrade_keeps_every_row_and_reference_and_checks_names_on_write(tmp_path):
    path = tmp_path / "old.db"
    ids = _project_before_m016(path)
    with Store.open(path) as store:
        conn = store.db.conn
        for table in ("judgments", "failure_modes", "curation_results", "answers"):
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [table]).fetchone()[0]
            assert " IN ('checklist'" not in sql and " IN ('classify'" not in sql and "'edit-bias'" not in sql
            assert "'closed-book'" not in sql
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        [a] = store.answers()
        assert (a.id, a.condition, a.text) == ("ans_1", "closed-book", "in app.py")
        [j] = store.judgments()
        assert (j.id, j.judge, j.judge_model, j.score_rate) == (ids["judgment"], "imported", "j", 0.5)
        assert [(o.judgment_id, o.score) for o in store.overrides()] == [(ids["judgment"], 2)]
        assert store.failure_mode("ans_1").mode == "hallucination"
        assert store.curation_current(ids["pair"])["classify"].id == ids["result"]
        # indexes and triggers are back: append-only, and curation_current follows new results
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger')")}
        assert {"answers_model", "judgments_answer", "failure_modes_answer", "curation_results_pair", "curation_results_current",
                "judgments_no_update", "failure_modes_no_delete", "curation_results_no_update"} <= names
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE judgments SET judge = 'x'")
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):  # references still enforced
            conn.execute("INSERT INTO failure_modes (answer_id, mode, origin, created_at, uid) "
                         "VALUES ('ans_missing', 'hallucination', 'llm', 'x', 'f9')")
        again = store.save_curation_result(ids["pair"], "classify", status="failed", reason="r", by="alice")
        assert store.curation_current(ids["pair"])["classify"].id == again.id
        # unknown names are refused on write, naming what there is
        with pytest.raises(JudgmentError, match="unknown judge 'toy'; use one of checklist, swe-qa-pro"):
            store.save_judgment("ans_1", "toy", "j", entries=[ScoreEntry(key="a", kind="dimension", score=1, max=2)],
                                created_by="alice")
        with pytest.raises(BenchwrightError, match="unknown step 'toy-step'; use one of images, classify, enrich"):
            store.save_curation_result(ids["pair"], "toy-step", status="ok", by="alice")
        with pytest.raises(JudgmentError, match="unknown condition 'open-book'; use one of closed-book"):
            store.add_generated_answer(ids["pair"], "m2", "open-book", "text", extra={}, by="alice")
        with pytest.raises(JudgmentError, match="unknown condition 'open-book'"):
            store.import_answers([], model="m2", condition="open-book", created_by="alice")
        with pytest.raises(JudgmentError, match="unknown failure mode 'vibes'"):
            store.add_failure_mode("ans_1", "vibes", "r", "annotator", annotator="alice")
        assert len(store.judgments()) == 1 and len(store.failure_mode_history("ans_1")) == 1


def test_a_blank_project_has_no_vocabulary_frozen_in_sql(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        for table, column in (("judgments", "judge"), ("curation_results", "step"), ("failure_modes", "mode"),
                              ("answers", "condition")):
            sql = store.db.conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [table]).fetchone()[0]
            assert f" {column} TEXT NOT NULL" in sql
            assert not re.search(rf"CHECK\s*\(\s*{column}\s+IN", sql), sql


def test_unknown_name_errors_are_structured():
    from benchwright.core.judges import JUDGE_REGISTRY

    with pytest.raises(UnknownNameError) as e:
        JUDGE_REGISTRY.get("toy")
    assert (e.value.what, e.value.name, e.value.known[:2]) == ("judge", "toy", ("checklist", "swe-qa-pro"))
