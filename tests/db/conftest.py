"""Fixtures of the store tests: a project file, and one with repositories and labelled Q&A pairs."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import ALICE, CLICK, FLASK, QUEUE, import_pairs

from benchwright.db import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "project.db"


@pytest.fixture
def store(db_path: Path):
    s = Store.open(db_path)
    yield s
    s.close()


@pytest.fixture
def loaded(store: Store, tmp_path: Path) -> Store:
    """A store with flask and click registered and the eight pairs of :data:`QUEUE` imported."""
    store.add_repository(FLASK, ALICE)
    store.add_repository(CLICK, ALICE)
    report = import_pairs(store, tmp_path, QUEUE)
    assert report.added == len(QUEUE)
    return store
