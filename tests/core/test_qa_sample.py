"""The QA sample (RepoProbe §3.2 "Quality Assurance"): sample size, proportional largest-remainder allocation
with one per stratum, seeded reproducible draws, edge cases."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright.core.assignment import NO_STRATUM, allocate, sample_pairs, sample_size


# ------------------------------------------------------------------------------------------- sample size
@pytest.mark.parametrize(("pool", "kw", "expected"), [
    (10, {"size": 3}, 3), (10, {"size": 0}, 0), (4, {"size": 50}, 4), (0, {"size": 5}, 0),
    (10, {"fraction": 0.0}, 0), (10, {"fraction": 1.0}, 10), (5, {"fraction": 0.5}, 3), (7, {"fraction": 0.2}, 1),
    (1000, {"fraction": 0.1}, 100), (3, {"fraction": 0.1}, 0),
])
def test_sample_size_takes_a_count_or_a_fraction_rounded_half_up(pool, kw, expected):
    assert sample_size(pool, **kw) == expected


@pytest.mark.parametrize("kw", [{}, {"size": 1, "fraction": 0.5}, {"size": -1}, {"fraction": 1.5},
                                {"fraction": -0.1}, {"fraction": float("nan")}, {"size": True}])
def test_sample_size_refuses_bad_input(kw):
    with pytest.raises(ValueError):
        sample_size(10, **kw)


# ------------------------------------------------------------------------------------------- allocation
def test_allocation_is_proportional_with_largest_remainders():
    # quotas 5.0 / 3.0 / 2.0 exactly
    assert allocate({"a": 50, "b": 30, "c": 20}, 10) == {"a": 5, "b": 3, "c": 2}
    # quotas 3.4 / 3.3 / 3.3 (n=10 of 34/33/33): floors 3/3/3, the one left goes to the largest remainder
    assert allocate({"a": 34, "b": 33, "c": 33}, 10) == {"a": 4, "b": 3, "c": 3}
    # quotas 1.5 / 1.5 / 1.0 / ... : a tie of remainders goes to the larger stratum, then the name
    assert allocate({"x": 3, "y": 3, "z": 2}, 4) == {"x": 2, "y": 1, "z": 1}
    assert allocate({"b": 5, "a": 5}, 3) == {"a": 2, "b": 1}


def test_every_non_empty_stratum_gets_one_when_n_allows():
    # quotas 9.8 / 0.1 / 0.1: Hamilton alone gives 10/0/0; the small strata take one each from the largest
    assert allocate({"big": 98, "s1": 1, "s2": 1}, 10) == {"big": 8, "s1": 1, "s2": 1}
    # fewer pairs than strata: the largest strata only
    assert allocate({"big": 98, "s1": 1, "s2": 1}, 1) == {"big": 1, "s1": 0, "s2": 0}
    # an empty stratum never gets one
    assert allocate({"a": 5, "empty": 0}, 3) == {"a": 3, "empty": 0}


def test_allocation_edge_cases():
    assert allocate({}, 5) == {}
    assert allocate({"a": 2, "b": 1}, 10) == {"a": 2, "b": 1}  # more than the pool: all of it
    assert allocate({"a": 2, "b": 1}, 0) == {"a": 0, "b": 0}
    with pytest.raises(ValueError):
        allocate({"a": 2}, -1)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text("abc", min_size=1, max_size=3), st.integers(0, 60), max_size=6), st.integers(0, 200))
def test_allocation_sums_to_n_never_exceeds_a_stratum_and_stays_within_one_of_the_quota(sizes, n):
    out = allocate(sizes, n)
    total = sum(sizes.values())
    take = min(n, total)
    assert sum(out.values()) == take
    assert all(0 <= out[k] <= sizes[k] for k in sizes)
    non_empty = [k for k in sizes if sizes[k]]
    if take >= len(non_empty):
        assert all(out[k] >= 1 for k in non_empty)
    elif total:
        for k in sizes:  # pure Hamilton: within one of the exact quota
            assert abs(out[k] - take * sizes[k] / total) < 1


# ------------------------------------------------------------------------------------------- the draw
def _pool():
    ids = [f"p{i:03d}" for i in range(200)]
    strata = ["flask"] * 120 + ["requests"] * 60 + [None] * 20
    return ids, strata


def test_stratified_sample_has_the_allocated_share_of_each_stratum():
    ids, strata = _pool()
    chosen = sample_pairs(ids, strata, 20, seed=7)
    of = dict(zip(ids, strata, strict=True))
    assert Counter(of[p] for p in chosen) == {"flask": 12, "requests": 6, None: 2}
    assert chosen == sorted(chosen)  # in the order given
    assert len(set(chosen)) == 20


def test_the_same_seed_draws_the_same_sample_and_another_seed_another():
    ids, strata = _pool()
    first = sample_pairs(ids, strata, 30, seed=11)
    assert sample_pairs(ids, strata, 30, seed=11) == first
    assert sample_pairs(list(ids), list(strata), 30, seed=11) == first
    assert sample_pairs(ids, strata, 30, seed=12) != first


def test_a_stratum_draw_does_not_depend_on_the_other_strata():
    ids, strata = _pool()
    flask = [p for p, s in zip(ids, strata, strict=True) if s == "flask"]
    alone = sample_pairs(flask, ["flask"] * len(flask), 12, seed=5)
    mixed = [p for p in sample_pairs(ids, strata, 20, seed=5) if p in set(flask)]
    assert mixed == alone


def test_unstratified_sample_and_edge_cases():
    ids, _ = _pool()
    assert len(sample_pairs(ids, None, 15, seed=1)) == 15
    assert sample_pairs(ids, None, 500, seed=1) == ids  # more than the pool: every pair
    assert sample_pairs(ids, None, 0, seed=1) == []
    assert sample_pairs([], None, 3, seed=1) == []
    # None and "" are the same stratum, the one without a value
    assert sample_pairs(["a", "b"], [None, NO_STRATUM], 1, seed=1) == sample_pairs(["a", "b"], [None, None], 1, seed=1)
    with pytest.raises(ValueError):
        sample_pairs(["a", "a"], None, 1, seed=1)
    with pytest.raises(ValueError):
        sample_pairs(["a", "b"], ["x"], 1, seed=1)
