"""docs/store.md describes every table and view of a project (db/migrations.py promises it), so the doc cannot
fall behind the schema: a new table without a section fails here."""

from __future__ import annotations

import re
from pathlib import Path

from benchwright.db import Store

DOC = Path(__file__).resolve().parents[2] / "docs" / "store.md"


def test_every_table_and_view_is_described_in_docs_store_md(tmp_path):
    with Store.open(tmp_path / "p.db", create=True) as store:
        names = [r[0] for r in store.db.conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name")]
    headings = set(re.findall(r"^###.*?$", DOC.read_text(encoding="utf-8"), flags=re.M))
    described = {n for h in headings for n in re.findall(r"`([a-z_0-9]+)`", h)}
    missing = [n for n in names if n not in described]
    assert len(names) > 20 and not missing, f"tables without a ### section in docs/store.md: {missing}"


def test_an_ignored_insert_with_repaired_text_flags_no_row(tmp_path):
    """``INSERT OR IGNORE`` that inserts nothing leaves ``lastrowid`` naming an earlier row; the store's guard
    must not flag that unrelated row as repaired."""
    with Store.open(tmp_path / "p.db", create=True) as store:
        conn = store.db.conn
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v TEXT)")
        conn.execute("INSERT INTO t (k, v) VALUES (?, ?)", ["a", "clean"])
        conn.execute("INSERT INTO t (k, v) VALUES (?, ?)", ["b", "clean"])
        conn.execute("INSERT OR IGNORE INTO t (k, v) VALUES (?, ?)", ["a", "bad \udc81"])  # ignored
        assert conn.execute("SELECT count(*) FROM text_repairs WHERE table_name = 't'").fetchone()[0] == 0
        conn.execute("INSERT OR IGNORE INTO t (k, v) VALUES (?, ?)", ["c", "bad \udc81"])  # inserted, repaired
        rows = conn.execute("SELECT row_id FROM text_repairs WHERE table_name = 't'").fetchall()
        assert rows == [(3,)] and conn.execute("SELECT v FROM t WHERE id = 3").fetchone()[0] == "bad \ufffd"
