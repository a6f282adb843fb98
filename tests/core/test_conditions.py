"""Issue 18 item 1: condition deltas (Code-QA-Bench): means per condition, paired deltas, the bootstrap interval and
the paired tests, checked against numpy and scipy called directly on seeded synthetic data, with ties (all-zero
differences), a single pair and no overlap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from benchwright.core.conditions import (
    MIN_PAIRS_TEST,
    condition_delta,
    condition_deltas,
    has_conditions,
    paired_test,
)
from benchwright.core.metrics import EffectiveScore, JudgedRun, PairStrata

_ids = iter(range(1, 1_000_000))
AXES = ("accuracy", "completeness", "specificity")


def run(pair, model, condition, scores, *, sample=0, task_set=None, qa_type=None, judge_model="j"):
    """A code-qa-bench run on pair ``pair``: three 0-5 axes, normalized score = sum / 15."""
    entries = tuple(EffectiveScore(k, k, "dimension", float(s), 5) for k, s in zip(AXES, scores, strict=True))
    return JudgedRun(next(_ids), f"{pair}-{model}-{condition}-{sample}", pair, model, condition, "code-qa-bench",
                     judge_model, 0, "scored", entries, strata=PairStrata(task_set=task_set, qa_type=qa_type))


def synthetic(n=30, seed=7):
    """Three conditions on ``n`` pairs; code-only beats closed-book by about 3 points of 15."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 4, size=(n, 3))
    lift = rng.integers(0, 3, size=(n, 3))
    doc = rng.integers(-1, 2, size=(n, 3))
    runs, scores = [], {"closed-book": {}, "code-only": {}, "documented": {}}
    for i in range(n):
        cb = base[i]
        co = np.clip(cb + lift[i], 0, 5)
        dc = np.clip(co + doc[i], 0, 5)
        for cond, s in (("closed-book", cb), ("code-only", co), ("documented", dc)):
            runs.append(run(f"p{i:02d}", "m", cond, s))
            scores[cond][f"p{i:02d}"] = float(np.sum(s)) / 15
    return runs, scores


def test_means_and_deltas_match_numpy_and_scipy():
    runs, scores = synthetic()
    [row] = condition_deltas(runs, resamples=2000, seed=3)
    means = {m.condition: m for m in row.means}
    for c in ("closed-book", "code-only", "documented"):
        assert means[c].pairs == 30
        assert means[c].mean == pytest.approx(np.mean(list(scores[c].values())))
    d1, d2 = row.deltas
    assert (d1.treatment, d1.baseline, d2.treatment, d2.baseline) == ("code-only", "closed-book", "documented",
                                                                      "code-only")
    pairs = sorted(scores["code-only"])
    diff = np.array([scores["code-only"][p] - scores["closed-book"][p] for p in pairs])
    assert d1.n == 30 and d1.only_treatment == d1.only_baseline == 0
    assert d1.mean_delta == pytest.approx(diff.mean())
    ref = stats.wilcoxon(diff, zero_method="wilcox")
    assert d1.p_value == pytest.approx(ref.pvalue) and d1.statistic == pytest.approx(ref.statistic)
    # the bootstrap: seeded, the same data gives the same interval; it brackets the mean; numpy by hand agrees
    rng = np.random.default_rng(3)
    boot = np.quantile(diff[rng.integers(0, 30, size=(2000, 30))].mean(axis=1), [0.025, 0.975])
    assert (d1.ci_low, d1.ci_high) == pytest.approx(tuple(boot))
    assert d1.ci_low < d1.mean_delta < d1.ci_high
    assert condition_deltas(runs, resamples=2000, seed=3) == [row]
    assert condition_deltas(runs, resamples=2000, seed=4)[0].deltas[0].ci_low != d1.ci_low


def test_ttest_matches_ttest_rel():
    runs, scores = synthetic(seed=11)
    [row] = condition_deltas(runs, test="ttest", resamples=100)
    pairs = sorted(scores["documented"])
    a = [scores["documented"][p] for p in pairs]
    b = [scores["code-only"][p] for p in pairs]
    ref = stats.ttest_rel(a, b)
    d = row.deltas[1]
    assert d.test == "ttest"
    assert d.statistic == pytest.approx(ref.statistic) and d.p_value == pytest.approx(ref.pvalue)


def test_ties_some_zero_differences_dropped_as_scipy_does():
    diffs = [0.0, 0.0, 0.1, 0.2, -0.1, 0.3, 0.2, 0.0, 0.4]
    statistic, p, note = paired_test(diffs, "wilcoxon")
    ref = stats.wilcoxon(diffs, zero_method="wilcox")
    assert (statistic, p, note) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue), "")


def test_all_zero_differences_say_no_difference():
    statistic, p, note = paired_test([0.0] * 8, "wilcoxon")
    assert statistic is None and p is None and "all 8 paired differences are zero" in note
    statistic, p, note = paired_test([0.0] * 8, "ttest")
    assert p is None and "no variance" in note
    d = condition_delta({f"p{i}": 0.5 for i in range(8)}, {f"p{i}": 0.5 for i in range(8)},
                        treatment_name="code-only", baseline_name="closed-book")
    assert d.mean_delta == 0 and d.ci_low == d.ci_high == 0 and d.p_value is None


def test_too_few_pairs_for_a_p_value():
    diffs = [0.1, 0.2, 0.3, 0.1][: MIN_PAIRS_TEST - 1]
    assert paired_test(diffs)[1] is None
    assert "too few pairs for a p-value" in paired_test(diffs)[2]
    # four non-zero differences among six pairs: too few for Wilcoxon, enough for the t-test
    six = [0.0, 0.0, 0.1, 0.2, 0.3, 0.1]
    assert "too few non-zero differences" in paired_test(six, "wilcoxon")[2]
    assert paired_test(six, "ttest")[1] == pytest.approx(stats.ttest_1samp(six, 0).pvalue)


def test_a_single_pair_has_a_mean_but_no_interval_nor_p_value():
    d = condition_delta({"p1": 0.8}, {"p1": 0.5}, treatment_name="code-only", baseline_name="closed-book")
    assert d.n == 1 and d.mean_delta == pytest.approx(0.3)
    assert d.ci_low is None and d.p_value is None
    assert "too few pairs for an interval" in d.note and "too few pairs for a p-value" in d.note


def test_no_overlap_counts_the_pairs_left_out():
    d = condition_delta({"a": 0.8, "b": 0.1}, {"c": 0.5}, treatment_name="code-only", baseline_name="closed-book")
    assert (d.n, d.only_treatment, d.only_baseline, d.mean_delta) == (0, 2, 1, None)
    assert d.note == "no pair is scored under both conditions"


def test_pairs_left_out_and_samples_averaged():
    runs = [run("p1", "m", "closed-book", (1, 1, 1)), run("p1", "m", "code-only", (4, 4, 4)),
            run("p1", "m", "code-only", (2, 2, 2), sample=1),  # p1's code-only score is the mean of two samples
            run("p2", "m", "closed-book", (0, 0, 0)),  # closed-book only
            run("p3", "m", "code-only", (5, 5, 5))]  # code-only only
    [row] = condition_deltas(runs)
    d = row.deltas[0]
    assert (d.n, d.only_treatment, d.only_baseline) == (1, 1, 1)
    assert d.mean_delta == pytest.approx(3 / 5 - 1 / 5)
    documented = row.deltas[1]
    assert documented.n == 0 and documented.only_treatment == 0 and documented.only_baseline == 2


def test_groups_by_model_task_set_and_axis():
    runs = []
    for ts in ("code-derivable", "doc-dependent", None):
        for i in range(3):
            qt = "where" if i else "why"
            runs += [run(f"{ts}{i}", "m", "closed-book", (1, 1, 1), task_set=ts, qa_type=qt),
                     run(f"{ts}{i}", "m", "documented", (3, 3, 3), task_set=ts, qa_type=qt)]
    runs.append(run("lonely", "other", "closed-book", (1, 1, 1)))  # one condition only: no row
    rows = condition_deltas(runs)
    assert [r.task_set for r in rows] == ["(none)", "code-derivable", "doc-dependent"]
    assert all(r.model == "m" and r.axis is None for r in rows)
    rows = condition_deltas(runs, by="qa_type")
    assert [(r.task_set, r.stratum) for r in rows][:2] == [("(none)", "where"), ("(none)", "why")]
    assert has_conditions(runs) and not has_conditions(runs[-1:])


def test_unknown_test_and_axis_are_errors():
    with pytest.raises(ValueError, match="wilcoxon, ttest"):
        condition_deltas([], test="mannwhitney")
    with pytest.raises(ValueError, match="unknown stratification axis"):
        condition_deltas([], by="colour")


def test_specificity_saturation_share_and_warning():
    from benchwright.core.conditions import SATURATION_WARNING, specificity_saturation

    runs = [run("p1", "m", "documented", (3, 3, 5)), run("p2", "m", "documented", (2, 2, 5)),
            run("p3", "m", "documented", (2, 2, 4)),
            # two runs of one answer: 5 then 4, a mean of 4.5, not at the top
            run("p1", "n", "documented", (3, 3, 5)),
            JudgedRun(next(_ids), "p1-n-documented-0", "p1", "n", "documented", "code-qa-bench", "j", 1, "scored",
                      tuple(EffectiveScore(k, k, "dimension", s, 5) for k, s in zip(AXES, (3, 3, 4), strict=True)),
                      strata=PairStrata())]
    rows = specificity_saturation(runs)
    assert [(r.model, r.answers, r.at_max, r.warning) for r in rows] == [("m", 3, 2, True), ("n", 1, 0, False)]
    assert rows[0].share == pytest.approx(2 / 3) and SATURATION_WARNING == 0.5
    assert specificity_saturation(runs, threshold=0.7)[0].warning is False
