"""core.plot_data: the numbers behind the statistics screen's plots, worked out by hand."""

from __future__ import annotations

import pytest

from benchwright.core.metrics import EffectiveScore, JudgedRun, RunMean, StabilityRow, summarize
from benchwright.core.plot_data import (
    bin_labels,
    progress_over_time,
    score_distributions,
    stability_ranges,
)


def test_progress_counts_per_day_with_running_totals_on_one_day_axis():
    p = progress_over_time([("bo", "2026-03-04"), ("ada", "2026-03-02"), ("ada", "2026-03-02"),
                            ("ada", "2026-03-05"), ("bo", "2026-03-02")])
    assert p.days == ("2026-03-02", "2026-03-04", "2026-03-05")  # 03-03 had none: left out
    ada, bo = p.series
    assert (ada.annotator, ada.per_day, ada.cumulative, ada.total) == ("ada", (2, 0, 1), (2, 2, 3), 3)
    assert (bo.annotator, bo.per_day, bo.cumulative, bo.total) == ("bo", (1, 1, 0), (1, 2, 2), 2)
    assert progress_over_time([]).series == ()


def _run(answer, score, *, model="m", run_index=0):
    return JudgedRun(judgment_id=hash((answer, run_index)) % 10_000, answer_id=answer, qa_pair_id=answer,
                     model=model, condition="agentic", judge="imported", judge_model="j", run_index=run_index,
                     status="scored", entries=(EffectiveScore("s", "s", "dimension", score, 10.0),))


def test_score_bins_edges_and_mean_equal_the_report():
    # rates 0 %, 10 % (inner edge: upper bin), 55 %, 100 % (last bin); answer d judged twice: (90 + 100) / 2 = 95 %
    runs = [_run("a", 0), _run("b", 1), _run("c", 5.5), _run("e", 10), _run("d", 9), _run("d", 10, run_index=1)]
    (dist,) = score_distributions(runs)
    assert dist.scores_pct == pytest.approx((0.0, 10.0, 55.0, 95.0, 100.0))
    assert dist.counts == (1, 1, 0, 0, 0, 1, 0, 0, 0, 2)
    assert dist.mean_pct == pytest.approx(52.0) == pytest.approx(summarize(runs)[0].overall_pct)
    assert bin_labels(4) == ["0-25", "25-50", "50-75", "75-100"]
    assert sum(score_distributions(runs, bins=4)[0].counts) == 5
    with pytest.raises(ValueError):
        score_distributions(runs, bins=0)


def test_stability_keeps_groups_with_two_runs_and_their_range():
    two = StabilityRow("m", "agentic", "checklist", "j", (RunMean(0, 3, 80.0), RunMean(1, 3, 100.0),
                                                          RunMean(2, 3, 90.0)), 3, 0, 90.0, 10.0, 8.2, 20.0)
    one = StabilityRow("n", "agentic", "checklist", "j", (RunMean(0, 3, 50.0),), 3, 0, 50.0, None, None, None)
    (r,) = stability_ranges([two, one])
    assert (r.row, r.low_pct, r.high_pct) == (two, 80.0, 100.0) and r.high_pct - r.low_pct == two.range_pct
