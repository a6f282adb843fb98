"""Selections in the store (db/selections.py): the candidates are the survivors of dedup and calibration (a
dropped duplicate, an unresolved non-representative duplicate and a too-easy pair are not drawn), versions of a
name, members, ``--where selection=``, and the tables stay append-only."""

from __future__ import annotations

import json
import sqlite3

import pytest
from store_helpers import ALICE, FLASK, import_pairs, make_pair

from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.core.sampling import balanced_sample
from benchwright.db import QueueFilter

NOW = "2026-12-02T06:00:00+00:00"


@pytest.fixture
def clustered(store, tmp_path):
    store.add_repository(FLASK, ALICE)
    pairs = [make_pair(f"Question {i}?", f"Answer {i}.", qa_type=("What", "Why", "How")[i % 3], line=i + 1)
             .model_copy(update={"cluster_id": f"{i % 2}.0", "cluster_name": f"topic {i % 2}"})
             for i in range(12)]
    pairs.append(make_pair("No cluster?", "None.", qa_type="What", line=13))
    import_pairs(store, tmp_path, pairs)
    return store, [p.id for p in pairs]


def plant_duplicates_and_easy(store, ids):
    """ids[1] an unresolved duplicate of ids[0]; ids[3] dropped by a keep-one resolution; ids[4] too easy."""
    with store.write() as db:
        c = db.conn
        run = c.execute("INSERT INTO dedup_runs (scope, threshold, embedder_model, dimensions, created_at, "
                        "created_by) VALUES ('global', 0.9, 'hashing', 64, ?, 'x')", [NOW]).lastrowid
        for sig, members in (("s1", ids[0:2]), ("s2", ids[2:4])):
            g = c.execute("INSERT INTO duplicate_groups (run_id, kind, signature, representative, max_score) "
                          "VALUES (?, 'duplicate', ?, ?, 0.95)", [run, sig, members[0]]).lastrowid
            for m in members:
                c.execute("INSERT INTO duplicate_members (group_id, qa_pair_id, max_score) VALUES (?, ?, 0.95)",
                          [g, m])
        c.execute("INSERT INTO duplicate_resolutions (signature, group_id, decision, kept_json, dropped_json, "
                  "annotator, created_at, uid) VALUES ('s2', ?, 'keep-one', ?, ?, 'ada', ?, 'u1')",
                  [g, json.dumps([ids[2]]), json.dumps([ids[3]]), NOW])
        cal = c.execute("INSERT INTO calibration_runs (models_json, judge, condition, rule, threshold, created_at, "
                        "created_by) VALUES ('[]', 'swe-qa-pro', 'direct', 'mean-z', 0.5, ?, 'x')", [NOW]).lastrowid
        for pid, decision in ((ids[4], "too-easy"), (ids[5], "kept")):
            c.execute("INSERT INTO calibration_values (run_id, qa_pair_id, scores_json, decision) VALUES "
                      "(?, ?, '{}', ?)", [cal, pid, decision])


def test_candidates_are_the_survivors_of_dedup_and_calibration(clustered):
    store, ids = clustered
    plant_duplicates_and_easy(store, ids)
    cands, names, counts = store.sample_candidates(ALICE)
    drawn_from = {c.pair_id for c in cands}
    assert ids[1] not in drawn_from and ids[3] not in drawn_from and ids[4] not in drawn_from
    assert {ids[0], ids[2], ids[5]} <= drawn_from and len(drawn_from) == 10
    assert counts == {"matching": 13, "duplicates": 2, "too_easy": 1}
    assert names == {"0.0": "topic 0", "1.0": "topic 1"}
    # the sample never draws a left-out pair, even when it takes everything
    sample = balanced_sample(cands, per_cluster=(1, 99), seed=0)
    assert {c.pair_id for c in sample.members} == drawn_from - {ids[12]} and sample.unclustered == 1
    # --all: every pair
    everything, _, counts = store.sample_candidates(ALICE, survivors=False)
    assert len(everything) == 13 and counts["duplicates"] == counts["too_easy"] == 0
    # --where narrows further
    whys, _, _ = store.sample_candidates(ALICE, QueueFilter(qa_type="Why"))
    assert {c.qa_type for c in whys} == {"Why"} and ids[4] not in {c.pair_id for c in whys}


def test_a_name_used_again_is_a_new_version_and_the_latest_counts(clustered):
    store, _ids = clustered
    cands, _, _ = store.sample_candidates(ALICE)
    first = store.save_selection("bench", balanced_sample(cands, per_cluster=(2, 2), seed=1),
                                 params={"per_cluster": [2, 2]}, seed=1, by="ada")
    second = store.save_selection("bench", balanced_sample(cands, per_cluster=(3, 3), seed=2),
                                  params={"per_cluster": [3, 3]}, seed=2, by="bob")
    assert (first.version, first.size, second.version, second.size) == (1, 4, 2, 6)
    assert store.selection("bench") == second and store.selection("bench", 1) == first
    assert [s.label for s in store.selections()] == ["bench v2"]
    members = store.selection_members(second.id)
    assert [m["position"] for m in members] == [1, 2, 3, 4, 5, 6]
    assert all(m["cluster_id"] in ("0.0", "1.0") and m["question"].startswith("Question") for m in members)
    latest = {m["qa_pair_id"] for m in members}
    assert set(store.filtered_pair_ids(ALICE, QueueFilter(selection="bench"))) == latest
    assert store.facets()["selection"] == ["bench"]
    assert sum(second.coverage[c][t] for c in second.coverage for t in second.coverage[c]) == 6
    with pytest.raises(NotFoundError, match="versions 1 to 2"):
        store.selection("bench", 3)
    with pytest.raises(NotFoundError, match="selections: bench"):
        store.selection("other")
    with pytest.raises(BenchwrightError, match="selection name"):
        store.save_selection("a b", balanced_sample(cands, seed=0), params={}, seed=0, by="ada")
    with store.write() as db, pytest.raises(sqlite3.DatabaseError):  # append-only: the old version stays
        db.conn.execute("DELETE FROM selection_members WHERE selection_id = ?", [first.id])
    assert len(store.selection_members(first.id)) == 4


def test_an_imported_cluster_and_a_taxonomy_leaf_numbered_alike_are_two_clusters(clustered):
    """SWE-QA-Pro's imported cluster ids (``0.0``...) look like taxonomy leaves': after ``taxonomy assign`` kept
    the imported clusters, the leaf 0.0 and the imported 0.0 must not be drawn from as one cluster."""
    store, ids = clustered
    with store.write() as db:  # the unclustered pair placed on taxonomy leaf 0.0
        db.conn.execute("INSERT INTO cluster_assignments (qa_pair_id, cluster_id, cluster_name, origin, created_at, "
                        "created_by) VALUES (?, '0.0', 'routing', 'taxonomy', ?, 'x')", [ids[12], NOW])
    cands, names, _ = store.sample_candidates(ALICE)
    clusters = {c.pair_id: c.cluster for c in cands}
    assert clusters[ids[12]] == "0.0" and clusters[ids[0]] == "0.0 (imported)" and clusters[ids[1]] == "1.0"
    assert names["0.0"] == "routing" and names["0.0 (imported)"] == "topic 0"
