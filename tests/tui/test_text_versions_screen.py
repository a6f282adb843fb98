"""The text screen (``w`` on the review screen; issue 16 item 1), driven with Pilot: the current text's origin on
the review screen, the word diff against the original, accept, edit (compare-and-set, a conflict kept readable),
revert, and hostile text shown literally everywhere."""

from __future__ import annotations

from test_literal_text import assert_literal, screen_text, settle, toasts
from textual.widgets import TextArea

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens import ReviewScreen
from benchwright.tui.screens.text_versions import TextEditScreen, TextVersionsScreen

SIZE = (160, 48)
MODEL = "[bold]x[/bold]-[@click=app.quit]m[/]\x1b[31m"
REFINED_Q = "How does [bold]x[/bold] the \x1b[31mrefined[/] [@click=app.quit]loader[/] read `config`?"


def save_checklist(store: Store, pid: str) -> None:
    """A valid checklist of the pair's current text."""
    store.save_checklist(pid, Checklist(items=[
        ChecklistItem(key_point="Reads `config`", weight=5, rubric=binary_rubric(5)),
        ChecklistItem(key_point="Then `run()`", weight=4, rubric=binary_rubric(4)), clarity_item()]), author="ann")


async def open_text_screen(app, pilot, store, pid):
    await app.push_screen(ReviewScreen(store, "ann", pid))
    await settle(app, pilot)
    await pilot.press("w")
    await settle(app, pilot)
    assert isinstance(app.screen, TextVersionsScreen)


async def test_accept_edit_revert_and_hostile_text_literal(project):
    db, ids = project
    pid = ids[1]
    with Store.open(db) as store:
        store.record_decision(pid, "ann", "accept")
        store.save_text_version(pid, REFINED_Q, "Refined \x1b[1manswer[/].", origin="refined", by="[b]runner",
                                model=MODEL, call_ids=[3])
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await settle(app, pilot)
            await app.push_screen(ReviewScreen(store, "ann", pid))
            await settle(app, pilot)
            shown = screen_text(app)
            assert "text v2 refined by [bold]x[/bold]-[@click=app.quit]m[/]␛[31m" in shown
            assert "back in review: the text changed since your accept" in shown
            assert_literal(app, "review of a refined pair", marks=("[@click=app.quit]loader[/]",))
            await pilot.press("w")
            await settle(app, pilot)
            assert isinstance(app.screen, TextVersionsScreen)
            shown = screen_text(app)
            assert "Against the original" in shown and "refined" in shown and "by [b]runner" in shown
            assert "[@click=app.quit]loader[/]" in shown  # the inserted words, literal
            assert_literal(app, "text screen", marks=("model [bold]x[/bold]",))
            # accept the rewrite
            await pilot.press("a")
            await settle(app, pilot)
            assert store.text_acceptances(pid) == {2: ["ann"]}
            # edit: a new version, compare-and-set on the version opened
            await pilot.press("e")
            await settle(app, pilot)
            assert isinstance(app.screen, TextEditScreen)
            app.screen.query_one("#text-edit-question", TextArea).text = "Edited [bold]x[/bold] question?"
            await pilot.press("ctrl+s")
            await settle(app, pilot)
            assert store.text_version(pid).question == "Edited [bold]x[/bold] question?"
            assert store.text_version(pid).origin == "edited" and store.text_version(pid).created_by == "ann"
            assert store.text_version(pid).reference_answer == "Refined \x1b[1manswer[/]."
            # another session writes meanwhile: the save is refused, the typed text kept, the reason shown
            await pilot.press("e")
            await settle(app, pilot)
            store.save_text_version(pid, "Someone else's question?", "Theirs.", origin="edited", by="bob")
            app.screen.query_one("#text-edit-question", TextArea).text = "My second edit?"
            await pilot.press("ctrl+s")
            await settle(app, pilot)
            assert isinstance(app.screen, TextEditScreen)
            assert "is now at version 4, after you opened version 3" in screen_text(app)
            assert app.screen.query_one("#text-edit-question", TextArea).text == "My second edit?"
            assert store.text_version(pid).question == "Someone else's question?"
            await pilot.press("ctrl+s")  # saves over the newer one, deliberately
            await settle(app, pilot)
            assert isinstance(app.screen, TextVersionsScreen)
            assert store.text_version(pid).question == "My second edit?"
            # revert to the original, then to the highlighted version (the newest, v6 after the revert)
            await pilot.press("o")
            await settle(app, pilot)
            current = store.text_version(pid)
            assert (current.restored_from, current.question) == (1, store.original_text(pid).question)
            await pilot.press("down", "down", "v")  # v6* (top), v5, v4: restore v4
            await settle(app, pilot)
            assert store.text_version(pid).restored_from == 4
            assert any("restored" in t for t in toasts(app))
            await pilot.press("escape")
            await settle(app, pilot)
            assert isinstance(app.screen, ReviewScreen)
            assert "Someone else's question?" in screen_text(app)  # the review screen shows the new current text


async def test_a_stale_checklist_is_shown_on_the_review_and_text_screens_and_in_the_editor(project):
    from benchwright.tui.screens.checklist_editor import ChecklistEditorScreen

    db, ids = project
    pid = ids[2]
    with Store.open(db) as store:
        save_checklist(store, pid)
        store.save_text_version(pid, "A refined question?", "A refined answer.", origin="refined", by="t")
        store.save_text_version(pid, "Edited?", "Edited.", origin="edited", by="ann")
        note = "made from text version 1; the text is now version 3"
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await app.push_screen(ReviewScreen(store, "ann", pid))
            await settle(app, pilot)
            assert f"checklist stale: {note}" in screen_text(app)
            await pilot.press("w")
            await settle(app, pilot)
            assert f"checklist stale: {note}" in screen_text(app)
            await pilot.press("escape")
            await settle(app, pilot)
            await pilot.press("c")
            await settle(app, pilot)
            assert isinstance(app.screen, ChecklistEditorScreen)
            assert f"stale: {note}" in screen_text(app)
            await pilot.press("ctrl+s")  # a checklist saved now is made from the current text
            await settle(app, pilot)
            assert store.checklist_version(pid).text_version == 3 and store.stale_checklist(pid) is None
