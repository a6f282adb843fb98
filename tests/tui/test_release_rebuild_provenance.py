"""Tester finding (issue 20): `releases rebuild` after a schema migration or an upgrade, with no data changed,
reproduces the recorded release byte for byte (the recorded provenance is written, not the running one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.db import SCHEMA_VERSION, Store
from benchwright.tui.services import releases


def contents(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def recorded(project_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db, _ = project_factory(tmp_path, n=3)
    with Store.open(db) as store:
        checklist = Checklist(items=[ChecklistItem(key_point="Names it", weight=9, rubric=binary_rubric(9)),
                                     clarity_item()])
        for r in store.queue_page("x", limit=10):
            store.save_checklist(r.id, checklist, author="ada", origin="edited")
            store.record_decision(r.id, "ada", "accept")
        path = releases.create_release(store, store.release_preflight(), "prov-qa", "1.0.0", tmp_path / "r",
                                       by="lead", created_at="2026-01-01T00:00:00+00:00", figures=False)
    return db, tmp_path, path


def test_rebuild_after_a_schema_migration_and_an_upgrade_is_byte_identical(recorded, monkeypatch):
    db, tmp, path = recorded
    monkeypatch.setattr(releases, "SCHEMA_VERSION", SCHEMA_VERSION + 1)  # as after one more migration
    real = releases.metadata.version
    monkeypatch.setattr(releases.metadata, "version",  # as after an upgrade
                        lambda name: "99.0.0" if name == "benchwright" else real(name))
    with Store.open(db) as store:
        again = releases.rebuild_release(store, "prov-qa", "1.0.0", tmp / "again", by="lead")
    assert contents(again) == contents(path)


def test_rebuild_still_refuses_when_the_data_changed(recorded):
    db, tmp, _ = recorded
    with Store.open(db) as store:
        pid = store.queue_page("x", limit=10)[0].id
        store.record_decision(pid, "ada", "reject")
        with pytest.raises(releases.BenchwrightError, match=r"the project has changed since prov-qa 1\.0\.0"):
            releases.rebuild_release(store, "prov-qa", "1.0.0", tmp / "again", by="lead")
    assert not (tmp / "again" / "prov-qa-1.0.0").exists()
