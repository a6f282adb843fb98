"""The checklist editor and diff screen driven with Pilot: violations live, save, versions, diff, undo,
leaving with unsaved edits, normalize, restart."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Static

from benchwright.core.checklist import Checklist, ChecklistItem, RubricTier, binary_rubric, clarity_item
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.checklist_diff import ChecklistDiffScreen
from benchwright.tui.screens.checklist_editor import ChecklistEditorScreen, LeaveScreen, NormalizeScreen
from benchwright.tui.screens.review import ReviewScreen

SIZE = (160, 48)


def generated() -> Checklist:
    return Checklist(items=[
        ChecklistItem(key_point="Names the module that parses tokens", weight=5, rubric=[
            RubricTier(score=5, criterion="Names it."), RubricTier(score=2, criterion="Names its package."),
            RubricTier(score=0, criterion="Neither."),
        ]),
        ChecklistItem(key_point="Explains the retry order", weight=4, rubric=binary_rubric(4)),
        clarity_item(),
    ])


async def open_editor(pilot, app):
    await pilot.pause()
    await pilot.press("c")
    await pilot.pause()
    assert isinstance(app.screen, ChecklistEditorScreen)
    return app.screen


def bar(screen) -> str:
    return str(screen.query_one("#validation", Static).render())


async def test_edit_weight_see_violation_fix_save_new_version_and_diff(project):
    db, ids = project
    with Store.open(db) as store:
        store.save_checklist(ids[0], generated(), author="llm", origin="generated")
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            ed = await open_editor(pilot, app)
            assert ed.base_version == 1 and "✓ valid" in bar(ed)
            app.screen.query_one("#w-1", Input).focus()
            await pilot.press("backspace", "3")
            await pilot.pause()
            assert "knowledge weights sum to 8; they must sum to 9" in bar(ed)
            # the binary rubric followed the weight
            assert [t["score"] for t in ed.form[1]["rubric"]] == ["3", "0"]
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert store.checklist_version(ids[0]).version == 1  # refused
            await pilot.press("backspace", "4")
            await pilot.pause()
            assert "✓ valid" in bar(ed)
            ed.query_one("#kp-0", Input).focus()
            await pilot.press("end", *" and its entry point")
            await pilot.press("ctrl+s")
            await pilot.pause()
            current = store.checklist_version(ids[0])
            assert current.version == 2 and current.origin == "edited" and current.author == "ann"
            assert current.parent_version == 1
            assert current.checklist.items[0].key_point == "Names the module that parses tokens and its entry point"
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            assert "v2 edited" in str(app.screen.query_one("#checklist", Static).render())
            await pilot.press("d")
            await pilot.pause()
            diff = app.screen
            assert isinstance(diff, ChecklistDiffScreen) and (diff.left, diff.right) == (1, 2)
            new_side = diff.query_one("#diff-new", Static).render()
            inserted = [new_side.plain[s.start:s.end] for s in new_side.spans if "green" in str(s.style)]
            assert any("and its entry point" in text for text in inserted)


async def test_every_violation_is_listed_and_a_draft_can_be_kept(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            ed = await open_editor(pilot, app)
            assert ed.base_version is None
            assert "the key point is empty" in bar(ed)
            ed.query_one("#s-0-1", Input).focus()
            await pilot.press("backspace", "7")  # the 0 tier becomes 7: no zero, duplicate-free
            await pilot.pause()
            text = bar(ed)
            assert "the rubric has no score 0" in text and "the key point is empty" in text
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert store.checklist_version(ids[0]) is None
            await pilot.press("ctrl+o")
            await pilot.pause()
            draft = store.checklist_version(ids[0])
            assert draft.is_draft and not draft.is_valid
            assert "item 1: the rubric has no score 0" in draft.violations


# slow, to keep the default run short; main path: test_edit_weight_see_violation_fix_save_new_version_and_diff
@pytest.mark.slow
async def test_undo_redo_add_remove_move_and_limit_of_four(project):
    db, ids = project
    with Store.open(db) as store:
        store.save_checklist(ids[0], generated(), author="llm", origin="generated")
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            ed = await open_editor(pilot, app)
            before = [it["key_point"] for it in ed.form]
            await pilot.press("ctrl+n")
            await pilot.pause()
            assert len(ed._knowledge_indices()) == 3 and app.focused.id == "kp-1"
            await pilot.press(*"New point")
            await pilot.press("ctrl+n", "ctrl+n")
            await pilot.pause()
            assert len(ed._knowledge_indices()) == 4  # never more than 4
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert len(ed._knowledge_indices()) == 3
            await pilot.press("ctrl+y")
            await pilot.pause()
            assert len(ed._knowledge_indices()) == 4
            await pilot.press("ctrl+z", "ctrl+z", "ctrl+z")
            await pilot.pause()
            assert [it["key_point"] for it in ed.form] == before
            ed.query_one("#kp-1", Input).focus()
            await pilot.press("ctrl+up")
            await pilot.pause()
            assert [it["key_point"] for it in ed.form][:2] == [before[1], before[0]]
            await pilot.press("ctrl+r")
            await pilot.pause()
            assert [it["key_point"] for it in ed.form] == [before[0], before[2]]


# slow, to keep the default run short; main path: test_edit_weight_see_violation_fix_save_new_version_and_diff
@pytest.mark.slow
async def test_escape_with_unsaved_edits_asks_first(project):
    db, ids = project
    with Store.open(db) as store:
        store.save_checklist(ids[0], generated(), author="llm", origin="generated")
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            ed = await open_editor(pilot, app)
            await pilot.press("end", "!")
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, LeaveScreen)
            await pilot.press("escape")  # stay
            await pilot.pause()
            assert app.screen is ed and ed.dirty
            await pilot.press("escape")
            await pilot.pause()
            await pilot.press("x")  # discard
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            assert store.checklist_version(ids[0]).version == 1


# slow, to keep the default run short; main path: test_edit_weight_see_violation_fix_save_new_version_and_diff
@pytest.mark.slow
async def test_normalize_weights_is_proposed_then_applied(project):
    db, ids = project
    skewed = Checklist(items=[
        ChecklistItem(key_point="a", weight=2, rubric=binary_rubric(2)),
        ChecklistItem(key_point="b", weight=2, rubric=binary_rubric(2)),
        ChecklistItem(key_point="c", weight=1, rubric=binary_rubric(1)),
        clarity_item(),
    ])
    with Store.open(db) as store:
        store.save_checklist(ids[0], skewed, author="llm", origin="imported", draft=True)
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            ed = await open_editor(pilot, app)
            assert "knowledge weights sum to 5" in bar(ed)
            await pilot.press("ctrl+g")
            await pilot.pause()
            assert isinstance(app.screen, NormalizeScreen)
            assert "weight 2 → 4" in str(app.screen.query_one(Static).render())
            await pilot.press("escape")
            await pilot.pause()
            assert [it["weight"] for it in ed.form[:3]] == ["2", "2", "1"]  # nothing applied
            await pilot.press("ctrl+g")
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            assert [it["weight"] for it in ed.form[:3]] == ["4", "3", "2"]
            assert "✓ valid" in bar(ed)


# slow, to keep the default run short; main path: test_edit_weight_see_violation_fix_save_new_version_and_diff
@pytest.mark.slow
async def test_conflicting_save_is_refused(project):
    db, ids = project
    with Store.open(db) as store:
        store.save_checklist(ids[0], generated(), author="llm", origin="generated")
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            ed = await open_editor(pilot, app)
            with Store.open(db) as other:  # another annotator saves meanwhile
                other.save_checklist(ids[0], generated(), author="bob", expected_version=1)
            await pilot.press("end", "!")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert store.checklist_version(ids[0]).author == "bob"
            assert ed.dirty


# slow, to keep the default run short; main path: test_edit_weight_see_violation_fix_save_new_version_and_diff
@pytest.mark.slow
async def test_versions_survive_restart_and_queue_filters_checklists(project):
    db, ids = project
    with Store.open(db) as store:
        store.save_checklist(ids[1], generated(), author="llm", origin="generated")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            queue = app.screen
            queue.query_one("#f-checklist").value = "no-checklist"
            await pilot.pause()
            assert ids[1] not in [r.id for r in queue.rows] and ids[0] in [r.id for r in queue.rows]
            queue.query_one("#f-checklist").value = "valid-checklist"
            await pilot.pause()
            assert [r.id for r in queue.rows] == [ids[1]]
            queue.query_one(DataTable).focus()
            await pilot.press("enter", "c")
            await pilot.pause()
            await pilot.press("end", "!", "ctrl+s", "escape")
            await pilot.pause()
    with Store.open(db) as store:
        history = store.checklist_history(ids[1])
        assert [v.version for v in history] == [1, 2]
        assert history[1].checklist.items[0].key_point.endswith("!")


async def test_a_save_after_the_text_changed_elsewhere_is_stale_not_fitted_to_the_new_text(project):
    db, ids = project
    with Store.open(db) as store:
        store.save_checklist(ids[0], generated(), author="llm", origin="generated")
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            ed = await open_editor(pilot, app)
            with Store.open(db) as other:  # another terminal rewrites the text the editor shows
                other.save_text_version(ids[0], "Another question entirely?", "Another answer.", origin="edited",
                                        by="bob")
            ed.query_one("#kp-0", Input).focus()
            await pilot.press("end", *" too")
            await pilot.press("ctrl+s")
            await pilot.pause()
            current = store.checklist_version(ids[0])
            assert current.version == 2 and current.text_version == 1  # written from the text shown
            assert store.stale_checklist(ids[0]) == (1, 2)
