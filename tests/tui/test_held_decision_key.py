"""A held decision key (many ``a`` queued at once): every decision is stored, in order, the whole pair is not
redrawn for every intermediate pair, and the last pair is drawn once the keys stop."""

from __future__ import annotations

import asyncio

from textual import events

from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens import ReviewScreen

SIZE = (160, 48)
HELD = 40


async def test_held_accept_stores_every_decision_and_draws_the_last_pair(project_factory, tmp_path, monkeypatch):
    db, ids = project_factory(tmp_path, n=HELD + 5)
    ids = ids[1:]  # the first pair (the tricky one) is decided first, one key at a time
    drawn: list[str] = []
    show_pair = ReviewScreen.show_pair

    async def counted(self, pair_id):
        drawn.append(pair_id)
        await show_pair(self, pair_id)

    monkeypatch.setattr(ReviewScreen, "show_pair", counted)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("a")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ReviewScreen) and screen.pair_id == ids[0]
            drawn.clear()
            for _ in range(HELD):  # as a held key arrives: all queued before the first is handled
                app.post_message(events.Key("a", "a"))
            for _ in range(400):
                await asyncio.sleep(0.01)
                if screen.pair_id == ids[HELD] and not screen._display_stale:
                    break
            await pilot.pause()
            decided = [pid for pid in ids if store.current_decision(pid, "ann") is not None]
            assert decided == ids[:HELD]  # every press stored, none twice, none skipped
            assert screen.pair_id == ids[HELD] and drawn[-1] == ids[HELD]
            assert len(drawn) < HELD // 2, f"the whole pair was drawn {len(drawn)} times for {HELD} queued keys"
            question = screen.query_one("#question")
            assert f"Question number {HELD + 2}?" in question.source  # the last pair is on screen
            status = str(screen.query_one("#review-status").content)
            assert f"#{HELD + 2}" in status and "decided …" not in status  # counted again once drawn
