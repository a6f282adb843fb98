"""Paper metrics (benchwright.core.metrics) against values computed by hand for a small fixture.

The fixture (every number below is worked out in the comments next to the assertion that checks it):

Checklist: k1 (max 5), k2 (max 4) knowledge, clarity (max 1): s = k1 + k2 + cl out of 10.

model m-a, condition agentic, checklist judge "jx", two runs (0, 1):
  A1 (Python, Business Logic)      run0: 5+4+1 = 10 (perfect)    run1: 5+2+1 = 8
  A2 (Go, Business Logic)          run0: 2+0+1 = 3               run1: UNSCORED
  A3 (Python, Project Architecture) run0: judge 2+2+0 = 4, k1 overridden 2 -> 5, so 5+2+0 = 7   run1: 5+2+0 = 7
  A4 (no language)                 run0: UNSCORED (no scored run at all)
model m-b, agentic, checklist "jx", one run: A5 2+0+0 = 2, A6 5+0+0 = 5, A7 5+4+0 = 9.

SWE-QA-Pro judge "jy" (five dimensions, 1-10), m-a, three runs:
  A1 run0 [8,6,9,9,7] = 39   run1 [6,6,9,9,5] = 35   run2 [7,6,9,9,6] = 37
  A2 run0 [3,2,8,8,4] = 25   run1 [5,2,8,8,4] = 27   run2 UNSCORED
m-b: A8 (only judged here) run0 [3,3,3,3,3] = 15.
Code-QA-Bench judge "jz" (0-5), m-a: A1 run0 accuracy 4, completeness 3, specificity 5.
"""

from __future__ import annotations

import json
import math

import pytest

from benchwright.core.metrics import (
    NO_VALUE,
    EffectiveScore,
    FailureLabel,
    JudgedRun,
    PairStrata,
    ReportInputs,
    answer_scores,
    build_report,
    coverage,
    failure_breakdown,
    judge_stability,
    reference_scores,
    scalar_summary,
    summarize,
)

PY_BL = PairStrata(language="Python", category="Business Logic", theme="Web", qa_type="What", cluster_id="1.0",
                   cluster_name="routing")
GO_BL = PairStrata(language="Go", category="Business Logic", theme="CLI", qa_type="How")
PY_PA = PairStrata(language="Python", category="Project Architecture", theme="Web", qa_type="What",
                   cluster_id="1.0", cluster_name="routing")
NONE = PairStrata()

_ids = iter(range(1, 10_000))
SWE_DIMS = ("correctness", "completeness", "relevance", "clarity", "reasoning")


def checklist(answer, model, run, k1, k2, cl, strata, *, overridden_k1=False, status="scored", reason=None):
    entries = () if status == "unscored" else (
        EffectiveScore("k1", "Names the module", "knowledge", k1, 5, overridden=overridden_k1),
        EffectiveScore("k2", "Explains the flow", "knowledge", k2, 4),
        EffectiveScore("clarity", "Clarity", "clarity", cl, 1),
    )
    return JudgedRun(next(_ids), answer, "p-" + answer, model, "agentic", "checklist", "jx", run, status,
                     entries, overrides_used=int(overridden_k1), strata=strata, reason=reason)


def swe(answer, model, run, scores, strata, *, status="scored"):
    entries = () if status == "unscored" else tuple(
        EffectiveScore(k, k.title(), "dimension", s, 10) for k, s in zip(SWE_DIMS, scores, strict=True))
    return JudgedRun(next(_ids), answer, "p-" + answer, model, "agentic", "swe-qa-pro", "jy", run, status, entries,
                     strata=strata, reason="invalid JSON" if status == "unscored" else None)


RUNS = [
    checklist("A1", "m-a", 0, 5, 4, 1, PY_BL),
    checklist("A1", "m-a", 1, 5, 2, 1, PY_BL),
    checklist("A2", "m-a", 0, 2, 0, 1, GO_BL),
    checklist("A2", "m-a", 1, None, None, None, GO_BL, status="unscored", reason="item k2 missing"),
    checklist("A3", "m-a", 0, 5, 2, 0, PY_PA, overridden_k1=True),
    checklist("A3", "m-a", 1, 5, 2, 0, PY_PA),
    checklist("A4", "m-a", 0, None, None, None, NONE, status="unscored", reason="item k2 missing"),
    checklist("A5", "m-b", 0, 2, 0, 0, PY_BL),
    checklist("A6", "m-b", 0, 5, 0, 0, GO_BL),
    checklist("A7", "m-b", 0, 5, 4, 0, PY_PA),
    swe("A1", "m-a", 0, (8, 6, 9, 9, 7), PY_BL),
    swe("A1", "m-a", 1, (6, 6, 9, 9, 5), PY_BL),
    swe("A1", "m-a", 2, (7, 6, 9, 9, 6), PY_BL),
    swe("A2", "m-a", 0, (3, 2, 8, 8, 4), GO_BL),
    swe("A2", "m-a", 1, (5, 2, 8, 8, 4), GO_BL),
    swe("A2", "m-a", 2, (), GO_BL, status="unscored"),
    swe("A8", "m-b", 0, (3, 3, 3, 3, 3), NONE),
    JudgedRun(next(_ids), "A1", "p-A1", "m-a", "agentic", "code-qa-bench", "jz", 0, "scored", (
        EffectiveScore("accuracy", "Accuracy", "dimension", 4, 5),
        EffectiveScore("completeness", "Completeness", "dimension", 3, 5),
        EffectiveScore("specificity", "Specificity", "dimension", 5, 5),
    ), strata=PY_BL),
]
LABELS = [
    FailureLabel("A2", "m-a", "agentic", "misinterpretation", "llm"),
    FailureLabel("A5", "m-b", "agentic", "edit-bias", "annotator"),
    FailureLabel("A7", "m-b", "agentic", "hallucination", "llm"),
]


def one(rows, **match):
    found = [r for r in rows if all(getattr(r, k) == v for k, v in match.items())]
    assert len(found) == 1, (match, found)
    return found[0]


def test_one_run_rates_follow_repoprobe_5_1_3():
    r = checklist("X", "m", 0, 5, 2, 1, NONE).rates()
    # s = 8: overall 8/10, knowledge 7/9, clarity 1/1, not perfect
    assert r.score_rate == pytest.approx(0.8) and r.knowledge == pytest.approx(7 / 9) and r.clarity == 1
    assert not r.perfect
    assert checklist("X", "m", 0, 5, 4, 1, NONE).rates().perfect
    assert checklist("X", "m", 0, None, None, None, NONE, status="unscored").rates() is None


def test_a_scored_run_with_a_missing_score_counts_as_unscored():
    bad = checklist("X", "m", 0, 5, None, 1, NONE)
    assert not bad.is_scored and bad.rates() is None
    row = one(coverage([bad, checklist("Y", "m", 0, 5, 4, 1, NONE)]), model="m")
    assert (row.runs_scored, row.runs_unscored, row.answers_unscored) == (1, 1, 1)
    assert row.unscored_reasons == {"scored without every score": 1}


def test_checklist_metrics_per_model_by_hand():
    rows = summarize(RUNS)
    a = one(rows, model="m-a", judge="checklist")
    # per answer, mean over scored runs:
    #   A1 overall (1.0 + 0.8)/2 = 0.9, knowledge (9/9 + 7/9)/2 = 16/18, clarity 1, perfect share 1/2
    #   A2 overall 0.3 (run1 unscored, left out), knowledge 2/9, clarity 1, perfect 0
    #   A3 overall (0.7 + 0.7)/2 = 0.7 (run0 uses the override k1 = 5), knowledge 7/9, clarity 0, perfect 0
    #   A4 has no scored run: not averaged
    # Overall   = (0.9 + 0.3 + 0.7)/3 = 63.333 %
    # Knowledge = (16/18 + 4/18 + 14/18)/3 = 34/54 = 62.963 %
    # Clarity   = (1 + 1 + 0)/3 = 66.667 %
    # PSR       = (0.5 + 0 + 0)/3 = 16.667 %
    assert a.overall_pct == pytest.approx(100 * 1.9 / 3)
    assert a.knowledge_pct == pytest.approx(100 * 34 / 54)
    assert a.clarity_pct == pytest.approx(200 / 3)
    assert a.perfect_solve_pct == pytest.approx(100 / 6)
    assert (a.answers, a.runs, a.judge_model, a.axis, a.stratum) == (3, 5, "jx", None, None)
    b = one(rows, model="m-b", judge="checklist")
    # m-b: overall (0.2 + 0.5 + 0.9)/3 = 53.333 %, knowledge (2/9 + 5/9 + 9/9)/3 = 16/27 = 59.259 %, clarity 0, PSR 0
    assert b.overall_pct == pytest.approx(160 / 3)
    assert b.knowledge_pct == pytest.approx(1600 / 27)
    assert (b.clarity_pct, b.perfect_solve_pct) == (0, 0)
    # a scalar judge gets its score rate as overall and no checklist-only metrics
    s = one(rows, model="m-a", judge="swe-qa-pro")
    assert s.overall_pct == pytest.approx(63.0)
    assert (s.knowledge_pct, s.clarity_pct, s.perfect_solve_pct) == (None, None, None)


def test_the_override_changes_the_number():
    without = [r if r.answer_id != "A3" or r.run_index != 0 else checklist("A3", "m-a", 0, 2, 2, 0, PY_PA)
               for r in RUNS]
    a = one(summarize(without), model="m-a", judge="checklist")
    # A3 becomes (0.4 + 0.7)/2 = 0.55, so overall (0.9 + 0.3 + 0.55)/3 = 58.333 %
    assert a.overall_pct == pytest.approx(100 * 1.75 / 3)


def test_stratified_by_language_and_category():
    rows = [r for r in summarize(RUNS, by="language") if r.model == "m-a" and r.judge == "checklist"]
    assert [r.stratum for r in rows] == ["Go", "Python"]
    go, py = rows
    # Go: only A2 -> 30 %, knowledge 2/9 = 22.222 %, clarity 100 %, PSR 0
    assert (go.answers, go.overall_pct, go.clarity_pct, go.perfect_solve_pct) == (1, pytest.approx(30), 100, 0)
    assert go.knowledge_pct == pytest.approx(200 / 9)
    # Python: A1, A3 -> (0.9 + 0.7)/2 = 80 %, knowledge (16/18 + 14/18)/2 = 83.333 %, clarity 50 %, PSR 25 %
    assert py.overall_pct == pytest.approx(80) and py.knowledge_pct == pytest.approx(250 / 3)
    assert (py.clarity_pct, py.perfect_solve_pct, py.axis) == (50, 25, "language")
    cats = {r.stratum: r for r in summarize(RUNS, by="category") if r.model == "m-a" and r.judge == "checklist"}
    # Business Logic: A1, A2 -> (0.9 + 0.3)/2 = 60 %, PSR (0.5 + 0)/2 = 25 %; Project Architecture: A3 -> 70 %
    assert cats["Business Logic"].overall_pct == pytest.approx(60)
    assert cats["Business Logic"].perfect_solve_pct == pytest.approx(25)
    assert cats["Project Architecture"].overall_pct == pytest.approx(70)
    clusters = {r.stratum for r in summarize(RUNS, by="cluster") if r.model == "m-a"}
    assert clusters == {"1.0 routing", NO_VALUE}  # A2 has no cluster
    with pytest.raises(ValueError, match="unknown stratification axis 'repo'"):
        summarize(RUNS, by="repo")


def test_strata_value_fallbacks():
    assert PairStrata().value("theme") == NO_VALUE
    assert PairStrata(cluster_name="only name").value("cluster") == "only name"
    assert PairStrata(qa_type="Why").value("qa_type") == "Why"


def test_judge_stability_table_5_form_by_hand():
    rows = judge_stability(RUNS)
    c = one(rows, model="m-a", judge="checklist")
    # answers scored in both runs: A1, A3 (A2 lacks run1 -> left out; A4 has no scored run)
    # run0 = (1.0 + 0.7)/2 = 85 %, run1 = (0.8 + 0.7)/2 = 75 %
    # mean 80; sample std sqrt((5^2 + 5^2)/1) = 7.0711; population std 5; range 10
    assert [(m.run_index, m.answers, m.score_rate_pct) for m in c.runs] == [
        (0, 2, pytest.approx(85)), (1, 2, pytest.approx(75))]
    assert (c.answers, c.answers_left_out) == (2, 1)
    assert c.score_rate_pct == pytest.approx(80)
    assert c.std_pct == pytest.approx(math.sqrt(50))
    assert c.std_population_pct == pytest.approx(5)
    assert c.range_pct == pytest.approx(10)
    s = one(rows, model="m-a", judge="swe-qa-pro")
    # only A1 is scored in all three runs: 39/50, 35/50, 37/50 = 78, 70, 74 %
    # mean 74; sample std sqrt((16 + 16 + 0)/2) = 4; population sqrt(32/3) = 3.266; range 8
    assert [m.score_rate_pct for m in s.runs] == [pytest.approx(78), pytest.approx(70), pytest.approx(74)]
    assert (s.answers, s.answers_left_out) == (1, 1)
    assert s.std_pct == pytest.approx(4) and s.std_population_pct == pytest.approx(math.sqrt(32 / 3))
    assert s.range_pct == pytest.approx(8) and s.score_rate_pct == pytest.approx(74)
    # one run: no spread
    z = one(rows, model="m-a", judge="code-qa-bench")
    assert (z.std_pct, z.range_pct, z.score_rate_pct) == (None, None, pytest.approx(80))


def test_scalar_judges_per_dimension_and_final_score():
    rows = scalar_summary(RUNS)
    assert [(r.model, r.judge) for r in rows] == [
        ("m-a", "swe-qa-pro"), ("m-a", "code-qa-bench"), ("m-b", "swe-qa-pro")]
    s = rows[0]
    # per answer means over its scored runs:
    #   A1: correctness (8+6+7)/3 = 7, completeness 6, relevance 9, clarity 9, reasoning (7+5+6)/3 = 6; rate 37/50
    #   A2: correctness (3+5)/2 = 4, completeness 2, relevance 8, clarity 8, reasoning 4; rate 26/50
    # model: correctness 5.5, completeness 4, relevance 8.5, clarity 8.5, reasoning 5; total 31.5 / 50
    # final = (0.74 + 0.52)/2 = 63 %
    assert [(d.key, d.mean, d.answers) for d in s.dimensions] == [
        ("correctness", 5.5, 2), ("completeness", 4, 2), ("relevance", 8.5, 2), ("clarity", 8.5, 2),
        ("reasoning", 5, 2)]
    assert (s.total, s.total_max, s.answers, s.runs) == (31.5, 50, 2, 5)
    assert s.final_pct == pytest.approx(63)
    z = rows[1]
    # Code-QA-Bench normalized mean: (4 + 3 + 5)/3 / 5 = 0.8
    assert z.final_pct == pytest.approx(80) and z.total == 12 and z.total_max == 15


def test_imported_scores_use_their_own_maxima():
    run = JudgedRun(1, "A", "p", "m", "direct", "imported", "swe-qa-authors", 0, "scored", (
        EffectiveScore("correctness", "correctness", "dimension", 16, 20),
        EffectiveScore("clarity", "clarity", "dimension", 9, 10),
    ))
    # (16 + 9) / (20 + 10) = 83.333 %
    assert one(scalar_summary([run]), model="m").final_pct == pytest.approx(250 / 3)


def test_unscored_runs_are_counted_and_overrides_reported():
    a = one(coverage(RUNS), model="m-a", judge="checklist")
    # A1..A4 judged; A4 has no scored run; 5 scored runs, 2 unscored (A2 run1, A4 run0); 1 override (A3 run0)
    assert (a.answers, a.answers_scored, a.answers_unscored) == (4, 3, 1)
    assert (a.runs_scored, a.runs_unscored, a.overrides_used) == (5, 2, 1)
    assert a.unscored_reasons == {"item k2 missing": 2}
    s = one(coverage(RUNS), model="m-a", judge="swe-qa-pro")
    assert (s.runs_scored, s.runs_unscored, s.overrides_used) == (5, 1, 0)


def test_failure_modes_table_7_by_hand():
    ref = reference_scores(RUNS)
    # the checklist judge is the reference where it scored the answer, even if a scalar judge also did
    assert ref["A2"] == ("checklist", pytest.approx(0.3)) and ref["A8"] == ("swe-qa-pro", pytest.approx(0.3))
    rows = failure_breakdown(RUNS, LABELS)
    a = one(rows, model="m-a")
    # m-a below 60 %: A2 (0.3) only; labelled misinterpretation -> 1 of 1 classified = 100 %
    assert (a.below, a.classified, a.unclassified, a.labelled_not_below) == (1, 1, 0, 0)
    assert a.counts["misinterpretation"] == 1 and a.pct_of_classified["misinterpretation"] == 100
    assert a.pct_of_classified["edit-bias"] == 0
    b = one(rows, model="m-b")
    # m-b below 60 %: A5 (0.2), A6 (0.5), A8 (0.3 by swe-qa-pro); A5 is edit bias, A6 and A8 unlabelled;
    # A7 (0.9) is labelled hallucination but not a failure case
    assert (b.below, b.classified, b.unclassified, b.labelled_not_below) == (3, 1, 2, 1)
    assert b.counts == {"edit-bias": 1, "shallow-explanation": 0, "misinterpretation": 0, "context-miss": 0,
                        "hallucination": 0}
    assert b.pct_of_classified["edit-bias"] == 100
    assert b.pct_of_below["edit-bias"] == pytest.approx(100 / 3)
    assert b.reference_judges == {"checklist": 2, "swe-qa-pro": 1}
    with pytest.raises(ValueError, match="threshold"):
        failure_breakdown(RUNS, LABELS, threshold=60)


def test_answer_scores_average_repeated_runs():
    scores = {(s.key.judge, s.answer_id): s for s in answer_scores(RUNS)}
    assert scores[("checklist", "A1")].runs == 2 and scores[("checklist", "A1")].perfect_share == 0.5
    assert ("checklist", "A4") not in scores


def test_build_report_is_json_ready():
    report = build_report(ReportInputs(tuple(RUNS), tuple(LABELS), {("m-a", "agentic"): 4}),
                          by=["language", "qa_type"])
    data = json.loads(json.dumps(report.to_dict()))
    assert set(data["strata"]) == {"language", "qa_type"}
    assert data["answers"] == [{"model": "m-a", "condition": "agentic", "answers": 4}]
    first = data["summary"][0]
    assert (first["model"], first["judge"]) == ("m-a", "checklist")
    assert first["overall_pct"] == pytest.approx(100 * 1.9 / 3)
    assert not report.is_empty and build_report(ReportInputs()).is_empty
    with pytest.raises(ValueError, match="unknown stratification axis"):
        build_report(ReportInputs(), by=["nope"])
