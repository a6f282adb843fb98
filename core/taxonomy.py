"""Two-level topic taxonomies (SWE-QA-Pro §2.1): k-means over text embeddings, then k-means inside each
level-1 node; nearest-leaf assignment; edits (rename, merge, split, delete) as pure functions that return a new
version. Pure: numpy and scikit-learn, no store.

Shapes and conventions:

- Vectors are ``(n, d)`` float32 with L2-normalised rows (:mod:`benchwright.core.embeddings`), so a dot product
  is a cosine similarity; a member's ``distance`` is the cosine distance ``1 - cos`` to its leaf's centroid.
- Node ids are 1-based: level-1 nodes ``"1"`` .. ``"k1"``, leaves ``"3.1"`` .. under node ``"3"``; a pair's
  ``cluster_id`` is the leaf id (``L1.L2``). A build numbers level-1 nodes by size (largest first; ties by the
  position of their first member in the input) and leaves inside a node the same way. Edits never renumber the
  nodes they leave alone: new nodes take the next free number.
- A centroid is the L2-normalised mean of the vectors of the node's members (a level-1 node's over all members
  of its leaves), recomputed for every node an edit changes.
- How ``k2`` is split across the level-1 nodes (the paper gives 10 and 50 and is silent on this): proportional
  to the node's size by largest remainder, at least 1 leaf per node and at most as many as the node has distinct
  vectors (:func:`split_k2`). The split is stored in the version's ``params`` (``k2_split``).
- Too few items: fewer distinct vectors than ``k1`` or ``k2`` is a :class:`TaxonomyError` that says how many
  there are (no silent reduction); ``k2 < k1`` is one too (every level-1 node needs a leaf).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .errors import BenchwrightError
from .vocabulary import TAXONOMY_SOURCES

N_INIT = 10
"""k-means restarts (scikit-learn ``n_init``), fixed so a build depends only on the vectors, k and the seed."""

LABEL_ORIGINS = ("llm", "annotator")
"""Who set a node's label: ``taxonomy label`` (an LLM) or a person (``taxonomy edit rename``, the app's ``e``)."""

OPERATIONS = ("build", "label", "rename", "merge", "split", "delete")
"""``taxonomies.operation``: what made a version."""

SOURCES = TAXONOMY_SOURCES
"""What a taxonomy clusters: issue texts (§2.1, ``issues import``) or the pairs' questions."""

LABEL_MAX_CHARS = 80
DESCRIPTION_MAX_CHARS = 600
"""A node's label is one line of at most 80 characters, its description at most 600 (whoever writes them: a
person renaming, or an LLM labelling)."""


class TaxonomyError(BenchwrightError):
    """A taxonomy cannot be built or edited as asked (too few items, an unknown node, an edit that does not
    apply to that node)."""


@dataclass(frozen=True)
class Node:
    """One node of a version.

    Attributes:
        node_id: ``"3"`` (level 1) or ``"3.7"`` (a leaf under ``"3"``).
        level: 1 or 2; parent: the level-1 id of a leaf (None at level 1).
        size: members under the node; centroid: ``(d,)`` float32, L2-normalised (None when it has no members).
        label, description: the node's name and one-line description (None: unlabelled).
        label_origin: ``llm`` or ``annotator`` (:data:`LABEL_ORIGINS`); label_model: the model that answered;
        label_call_ids: its ledger rows; label_by, label_at: who ran it or typed it, and when (UTC ISO).
    """

    node_id: str
    level: int
    parent: str | None
    size: int
    centroid: np.ndarray | None = field(default=None, compare=False, repr=False)
    label: str | None = None
    description: str | None = None
    label_origin: str | None = None
    label_model: str | None = None
    label_call_ids: tuple[int, ...] = ()
    label_by: str | None = None
    label_at: str | None = None

    @property
    def is_leaf(self) -> bool:
        """True at level 2."""
        return self.level == 2


@dataclass(frozen=True)
class Member:
    """An item (``iss_...`` issue id or ``qa_...`` pair id) on its leaf, with its cosine distance to the leaf's
    centroid."""

    item_id: str
    node_id: str
    distance: float


@dataclass(frozen=True)
class Taxonomy:
    """Nodes (level-1 nodes and leaves, in id order) and members (item id order) of one version, and the
    parameters it was built with (``k1``, ``k2``, ``seed``, ``n_init``, ``k2_split``...)."""

    nodes: tuple[Node, ...]
    members: tuple[Member, ...]
    params: dict = field(default_factory=dict, compare=False)

    def node(self, node_id: str) -> Node:
        """The node called ``node_id``.

        Raises:
            TaxonomyError: no such node (names the nodes there are, up to 20).
        """
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        shown = ", ".join(n.node_id for n in self.nodes[:20]) + (" ..." if len(self.nodes) > 20 else "")
        raise TaxonomyError(f"no node {node_id!r} in this taxonomy; nodes: {shown}")

    @property
    def level1(self) -> list[Node]:
        """The level-1 nodes, in id order."""
        return [n for n in self.nodes if n.level == 1]

    @property
    def leaves(self) -> list[Node]:
        """The leaves, in id order."""
        return [n for n in self.nodes if n.level == 2]

    def children(self, node_id: str) -> list[Node]:
        """The leaves under the level-1 node ``node_id``."""
        return [n for n in self.nodes if n.parent == node_id]

    def members_of(self, node_id: str) -> list[Member]:
        """Members of a leaf, or of every leaf under a level-1 node, in item id order."""
        if "." in node_id:
            return [m for m in self.members if m.node_id == node_id]
        return [m for m in self.members if m.node_id.split(".")[0] == node_id]


@dataclass(frozen=True)
class ItemVectors:
    """Item ids and their vectors: ``matrix`` is ``(len(ids), d)``, row i the vector of ``ids[i]``."""

    ids: tuple[str, ...]
    matrix: np.ndarray

    def rows(self, item_ids: Sequence[str]) -> np.ndarray:
        """The vectors of ``item_ids`` as ``(len(item_ids), d)``.

        Raises:
            TaxonomyError: an item without a vector.
        """
        index = self._index()
        try:
            return self.matrix[[index[i] for i in item_ids]] if item_ids else self.matrix[:0]
        except KeyError as e:
            raise TaxonomyError(f"no vector for member {e.args[0]}") from None

    def _index(self) -> dict[str, int]:
        cached = self.__dict__.get("_idx")
        if cached is None:
            cached = {i: k for k, i in enumerate(self.ids)}
            object.__setattr__(self, "_idx", cached)
        return cached


def node_sort_key(node_id: str) -> tuple[int, ...]:
    """``"3.10"`` -> ``(3, 10)``: node ids in numeric order."""
    return tuple(int(p) for p in node_id.split("."))


def centroid(vectors: np.ndarray) -> np.ndarray:
    """The L2-normalised mean of ``vectors`` (m, d), as ``(d,)`` float32 (all zero for a zero mean)."""
    mean = np.asarray(vectors, dtype=np.float64).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm > 0 else mean).astype(np.float32)


def distinct_count(vectors: np.ndarray) -> int:
    """How many distinct rows ``vectors`` has (k-means cannot make more non-empty clusters than that)."""
    return int(np.unique(np.asarray(vectors), axis=0).shape[0]) if len(vectors) else 0


def split_k2(sizes: Sequence[int], k2: int, caps: Sequence[int] | None = None) -> list[int]:
    """How many leaves each level-1 node gets: ``k2`` split proportionally to ``sizes`` by largest remainder,
    at least 1 per node and at most ``caps[i]`` (default: the size). Ours: SWE-QA-Pro §2.1 gives 10 level-1 and
    50 level-2 clusters and says nothing of how the 50 are shared.

    Steps: quota ``q_i = k2 * size_i / sum(sizes)``; each node gets ``floor(q_i)`` clamped to ``[1, cap_i]``;
    while the total is below ``k2``, one more goes to the node with the largest ``q_i - a_i`` that is under its
    cap; while above (the minimum of 1 pushed it over), one is taken from the node with the smallest
    ``q_i - a_i`` that has more than 1. Ties go to the larger node, then the earlier one.

    Returns:
        The leaves per node, summing to ``k2``.

    Raises:
        TaxonomyError: ``k2`` below the number of nodes or above the sum of the caps.
    """
    sizes = list(sizes)
    caps = list(caps) if caps is not None else list(sizes)
    if k2 < len(sizes):
        raise TaxonomyError(f"k2 = {k2} is fewer leaves than the {len(sizes)} level-1 nodes (each needs one)")
    if k2 > sum(caps):
        raise TaxonomyError(f"k2 = {k2} leaves cannot be made from {sum(caps)} distinct items")
    total = sum(sizes)
    quota = [k2 * s / total for s in sizes]
    alloc = [min(max(1, math.floor(q)), c) for q, c in zip(quota, caps, strict=True)]
    order = range(len(sizes))
    while sum(alloc) < k2:
        i = max((i for i in order if alloc[i] < caps[i]), key=lambda i: (quota[i] - alloc[i], sizes[i], -i))
        alloc[i] += 1
    while sum(alloc) > k2:
        i = min((i for i in order if alloc[i] > 1), key=lambda i: (quota[i] - alloc[i], -sizes[i], i))
        alloc[i] -= 1
    return alloc


def _kmeans(vectors: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Cluster labels 0..k-1 of ``vectors`` (scikit-learn ``KMeans``, ``n_init`` :data:`N_INIT`)."""
    if k == 1:
        return np.zeros(len(vectors), dtype=int)
    import warnings

    from sklearn.cluster import KMeans

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning on near-duplicate points: the labels are still used
        km = KMeans(n_clusters=k, random_state=seed, n_init=N_INIT)
        return km.fit_predict(np.asarray(vectors, dtype=np.float64))


def _groups(labels: np.ndarray) -> list[np.ndarray]:
    """Row indices per cluster, largest cluster first (ties: the one whose first row comes first); empty
    clusters are dropped."""
    groups = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    groups = [g for g in groups if len(g)]
    groups.sort(key=lambda g: (-len(g), int(g[0])))
    return groups


def build(vectors: np.ndarray, item_ids: Sequence[str], k1: int, k2: int, seed: int) -> Taxonomy:
    """A two-level taxonomy of ``item_ids`` (SWE-QA-Pro §2.1): ``KMeans(k1, random_state=seed)`` over
    ``vectors`` (n, d, rows L2-normalised), then each level-1 node's members into its share of ``k2``
    (:func:`split_k2`) with the same seed. Deterministic for the same vectors, ids, k and seed.

    Raises:
        TaxonomyError: ``k1 < 1``, ``k2 < k1``, fewer distinct vectors than ``k1`` or ``k2``, or ids and vectors
        of different lengths.
    """
    v = np.asarray(vectors, dtype=np.float32)
    ids = list(item_ids)
    if v.ndim != 2 or len(v) != len(ids):
        raise TaxonomyError(f"{len(ids)} items but vectors of shape {v.shape}")
    if k1 < 1:
        raise TaxonomyError(f"k1 must be at least 1, not {k1}")
    if k2 < k1:
        raise TaxonomyError(f"k2 = {k2} is below k1 = {k1}: every level-1 node needs at least one leaf")
    distinct = distinct_count(v)
    for name, k in (("k1", k1), ("k2", k2)):
        if distinct < k:
            raise TaxonomyError(f"{len(ids)} items ({distinct} distinct texts) cannot make {k} clusters ({name}); "
                                f"give a {name} of at most {distinct}, or more items")
    top = _groups(_kmeans(v, k1, seed))
    caps = [distinct_count(v[g]) for g in top]
    split = split_k2([len(g) for g in top], k2, caps)
    nodes: list[Node] = []
    members: list[Member] = []
    for p, (rows, k) in enumerate(zip(top, split, strict=True), 1):
        pid = str(p)
        nodes.append(Node(pid, 1, None, len(rows), centroid(v[rows])))
        sub = _groups(_kmeans(v[rows], k, seed))
        for c, local in enumerate(sub, 1):
            leaf_rows = rows[local]
            cen = centroid(v[leaf_rows])
            lid = f"{pid}.{c}"
            nodes.append(Node(lid, 2, pid, len(leaf_rows), cen))
            dist = 1.0 - v[leaf_rows] @ cen
            members += [Member(ids[r], lid, float(d)) for r, d in zip(leaf_rows.tolist(), dist.tolist(), strict=True)]
    members.sort(key=lambda m: m.item_id)
    params = {"k1": k1, "k2": k2, "seed": seed, "n_init": N_INIT, "items": len(ids),
              "k2_split": {str(p): k for p, k in enumerate(split, 1)},
              "k2_rule": "proportional to size by largest remainder, 1 <= leaves <= distinct members"}
    return Taxonomy(_sorted(nodes), tuple(members), params)


def nearest_leaves(taxonomy: Taxonomy, vectors: np.ndarray) -> list[tuple[str, float]]:
    """For each row of ``vectors`` (m, d), the leaf whose centroid is nearest by cosine and the cosine distance
    to it: ``[(leaf_id, distance), ...]``. Ties go to the leaf first in id order.

    Raises:
        TaxonomyError: the taxonomy has no leaf with a centroid, or the dimensions differ.
    """
    leaves = [n for n in taxonomy.leaves if n.centroid is not None]
    if not leaves:
        raise TaxonomyError("the taxonomy has no leaf to assign to")
    c = np.stack([n.centroid for n in leaves])
    v = np.asarray(vectors, dtype=np.float32)
    if len(v) == 0:
        return []
    if v.shape[1] != c.shape[1]:
        raise TaxonomyError(f"vectors have {v.shape[1]} dimensions, the taxonomy's centroids {c.shape[1]}")
    sims = v @ c.T
    best = sims.argmax(axis=1)
    return [(leaves[b].node_id, float(1.0 - sims[i, b])) for i, b in enumerate(best.tolist())]


# ------------------------------------------------------------------------------------------------ edits
def rename(taxonomy: Taxonomy, node_id: str, label: str, description: str | None, *, by: str,
           at: str) -> Taxonomy:
    """A copy where ``node_id`` has ``label`` (and ``description``; None keeps the old one), set by a person
    (origin ``annotator``, ``by`` at ``at``).

    Raises:
        TaxonomyError: an unknown node, an empty label, or one over :data:`LABEL_MAX_CHARS` or several lines (a
        description over :data:`DESCRIPTION_MAX_CHARS`).
    """
    label = label.strip()
    if not label:
        raise TaxonomyError("a label cannot be empty")
    if len(label) > LABEL_MAX_CHARS or "\n" in label:
        raise TaxonomyError(f"a label is one line of at most {LABEL_MAX_CHARS} characters (this one has "
                            f"{len(label)}{' and several lines' if chr(10) in label else ''})")
    if description is not None and len(description) > DESCRIPTION_MAX_CHARS:
        raise TaxonomyError(f"a description has at most {DESCRIPTION_MAX_CHARS} characters (this one has "
                            f"{len(description)})")
    old = taxonomy.node(node_id)
    new = replace(old, label=label, description=old.description if description is None else description,
                  label_origin="annotator", label_model=None, label_call_ids=(), label_by=by, label_at=at)
    return replace(taxonomy, nodes=tuple(new if n.node_id == node_id else n for n in taxonomy.nodes))


def merge(taxonomy: Taxonomy, keep: str, other: str, vectors: ItemVectors) -> tuple[Taxonomy, dict[str, str]]:
    """``other`` merged into ``keep``: two leaves of one level-1 node (``other``'s members join ``keep``), or
    two level-1 nodes (``other``'s leaves move under ``keep`` and take its next free numbers). ``keep`` keeps
    its id and label; centroids, sizes and distances are recomputed.

    Returns:
        ``(new taxonomy, moved)``: ``moved`` maps each node id that changed to its new id (``other`` to
        ``keep``; a moved leaf ``"4.2"`` to ``"3.6"``).

    Raises:
        TaxonomyError: unknown nodes, the same node twice, a leaf with a level-1 node, or leaves of different
        level-1 nodes.
    """
    a, b = taxonomy.node(keep), taxonomy.node(other)
    if a.node_id == b.node_id:
        raise TaxonomyError(f"cannot merge node {keep} with itself")
    if a.level != b.level:
        raise TaxonomyError(f"cannot merge {a.node_id} (level {a.level}) with {b.node_id} (level {b.level}): "
                            "merge two leaves of one node, or two level-1 nodes")
    moved: dict[str, str]
    if a.is_leaf:
        if a.parent != b.parent:
            raise TaxonomyError(f"leaves {a.node_id} and {b.node_id} are under different level-1 nodes; merge "
                                "leaves of one node, or the two level-1 nodes")
        moved = {b.node_id: a.node_id}
    else:
        nxt = _next_child(taxonomy, a.node_id)
        moved = {b.node_id: a.node_id}
        for i, leaf in enumerate(taxonomy.children(b.node_id)):
            moved[leaf.node_id] = f"{a.node_id}.{nxt + i}"
    nodes = []
    for n in taxonomy.nodes:
        if n.node_id == b.node_id:
            continue
        if n.node_id in moved:
            n = replace(n, node_id=moved[n.node_id], parent=a.node_id)
        nodes.append(n)
    members = [replace(m, node_id=moved.get(m.node_id, m.node_id)) for m in taxonomy.members]
    return _refit(replace(taxonomy, nodes=_sorted(nodes), members=tuple(members)), vectors,
                  {a.node_id, *moved.values()}), moved


def split(taxonomy: Taxonomy, node_id: str, k: int, vectors: ItemVectors, seed: int) -> Taxonomy:
    """``node_id``'s members clustered into ``k`` (k-means, the seed given). A leaf becomes ``k`` leaves under
    its level-1 node (the first keeps its id and label, the others take the next free numbers); a level-1 node's
    members are clustered into ``k`` new leaves that replace its leaves (their labels go; ids ``P.1`` .. ``P.k``).

    Raises:
        TaxonomyError: an unknown node, ``k < 2``, or fewer distinct members than ``k``.
    """
    node = taxonomy.node(node_id)
    if k < 2:
        raise TaxonomyError(f"split into {k}: give k of at least 2")
    mem = taxonomy.members_of(node_id)
    ids = [m.item_id for m in mem]
    v = vectors.rows(ids)
    distinct = distinct_count(v)
    if distinct < k:
        raise TaxonomyError(f"node {node_id} has {len(ids)} members ({distinct} distinct) and cannot be split "
                            f"into {k}")
    groups = _groups(_kmeans(v, k, seed))
    where: dict[str, str] = {}
    nodes = list(taxonomy.nodes)
    if node.is_leaf:
        nxt = _next_child(taxonomy, node.parent)
        new_ids = [node_id] + [f"{node.parent}.{nxt + i}" for i in range(k - 1)]
        nodes += [Node(nid, 2, node.parent, 0) for nid in new_ids[1:]]
    else:
        new_ids = [f"{node_id}.{i + 1}" for i in range(k)]
        nodes = [n for n in nodes if n.parent != node_id] + [Node(nid, 2, node_id, 0) for nid in new_ids]
    for g, nid in zip(groups, new_ids, strict=True):
        for r in g.tolist():
            where[ids[r]] = nid
    members = [replace(m, node_id=where.get(m.item_id, m.node_id)) for m in taxonomy.members]
    changed = set(new_ids) | {node_id}
    return _refit(replace(taxonomy, nodes=_sorted(nodes), members=tuple(members)), vectors, changed)


def delete(taxonomy: Taxonomy, leaf_id: str, vectors: ItemVectors) -> Taxonomy:
    """A copy without the leaf ``leaf_id``: each of its members moves to the nearest remaining leaf (cosine to
    the leaves' centroids); a level-1 node left without leaves goes too. Centroids, sizes and distances of the
    leaves that received members are recomputed.

    Raises:
        TaxonomyError: an unknown node, a level-1 node (delete its leaves, or merge it), or the last leaf.
    """
    node = taxonomy.node(leaf_id)
    if not node.is_leaf:
        raise TaxonomyError(f"node {leaf_id} is a level-1 node; delete its leaves one by one, or merge it into "
                            "another level-1 node")
    rest = [n for n in taxonomy.nodes if n.node_id != leaf_id]
    if not any(n.is_leaf for n in rest):
        raise TaxonomyError(f"leaf {leaf_id} is the last leaf; a taxonomy keeps at least one")
    if not taxonomy.children(node.parent)[1:]:
        rest = [n for n in rest if n.node_id != node.parent]
    remaining = replace(taxonomy, nodes=tuple(rest))
    moving = [m for m in taxonomy.members if m.node_id == leaf_id]
    targets = nearest_leaves(remaining, vectors.rows([m.item_id for m in moving])) if moving else []
    to = {m.item_id: t for m, (t, _) in zip(moving, targets, strict=True)}
    members = [replace(m, node_id=to.get(m.item_id, m.node_id)) for m in taxonomy.members]
    return _refit(replace(remaining, members=tuple(members)), vectors, set(to.values()))


def with_labels(taxonomy: Taxonomy, labels: Mapping[str, Node]) -> Taxonomy:
    """A copy where each node of ``labels`` (node id -> a :class:`Node` carrying the new label fields) has that
    label, description, origin, model, calls, who and when; the others are unchanged."""
    out = []
    for n in taxonomy.nodes:
        lab = labels.get(n.node_id)
        out.append(n if lab is None else replace(
            n, label=lab.label, description=lab.description, label_origin=lab.label_origin,
            label_model=lab.label_model, label_call_ids=tuple(lab.label_call_ids), label_by=lab.label_by,
            label_at=lab.label_at))
    return replace(taxonomy, nodes=tuple(out))


# ------------------------------------------------------------------------------------------------ helpers
def _sorted(nodes: Sequence[Node]) -> tuple[Node, ...]:
    return tuple(sorted(nodes, key=lambda n: node_sort_key(n.node_id)))


def _next_child(taxonomy: Taxonomy, parent: str) -> int:
    """The next free leaf number under ``parent``."""
    used = [node_sort_key(n.node_id)[1] for n in taxonomy.children(parent)]
    return max(used, default=0) + 1


def _refit(taxonomy: Taxonomy, vectors: ItemVectors, leaves: set[str]) -> Taxonomy:
    """Sizes and centroids of ``leaves`` and of their level-1 nodes, and their members' distances, recomputed
    from the members; sizes of every node recounted. A leaf left without members is dropped (and a level-1 node
    without leaves)."""
    by_leaf: dict[str, list[str]] = {}
    for m in taxonomy.members:
        by_leaf.setdefault(m.node_id, []).append(m.item_id)
    parents = {lid.split(".")[0] for lid in leaves}
    cents: dict[str, np.ndarray] = {}
    nodes = []
    for n in taxonomy.nodes:
        if n.is_leaf:
            items = by_leaf.get(n.node_id, [])
            if not items:
                continue
            if n.node_id in leaves:
                cents[n.node_id] = centroid(vectors.rows(items))
                n = replace(n, size=len(items), centroid=cents[n.node_id])
            else:
                n = replace(n, size=len(items))
        nodes.append(n)
    out = []
    for n in nodes:
        if not n.is_leaf:
            items = [i for lid, its in by_leaf.items() if lid.split(".")[0] == n.node_id for i in its]
            if not items:
                continue
            n = replace(n, size=len(items),
                        centroid=centroid(vectors.rows(sorted(items))) if n.node_id in parents else n.centroid)
        out.append(n)
    distance: dict[str, float] = {}
    for lid, cen in cents.items():
        items = by_leaf[lid]
        distance.update(zip(items, (1.0 - vectors.rows(items) @ cen).tolist(), strict=True))
    members = tuple(replace(m, distance=float(distance[m.item_id])) if m.item_id in distance else m
                    for m in taxonomy.members)
    return replace(taxonomy, nodes=_sorted(out), members=members)


# ------------------------------------------------------------------------------------------ stored versions
@dataclass(frozen=True)
class TaxonomyVersion:
    """One stored version (``taxonomies`` row) and, when read whole, its nodes and members.

    Attributes:
        id: the version; lineage: the build it descends from (a build's own id); parent_id: the version it was
            made from (None for a build).
        operation: one of :data:`OPERATIONS`; operation_args: its arguments (nodes, labels, k, ``moved`` ids).
        source: ``issues`` or ``pairs``; embedder_model, dimensions: the vectors' model (the cache key).
        created_at, created_by: when and who.
        taxonomy: nodes and members (None in a list of versions).
    """

    id: int
    lineage: int
    parent_id: int | None
    operation: str
    operation_args: dict
    source: str
    embedder_model: str
    dimensions: int
    params: dict
    created_at: str
    created_by: str
    taxonomy: Taxonomy | None = None


@dataclass(frozen=True)
class LabelChange:
    """A node's label as set in one version: the version, the operation, the node's id in that version, and the
    label fields (:class:`Node`)."""

    version: int
    operation: str
    node_id: str
    label: str | None
    description: str | None
    origin: str | None
    model: str | None
    by: str | None
    at: str | None


def label_history(versions: Sequence[tuple[TaxonomyVersion, Mapping[str, Node]]], node_id: str) -> list[LabelChange]:
    """The label changes of ``node_id`` (an id in the last of ``versions``, which run oldest first), back to the
    version that made it: one entry per version whose label or description differs from the version before.
    A leaf a merge moved (``operation_args["moved"]``: old id -> new id) is followed to its old id.

    Raises:
        TaxonomyError: ``node_id`` is not in the last version.
    """
    if not versions or node_id not in versions[-1][1]:
        raise TaxonomyError(f"no node {node_id!r} in the latest version")
    trail: list[tuple[TaxonomyVersion, Node]] = []
    name = node_id
    for k in range(len(versions) - 1, -1, -1):
        version, nodes = versions[k]
        if name not in nodes:
            break
        trail.append((version, nodes[name]))
        before = versions[k - 1][1] if k else {}
        if name not in before:
            olds = [o for o, n in (version.operation_args.get("moved") or {}).items() if n == name and o in before]
            if not olds:
                break
            name = olds[0]
    out: list[LabelChange] = []
    prev: tuple | None = None
    for version, n in reversed(trail):
        key = (n.label, n.description)
        if key != prev:
            out.append(LabelChange(version.id, version.operation, n.node_id, n.label, n.description, n.label_origin,
                                   n.label_model, n.label_by, n.label_at))
        prev = key
    return out
