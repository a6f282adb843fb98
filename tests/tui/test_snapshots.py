"""Screenshots of the main screens (pytest-textual-snapshot); update with --snapshot-update after a
deliberate visual change, and look at the report before accepting."""

from __future__ import annotations

from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp


def _app(make_project, tmp_path, *, resume=True, decide=0):
    db, ids = make_project(tmp_path)
    store = Store.open(db)
    for pair_id in ids[:decide]:
        store.record_decision(pair_id, "ann", "accept")
    return BenchwrightApp(store, "ann", resume=resume)


def test_review_screen(snap_compare, project_factory, tmp_path):
    assert snap_compare(_app(project_factory, tmp_path, decide=1), terminal_size=(140, 40))


def test_review_screen_literal_text(snap_compare, project_factory, tmp_path):
    assert snap_compare(_app(project_factory, tmp_path), terminal_size=(140, 40))


def test_queue_screen(snap_compare, project_factory, tmp_path):
    assert snap_compare(_app(project_factory, tmp_path, resume=False, decide=2), terminal_size=(140, 30))
