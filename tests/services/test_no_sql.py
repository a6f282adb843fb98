"""No SQL outside db/: the services, the front ends and the exports read and write through Store methods."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SQL_ATTRIBUTES = {"execute", "executemany", "executescript", "conn"}
"""Attributes that reach SQLite: a connection's or cursor's execute, a Database's connection (a Database itself
is reached as ``store.db``, checked apart; Textual's DOM ``query`` is no SQL)."""


def _sources() -> list[Path]:
    return sorted(p for folder in ("tui", "exports") for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sql_outside_db(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [f"line {n.lineno}: .{n.attr}" for n in ast.walk(tree)
             if isinstance(n, ast.Attribute) and n.attr in SQL_ATTRIBUTES]
    found += [f"line {n.lineno}: store.db" for n in ast.walk(tree)
              if isinstance(n, ast.Attribute) and n.attr == "db" and isinstance(n.value, ast.Name | ast.Attribute)
              and getattr(n.value, "attr", getattr(n.value, "id", "")) == "store"]
    found += [f"line {n.lineno}: import {a.name}" for n in ast.walk(tree) if isinstance(n, ast.Import)
              for a in n.names if a.name.split(".")[0] in ("sqlite3", "sqlite_utils")]
    found += [f"line {n.lineno}: from {n.module} import" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
              and (n.module or "").split(".")[0] in ("sqlite3", "sqlite_utils")]
    assert not found, f"{path.relative_to(ROOT)} runs SQL outside db/: {found} (add a Store method in db/)"
