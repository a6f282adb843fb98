"""Stale evidence in the app (issue 16 item 7): after ``repos move``, the review screen's banner, the changed
citations first in the evidence list, the viewer showing the change (a diff of hostile text, literally), and the
queue's evidence filter."""

from __future__ import annotations

import shutil
from contextlib import asynccontextmanager

import pytest
from click.testing import CliRunner
from stale_evidence_repo import make_stale_fixture
from textual.widgets import OptionList, Select, Static

from benchwright.db import QueueFilter, Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.cli.root import main
from benchwright.tui.screens import EvidenceScreen, QueueScreen, ReviewScreen

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
SIZE = (160, 48)


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


@pytest.fixture
def moved(tmp_path):
    fx = make_stale_fixture(tmp_path)
    r = CliRunner().invoke(main, ["--db", str(fx.db), "repos", "move", "demo", str(fx.new_tree)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return fx


@asynccontextmanager
async def reviewing(fx, index: int):
    """The app on the fixture's project, its review screen showing pair ``#index + 1``: ``(app, pilot, screen)``."""
    with Store.open(fx.db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ReviewScreen)
            await screen.show_pair(fx.pair_ids[index])
            await pilot.pause()
            yield app, pilot, screen


async def _open_first_change(app, pilot) -> None:
    """``e`` (the first changed citation is highlighted), enter (the viewer), and wait for the file."""
    await pilot.press("e", "enter")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_banner_and_changed_citations_first_then_the_diff_literally(moved):
    fx = moved
    async with reviewing(fx, 3) as (app, pilot, screen):
        banner = screen.query_one("#evidence-stale", Static)
        assert banner.display
        assert f"evidence stale since repos move to demo@{fx.two[:12]}: 1 citation changed (press e)" in \
            screen_text(app)
        options = screen.query_one("#evidence", OptionList)
        assert str(options.get_option_at_index(0).prompt) == "⚠ d.py:1 changed"
        await _open_first_change(app, pilot)
        assert options.highlighted == 0
        viewer = app.screen
        assert isinstance(viewer, EvidenceScreen) and viewer.change is not None
        shown = screen_text(app)
        assert "changed at the last repos move: d.py:1 changed" in shown
        assert '-LABEL = "[bold]old[/bold]"' in shown  # markup shown as typed, not bold
        assert '+LABEL = "[@click=app.quit]new[/] ␛[31mred␛[0m [link=file:///etc]x[/link]"' in shown
        assert app.is_running  # the [@click=app.quit] in the diff did nothing
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)


# slow, to keep the default run short; main path: test_banner_and_changed_citations_first_then_the_diff_literally
@pytest.mark.slow
async def test_a_deleted_file_opens_the_change_and_says_the_file_is_gone(moved):
    fx = moved
    async with reviewing(fx, 1) as (app, pilot, screen):
        options = screen.query_one("#evidence", OptionList)
        assert str(options.get_option_at_index(0).prompt) == "⚠ b.py:1-2 deleted"
        await _open_first_change(app, pilot)
        shown = screen_text(app)
        assert "changed at the last repos move: b.py:1-2 deleted" in shown
        assert f"b.py is not in the repository at demo@{fx.two[:12]}" in shown


# slow, to keep the default run short; main path: test_banner_and_changed_citations_first_then_the_diff_literally
@pytest.mark.slow
async def test_moved_citation_opens_the_viewer_at_the_new_lines(moved):
    fx = moved
    async with reviewing(fx, 0) as (app, pilot, screen):
        assert str(screen.query_one("#evidence", OptionList).get_option_at_index(0).prompt) == \
            "⚠ a.py:4-5 moved: now lines 8-9"
        await _open_first_change(app, pilot)
        viewer = app.screen
        assert isinstance(viewer, EvidenceScreen)
        assert (viewer.evidence.citation.start, viewer.evidence.citation.end) == (8, 9)
        assert "8 ❱ def f(x):" in screen_text(app)


# slow, to keep the default run short; main path: test_banner_and_changed_citations_first_then_the_diff_literally
@pytest.mark.slow
async def test_no_banner_for_a_pair_whose_evidence_is_ok(moved):
    fx = moved
    async with reviewing(fx, 2) as (app, _pilot, screen):
        assert not screen.query_one("#evidence-stale", Static).display
        assert "evidence stale" not in screen_text(app)


async def test_the_queue_filters_on_evidence(moved):
    fx = moved
    with Store.open(fx.db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("escape")  # from the review screen to the queue
            await pilot.pause()
            queue = app.screen
            assert isinstance(queue, QueueScreen)
            queue.query_one("#f-evidence", Select).value = "stale"
            await pilot.pause()
            assert queue.flt == QueueFilter(evidence="stale")
            assert [r.id for r in queue.rows] == [fx.pair_ids[i] for i in (0, 1, 3)]


async def test_an_unknown_check_names_the_citations_not_an_unreadable_old_text(tmp_path):
    """A citation past the old file's end is unknown although the old text was read (the same for a file now too
    large, or a symlink out, at the new pin): the banner said 'the old text could not be read' for every unknown."""
    import json

    from benchwright.core.importers import parse

    fx = make_stale_fixture(tmp_path)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"question": "What is at line 40?", "answer": "c.py:40 does it."}) + "\n")
    with Store.open(fx.db) as store:
        store.apply_import(parse("jsonl", extra, repository="demo"), annotator="setup", file_path=extra)
        [pair_id] = [r.id for r in store.queue_page("x", limit=100) if r.id not in fx.pair_ids]
    r = CliRunner().invoke(main, ["--db", str(fx.db), "repos", "move", "demo", str(fx.new_tree)],
                           catch_exceptions=False)
    assert r.exit_code == 0 and "old files read from git" not in r.output, r.output  # the old checkout was read
    with Store.open(fx.db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await app.screen.show_pair(pair_id)
            await pilot.pause()
            shown = screen_text(app)
            assert f"evidence not re-checked at repos move to demo@{fx.two[:12]}: 1 citation could not be " \
                   "compared (press e)" in shown
            assert "old text could not be read" not in shown
