"""Balanced sampling over the taxonomy (SWE-QA-Pro §2.4): a few questions per semantic cluster, QA types about
even, drawn reproducibly from a seed.

SWE-QA-Pro §2.4 keeps 4-9 questions per cluster and balances the QA types; it does not say how. Our algorithm
(:func:`balanced_sample`, docs/data-methods.md "Balanced sampling"):

1. Candidates are sorted by pair id, so the input order never matters. Each cluster's candidates are shuffled by
   a seeded hash: ordered by SHA-256 of (seed, cluster, pair id) (:func:`_shuffled`), so one cluster's draw does
   not change when another cluster gains or loses candidates, and the same seed gives the same sample on any
   machine and with any numpy version (a numpy ``Generator``'s streams may change between versions). Clusters take
   turns in an order shuffled the same way.
2. **Minimum**: rounds over the clusters, one pair per cluster per round, until each cluster holds ``lo`` pairs
   (or has none left, or ``total`` is reached).
3. **Fill**: further rounds, one pair per cluster below ``hi`` per round, until ``total`` pairs are drawn or no
   cluster can take more. Without ``total`` every cluster is filled to ``hi``.
4. **Which pair**: with ``balance="qa-type"`` a cluster draws from the QA type it has drawn least so far (the
   minimum: a round-robin over its types), ties going to the type least represented in the whole sample so far,
   then to a seeded order of types; in the fill, the type least represented in the whole sample comes first.
   Pairs without a QA type are drawn only when the cluster has no typed pair left. With ``balance=None`` a
   cluster takes its next pair in shuffled order.

Pairs without a cluster form the bucket :data:`UNCLUSTERED`, left out unless ``include_unclustered`` (then it is
sampled like any cluster).

Shortfalls (:class:`Shortfall`) say where the sample falls short of the rule: a cluster with fewer than ``lo``
pairs drawn (too few candidates, or ``total`` too small for every cluster's minimum), a ``total`` that could not
be reached, QA types far from even (:data:`QA_TYPE_TOLERANCE`), and drawn pairs without a QA type.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from .errors import BenchwrightError

SAMPLE_BALANCES = ("qa-type", "none")
"""``sample --balance``: even QA types (the default, §2.4) or none (each cluster's pairs in shuffled order)."""

DEFAULT_PER_CLUSTER = (4, 9)
"""SWE-QA-Pro §2.4: 4 to 9 questions per semantic cluster."""

UNCLUSTERED = "unclustered"
"""The bucket of pairs without a cluster (left out unless ``include_unclustered``)."""

NO_QA_TYPE = "(none)"
"""The coverage column of pairs without a QA type."""

QA_TYPE_TOLERANCE = 0.2
"""A QA type is *far from even* when its count in the sample differs from the even share (pairs with a QA type /
QA types present among the candidates) by more than this share of it and by more than one pair."""

SELECTION_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""A selection's name: 1 to 64 letters, digits, ``.``, ``_``, ``-``."""


class Candidate(NamedTuple):
    """A pair that may be drawn: its id, cluster (None: unclustered), QA type (None: none) and queue position."""

    pair_id: str
    cluster: str | None
    qa_type: str | None
    ordinal: int = 0


@dataclass(frozen=True)
class Shortfall:
    """Where a sample falls short of the rule.

    ``kind`` is ``cluster`` (a cluster drew fewer than the minimum: ``subject`` is the cluster, ``reason``
    ``few-candidates`` or ``total``), ``total`` (fewer pairs than ``--total``) or ``qa-type`` (``subject`` is a QA
    type far from even, ``reason`` ``over`` or ``under``; or :data:`NO_QA_TYPE`, ``reason`` ``untyped``: ``got``
    drawn pairs have no QA type). ``wanted`` and ``got`` are counts of pairs; ``short`` is
    ``wanted - got`` (negative for a QA type over its share); ``detail`` says it in words."""

    kind: str
    subject: str
    wanted: float
    got: int
    reason: str
    detail: str

    @property
    def short(self) -> float:
        return self.wanted - self.got

    def to_dict(self) -> dict:
        """The JSON form stored in ``selections.shortfalls_json``."""
        return {"kind": self.kind, "subject": self.subject, "wanted": self.wanted, "got": self.got,
                "reason": self.reason, "detail": self.detail}

    @classmethod
    def from_dict(cls, d: dict) -> Shortfall:
        return cls(d["kind"], d["subject"], d["wanted"], d["got"], d["reason"], d["detail"])


@dataclass(frozen=True)
class Sample:
    """A balanced sample: ``members`` in draw order, ``coverage`` ``{cluster: {qa_type: n}}`` (every cluster of
    the candidates, with 0 where none was drawn; :data:`NO_QA_TYPE` for pairs without a QA type), the
    ``shortfalls``, ``candidates`` per cluster, and ``unclustered``: candidates left out for having no cluster."""

    members: list[Candidate]
    coverage: dict[str, dict[str, int]]
    shortfalls: list[Shortfall]
    candidates: dict[str, int] = field(default_factory=dict)
    unclustered: int = 0

    @property
    def qa_types(self) -> list[str]:
        """The coverage columns: the QA types of the candidates, sorted, :data:`NO_QA_TYPE` last."""
        seen = {t for row in self.coverage.values() for t in row}
        return sorted(seen - {NO_QA_TYPE}) + ([NO_QA_TYPE] if NO_QA_TYPE in seen else [])


def parse_per_cluster(text: str) -> tuple[int, int]:
    """``"4..9"`` (or ``"4-9"``, or ``"5"`` for exactly 5) as ``(lo, hi)``.

    Raises:
        BenchwrightError: not ``LO..HI`` with 0 <= LO <= HI and HI >= 1."""
    m = re.fullmatch(r"\s*(\d{1,6})\s*(?:(?:\.\.|-)\s*(\d{1,6}))?\s*", text)
    if m is None:
        raise BenchwrightError(f"--per-cluster {text!r}: write LO..HI, e.g. 4..9 (SWE-QA-Pro §2.4)")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) is not None else lo
    if lo > hi or hi < 1:
        raise BenchwrightError(f"--per-cluster {text!r}: the minimum {lo} must be at most the maximum {hi}, "
                               "and the maximum at least 1")
    return lo, hi


def check_selection_name(name: str) -> str:
    """``name`` when it is a valid selection name (:data:`SELECTION_NAME`).

    Raises:
        BenchwrightError: it is not."""
    if not SELECTION_NAME.fullmatch(name):
        raise BenchwrightError(f"selection name {name[:80]!r}: use 1 to 64 letters, digits, '.', '_' or '-'")
    return name


def _shuffled(seed: int, scope: str, keys: Iterable[str]) -> list[str]:
    """``keys`` in a random order drawn from ``seed`` and ``scope``: sorted by SHA-256 of (seed, scope, key), a
    uniform shuffle that every machine and Python or numpy version reproduces."""
    def rank(key: str) -> bytes:
        return hashlib.sha256(f"{seed}\x00{scope}\x00{key}".encode("utf-8", "surrogatepass")).digest()

    return sorted(keys, key=lambda k: (rank(k), k))


class _Cluster:
    """One cluster's shuffled queues: per QA type, and all together (for ``balance=None``)."""

    def __init__(self, name: str, items: list[Candidate], seed: int):
        by_id = {c.pair_id: c for c in items}
        self.shuffled = [by_id[i] for i in _shuffled(seed, "cluster\x00" + name, by_id)]
        self.by_type: dict[str | None, list[Candidate]] = {}
        for c in self.shuffled:
            self.by_type.setdefault(c.qa_type, []).append(c)
        self.taken: list[Candidate] = []
        self.drawn: Counter[str | None] = Counter()

    @property
    def left(self) -> int:
        return len(self.shuffled) - len(self.taken)

    def take(self, balance: bool, overall: Counter, type_rank: dict[str | None, int], *, minimum: bool) -> Candidate:
        if not balance:
            c = self.shuffled[len(self.taken)]
        else:
            typed = [t for t, q in self.by_type.items() if q and t is not None]
            pool = typed or [None]

            def key(t):
                local, total = self.drawn[t], overall[t]
                return (local, total, type_rank[t]) if minimum else (total, local, type_rank[t])

            t = min(pool, key=key)
            c = self.by_type[t].pop(0)
        self.taken.append(c)
        self.drawn[c.qa_type] += 1
        return c


def balanced_sample(candidates: Iterable[Candidate | Sequence], *, per_cluster: tuple[int, int] = DEFAULT_PER_CLUSTER,
                    total: int | None = None, balance: str | None = "qa-type", seed: int = 0,
                    include_unclustered: bool = False) -> Sample:
    """Draw a balanced sample (SWE-QA-Pro §2.4; the algorithm is this module's docstring).

    Args:
        candidates: :class:`Candidate` or ``(pair_id, cluster, qa_type, ordinal)`` tuples; an id given twice
            counts once (its first cluster and type in id order).
        per_cluster: ``(lo, hi)``: the minimum and maximum drawn per cluster.
        total: pairs wanted in all; None: every cluster up to ``hi``.
        balance: ``"qa-type"`` or None (``"none"`` is None).
        seed: any integer; the same candidates and seed give the same sample, in any input order.
        include_unclustered: sample the pairs without a cluster as the bucket :data:`UNCLUSTERED`.

    Returns:
        the :class:`Sample`.

    Raises:
        BenchwrightError: ``lo > hi``, ``hi < 1``, a negative ``total``, an unknown ``balance``; with
            ``include_unclustered``, a real cluster named :data:`UNCLUSTERED` while some pairs have none.
    """
    lo, hi = per_cluster
    if lo < 0 or lo > hi or hi < 1:
        raise BenchwrightError(f"per cluster {lo}..{hi}: need 0 <= minimum <= maximum and maximum >= 1")
    if total is not None and total < 1:
        raise BenchwrightError(f"total {total}: ask for at least one pair")
    if balance == "none":
        balance = None
    if balance not in (None, "qa-type"):
        raise BenchwrightError(f"balance {balance!r}: use one of {', '.join(SAMPLE_BALANCES)}")
    items: dict[str, Candidate] = {}
    for c in sorted((Candidate(*c) for c in candidates), key=lambda c: c.pair_id):
        items.setdefault(c.pair_id, c)
    groups: dict[str, list[Candidate]] = {}
    unclustered = 0
    bucketed = False
    for c in items.values():
        if c.cluster is None or c.cluster == "":
            if not include_unclustered:
                unclustered += 1
                continue
            c = c._replace(cluster=UNCLUSTERED)
            bucketed = True
        groups.setdefault(c.cluster, []).append(c)
    if bucketed and any(c.cluster == UNCLUSTERED for c in items.values()):
        # a real cluster of that name would silently merge with the pairs that have none
        raise BenchwrightError(f"a cluster is named {UNCLUSTERED!r}, the name --include-unclustered gives the "
                               "pairs without a cluster; rename that cluster, or leave out --include-unclustered")
    names = sorted(groups)
    clusters = {n: _Cluster(n, groups[n], seed) for n in names}
    turn = _shuffled(seed, "turns", names)
    types = sorted({c.qa_type for g in groups.values() for c in g if c.qa_type is not None})
    type_rank: dict[str | None, int] = {t: r for r, t in enumerate(_shuffled(seed, "types", types))}
    type_rank[None] = len(types)
    overall: Counter[str | None] = Counter()
    members: list[Candidate] = []
    cap = total if total is not None else sum(min(hi, len(g)) for g in groups.values())

    def rounds(limit: int, minimum: bool) -> None:
        while len(members) < cap:
            took = False
            for n in turn:
                cl = clusters[n]
                if len(cl.taken) >= limit or cl.left == 0:
                    continue
                c = cl.take(balance is not None, overall, type_rank, minimum=minimum)
                overall[c.qa_type] += 1
                members.append(c)
                took = True
                if len(members) >= cap:
                    return
            if not took:
                return

    rounds(lo, True)
    rounds(hi, False)
    coverage = {n: {t if t is not None else NO_QA_TYPE: 0 for t in {c.qa_type for c in groups[n]}} for n in names}
    for c in members:
        coverage[c.cluster][c.qa_type if c.qa_type is not None else NO_QA_TYPE] += 1
    coverage = {n: dict(sorted(row.items())) for n, row in coverage.items()}
    shortfalls = _shortfalls(clusters, names, lo, hi, total, members, types)
    return Sample(members, coverage, shortfalls, {n: len(groups[n]) for n in names}, unclustered)


def _short(name: str, limit: int = 80) -> str:
    """A name from data cut for a message (a 1 MB cluster name is not repeated whole)."""
    return name if len(name) <= limit else name[:limit] + "…"


def _shortfalls(clusters: dict[str, _Cluster], names: list[str], lo: int, hi: int, total: int | None,
                members: list[Candidate], types: list[str]) -> list[Shortfall]:
    out: list[Shortfall] = []
    for n in names:
        cl = clusters[n]
        got = len(cl.taken)
        if got >= lo:
            continue
        if cl.left == 0:
            out.append(Shortfall("cluster", n, lo, got, "few-candidates",
                                 f"cluster {_short(n)}: {got} drawn, {lo - got} short of the minimum {lo}: it has only "
                                 f"{len(cl.shuffled)} candidate{'' if len(cl.shuffled) == 1 else 's'}"))
        else:
            out.append(Shortfall("cluster", n, lo, got, "total",
                                 f"cluster {_short(n)}: {got} drawn, {lo - got} short of the minimum {lo}: --total {total} "
                                 f"is below {lo} x {len(names)} clusters"))
    if total is not None and len(members) < total:
        capacity = sum(min(hi, len(clusters[n].shuffled)) for n in names)
        out.append(Shortfall("total", "total", total, len(members), "capacity",
                             f"total: {len(members)} drawn, {total - len(members)} short of --total {total}: "
                             f"{len(names)} cluster{'' if len(names) == 1 else 's'} hold at most {capacity} at up to "
                             f"{hi} each"))
    typed = [c for c in members if c.qa_type is not None]
    if len(typed) < len(members):
        untyped = len(members) - len(typed)
        out.append(Shortfall("qa-type", NO_QA_TYPE, 0, untyped, "untyped",
                             f"QA types: {untyped} of the {len(members)} pairs drawn have no QA type "
                             f"({'none of them can be balanced' if not typed else 'they are drawn last'}; "
                             "set QA types on import or by annotation)"))
    if types and typed:
        even = len(typed) / len(types)
        counts = Counter(c.qa_type for c in typed)
        available = Counter(c.qa_type for cl in clusters.values() for c in cl.shuffled)
        for t in types:
            got = counts.get(t, 0)
            if abs(got - even) > max(1.0, QA_TYPE_TOLERANCE * even):
                reason = "under" if got < even else "over"
                out.append(Shortfall("qa-type", t, round(even, 2), got, reason,
                                     f"QA type {_short(t)}: {got} drawn, the even share is {even:.1f} "
                                     f"({'under' if got < even else 'over'} it by more than "
                                     f"{QA_TYPE_TOLERANCE:.0%} and one pair; {available[t]} candidates "
                                     "have it)"))
    return out


@dataclass(frozen=True)
class Selection:
    """A stored selection (``selections``, m020): ``version`` counts the selections of its ``name`` (1 for the
    first; re-using a name makes a new version, the old ones stay); ``params`` are ``per_cluster`` ``[lo, hi]``,
    ``balance``, ``total``, ``where``, ``survivors``, ``include_unclustered``; ``coverage`` is ``{cluster: {qa_type:
    n}}``; ``shortfalls`` :class:`Shortfall` dicts."""

    id: int
    name: str
    version: int
    params: dict
    seed: int | None
    size: int
    coverage: dict
    shortfalls: list
    created_at: str
    created_by: str

    @property
    def label(self) -> str:
        """``NAME v2``."""
        return f"{self.name} v{self.version}"

    def manifest_entry(self, released: int) -> dict:
        """What a release made from this selection records (manifest ``selection``): name, version, size, how many
        of its pairs the release holds (``released``), the seed, the sampling parameters and the shortfalls (their
        sentences)."""
        keys = ("per_cluster", "balance", "total", "survivors", "include_unclustered", "where")
        return {"name": self.name, "version": self.version, "size": self.size, "released": released,
                "seed": self.seed, "created_at": self.created_at, **{k: self.params.get(k) for k in keys},
                "shortfalls": [s.get("detail", "") for s in self.shortfalls]}
