"""Semantic dedup in the store (SWE-QA-Pro §2.3; tables ``dedup_runs``, ``duplicate_groups``, ``duplicate_members``,
``duplicate_resolutions``, ``multi_query_flags`` of m020, docs/store.md): a run saved whole, the latest run's
groups with their resolutions (looked up by signature, so a resolution carries over to a rerun's group with the
same members), resolving a group (compare-and-set), and each pair's dedup status. Every table is append-only:
nothing is ever deleted, a resolution says what is kept.

The groups are computed in :mod:`benchwright.core.dedup`; the queue filters' SQL is in
:mod:`benchwright.db.data_filters` (reused here, not restated).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from benchwright.core.dedup import DuplicateGroup, Resolution, StaleResolutionError, plan_resolution
from benchwright.core.errors import NotFoundError
from benchwright.core.models import utc_now
from benchwright.core.vocabulary import DEDUP_FILTERS

from . import data_filters
from .locking import serialized

ANY_RESOLUTION = object()
"""``expected=`` of :meth:`DedupStoreMixin.resolve_duplicate_group` meaning "whatever is current" (no
compare-and-set)."""


@dataclass(frozen=True)
class DedupCandidate:
    """A pair as dedup reads it: ``id``, queue ``ordinal``, ``repository``, ``split``, ``question``."""

    id: str
    ordinal: int
    repository: str | None
    split: str | None
    question: str


@dataclass(frozen=True)
class DedupRun:
    """One ``dedup_runs`` row (see docs/store.md)."""

    id: int
    scope: str
    threshold: float
    across_splits: bool
    embedder_model: str
    dimensions: int
    params: dict
    pair_count: int
    group_count: int
    cross_split_group_count: int
    multi_query_count: int
    created_at: str
    created_by: str


@dataclass(frozen=True)
class GroupMember:
    """A member of a duplicate group: the pair's ``id``, queue ``ordinal``, ``split``, ``score`` (its highest
    similarity in the group), current ``question`` and ``answer`` (None: needs one), ``repository``."""

    id: str
    ordinal: int
    split: str | None
    score: float
    question: str
    answer: str | None
    repository: str | None


@dataclass(frozen=True)
class GroupResolution:
    """The current resolution of a group's signature (``duplicate_resolutions``)."""

    id: int
    decision: str
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    merged_into: str | None
    note: str | None
    annotator: str
    created_at: str


@dataclass(frozen=True)
class GroupView:
    """A duplicate group of a dedup run, its members in queue order, its edges ``(a, b, score)`` and its current
    resolution (None: unresolved)."""

    id: int
    run_id: int
    kind: str
    scope_key: str | None
    signature: str
    representative: str
    max_score: float
    edges: tuple[tuple[str, str, float], ...]
    members: tuple[GroupMember, ...]
    resolution: GroupResolution | None

    @property
    def member_ids(self) -> tuple[str, ...]:
        """Member pair ids in queue order."""
        return tuple(m.id for m in self.members)


class DedupStoreMixin:
    """Dedup methods of :class:`benchwright.db.Store`."""

    # ------------------------------------------------------------------ input
    @serialized
    def dedup_candidates(self, pair_ids: Sequence[str]) -> list[DedupCandidate]:
        """The pairs ``pair_ids`` with what dedup needs (their current question), in queue order; unknown ids are
        left out."""
        out: list[DedupCandidate] = []
        ids = list(dict.fromkeys(pair_ids))
        for start in range(0, len(ids), 900):
            chunk = ids[start:start + 900]
            out += [DedupCandidate(*r) for r in self.db.conn.execute(
                f"SELECT id, ordinal, repository, split, question FROM qa_pairs "
                f"WHERE id IN ({', '.join('?' * len(chunk))})", chunk)]
        out.sort(key=lambda c: c.ordinal)
        return out

    # ------------------------------------------------------------------ runs
    def save_dedup_run(self, *, scope: str, threshold: float, across_splits: bool, embedder_model: str,
                       dimensions: int, pair_count: int, groups: Sequence[DuplicateGroup],
                       multi_query: dict[str, list[str]], annotator: str, params: dict | None = None) -> int:
        """Save one dedup run in one transaction: the run, its groups with their members and edges, and the
        multi-query flags (``{pair id: parts}``). Returns the run id (the latest run is the one that counts)."""
        now = utc_now()
        cross = sum(1 for g in groups if g.kind == "cross-split")
        with self.write() as db:
            conn = db.conn
            run_id = conn.execute(
                """INSERT INTO dedup_runs (scope, threshold, across_splits, embedder_model, dimensions, params_json,
                       pair_count, group_count, cross_split_group_count, multi_query_count, created_at, created_by)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (scope, threshold, int(across_splits), embedder_model, dimensions,
                 json.dumps(params or {}, ensure_ascii=False, sort_keys=True), pair_count, len(groups), cross,
                 len(multi_query), now, annotator)).lastrowid
            for g in groups:
                gid = conn.execute(
                    """INSERT INTO duplicate_groups (run_id, kind, scope_key, signature, representative, max_score,
                           edges_json) VALUES (?, ?, ?, ?, ?, ?, ?)""",
                    (run_id, g.kind, g.scope_key, g.signature, g.representative, g.max_score,
                     json.dumps([{"a": e.a, "b": e.b, "score": e.score} for e in g.edges]))).lastrowid
                conn.executemany(
                    "INSERT INTO duplicate_members (group_id, qa_pair_id, split, max_score) VALUES (?, ?, ?, ?)",
                    [(gid, m, g.splits.get(m), g.member_scores.get(m, g.max_score)) for m in g.members])
            conn.executemany("INSERT INTO multi_query_flags (run_id, qa_pair_id, parts_json) VALUES (?, ?, ?)",
                             [(run_id, pid, json.dumps(parts, ensure_ascii=False))
                              for pid, parts in multi_query.items()])
        return run_id

    @serialized
    def latest_dedup_run(self) -> DedupRun | None:
        """The latest dedup run (the one whose groups count), or None when dedup never ran."""
        r = self._one(
            """SELECT id, scope, threshold, across_splits, embedder_model, dimensions, params_json, pair_count,
                      group_count, cross_split_group_count, multi_query_count, created_at, created_by
               FROM dedup_runs ORDER BY id DESC LIMIT 1""")
        if r is None:
            return None
        return DedupRun(r[0], r[1], r[2], bool(r[3]), r[4], r[5], json.loads(r[6]), *r[7:])

    # ------------------------------------------------------------------ groups
    @serialized
    def duplicate_groups(self, *, run_id: int | None = None, unresolved: bool = False,
                         cross_split: bool = False) -> list[GroupView]:
        """The groups of run ``run_id`` (default: the latest run), ordered by their representative's queue
        position; only unresolved ones, only cross-split ones when asked."""
        if run_id is None:
            row = self._one("SELECT max(id) FROM dedup_runs")
            run_id = row[0] if row else None
            if run_id is None:
                return []
        where = ["g.run_id = ?"]
        if cross_split:
            where.append("g.kind = 'cross-split'")
        rows = self.db.conn.execute(
            f"""SELECT g.id FROM duplicate_groups g JOIN qa_pairs p ON p.id = g.representative
                WHERE {' AND '.join(where)} ORDER BY p.ordinal, g.id""", [run_id]).fetchall()
        groups = [self._group_view(r[0]) for r in rows]
        return [g for g in groups if g.resolution is None] if unresolved else groups

    @serialized
    def duplicate_group(self, group_id: int) -> GroupView:
        """The group ``group_id`` with its members and current resolution.

        Raises:
            NotFoundError: no such group.
        """
        return self._group_view(group_id)

    @serialized
    def group_of_pair(self, pair_id: str) -> GroupView | None:
        """The group of the latest dedup run that ``pair_id`` is a member of, or None."""
        row = self._one(
            f"""SELECT g.id FROM duplicate_members m JOIN duplicate_groups g ON g.id = m.group_id
                WHERE m.qa_pair_id = ? AND g.run_id = {data_filters.LATEST_DEDUP_RUN}""", [pair_id])
        return self._group_view(row[0]) if row else None

    def _group_view(self, group_id: int) -> GroupView:
        conn = self.db.conn
        g = conn.execute(
            """SELECT id, run_id, kind, scope_key, signature, representative, max_score, edges_json
               FROM duplicate_groups WHERE id = ?""", [group_id]).fetchone()
        if g is None:
            raise NotFoundError(f"no duplicate group {group_id}")
        members = tuple(GroupMember(*r) for r in conn.execute(
            """SELECT p.id, p.ordinal, m.split, m.max_score, p.question,
                      CASE WHEN p.needs_reference THEN NULL ELSE p.reference_answer END, p.repository
               FROM duplicate_members m JOIN qa_pairs p ON p.id = m.qa_pair_id
               WHERE m.group_id = ? ORDER BY p.ordinal""", [group_id]))
        edges = tuple((e["a"], e["b"], float(e["score"])) for e in json.loads(g[7]))
        return GroupView(g[0], g[1], g[2], g[3], g[4], g[5], g[6], edges, members, self._resolution_of(g[4]))

    def _resolution_of(self, signature: str) -> GroupResolution | None:
        r = self.db.conn.execute(
            """SELECT id, decision, kept_json, dropped_json, merged_into, note, annotator, created_at
               FROM duplicate_resolutions WHERE signature = ? ORDER BY id DESC LIMIT 1""", [signature]).fetchone()
        if r is None:
            return None
        return GroupResolution(r[0], r[1], tuple(json.loads(r[2])), tuple(json.loads(r[3])), r[4], r[5], r[6],
                               r[7])

    def resolve_duplicate_group(self, group_id: int, decision: str, target: str | None, *, annotator: str,
                                note: str | None = None, expected: int | object | None = ANY_RESOLUTION) -> int:
        """Record ``annotator``'s resolution of group ``group_id`` (:func:`benchwright.core.dedup.plan_resolution`:
        ``keep-one`` TARGET, ``keep-both``, ``merge`` into TARGET), for its signature: it holds for every group
        with the same members, in this run and later ones. Nothing is deleted; a later resolution replaces it.

        ``expected``: the resolution id the caller saw (None: none); when another resolution of the signature was
        recorded since, nothing is written.

        Returns the new resolution's id.

        Raises:
            NotFoundError: no such group.
            DedupError: an invalid decision or a target that is not a member.
            StaleResolutionError: ``expected`` is not the current resolution.
        """
        with self.write() as db:
            view = self._group_view(group_id)
            plan: Resolution = plan_resolution(view.member_ids, decision, target)
            current = view.resolution
            if expected is not ANY_RESOLUTION and (current.id if current else None) != expected:
                raise StaleResolutionError(current.id if current else 0, current.annotator if current else "?")
            return db.conn.execute(
                """INSERT INTO duplicate_resolutions (signature, group_id, decision, kept_json, dropped_json,
                       merged_into, note, annotator, created_at, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (view.signature, group_id, plan.decision, json.dumps(list(plan.kept)), json.dumps(list(plan.dropped)),
                 plan.merged_into, note, annotator, utc_now(), uuid.uuid4().hex)).lastrowid

    @serialized
    def multi_query_parts_of(self, pair_id: str) -> list[str] | None:
        """The parts the latest dedup run found in ``pair_id``'s question when it flagged it multi-query, else
        None."""
        row = self._one(
            f"SELECT parts_json FROM multi_query_flags WHERE qa_pair_id = ? AND run_id = {data_filters.LATEST_DEDUP_RUN}",
            [pair_id])
        return json.loads(row[0]) if row else None

    @serialized
    def pair_splits(self) -> list[str]:
        """The distinct splits of the project's pairs (``qa_pairs.split``), sorted; for the queue's data filter.

        One index seek per split (the partial index ``qa_pairs_split``, m025), not a pass over the pairs."""
        return [r[0] for r in self.db.conn.execute(
            """WITH RECURSIVE v(split) AS (
                   SELECT min(split) FROM qa_pairs WHERE split IS NOT NULL
                   UNION ALL
                   SELECT (SELECT min(q.split) FROM qa_pairs q WHERE q.split > v.split) FROM v
                   WHERE v.split IS NOT NULL)
               SELECT split FROM v WHERE split IS NOT NULL""")]

    # ------------------------------------------------------------------ status
    @serialized
    def dedup_status(self, pair_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """``{pair id: the dedup filter values it matches}`` (:data:`~benchwright.core.vocabulary.DEDUP_FILTERS`
        but ``any`` and ``none``, by the SQL of the queue filter ``dedup=``) over the latest run, for the pairs of
        ``pair_ids`` in at least one; a pair in none is absent."""
        out: dict[str, list[str]] = {}
        ids = list(dict.fromkeys(pair_ids))
        values = [v for v in DEDUP_FILTERS if v not in ("any", "none")]
        for start in range(0, len(ids), 900):
            chunk = ids[start:start + 900]
            for value in values:
                for (pid,) in self.db.conn.execute(
                        f"SELECT p.id FROM qa_pairs p WHERE p.id IN ({', '.join('?' * len(chunk))}) "
                        f"AND {data_filters.dedup_sql(value)}", chunk):
                    out.setdefault(pid, []).append(value)
        return {pid: tuple(v) for pid, v in out.items()}
