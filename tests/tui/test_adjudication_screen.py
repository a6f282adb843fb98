"""The adjudication screen with Pilot: reviews side by side, checklist items taken from A or B, the final
decision with a reason recorded (checklist origin adjudicated); and the statistics screen."""

from __future__ import annotations

import os

import pytest
from textual.widgets import Input

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.review import Criteria, Verdict
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.adjudication import AdjudicationScreen
from benchwright.tui.screens.statistics import StatisticsScreen

SIZE = (160, 48)


def checklist(first: str, w1: int, second: str, w2: int) -> Checklist:
    return Checklist(items=[
        ChecklistItem(key_point=first, weight=w1, rubric=binary_rubric(w1)),
        ChecklistItem(key_point=second, weight=w2, rubric=binary_rubric(w2)),
        clarity_item(),
    ])


def disagreeing_project(db, ids) -> None:
    with Store.open(db) as store:
        store.assign(["ada", "bob"], 2, by="lead")  # blind mode on: ada and bob edit blind, from the same base
        store.save_checklist(ids[0], checklist("Names the parser", 5, "Explains retries", 4), author="llm",
                             origin="generated")
        store.save_checklist(ids[0], checklist("Names the parser module", 6, "Explains retries", 3), author="ada",
                             expected_version=1, visible_to="ada")
        store.save_checklist(ids[0], checklist("Names the parser", 5, "Explains the retry order", 4), author="bob",
                             expected_version=1, visible_to="bob")
        good, bad = Criteria(), Criteria()
        good.verdicts["qa_consistency"] = Verdict.PASS
        bad.verdicts["qa_consistency"] = Verdict.FAIL
        store.record_decision(ids[0], "ada", "accept", criteria=good)
        store.record_decision(ids[0], "bob", "revise", criteria=bad)
        store.record_decision(ids[1], "ada", "accept", criteria=good)
        store.record_decision(ids[1], "bob", "accept", criteria=good)


async def test_adjudicate_with_items_from_both_annotators(project):
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
            marks = [str(c) for c in screen.reviews_table.columns[-1]._cells]
            assert marks[:2] == ["≠", "≠"]  # decision and QA consistency differ
            assert screen.annotators == ["ada", "bob"]
            # item 1 from A (ada), item 2 from B (bob)
            await pilot.press("[", "j", "]")
            composed = screen.composed()
            assert [i.key_point for i in composed.knowledge_items] == ["Names the parser module", "Explains the retry order"]
            assert [i.weight for i in composed.knowledge_items] == [6, 4]
            await pilot.press("r")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert store.adjudication_of(ids[0]) is None  # no reason yet
            await pilot.press("tab")  # focus goes straight to the reason field
            assert app.focused is screen.query_one("#adj-reason", Input), app.focused
            await pilot.press(*"ada's point is sharper")
            assert screen.query_one("#adj-reason", Input).value == "ada's point is sharper"
            # weights 6 + 4 = 10: invalid, refused
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert store.adjudication_of(ids[0]) is None
            await pilot.press("shift+tab", "[")  # back from the reason field; item 2 from A too: weights 6 + 3
            await pilot.press("ctrl+s")
            await pilot.pause()
            adj = store.adjudication_of(ids[0])
            assert adj is not None and adj.decision == "revise" and adj.adjudicator == "lead"
            current = store.checklist_version(ids[0])
            assert current.origin == "adjudicated" and current.version == adj.checklist_version
            assert [i.weight for i in current.checklist.knowledge_items] == [6, 3]
            assert store.disagreement_of(ids[0]) is None
            # ids[1] is unanimous: not in the queue; bulk accept adjudicates it
            assert screen.pair_id is None
            await pilot.press("u")
            await pilot.pause()
            assert store.adjudication_of(ids[1]).decision == "accept"


async def test_statistics_screen_shows_agreement(project):
    db, ids = project
    disagreeing_project(db, ids)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("S")
            await pilot.pause()
            assert isinstance(app.screen, StatisticsScreen)
            await app.workers.wait_for_complete()
            await pilot.pause()
            report = app.screen.report
            assert report is not None and report["decision"].n_items == 2
            kappa = {(k.annotator_a, k.annotator_b): k for k in report["decision"].cohen}[("ada", "bob")]
            assert kappa.n_items == 2 and kappa.observed_agreement == 0.5
            assert app.screen.checklists.n_pairs == 1


# slow, to keep the default run short; main path: test_statistics_screen_shows_agreement
@pytest.mark.slow
async def test_statistics_screen_says_undefined_without_variance(project):
    """Issue 12 item 11: all accepted by both: the screen says "undefined (no variance)" with the percent."""
    db, ids = project
    with Store.open(db) as store:
        for pid in ids[:2]:
            store.record_decision(pid, "ada", "accept")
            store.record_decision(pid, "bob", "accept")
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("S")
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            from rich.console import Console
            from textual.widgets import Static

            console = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
            console.print(app.screen.query_one("#statistics", Static).content)
            text = console.export_text()
            assert "undefined (no variance; 100.0% agreement)" in text
            assert "n/a (n=2)" not in text


# slow, to keep the default run short; main path: test_adjudicate_with_items_from_both_annotators
@pytest.mark.slow
async def test_long_checklists_are_compared_in_a_worker_and_nothing_is_recorded_meanwhile(project, monkeypatch):
    """Long checklists: ``computing diff…`` while a thread worker compares them; ctrl+s is refused until the diff
    is shown (it would otherwise record no checklist); the composed checklist then comes from the worker's diff."""
    import threading

    import benchwright.tui.screens.adjudication as adjudication

    db, ids = project
    disagreeing_project(db, ids)
    release = threading.Event()
    real = adjudication.diff_checklists

    def slow_diff(a, b, **kw):
        if threading.current_thread() is threading.main_thread():
            raise AssertionError("a long diff ran on the UI thread")
        release.wait(10)
        return real(a, b, **kw)

    monkeypatch.setattr(adjudication, "diff_checklists", slow_diff)
    monkeypatch.setattr(adjudication, "LONG_DIFF_CHARS", 10)  # every checklist counts as long
    with Store.open(db) as store:
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("A")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, AdjudicationScreen) and screen.computing
            assert "computing diff…" in str(screen.query_one("#adj-side-a").render())
            await pilot.press("r", "tab", *"reason", "ctrl+s")
            await pilot.pause()
            assert store.adjudication_of(ids[0]) is None  # refused while the diff computes
            release.set()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert not screen.computing and screen.composed() is not None
            assert "Names the parser" in str(screen.query_one("#adj-side-a").render())
