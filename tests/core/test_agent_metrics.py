"""Direct vs agent gap and tool usage (benchwright.core.agent_metrics) against numbers worked out by hand.

Gap fixture: model "m", SWE-QA-Pro-style judge "swe-qa-pro" (judge model "j") with two dimensions, correctness and
completeness, each out of 10; a run's rate is (c + comp) / 20.

  direct   P1 sample 0: run0 2+4 = 0.30, run1 4+4 = 0.40 -> answer 0.35
           P2 sample 0: 5+5 = 0.50
           P4 sample 0: 1+1 = 0.10                      (direct only)
  agentic  P1 sample 0: 8+8 = 0.80; sample 1: 6+6 = 0.60 -> pair 0.70 (samples averaged first)
           P2 sample 0: judge 4+2, completeness overridden to 8 -> 4+8 = 0.60; run1 UNSCORED (ignored)
           P3 sample 0: 10+10 = 1.00                    (agent only)
  closed-book P1: 0+0 = 0.00
Paired (direct, agentic) = P1, P2: direct (0.35 + 0.50) / 2 = 42.5 %, agent (0.70 + 0.60) / 2 = 65 %, gap 22.5;
differences 35 and 10 points: every bootstrap mean is 10, 22.5 or 35, and each end has probability 1/4 > 2.5 %, so
the 95 % interval is exactly [10, 35].
Dimensions over P1, P2: direct correctness (3 + 5) / 2 = 4, completeness (4 + 5) / 2 = 4.5, Overall 8.5 / 20;
agent correctness ((8 + 6) / 2 + 4) / 2 = 5.5, completeness (7 + 8) / 2 = 7.5, Overall 13 / 20.
"""

from __future__ import annotations

import math

import pytest

from benchwright.core.agent.model import ToolUse, Turn
from benchwright.core.agent_metrics import (
    TrajectoryRecord,
    agent_gap,
    condition_side,
    count_trajectory,
    paired_bootstrap_ci,
    tool_usage,
)
from benchwright.core.metrics import EffectiveScore, JudgedRun, ReportInputs, build_report

_ids = iter(range(1, 10_000))


def swe(answer, pair, condition, run, c, comp, *, model="m", judge="swe-qa-pro", overridden=False,
        status="scored"):
    entries = () if status == "unscored" else (
        EffectiveScore("correctness", "Correctness", "dimension", c, 10),
        EffectiveScore("completeness", "Completeness", "dimension", comp, 10, overridden=overridden),
    )
    return JudgedRun(judgment_id=next(_ids), answer_id=answer, qa_pair_id=pair, model=model, condition=condition,
                     judge=judge, judge_model="j", run_index=run, status=status, entries=entries,
                     overrides_used=int(overridden))


RUNS = [
    swe("d1", "P1", "direct", 0, 2, 4), swe("d1", "P1", "direct", 1, 4, 4),
    swe("d2", "P2", "direct", 0, 5, 5),
    swe("d4", "P4", "direct", 0, 1, 1),
    swe("a1s0", "P1", "agentic", 0, 8, 8), swe("a1s1", "P1", "agentic", 0, 6, 6),
    swe("a2", "P2", "agentic", 0, 4, 8, overridden=True), swe("a2", "P2", "agentic", 1, 0, 0, status="unscored"),
    swe("a3", "P3", "agentic", 0, 10, 10),
    swe("c1", "P1", "closed-book", 0, 0, 0),
    # a model with agent answers only has no gap row
    swe("n1", "P1", "agentic", 0, 9, 9, model="n"),
]


def test_conditions_sides():
    assert [condition_side(c) for c in ("direct", "closed-book", "agentic", "documented", "code-only")] == [
        "direct", "direct", "agent", "agent", "agent"]
    assert condition_side("not-a-condition") is None


def test_gap_paired_samples_averaged_overrides_applied():
    rows = agent_gap(RUNS)
    assert [(r.model, r.direct_condition, r.agent_condition) for r in rows] == [
        ("m", "direct", "agentic"), ("m", "closed-book", "agentic")]
    r = rows[0]
    assert (r.judge, r.judge_model, r.pairs, r.direct_only, r.agent_only) == ("swe-qa-pro", "j", 2, 1, 1)
    assert (r.direct_samples, r.agent_samples) == (2, 3)
    assert r.direct_pct == pytest.approx(42.5)
    assert r.agent_pct == pytest.approx(65.0)
    assert r.gap_pct == pytest.approx(22.5)
    assert (r.ci_low_pct, r.ci_high_pct) == (pytest.approx(10.0), pytest.approx(35.0))
    dims = {d.key: (d.direct, d.agent, d.max) for d in r.dimensions}
    assert dims == {"correctness": (pytest.approx(4.0), pytest.approx(5.5), 10),
                    "completeness": (pytest.approx(4.5), pytest.approx(7.5), 10)}
    assert (r.direct_total, r.agent_total, r.total_max) == (pytest.approx(8.5), pytest.approx(13.0), 20)

    closed = rows[1]
    assert (closed.pairs, closed.direct_only, closed.agent_only) == (1, 0, 2)
    assert closed.gap_pct == pytest.approx(70.0)
    assert closed.ci_low_pct is None and closed.ci_high_pct is None  # one pair: no interval


def test_gap_without_override_differs():
    """The override of P2's completeness (2 -> 8) is what the gap uses: with the judge's 2 the agent mean drops."""
    runs = [swe("a2", "P2", "agentic", 0, 4, 2) if r.answer_id == "a2" and r.status == "scored" else r for r in RUNS]
    r = agent_gap(runs)[0]
    assert r.agent_pct == pytest.approx(100 * (0.70 + 0.30) / 2)


def test_checklist_judge_has_no_dimensions():
    def cl(answer, pair, condition, s):
        return JudgedRun(judgment_id=next(_ids), answer_id=answer, qa_pair_id=pair, model="m", condition=condition,
                         judge="checklist", judge_model="j", run_index=0, status="scored",
                         entries=(EffectiveScore("k1", "k1", "knowledge", s, 9),
                                  EffectiveScore("clarity", "Clarity", "clarity", 1, 1)))

    (r,) = agent_gap([cl("d", "P1", "direct", 2), cl("a", "P1", "agentic", 8)])
    assert (r.direct_pct, r.agent_pct) == (pytest.approx(30.0), pytest.approx(90.0))
    assert r.dimensions == () and r.direct_total is None


def test_no_agent_answers_no_rows():
    assert agent_gap([r for r in RUNS if r.condition != "agentic"]) == []
    assert agent_gap([]) == []


def test_bootstrap_interval():
    assert paired_bootstrap_ci([5.0]) is None
    assert paired_bootstrap_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)
    low, high = paired_bootstrap_ci([0.0, 10.0, 20.0, 30.0])
    assert 0 <= low < 15 < high <= 30
    assert paired_bootstrap_ci([0.0, 10.0, 20.0, 30.0]) == (low, high)  # seeded: the same every time
    with pytest.raises(ValueError):
        paired_bootstrap_ci([1.0, 2.0], level=1.5)


# ------------------------------------------------------------------------------------------ tool usage
def traj(*turns):
    return [Turn(index=i + 1, tool_uses=uses).as_json() for i, uses in enumerate(turns)]


def use(name, *, ok=True, elided=None):
    return ToolUse(call_id=f"c-{name}", name=name, arguments={}, output="", ok=ok, elided_at_turn=elided)


def test_tool_usage_counts():
    records = [
        TrajectoryRecord("m", "agentic", "ok", traj([use("search"), use("view")], [use("command_line", ok=False)],
                                                    [use("finish")])),
        TrajectoryRecord("m", "agentic", "ok", traj([use("search", elided=3)], [])),
        TrajectoryRecord("m", "agentic", "ok", {"steps": [{"action": "search"}]}),  # imported: not ours
        TrajectoryRecord("m", "agentic", "ok", [{"role": "assistant", "content": "x"}]),  # not ours either
        TrajectoryRecord("m", "agentic", "failed", traj([use("search")], [use("search")]),
                         "turn limit reached (25) without Finish"),
        TrajectoryRecord("m", "agentic", "failed", None, "provider error: HTTP 500 from the server"),
        TrajectoryRecord("m", "code-only", "ok", traj([use("finish")])),
    ]
    agentic, code_only = tool_usage(records)
    assert (agentic.model, agentic.condition, agentic.answers, agentic.not_ours) == ("m", "agentic", 2, 2)
    assert list(agentic.calls.items()) == [("search", 2), ("view", 1), ("command_line", 1), ("finish", 1)]
    assert (agentic.calls_total, agentic.calls_per_answer, agentic.turns_per_answer) == (5, 2.5, 2.5)
    assert (agentic.refused_calls, agentic.elided_outputs) == (1, 1)
    assert (agentic.failed_runs, agentic.failed_calls, agentic.failed_turns_per_run) == (2, 2, 1.0)
    assert agentic.failed_reasons == {"provider error": 1, "turn limit reached (25) without Finish": 1}
    assert (code_only.condition, code_only.answers, code_only.calls, code_only.turns_per_answer) == (
        "code-only", 1, {"search": 0, "view": 0, "command_line": 0, "finish": 1}, 1.0)


def test_other_tool_names_come_after_the_agents():
    (row,) = tool_usage([TrajectoryRecord("m", "agentic", "ok", traj([use("zz"), use("aa"), use("view")]))])
    assert list(row.calls) == ["search", "view", "command_line", "finish", "aa", "zz"]


def test_count_trajectory_shapes():
    assert count_trajectory([]) is None
    assert count_trajectory("not json") is None
    assert count_trajectory([{"index": 1, "tool_uses": [{"name": 3}]}]) is None
    assert count_trajectory(traj([use("view")])).calls == {"view": 1}


def test_report_has_both_sections():
    rep = build_report(ReportInputs(runs=tuple(RUNS), trajectories=(
        TrajectoryRecord("m", "agentic", "ok", traj([use("search")])),)))
    d = rep.to_dict()
    assert [r["agent_condition"] for r in d["agent_gap"]] == ["agentic", "agentic"]
    assert math.isclose(d["agent_gap"][0]["gap_pct"], 22.5)
    assert d["tool_usage"][0]["calls"] == {"search": 1, "view": 0, "command_line": 0, "finish": 0}
    assert "agent_gap" in d["conventions"] and "tool_usage" in d["conventions"]
