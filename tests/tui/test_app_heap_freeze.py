"""The app freezes the heap of its start once (gc.freeze), a moment after it starts, and gives it back at its end."""

from __future__ import annotations

import asyncio
import gc

from benchwright.db import Store
from benchwright.tui import app as app_module
from benchwright.tui.app import BenchwrightApp

SIZE = (120, 40)


async def _until_frozen(timeout_s: float = 5.0) -> None:
    """Wait until something is frozen, or ``timeout_s`` has passed."""
    for _ in range(int(timeout_s / 0.05)):
        if gc.get_freeze_count():
            return
        await asyncio.sleep(0.05)


async def test_the_start_heap_is_frozen_once_after_the_delay_and_unfrozen_at_the_end(project, monkeypatch):
    db, _ = project
    monkeypatch.setattr(app_module, "FREEZE_AFTER_S", 0.2)
    assert gc.get_freeze_count() == 0
    screens_at_freeze: list[str] = []
    real_freeze = gc.freeze

    def freeze() -> None:
        screens_at_freeze.append(type(app.screen).__name__)
        real_freeze()

    monkeypatch.setattr(gc, "freeze", freeze)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await _until_frozen()
            frozen = gc.get_freeze_count()
            assert screens_at_freeze == ["ReviewScreen"]  # after the start put the first pair up, not during it
            assert frozen > 10_000  # the modules, styles and widgets of the start
            app._freeze_heap()  # a second call freezes nothing more: what was made since stays collectable
            assert gc.get_freeze_count() == frozen and len(screens_at_freeze) == 1
            await pilot.press("right")
            await pilot.pause()
        assert gc.get_freeze_count() == 0


async def test_a_zero_delay_turns_the_freeze_off(project, monkeypatch):
    db, _ = project
    monkeypatch.setattr(app_module, "FREEZE_AFTER_S", 0)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await asyncio.sleep(0.3)
            assert gc.get_freeze_count() == 0


async def test_the_heap_is_given_back_even_when_the_apps_unmount_is_skipped(project, monkeypatch):
    """Textual does not dispatch the app's Unmount when closing a screen raised; the run itself gives the heap back,
    and a freeze asked for after the end (a late timer) freezes nothing."""
    db, _ = project
    monkeypatch.setattr(app_module, "FREEZE_AFTER_S", 0.1)
    monkeypatch.setattr(BenchwrightApp, "on_unmount", lambda self: None)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await _until_frozen()
            assert gc.get_freeze_count() > 10_000
        assert gc.get_freeze_count() == 0
        app._freeze_heap()
        assert gc.get_freeze_count() == 0


def test_an_app_run_to_its_end_gives_the_heap_back(project, monkeypatch):
    """``App.run`` (the CLI's path) goes through ``run_async``, which gives the heap back however the app ended."""
    db, _ = project
    monkeypatch.setattr(app_module, "FREEZE_AFTER_S", 0.1)
    monkeypatch.setattr(BenchwrightApp, "on_unmount", lambda self: None)
    seen: list[int] = []

    async def drive(pilot) -> None:
        await _until_frozen()
        seen.append(gc.get_freeze_count())
        pilot.app.exit()

    with Store.open(db) as store:
        BenchwrightApp(store, "ann").run(headless=True, size=SIZE, auto_pilot=drive)
    assert seen and seen[0] > 10_000
    assert gc.get_freeze_count() == 0
