"""In blind mode the inspector's side by side (c) says the judgments are hidden until the annotator submits
theirs, not that none exists (tester's finding 4, issue 20 follow-up)."""

from __future__ import annotations

from test_human_scoring import _open, _seed

from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp


async def test_side_by_side_in_blind_mode_says_the_judgments_are_hidden(project):
    db, ids = project
    with Store.open(db) as store:
        aid = _seed(store, ids[1])
        store.save_human_judgment(aid, "bob", {"1": 0, "2": 0, "3": 0})
        store.assign_answers(["ann", "bob"], 2, by="lead")  # blind mode on
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await _open(app, pilot, store, ids[1])
            await pilot.press("c")
            await pilot.pause()
            summary = str(screen.query_one("#summary-a").render())
            assert "hidden until you submit yours" in summary
            assert "scores its checklist yet" not in summary
