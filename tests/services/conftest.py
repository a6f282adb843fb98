"""Fixtures of the services tests: a project with a repository checkout on disk and a few pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import Store


@pytest.fixture
def project(tmp_path: Path):
    """``(store, pair ids)``: three pairs about ``pkg`` (checked out in ``tmp_path/repo``); the first cites
    ``src/pkg/app.py:12`` and a missing file."""
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "src" / "pkg" / "app.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 41)))
    data = tmp_path / "pairs.jsonl"
    records = [{"question": "Where is the app made?", "answer": "In `src/pkg/app.py:12` and `src/pkg/gone.py`."}]
    records += [{"question": f"Question {i}?", "answer": f"Answer {i}."} for i in (2, 3)]
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    store = Store.open(tmp_path / "project.db")
    store.add_repository(Repository(name="pkg", version_label="1.0", local_path=str(repo)), "lead")
    store.apply_import(parse("jsonl", data, repository="pkg"), annotator="lead", file_path=data)
    ids = [row.id for row in store.queue_page("lead", limit=100)]
    yield store, ids
    store.close()
