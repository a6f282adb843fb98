"""The curation run screen's status after a step that could not start (issue 19 testers' finding: with no
provider configured and ``b`` pressed, a stale "classify: 0/6 as a batch" stayed): the error replaces the status,
and the run's figures and bar are reset since nothing runs."""

from __future__ import annotations

from textual.widgets import ProgressBar

from benchwright.core.llm import ScriptedProvider
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.curation import CurationRunScreen, CurationScreen


async def test_a_configuration_error_replaces_the_0_of_n_status(project):
    db, _ = project  # no benchwright.toml: no model configured for the generator role
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: ScriptedProvider(lambda r: {}))
        async with app.run_test(size=(140, 50)) as pilot:
            screen = CurationRunScreen(store, "ann", app.screen.flt)
            await app.push_screen(screen)
            await pilot.pause()
            await pilot.press("b")  # batch on
            await pilot.pause()
            assert "batch: on" in str(screen.query_one("#run-status").render())
            await pilot.press("down", "enter")  # classify (images comes first)
            await app.workers.wait_for_complete()
            await pilot.pause()
            status = str(screen.query_one("#run-status").render())
            assert "classify: 0/" not in status and "as a batch" not in status, status
            assert "classify: not run: " in status and "no model configured for the generator role" in status
            assert not screen.running
            assert screen.query_one("#run-progress", ProgressBar).total is None
            # the next key is handled, and its status is not mixed with the old run's figures
            await pilot.press("f")
            await pilot.pause()
            assert str(screen.query_one("#run-status").render()) == "force: on"


async def test_the_pair_screen_names_the_error(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: ScriptedProvider(lambda r: {}))
        async with app.run_test(size=(140, 50)) as pilot:
            await app.push_screen(CurationScreen(store, ids[0], "ann"))
            await pilot.press("b", "1")
            await app.workers.wait_for_complete()
            await pilot.pause()
            status = str(app.screen.query_one("#curation-status").render())
            assert "classify: not run: " in status and "no model configured" in status, status
            assert "running classify" not in status


async def test_the_idle_bar_is_hidden_and_the_batch_state_stays(project):
    """Issue 20 tester finding: before any run and after a refused one the bar does not pulse ("--%", no total):
    it is hidden; the status line after the refusal still says whether batch is on."""
    db, _ = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: ScriptedProvider(lambda r: {}))
        async with app.run_test(size=(140, 50)) as pilot:
            screen = CurationRunScreen(store, "ann", app.screen.flt)
            await app.push_screen(screen)
            await pilot.pause()
            bar = screen.query_one("#run-progress", ProgressBar)
            assert not bar.display  # before any run
            await pilot.press("b", "down", "enter")  # batch on, classify: refused (no model configured)
            await app.workers.wait_for_complete()
            await pilot.pause()
            status = str(screen.query_one("#run-status").render())
            assert status.startswith("batch: on · classify: not run: "), status
            assert not bar.display and not screen.running
