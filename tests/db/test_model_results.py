"""Model results in the store (db/results.py): imports are transactional and idempotent, a changed verdict is
listed and recorded only with update, history is kept."""

from __future__ import annotations

import sqlite3

import pytest

from benchwright.core.errors import StoreError
from benchwright.core.probes.results import CaseInfo, CaseResult, read_pass_matrix, results_report
from benchwright.db import Store

HEADER = "model,001,002,pass_count,total_count\n"
CASES = {"001": CaseInfo("001", "001.a", "D1", "micro", "design_matrix.md line 5"),
         "002": CaseInfo("002", "002.b", "D6", "multi-step", "design_matrix.md line 6")}


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "p.db") as s:
        yield s


def _matrix(tmp_path, rows: str, name: str = "m.csv"):
    path = tmp_path / name
    path.write_text(HEADER + rows, encoding="utf-8")
    return read_pass_matrix(path), path


def _count(store: Store, table: str) -> int:
    return store.db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_importing_the_same_matrix_twice_adds_nothing(store, tmp_path):
    matrix, path = _matrix(tmp_path, "A (API),pass,fail,1,2\nB (Agt),pass,N/A,1,1\n")
    first = store.import_model_results(matrix, path, CASES, by="ada")
    assert (first.read, first.added, first.already_present, first.cases, first.configurations) == (3, 3, 0, 2, 2)
    again = store.import_model_results(matrix, path, CASES, by="ada")
    assert (again.added, again.already_present, again.cases, again.batch_id) == (0, 3, 0, None)
    assert _count(store, "model_results") == 3 and _count(store, "import_batches") == 1
    batch = store.db.conn.execute("SELECT format, read_count, added_count, created_by FROM import_batches").fetchone()
    assert batch == ("nitr-pass-matrix", 3, 3, "ada")
    assert [(r.configuration, r.case, r.outcome, r.line) for r in store.model_results()] == [
        ("A (API)", "001", "pass", 2), ("A (API)", "002", "fail", 2), ("B (Agt)", "001", "pass", 3)]
    assert store.result_cases() == CASES


def test_a_changed_verdict_is_listed_and_recorded_only_with_update(store, tmp_path):
    matrix, path = _matrix(tmp_path, "A (API),pass,fail,1,2\n")
    store.import_model_results(matrix, path, by="ada")
    fixed, fixed_path = _matrix(tmp_path, "A (API),pass,pass,2,2\n", "fixed.csv")
    listed = store.import_model_results(fixed, fixed_path, by="ada")
    assert listed.changed == ["line 2: A (API), case 002: fail -> pass"] and listed.updated == 0
    assert listed.batch_id is None
    assert [r.outcome for r in store.model_results()] == ["pass", "fail"]
    applied = store.import_model_results(fixed, fixed_path, by="bob", update=True)
    assert applied.updated == 1 and applied.added == 0
    assert [r.outcome for r in store.model_results()] == ["pass", "pass"]
    assert _count(store, "model_results") == 3  # the earlier verdict is kept


def test_an_import_that_fails_writes_nothing(store, tmp_path, monkeypatch):
    matrix, path = _matrix(tmp_path, "A (API),pass,fail,1,2\n")
    bad = CaseInfo("001", None, "D1", "micro", None)  # source NOT NULL: the case rows fail after the verdicts
    with pytest.raises(sqlite3.IntegrityError):
        store.import_model_results(matrix, path, {"001": bad}, by="ada")
    assert _count(store, "model_results") == 0 and _count(store, "import_batches") == 0


def test_rows_are_append_only_and_checked_on_write(store, tmp_path):
    matrix, path = _matrix(tmp_path, "A (API),pass,fail,1,2\n")
    store.import_model_results(matrix, path, by="ada")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"), store.write() as db:
        db.conn.execute("UPDATE model_results SET outcome = 'pass'")
    with pytest.raises(StoreError, match="regime 'batch'"):
        store.record_model_result(CaseResult("A (batch)", "A", "batch", "001", "pass"), by="ada")
    row = store.record_model_result(CaseResult("A (API)", "A", "api", "002", "pass"), by="ada")
    assert row and [r.outcome for r in store.model_results()] == ["pass", "pass"]


def test_the_report_reads_from_the_store(store, tmp_path):
    matrix, path = _matrix(tmp_path, "A (API),pass,fail,1,2\nB (Agt),pass,pass,2,2\n")
    store.import_model_results(matrix, path, CASES, by="ada")
    rep = results_report(store.model_results(), store.result_cases())
    assert [(g.key, g.tally.passes, g.tally.total) for g in rep.granularity] == [("micro", 2, 2), ("multi-step", 1, 2)]
