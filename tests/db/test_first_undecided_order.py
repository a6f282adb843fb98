"""Issue 19 item 6: ``Store.first_undecided`` starts at the annotator's ``review_resume`` ordinal (m028) and still
finds what a walk of the whole queue finds after decisions, undos, imports, reopenings, renumbering, adjudication
and a merge."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from store_helpers import ALICE, BOB, QUEUE, import_pairs, make_pair

import benchwright.db.store as store_module
from benchwright.db import QueueFilter, Store
from benchwright.db.merge import merge_project
from benchwright.db.texts import REOPENED_SQL


def walk_from_start(store: Store, annotator: str) -> str | None:
    """The rule without the resume ordinal: the first pair in queue order with no counting decision, else the
    first skipped (no assignments in these tests)."""
    for condition in (f"(s.decision IS NULL OR {REOPENED_SQL})", "s.decision = 'skip'"):
        row = store.db.execute(
            f"""SELECT p.id FROM qa_pairs p LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                WHERE {condition} ORDER BY p.ordinal LIMIT 1""", [annotator]).fetchone()
        if row:
            return row[0]
    return None


def resume(store: Store, annotator: str) -> int | None:
    row = store.db.execute("SELECT ordinal FROM review_resume WHERE annotator = ?", [annotator]).fetchone()
    return row[0] if row else None


def check(store: Store) -> None:
    for who in (ALICE, BOB):
        assert store.first_undecided(who) == walk_from_start(store, who)


@pytest.fixture(autouse=True)
def every_move(monkeypatch):
    monkeypatch.setattr(store_module, "RESUME_STEP", 1)


def decide(store: Store, pids: list[str], alice: str = "accept", bob: str | None = None) -> None:
    """Record ``alice``'s (and ``bob``'s) decision on each of ``pids``, then check the search against the walk."""
    for pid in pids:
        store.record_decision(pid, ALICE, alice)
        if bob:
            store.record_decision(pid, BOB, bob)
    check(store)


def ids(store: Store) -> list[str]:
    return [r[0] for r in store.db.execute("SELECT id FROM qa_pairs ORDER BY ordinal")]


def test_the_resume_ordinal_follows_decisions_and_skips_the_decided(loaded: Store):
    queue = ids(loaded)
    assert resume(loaded, ALICE) is None
    assert loaded.first_undecided(ALICE) == queue[0] and resume(loaded, ALICE) == loaded.ordinal_of(queue[0])
    for pid in queue[:5]:
        loaded.record_decision(pid, ALICE, "accept")
    assert loaded.first_undecided(ALICE) == queue[5]
    assert resume(loaded, ALICE) == loaded.ordinal_of(queue[5])
    assert resume(loaded, BOB) is None  # per annotator
    check(loaded)


def test_an_undo_sends_work_back_to_the_undone_pair(loaded: Store):
    queue = ids(loaded)
    decide(loaded, queue[:6])
    loaded.record_decision(queue[1], ALICE, "reject")
    assert loaded.undo_last(ALICE) == queue[1]  # back to accept: still decided
    check(loaded)
    for _ in range(5):
        loaded.undo_last(ALICE)
    assert resume(loaded, ALICE) <= loaded.ordinal_of(queue[1])
    check(loaded)
    assert loaded.first_undecided(ALICE) == queue[1]


def test_a_skip_counts_as_seen_and_is_found_when_nothing_else_is_left(loaded: Store):
    queue = ids(loaded)
    loaded.record_decision(queue[0], ALICE, "skip")
    for pid in queue[1:]:
        loaded.record_decision(pid, ALICE, "accept")
    check(loaded)
    assert loaded.first_undecided(ALICE) == queue[0]


def test_a_reopened_pair_before_the_resume_ordinal_is_found_again(loaded: Store):
    queue = ids(loaded)
    decide(loaded, queue[:6], bob="accept")
    loaded.save_text_version(queue[2], "A rewritten question?", "A new answer.", origin="edited", by=BOB)
    check(loaded)
    assert loaded.first_undecided(ALICE) == queue[2] == loaded.first_undecided(BOB)


def test_imports_and_renumbering_below_the_resume_ordinal_lower_it(loaded: Store, tmp_path: Path):
    queue = ids(loaded)
    for pid in queue:
        loaded.record_decision(pid, ALICE, "accept")
    assert loaded.first_undecided(ALICE) is None
    import_pairs(loaded, tmp_path, [make_pair("A new question?", "A new answer.", line=9)], name="more.jsonl")
    check(loaded)
    new = ids(loaded)[-1]
    loaded.record_decision(new, ALICE, "accept")
    check(loaded)
    # a pair moved to the front of the queue (or inserted there) is looked at again
    with loaded.write() as db:
        db.conn.execute("UPDATE qa_pairs SET ordinal = -1 WHERE id = ?", [queue[3]])
        db.conn.execute("DELETE FROM review_state WHERE qa_pair_id = ? AND annotator = ?", [queue[3], ALICE])
    check(loaded)
    assert loaded.first_undecided(ALICE) == queue[3]


def test_adjudication_and_filters_agree_with_the_walk(loaded: Store):
    queue = ids(loaded)
    decide(loaded, queue[:4], bob="reject")
    loaded.adjudicate(queue[0], "carol", "accept", "the answer is right")
    check(loaded)
    flt = QueueFilter(repository="click")
    expected = loaded.db.execute(
        """SELECT p.id FROM qa_pairs p LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
           WHERE s.decision IS NULL AND p.repository = 'click' ORDER BY p.ordinal LIMIT 1""", [ALICE]).fetchone()
    assert loaded.first_undecided(ALICE, flt) == (expected[0] if expected else walk_from_start(loaded, ALICE))


def test_an_undo_merged_from_another_copy_lowers_it(loaded: Store, db_path: Path, tmp_path: Path):
    queue = ids(loaded)
    decide(loaded, queue[:6])
    copy = tmp_path / "copy.db"
    loaded.close()
    shutil.copy(db_path, copy)
    with Store.open(copy) as other:
        other.undo_last(ALICE)
        other.undo_last(ALICE)
        other.undo_last(ALICE)  # queue[3] undone in the copy, later than its accept
    with Store.open(db_path) as store:
        assert store.first_undecided(ALICE) == queue[6]
        merge_project(store, copy)
        check(store)
        assert store.first_undecided(ALICE) == queue[3]


def test_a_read_only_file_searches_from_the_start(loaded: Store, db_path: Path):
    queue = ids(loaded)
    for pid in queue[:5]:
        loaded.record_decision(pid, ALICE, "accept")
    loaded.close()
    db_path.chmod(0o444)
    try:
        with Store.open(db_path) as store:
            assert store.first_undecided(ALICE) == queue[5]
    finally:
        db_path.chmod(0o644)


def test_the_resume_ordinal_is_documented_in_the_store_page():
    text = (Path(__file__).parents[2] / "docs" / "store.md").read_text(encoding="utf-8")
    assert "`review_resume`" in text and "RESUME_STEP" in text
    assert QUEUE  # the eight pairs these tests walk
