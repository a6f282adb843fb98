"""Issue 16 item 6: RepoProbe Table 4 (per stratum the mean across models with the sample sd across models),
Table 6 instability cases (scalar runs spread while checklist runs agree), and the repository / QA-subtype axes.

The Table 4 figures are checked against numpy and :mod:`statistics` on a fixture of three models; the
instability listing on fixture judgments with one case in and one out for each condition.
"""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest

from benchwright.core.metrics import (
    AXIS_OPTIONS,
    AXIS_TITLES,
    CHECKLIST_TOLERANCE,
    INSTABILITY_THRESHOLD,
    STRATA,
    EffectiveScore,
    JudgedRun,
    PairStrata,
    ReportInputs,
    axis_of_option,
    build_report,
    instability_cases,
    stratum_summary,
    summarize,
)
from benchwright.core.registry import UnknownNameError

_ids = iter(range(1, 100_000))
NO_STRATA = PairStrata()
SWE_DIMS = ("correctness", "completeness", "relevance", "clarity", "reasoning")


def checklist_run(answer, model, run, total, strata=NO_STRATA, *, judge_model="jx"):
    """A checklist run scoring ``total`` of 10: k1 (max 9) takes all but the clarity point."""
    clarity = 1 if total >= 1 else 0
    entries = (EffectiveScore("k1", "point", "knowledge", total - clarity, 9),
               EffectiveScore("clarity", "Clarity", "clarity", clarity, 1))
    return JudgedRun(next(_ids), answer, "p-" + answer, model, "agentic", "checklist", judge_model, run, "scored",
                     entries, strata=strata)


def swe_run(answer, model, run, score, strata=NO_STRATA, *, judge_model="jy"):
    """A SWE-QA-Pro run giving every dimension ``score`` (1-10): normalized score = score / 10."""
    entries = tuple(EffectiveScore(k, k, "dimension", score, 10) for k in SWE_DIMS)
    return JudgedRun(next(_ids), answer, "p-" + answer, model, "agentic", "swe-qa-pro", judge_model, run, "scored",
                     entries, strata=strata)


# ------------------------------------------------------------------------------------------ the axes
def test_axes_live_once_in_core_with_their_cli_spellings():
    assert list(STRATA) == ["language", "category", "theme", "qa_type", "cluster", "repository", "qa_subtype", "task_set"]
    assert AXIS_OPTIONS["qa_type"] == "qa-type" and AXIS_OPTIONS["qa_subtype"] == "qa-subtype"
    assert AXIS_TITLES["repository"] == "Repository"
    assert axis_of_option("qa-subtype") == "qa_subtype" and axis_of_option("repository") == "repository"
    with pytest.raises(UnknownNameError, match="qa-subtype"):
        axis_of_option("nope")


def test_repository_and_qa_subtype_stratify():
    a = PairStrata(repository="flask", qa_subtype="design-rationale")
    b = PairStrata(repository="requests", qa_subtype=None)
    runs = [checklist_run("A1", "m", 0, 8, a), checklist_run("A2", "m", 0, 4, b)]
    by_repo = {r.stratum: r.overall_pct for r in summarize(runs, by="repository")}
    assert by_repo == pytest.approx({"flask": 80.0, "requests": 40.0})
    by_sub = {r.stratum: r.overall_pct for r in summarize(runs, by="qa_subtype")}
    assert by_sub == pytest.approx({"design-rationale": 80.0, "(none)": 40.0})


# ------------------------------------------------------------------------------------------- Table 4
# Three models, two categories; each model has two answers per category (checklist totals out of 10):
#   category A: m1 10, 8   m2 6, 4   m3 9, 10        category B: m1 3, 5   m2 7, 7   m3 2, 2
# and only m1 answers in category C (one model: no sd).
TOTALS = {
    ("m1", "A"): (10, 8), ("m2", "A"): (6, 4), ("m3", "A"): (9, 10),
    ("m1", "B"): (3, 5), ("m2", "B"): (7, 7), ("m3", "B"): (2, 2),
    ("m1", "C"): (6,),
}


def _table4_runs():
    runs = []
    for (model, cat), totals in TOTALS.items():
        for i, t in enumerate(totals):
            runs.append(checklist_run(f"{model}-{cat}-{i}", model, 0, t, PairStrata(category=cat)))
    return runs


def test_table4_mean_and_sample_sd_across_models_match_numpy_and_statistics():
    rows = {r.stratum: r for r in stratum_summary(summarize(_table4_runs(), by="category"))}
    assert set(rows) == {"A", "B", "C"}
    for cat in ("A", "B"):
        per_model = [100 * statistics.fmean(TOTALS[(m, cat)]) / 10 for m in ("m1", "m2", "m3")]
        perfect = [100 * statistics.fmean(1.0 if t == 10 else 0.0 for t in TOTALS[(m, cat)])
                   for m in ("m1", "m2", "m3")]
        r = rows[cat]
        assert r.models == 3 and r.answers == 6
        assert r.overall_mean_pct == pytest.approx(float(np.mean(per_model)))
        assert r.overall_sd_pct == pytest.approx(float(np.std(per_model, ddof=1)))
        assert r.overall_sd_pct == pytest.approx(statistics.stdev(per_model))
        assert r.overall_sd_pct != pytest.approx(float(np.std(per_model, ddof=0)))  # sample, not population
        assert r.perfect_solve_mean_pct == pytest.approx(float(np.mean(perfect)))
    # category A by hand: models 90, 50, 95 -> mean 78.33; perfect 50, 0, 50 -> 33.33
    assert rows["A"].overall_mean_pct == pytest.approx(235 / 3)
    assert rows["A"].perfect_solve_mean_pct == pytest.approx(100 / 3)
    assert rows["C"].models == 1 and rows["C"].overall_sd_pct is None and rows["C"].overall_mean_pct == 60.0


def test_table4_scalar_judge_has_no_perfect_solve_and_groups_per_judge_model():
    runs = [swe_run("a", "m1", 0, 8, PairStrata(category="A")), swe_run("b", "m2", 0, 4, PairStrata(category="A")),
            swe_run("c", "m1", 0, 6, PairStrata(category="A"), judge_model="other")]
    rows = stratum_summary(summarize(runs, by="category"))
    assert [(r.judge_model, r.models) for r in rows] == [("jy", 2), ("other", 1)]
    assert rows[0].overall_mean_pct == pytest.approx(60.0)
    assert rows[0].overall_sd_pct == pytest.approx(statistics.stdev([80.0, 40.0]))
    assert rows[0].perfect_solve_mean_pct is None


def test_table4_in_the_report_json():
    rep = build_report(ReportInputs(runs=tuple(_table4_runs())), by=["category", "repository"])
    data = json.loads(json.dumps(rep.to_dict()))
    cats = {r["stratum"]: r for r in data["strata_summary"]["category"]}
    assert cats["B"]["models"] == 3
    assert cats["B"]["overall_sd_pct"] == pytest.approx(statistics.stdev([40.0, 70.0, 20.0]))
    assert data["strata_summary"]["repository"][0]["stratum"] == "(none)"
    assert "n - 1" in data["conventions"]["strata_summary"]


# ------------------------------------------------------------------------------------------- Table 6
def _instability_runs():
    runs = []
    # IN: scalar 0.9 / 0.5 / 0.6 (range 0.4 >= 0.3), checklist 7 / 7.5 -> 0.70 / 0.75 (range 0.05 <= 0.1)
    runs += [swe_run("in", "m", i, s) for i, s in enumerate((9, 5, 6))]
    runs += [checklist_run("in", "m", 0, 7), checklist_run("in", "m", 1, 7)]
    # OUT (scalar agrees): scalar 0.8 / 0.7 (range 0.1), checklist agrees
    runs += [swe_run("scalar-agrees", "m", i, s) for i, s in enumerate((8, 7))]
    runs += [checklist_run("scalar-agrees", "m", i, 5) for i in range(2)]
    # OUT (checklist spreads too): scalar 0.9 / 0.3, checklist 9 / 4 (range 0.5)
    runs += [swe_run("both-spread", "m", i, s) for i, s in enumerate((9, 3))]
    runs += [checklist_run("both-spread", "m", 0, 9), checklist_run("both-spread", "m", 1, 4)]
    # OUT (one scalar run only): scalar 0.9, checklist agrees over two runs
    runs += [swe_run("one-scalar-run", "m", 0, 9), checklist_run("one-scalar-run", "m", 0, 6),
             checklist_run("one-scalar-run", "m", 1, 6)]
    # OUT (one checklist run only): scalar 1.0 / 0.2 spreads, but a single checklist run
    runs += [swe_run("one-checklist-run", "m", i, s) for i, s in enumerate((10, 2))]
    runs += [checklist_run("one-checklist-run", "m", 0, 6)]
    # IN at the exact edges (float slack): scalar 0.7 / 0.4 (range 0.3), checklist 0.6 / 0.5 (range 0.1)
    runs += [swe_run("edge", "m2", i, s) for i, s in enumerate((7, 4))]
    runs += [checklist_run("edge", "m2", 0, 6), checklist_run("edge", "m2", 1, 5)]
    return runs


def test_instability_cases_one_in_one_out_for_each_condition():
    cases = instability_cases(_instability_runs())
    assert [c.answer_id for c in cases] == ["in", "edge"]  # widest spread first
    first = cases[0]
    assert first.qa_pair_id == "p-in" and first.model == "m" and first.scalar_judge == "swe-qa-pro"
    assert first.scalar_scores == pytest.approx((0.9, 0.5, 0.6)) and first.scalar_range == pytest.approx(0.4)
    assert first.checklist_scores == pytest.approx((0.7, 0.7)) and first.checklist_range == pytest.approx(0.0)
    assert first.checklist_judge_model == "jx"


def test_instability_thresholds_are_options():
    runs = _instability_runs()
    assert INSTABILITY_THRESHOLD == 0.3 and CHECKLIST_TOLERANCE == 0.1
    # a looser checklist tolerance lets the answer whose checklist runs spread by 0.5 in
    assert {c.answer_id for c in instability_cases(runs, tolerance=0.5)} == {"in", "edge", "both-spread"}
    # a stricter threshold leaves the 0.3 edge out, a looser one lets the 0.1 spread in
    assert [c.answer_id for c in instability_cases(runs, threshold=0.35)] == ["in"]
    assert "scalar-agrees" in {c.answer_id for c in instability_cases(runs, threshold=0.1)}
    with pytest.raises(ValueError, match="between 0 and 1"):
        instability_cases(runs, threshold=1.5)


def test_instability_in_the_report():
    rep = build_report(ReportInputs(runs=tuple(_instability_runs())), checklist_tolerance=0.05)
    data = json.loads(json.dumps(rep.to_dict()))
    assert [c["answer_id"] for c in data["instability"]] == ["in"]
    assert data["instability_settings"] == {"threshold": 0.3, "checklist_tolerance": 0.05}
    assert data["instability"][0]["scalar_scores"] == pytest.approx([0.9, 0.5, 0.6])
