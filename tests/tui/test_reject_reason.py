"""The review screen's reject asks for the reason (RepoProbe §3.2 "Quality Assurance"): keys 1-5 pick one,
enter the default (the first failing criterion), esc stores nothing; a criterion marked pass is refused."""

from __future__ import annotations

import pytest

from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.reject_reason import RejectReasonScreen
from benchwright.tui.screens.review import ReviewScreen

SIZE = (140, 40)


def _stored(db, pair_id, annotator="ann"):
    with Store.open(db) as s:
        return s.current_decision(pair_id, annotator), (s.reviews_of(pair_id).get(annotator) or None)


# slow, to keep the default run short; main path: test_enter_takes_the_first_failing_criterion_and_esc_stores_nothing
@pytest.mark.slow
async def test_a_key_picks_the_reason_and_it_is_stored(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen) and app.screen.pair_id == ids[0]
            await pilot.press("3", "3")  # task validity: unset -> pass -> fail
            await pilot.press("x")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, RejectReasonScreen)
            assert dialog.default == "task_validity"  # the first failing criterion
            assert str(dialog.query_one("#reject-reasons").get_option_at_index(1).prompt).startswith("2  checklist")
            assert _stored(db, ids[0])[0] is None  # nothing stored while the reason is asked
            await pilot.press("5")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen) and app.screen.pair_id == ids[1]
    decision, review = _stored(db, ids[0])
    assert decision.value == "reject" and review.reason == "directly-answerable"


async def test_enter_takes_the_first_failing_criterion_and_esc_stores_nothing(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("x", "escape")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen) and app.screen.pair_id == ids[0]
            assert _stored(db, ids[0])[0] is None
            await pilot.press("4", "4", "2", "2", "x", "enter")  # code relevance and checklist quality fail
            await pilot.pause()
            assert app.screen.pair_id == ids[1]
            # nothing fails: enter takes the first reason of the list
            await pilot.press("x", "enter")
            await pilot.pause()
    assert _stored(db, ids[0])[1].reason == "checklist_quality"
    assert _stored(db, ids[1])[1].reason == "qa_consistency"


async def test_a_criterion_marked_pass_cannot_be_the_reason_and_undo_still_works(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("1")  # QA consistency passes
            await pilot.press("x")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, RejectReasonScreen)
            assert dialog.query_one("#reject-reasons").get_option_at_index(0).disabled
            assert dialog.default == "checklist_quality"  # the first one it may be
            await pilot.press("1")
            await pilot.pause()
            assert app.screen is dialog  # refused: still asking
            await pilot.press("2")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen) and app.screen.pair_id == ids[1]
            assert _stored(db, ids[0])[1].reason == "checklist_quality"
            await pilot.press("backspace")
            await pilot.pause()
            assert app.screen.pair_id == ids[0]
    assert _stored(db, ids[0])[0] is None


# slow, to keep the default run short; main path: test_enter_takes_the_first_failing_criterion_and_esc_stores_nothing
@pytest.mark.slow
async def test_others_reviews_and_the_adjudication_table_name_the_reject_reason(project):
    from benchwright.core.review import Criteria
    from benchwright.tui.screens.adjudication import AdjudicationScreen

    db, ids = project
    with Store.open(db) as store:
        store.record_decision(ids[0], "ada", "reject", criteria=Criteria(), reason="directly-answerable")
        store.record_decision(ids[0], "bob", "accept", criteria=Criteria())
        app = BenchwrightApp(store, "cy")  # blind mode off: cy sees the others' reviews
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.screen.pair_id == ids[0]
            others = str(app.screen.query_one("#others").render())
            assert "reject (directly answerable)" in others
            await pilot.press("escape", "A")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, AdjudicationScreen) and screen.pair_id == ids[0]
            labels = [str(c) for c in screen.reviews_table.columns[0]._cells]
            assert labels[-1] == "reject reason"
            reason_cells = [str(col._cells[-1]) for col in screen.reviews_table.columns[1:3]]
            assert reason_cells == ["directly answerable", "·"]
            assert str(screen.reviews_table.columns[-1]._cells[-1]) == "≠"
