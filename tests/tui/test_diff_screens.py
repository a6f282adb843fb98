"""The checklist diff screen on long and odd texts: computed in a thread worker (``computing diff…``), emoji
kept whole, normalization-only differences and timed-out diffs shown as such, closing cancels the worker."""

from __future__ import annotations

import asyncio
import unicodedata

from textual.widgets import Static

from benchwright.core import text_diff
from benchwright.core.checklist import Checklist, ChecklistItem, RubricTier, clarity_item
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.checklist_diff import ChecklistDiffScreen


def checklist(key_point: str, criterion: str = "Names it.") -> Checklist:
    return Checklist(items=[ChecklistItem(key_point=key_point, weight=9, rubric=[
        RubricTier(score=9, criterion=criterion), RubricTier(score=0, criterion="Does not.")]), clarity_item()])


def long_pair() -> tuple[str, str]:
    old = " ".join(["alpha", "beta", "gamma", "🇫🇷"][k % 4] for k in range(800))
    new = " ".join(w if k % 5 else "omega" for k, w in enumerate(old.split(" ")))
    return old, new


def styled(widget: Static, colour: str) -> list[str]:
    r = widget.render()
    return [r.plain[s.start:s.end] for s in r.spans if colour in str(s.style)]


async def test_a_long_diff_is_computed_in_a_worker_and_says_approximate(project, monkeypatch):
    db, ids = project
    old, new = long_pair()
    monkeypatch.setattr(text_diff, "DEFAULT_TIMEOUT_S", 1e-6)  # what a long diff meets at 1 s
    with Store.open(db) as store:
        store.save_checklist(ids[0], checklist(old), author="llm", origin="generated")
        store.save_checklist(ids[0], checklist(new), author="ann", origin="edited")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 48)) as pilot:
            screen = ChecklistDiffScreen(store, ids[0])
            await app.push_screen(screen)
            assert "computing diff…" in str(screen.query_one("#diff-new", Static).render())
            await app.workers.wait_for_complete()
            await pilot.pause()
            for side in ("#diff-old", "#diff-new"):
                text = str(screen.query_one(side, Static).render())
                assert "computing diff…" not in text
                assert text.count("approximate diff") >= 2  # the banner and the key point
            assert any("omega" in t for t in styled(screen.query_one("#diff-new", Static), "green"))


async def test_emoji_stay_whole_and_normalization_only_is_shown_as_such(project):
    db, ids = project
    v1 = "Flags 🇫🇷 and a family 👨\u200d👩\u200d👧 at the café"
    v2 = "Flags 🇫🇮 and a family 👨\u200d👩\u200d👦 at the café"
    with Store.open(db) as store:
        store.save_checklist(ids[0], checklist(v1), author="llm", origin="generated")
        store.save_checklist(ids[0], checklist(v2), author="ann", origin="edited")
        store.save_checklist(ids[0], checklist(unicodedata.normalize("NFD", v2)), author="ann", origin="edited")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 48)) as pilot:
            screen = ChecklistDiffScreen(store, ids[0], 1, 2)
            await app.push_screen(screen)
            await pilot.pause()
            assert styled(screen.query_one("#diff-old", Static), "red") == ["🇫🇷", "👨\u200d👩\u200d👧"]
            assert styled(screen.query_one("#diff-new", Static), "green") == ["🇫🇮", "👨\u200d👩\u200d👦"]
            await app.pop_screen()
            screen = ChecklistDiffScreen(store, ids[0], 2, 3)
            await app.push_screen(screen)
            await pilot.pause()
            new = screen.query_one("#diff-new", Static)
            assert "normalization only" in str(new.render())
            assert styled(new, "green") == [] and styled(screen.query_one("#diff-old", Static), "red") == []


async def test_closing_the_screen_cancels_a_diff_still_computing(project, monkeypatch):
    db, ids = project
    old, new = long_pair()
    monkeypatch.setattr(text_diff, "DEFAULT_TIMEOUT_S", 120)  # it would run for a long time if not cancelled
    old, new = old * 8, new * 8
    with Store.open(db) as store:
        store.save_checklist(ids[0], checklist(old), author="llm", origin="generated")
        store.save_checklist(ids[0], checklist(new), author="ann", origin="edited")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 48)):
            screen = ChecklistDiffScreen(store, ids[0])
            await app.push_screen(screen)
            worker = next(w for w in app.workers if w.group == "checklist-diff")
            await app.pop_screen()
            for _ in range(1000):
                if worker.is_cancelled:
                    break
                await asyncio.sleep(0.01)
            assert worker.is_cancelled
