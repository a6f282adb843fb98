"""Issue 18 item 1: the statistics screen shows the condition deltas when answers under two or more of the
Code-QA-Bench conditions exist (the project of test_cli_conditions: three conditions, a model name with markup)."""

from __future__ import annotations

import os

from rich.console import Console
from test_cli_conditions import MODEL
from test_cli_conditions import project as project  # the fixture
from textual.widgets import Static

from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.statistics import StatisticsScreen


async def test_statistics_screen_shows_the_condition_deltas(project):
    db, _ = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=(200, 60)) as pilot:
            await pilot.pause()
            await pilot.press("S")
            await pilot.pause()
            assert isinstance(app.screen, StatisticsScreen)
            await app.workers.wait_for_complete()
            await pilot.pause()
            console = Console(width=250, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
            console.print(app.screen.query_one("#statistics", Static).content)
            text = console.export_text()
    assert "Condition deltas (Code-QA-Bench)" in text and "Wilcoxon signed-rank" in text
    assert MODEL in text  # the model's name with its markup, literally
    assert "code-only - closed-book" in text and "documented - code-only" in text and "code-derivable" in text
    assert "too few non-zero differences" in text
