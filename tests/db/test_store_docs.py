"""docs/store.md describes every table and view of a project (db/migrations.py promises it), so the doc cannot
fall behind the schema: a new table without a section, a new column its section does not name, or a section for
a table that no longer exists fails here."""

from __future__ import annotations

import re
from pathlib import Path

from benchwright.db import Store

DOC = Path(__file__).resolve().parents[2] / "docs" / "store.md"


def _schema(tmp_path) -> dict[str, list[str]]:
    """Every table and view of a new project (all migrations applied) with its columns, in order."""
    with Store.open(tmp_path / "p.db", create=True) as store:
        conn = store.db.conn
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name")]
        return {n: [r[1] for r in conn.execute("SELECT * FROM pragma_table_info(?)", [n])] for n in names}


def _sections() -> dict[str, set[str]]:
    """Table name -> the words inside backticks of its ``###`` section (heading and body up to the next heading);
    a heading naming two tables (``checklist_versions`` and ``checklist_current``) gives both the same words."""
    parts = re.split(r"^(#{1,3} .*)$", DOC.read_text(encoding="utf-8"), flags=re.M)
    sections: dict[str, set[str]] = {}
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        if heading.startswith("### "):
            words = {w for span in re.findall(r"`([^`]*)`", heading + body) for w in re.findall(r"\w+", span)}
            for name in re.findall(r"`([a-z_0-9]+)`", heading):
                sections[name] = words
    return sections


def test_every_table_and_view_is_described_in_docs_store_md(tmp_path):
    names = list(_schema(tmp_path))
    missing = [n for n in names if n not in _sections()]
    assert len(names) > 20 and not missing, f"tables without a ### section in docs/store.md: {missing}"


def test_every_column_is_named_in_its_tables_section(tmp_path):
    sections = _sections()
    schema = _schema(tmp_path)
    missing = [f"{t}.{c}" for t, cols in schema.items() for c in cols if c not in sections.get(t, set())]
    assert sum(map(len, schema.values())) > 200 and not missing, (
        f"columns not named (in backticks) in their table's section of docs/store.md: {missing}")


def test_docs_store_md_describes_no_table_the_schema_lacks(tmp_path):
    stale = sorted(set(_sections()) - set(_schema(tmp_path)))
    assert not stale, f"### sections of docs/store.md for tables a new project does not have: {stale}"


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
