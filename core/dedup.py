"""Semantic dedup of questions and multi-query detection (SWE-QA-Pro §2.3, "we remove near-duplicate questions
... and multi-query prompts"): pure functions over vectors and texts, no store.

Duplicate groups (:func:`find_groups`): every pair of questions whose embeddings have cosine similarity
>= ``threshold`` is an edge, compared only within one *scope* (a repository, or one global key) and, unless
``across_splits``, only within one split (pairs without a split count as one split of their own); groups are the
connected components of those edges (union-find). A group's representative is the member first in the queue
(the lowest index given), its kind ``cross-split`` when its members' splits differ, its signature the SHA-256 of
its sorted member ids (a resolution made on a group carries over to any later group with the same members).

Multi-query questions (:func:`multi_query_parts`): our deterministic rule (the paper gives none), documented in
docs/data-methods.md "Semantic dedup" and configurable through :class:`MultiQueryRule`.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .errors import BenchwrightError
from .vocabulary import DEDUP_DECISIONS

if TYPE_CHECKING:  # numpy loads with the first grouping: `benchwright dedup --help` stays light (issue 19)
    import numpy as np

DEFAULT_THRESHOLD = 0.9
"""``dedup --threshold``: cosine similarity at or above which two questions are near-duplicates (our default;
SWE-QA-Pro §2.3 names no value)."""

MAX_LINKS = 1_000_000
"""At most this many linked pairs of questions in one dedup run (ours): beyond it the threshold is far too low for
the texts (with a sentence embedder most questions of one project are 0.5-0.7 alike), the groups would be one
meaningless blob, and the links alone would fill the memory; the run stops with an error saying so."""

GROUP_KINDS = ("duplicate", "cross-split")
"""``duplicate_groups.kind``: every member in one split, or members in different splits (train vs test)."""


class DedupError(BenchwrightError):
    """Invalid dedup input: a threshold out of range, vectors and ids of different lengths, an invalid
    resolution (a pair that is not a member, an unknown decision)."""


class StaleResolutionError(DedupError):
    """A resolution was refused because another one of the same group was recorded since the caller read it
    (compare-and-set on the group's signature): nothing was written."""

    def __init__(self, current_id: int, annotator: str) -> None:
        self.current_id, self.annotator = current_id, annotator
        super().__init__(f"not saved: {annotator} resolved this group meanwhile (resolution {current_id}); "
                         "reload it and decide again")


@dataclass(frozen=True)
class Edge:
    """Two members (pair ids) of a group whose questions have cosine similarity ``score``."""

    a: str
    b: str
    score: float


@dataclass(frozen=True)
class DuplicateGroup:
    """One group of near-duplicate questions.

    Attributes:
        members: pair ids in queue order (the order given to :func:`find_groups`); the first is the representative.
        kind: one of :data:`GROUP_KINDS`.
        scope_key: the scope compared within (a repository name; None for a global run).
        signature: SHA-256 hex of the sorted member ids joined by newlines (:func:`group_signature`).
        edges: every similar pair that linked the group, highest score first.
        member_scores: per member, its highest similarity to another member.
        splits: per member, its split (None: none).
    """

    members: tuple[str, ...]
    kind: str
    scope_key: str | None
    signature: str
    edges: tuple[Edge, ...]
    member_scores: dict[str, float] = field(default_factory=dict)
    splits: dict[str, str | None] = field(default_factory=dict)

    @property
    def representative(self) -> str:
        """The member first in the queue."""
        return self.members[0]

    @property
    def max_score(self) -> float:
        """The highest similarity of any edge."""
        return max(e.score for e in self.edges)


def group_signature(member_ids: Sequence[str]) -> str:
    """SHA-256 hex over the sorted, distinct ``member_ids`` joined by ``\\n`` (order given does not matter)."""
    return hashlib.sha256("\n".join(sorted(set(member_ids))).encode("utf-8")).hexdigest()


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def find_groups(ids: Sequence[str], vectors: np.ndarray, *, threshold: float = DEFAULT_THRESHOLD,
                scope_keys: Sequence[str | None] | None = None, splits: Sequence[str | None] | None = None,
                across_splits: bool = False, block: int = 2048, max_links: int = MAX_LINKS) -> list[DuplicateGroup]:
    """Groups of near-duplicate questions (SWE-QA-Pro §2.3).

    Args:
        ids: pair ids in queue order (the first member of a group in this order is its representative).
        vectors: ``(len(ids), d)`` float32, rows L2-normalised (``tui.services.embeddings.embed_texts``).
        threshold: cosine similarity in (0, 1] at or above which two questions are linked.
        scope_keys: per id, the scope it is compared within (its repository; None everywhere, or omitted, for one
            global scope).
        splits: per id, its split (None: no split; all such pairs count as one split).
        across_splits: also link questions of different splits (a group whose splits differ is ``cross-split``).
        block: rows compared at a time (memory ``O(block * n)``).
        max_links: linked pairs allowed at most (:data:`MAX_LINKS`).

    Returns:
        The groups (two or more members each), ordered by their representative's position.

    Raises:
        DedupError: a threshold outside (0, 1], ``ids``, ``vectors``, ``scope_keys``, ``splits`` of different
            lengths, or more than ``max_links`` linked pairs (the threshold is too low).
    """
    import numpy as np

    from .embeddings import SimilarityLimitError, similar_pairs

    n = len(ids)
    if not (0 < threshold <= 1):  # also refuses nan
        raise DedupError(f"the dedup threshold is a cosine similarity in (0, 1], not {threshold}")
    v = np.asarray(vectors, dtype=np.float32)
    scope_keys = list(scope_keys) if scope_keys is not None else [None] * n
    splits = list(splits) if splits is not None else [None] * n
    if v.shape[0] != n or len(scope_keys) != n or len(splits) != n:
        raise DedupError(f"{n} ids but {v.shape[0]} vectors, {len(scope_keys)} scope keys, {len(splits)} splits")
    partitions: dict[tuple, list[int]] = {}
    for i in range(n):
        key = (scope_keys[i],) if across_splits else (scope_keys[i], splits[i])
        partitions.setdefault(key, []).append(i)
    uf = _UnionFind(n)
    edges: list[tuple[int, int, float]] = []
    for rows in partitions.values():
        if len(rows) < 2:
            continue
        try:
            linked = similar_pairs(v[rows], threshold, block=block, limit=max_links - len(edges))
        except SimilarityLimitError:
            raise DedupError(f"more than {max_links:,} pairs of questions are at least {threshold:g} alike: the "
                             f"threshold is too low to find duplicates (SWE-QA-Pro-style dedup uses about 0.9); "
                             f"raise --threshold") from None
        for p in linked:
            a, b = rows[p.i], rows[p.j]
            edges.append((a, b, p.score))
            uf.union(a, b)
    components: dict[int, list[int]] = {}
    for a, b, _ in edges:
        for x in (a, b):
            components.setdefault(uf.find(x), [])
    for i in range(n):
        root = uf.find(i)
        if root in components:
            components[root].append(i)
    by_root: dict[int, list[tuple[int, int, float]]] = {}
    for e in edges:
        by_root.setdefault(uf.find(e[0]), []).append(e)
    groups = []
    for root in sorted(components):
        members = sorted(set(components[root]))
        group_edges = sorted(by_root[root], key=lambda e: (-e[2], e[0], e[1]))
        best: dict[str, float] = {}
        for a, b, s in group_edges:
            for x in (a, b):
                best[ids[x]] = max(best.get(ids[x], -1.0), s)
        member_ids = tuple(ids[i] for i in members)
        member_splits = {ids[i]: splits[i] for i in members}
        groups.append(DuplicateGroup(
            members=member_ids,
            kind="cross-split" if len(set(member_splits.values())) > 1 else "duplicate",
            scope_key=scope_keys[members[0]],
            signature=group_signature(member_ids),
            edges=tuple(Edge(ids[a], ids[b], round(s, 6)) for a, b, s in group_edges),
            member_scores={k: round(s, 6) for k, s in best.items()},
            splits=member_splits,
        ))
    return groups


# ------------------------------------------------------------------------------------------- resolutions
@dataclass(frozen=True)
class Resolution:
    """What a resolution keeps and drops: ``decision`` (:data:`~benchwright.core.vocabulary.DEDUP_DECISIONS`),
    ``kept`` and ``dropped`` pair ids (queue order), ``merged_into`` (the kept pair of a merge)."""

    decision: str
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    merged_into: str | None = None


def plan_resolution(members: Sequence[str], decision: str, target: str | None = None) -> Resolution:
    """The resolution of a group of ``members`` (queue order): ``keep-one`` keeps ``target`` and drops the
    others, ``keep-both`` keeps every member (not duplicates), ``merge`` keeps ``target`` and records the others as
    merged into it. Nothing is deleted either way: dropped pairs stay in the project, out of dedup's survivors.

    Raises:
        DedupError: an unknown decision, a missing ``target`` for keep-one or merge, a ``target`` for keep-both,
            or a ``target`` that is not a member.
    """
    if decision not in DEDUP_DECISIONS:
        raise DedupError(f"unknown dedup decision {decision!r}; use one of {', '.join(DEDUP_DECISIONS)}")
    if decision == "keep-both":
        if target is not None:
            raise DedupError("keep-both keeps every member: name no pair")
        return Resolution(decision, tuple(members), ())
    if target is None:
        raise DedupError(f"{decision} needs the pair to keep")
    if target not in members:
        raise DedupError(f"{target} is not a member of this group (members: {', '.join(members)})")
    dropped = tuple(m for m in members if m != target)
    return Resolution(decision, (target,), dropped, target if decision == "merge" else None)


# ------------------------------------------------------------------------------------------- multi-query
_WH = r"(?:what|which|how|why|where|when|who|whom|whose|is|are|does|do|can|could|should|would|will)"


@dataclass(frozen=True)
class MultiQueryRule:
    """Our rule for "a question that asks several things" (SWE-QA-Pro §2.3 removes multi-query prompts and gives
    no rule). Code (fenced blocks, inline backticks) is set aside first, and a ``?`` counts as the end of a
    question only when followed by white space or the end of the text (so ``re.compile('a?b')`` or ``x?.y`` does
    not count). A question is multi-query when any of the enabled tests holds:

    Attributes:
        min_questions: at least this many sentences ending in ``?``, each of at least ``min_words`` words.
        min_words: words a part needs to count as a question of its own.
        enumerated: two or more numbered or bulleted lines (``1.``, ``2)``, ``(a)``, ``-``, ``*``, ``•``), at least
            one of them ending in ``?``.
        joins: regular expressions (case-insensitive) of joins that start a second question inside one sentence;
            the default: ``, and`` / ``; and`` / ``and also`` / ``additionally,`` / ``also,`` followed by a
            question word (``what``, ``how``, ``which``...). A join without a comma (``... and when is it
            applied?``) does not count: too many single questions read so.
    """

    min_questions: int = 2
    min_words: int = 3
    enumerated: bool = True
    joins: tuple[str, ...] = (
        rf"[,;]\s+and\s+(?:also\s+)?(?={_WH}\b)",
        rf"\band\s+also\s+(?={_WH}\b)",
        rf"\badditionally,?\s+(?={_WH}\b)",
        rf"[,;]\s+also,?\s+(?={_WH}\b)",
    )


DEFAULT_MULTI_QUERY_RULE = MultiQueryRule()

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_INLINE = re.compile(r"`[^`\n]*`")
_QEND = re.compile(r"\?(?=\s|\Z)")
_ITEM = re.compile(r"^\s*(?:\d{1,2}[.)]|\([a-zA-Z0-9]{1,2}\)|[a-zA-Z][.)]|[-*•])\s+(\S.*)$")
_WORD = re.compile(r"[^\W\d_][\w'-]*")


def _mask_code(text: str) -> str:
    """``text`` with code replaced by spaces (line breaks kept, so positions and lines match ``text``)."""
    for pattern in (_FENCE, _INLINE):
        text = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return text


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.I)


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def multi_query_parts(question: str, rule: MultiQueryRule = DEFAULT_MULTI_QUERY_RULE) -> list[str]:
    """The questions inside ``question`` when it asks several (two or more parts, as written, stripped), else an
    empty list. The tests are those of :class:`MultiQueryRule`, tried in order: enumerated sub-questions, several
    ``?``-ended sentences, joins."""
    masked = _mask_code(question)
    if rule.enumerated and "\n" in masked:
        items = []
        for line, shown in zip(masked.splitlines(), question.splitlines(), strict=True):
            m = _ITEM.match(line)
            if m:
                items.append((m.group(1).rstrip(), shown[m.start(1):].strip()))
        if len(items) >= 2 and any(t.endswith("?") for t, _ in items):
            return [s for _, s in items]
    if masked.count("?") >= rule.min_questions:
        starts, parts = 0, []
        for m in _QEND.finditer(masked):
            parts.append((masked[starts:m.end()], question[starts:m.end()].strip()))
            starts = m.end()
        asked = [shown for part, shown in parts if _words(part) >= rule.min_words]
        if len(asked) >= rule.min_questions:
            return asked
    for pattern in rule.joins:
        cuts = list(_compiled(pattern).finditer(masked))
        if not cuts:
            continue
        pieces, last = [], 0
        for m in cuts:
            pieces.append(question[last:m.start()])
            last = m.end()
        pieces.append(question[last:])
        pieces = [p.strip(" ,;.") for p in pieces]
        if len(pieces) >= 2 and all(_words(p) >= rule.min_words for p in pieces):
            return pieces
    return []
