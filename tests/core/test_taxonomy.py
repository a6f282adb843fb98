"""core/taxonomy.py: the two-level build on planted topics, determinism, the k2 split rule, too few items,
nearest-leaf assignment, the edits and the label history across versions (SWE-QA-Pro §2.1)."""

from __future__ import annotations

import numpy as np
import pytest
from taxonomy_topics import planted

from benchwright.core import taxonomy as tx
from benchwright.core.embeddings import HashingEmbedder
from benchwright.core.taxonomy import ItemVectors, TaxonomyError


@pytest.fixture(scope="module")
def topics():
    rows = planted()
    ids = [f"iss_{i:03d}" for i in range(len(rows))]
    truth = {i: t for i, (t, _) in zip(ids, rows, strict=True)}
    vectors = HashingEmbedder(256).embed([text for _, text in rows])
    return ids, vectors, truth


@pytest.fixture(scope="module")
def built(topics):
    ids, vectors, _ = topics
    return tx.build(vectors, ids, 3, 9, 7)


def test_every_planted_topic_is_one_level1_node(built, topics):
    _, _, truth = topics
    assert [n.node_id for n in built.level1] == ["1", "2", "3"]
    found = {frozenset(truth[m.item_id] for m in built.members_of(n.node_id)) for n in built.level1}
    assert found == {frozenset({"db"}), frozenset({"http"}), frozenset({"cli"})}
    assert all(n.size == 30 for n in built.level1)
    assert sum(n.size for n in built.leaves) == 90 and len(built.leaves) == 9
    assert all(leaf.node_id.startswith(leaf.parent + ".") for leaf in built.leaves)
    assert built.params["k2_split"] == {"1": 3, "2": 3, "3": 3}


def test_centroids_are_normalised_means_and_distances_are_cosine(built, topics):
    ids, vectors, _ = topics
    iv = ItemVectors(tuple(ids), vectors)
    for node in built.nodes:
        rows = iv.rows([m.item_id for m in built.members_of(node.node_id)])
        mean = rows.mean(axis=0)
        assert np.allclose(node.centroid, mean / np.linalg.norm(mean), atol=1e-5)
        assert abs(np.linalg.norm(node.centroid) - 1) < 1e-5
    m = built.members[0]
    leaf = built.node(m.node_id)
    assert m.distance == pytest.approx(1 - float(iv.rows([m.item_id])[0] @ leaf.centroid), abs=1e-5)


def test_build_is_deterministic_for_a_seed(topics, built):
    ids, vectors, _ = topics
    again = tx.build(vectors, ids, 3, 9, 7)
    assert [(m.item_id, m.node_id) for m in again.members] == [(m.item_id, m.node_id) for m in built.members]
    assert [n.size for n in again.nodes] == [n.size for n in built.nodes]


def test_level1_nodes_are_numbered_largest_first():
    rng = np.random.default_rng(0)
    a = rng.normal([5, 0, 0], 0.1, (40, 3))
    b = rng.normal([0, 5, 0], 0.1, (10, 3))
    c = rng.normal([0, 0, 5], 0.1, (25, 3))
    v = np.vstack([b, a, c]).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    tax = tx.build(v, [f"i{k:03d}" for k in range(len(v))], 3, 6, 0)
    assert [n.size for n in tax.level1] == [40, 25, 10]
    # 6 leaves by size 40/25/10 of 75: quotas 3.2, 2.0, 0.8 -> 3, 2, 1
    assert tax.params["k2_split"] == {"1": 3, "2": 2, "3": 1}


@pytest.mark.parametrize(("sizes", "k2", "caps", "expected"), [
    ([50, 30, 20], 10, None, [5, 3, 2]),          # exact quotas
    ([40, 25, 10], 6, None, [3, 2, 1]),           # largest remainder: 3.2, 2.0, 0.8
    ([97, 1, 1, 1], 5, None, [2, 1, 1, 1]),       # at least one each pushes the big one down
    ([10, 10, 10], 4, None, [2, 1, 1]),           # ties: the earlier node
    ([5, 50, 5], 30, [5, 50, 2], [3, 25, 2]),     # capped at the distinct members
    ([3, 3], 2, None, [1, 1]),
])
def test_split_k2_rule(sizes, k2, caps, expected):
    got = tx.split_k2(sizes, k2, caps)
    assert got == expected and sum(got) == k2


def test_split_k2_refuses_impossible_counts():
    with pytest.raises(TaxonomyError, match="fewer leaves than the 3"):
        tx.split_k2([5, 5, 5], 2)
    with pytest.raises(TaxonomyError, match="from 4 distinct"):
        tx.split_k2([2, 2], 5)


def test_too_few_items_is_a_clear_error(topics):
    ids, vectors, _ = topics
    with pytest.raises(TaxonomyError, match=r"5 items \(5 distinct texts\) cannot make 10 clusters \(k1\)"):
        tx.build(vectors[:5], ids[:5], 10, 50, 0)
    with pytest.raises(TaxonomyError, match=r"cannot make 50 clusters \(k2\)"):
        tx.build(vectors[:20], ids[:20], 3, 50, 0)
    with pytest.raises(TaxonomyError, match="below k1"):
        tx.build(vectors, ids, 5, 3, 0)
    dup = np.repeat(vectors[:2], 10, axis=0)
    with pytest.raises(TaxonomyError, match="2 distinct"):
        tx.build(dup, [f"i{k}" for k in range(20)], 3, 3, 0)


def test_nearest_leaves_picks_the_closest_centroid(built, topics):
    vectors = topics[1]
    got = tx.nearest_leaves(built, vectors[:5])
    for (leaf, dist), v in zip(got, vectors[:5], strict=True):
        sims = {n.node_id: float(v @ n.centroid) for n in built.leaves}
        assert leaf == max(sims, key=sims.get)
        assert dist == pytest.approx(1 - sims[leaf], abs=1e-6)
    with pytest.raises(TaxonomyError, match="dimensions"):
        tx.nearest_leaves(built, np.ones((1, 8), dtype=np.float32))


# ---------------------------------------------------------------------------------------------- edits
@pytest.fixture(scope="module")
def iv(topics):
    ids, vectors, _ = topics
    return ItemVectors(tuple(ids), vectors)


def _consistent(tax, iv):
    """Sizes add up, centroids are the normalised means of the members, every member's leaf exists."""
    leaves = {n.node_id for n in tax.leaves}
    assert {m.node_id for m in tax.members} == leaves
    for n in tax.nodes:
        mem = tax.members_of(n.node_id)
        assert n.size == len(mem) > 0
        mean = iv.rows([m.item_id for m in mem]).mean(axis=0)
        assert np.allclose(n.centroid, mean / np.linalg.norm(mean), atol=1e-5)
    for m in tax.members:
        assert m.distance == pytest.approx(1 - float(iv.rows([m.item_id])[0] @ tax.node(m.node_id).centroid),
                                           abs=1e-5)


def test_rename_sets_a_human_label(built):
    new = tx.rename(built, "2.1", "  Sessions  ", "cookies and sessions", by="ada", at="2026-01-01T00:00:00Z")
    n = new.node("2.1")
    assert (n.label, n.description, n.label_origin, n.label_by) == ("Sessions", "cookies and sessions",
                                                                    "annotator", "ada")
    assert built.node("2.1").label is None  # a new version; the old one is unchanged
    with pytest.raises(TaxonomyError, match="empty"):
        tx.rename(built, "2.1", " ", None, by="ada", at="t")
    with pytest.raises(TaxonomyError, match="at most 80 characters"):
        tx.rename(built, "2.1", "x" * 1_000_000, None, by="ada", at="t")
    with pytest.raises(TaxonomyError, match="several lines"):
        tx.rename(built, "2.1", "a\nb", None, by="ada", at="t")
    with pytest.raises(TaxonomyError, match="at most 600"):
        tx.rename(built, "2.1", "ok", "d" * 601, by="ada", at="t")
    with pytest.raises(TaxonomyError, match="no node '9'"):
        tx.rename(built, "9", "x", None, by="ada", at="t")


def test_merge_two_leaves_of_one_node(built, iv):
    new, moved = tx.merge(built, "1.1", "1.2", iv)
    assert moved == {"1.2": "1.1"}
    assert "1.2" not in {n.node_id for n in new.nodes}
    assert new.node("1.1").size == built.node("1.1").size + built.node("1.2").size
    assert new.node("1").size == 30
    _consistent(new, iv)


def test_merge_two_level1_nodes_moves_the_leaves(built, iv):
    new, moved = tx.merge(built, "1", "3", iv)
    assert moved == {"3": "1", "3.1": "1.4", "3.2": "1.5", "3.3": "1.6"}
    assert [n.node_id for n in new.level1] == ["1", "2"]
    assert new.node("1").size == 60 and len(new.children("1")) == 6
    _consistent(new, iv)


def test_merge_refuses_mixed_levels_and_other_parents(built, iv):
    with pytest.raises(TaxonomyError, match="level 1"):
        tx.merge(built, "1", "1.1", iv)
    with pytest.raises(TaxonomyError, match="different level-1 nodes"):
        tx.merge(built, "1.1", "2.1", iv)
    with pytest.raises(TaxonomyError, match="itself"):
        tx.merge(built, "1.1", "1.1", iv)


def test_split_a_leaf_and_a_level1_node(built, iv):
    labelled = tx.rename(built, "2.1", "Keep me", None, by="ada", at="t")
    new = tx.split(labelled, "2.1", 2, iv, 0)
    assert {n.node_id for n in new.children("2")} == {"2.1", "2.2", "2.3", "2.4"}
    assert new.node("2.1").label == "Keep me"
    assert new.node("2.1").size + new.node("2.4").size == built.node("2.1").size
    _consistent(new, iv)
    whole = tx.split(labelled, "2", 5, iv, 0)
    assert [n.node_id for n in whole.children("2")] == ["2.1", "2.2", "2.3", "2.4", "2.5"]
    assert all(n.label is None for n in whole.children("2"))
    _consistent(whole, iv)
    with pytest.raises(TaxonomyError, match="at least 2"):
        tx.split(built, "2.1", 1, iv, 0)
    with pytest.raises(TaxonomyError, match="cannot be split into 99"):
        tx.split(built, "2.1", 99, iv, 0)


def test_delete_moves_members_to_the_nearest_remaining_leaf(built, iv):
    gone = built.members_of("3.2")
    new = tx.delete(built, "3.2", iv)
    assert "3.2" not in {n.node_id for n in new.nodes}
    before = tx.Taxonomy(tuple(n for n in built.nodes if n.node_id != "3.2"), built.members)
    expected = dict(zip([m.item_id for m in gone],
                        [leaf for leaf, _ in tx.nearest_leaves(before, iv.rows([m.item_id for m in gone]))],
                        strict=True))
    assert {m.item_id: m.node_id for m in new.members if m.item_id in expected} == expected
    assert len(new.members) == 90
    _consistent(new, iv)


def test_delete_refuses_a_level1_node_and_the_last_leaf(built, iv):
    with pytest.raises(TaxonomyError, match="level-1 node"):
        tx.delete(built, "1", iv)
    tax = built
    for leaf in [n.node_id for n in built.leaves][:-1]:
        tax = tx.delete(tax, leaf, iv)
    assert [n.node_id for n in tax.nodes] == ["3", "3.3"] and tax.node("3").size == 90
    with pytest.raises(TaxonomyError, match="last leaf"):
        tx.delete(tax, "3.3", iv)


def test_label_history_follows_a_moved_leaf(built, iv):
    def version(vid, op, args=None):
        return tx.TaxonomyVersion(vid, 1, vid - 1 or None, op, args or {}, "issues", "hashing", 256, {}, f"t{vid}",
                                  "ada")

    v1 = built
    v2 = tx.rename(v1, "3.1", "Old name", None, by="ada", at="t2")
    v3, moved = tx.merge(v2, "1", "3", iv)
    v4 = tx.rename(v3, "1.4", "New name", "d", by="bob", at="t4")
    versions = [(version(1, "build"), {n.node_id: n for n in v1.nodes}),
                (version(2, "rename"), {n.node_id: n for n in v2.nodes}),
                (version(3, "merge", {"moved": moved}), {n.node_id: n for n in v3.nodes}),
                (version(4, "rename"), {n.node_id: n for n in v4.nodes})]
    hist = tx.label_history(versions, "1.4")
    assert [(c.version, c.node_id, c.label, c.by) for c in hist] == [
        (1, "3.1", None, None), (2, "3.1", "Old name", "ada"), (4, "1.4", "New name", "bob")]
    with pytest.raises(TaxonomyError):
        tx.label_history(versions, "3.1")
