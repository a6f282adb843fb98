"""Difficulty calibration (SWE-QA-Pro §2.3), core/calibration.py, checked against z-scores worked out by hand.

Three models x six questions, score rates s_m(q) (0-1):

    q      A     B     C
    q1    0.6   0.7   0.7
    q2    0.8   0.7   0.7      (A's 0.8 is the mean of two samples, 0.9 and 0.7)
    q3    0.5   0.7   0.1
    q4    0.5   0.3   0.1
    q5    0.6   0.3   0.1
    q6    0.6   0.3   0.7

    A: mean 3.6/6 = 0.6, deviations 0, .2, -.1, -.1, 0, 0 -> variance .06/6 = .01, population sd 0.1
       z_A = 0, 2, -1, -1, 0, 0
    B: mean 3.0/6 = 0.5, deviations +-.2 -> sd 0.2;  z_B = 1, 1, 1, -1, -1, -1
    C: mean 2.4/6 = 0.4, deviations +-.3 -> sd 0.3;  z_C = 1, 1, -1, -1, -1, 1

    mean z: q1 2/3, q2 4/3, q3 -1/3, q4 -1, q5 -2/3, q6 0
    min z:  q1 0,   q2 1,   q3 -1,   q4 -1, q5 -1,   q6 -1

mean-z at 0.5: q1 and q2 too easy.   all-z at 0.5: q2 only (q1 has A's z = 0).
Ties: all-z at 1.0 -> q2 (its minimum is exactly 1); mean-z at 0 -> q1, q2 and q6 (q6's mean is exactly 0).
"""

from __future__ import annotations

import math

import pytest

from benchwright.core.calibration import ScoredAnswer, calibrate, z_histogram
from benchwright.core.errors import BenchwrightError

TABLE = {
    "A": [0.6, None, 0.5, 0.5, 0.6, 0.6],
    "B": [0.7, 0.7, 0.7, 0.3, 0.3, 0.3],
    "C": [0.7, 0.7, 0.1, 0.1, 0.1, 0.7],
}
PAIRS = [f"q{i}" for i in range(1, 7)]


def answers() -> list[ScoredAnswer]:
    out = []
    for model, column in TABLE.items():
        for pair, s in zip(PAIRS, column, strict=True):
            if s is not None:
                out.append(ScoredAnswer(pair, model, "closed-book", 0, "swe-qa-pro", "j", s, 3))
    out += [ScoredAnswer("q2", "A", "closed-book", 0, "swe-qa-pro", "j", 0.9, 3),
            ScoredAnswer("q2", "A", "closed-book", 1, "swe-qa-pro", "j", 0.7, 3)]
    return out


def by_pair(result):
    return {p.qa_pair_id: p for p in result.pairs}


def test_model_means_and_population_sds_by_hand():
    r = calibrate(answers(), ["A", "B", "C"], rule="mean-z", threshold=0.5)
    for model, mean, sd in (("A", 0.6, 0.1), ("B", 0.5, 0.2), ("C", 0.4, 0.3)):
        st = r.model_stats[model]
        assert st.n == 6
        assert st.mean == pytest.approx(mean)
        assert st.sd == pytest.approx(sd)


def test_z_scores_by_hand():
    r = by_pair(calibrate(answers(), ["A", "B", "C"], rule="mean-z", threshold=0.5))
    expected = {"A": [0, 2, -1, -1, 0, 0], "B": [1, 1, 1, -1, -1, -1], "C": [1, 1, -1, -1, -1, 1]}
    for model, zs in expected.items():
        for pair, z in zip(PAIRS, zs, strict=True):
            assert r[pair].scores[model].z == pytest.approx(z, abs=1e-9), (model, pair)
    assert r["q2"].scores["A"].s == pytest.approx(0.8)
    assert r["q2"].scores["A"].n == 2 and r["q2"].scores["A"].runs == 6
    means = [2 / 3, 4 / 3, -1 / 3, -1, -2 / 3, 0]
    mins = [0, 1, -1, -1, -1, -1]
    for pair, m, lo in zip(PAIRS, means, mins, strict=True):
        assert r[pair].mean_z == pytest.approx(m, abs=1e-9)
        assert r[pair].min_z == pytest.approx(lo, abs=1e-9)


def decisions(rule, threshold, **kw):
    r = calibrate(answers(), ["A", "B", "C"], rule=rule, threshold=threshold, **kw)
    return {p.qa_pair_id for p in r.pairs if p.decision == "too-easy"}, r


def test_mean_z_rule():
    easy, r = decisions("mean-z", 0.5)
    assert easy == {"q1", "q2"}
    assert r.counts == {"too-easy": 2, "kept": 4, "insufficient": 0}


def test_all_z_rule():
    easy, _ = decisions("all-z", 0.5)
    assert easy == {"q2"}


def test_a_tie_at_the_threshold_is_too_easy():
    assert decisions("all-z", 1.0)[0] == {"q2"}
    assert decisions("mean-z", 0.0)[0] == {"q1", "q2", "q6"}
    assert decisions("mean-z", 4 / 3)[0] == {"q2"}
    assert decisions("mean-z", 4 / 3 + 1e-6)[0] == set()


def test_samples_takes_the_first_answers_by_sample_index():
    # with one sample A's q2 is 0.9: mean 3.7/6, the z-scores change and B's and C's do not
    r = by_pair(calibrate(answers(), ["A", "B", "C"], rule="mean-z", threshold=0.5, samples=1))
    assert r["q2"].scores["A"].s == pytest.approx(0.9) and r["q2"].scores["A"].n == 1
    values = [0.6, 0.9, 0.5, 0.5, 0.6, 0.6]
    mean = sum(values) / 6
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 6)
    assert r["q2"].scores["A"].z == pytest.approx((0.9 - mean) / sd)
    assert r["q2"].scores["B"].z == pytest.approx(1.0)


def test_too_few_models_is_insufficient_and_min_models_lowers_the_bar():
    rows = [a for a in answers() if not (a.qa_pair_id == "q1" and a.model == "C")]
    r = by_pair(calibrate(rows, ["A", "B", "C"], rule="mean-z", threshold=0.5))
    assert r["q1"].decision == "insufficient" and r["q1"].models_with_z == 2
    r = by_pair(calibrate(rows, ["A", "B", "C"], rule="mean-z", threshold=0.5, min_models=2))
    assert r["q1"].decision in ("too-easy", "kept")


def test_a_model_with_zero_spread_has_no_z_and_no_division_by_zero():
    rows = answers() + [ScoredAnswer(p, "D", "closed-book", 0, "swe-qa-pro", "j", 0.5, 1) for p in PAIRS]
    r = calibrate(rows, ["A", "B", "C", "D"], rule="mean-z", threshold=0.5)
    assert r.model_stats["D"].sd == 0 and not r.model_stats["D"].usable
    assert all(p.scores["D"].z is None for p in r.pairs)
    assert {p.decision for p in r.pairs} == {"insufficient"}
    r = calibrate(rows, ["A", "B", "C", "D"], rule="mean-z", threshold=0.5, min_models=3)
    assert {p.qa_pair_id for p in r.pairs if p.decision == "too-easy"} == {"q1", "q2"}


def test_listed_pairs_without_answers_are_insufficient():
    r = calibrate(answers(), ["A", "B", "C"], rule="mean-z", threshold=0.5, pair_ids=["q1", "nope"])
    assert [p.decision for p in r.pairs] == ["too-easy", "insufficient"]
    assert r.pairs[1].mean_z is None


@pytest.mark.parametrize("kw, message", [
    ({"rule": "median"}, "unknown calibration rule"),
    ({"threshold": math.nan}, "not a finite number"),
    ({"min_models": 4}, "between 1 and the 3 models"),
    ({"min_models": 0}, "between 1 and the 3 models"),
    ({"samples": 0}, "at least 1"),
])
def test_bad_parameters_are_refused(kw, message):
    args = {"rule": "mean-z", "threshold": 0.5, **kw}
    with pytest.raises(BenchwrightError, match=message):
        calibrate(answers(), ["A", "B", "C"], **args)
    with pytest.raises(BenchwrightError, match="named twice"):
        calibrate(answers(), ["A", "A"], rule="mean-z", threshold=0.5)


def test_histogram_bins():
    rows = dict(z_histogram([-3, -2, -0.1, 0, 0.49, 0.5, 2, 5, None]))
    assert rows["< -2"] == 1 and rows["[-2, -1.5)"] == 1 and rows["[-0.5, 0)"] == 1
    assert rows["[0, 0.5)"] == 2 and rows["[0.5, 1)"] == 1 and rows[">= 2"] == 2
    assert sum(rows.values()) == 8 and len(rows) == 10


def test_choose_panel_takes_the_most_judged_and_says_so():
    from benchwright.core.calibration import choose_panel

    rows = [*answers(), ScoredAnswer("q1", "A", "closed-book", 0, "checklist", "k", 0.5, 1),
            ScoredAnswer("q1", "A", "agentic", 0, "swe-qa-pro", "j2", 0.5, 1)]
    panel = choose_panel(rows, conditions=("closed-book", "direct"))
    assert (panel.judge, panel.judge_model, panel.models, panel.conditions) == ("swe-qa-pro", "j", ("A", "B", "C"),
                                                                                ("closed-book",))
    assert panel.notes == ("judge swe-qa-pro (the most judged answers; also: checklist; --judge)",)
    assert choose_panel(rows, conditions=("closed-book",), judge="checklist").models == ("A",)
    with pytest.raises(BenchwrightError, match=r"judged by code-qa-bench; judged answers that exist:\n  A \(closed-book\) judged by swe-qa-pro / j: 7 answers"):
        choose_panel(rows, conditions=("closed-book",), judge="code-qa-bench")
    with pytest.raises(BenchwrightError, match="no judged answers under direct"):
        choose_panel(rows, conditions=("direct",))
