"""A decision taken on a text another session has since replaced (an edit, a rewrite) is refused, like a decision
on a stale review state: the screen reloads the new text and the key pressed again decides on it."""

from __future__ import annotations

from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.review import ReviewScreen

SIZE = (140, 40)


async def test_an_accept_of_a_text_replaced_meanwhile_is_refused_then_taken_on_the_new_text(project, tmp_path):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen) and app.screen.pair_id == ids[0]
            with Store.open(db) as other:  # another terminal edits the text the screen shows
                other.save_text_version(ids[0], "A question edited elsewhere?", "An answer.", origin="edited",
                                        by="bob")
            await pilot.press("a")
            await pilot.pause()
            assert app.screen.pair_id == ids[0]  # not taken: the screen now shows the new text
            with Store.open(db) as s:
                assert s.current_decision(ids[0], "ann") is None
            assert app.screen.view.text.version == 2
            await pilot.press("a")
            await pilot.pause()
            assert app.screen.pair_id == ids[1]
    with Store.open(db) as s:
        assert s.current_decision(ids[0], "ann").value == "accept"
        assert s.reopened(ids[0], "ann") is None
