"""The queue on a longer project: it loads a window around its target and redraws changed rows in place."""

from __future__ import annotations

from textual.widgets import DataTable

from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens import QueueScreen, ReviewScreen
from benchwright.tui.screens.queue import MAX_PRELOAD

SIZE = (160, 48)


async def test_the_queue_opens_around_a_deep_pair_and_loads_the_rows_above_on_the_way_up(project_factory, tmp_path):
    db, ids = project_factory(tmp_path, n=MAX_PRELOAD + 60)
    target = ids[MAX_PRELOAD + 40]  # position MAX_PRELOAD + 41
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            queue = app.screen
            assert isinstance(queue, QueueScreen)
            queue.reload(keep=target)
            await pilot.pause()
            table = queue.query_one(DataTable)
            assert queue.rows[0].ordinal == 41 and queue.rows[table.cursor_row].id == target
            table.move_cursor(row=2, animate=False)  # near the top of the window: the rows above come
            await pilot.pause()
            assert queue.rows[0].ordinal == 1 and queue.window_start == 0
            assert [r.id for r in queue.rows] == ids and queue.rows[table.cursor_row].id == ids[42]
            assert table.row_count == len(ids)


async def test_back_from_the_review_screen_the_decided_rows_are_redrawn_in_place(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            await pilot.press("a")  # accept #1, now on #2
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
            queue = app.screen
            assert isinstance(queue, QueueScreen)
            table = queue.query_one(DataTable)
            assert queue.rows[table.cursor_row].id == ids[1]
            assert "accepted" in str(table.get_row(ids[0])[1])
            assert "decided 1/6" in str(queue.query_one("#progress").content)
            await pilot.press("enter", "a")  # accept #2 from the review screen
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
            assert queue.rows[table.cursor_row].id == ids[2] and table.row_count == len(ids)
            assert "accepted" in str(table.get_row(ids[1])[1]) and "undecided" in str(table.get_row(ids[2])[1])
            assert "decided 2/6" in str(queue.query_one("#progress").content)


async def test_at_start_the_queue_under_the_review_screen_is_built_a_moment_later_not_before_the_first_pair(
        project, monkeypatch):
    from benchwright.tui.screens import queue as queue_mod

    monkeypatch.setattr(queue_mod, "PREPARE_AFTER_S", 3.0)  # long enough for a loaded CI machine
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            queue = app.screen_stack[-2]
            assert isinstance(queue, QueueScreen)
            assert len(queue.query(DataTable)) == 0 and len(queue.query("#filters")) == 0  # nothing but header and footer yet
            for _ in range(100):  # the prepare timer fires (up to 10 s)
                await pilot.pause(0.1)
                if queue.rows:
                    break
            table = queue.query_one(DataTable)  # built under the review screen, rows loaded
            assert len(queue.query("#f-status")) == 1 and queue.rows and table.row_count == len(ids)
            assert isinstance(app.screen, ReviewScreen)
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is queue and queue.rows[table.cursor_row].id == ids[0]
            assert len(queue.query(DataTable)) == 1  # built once


async def test_a_queue_opened_without_a_pair_to_resume_is_built_at_once(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            queue = app.screen
            assert isinstance(queue, QueueScreen) and queue.query_one(DataTable).row_count == len(ids)
