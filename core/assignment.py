"""Assigning pairs to annotators: every pair to ``overlap`` different annotators, loads balanced,
reproducible from a seed (double annotation as in RepoProbe §3.2 and SWE-QA-Pro §2.4); and the QA sample, a seeded
stratified subset of the pairs for human inspection (RepoProbe §3.2 "Quality Assurance")."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from fractions import Fraction


def assign_pairs(
    pair_ids: list[str], annotators: list[str], overlap: int, seed: int = 0
) -> dict[str, list[str]]:
    """``{pair_id: [annotator, ...]}`` with ``overlap`` distinct annotators per pair.

    Pairs are taken in the given order; each goes to the ``overlap`` annotators with the fewest pairs so
    far, ties broken by a permutation drawn from ``random.Random(seed)``. Every annotator ends within one
    pair of every other; the same input and seed give the same result.

    Raises:
        ValueError: no annotators, a repeated or empty name, ``overlap`` not a whole number in
            1..len(annotators), or a repeated pair id.
    """
    if isinstance(annotators, str):
        raise ValueError("give the annotators as a list of names, not one string")
    if isinstance(overlap, bool) or not isinstance(overlap, int):
        raise ValueError(f"overlap must be a whole number, not {overlap!r}")
    if len(set(pair_ids)) != len(pair_ids):
        raise ValueError("a pair id is given twice")
    names = [a.strip() for a in annotators]
    if not names or any(not a for a in names):
        raise ValueError("give at least one non-empty annotator name")
    if len(set(names)) != len(names):
        raise ValueError("an annotator is named twice")
    if not 1 <= overlap <= len(names):
        raise ValueError(f"overlap must be between 1 and the number of annotators ({len(names)}), not {overlap}")
    rng = random.Random(seed)
    load = dict.fromkeys(names, 0)
    out: dict[str, list[str]] = {}
    for pid in pair_ids:
        order = names[:]
        rng.shuffle(order)
        rank = {a: i for i, a in enumerate(order)}
        chosen = sorted(names, key=lambda a: (load[a], rank[a]))[:overlap]
        for a in chosen:
            load[a] += 1
        out[pid] = sorted(chosen)
    return out


# ------------------------------------------------------------------------------------------- the QA sample
STRATIFY_BY = ("repository", "category")
"""Pair fields a QA sample may be stratified by (``assign --stratify-by``)."""

NO_STRATUM = ""
"""The stratum of pairs without a value for the stratifying field (one stratum of their own)."""


def sample_size(pool: int, *, size: int | None = None, fraction: float | None = None) -> int:
    """How many of ``pool`` pairs a QA sample takes: ``size`` (at most ``pool``) or ``fraction`` of ``pool``
    rounded half up (0.5 of 5 pairs is 3); exactly one of the two is given.

    Raises:
        ValueError: both or neither given, a negative size, or a fraction outside 0..1.
    """
    if (size is None) == (fraction is None):
        raise ValueError("give either a sample size or a fraction, not both or neither")
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"a sample size is a whole number of pairs, 0 or more, not {size!r}")
        return min(size, pool)
    if not 0.0 <= fraction <= 1.0:  # also refuses NaN
        raise ValueError(f"a fraction is between 0 and 1, not {fraction!r}")
    return min(pool, math.floor(fraction * pool + 0.5))


def allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """``{stratum: pairs to draw}``: ``n`` split across strata in proportion to their ``sizes``.

    The rule (RepoProbe §3.2 samples the verifier's survivors for human QA but does not say how; this is
    ours): proportional allocation with largest-remainder (Hamilton) rounding: each stratum first gets the
    whole part of ``n * size / total``, and the pairs left over go one each to the strata with the largest
    fractional parts (ties: the larger stratum, then the stratum name). Then, when ``n`` is at least the
    number of non-empty strata, a non-empty stratum that got none takes one from the stratum with the most
    (ties: the smallest fractional part, then the name), so every stratum is looked at. No stratum gets more
    than its size; the counts sum to ``min(n, total)``.

    Raises:
        ValueError: a negative size or ``n``.
    """
    if n < 0 or any(s < 0 for s in sizes.values()):
        raise ValueError("sizes and the sample size must be 0 or more")
    total = sum(sizes.values())
    n = min(n, total)
    out = dict.fromkeys(sizes, 0)
    if n == 0:
        return out
    quota = {k: Fraction(n * s, total) for k, s in sizes.items()}
    for k, q in quota.items():
        out[k] = math.floor(q)
    left = n - sum(out.values())
    by_remainder = sorted(sizes, key=lambda k: (-(quota[k] - out[k]), -sizes[k], k))
    for k in by_remainder[:left]:
        out[k] += 1
    non_empty = [k for k in sorted(sizes, key=lambda k: (-sizes[k], k)) if sizes[k] > 0]
    if n >= len(non_empty):
        for k in non_empty:
            if out[k] == 0:
                donor = min((d for d in sizes if out[d] > 1),
                            key=lambda d: (-out[d], quota[d] - math.floor(quota[d]), d))
                out[donor] -= 1
                out[k] = 1
    return out


def sample_pairs(pair_ids: Sequence[str], strata: Sequence[str | None] | None, n: int, seed: int) -> list[str]:
    """The ``n`` pairs of a QA sample (RepoProbe §3.2 "Quality Assurance": a subset of the verifier's
    survivors is inspected by hand), in the order of ``pair_ids``.

    ``strata[i]`` is the stratum of ``pair_ids[i]`` (None or empty: :data:`NO_STRATUM`); ``strata`` None is
    one stratum. Each stratum's count is :func:`allocate`'s; its pairs are drawn by ``random.Random`` seeded
    with the seed and the stratum's name, so a stratum's draw does not depend on the other strata, and the
    same input and seed give the same sample. ``n`` larger than the pool takes every pair.

    Raises:
        ValueError: a repeated pair id, ``strata`` of another length, or a negative ``n``.
    """
    if len(set(pair_ids)) != len(pair_ids):
        raise ValueError("a pair id is given twice")
    if strata is not None and len(strata) != len(pair_ids):
        raise ValueError(f"{len(strata)} strata for {len(pair_ids)} pairs")
    if n < 0:
        raise ValueError(f"a sample size is 0 or more, not {n}")
    members: dict[str, list[str]] = {}
    for i, pid in enumerate(pair_ids):
        members.setdefault((strata[i] or NO_STRATUM) if strata is not None else NO_STRATUM, []).append(pid)
    counts = allocate({k: len(v) for k, v in members.items()}, n)
    chosen: set[str] = set()
    for k, ids in members.items():
        chosen.update(random.Random(f"{seed}:{k}").sample(ids, counts[k]))
    return [pid for pid in pair_ids if pid in chosen]
