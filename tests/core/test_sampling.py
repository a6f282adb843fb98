"""Balanced sampling (SWE-QA-Pro §2.4, core/sampling.py): per-cluster quotas, the total, QA-type balance,
shortfalls, determinism (same seed same sample, input order irrelevant, another seed another sample)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from benchwright.core.errors import BenchwrightError
from benchwright.core.sampling import (
    NO_QA_TYPE,
    UNCLUSTERED,
    Candidate,
    balanced_sample,
    check_selection_name,
    parse_per_cluster,
)

TYPES = ("What", "Why", "How", "Where")


def pool(sizes: dict[str, int], types=TYPES) -> list[Candidate]:
    """``sizes[cluster]`` candidates per cluster, QA types cycling through ``types``."""
    out = []
    for cluster, n in sizes.items():
        for i in range(n):
            out.append(Candidate(f"qa_{cluster}_{i:03d}", cluster, types[i % len(types)], len(out) + 1))
    return out


def per_cluster(sample) -> Counter:
    return Counter(c.cluster for c in sample.members)


def test_every_cluster_gets_its_minimum_then_fills_up_to_the_maximum_until_the_total():
    cands = pool({"a": 20, "b": 20, "c": 20})
    s = balanced_sample(cands, per_cluster=(4, 9), total=15, seed=1)
    assert len(s.members) == 15 and set(per_cluster(s).values()) == {5}  # rounds over clusters: even
    s = balanced_sample(cands, per_cluster=(4, 9), total=26, seed=1)
    assert len(s.members) == 26 and sorted(per_cluster(s).values()) == [8, 9, 9]
    s = balanced_sample(cands, per_cluster=(4, 9), total=100, seed=1)  # capped by the maximum
    assert len(s.members) == 27 and set(per_cluster(s).values()) == {9}
    s = balanced_sample(cands, per_cluster=(4, 9), seed=1)  # no total: every cluster up to the maximum
    assert len(s.members) == 27
    assert len({c.pair_id for c in s.members}) == 27  # never a pair twice


def test_the_minimum_comes_first_when_the_total_is_small():
    cands = pool({"a": 3, "b": 10, "c": 10})
    s = balanced_sample(cands, per_cluster=(4, 9), total=11, seed=2)
    counts = per_cluster(s)
    assert counts == {"a": 3, "b": 4, "c": 4}  # each at its minimum (a has only 3) before any fill
    short = {f.subject: f for f in s.shortfalls if f.kind == "cluster"}
    assert set(short) == {"a"} and short["a"].reason == "few-candidates" and short["a"].short == 1
    assert "only 3 candidates" in short["a"].detail


def test_a_total_below_every_minimum_is_a_shortfall_per_cluster_left_under_it():
    cands = pool({"a": 10, "b": 10, "c": 10})
    s = balanced_sample(cands, per_cluster=(4, 9), total=10, seed=3)
    assert len(s.members) == 10 and sorted(per_cluster(s).values()) == [3, 3, 4]
    short = [f for f in s.shortfalls if f.kind == "cluster"]
    assert len(short) == 2 and all(f.reason == "total" and "--total 10" in f.detail for f in short)


def test_an_unreachable_total_is_reported_with_by_how_much():
    s = balanced_sample(pool({"a": 5, "b": 12}), per_cluster=(4, 9), total=20, seed=0)
    assert len(s.members) == 14
    (total,) = [f for f in s.shortfalls if f.kind == "total"]
    assert total.wanted == 20 and total.got == 14 and total.short == 6 and "at most 14" in total.detail


def test_qa_types_are_balanced_within_and_across_clusters():
    cands = pool({"a": 40, "b": 40, "c": 40, "d": 40})
    s = balanced_sample(cands, per_cluster=(4, 9), total=32, seed=5)
    overall = Counter(c.qa_type for c in s.members)
    assert set(overall.values()) == {8}
    for cluster in "abcd":  # the minimum is a round-robin over the cluster's types
        assert sorted(s.coverage[cluster].values()) == [2, 2, 2, 2]
    assert not [f for f in s.shortfalls if f.kind == "qa-type"]


def test_balance_evens_types_that_clusters_hold_unevenly():
    # cluster a is mostly What; b is mostly Why; both have some How and Where
    cands = [Candidate(f"qa_a{i:02d}", "a", "What" if i < 30 else ("How", "Where")[i % 2], i) for i in range(40)]
    cands += [Candidate(f"qa_b{i:02d}", "b", "Why" if i < 30 else ("How", "Where")[i % 2], 100 + i) for i in range(40)]
    s = balanced_sample(cands, per_cluster=(4, 9), total=16, seed=1)
    overall = Counter(c.qa_type for c in s.members)
    assert max(overall.values()) - min(overall.values()) <= 1, overall
    off = balanced_sample(cands, per_cluster=(4, 9), total=16, balance="none", seed=1)
    skew = Counter(c.qa_type for c in off.members)
    assert skew["What"] + skew["Why"] > overall["What"] + overall["Why"]  # unbalanced draws follow the pool


def test_a_type_far_from_even_is_a_shortfall_naming_the_rule():
    cands = [Candidate(f"qa_{i:02d}", "a", "What" if i < 18 else "Why", i) for i in range(20)]
    s = balanced_sample(cands, per_cluster=(4, 9), total=9, seed=1)
    short = {f.subject: f for f in s.shortfalls if f.kind == "qa-type"}
    assert short["Why"].reason == "under" and short["Why"].got == 2 and "20%" in short["Why"].detail
    assert short["What"].reason == "over" and "2 candidates have it" in short["Why"].detail


def test_untyped_pairs_come_last_and_have_their_own_column():
    cands = [Candidate(f"qa_{i:02d}", "a", None if i < 10 else "What", i) for i in range(13)]
    s = balanced_sample(cands, per_cluster=(4, 9), total=5, seed=1)
    assert Counter(c.qa_type for c in s.members) == {"What": 3, None: 2}
    assert s.coverage["a"] == {NO_QA_TYPE: 2, "What": 3} and s.qa_types == ["What", NO_QA_TYPE]
    (untyped,) = [f for f in s.shortfalls if f.reason == "untyped"]
    assert untyped.got == 2 and "2 of the 5 pairs drawn have no QA type" in untyped.detail
    none = balanced_sample([Candidate(f"qa_{i}", "a", None, i) for i in range(4)], per_cluster=(4, 9), seed=0)
    assert [f.detail for f in none.shortfalls] == [
        "QA types: 4 of the 4 pairs drawn have no QA type (none of them can be balanced; set QA types on import or "
        "by annotation)"]


def test_unclustered_pairs_are_left_out_unless_included():
    cands = pool({"a": 6}) + [Candidate(f"qa_none_{i}", None, "What", 50 + i) for i in range(6)]
    s = balanced_sample(cands, per_cluster=(4, 9), seed=1)
    assert s.unclustered == 6 and set(s.coverage) == {"a"} and len(s.members) == 6
    s = balanced_sample(cands, per_cluster=(4, 9), seed=1, include_unclustered=True)
    assert s.unclustered == 0 and per_cluster(s) == {"a": 6, UNCLUSTERED: 6}


def test_a_real_cluster_named_unclustered_is_not_merged_with_the_pairs_without_one():
    cands = pool({UNCLUSTERED: 5}) + [Candidate(f"qa_none_{i}", None, "What", 50 + i) for i in range(6)]
    s = balanced_sample(cands, per_cluster=(4, 9), seed=1)  # without the bucket: an ordinary cluster
    assert s.unclustered == 6 and per_cluster(s) == {UNCLUSTERED: 5}
    with pytest.raises(BenchwrightError, match="a cluster is named 'unclustered'"):
        balanced_sample(cands, per_cluster=(4, 9), seed=1, include_unclustered=True)
    s = balanced_sample(pool({UNCLUSTERED: 5}), per_cluster=(4, 9), seed=1, include_unclustered=True)
    assert per_cluster(s) == {UNCLUSTERED: 5}  # no pair without a cluster: nothing to confuse


def test_same_seed_same_sample_in_any_input_order_and_another_seed_differs():
    cands = pool({"a": 30, "b": 25, "c": 12, "d": 3})
    first = balanced_sample(cands, per_cluster=(4, 9), total=25, seed=7)
    shuffled = list(cands)
    random.Random(1).shuffle(shuffled)
    again = balanced_sample(shuffled, per_cluster=(4, 9), total=25, seed=7)
    assert again.members == first.members and again.coverage == first.coverage
    assert again.shortfalls == first.shortfalls
    other = balanced_sample(cands, per_cluster=(4, 9), total=25, seed=8)
    assert {c.pair_id for c in other.members} != {c.pair_id for c in first.members}


def test_one_clusters_draw_does_not_depend_on_the_other_clusters():
    base = balanced_sample(pool({"a": 30, "b": 30}), per_cluster=(4, 4), seed=3)
    more = balanced_sample(pool({"a": 30, "b": 30, "c": 30}), per_cluster=(4, 4), seed=3)
    assert {c.pair_id for c in base.members if c.cluster == "a"} == {c.pair_id for c in more.members
                                                                      if c.cluster == "a"}


def test_plain_tuples_and_a_repeated_id_count_once():
    cands = [("qa_1", "a", "What", 1), ("qa_1", "a", "What", 1), ("qa_2", "a", "Why", 2)]
    s = balanced_sample(cands, per_cluster=(1, 9), seed=0)
    assert sorted(c.pair_id for c in s.members) == ["qa_1", "qa_2"] and s.candidates == {"a": 2}


def test_coverage_lists_every_cluster_and_type_of_the_candidates_with_zeros():
    s = balanced_sample(pool({"a": 8, "b": 8}), per_cluster=(1, 1), seed=0)
    assert all(set(row) == set(TYPES) and sum(row.values()) == 1 for row in s.coverage.values())


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"per_cluster": (5, 4)}, "minimum <= maximum"),
    ({"per_cluster": (0, 0)}, "maximum >= 1"),
    ({"total": 0}, "at least one"),
    ({"balance": "category"}, "qa-type"),
])
def test_invalid_parameters_are_refused(kwargs, message):
    with pytest.raises(BenchwrightError, match=message):
        balanced_sample(pool({"a": 3}), **kwargs)


def test_parse_per_cluster_and_selection_names():
    assert parse_per_cluster("4..9") == (4, 9) and parse_per_cluster("4-9") == (4, 9)
    assert parse_per_cluster(" 5 ") == (5, 5)
    for bad in ("9..4", "a..b", "", "0", "4..9..10"):
        with pytest.raises(BenchwrightError, match="--per-cluster"):
            parse_per_cluster(bad)
    assert check_selection_name("bench-v1.2_x") == "bench-v1.2_x"
    for bad in ("", "a b", "x" * 65, "a/b", "[bold]x[/]", "é"):
        with pytest.raises(BenchwrightError, match="selection name"):
            check_selection_name(bad)


def test_a_seed_draws_the_same_pairs_on_every_machine_and_version():
    """Pinned: the shuffle is a SHA-256 order, not a library's random stream, so a recorded seed redraws exactly."""
    s = balanced_sample(pool({"a": 6, "b": 6}), per_cluster=(2, 3), total=5, seed=42)
    assert [c.pair_id for c in s.members] == ["qa_b_000", "qa_a_002", "qa_b_003", "qa_a_001", "qa_b_002"]
