"""Assigning pairs to annotators: every pair to ``overlap`` different annotators, loads balanced,
reproducible from a seed (double annotation as in RepoProbe §3.2 and SWE-QA-Pro §2.4)."""

from __future__ import annotations

import random


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
