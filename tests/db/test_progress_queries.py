"""The start-up queries rewritten for 100,000 pairs (issue 19 item 6) give what the straightforward SQL gave.

``Store.progress`` counts from indexes and corrects for reopened pairs instead of joining every decision to its
pair; ``Store.pair_splits`` seeks split by split. Each is compared with the SQL it replaced on projects with
several annotators, decisions superseded by later ones (and by older rows merged in late), undos, skips,
pairs reopened before and after their decisions, and splits (an empty split name too)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from store_helpers import FLASK, import_pairs, make_pair

from benchwright.db import Store
from benchwright.db.store import Progress, QueueFilter
from benchwright.db.texts import REOPENED_SQL

ANNOTATORS = ("alice", "bob", "carol")
N = 120


def _old_progress(store: Store, annotator: str) -> Progress:
    """The SQL of ``Store.progress`` before issue 19 item 6."""
    conn = store.db.conn
    counted = (f"FROM review_state s JOIN qa_pairs p ON p.id = s.qa_pair_id "
               f"WHERE s.decision IN ('accept', 'reject', 'revise') AND NOT coalesce({REOPENED_SQL}, 0)")
    decided = conn.execute(f"SELECT count(DISTINCT s.qa_pair_id) {counted}").fetchone()[0]
    mine = conn.execute(f"SELECT count(*) {counted} AND s.annotator = ?", [annotator]).fetchone()[0]
    return Progress(conn.execute("SELECT count(*) FROM qa_pairs").fetchone()[0], decided, mine)


def _old_splits(store: Store) -> list[str]:
    return [r[0] for r in store.db.conn.execute(
        "SELECT DISTINCT split FROM qa_pairs WHERE split IS NOT NULL ORDER BY split")]


def _open(folder: Path) -> Store:
    store = Store.open(folder / "p.db")
    store.add_repository(FLASK, "alice")
    return store


def _stamp(minute: int) -> str:
    return f"2026-11-29T{10 + minute // 60:02d}:{minute % 60:02d}:00.000000+00:00"


def _varied_project(store: Store, folder: Path, seed: int) -> list[str]:
    """``N`` pairs; random decisions, undos and skips of three annotators at random times, some superseded; a
    random quarter of the pairs reopened at a random time; random splits. Returns the pair ids in order."""
    rnd = random.Random(seed)
    import_pairs(store, folder, [make_pair(f"Question {seed}-{i}?", f"Answer {i}.", line=i + 1) for i in range(N)])
    with store.write() as db:
        ids = [r[0] for r in db.conn.execute("SELECT id FROM qa_pairs ORDER BY ordinal")]
        rows = []
        for pid in ids:
            for annotator in ANNOTATORS:
                for _ in range(rnd.choice((0, 0, 1, 1, 2, 3))):
                    decision = rnd.choice(("accept", "accept", "reject", "revise", "skip", None))
                    rows.append((pid, annotator, decision, _stamp(rnd.randrange(300))))
        rnd.shuffle(rows)  # merged copies: an older decision may arrive after a newer one
        db.conn.executemany(
            "INSERT INTO review_decisions (qa_pair_id, annotator, decision, created_at) VALUES (?, ?, ?, ?)", rows)
        for pid in rnd.sample(ids, N // 4):
            db.conn.execute("UPDATE qa_pairs SET reopened_at = ?, reopened_reason = 'new text' WHERE id = ?",
                            [_stamp(rnd.randrange(300)), pid])
        for pid in rnd.sample(ids, N // 3):
            db.conn.execute("UPDATE qa_pairs SET split = ? WHERE id = ?", [rnd.choice(("test", "train", "", "dev")), pid])
    return ids


@pytest.mark.parametrize("seed", range(6))
def test_progress_and_splits_equal_the_straightforward_sql(tmp_path: Path, seed: int):
    with _open(tmp_path) as store:
        _varied_project(store, tmp_path, seed)
        reopened_counted = store.db.conn.execute(
            f"SELECT count(*) FROM review_state s JOIN qa_pairs p ON p.id = s.qa_pair_id WHERE {REOPENED_SQL}"
        ).fetchone()[0]
        assert reopened_counted > 0  # the corrections are exercised
        for annotator in (*ANNOTATORS, "nobody"):
            assert store.progress(annotator) == _old_progress(store, annotator)
        assert store.pair_splits() == _old_splits(store)


def test_progress_counts_a_reopened_pair_again_once_decided_after(tmp_path: Path):
    with _open(tmp_path) as store:
        pid = _varied_project(store, tmp_path, 99)[0]
        with store.write() as db:
            db.conn.execute("UPDATE qa_pairs SET reopened_at = ? WHERE id = ?", [_stamp(400), pid])
        before = store.progress("alice")
        assert before == _old_progress(store, "alice")
        with store.write() as db:
            db.conn.execute(
                "INSERT INTO review_decisions (qa_pair_id, annotator, decision, created_at) VALUES (?, ?, ?, ?)",
                [pid, "alice", "accept", _stamp(401)])
        after = store.progress("alice")
        assert after == _old_progress(store, "alice")
        assert (after.decided, after.mine) == (before.decided + 1, before.mine + 1)


def test_splits_none_then_every_pair_one(tmp_path: Path):
    with _open(tmp_path) as store:
        import_pairs(store, tmp_path, [make_pair(f"Q{i}?", line=i + 1) for i in range(5)])
        assert store.pair_splits() == [] == _old_splits(store)
        with store.write() as db:
            db.conn.execute("UPDATE qa_pairs SET split = CASE ordinal % 2 WHEN 0 THEN 'b' ELSE '' END")
        assert store.pair_splits() == ["", "b"] == _old_splits(store)  # an empty split name is a split
        assert store.count_filtered("alice", QueueFilter(split="b")) == 2
