"""The duplicates screen (``D`` on the queue and on the review screen; SWE-QA-Pro §2.3) and the queue's dedup
marker and "data" filter, driven with Pilot: members side by side with hostile text shown literally, keep the
highlighted / keep all / merge stored with the annotator, ``]`` / ``[`` over the unresolved groups, a resolution
made meanwhile elsewhere refused (compare-and-set)."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
from test_literal_text import assert_literal, screen_text, settle, toasts
from textual.widgets import DataTable, Select

from benchwright.core.dedup import find_groups
from benchwright.core.embeddings import normalize_rows
from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import QueueFilter, Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens import ReviewScreen
from benchwright.tui.screens.duplicates import DuplicatesScreen
from benchwright.tui.screens.queue import QueueScreen, data_filter_options

SIZE = (160, 48)
HOSTILE = "[bold]x[/bold] [@click=app.quit]quit[/] \x1b[31mred"
ROWS = [  # question, answer, split
    (f"Where are blueprints registered? {HOSTILE}", f"In app.py {HOSTILE}", "train"),
    ("Where do blueprints get registered?", "In app.py, register_blueprint.", "test"),
    ("What is g?", "A namespace.", "train"),
    ("How is g bound to the app context?", "Through the context.", "train"),
    ("Which class owns the session?", "SessionInterface.", None),
]
# 1 and 2 alike (cross-split), 3 and 4 alike, 5 alone
VECTORS = normalize_rows(np.array([[1, 0, 0], [0.99, 0.05, 0], [0, 1, 0], [0.02, 1, 0], [0, 0, 1]], dtype=np.float32))


@pytest.fixture
def dedup_project(tmp_path):
    db = tmp_path / "p.db"
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(json.dumps({"question": q, "answer": a, "split": s}) + "\n" for q, a, s in ROWS),
                   encoding="utf-8")
    with Store.open(db, create=True) as store:
        store.add_repository(Repository(name="demo", version_label="1"), "setup")
        store.apply_import(parse("jsonl", src, repository="demo", mapping=["split=split"]), annotator="setup",
                           file_path=src)
        ids = store.filtered_pair_ids("x")
        pairs = store.dedup_candidates(ids)
        groups = find_groups(ids, VECTORS, threshold=0.95, splits=[p.split for p in pairs], across_splits=True)
        store.save_dedup_run(scope="global", threshold=0.95, across_splits=True, embedder_model="hand", dimensions=3,
                             pair_count=5, groups=groups, multi_query={}, annotator="setup")
    return db, ids


async def _open(app, pilot, key="D"):
    await settle(app, pilot)
    await pilot.press(key)
    await settle(app, pilot)
    assert isinstance(app.screen, DuplicatesScreen), type(app.screen)


@contextlib.asynccontextmanager
async def running(db):
    """``(store, app, pilot)``: the app on the project ``db``, settled on its queue."""
    with Store.open(db, create=True) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await settle(app, pilot)
            yield store, app, pilot


def _resolution(store, pid):
    return store.group_of_pair(pid).resolution


async def test_side_by_side_keep_merge_keep_all_and_group_walk(dedup_project):
    db, ids = dedup_project
    async with running(db) as (store, app, pilot):
        assert isinstance(app.screen, QueueScreen)
        shown = screen_text(app)
        assert shown.count("≈") == 4  # every member of the two unresolved groups; #5 is in none
        await _open(app, pilot)  # the cursor is on #1: its group
        shown = screen_text(app)
        assert "Group 1 of run 1 · cross-split · 2 members" in shown and "2 unresolved groups" in shown
        assert "#1 · split train" in shown and "#2 · split test" in shown and "first in queue" in shown
        assert "Where are blueprints registered?" in shown and "Where do blueprints get registered?" in shown
        assert_literal(app, "duplicates screen", marks=("[bold]x[/bold] [@click=app.quit]quit[/] ␛[31mred",))
        await pilot.press("right")  # highlight #2, keep it
        await pilot.press("k")
        await settle(app, pilot)
        r = _resolution(store, ids[0])
        assert (r.decision, r.kept, r.dropped, r.annotator) == ("keep-one", (ids[1],), (ids[0],), "ann")
        assert "keep-one by ann · kept #2 · dropped #1" in screen_text(app)
        await pilot.press("right_square_bracket")  # the next unresolved group
        await settle(app, pilot)
        assert "Group 2 of run 1 · duplicate" in screen_text(app) and "1 unresolved group in" in screen_text(app)
        await pilot.press("m")  # merge into the highlighted (#3)
        await settle(app, pilot)
        r = _resolution(store, ids[2])
        assert (r.decision, r.kept, r.merged_into) == ("merge", (ids[2],), ids[2])
        await pilot.press("b")  # changed mind: not duplicates
        await settle(app, pilot)
        assert _resolution(store, ids[2]).decision == "keep-both"
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert any("no next unresolved group" in t for t in toasts(app))
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, QueueScreen)
        assert "≈" not in screen_text(app)  # every group resolved
    with Store.open(db) as store:
        assert store.filtered_pair_ids("x", QueueFilter(dedup="dropped")) == [ids[0]]
        assert store.filtered_pair_ids("x", QueueFilter(dedup="not-duplicate")) == ids[2:4]


async def test_previous_group_and_a_resolution_made_meanwhile_is_refused(dedup_project):
    db, ids = dedup_project
    async with running(db) as (store, app, pilot):
        await app.push_screen(DuplicatesScreen(store, "ann", pair_id=ids[3]))
        await settle(app, pilot)
        assert "Group 2" in screen_text(app)
        assert app.screen.highlighted == 1  # opened on #4: it is highlighted
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert "Group 1" in screen_text(app)
        # another session resolves group 1 meanwhile: this screen's keep is refused, nothing written
        group = store.group_of_pair(ids[0])
        store.resolve_duplicate_group(group.id, "keep-both", None, annotator="bob")
        await pilot.press("k")
        await settle(app, pilot)
        assert any("bob resolved this group meanwhile" in t for t in toasts(app))
        assert _resolution(store, ids[0]).annotator == "bob"
        assert "keep-both by bob" in screen_text(app)  # reloaded: what is stored now
        await pilot.press("k")  # now on the current resolution: accepted
        await settle(app, pilot)
        assert _resolution(store, ids[0]).decision == "keep-one"


async def test_review_screen_opens_the_pairs_group_and_says_when_there_is_none(dedup_project):
    db, ids = dedup_project
    async with running(db) as (store, app, pilot):
        await app.push_screen(ReviewScreen(store, "ann", ids[4]))
        await settle(app, pilot)
        assert "possible duplicate" not in screen_text(app)
        await pilot.press("D")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert any("in no duplicate group" in t for t in toasts(app))
        await app.push_screen(ReviewScreen(store, "ann", ids[1]))
        await settle(app, pilot)
        assert ("possible duplicate of #1 (cross-split, similarity up to 0.999, unresolved): D compares them"
                in screen_text(app))
        await _open(app, pilot)
        assert "Group 1" in screen_text(app) and app.screen.highlighted == 1
        await pilot.press("k")  # resolved: the review screen's banner goes
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and "possible duplicate" not in screen_text(app)


async def test_no_dedup_run_yet(tmp_path):
    async with running(tmp_path / "p.db") as (_, app, pilot):
        await _open(app, pilot)
        assert "No dedup run yet" in screen_text(app)
        await pilot.press("k")
        await settle(app, pilot)
        assert any("no duplicate group to resolve" in t for t in toasts(app))
        await pilot.press("question_mark")
        await settle(app, pilot)
        assert "Keep highlighted" in screen_text(app) and "Next unresolved" in screen_text(app)


async def test_the_queue_data_filter(dedup_project):
    db, ids = dedup_project
    async with running(db) as (_store, app, pilot):
        select = app.screen.query_one("#f-data", Select)
        values = [v for _, v in select._options if v is not Select.NULL]
        assert values[:2] == ["dedup=any", "dedup=unresolved"]
        assert "difficulty=too-easy" in values and "item=saturated" in values and "leakage=leaked" in values
        assert "split=test" in values and "split=train" in values
        select.value = "dedup=unresolved"
        await settle(app, pilot)
        table = app.screen.query_one(DataTable)
        assert [str(k.value) for k in table.rows] == [ids[1], ids[3]]
        assert app.screen.flt.dedup == "unresolved"
        select.value = "split=train"  # one data filter at a time: dedup is cleared
        await settle(app, pilot)
        assert (app.screen.flt.dedup, app.screen.flt.split) == (None, "train")
        assert [str(k.value) for k in table.rows] == [ids[0], ids[2], ids[3]]
        select.clear()
        await settle(app, pilot)
        assert len(table.rows) == 5 and app.screen.flt.split is None


def test_data_filter_options_come_from_the_vocabularies():
    options = data_filter_options(["bench"], ["test"])
    assert ("dedup: unresolved", "dedup=unresolved") in options
    assert ("selection: bench", "selection=bench") in options and ("split: test", "split=test") in options
    assert ("difficulty: too-easy", "difficulty=too-easy") in options


async def test_a_large_group_shows_its_first_members_and_says_so(tmp_path):
    from benchwright.tui.screens.duplicates import MEMBER_MIN_WIDTH, SHOWN_MEMBERS

    db = tmp_path / "p.db"
    src = tmp_path / "many.jsonl"
    src.write_text("".join(json.dumps({"question": f"Where is thing {i} registered?", "answer": "a"}) + "\n"
                           for i in range(SHOWN_MEMBERS + 3)), encoding="utf-8")
    with Store.open(db, create=True) as store:
        store.add_repository(Repository(name="demo", version_label="1"), "setup")
        store.apply_import(parse("jsonl", src, repository="demo"), annotator="setup", file_path=src)
        ids = store.filtered_pair_ids("x")
        groups = find_groups(ids, normalize_rows(np.ones((len(ids), 3), dtype=np.float32)), threshold=0.9)
        store.save_dedup_run(scope="global", threshold=0.9, across_splits=False, embedder_model="hand", dimensions=3,
                             pair_count=len(ids), groups=groups, multi_query={}, annotator="setup")
    async with running(db) as (store, app, pilot):
        await _open(app, pilot)
        columns = list(app.screen.query(".dup-member"))
        assert len(columns) == SHOWN_MEMBERS
        # more than fit side by side: each column at the narrowest width, the row scrolls sideways (a 1fr column
        # would take the whole screen, one member at a time)
        assert [c.outer_size.width for c in columns] == [MEMBER_MIN_WIDTH] * SHOWN_MEMBERS
        assert f"{SHOWN_MEMBERS + 3} members" in screen_text(app)
        assert f"the first {SHOWN_MEMBERS} shown" in screen_text(app)
        await pilot.press("left")  # wraps to the last member shown
        await settle(app, pilot)
        assert app.screen.query_one("#dup-members").scroll_x > 0  # the highlighted last column scrolled into view
        await pilot.press("k")
        await settle(app, pilot)
        assert _resolution(store, ids[0]).kept == (ids[SHOWN_MEMBERS - 1],)
