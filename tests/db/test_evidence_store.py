"""The store side of ``repos move`` (issue 16 item 7): the re-pin and its evidence checks in one transaction, the
latest check per pair, the evidence queue filter, and a stale pair back in review."""

from __future__ import annotations

import pytest
from store_helpers import ALICE, import_pairs, make_pair

from benchwright.core.errors import BenchwrightError, RepositoryError
from benchwright.core.evidence_drift import DELETED, MOVED, UNCHANGED, CitationChange
from benchwright.core.models import Repository
from benchwright.db import QueueFilter

OLD = Repository(name="demo", commit="a" * 40, local_path="/old", commit_verified=True)
NEW = OLD.model_copy(update={"commit": "b" * 40, "local_path": "/new"})


@pytest.fixture
def demo(store, tmp_path):
    store.add_repository(OLD, ALICE)
    pairs = [make_pair(f"Q{i}?", f"a.py:{i}", repository="demo", line=i) for i in range(1, 4)]
    import_pairs(store, tmp_path, pairs)
    return store, [p.id for p in pairs]


def _checks(ids):
    return [(ids[0], "stale", [CitationChange("a.py:1", MOVED, "a.py", (1, 1), (5, 5))]),
            (ids[1], "ok", [CitationChange("a.py:2", UNCHANGED, "a.py", (2, 2))]),
            (ids[2], "stale", [CitationChange("a.py:3", DELETED, "a.py", (3, 3))])]


def test_one_transaction_writes_pin_repository_checks_and_reopens_stale_pairs(demo):
    store, ids = demo
    store.record_decision(ids[0], ALICE, "accept")
    store.record_decision(ids[1], ALICE, "accept")
    at = store.record_repository_move(OLD, NEW, _checks(ids), "ada")
    repo = store.get_repository("demo")
    assert (repo.commit, repo.local_path) == ("b" * 40, "/new")
    assert [p.commit for p in store.repository_pins("demo")] == ["a" * 40, "b" * 40]
    check = store.evidence_check(ids[0])
    assert check.status == "stale" and check.created_at == at and check.created_by == "ada"
    assert check.stale_changes == (CitationChange("a.py:1", MOVED, "a.py", (1, 1), (5, 5)),)
    assert store.evidence_check(ids[1]).stale_changes == ()
    assert store.filtered_pair_ids(ALICE, QueueFilter(evidence="stale")) == [ids[0], ids[2]]
    # the accepted stale pair is back in review; the accepted ok pair keeps its decision
    assert store.filtered_pair_ids(ALICE, QueueFilter(status="undecided")) == [ids[0], ids[2]]
    assert store.filtered_pair_ids(ALICE, QueueFilter(status="accepted")) == [ids[1]]


def test_a_second_move_keeps_the_history_and_the_latest_check_is_current(demo):
    store, ids = demo
    store.record_repository_move(OLD, NEW, _checks(ids), "ada")
    third = NEW.model_copy(update={"commit": "c" * 40})
    store.record_repository_move(NEW, third, [(pid, "ok", []) for pid in ids], "bob")
    assert [c.status for c in store.evidence_checks(ids[0])] == ["stale", "ok"]
    assert store.evidence_check(ids[0]).from_pin == "demo@bbbbbbbbbbbb"
    assert store.filtered_pair_ids(ALICE, QueueFilter(evidence="stale")) == []
    assert len(store.repository_pins("demo")) == 3


def test_a_move_made_from_a_stale_reading_writes_nothing(demo):
    store, ids = demo
    store.record_repository_move(OLD, NEW, _checks(ids), "ada")
    with pytest.raises(RepositoryError, match="was re-pinned to demo@bbbbbbbbbbbb"):
        store.record_repository_move(OLD, NEW.model_copy(update={"commit": "c" * 40}), _checks(ids), "bob")
    assert store.get_repository("demo").commit == "b" * 40
    assert len(store.evidence_checks(ids[0])) == 1 and len(store.repository_pins("demo")) == 2


def test_foreign_pairs_and_unknown_statuses_are_refused_before_anything_is_written(demo, tmp_path):
    store, ids = demo
    store.add_repository(Repository(name="other", version_label="1"), ALICE)
    foreign = make_pair("Other?", "x.py", repository="other", line=9)
    import_pairs(store, tmp_path, [foreign], name="other.jsonl")
    with pytest.raises(RepositoryError, match="is not a pair of repository 'demo'"):
        store.record_repository_move(OLD, NEW, [(foreign.id, "ok", [])], "ada")
    with pytest.raises(ValueError, match="evidence status 'bad'"):
        store.record_repository_move(OLD, NEW, [(ids[0], "bad", [])], "ada")
    assert store.get_repository("demo").commit == "a" * 40 and store.evidence_check(ids[0]) is None
    assert store.filtered_pair_ids(ALICE, QueueFilter(evidence="unchecked")) == [*ids, foreign.id]
    with pytest.raises(BenchwrightError, match="unknown evidence filter 'nope'"):
        QueueFilter(evidence="nope").sql(ALICE)
