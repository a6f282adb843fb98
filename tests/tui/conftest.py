"""Fixtures for app tests: a small project with a repository on disk and tricky text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import Store

TRICKY_QUESTION = "Why does [bold]this[/bold] stay plain and \x1b[31mthis\x1b[0m stay uncoloured? <module> too"

APP_PY = "\n".join(f"line_{i} = {i}" for i in range(1, 201)) + "\n"


def make_project(tmp_path: Path, n: int = 6) -> tuple[Path, list[str]]:
    """A project file with ``n`` pairs about a repository in ``tmp_path/repo``; returns (db path, pair ids)."""
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "src" / "pkg" / "app.py").write_text(APP_PY)
    (repo / "README.md").write_text("# demo\n")
    records = [
        {"question": TRICKY_QUESTION, "answer": "See `src/pkg/app.py:120` and `src/pkg/gone.py` and `../../etc/passwd.py`.",
         "qa_type": "Why"},
    ] + [
        {"question": f"Question number {i}?", "answer": f"Answer {i}: lines 10-12 of src/pkg/app.py.",
         "qa_type": "How" if i % 2 else "What"}
        for i in range(2, n + 1)
    ]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    db = tmp_path / "project.db"
    with Store.open(db) as store:
        store.add_repository(Repository(name="pkg", version_label="1.0", local_path=str(repo)), "setup")
        result = parse("jsonl", data, repository="pkg", mapping=("qa_type=qa_type",))
        store.apply_import(result, annotator="setup", file_path=data)
        ids = [row.id for row in store.queue_page("x", limit=1000)]
    return db, ids


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path)


@pytest.fixture
def project_factory():
    """``make_project`` for tests that build the project themselves."""
    return make_project


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    """No configuration file, project file or annotator from the environment: a CLI test sees only its own."""
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.delenv("BENCHWRIGHT_DB", raising=False)
    monkeypatch.delenv("BENCHWRIGHT_ANNOTATOR", raising=False)
