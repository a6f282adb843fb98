"""Dedup in the store (db/dedup.py): a run saved whole, groups with their resolutions by signature (carried over
to a rerun with the same members, not to one with other members), compare-and-set, the queue filters dedup=...
through QueueFilter, and nothing ever deleted."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from store_helpers import ALICE, BOB, FLASK, import_pairs, make_pair

from benchwright.core.dedup import DedupError, StaleResolutionError, find_groups
from benchwright.core.embeddings import normalize_rows
from benchwright.core.vocabulary import DEDUP_FILTERS
from benchwright.db import QueueFilter, Store

QUESTIONS = ["Where are blueprints registered?", "Where do blueprints get registered?", "What is g?",
             "How is g bound?", "Which class owns the session?"]
SPLITS = ["train", "test", "train", "train", None]


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "p.db") as s:
        pairs = [make_pair(q, line=i + 1).model_copy(update={"split": sp})
                 for i, (q, sp) in enumerate(zip(QUESTIONS, SPLITS, strict=True))]
        s.add_repository(FLASK, ALICE)
        import_pairs(s, tmp_path, pairs)
        yield s


def _vectors(*rows):
    return normalize_rows(np.array(rows, dtype=np.float32))


# 0 and 1 alike (cross-split: train vs test), 2 and 3 alike (both train), 4 alone
LIKE = _vectors([1, 0, 0], [0.99, 0.05, 0], [0, 1, 0], [0.02, 1, 0], [0, 0, 1])


def _run(store, vectors=LIKE, *, ids=None, multi=None):
    ids = ids or store.filtered_pair_ids(ALICE)
    pairs = store.dedup_candidates(ids)
    groups = find_groups([p.id for p in pairs], vectors, threshold=0.95, splits=[p.split for p in pairs],
                         across_splits=True)
    return store.save_dedup_run(scope="global", threshold=0.95, across_splits=True, embedder_model="hand",
                                dimensions=3, pair_count=len(pairs), groups=groups, multi_query=multi or {},
                                annotator=ALICE), ids


def _ids(store, value):
    return store.filtered_pair_ids(ALICE, QueueFilter(dedup=value))


def test_a_run_is_saved_whole_and_read_back(store):
    run_id, ids = _run(store)
    run = store.latest_dedup_run()
    assert (run.id, run.group_count, run.cross_split_group_count, run.pair_count) == (run_id, 2, 1, 5)
    groups = store.duplicate_groups()
    assert [g.member_ids for g in groups] == [(ids[0], ids[1]), (ids[2], ids[3])]
    assert [g.kind for g in groups] == ["cross-split", "duplicate"]
    first = groups[0]
    assert first.representative == ids[0] and first.resolution is None
    assert [m.split for m in first.members] == ["train", "test"]
    assert first.members[0].question == QUESTIONS[0] and first.members[0].answer == "An answer."
    assert first.edges[0][:2] == (ids[0], ids[1]) and first.edges[0][2] > 0.95
    assert store.group_of_pair(ids[3]).id == groups[1].id
    assert store.group_of_pair(ids[4]) is None
    assert [g.id for g in store.duplicate_groups(cross_split=True)] == [first.id]


def test_filters_follow_the_groups_and_resolutions(store):
    _run(store, multi=None)
    ids = store.filtered_pair_ids(ALICE)
    assert _ids(store, "any") == ids[:4]
    assert _ids(store, "unresolved") == [ids[1], ids[3]]  # the non-representatives
    assert _ids(store, "representative") == [ids[0], ids[2]]
    assert _ids(store, "none") == [ids[4]]
    assert _ids(store, "cross-split") == ids[:2]
    g1, g2 = store.duplicate_groups()
    store.resolve_duplicate_group(g1.id, "keep-one", ids[1], annotator=ALICE, note="the test one is clearer")
    store.resolve_duplicate_group(g2.id, "keep-both", None, annotator=BOB)
    assert _ids(store, "unresolved") == [] and _ids(store, "representative") == []
    assert _ids(store, "kept") == [ids[1]]
    assert _ids(store, "dropped") == [ids[0]]
    assert _ids(store, "not-duplicate") == [ids[2], ids[3]]
    assert store.dedup_status(ids) == {ids[0]: ("dropped", "cross-split"), ids[1]: ("kept", "cross-split"),
                                       ids[2]: ("not-duplicate",), ids[3]: ("not-duplicate",)}
    r = store.duplicate_groups()[0].resolution
    assert (r.decision, r.kept, r.dropped, r.annotator, r.note) == ("keep-one", (ids[1],), (ids[0],), ALICE,
                                                                    "the test one is clearer")
    assert store.duplicate_groups(unresolved=True) == []


def test_every_filter_value_runs(store):
    _run(store)
    for value in DEDUP_FILTERS:
        store.count_filtered(ALICE, QueueFilter(dedup=value))


def test_multi_query_flags(store):
    ids = store.filtered_pair_ids(ALICE)
    _run(store, multi={ids[4]: ["Which class?", "How signed?"]})
    assert _ids(store, "multi-query") == [ids[4]]
    assert store.multi_query_parts_of(ids[4]) == ["Which class?", "How signed?"]
    assert store.multi_query_parts_of(ids[0]) is None
    _run(store)  # the latest run decides
    assert _ids(store, "multi-query") == []


def test_a_resolution_carries_over_to_a_rerun_with_the_same_members_only(store):
    _run(store)
    ids = store.filtered_pair_ids(ALICE)
    g1, _ = store.duplicate_groups()
    store.resolve_duplicate_group(g1.id, "merge", ids[0], annotator=ALICE)
    _run(store)  # same vectors: same groups, same signatures
    again = store.duplicate_groups()
    assert again[0].id != g1.id and again[0].resolution.decision == "merge"
    assert again[0].resolution.merged_into == ids[0]
    assert _ids(store, "dropped") == [ids[1]]
    # pair 4 now joins the first group: other members, another signature, unresolved again
    _run(store, _vectors([1, 0, 0], [0.99, 0.05, 0], [0, 1, 0], [0.02, 1, 0], [0.98, 0, 0.05]))
    third = store.duplicate_groups()
    assert third[0].member_ids == (ids[0], ids[1], ids[4]) and third[0].resolution is None
    assert _ids(store, "dropped") == []
    assert ids[1] in _ids(store, "unresolved")


def test_compare_and_set_refuses_a_resolution_made_on_an_old_view(store):
    _run(store)
    ids = store.filtered_pair_ids(ALICE)
    g1, _ = store.duplicate_groups()
    first = store.resolve_duplicate_group(g1.id, "keep-one", ids[0], annotator=BOB, expected=None)
    with pytest.raises(StaleResolutionError, match="bob resolved this group meanwhile"):
        store.resolve_duplicate_group(g1.id, "keep-both", None, annotator=ALICE, expected=None)
    store.resolve_duplicate_group(g1.id, "keep-both", None, annotator=ALICE, expected=first)
    assert store.duplicate_group(g1.id).resolution.decision == "keep-both"


def test_invalid_resolutions_write_nothing(store):
    _run(store)
    ids = store.filtered_pair_ids(ALICE)
    g1, _ = store.duplicate_groups()
    with pytest.raises(DedupError, match="not a member"):
        store.resolve_duplicate_group(g1.id, "keep-one", ids[4], annotator=ALICE)
    with pytest.raises(DedupError):
        store.resolve_duplicate_group(g1.id, "drop-all", None, annotator=ALICE)
    with pytest.raises(Exception, match="no duplicate group 999"):
        store.resolve_duplicate_group(999, "keep-both", None, annotator=ALICE)
    assert store.duplicate_group(g1.id).resolution is None


def test_nothing_is_ever_deleted(store):
    _run(store)
    g1, _ = store.duplicate_groups()
    store.resolve_duplicate_group(g1.id, "keep-both", None, annotator=ALICE)
    for table in ("dedup_runs", "duplicate_groups", "duplicate_members", "duplicate_resolutions"):
        with pytest.raises(sqlite3.DatabaseError):
            store.db.conn.execute(f"DELETE FROM {table}")
    assert store.count_pairs() == 5
