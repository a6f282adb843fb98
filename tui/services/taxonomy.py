"""Taxonomy runs for the front ends (SWE-QA-Pro §2.1; docs/data-methods.md "Taxonomy"): build a version from
issue texts or pairs' questions, label its nodes with an LLM, edit it, put pairs on their nearest leaf, and what
the taxonomy screen shows. Vectors come from :func:`benchwright.tui.services.embeddings.embed_texts` (cached, so a
rerun or an edit embeds nothing again); the clustering and the edits are :mod:`benchwright.core.taxonomy`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from benchwright.core import taxonomy as tx
from benchwright.core.llm.jobs import Job, JobProgress
from benchwright.core.models import utc_now
from benchwright.core.taxonomy import ItemVectors, LabelChange, Node, TaxonomyError, TaxonomyVersion
from benchwright.core.taxonomy_labels import (
    LabelOutcome,
    label_node,
    leaf_request,
    parent_request,
    sample_members,
)
from benchwright.db import QueueFilter, Store
from benchwright.db.taxonomy import AssignCounts, ClusterAssignment

from .embeddings import EmbedderChoice, EmbeddingBatch, embed_texts, resolve_embedder
from .llm import project_dir_of


@dataclass(frozen=True)
class BuildResult:
    """A saved build: the version (with nodes and members) and what embedding took."""

    version: TaxonomyVersion
    embedding: EmbeddingBatch


def latest_version(store: Store, version: int | None = None) -> TaxonomyVersion:
    """Version ``version`` (None: the latest saved) with its nodes and members.

    Raises:
        TaxonomyError: there is no taxonomy yet, or no such version.
    """
    tv = store.taxonomy_version(version)
    if tv is None:
        raise TaxonomyError("the project has no taxonomy yet" if version is None else
                            f"no taxonomy version {version}")
    return tv


def build_taxonomy(store: Store, items: list[tuple[str, str]], *, source: str, k1: int, k2: int, seed: int,
                   by: str, choice: EmbedderChoice | None = None, scope: dict | None = None,
                   progress: Callable[[int, int], None] | None = None) -> BuildResult:
    """Embed ``items`` (``(item id, text)``: issues or pairs), cluster them in two levels
    (:func:`benchwright.core.taxonomy.build`) and save the build as a new lineage. ``scope`` (the repository,
    the pairs' filter) is recorded in the version's parameters.

    Raises:
        TaxonomyError: too few items for k1 / k2 (nothing is saved).
        EmbeddingError: the embedder cannot be used.
    """
    if source not in tx.SOURCES:
        raise TaxonomyError(f"unknown taxonomy source {source!r}; sources: {', '.join(tx.SOURCES)}")
    choice = choice or resolve_embedder(project_dir_of(store))
    batch = embed_texts(store, [t for _, t in items], choice, progress=progress)
    taxonomy = tx.build(batch.vectors, [i for i, _ in items], k1, k2, seed)
    params = {**taxonomy.params, "source": source, **(scope or {})}
    vid = store.save_taxonomy(taxonomy, operation="build", source=source, embedder_model=batch.model,
                              dimensions=batch.dimensions, by=by, params=params)
    return BuildResult(latest_version(store, vid), batch)


def member_vectors(store: Store, version: TaxonomyVersion) -> ItemVectors:
    """The vectors of ``version``'s members (their current texts, by the version's embedder: from the cache).

    Raises:
        TaxonomyError: a member's text is no longer in the project.
    """
    ids = [m.item_id for m in version.taxonomy.members]
    texts = store.taxonomy_item_texts(ids)
    missing = [i for i in ids if i not in texts]
    if missing:
        raise TaxonomyError(f"{len(missing)} members of taxonomy version {version.id} are no longer in the project "
                            f"(first: {missing[0]})")
    choice = resolve_embedder(project_dir_of(store), version.embedder_model, version.dimensions)
    batch = embed_texts(store, [texts[i] for i in ids], choice)
    return ItemVectors(tuple(ids), batch.vectors)


EDITS = ("rename", "merge", "split", "delete")
"""``taxonomy edit`` operations (each saves a new version)."""


def edit_taxonomy(store: Store, operation: str, *, by: str, node: str, other: str | None = None,
                  label: str | None = None, description: str | None = None, k: int | None = None, seed: int = 0,
                  version: int | None = None) -> TaxonomyVersion:
    """Apply one edit to ``version`` (None: the latest) and save the result as a new version made from it, by
    ``by`` now: ``rename`` (``label``, ``description``), ``merge`` (``other`` into ``node``), ``split`` (into
    ``k``, k-means with ``seed``), ``delete`` (a leaf; its members go to the nearest remaining leaf).

    Returns:
        The new version.

    Raises:
        TaxonomyError: the edit does not apply (see :mod:`benchwright.core.taxonomy`), or ``version`` is no longer
        the latest of its lineage.
    """
    tv = latest_version(store, version)
    tax = tv.taxonomy
    args: dict = {"node": node}
    if operation == "rename":
        new = tx.rename(tax, node, label or "", description, by=by, at=utc_now())
        args.update(label=label, description=description)
    elif operation == "merge":
        new, moved = tx.merge(tax, node, other or "", member_vectors(store, tv))
        args.update(other=other, moved=moved)
    elif operation == "split":
        new = tx.split(tax, node, k or 0, member_vectors(store, tv), seed)
        args.update(k=k, seed=seed)
    elif operation == "delete":
        new = tx.delete(tax, node, member_vectors(store, tv))
    else:
        raise TaxonomyError(f"unknown edit {operation!r}; edits: {', '.join(EDITS)}")
    vid = store.save_taxonomy(new, operation=operation, source=tv.source, embedder_model=tv.embedder_model,
                              dimensions=tv.dimensions, by=by, parent_id=tv.id, operation_args=args, params=tv.params)
    return latest_version(store, vid)


# ------------------------------------------------------------------------------------------------ assign
@dataclass(frozen=True)
class AssignResult:
    """``taxonomy assign``: the version used, the pairs considered, what the store did, what embedding took."""

    version: TaxonomyVersion
    pairs: int
    counts: AssignCounts
    embedding: EmbeddingBatch | None = None


def assign_pairs(store: Store, *, annotator: str, by: str, flt: QueueFilter = QueueFilter(), force: bool = False,
                 version: int | None = None, progress: Callable[[int, int], None] | None = None) -> AssignResult:
    """Put the pairs ``flt`` lets through on their nearest leaf of ``version`` (None: the latest): their current
    questions embedded by the version's embedder, the leaf whose centroid is nearest by cosine; ``cluster_id`` the
    leaf id (``L1.L2``), ``cluster_name`` its label. Clusters the import or a person set are kept unless
    ``force`` (:meth:`~benchwright.db.taxonomy.TaxonomyStoreMixin.assign_clusters`).

    Raises:
        TaxonomyError: no taxonomy, or no such version.
    """
    tv = latest_version(store, version)
    pairs = store.taxonomy_pairs(annotator, flt)
    if not pairs:
        return AssignResult(tv, 0, AssignCounts())
    choice = resolve_embedder(project_dir_of(store), tv.embedder_model, tv.dimensions)
    batch = embed_texts(store, [q for _, q, _ in pairs], choice, progress=progress)
    labels = {n.node_id: n.label for n in tv.taxonomy.leaves}
    rows = [ClusterAssignment(pid, tv.id, leaf, leaf, labels.get(leaf), dist)
            for (pid, _, _), (leaf, dist) in zip(pairs, tx.nearest_leaves(tv.taxonomy, batch.vectors), strict=True)]
    counts = store.assign_clusters(rows, origin="taxonomy", by=by, force=force)
    return AssignResult(tv, len(pairs), counts, batch)


def assign_pair(store: Store, pair_id: str, node_id: str, *, by: str, version: int | None = None) -> AssignCounts:
    """A person puts ``pair_id`` on the leaf ``node_id`` of ``version`` (None: the latest): origin ``annotator``,
    which ``taxonomy assign`` then keeps unless forced.

    Raises:
        TaxonomyError: no taxonomy, no such node, or a level-1 node (a cluster is a leaf).
    """
    tv = latest_version(store, version)
    node = tv.taxonomy.node(node_id)
    if not node.is_leaf:
        raise TaxonomyError(f"node {node_id} is a level-1 node; a pair's cluster is a leaf "
                            f"({', '.join(n.node_id for n in tv.taxonomy.children(node_id)[:10])})")
    return store.assign_clusters([ClusterAssignment(pair_id, tv.id, node_id, node_id, node.label)],
                                 origin="annotator", by=by)


# ------------------------------------------------------------------------------------------------- label
@dataclass
class LabelRun:
    """``taxonomy label``: the version labelled, the new version (None when nothing changed), the outcome of
    every call (leaves first), the nodes left alone because a person labelled them, and whether it was
    cancelled (what finished was saved)."""

    base: TaxonomyVersion
    new_version: int | None = None
    outcomes: list[LabelOutcome] = field(default_factory=list)
    kept_human: list[str] = field(default_factory=list)
    cancelled: bool = False


def label_plan(version: TaxonomyVersion, *, force: bool = False) -> tuple[list[Node], list[Node], list[str]]:
    """``(leaves, level-1 nodes, kept)`` to label: nodes without a label (with ``force`` also those an LLM
    labelled); a label a person set is never replaced (``kept``)."""
    tax = version.taxonomy
    kept = [n.node_id for n in tax.nodes if n.label_origin == "annotator"]
    todo = [n for n in tax.nodes if n.label_origin != "annotator" and (force or not n.label)]
    return [n for n in todo if n.is_leaf], [n for n in todo if not n.is_leaf], kept


def _scope(version: TaxonomyVersion) -> str:
    repo = version.params.get("repository")
    what = "issue texts" if version.source == "issues" else "benchmark questions"
    return f"{what} of the repository {repo}" if repo else f"{what} about code repositories"


async def label_taxonomy(store: Store, client, *, model: str, params: dict | None = None, sample: int = 20,
                         seed: int = 0, by: str, version: int | None = None, force: bool = False,
                         on_progress: Callable[[JobProgress], None] | None = None,
                         on_outcome: Callable[[LabelOutcome], None] | None = None) -> LabelRun:
    """Label ``version``'s nodes (None: the latest) through ``client`` (an
    :class:`~benchwright.core.llm.client.LLMClient` with the ledger): each leaf from ``sample`` member texts drawn
    with ``seed`` (:func:`benchwright.core.taxonomy_labels.sample_members`), then each level-1 node from its
    leaves' labels. A failed or invalid call leaves its node unlabelled (it is in the ledger); the labels that
    came back are saved as one new version (operation ``label``), also after a cancel (then re-raised), so a
    rerun labels only what is left and a finished call is reused from the ledger.

    Raises:
        TaxonomyError: no taxonomy, or ``version`` is not the latest of its lineage (checked before any call).
    """
    tv = latest_version(store, version)
    newest = store.taxonomy_versions(tv.lineage)[-1].id
    if newest != tv.id:
        raise TaxonomyError(f"taxonomy version {tv.id} is not the latest of its lineage (version {newest} is); "
                            f"label version {newest}")
    tax = tv.taxonomy
    leaves, parents, kept = label_plan(tv, force=force)
    run = LabelRun(tv, kept_human=kept)
    scope = _scope(tv)
    project_dir = project_dir_of(store)
    total = len(leaves) + len(parents)
    texts = store.taxonomy_item_texts([i for n in [*leaves, *parents] for i in
                                       sample_members([m.item_id for m in tax.members_of(n.node_id)], sample, seed,
                                                      n.node_id)])
    results: dict[str, LabelOutcome] = {}

    def sampled(node: Node) -> list[str]:
        ids = sample_members([m.item_id for m in tax.members_of(node.node_id)], sample, seed, node.node_id)
        return [texts[i] for i in ids if i in texts]

    def keep(item, outcome: LabelOutcome) -> None:
        results[outcome.node_id] = outcome
        run.outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)

    async def leaf_work(node: Node) -> LabelOutcome:
        parent = tax.node(node.parent)
        req = leaf_request(model, params or {}, sampled(node), scope=scope, parent_label=parent.label,
                           project_dir=project_dir)
        return await label_node(client, node.node_id, req, force=force)

    def label_of(n: Node) -> tuple[str | None, str | None]:
        o = results.get(n.node_id)
        return (o.label, o.description) if o is not None and o.ok else (n.label, n.description)

    async def parent_work(node: Node) -> LabelOutcome:
        children = [(*label_of(c), c.size) for c in tax.children(node.node_id)]
        named = [(lab, desc, size) for lab, desc, size in children if lab]
        req = parent_request(model, params or {}, named, scope=scope, texts=[] if named else sampled(node),
                             project_dir=project_dir)
        return await label_node(client, node.node_id, req, force=force)

    first = JobProgress(total=total)

    def forward(base: JobProgress | None):
        def report(p: JobProgress) -> None:
            if on_progress is None:
                return
            if base is None:
                on_progress(replace(p, total=total))
                return
            on_progress(replace(p, total=total, done=base.done + p.done, failed=base.failed + p.failed,
                                calls=base.calls + p.calls, cached=base.cached + p.cached,
                                usage=base.usage + p.usage, cost_usd=base.cost_usd + p.cost_usd,
                                cost_unknown=base.cost_unknown + p.cost_unknown,
                                usage_missing=base.usage_missing + p.usage_missing,
                                unanswered=base.unanswered + p.unanswered, started=base.started))
        return report

    concurrency = getattr(client, "job_concurrency", None) or getattr(client.provider, "concurrency", 4)
    try:
        if leaves:
            first = await Job(leaf_work, concurrency=concurrency, tally=lambda o: o.tally(), on_result=keep,
                              on_progress=forward(None)).run(leaves)
        if parents:
            await Job(parent_work, concurrency=concurrency, tally=lambda o: o.tally(), on_result=keep,
                      on_progress=forward(first if leaves else None)).run(parents)
    except asyncio.CancelledError:
        run.cancelled = True
        run.new_version = _save_labels(store, tv, results, by=by, model=model, sample=sample, seed=seed)
        raise
    run.new_version = _save_labels(store, tv, results, by=by, model=model, sample=sample, seed=seed)
    return run


def _save_labels(store: Store, tv: TaxonomyVersion, results: dict[str, LabelOutcome], *, by: str, model: str,
                 sample: int, seed: int) -> int | None:
    ok = {nid: o for nid, o in results.items() if o.ok}
    if not ok:
        return None
    now = utc_now()
    labels = {nid: Node(nid, 0, None, 0, label=o.label, description=o.description, label_origin="llm",
                        label_model=o.model, label_call_ids=tuple(o.call_ids), label_by=by, label_at=now)
              for nid, o in ok.items()}
    new = tx.with_labels(tv.taxonomy, labels)
    if [(n.label, n.description) for n in new.nodes] == [(n.label, n.description) for n in tv.taxonomy.nodes]:
        return None
    args = {"model": model, "sample": sample, "seed": seed, "labelled": sorted(ok, key=tx.node_sort_key),
            "failed": sorted((nid for nid, o in results.items() if not o.ok), key=tx.node_sort_key)}
    return store.save_taxonomy(new, operation="label", source=tv.source, embedder_model=tv.embedder_model,
                               dimensions=tv.dimensions, by=by, parent_id=tv.id, operation_args=args,
                               params=tv.params)


# ------------------------------------------------------------------------------------------------ screen
@dataclass(frozen=True)
class NodeDetail:
    """What the taxonomy screen shows of one node: sample members ``(item id, text, distance)`` nearest to the
    centroid first, and the node's label history (oldest first)."""

    node: Node
    members: list[tuple[str, str | None, float | None]]
    history: list[LabelChange]


def node_detail(store: Store, version: TaxonomyVersion, node_id: str, *, sample: int = 8) -> NodeDetail:
    """The sample members and label history of ``node_id`` in ``version``.

    Raises:
        TaxonomyError: no such node.
    """
    node = version.taxonomy.node(node_id)
    members = [(m.item_id, text, m.distance)
               for m, text in store.taxonomy_node_members(version.id, node_id, limit=sample)]
    return NodeDetail(node, members, store.taxonomy_label_history(version.id, node_id))
