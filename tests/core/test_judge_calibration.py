"""Judge calibration against humans (core/judge_calibration.py), against values worked out by hand."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright.core.judge_calibration import (
    CalibrationOptions,
    Figure,
    JudgeCalibrationError,
    PairedScore,
    judge_calibration,
    snap,
    weighted_kappa,
)

ALLOWED = (0, 1, 2, 3)


def paired(answer: str, human: float, judge: list[float], *, item: str = "1", annotator: str = "ada",
           model: str = "m1", allowed: tuple[int, ...] = ALLOWED, judge_model: str = "gpt",
           category: str = "how", kind: str = "knowledge") -> PairedScore:
    return PairedScore(answer, f"p-{answer}", item, allowed, "checklist", judge_model, tuple(judge), annotator,
                       human, model, {"category": category}, item_label=f"point {item}", item_kind=kind)


def only(report):
    assert len(report.judges) == 1
    return report.judges[0]


def test_a_judge_one_point_high_matches_the_hand_computed_figures():
    # Two items, allowed 0..3; humans 0 and 2, the judge 1 and 3 (always one point high, never clipped).
    # exact agreement: 0 of 2 equal = 0.
    # mean signed difference: ((1-0) + (3-2)) / 2 = +1 exactly; every difference is 1, so sd = 0 and the
    #   t interval is [1, 1].
    # linear kappa: observed disagreement = mean |j - h| = 1. Marginals: judge {1: .5, 3: .5}, human {0: .5, 2: .5};
    #   expected disagreement = .25 * (|1-0| + |1-2| + |3-0| + |3-2|) = .25 * 6 = 1.5; kappa = 1 - 1/1.5 = 1/3.
    # quadratic kappa: observed 1; expected .25 * (1 + 1 + 9 + 1) = 3; kappa = 1 - 1/3 = 2/3.
    # ordinal alpha: coincidences o(0,1) = o(1,0) = o(2,3) = o(3,2) = 1; n_0 = n_1 = n_2 = n_3 = 1, n = 4.
    #   delta^2(c, k) = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2: d(0,1) = d(1,2) = d(2,3) = 1, d(0,2) = d(1,3) = 4,
    #   d(0,3) = 9. D_o = (1/n) * sum o * d = 4/4 = 1; D_e = 1/(n(n-1)) * sum_{c != k} n_c n_k d
    #   = 2 * (1 + 4 + 9 + 1 + 4 + 1) / 12 = 10/3; alpha = 1 - 1 / (10/3) = 0.7.
    scores = [paired("a1", 0, [1]), paired("a2", 2, [3])]
    j = only(judge_calibration(scores))
    o = j.overall
    assert (o.n, o.answers, o.annotators) == (2, 2, 1)
    assert o.exact.value == 0
    assert o.mean_diff.value == 1
    assert (o.ci_low, o.ci_high) == (1, 1)
    assert o.kappa.value == pytest.approx(1 / 3)
    assert o.alpha.value == pytest.approx(0.7)
    assert (o.mean_judge, o.mean_human) == (2, 1)
    quadratic = only(judge_calibration(scores, CalibrationOptions(weights="quadratic"))).overall
    assert quadratic.kappa.value == pytest.approx(2 / 3)
    assert quadratic.alpha.value == pytest.approx(0.7)  # alpha does not depend on kappa's weights
    # Both disagreements are listed, largest first (a tie: by answer id).
    assert [(d.answer_id, d.judge_score, d.human_score, d.diff) for d in j.worst] == [("a1", 1, 0, 1), ("a2", 3, 2, 1)]


def test_a_judge_one_point_high_but_clipped_at_the_top_agrees_there():
    # humans 0 and 3; the judge 1 and 3 (3 + 1 is clipped to the maximum 3): exact 1/2, mean difference (1 + 0)/2.
    o = only(judge_calibration([paired("a1", 0, [1]), paired("a2", 3, [3])])).overall
    assert o.exact.value == 0.5
    assert o.mean_diff.value == 0.5


def test_perfect_agreement_is_one_everywhere():
    o = only(judge_calibration([paired("a1", 0, [0]), paired("a2", 2, [2]), paired("a3", 3, [3])])).overall
    assert (o.exact.value, o.kappa.value, o.alpha.value, o.mean_diff.value) == (1, 1, 1, 0)
    assert only(judge_calibration([paired("a1", 0, [0]), paired("a2", 2, [2])])).worst == []


def test_degenerate_cases_give_none_with_a_reason_never_nan():
    # Every score is 1: exact agreement is 1 but kappa and alpha are 0/0.
    o = only(judge_calibration([paired("a1", 1, [1]), paired("a2", 1, [1])])).overall
    assert o.exact.value == 1
    for figure in (o.kappa, o.alpha):
        assert figure.value is None and "no variance" in figure.reason
        assert figure.text().startswith("n/a (no variance")
    # A single observation: no interval.
    one = only(judge_calibration([paired("a1", 0, [2])])).overall
    assert one.n == 1 and one.ci_low is None and one.ci_text() == ""
    assert one.mean_diff.text(signed=True) == "+2.000"
    # No observations at all: no judge, no crash.
    empty = judge_calibration([])
    assert empty.judges == [] and empty.observations == 0
    assert Figure(None, "no paired scores").text() == "n/a (no paired scores)"
    for j in judge_calibration([paired("a1", 1, [1])]).judges:
        for value in j.to_dict()["overall"].values():
            assert not (isinstance(value, float) and math.isnan(value))


def test_runs_mean_snaps_for_the_categories_but_not_for_the_difference():
    # Runs 1 and 2 (mean 1.5, a tie between 1 and 2: the lower) against a human 1: exact (snapped 1 == 1),
    # mean difference 1.5 - 1 = +0.5.
    assert snap(1.5, ALLOWED) == 1 and snap(2.6, ALLOWED) == 3
    o = only(judge_calibration([paired("a1", 1, [1, 2])])).overall
    assert (o.n, o.exact.value, o.mean_diff.value) == (1, 1, 0.5)
    # runs=each: two observations, run 1 agrees, run 2 is one high: exact 1/2, difference (0 + 1)/2.
    each = only(judge_calibration([paired("a1", 1, [1, 2])], CalibrationOptions(runs="each"))).overall
    assert (each.n, each.exact.value, each.mean_diff.value) == (2, 0.5, 0.5)


def test_several_humans_each_or_consensus():
    # a1: ada 0, bob 2, judge 1; a2: ada 3, bob 3, judge 3.
    scores = [paired("a1", 0, [1]), paired("a1", 2, [1], annotator="bob"),
              paired("a2", 3, [3]), paired("a2", 3, [3], annotator="bob")]
    each = only(judge_calibration(scores)).overall
    # each: four observations, differences +1, -1, 0, 0: exact 2/4, mean 0.
    assert (each.n, each.annotators, each.exact.value, each.mean_diff.value) == (4, 2, 0.5, 0)
    # alpha: the judge is a third coder beside ada and bob (units a1, a2).
    data = np.array([[1, 3], [0, 3], [2, 3]], dtype=float)  # judge, human:ada, human:bob
    assert each.alpha.value == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal",
                                                                value_domain=list(ALLOWED)))
    # consensus: the lower median of (0, 2) is 0, of (3, 3) is 3: observations (1, 0) and (3, 3):
    # exact 1/2, mean difference (1 + 0)/2.
    cons = only(judge_calibration(scores, CalibrationOptions(humans="consensus")))
    assert (cons.overall.n, cons.overall.exact.value, cons.overall.mean_diff.value) == (2, 0.5, 0.5)
    assert cons.worst[0].annotator == "consensus of ada, bob"


def test_per_item_per_model_per_stratum_and_per_judge():
    scores = [paired("a1", 0, [1], model="m1", category="how"), paired("a2", 2, [2], model="m2", category="why"),
              paired("a1", 0, [0], judge_model="claude", model="m1", category="how"),
              paired("a1", 1, [0], item="2", model="m1", category="how", kind="clarity", allowed=(0, 1))]
    report = judge_calibration(scores, CalibrationOptions(by=("model", "category", "kind")))
    assert [j.label for j in report.judges] == ["checklist:claude", "checklist:gpt"]
    gpt = report.judges[1]
    assert list(gpt.items) == ["p-a1#1", "p-a1#2", "p-a2#1"]
    assert gpt.item_labels["p-a1#2"] == "point 2"
    assert gpt.items["p-a1#2"].mean_diff.value == -1
    assert {k: a.n for k, a in gpt.groups["model"].items()} == {"m1": 2, "m2": 1}
    assert gpt.groups["model"]["m2"].exact.value == 1
    assert {k: a.n for k, a in gpt.groups["category"].items()} == {"how": 2, "why": 1}
    assert {k: a.mean_diff.value for k, a in gpt.groups["kind"].items()} == {"clarity": -1, "knowledge": 0.5}
    assert [(d.answer_id, d.item) for d in gpt.worst] == [("a1", "1"), ("a1", "2")]
    assert len(judge_calibration(scores, CalibrationOptions(worst=1)).judges[1].worst) == 1


def test_bad_input_names_the_field():
    with pytest.raises(JudgeCalibrationError, match="human_score"):
        judge_calibration([paired("a1", 5, [1])])
    with pytest.raises(JudgeCalibrationError, match="weights"):
        CalibrationOptions(weights="cubic")
    with pytest.raises(JudgeCalibrationError, match="by: unknown grouping 'colour'"):
        CalibrationOptions(by=("colour",))


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_is_scikit_learns(weights):
    # Our closed form is sklearn's cohen_kappa_score (same confusion matrix, marginals and positional weights),
    # on random scores from an unevenly spaced allowed set.
    import random
    import warnings

    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(7)
    labels = [0, 1, 3, 5]
    for _ in range(50):
        n = rng.randint(2, 12)
        judge = [rng.choice(labels) for _ in range(n)]
        human = [rng.choice(labels) for _ in range(n)]
        ours = weighted_kappa(judge, human, labels, weights)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = cohen_kappa_score(judge, human, labels=labels, weights=weights)
        if math.isnan(theirs):
            assert ours is None
        else:
            assert ours == pytest.approx(theirs)
    with pytest.raises(ValueError, match="not one of the labels"):
        weighted_kappa([2], [0], labels, weights)



@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.lists(st.sampled_from(ALLOWED), min_size=1,
                                                                         max_size=3), st.sampled_from(["ada", "bob"])),
                min_size=0, max_size=12),
       st.sampled_from(["linear", "quadratic"]), st.sampled_from(["mean", "each"]), st.sampled_from(["each", "consensus"]))
def test_every_figure_is_a_number_in_range_or_none_with_a_reason(rows, weights, runs, humans):
    # answers a0..a3, one item; duplicates of (answer, annotator) are fine (two rows, as two annotators would be)
    scores = [paired(f"a{a}", h, judge, annotator=ann) for a, h, judge, ann in
              ((a, ALLOWED[h], judge, ann) for a, h, judge, ann in rows)]
    report = judge_calibration(scores, CalibrationOptions(weights=weights, runs=runs, humans=humans,
                                                          by=("model", "kind", "category")))
    for j in report.judges:
        for a in [j.overall, *j.items.values(), *(x for g in j.groups.values() for x in g.values())]:
            for f in (a.exact, a.kappa, a.alpha, a.mean_diff):
                assert (f.value is None) == bool(f.reason)
                if f.value is not None:
                    assert math.isfinite(f.value)
            assert a.exact.value is None or 0 <= a.exact.value <= 1
            assert a.kappa.value is None or a.kappa.value <= 1 + 1e-9
            assert a.alpha.value is None or a.alpha.value <= 1 + 1e-9
            assert a.mean_diff.value is None or -3 <= a.mean_diff.value <= 3
        assert all(abs(x.diff) > 0 for x in j.worst)
        assert [abs(x.diff) for x in j.worst] == sorted((abs(x.diff) for x in j.worst), reverse=True)


def test_items_of_two_checklist_versions_are_two_items():
    # The same answer, item 1 scored against version 1 (ada) and version 2 (bob): two items, two alpha units.
    v1 = paired("a1", 0, [1])
    v2 = PairedScore(**{**v1.__dict__, "annotator": "bob", "checklist_version": 2})
    j = only(judge_calibration([v1, v2]))
    assert list(j.items) == ["p-a1#1", "p-a1@v2#1"]
    assert all(a.n == 1 for a in j.items.values())
