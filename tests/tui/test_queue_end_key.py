"""``end`` in the queue: the cursor goes to the last pair of the current filter, the window loaded at the end."""

from __future__ import annotations

from textual import events
from textual.widgets import DataTable

from benchwright.db import QueueFilter, Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens import QueueScreen
from benchwright.tui.screens.queue import MAX_PRELOAD, PAGE

SIZE = (160, 48)


async def _queue_shown(pilot) -> tuple[QueueScreen, DataTable]:
    """The queue screen the app opened on (no resume) and its table."""
    await pilot.pause()
    queue = pilot.app.screen
    assert isinstance(queue, QueueScreen)
    return queue, queue.query_one(DataTable)


async def test_end_goes_to_the_last_pair_and_home_back_to_the_first(project_factory, tmp_path):
    db, ids = project_factory(tmp_path, n=PAGE + MAX_PRELOAD + 30)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            queue, table = await _queue_shown(pilot)
            assert queue.rows[table.cursor_row].id == ids[0]
            await pilot.press("end")
            await pilot.pause()
            assert queue.rows[table.cursor_row].id == ids[-1]
            assert table.cursor_row == table.row_count - 1
            assert queue.rows[0].ordinal == len(ids) - MAX_PRELOAD  # the window ends at the last pair
            await pilot.press("home")
            await pilot.pause()
            assert queue.rows[table.cursor_row].id == ids[0]


async def test_end_follows_the_filter(project_factory, tmp_path):
    db, ids = project_factory(tmp_path, n=40)
    with Store.open(db) as store:
        for pair_id in ids[-5:]:
            store.record_decision(pair_id, "ann", "accept")
        store.record_decision(ids[10], "ann", "accept")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            queue, table = await _queue_shown(pilot)
            queue.flt = QueueFilter(status="undecided")
            await pilot.press("end")
            await pilot.pause()
            assert queue.rows[table.cursor_row].id == ids[-6]  # the last five are decided
            queue.flt = QueueFilter(status="accepted")
            await pilot.press("end")
            await pilot.pause()
            assert queue.rows[table.cursor_row].id == ids[-1]
            queue.flt = QueueFilter(status="rejected")
            await pilot.press("end")  # nothing matches: nothing moves, nothing fails
            await pilot.pause()


async def test_held_page_down_moves_a_page_at_a_time_across_the_loaded_window(project_factory, tmp_path):
    db, ids = project_factory(tmp_path, n=2 * PAGE + 50)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            queue, table = await _queue_shown(pilot)
            await pilot.press("pagedown")
            await pilot.pause()
            jump = table.cursor_row  # a page: the rows the table shows
            presses = 2 * PAGE // jump
            for _ in range(presses - 1):  # as a held key delivers them: all queued before the first is handled
                app.post_message(events.Key("pagedown", None))
            await pilot.pause()
            await pilot.pause()
            assert table.cursor_row == presses * jump, "page-down stopped short at the end of the rows loaded"
            assert queue.rows[table.cursor_row].id == ids[presses * jump]
            for _ in range(30):
                app.post_message(events.Key("down", None))
            await pilot.pause()
            await pilot.pause()
            assert queue.rows[table.cursor_row].id == ids[presses * jump + 30]
