"""Scoring an answer by hand in the judge inspector (issue 20 item 5), driven with Pilot: the form's keys (up/down
between items, digits and left/right for the score, a refused digit, a rationale, ctrl+s), the stored human
judgment, escape storing nothing, blind mode hiding the judges' scores until the annotator has scored, the
side-by-side columns (judge runs and human:NAME), and the list of assigned answers. Text stays literal."""

from __future__ import annotations

from human_checklist import three_item_checklist

from benchwright.core.importers.answers import AnswerRecord
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.human_score import AssignedAnswersScreen, HumanScoreScreen
from benchwright.tui.screens.inspector import InspectorScreen


def _checklist():
    return three_item_checklist()


def _seed(store: Store, pair_id: str) -> str:
    store.save_checklist(pair_id, _checklist(), author="setup", expected_version=None)
    rep = store.import_answers([AnswerRecord(line=1, text="It is in app.py.", pair_ref=pair_id)],
                               model="model-x", condition="direct", created_by="t")
    aid = rep.answer_ids[0]
    for run, first in ((0, 5), (1, 3)):
        store.save_judgment(aid, "checklist", "judge-1", run_index=run, checklist_version=1, created_by="t", entries=[
            {"key": "1", "label": "Names", "kind": "knowledge", "score": first, "max": 5, "allowed": [0, 3, 5],
             "rationale": "LLM says [b]so[/b]"},
            {"key": "2", "label": "Flow", "kind": "knowledge", "score": 4, "max": 4, "allowed": [0, 4]},
            {"key": "3", "label": "Clarity", "kind": "clarity", "score": 1, "max": 1, "allowed": [0, 1]}])
    return aid


async def _open(app, pilot, store, pair_id, who="ann"):
    await app.push_screen(InspectorScreen(store, pair_id, who))
    await pilot.pause()
    return app.screen


async def test_scoring_form_keys_store_a_human_judgment(project):
    db, ids = project
    with Store.open(db) as store:
        aid = _seed(store, ids[1])
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await _open(app, pilot, store, ids[1])
            await pilot.press("h")
            await pilot.pause()
            form = app.screen
            assert isinstance(form, HumanScoreScreen)
            text = str(form.query_one("#hs-items-text").render())
            assert "1. Names [red]app.py[/red]" in text and "0 of 3 items scored" in text  # literal
            await pilot.press("4")  # not allowed for item 1
            await pilot.pause()
            assert "4 is not an allowed score (0, 3, 5)" in str(form.query_one("#hs-error").render())
            await pilot.press("3")
            await pilot.press("right")  # 3 -> 5
            await pilot.press("down", "0", "down", "right")  # item 2: 0; item 3: first allowed (0)... then 1
            await pilot.press("right")
            await pilot.press("tab")
            await pilot.pause()
            await pilot.press(*"not [i]clear[/i]")  # rationale of item 3
            await pilot.press("enter")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, InspectorScreen)
        (j,) = store.human_judgments(aid)
        assert j.judge_model == "ann" and [e.score for e in j.entries] == [5, 0, 1]
        assert j.entries[2].rationale == "not [i]clear[/i]" and j.score_rate == 0.6


async def test_escape_and_an_incomplete_form_store_nothing_and_the_draft_stays(project):
    db, ids = project
    with Store.open(db) as store:
        aid = _seed(store, ids[1])
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await _open(app, pilot, store, ids[1])
            await pilot.press("h", "3")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, HumanScoreScreen)
            assert "not scored: 2, 3" in str(app.screen.query_one("#hs-error").render())
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, InspectorScreen)
            assert store.human_judgments(aid) == []
            await pilot.press("h")  # the draft is back: item 1 is still 3
            await pilot.pause()
            assert "1 of 3 items scored" in str(app.screen.query_one("#hs-items-text").render())
            await pilot.press("down", "4", "down", "1", "ctrl+s")
            await pilot.pause()
            await pilot.press("h")  # submitted: the form shows the stored scores, no draft
            await pilot.pause()
            assert "3 of 3 items scored" in str(app.screen.query_one("#hs-items-text").render())
        assert [e.score for e in store.human_judgments(aid)[0].entries] == [3, 4, 1]


async def test_blind_mode_hides_the_judges_until_scored_then_side_by_side(project):
    db, ids = project
    with Store.open(db) as store:
        aid = _seed(store, ids[1])
        store.save_human_judgment(aid, "bob", {"1": 0, "2": 0, "3": 0})
        store.assign_answers(["ann", "bob"], 2, by="lead")  # an overlap of 2 turns blind mode on
        assert store.blind_mode
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await _open(app, pilot, store, ids[1])
            summary = str(screen.query_one("#summary-a").render())
            assert "blind mode" in summary and "hidden until you submit" in summary
            assert screen.query_one("#grid-a").row_count == 0
            await pilot.press("c")  # side by side: still nothing of the judges or of bob
            await pilot.pause()
            table = screen.query_one("#grid-a")
            assert [str(c.label) for c in table.columns.values()] == ["item", "max"]
            await pilot.press("h", "5", "down", "4", "down", "1", "ctrl+s")
            await pilot.pause()
            table = screen.query_one("#grid-a")
            labels = [str(c.label) for c in table.columns.values()]
            assert labels == ["item", "max", "checklist:judge-1 r1", "checklist:judge-1 r2", "human:bob", "human:ann"]
            assert [str(c) for c in table.get_row_at(0)[2:]] == ["5", "3", "0", "5"]
            assert "yellow" in str(table.get_row_at(0)[2].style)  # they differ on item 1
            assert [str(c) for c in table.get_row_at(3)[2:]] == ["100%", "80%", "0%", "100%"]
            assert "LLM says [b]so[/b]" in str(screen.query_one("#detail-a").render())
            await pilot.press("c")  # back to one judge's runs: now visible
            await pilot.pause()
            assert "2 runs" in str(screen.query_one("#summary-a").render())


async def test_assigned_answers_list_opens_the_answer(project):
    db, ids = project
    with Store.open(db) as store:
        aid = _seed(store, ids[1])
        other = _seed(store, ids[2])
        store.assign_answers(["ann"], 1, by="lead")
        store.save_human_judgment(aid, "ann", {"1": 0, "2": 0, "3": 0})
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await _open(app, pilot, store, ids[1])
            await pilot.press("l")
            await pilot.pause()
            assert isinstance(app.screen, AssignedAnswersScreen)
            listed = app.screen.query_one("#aa-list")
            first = str(listed.get_option_at_index(0).prompt)
            assert first.startswith("· to do") and "Question number 3?" in first  # to do first
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, InspectorScreen) and app.screen.pair_id == ids[2]
            assert app.screen.panel("a").answer_id == other


async def test_blind_mode_does_not_hide_an_answer_not_handed_to_the_viewer(project):
    db, ids = project
    with Store.open(db) as store:
        aid = _seed(store, ids[1])
        store.set_setting("blind_mode", "on", by="lead")  # blind mode for pair reviews, no answer assignments
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await _open(app, pilot, store, ids[1])
            assert "2 runs" in str(screen.query_one("#summary-a").render())
        store.assign_answers(["bob", "cy"], 2, by="lead")  # handed to others: ann (a lead here) sees it
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await _open(app, pilot, store, ids[1])
            assert "2 runs" in str(screen.query_one("#summary-a").render())
            assert aid in dict(store.assigned_answers("bob"))
