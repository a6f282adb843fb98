"""A save key pressed right after a burst of typing saves everything typed (keys pasted by a terminal
multiplexer, a fast typist on a loaded machine).

A priority binding runs in the app's own task the moment its key is read, while the keys before it are still
queued for the focused editor: ``ctrl+s`` as a priority binding saved a note as ``""`` and an adjudication
reason cut after its first letters. Save keys are ordinary bindings, so they reach the screen after the keys
typed before them.
"""

from __future__ import annotations

import pytest
from test_adjudication_screen import disagreeing_project
from textual import events
from textual.widgets import Input

from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens import NotesScreen
from benchwright.tui.screens.adjudication import AdjudicationScreen

SIZE = (160, 48)
TEXT = "typed in one burst [/] then saved"


def burst(app: BenchwrightApp, text: str, then: str) -> None:
    """Queue every key of ``text`` and then the key ``then`` at once, as a terminal delivers a burst."""
    for ch in text:
        app.post_message(events.Key("space" if ch == " " else ch, ch))
    app.post_message(events.Key(then, None))


async def settle(pilot) -> None:
    for _ in range(6):
        await pilot.pause()


async def test_a_note_typed_in_a_burst_is_saved_whole(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(app.screen, NotesScreen)
            burst(app, TEXT, "ctrl+s")
            await settle(pilot)
            assert store.current_note(ids[0], "ann") == TEXT


# slow, to keep the default run short; main path: test_a_note_typed_in_a_burst_is_saved_whole
@pytest.mark.slow
async def test_an_adjudication_reason_typed_in_a_burst_is_recorded_whole(project):
    db, ids = project
    disagreeing_project(db, ids)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("A")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, AdjudicationScreen) and screen.pair_id == ids[0]
            await pilot.press("[", "j", "[", "a", "tab")  # A's items (weights 6 + 3), accept, the reason field
            assert app.focused is screen.query_one("#adj-reason", Input)
            burst(app, TEXT, "ctrl+s")
            await settle(pilot)
            adj = store.adjudication_of(ids[0])
            assert adj is not None and adj.reason == TEXT
