"""db/taxonomy.py: taxonomy versions saved whole and read back, compare-and-set on edits, append-only tables,
member texts, label history, and cluster assignment that respects imported and human-set clusters."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from store_helpers import ALICE, FLASK, import_pairs, make_pair

from benchwright.core import taxonomy as tx
from benchwright.core.taxonomy import TaxonomyError
from benchwright.db.taxonomy import ClusterAssignment


def _pairs(n=12, imported_cluster_at=(0,)):
    out = []
    for i in range(n):
        p = make_pair(f"Question {i} about topic {i % 3}?", line=i + 1)
        if i in imported_cluster_at:
            p = p.model_copy(update={"cluster_id": "up.1", "cluster_name": "Upstream"})
        out.append(p)
    return out


@pytest.fixture
def project(store, tmp_path):
    store.add_repository(FLASK, ALICE)
    pairs = _pairs()
    import_pairs(store, tmp_path, pairs)
    rng = np.random.default_rng(0)
    centers = np.eye(8, dtype=np.float32)[:3] * 5
    vectors = np.vstack([centers[i % 3] + rng.normal(0, 0.1, 8) for i in range(len(pairs))]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    tax = tx.build(vectors, [p.id for p in pairs], 3, 6, 0)
    vid = store.save_taxonomy(tax, operation="build", source="pairs", embedder_model="hashing", dimensions=8,
                              by=ALICE, params={**tax.params, "source": "pairs"})
    return store, pairs, vectors, tax, vid


def test_a_version_reads_back_whole(project):
    store, _, _, tax, vid = project
    tv = store.taxonomy_version()
    assert (tv.id, tv.lineage, tv.parent_id, tv.operation, tv.source, tv.embedder_model, tv.dimensions) == (
        vid, vid, None, "build", "pairs", "hashing", 8)
    assert tv.params["k2_split"] == tax.params["k2_split"]
    assert [(n.node_id, n.size, n.parent) for n in tv.taxonomy.nodes] == [(n.node_id, n.size, n.parent)
                                                                          for n in tax.nodes]
    for a, b in zip(tv.taxonomy.nodes, tax.nodes, strict=True):
        assert np.array_equal(a.centroid, b.centroid)
    assert tv.taxonomy.members == tax.members
    assert store.taxonomy_version(999) is None


def test_edits_are_new_versions_with_compare_and_set(project):
    store, _, _, tax, vid = project
    renamed = tx.rename(tax, "1.1", "Routing", "URL rules", by="bob", at="2026-01-01T00:00:00Z")
    v2 = store.save_taxonomy(renamed, operation="rename", source="pairs", embedder_model="hashing", dimensions=8,
                             by="bob", parent_id=vid, operation_args={"node": "1.1"})
    assert store.taxonomy_version(v2).lineage == vid and store.taxonomy_version(v2).parent_id == vid
    node = store.taxonomy_version(v2).taxonomy.node("1.1")
    assert (node.label, node.label_origin, node.label_by) == ("Routing", "annotator", "bob")
    assert store.taxonomy_version(vid).taxonomy.node("1.1").label is None
    with pytest.raises(TaxonomyError, match=f"version {v2} was saved meanwhile"):
        store.save_taxonomy(renamed, operation="rename", source="pairs", embedder_model="hashing", dimensions=8,
                            by="carol", parent_id=vid)
    assert [v.id for v in store.taxonomy_versions()] == [vid, v2]
    hist = store.taxonomy_label_history(v2, "1.1")
    assert [(c.version, c.label) for c in hist] == [(vid, None), (v2, "Routing")]


def test_taxonomy_tables_are_append_only(project):
    store = project[0]
    for sql in ("UPDATE taxonomies SET created_by = 'x'", "DELETE FROM taxonomy_nodes",
                "UPDATE taxonomy_members SET node_id = '9.9'"):
        with pytest.raises(sqlite3.DatabaseError), store.write() as db:
            db.conn.execute(sql)


def test_node_members_with_texts_nearest_first(project):
    store, pairs, _, tax, vid = project
    leaf = tax.leaves[0]
    rows = store.taxonomy_node_members(vid, leaf.node_id)
    assert [m.item_id for m, _ in rows] == [m.item_id for m in sorted(tax.members_of(leaf.node_id),
                                                                      key=lambda m: (m.distance, m.item_id))]
    questions = {p.id: p.question for p in pairs}
    assert all(text == questions[m.item_id] for m, text in rows)
    top = store.taxonomy_node_members(vid, leaf.parent, limit=2)
    assert len(top) == 2 and all(m.node_id.startswith(leaf.parent + ".") for m, _ in top)


def _assignments(store, pairs, vid, leaf="1.1", name="Routing"):
    return [ClusterAssignment(p.id, vid, leaf, leaf, name, 0.1) for p in pairs]


def test_assign_keeps_imported_and_human_clusters_unless_forced(project):
    store, pairs, _, _, vid = project
    human = pairs[1]
    store.assign_clusters([ClusterAssignment(human.id, vid, "2.1", "2.1", "Mine")], origin="annotator", by="ada")
    c = store.assign_clusters(_assignments(store, pairs, vid), origin="taxonomy", by=ALICE)
    assert (c.assigned, c.kept_imported, c.kept_annotator, c.unchanged) == (len(pairs) - 2, 1, 1, 0)
    p0, p1, p2 = (store.get_pair(p.id) for p in pairs[:3])
    assert (p0.cluster_id, p0.cluster_name) == ("up.1", "Upstream")
    assert (p1.cluster_id, p1.cluster_name) == ("2.1", "Mine")
    assert (p2.cluster_id, p2.cluster_name) == ("1.1", "Routing")
    assert store._one("SELECT cluster_origin FROM qa_pairs WHERE id = ?", [p2.id])[0] == "taxonomy"
    again = store.assign_clusters(_assignments(store, pairs, vid), origin="taxonomy", by=ALICE)
    assert (again.assigned, again.unchanged) == (0, len(pairs) - 2)
    forced = store.assign_clusters(_assignments(store, pairs, vid), origin="taxonomy", by=ALICE, force=True)
    assert (forced.assigned, forced.unchanged, forced.kept_imported, forced.kept_annotator) == (2, len(pairs) - 2,
                                                                                               0, 0)
    hist = store.cluster_history(pairs[0].id)
    assert [(h["cluster_id"], h["origin"], h["previous_cluster_id"], h["previous_origin"]) for h in hist] == [
        ("1.1", "taxonomy", "up.1", "imported")]


def test_a_person_sets_a_cluster_over_anything(project):
    store, pairs, _, _, vid = project
    c = store.assign_clusters([ClusterAssignment(pairs[0].id, vid, "3.1", "3.1", None)], origin="annotator",
                              by="ada")
    assert c.assigned == 1
    assert store._one("SELECT cluster_id, cluster_origin FROM qa_pairs WHERE id = ?", [pairs[0].id]) == (
        "3.1", "annotator")
    with pytest.raises(TaxonomyError, match="unknown cluster origin"):
        store.assign_clusters([], origin="imported", by="ada")
