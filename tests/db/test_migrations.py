"""Schema migrations: a blank project, upgrading an m001-only project in place, failing migrations, bad paths."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import sqlite_utils
from sqlite_utils.migrations import Migrations

import benchwright.db.store as store_module
from benchwright.core.errors import StoreError
from benchwright.core.models import Decision
from benchwright.db import SCHEMA_VERSION, Store
from benchwright.db.migrations import MIGRATION_SET, migrations

TABLES = {"repositories", "import_batches", "qa_pairs", "review_decisions", "review_notes", "review_state"}
FIRST_TWO = ["m001_initial", "m002_review_state_and_notes"]
MIGRATIONS = [m.name for m in migrations._migrations]  # every migration this version knows, in order


def _applied(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [
            r[0] for r in conn.execute(
                "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY id", [MIGRATION_SET]
            )
        ]


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


# ------------------------------------------------------------------------------------------- blank file
def test_blank_project_gets_every_table_and_records_every_migration(tmp_path):
    path = tmp_path / "p.db"
    with Store.open(path) as store:
        assert set(store.db.table_names()) >= TABLES
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        triggers = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert {
            "review_decisions_no_update", "review_decisions_no_delete", "review_notes_no_update",
            "review_notes_no_delete", "review_decisions_current",
        } <= triggers
    assert _applied(path) == MIGRATIONS
    assert MIGRATIONS[:2] == FIRST_TWO
    assert len(MIGRATIONS) == SCHEMA_VERSION
    # Opening again applies nothing twice.
    Store.open(path).close()
    assert _applied(path) == MIGRATIONS
    assert migrations.pending(sqlite_utils.Database(path)) == []


def test_wal_mode_persists_in_the_file(tmp_path):
    path = tmp_path / "p.db"
    Store.open(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_foreign_keys_are_enforced(tmp_path):
    with Store.open(tmp_path / "p.db") as store, pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        store.db.conn.execute(
            "INSERT INTO review_decisions (qa_pair_id, annotator, decision, created_at) "
            "VALUES ('qa_missing', 'alice', 'accept', 'now')"
        )


# ------------------------------------------------------------------------------------------------ upgrade
def _m001_project(path: Path) -> dict[str, int]:
    """A project as the first version wrote it: m001 only, with decisions but no review_state."""
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m002_review_state_and_notes")
    assert _applied(path) == ["m001_initial"]
    assert "review_state" not in db.table_names()
    conn = db.conn
    conn.execute(
        "INSERT INTO repositories (name, commit_sha, commit_verified, created_at, created_by) "
        "VALUES ('flask', '85c5d93cbd049c4bd0679c36fd1ddcae8c37b642', 1, '2025-01-01', 'alice')"
    )
    for i, pid in enumerate(("qa_p1", "qa_p2", "qa_p3"), start=1):
        conn.execute(
            "INSERT INTO qa_pairs (id, ordinal, repository, question, reference_answer, source_format, "
            "source_file, source_line, extra_json, created_at) "
            "VALUES (?, ?, 'flask', ?, 'answer', 'swe-qa', 'Benchmark__flask.jsonl', ?, '{\"k\": 1}', '2025-01-01')",
            (pid, i, f"question {i}?", i),
        )
    ids = {}

    def decide(key, pair, who, decision, previous=None, reverts=None):
        cur = conn.execute(
            "INSERT INTO review_decisions (qa_pair_id, annotator, decision, previous_decision, reverts_id, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (pair, who, decision, previous, reverts, f"2025-01-02T00:00:{len(ids):02d}"),
        )
        ids[key] = cur.lastrowid

    decide("a1", "qa_p1", "alice", "accept")
    decide("b1", "qa_p1", "bob", "skip")
    decide("a2", "qa_p1", "alice", "reject", "accept")  # alice's latest on p1
    decide("a3", "qa_p2", "alice", "accept")
    decide("b2", "qa_p2", "bob", "reject")
    decide("b3", "qa_p2", "bob", None, "reject", reverts=None)  # an undo row: bob's p2 is back to nothing
    conn.commit()
    db.close()
    return ids


def test_upgrade_from_m001_backfills_review_state_and_loses_nothing(tmp_path):
    path = tmp_path / "old.db"
    ids = _m001_project(path)
    with sqlite3.connect(path) as conn:
        before = conn.execute("SELECT * FROM review_decisions ORDER BY id").fetchall()
        pairs_before = conn.execute("SELECT * FROM qa_pairs ORDER BY id").fetchall()

    with Store.open(path) as store:
        assert _applied(path) == MIGRATIONS
        state = {
            (r[0], r[1]): (r[2], r[3])
            for r in store.db.execute("SELECT qa_pair_id, annotator, decision, decision_id FROM review_state")
        }
        assert state == {
            ("qa_p1", "alice"): ("reject", ids["a2"]),
            ("qa_p1", "bob"): ("skip", ids["b1"]),
            ("qa_p2", "alice"): ("accept", ids["a3"]),
            ("qa_p2", "bob"): (None, ids["b3"]),
        }
        assert store.current_decision("qa_p1", "alice") is Decision.REJECT
        assert store.current_decision("qa_p2", "bob") is None
        assert store.current_decision("qa_p3", "alice") is None
        # every old column of every old row is kept; later migrations only add columns
        after = store.db.execute("SELECT * FROM review_decisions ORDER BY id").fetchall()
        assert [row[: len(before[0])] for row in after] == before
        assert [row[: len(pairs_before[0])] for row in store.db.execute(
            "SELECT * FROM qa_pairs ORDER BY id").fetchall()] == pairs_before
        assert store.get_repository("flask").commit_verified is True
        assert store.get_pair("qa_p1").extra == {"k": 1}
        assert store.progress("alice").mine == 2
        # The upgraded project works like a new one: the trigger keeps review_state current, notes exist.
        store.record_decision("qa_p3", "bob", "accept")
        assert store.current_decision("qa_p3", "bob") is Decision.ACCEPT
        store.add_note("qa_p1", "alice", "checked")
        assert store.current_note("qa_p1", "alice") == "checked"
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.db.conn.execute("DELETE FROM review_notes")
        # Undo reads the log written before the upgrade.
        assert store.undo_last("alice") == "qa_p2"
        assert store.current_decision("qa_p2", "alice") is None


# ------------------------------------------------------------------------------------- failing migration
def _failing_set(exc: str = "sql") -> Migrations:
    failing = Migrations(MIGRATION_SET)
    for m in migrations._migrations:  # the real ones, then a broken newer one
        failing(name=m.name)(m.fn)

    @failing(name="m003_broken")
    def m003_broken(db):
        db.execute("CREATE TABLE partial (x INTEGER)")
        db.execute("INSERT INTO partial VALUES (1)")
        db.execute("ALTER TABLE qa_pairs ADD COLUMN half_done TEXT")
        if exc == "sql":
            db.execute("INSERT INTO no_such_table VALUES (1)")
        raise RuntimeError("bug in a migration")

    return failing


@pytest.mark.parametrize("exc", ["sql", "python"])
def test_failing_migration_rolls_back_and_stays_pending(tmp_path, monkeypatch, exc):
    path = tmp_path / "p.db"
    with Store.open(path) as store:
        store.db.conn.execute(
            "INSERT INTO qa_pairs (id, ordinal, question, source_format, source_file, created_at) "
            "VALUES ('qa_keep', 1, 'kept?', 'jsonl', 'f.jsonl', 'now')"
        )
        store.db.conn.commit()
    failing = _failing_set(exc)
    monkeypatch.setattr(store_module, "migrations", failing)
    expected = (StoreError, "no such table: no_such_table") if exc == "sql" else (RuntimeError, "bug in a migration")
    with pytest.raises(expected[0], match=expected[1]) as info:
        Store.open(path)
    if exc == "sql":
        assert str(path) in str(info.value)
    assert "partial" not in _tables(path)
    with sqlite3.connect(path) as conn:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(qa_pairs)")}
        assert conn.execute("SELECT id FROM qa_pairs").fetchall() == [("qa_keep",)]
    assert "half_done" not in columns
    assert _applied(path) == MIGRATIONS
    assert [m.name for m in failing.pending(sqlite_utils.Database(path))] == ["m003_broken"]
    # The project still opens with the migrations this version knows.
    monkeypatch.setattr(store_module, "migrations", migrations)
    with Store.open(path) as store:
        assert store.count_pairs() == 1


def test_failing_migration_on_a_blank_file_leaves_nothing_half_made(tmp_path, monkeypatch):
    path = tmp_path / "p.db"
    failing = _failing_set()
    monkeypatch.setattr(store_module, "migrations", failing)
    with pytest.raises(StoreError):
        Store.open(path)
    assert "partial" not in _tables(path)
    assert "m003_broken" in [m.name for m in failing.pending(sqlite_utils.Database(path))]
    monkeypatch.setattr(store_module, "migrations", migrations)
    with Store.open(path) as store:
        assert set(store.db.table_names()) >= TABLES
    assert _applied(path) == MIGRATIONS


# ---------------------------------------------------------------------------------------------- bad paths
def test_opening_a_file_that_is_not_sqlite_raises_store_error_naming_it(tmp_path):
    path = tmp_path / "notes.txt"
    content = b"these are my notes, not a database\n" * 200
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not a benchwright project") as info:
        Store.open(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == content


def test_opening_a_path_in_a_missing_folder_raises_store_error(tmp_path):
    path = tmp_path / "no" / "such" / "folder" / "p.db"
    with pytest.raises(StoreError, match="does not exist") as info:
        Store.open(path)
    assert str(path.parent) in str(info.value)
    assert not path.parent.exists()


def test_opening_a_directory_raises_store_error(tmp_path):
    with pytest.raises(StoreError, match="is a directory"):
        Store.open(tmp_path)


@pytest.mark.slow
def test_processes_creating_the_same_new_project_at_once_all_succeed(tmp_path):
    """Several annotators opening a new project at the same moment: migrations run once, nobody fails."""
    for trial in range(2):
        path = tmp_path / f"p{trial}.db"
        go = tmp_path / f"go{trial}"
        code = (
            "import os, sys, time\n"
            "from benchwright.db import Store\n"
            "print('ready', flush=True)\n"
            f"while not os.path.exists({str(go)!r}): time.sleep(0.0005)\n"
            f"Store.open({str(path)!r}).close()\n"
        )
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(4)
        ]
        assert [p.stdout.readline().strip() for p in procs] == ["ready"] * 4  # all imported, at the start line
        go.touch()
        errors = [p.communicate(timeout=60)[1] for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, "\n".join(errors)
        assert _applied(path) == MIGRATIONS
