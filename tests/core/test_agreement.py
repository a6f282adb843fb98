"""Inter-annotator agreement (benchwright.core.agreement): Cohen's kappa checked by hand, Fleiss' kappa and
Krippendorff's alpha against published worked examples, missing and degenerate data, key-point matching."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright.core.agreement import (
    AgreementFigure,
    FieldAgreement,
    PairwiseKappa,
    Rating,
    agreement_report,
    checklist_agreement,
    cohen_kappa_pairs,
    fleiss_kappa,
    key_point_similarity,
    krippendorff_alpha,
    match_key_points,
)


def _from_matrix(matrix: list[list[object]], raters: list[str] | None = None) -> list[Rating]:
    """Ratings from a raters x items matrix (None = missing); items are named u01, u02, ..."""
    raters = raters or [f"r{k}" for k in range(len(matrix))]
    return [
        Rating(item=f"u{j + 1:02d}", annotator=rater, value=value)
        for rater, row in zip(raters, matrix, strict=True)
        for j, value in enumerate(row)
    ]


def _from_counts(counts: list[list[int]], categories: list[str]) -> list[Rating]:
    """Ratings from an items x categories count table: raters r1, r2, ... take the labels in turn."""
    out = []
    for i, row in enumerate(counts):
        labels = [cat for cat, n in zip(categories, row, strict=True) for _ in range(n)]
        out += [Rating(item=f"s{i + 1:02d}", annotator=f"r{k + 1}", value=label) for k, label in enumerate(labels)]
    return out


def _no_nan(figure: AgreementFigure) -> None:
    assert figure.value is None or math.isfinite(figure.value)


# --------------------------------------------------------------------------------------------------
# Cohen's kappa


def test_cohen_kappa_hand_computed_2x2():
    # 12 items, two annotators, labels yes/no:
    #                 B yes   B no
    #     A yes         6       2      (A says yes 8 times)
    #     A no          1       3      (A says no 4 times)
    #                   7       5
    # observed agreement p_o = (6 + 3) / 12 = 3/4
    # chance agreement  p_e = (8/12)(7/12) + (4/12)(5/12) = (56 + 20) / 144 = 19/36
    # kappa = (p_o - p_e) / (1 - p_e) = (27/36 - 19/36) / (17/36) = 8/17 = 0.470588235...
    pairs = [("yes", "yes")] * 6 + [("yes", "no")] * 2 + [("no", "yes")] * 1 + [("no", "no")] * 3
    ratings = []
    for k, (a, b) in enumerate(pairs):
        ratings += [Rating(f"q{k}", "alice", a), Rating(f"q{k}", "bob", b)]
    (pair,) = cohen_kappa_pairs(ratings)
    assert (pair.annotator_a, pair.annotator_b, pair.n_items) == ("alice", "bob", 12)
    assert abs(pair.kappa - 8 / 17) < 1e-9
    assert abs(pair.observed_agreement - 0.75) < 1e-12
    assert pair.reason is None


def test_cohen_pairs_are_sorted_and_use_only_shared_items():
    ratings = [
        Rating("q1", "carol", "pass"), Rating("q1", "alice", "pass"), Rating("q1", "bob", "fail"),
        Rating("q2", "carol", "fail"), Rating("q2", "alice", "fail"), Rating("q2", "bob", "fail"),
        Rating("q3", "alice", "pass"), Rating("q3", "bob", None),  # bob's q3 is missing
        Rating("q4", "alice", "fail"), Rating("q4", "bob", float("nan")),  # so is his q4 (nan)
    ]
    pairs = cohen_kappa_pairs(ratings)
    assert [(p.annotator_a, p.annotator_b) for p in pairs] == [("alice", "bob"), ("alice", "carol"), ("bob", "carol")]
    ab, ac, bc = pairs
    assert ab.n_items == 2 and ac.n_items == 2 and bc.n_items == 2
    assert ac.kappa == pytest.approx(1.0)
    # alice (pass, fail) vs bob (fail, fail): p_o = 1/2, p_e = (1/2)(0) + (1/2)(1) = 1/2 -> kappa 0
    assert ab.kappa == pytest.approx(0.0)


def test_cohen_mixed_string_and_number_labels():
    ratings = [Rating("a", "x", 1), Rating("a", "y", 1.0), Rating("b", "x", "1"), Rating("b", "y", "1"),
               Rating("c", "x", 2), Rating("c", "y", "1")]
    (pair,) = cohen_kappa_pairs(ratings)
    assert pair.n_items == 3 and pair.kappa is not None and math.isfinite(pair.kappa)


# --------------------------------------------------------------------------------------------------
# Fleiss' kappa

# Wikipedia, "Fleiss' kappa", Worked example: 10 subjects, 14 raters each, 5 categories; the article
# gives P-bar = 0.378, P-bar_e = 0.213 and kappa = 0.210. (The same table is statsmodels' own test
# case for fleiss_kappa.) Rows: subjects; columns: how many raters chose category 1..5.
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_wikipedia_worked_example():
    ratings = _from_counts(WIKIPEDIA_FLEISS, ["c1", "c2", "c3", "c4", "c5"])
    fig = fleiss_kappa(ratings)
    assert (fig.n_items, fig.n_raters) == (10, 14)
    assert round(fig.value, 3) == 0.210
    assert abs(fig.value - 0.210) < 5e-4
    assert "left out" not in fig.note


def test_fleiss_kappa_keeps_the_most_common_rater_count_and_says_what_it_left_out():
    ratings = _from_counts(WIKIPEDIA_FLEISS, ["c1", "c2", "c3", "c4", "c5"])
    extra = [
        Rating("odd1", "r1", "c1"), Rating("odd1", "r2", "c2"), Rating("odd1", "r3", "c2"),  # 3 raters
        Rating("lone", "r1", "c3"), Rating("lone", "r2", None),  # 1 rating
        Rating("empty", "r1", None),  # no rating at all
    ]
    fig = fleiss_kappa(ratings + extra)
    assert (fig.n_items, fig.n_raters) == (10, 14)
    assert round(fig.value, 3) == 0.210
    assert "2 items with fewer than 2 ratings" in fig.note
    assert "1 item with a different number of raters" in fig.note


def test_fleiss_kappa_two_raters_with_one_category_never_used_by_kept_items():
    # 3 items with 2 raters; a fourth item with 3 raters uses a label the kept items never use
    ratings = [
        Rating("a", "x", "pass"), Rating("a", "y", "pass"),
        Rating("b", "x", "fail"), Rating("b", "y", "fail"),
        Rating("c", "x", "pass"), Rating("c", "y", "fail"),
        Rating("d", "x", "revise"), Rating("d", "y", "pass"), Rating("d", "z", "fail"),
    ]
    fig = fleiss_kappa(ratings)
    assert (fig.n_items, fig.n_raters) == (3, 2)
    # by hand: counts pass/fail = [2,0],[0,2],[1,1]; P_i = 1, 1, 0 -> P-bar = 2/3;
    # p_pass = p_fail = 1/2 -> P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert fig.value == pytest.approx(1 / 3, abs=1e-12)


# --------------------------------------------------------------------------------------------------
# Krippendorff's alpha

# The reliability data of the Wikipedia article "Krippendorff's alpha" (3 coders x 15 units, values
# 1-4, None = not coded), as used by the krippendorff package itself: its sample.py says "Example from
# https://en.wikipedia.org/wiki/Krippendorff's_Alpha", and the docstring of krippendorff.alpha prints
# 0.691358 (nominal) and 0.810845 (interval) for it; the article gives 0.691 and 0.811.
WIKIPEDIA_ALPHA = [
    [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],  # coder A
    [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],  # coder B
    [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],  # coder C
]

# Krippendorff, K. (2011), "Computing Krippendorff's Alpha-Reliability", section C (4 observers x 12
# units, missing data): the paper gives alpha = .743 (nominal) and .849 (interval); the docstring of
# krippendorff.alpha also prints 0.743 for the nominal case (numbers and the same data as strings).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_krippendorff_alpha_wikipedia_example_nominal_and_interval():
    ratings = _from_matrix(WIKIPEDIA_ALPHA, ["A", "B", "C"])
    nominal = krippendorff_alpha(ratings, level="nominal")
    interval = krippendorff_alpha(ratings, level="interval")
    assert round(nominal.value, 6) == 0.691358
    assert round(interval.value, 6) == 0.810845
    assert round(nominal.value, 3) == 0.691 and round(interval.value, 3) == 0.811
    # units 1 (one coder), 2 and 14 (none) cannot be paired and are left out
    assert (nominal.n_items, nominal.n_raters) == (12, 3)
    assert "left out 3 items with fewer than 2 ratings" in nominal.note


def test_krippendorff_alpha_krippendorff_2011_example():
    ratings = _from_matrix(KRIPPENDORFF_2011)
    assert round(krippendorff_alpha(ratings, "nominal").value, 3) == 0.743
    assert round(krippendorff_alpha(ratings, "interval").value, 3) == 0.849
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    as_text = _from_matrix([[names.get(v) for v in row] for row in KRIPPENDORFF_2011])
    assert round(krippendorff_alpha(as_text, "nominal").value, 3) == 0.743


def test_krippendorff_alpha_matches_the_library_on_its_own_layout():
    ratings = _from_matrix(WIKIPEDIA_ALPHA, ["A", "B", "C"])
    matrix = np.array([[np.nan if v is None else v for v in row] for row in WIKIPEDIA_ALPHA], dtype=float)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert krippendorff_alpha(ratings, "interval").value == pytest.approx(expected, abs=1e-12)


def test_krippendorff_alpha_rejects_bad_level_and_text_at_interval_level():
    ratings = [Rating("a", "x", "pass"), Rating("a", "y", "fail")]
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(ratings, level="ordinal")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a number"):
        krippendorff_alpha(ratings, level="interval")


# --------------------------------------------------------------------------------------------------
# Missing values and degenerate cases: None with a reason, never nan, never a warning or a crash


def _quietly(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    assert caught == [], [str(w.message) for w in caught]
    return out


def test_missing_values_are_dropped_everywhere():
    full = [Rating(f"q{i}", a, v) for i, (x, y) in enumerate([("p", "p"), ("f", "f"), ("p", "f")])
            for a, v in (("x", x), ("y", y))]
    holes = [*full, Rating("q9", "x", None), Rating("q9", "y", "p"), Rating("q8", "x", float("nan")), Rating("q8", "y", "f")]
    assert cohen_kappa_pairs(holes)[0].kappa == pytest.approx(cohen_kappa_pairs(full)[0].kappa)
    assert krippendorff_alpha(holes).value == pytest.approx(krippendorff_alpha(full).value)
    assert fleiss_kappa(holes).value == pytest.approx(fleiss_kappa(full).value)
    assert cohen_kappa_pairs(holes)[0].n_items == 3


def test_one_annotator():
    ratings = [Rating("q1", "solo", "pass"), Rating("q2", "solo", "fail")]
    assert _quietly(cohen_kappa_pairs, ratings) == []
    fleiss = _quietly(fleiss_kappa, ratings)
    alpha = _quietly(krippendorff_alpha, ratings)
    assert fleiss.value is None and "no item was rated by 2 or more" in fleiss.note
    assert alpha.value is None and "no item was rated by 2 or more" in alpha.note


def test_all_identical_labels():
    ratings = [Rating(f"q{i}", a, "accept") for i in range(5) for a in ("x", "y", "z")]
    pairs = _quietly(cohen_kappa_pairs, ratings)
    assert len(pairs) == 3
    for p in pairs:
        assert p.kappa is None and p.n_items == 5 and p.observed_agreement == 1.0
        assert "same label 'accept'" in p.reason and "undefined" in p.reason
    fleiss = _quietly(fleiss_kappa, ratings)
    alpha = _quietly(krippendorff_alpha, ratings)
    assert fleiss.value is None and "undefined" in fleiss.note and fleiss.n_items == 5
    assert alpha.value is None and "undefined" in alpha.note and alpha.n_items == 5


def test_no_overlap():
    ratings = [Rating("q1", "x", "pass"), Rating("q2", "x", "fail"), Rating("q3", "y", "pass"), Rating("q4", "y", "fail")]
    (pair,) = _quietly(cohen_kappa_pairs, ratings)
    assert pair.kappa is None and pair.n_items == 0 and pair.observed_agreement is None
    assert "no item in common" in pair.reason
    assert _quietly(fleiss_kappa, ratings).value is None
    alpha = _quietly(krippendorff_alpha, ratings)
    assert alpha.value is None and "left out 4 items" in alpha.note


def test_one_shared_item_and_empty_input():
    ratings = [Rating("q1", "x", "pass"), Rating("q1", "y", "fail")]
    (pair,) = _quietly(cohen_kappa_pairs, ratings)
    assert pair.kappa is None and pair.n_items == 1 and "at least 2" in pair.reason
    assert _quietly(fleiss_kappa, ratings).value is None  # one item: Fleiss needs 2
    assert _quietly(cohen_kappa_pairs, []) == []
    assert _quietly(fleiss_kappa, []).value is None
    assert _quietly(krippendorff_alpha, []).value is None


def test_duplicate_rating_and_bad_input_raise():
    with pytest.raises(ValueError, match="two ratings by 'x'"):
        cohen_kappa_pairs([Rating("q1", "x", "pass"), Rating("q1", "x", "fail")])
    with pytest.raises(TypeError, match="Rating"):
        fleiss_kappa([("q1", "x", "pass")])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="string, a number or None"):
        krippendorff_alpha([Rating("q1", "x", ["pass"])])  # type: ignore[arg-type]
    # a missing rating next to a real one by the same annotator is not a duplicate
    assert cohen_kappa_pairs([Rating("q1", "x", None), Rating("q1", "x", "pass")]) == []


labels = st.sampled_from(["accept", "reject", "revise", None])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "q4"]), st.sampled_from(["a", "b", "c"]), labels),
                unique_by=lambda t: (t[0], t[1]), max_size=12))
def test_figures_are_never_nan(rows):
    ratings = [Rating(*row) for row in rows]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for p in cohen_kappa_pairs(ratings):
            assert (p.kappa is None) == (p.reason is not None)
            assert p.kappa is None or math.isfinite(p.kappa)
        _no_nan(fleiss_kappa(ratings))
        _no_nan(krippendorff_alpha(ratings))


# --------------------------------------------------------------------------------------------------
# Report


def test_agreement_report_for_criteria_and_decision():
    fields = {}
    criteria = ["correct", "grounded", "answerable", "unambiguous"]
    marks = {"x": "ppfpfp", "y": "ppfpff", "z": "pffpfp"}
    for n, crit in enumerate(criteria):
        fields[crit] = [
            Rating(f"qa{i}", annotator, "pass" if marks[annotator][(i + n) % 6] == "p" else "fail")
            for annotator in marks for i in range(6)
        ]
    decisions = {"x": ["accept", "reject", "revise", "accept"], "y": ["accept", "reject", "accept", "accept"]}
    fields["decision"] = [Rating(f"qa{i}", a, d) for a, ds in decisions.items() for i, d in enumerate(ds)]
    report = agreement_report(fields)
    assert list(report) == [*criteria, "decision"]
    for name, fa in report.items():
        assert isinstance(fa, FieldAgreement) and fa.field == name
        assert fa.cohen == cohen_kappa_pairs(fields[name])
        assert fa.fleiss == fleiss_kappa(fields[name])
        assert fa.krippendorff == krippendorff_alpha(fields[name])
    assert report["correct"].annotators == ["x", "y", "z"] and len(report["correct"].cohen) == 3
    decision = report["decision"]
    assert decision.n_items == 4 and decision.fleiss.n_raters == 2
    assert [(p.annotator_a, p.annotator_b) for p in decision.cohen] == [("x", "y")]
    assert isinstance(decision.cohen[0], PairwiseKappa) and decision.cohen[0].kappa is not None


# --------------------------------------------------------------------------------------------------
# Key points and checklists


def test_match_key_points_reordered_and_reworded():
    a = [
        "Explains that the cache is invalidated on every write",
        "Mentions the retry limit of 3 attempts",
        "Names the config file (settings.toml)",
    ]
    b = [
        "The retry limit: 3 attempts.",
        "Says the settings.toml config file is read at startup",
        "cache is invalidated on each write",
        "Discusses logging verbosity",
    ]
    result = match_key_points(a, b)
    matched = {(i, j) for i, j, _ in result if i is not None and j is not None}
    assert matched == {(0, 2), (1, 0), (2, 1)}
    assert (None, 3, 0.0) in result
    assert sorted(i for i, _, _ in result if i is not None) == [0, 1, 2]
    assert sorted(j for _, j, _ in result if j is not None) == [0, 1, 2, 3]
    for i, j, score in result:
        if i is not None and j is not None:
            assert 0.5 <= score <= 1.0


def test_match_key_points_unmatched_on_both_sides_and_threshold():
    result = match_key_points(["Uses a B-tree index"], ["Describes the HTTP retry policy"])
    assert result == [(0, None, 0.0), (None, 0, 0.0)]
    # case, punctuation and spacing do not count; word order does not either
    assert key_point_similarity("Cache  invalidated, on write!", "cache invalidated on WRITE") == 1.0
    assert key_point_similarity("on write the cache is invalidated", "the cache is invalidated on write") == 1.0
    assert match_key_points(["a b c"], ["c b a"], threshold=1.0) == [(0, 0, 1.0)]
    assert match_key_points([], []) == []
    with pytest.raises(ValueError, match="threshold"):
        match_key_points(["x"], ["y"], threshold=1.5)


def test_match_key_points_is_greedy_best_first():
    # "alpha beta" fits both of b's items; the better pair is taken first, the other goes to "alpha"
    result = match_key_points(["alpha", "alpha beta"], ["alpha beta gamma", "alpha beta"], threshold=0.3)
    assert (1, 1, 1.0) in result
    assert any(i == 0 and j == 0 for i, j, _ in result)


def test_checklist_agreement_two_annotators():
    versions = {
        "bob": [("Cache is invalidated on each write", 4), ("The retry limit: 3 attempts", 3), ("Discusses logging", 2)],
        "alice": [("Mentions the retry limit of 3 attempts", 4), ("Explains that the cache is invalidated on every write", 5)],
    }
    result = checklist_agreement(versions)
    assert result.annotators == ["alice", "bob"]
    assert result.n_key_points == 5 and result.n_matched == 4
    assert result.match_rate == pytest.approx(2 * 2 / (2 + 3))
    matched = [u for u in result.units if u.matched]
    assert [u.indices for u in matched] == [{"alice": 0, "bob": 1}, {"alice": 1, "bob": 0}]
    assert [u.weights for u in matched] == [{"alice": 4, "bob": 3}, {"alice": 5, "bob": 4}]
    # raters (alice, bob) x matched units: weights; "Discusses logging" is in no matched unit
    expected = krippendorff.alpha(reliability_data=np.array([[4.0, 5.0], [3.0, 4.0]]), level_of_measurement="interval")
    assert result.weight_alpha.value == pytest.approx(expected)
    assert (result.weight_alpha.n_items, result.weight_alpha.n_raters) == (2, 2)


def test_checklist_agreement_three_annotators_with_missing_key_point():
    versions = {
        "a": [("Explains that the cache is invalidated on write", 5), ("Mentions the retry limit of 3", 4)],
        "b": [("The retry limit is 3", 4), ("cache invalidated on write", 5)],
        "c": [("cache is invalidated on every write", 5)],
    }
    result = checklist_agreement(versions)
    assert result.n_matched == 5 and result.match_rate == 1.0
    cache = next(u for u in result.units if "c" in u.indices)
    assert cache.indices == {"a": 0, "b": 1, "c": 0}
    # units: cache (5, 5, 5) and retry (4, 4, nan): perfect agreement on weights
    assert result.weight_alpha.value == pytest.approx(1.0)
    assert result.weight_alpha.n_raters == 3


def test_checklist_agreement_degenerate():
    one = checklist_agreement({"a": [("Explains the cache", 5)]})
    assert one.match_rate is None and "at least 2" in one.note and one.weight_alpha.value is None
    empty = checklist_agreement({"a": [], "b": []})
    assert empty.match_rate is None and empty.note == "no key points to match"
    apart = checklist_agreement({"a": [("Uses a B-tree index", 5)], "b": [("Describes the HTTP retry policy", 5)]})
    assert apart.match_rate == 0.0 and apart.weight_alpha.value is None
    same = checklist_agreement({"a": [("Uses a B-tree index", 5)], "b": [("uses a b-tree index", 5)]})
    assert same.match_rate == 1.0
    assert same.weight_alpha.value is None and "undefined" in same.weight_alpha.note


# --------------------------------------------------------------------------------------------------
# Layering


def test_importing_agreement_loads_no_ui_store_or_heavy_libraries():
    code = (
        "import sys\n"
        "import benchwright.core.agreement as ag\n"
        "def bad():\n"
        "    return sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'sqlite_utils', 'sqlite3')\n"
        "                  or m.startswith(('benchwright.db', 'benchwright.tui', 'benchwright.exports')))\n"
        "print(','.join(bad()))\n"
        "print(','.join(sorted(m for m in ('sklearn', 'statsmodels') if m in sys.modules)))\n"
        "r = [ag.Rating('q1', 'x', 'p'), ag.Rating('q1', 'y', 'p'), ag.Rating('q2', 'x', 'f'), ag.Rating('q2', 'y', 'p')]\n"
        "ag.agreement_report({'f': r})\n"
        "print(','.join(bad()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    at_import, heavy, after_use = out.stdout.split("\n")[:3]
    assert at_import == "", f"importing benchwright.core.agreement pulled in {at_import}"
    assert heavy == "", f"scikit-learn/statsmodels should load only when used, got {heavy}"
    assert after_use == "", f"computing agreement pulled in {after_use}"


def test_figure_text_says_why_a_figure_is_undefined():
    """Issue 12 item 11: every rater using one label is "undefined (no variance)" with the raw percent
    agreement, not a bare n/a; too little data stays n/a; a value keeps three decimals."""
    from benchwright.core.agreement import NO_VARIANCE, figure_text

    ratings = [Rating(f"q{i}", a, "accept") for i in range(4) for a in ("x", "y")]
    (pair,) = _quietly(cohen_kappa_pairs, ratings)
    fleiss = _quietly(fleiss_kappa, ratings)
    alpha = _quietly(krippendorff_alpha, ratings)
    for fig in (pair, fleiss, alpha):
        assert fig.no_variance and fig.text == "undefined (no variance; 100.0% agreement)"
    assert fleiss.observed_agreement == 1.0 and alpha.observed_agreement == 1.0
    few = _quietly(fleiss_kappa, [Rating("q1", "x", "pass")])
    assert not few.no_variance and few.text == "n/a"
    assert figure_text(0.71234) == "0.712" and figure_text(None, no_variance=True) == NO_VARIANCE
    # a defined figure carries its raw agreement too: 3 of 4 items agree (one pair of ratings each)
    mixed = [Rating("q1", "x", "a"), Rating("q1", "y", "a"), Rating("q2", "x", "b"), Rating("q2", "y", "b"),
             Rating("q3", "x", "a"), Rating("q3", "y", "a"), Rating("q4", "x", "a"), Rating("q4", "y", "b")]
    assert _quietly(krippendorff_alpha, mixed).observed_agreement == 0.75
