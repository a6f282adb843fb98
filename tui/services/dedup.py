"""Running semantic dedup over a project's pairs (SWE-QA-Pro §2.3): the questions embedded through the cache
(:func:`benchwright.tui.services.embeddings.embed_texts`), grouped by :func:`benchwright.core.dedup.find_groups`,
multi-query questions found by :func:`benchwright.core.dedup.multi_query_parts`, and the run saved whole
(:meth:`benchwright.db.Store.save_dedup_run`). Used by ``benchwright dedup``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchwright.core.dedup import (
    DEFAULT_MULTI_QUERY_RULE,
    DEFAULT_THRESHOLD,
    DedupError,
    DuplicateGroup,
    MultiQueryRule,
    find_groups,
    multi_query_parts,
)
from benchwright.core.vocabulary import DEDUP_SCOPES
from benchwright.db import QueueFilter, Store
from benchwright.db.dedup import DedupRun, GroupView

from .embeddings import EmbedderChoice, EmbeddingBatch, embed_texts


@dataclass(frozen=True)
class DedupOutcome:
    """What a dedup run found: its ``run_id``, the ``pair_count`` compared, the ``groups`` (cross-split ones among
    them), the multi-query questions ``{pair id: parts}``, and the embedding ``batch`` (its vectors dropped:
    model, dimensions, computed / cached counts, calls)."""

    run_id: int
    pair_count: int
    groups: tuple[DuplicateGroup, ...]
    multi_query: dict[str, list[str]]
    batch: EmbeddingBatch

    @property
    def cross_split(self) -> tuple[DuplicateGroup, ...]:
        """The groups whose members are in different splits (train vs test)."""
        return tuple(g for g in self.groups if g.kind == "cross-split")


def run_dedup(store: Store, *, annotator: str, flt: QueueFilter = QueueFilter(), threshold: float = DEFAULT_THRESHOLD,
              scope: str = "repository", across_splits: bool = False, choice: EmbedderChoice | None = None,
              rule: MultiQueryRule = DEFAULT_MULTI_QUERY_RULE, where: tuple[str, ...] = (),
              progress: Callable[[int, int], None] | None = None) -> DedupOutcome:
    """Dedup the pairs ``flt`` lets through (every pair by default) and save the run.

    ``scope``: ``repository`` compares questions within each repository, ``global`` across the project
    (:data:`~benchwright.core.vocabulary.DEDUP_SCOPES`); ``where`` is recorded with the run. ``progress(done,
    total)`` follows the embedding of texts not in the cache.

    Raises:
        DedupError: an unknown scope, a threshold outside (0, 1], or no pair to compare.
        EmbeddingError: the embedder cannot be loaded or used.
    """
    if scope not in DEDUP_SCOPES:
        raise DedupError(f"unknown dedup scope {scope!r}; use one of {', '.join(DEDUP_SCOPES)}")
    if not (0 < threshold <= 1):
        raise DedupError(f"the dedup threshold is a cosine similarity in (0, 1], not {threshold}")
    pairs = store.dedup_candidates(store.filtered_pair_ids(annotator, flt))
    if not pairs:
        raise DedupError("no pair to compare" + (" matches the filter" if where else " in the project"))
    batch = embed_texts(store, [p.question for p in pairs], choice, progress=progress)
    groups = find_groups([p.id for p in pairs], batch.vectors, threshold=threshold,
                         scope_keys=[p.repository if scope == "repository" else None for p in pairs],
                         splits=[p.split for p in pairs], across_splits=across_splits)
    multi = {p.id: parts for p in pairs if (parts := multi_query_parts(p.question, rule))}
    run_id = store.save_dedup_run(
        scope=scope, threshold=threshold, across_splits=across_splits, embedder_model=batch.model,
        dimensions=batch.dimensions, pair_count=len(pairs), groups=groups, multi_query=multi, annotator=annotator,
        params={"where": list(where), "provider": batch.provider})
    batch.vectors = batch.vectors[:0]
    return DedupOutcome(run_id, len(pairs), tuple(groups), multi, batch)


@dataclass(frozen=True)
class DuplicatesView:
    """What the duplicates screen shows: the ``group`` (None when there is none to show), the ``run`` it belongs to
    (None: dedup never ran), and how many groups of the latest run are ``unresolved``."""

    group: GroupView | None
    run: DedupRun | None
    unresolved: int


def duplicates_view(store: Store, *, group_id: int | None = None, pair_id: str | None = None) -> DuplicatesView:
    """The group ``group_id``, else the latest run's group of ``pair_id``, else the first unresolved group (queue
    order of representatives), else None; with the run and the count of unresolved groups."""
    run = store.latest_dedup_run()
    unresolved = store.duplicate_groups(unresolved=True)
    group = None
    if group_id is not None:
        group = store.duplicate_group(group_id)
    elif pair_id is not None:
        group = store.group_of_pair(pair_id)
    if group is None and unresolved:
        group = unresolved[0]
    return DuplicatesView(group, run, len(unresolved))


def neighbor_unresolved(store: Store, group: GroupView | None, step: int) -> GroupView | None:
    """The unresolved group of the latest run after (``step`` 1) or before (-1) ``group`` in queue order of the
    representatives (from the start, or the end, when ``group`` is None); None when there is none."""
    groups = store.duplicate_groups(unresolved=True)
    if not groups:
        return None
    if group is None:
        return groups[0] if step > 0 else groups[-1]
    key = (group.members[0].ordinal, group.id)  # members are in queue order: the first is the representative
    keys = [(g.members[0].ordinal, g.id) for g in groups]
    if step > 0:
        return next((g for g, k in zip(groups, keys, strict=True) if k > key), None)
    return next((g for g, k in reversed(list(zip(groups, keys, strict=True))) if k < key), None)
