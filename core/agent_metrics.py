"""Direct answers against agent answers, and how the agents used their tools: two sections of ``benchwright report``.

Pure functions over the values of :mod:`benchwright.core.metrics` (judged runs, overrides already applied) and
over plain trajectory records (no store, no UI). What is computed, and from which paper:

- :func:`agent_gap`: per answering model and judge, the mean score rate of the model's answers without the
  repository (``direct``, ``closed-book``) and of its answers made inside it (``agentic``, and the other conditions
  that run the agent), over the pairs that have both, and the gap (agent - direct) in percentage points, with a
  paired bootstrap 95 % interval (SWE-QA-Pro §4.2 Table 2: every model "direct" beside "+ Agent"; the gap the
  abstract quotes, "a 13-point gap for Claude Sonnet 4.5", is Table 2's Overall difference).
- :func:`tool_usage`: per answering model and condition, the tool calls per tool, calls and turns per answer, and
  the failed runs (SWE-QA-Pro §4.3 Figure 4, "tool usage behavior across models").

How scores combine for the gap (also in docs/metrics.md, "Direct vs agent"):

1. An answer's rate is the mean over its scored runs (:func:`benchwright.core.metrics.answer_scores`, human
   overrides applied, unscored runs left out) -- as everywhere in the report.
2. A pair's rate under one condition is the mean over its samples (an answer is pair, model, condition and sample
   index: K samples are K answers), so a pair with three samples weighs as much as a pair with one.
3. The two conditions are compared on the pairs that have a scored answer under both (paired, ``pairs``); pairs with
   only one side are counted (``direct_only``, ``agent_only``) and left out of every mean of the row.
4. Each no-repository condition is its own baseline (``direct`` and ``closed-book`` are not pooled: a model with both
   gets two rows), and each agent condition its own treatment; the row in Table 2's form is direct -> agentic.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .agent.tools import TOOL_NAMES
from .metrics import JUDGES, JudgedRun, answer_scores, scores_checklist
from .vocabulary import CONDITION_REGISTRY, DEFAULT_AGENT_CONDITION

BOOTSTRAP_RESAMPLES = 10_000
"""Resamples of the paired bootstrap interval of the gap (percentile method, 95 %)."""

BOOTSTRAP_SEED = 0
"""Seed of the bootstrap's generator (numpy ``default_rng``): the same data gives the same interval."""


def condition_side(condition: str) -> str | None:
    """Which side of the direct-vs-agent comparison answers of ``condition`` are on.

    Returns ``"direct"`` for a condition without repository access (``direct``, ``closed-book``), ``"agent"`` for
    one whose answers the agent writes inside the repository or its code-only copy (``agentic``, ``documented``,
    ``code-only``), ``None`` for a name that is not a registered condition. The access is the condition
    registry's (:attr:`benchwright.core.vocabulary.Condition.needs_agent`)."""
    if condition not in CONDITION_REGISTRY:
        return None
    return "agent" if CONDITION_REGISTRY.get(condition).needs_agent else "direct"


def _condition_rank(condition: str, first: str) -> tuple:
    names = list(CONDITION_REGISTRY.names())
    return (condition != first, names.index(condition) if condition in names else len(names), condition)


# ------------------------------------------------------------------------------------------------- gap
@dataclass(frozen=True)
class DimensionGap:
    """One dimension's mean score (in the dimension's points) on each side, over the paired pairs (Table 2's
    columns: correctness, completeness, relevance, clarity, reasoning for the SWE-QA-Pro judge)."""

    key: str
    label: str
    max: float
    direct: float
    agent: float


@dataclass(frozen=True)
class GapRow:
    """A model's direct answers beside its agent answers under one judge (SWE-QA-Pro §4.2 Table 2).

    Attributes:
        model, judge, judge_model: the answering model, the judge and the model that judged.
        direct_condition, agent_condition: the two conditions compared (e.g. ``direct`` and ``agentic``).
        pairs: pairs with a scored answer under both (the paired n every mean of the row is over).
        direct_only, agent_only: pairs scored under one side only (left out, counted).
        direct_samples, agent_samples: answers (samples) behind the paired pairs on each side.
        direct_pct, agent_pct: mean over the paired pairs of the pair's rate (mean over its samples), in %;
            ``None`` when ``pairs`` is 0.
        gap_pct: ``agent_pct - direct_pct`` in percentage points; ``None`` when ``pairs`` is 0.
        ci_low_pct, ci_high_pct: the paired bootstrap 95 % interval of the gap (percentile method,
            :data:`BOOTSTRAP_RESAMPLES` resamples of the pairs, seed :data:`BOOTSTRAP_SEED`); ``None`` with fewer
            than two pairs.
        dimensions: per dimension, the mean on each side (dimension judges only; empty for the checklist judge,
            whose items differ from pair to pair).
        direct_total, agent_total: the sum of the dimension means (Table 2's "Overall", out of ``total_max``);
            ``None`` for the checklist judge.
    """

    model: str
    judge: str
    judge_model: str
    direct_condition: str
    agent_condition: str
    pairs: int
    direct_only: int
    agent_only: int
    direct_samples: int
    agent_samples: int
    direct_pct: float | None
    agent_pct: float | None
    gap_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    dimensions: tuple[DimensionGap, ...] = ()
    direct_total: float | None = None
    agent_total: float | None = None
    total_max: float | None = None


def paired_bootstrap_ci(differences: Sequence[float], *, resamples: int = BOOTSTRAP_RESAMPLES,
                        seed: int = BOOTSTRAP_SEED, level: float = 0.95) -> tuple[float, float] | None:
    """The percentile bootstrap interval of the mean of paired ``differences`` (any unit; the interval is in it).

    The pairs are resampled with replacement ``resamples`` times (numpy ``default_rng(seed)``), the mean taken
    each time, and the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles returned (Efron & Tibshirani 1993,
    ch. 13). Returns ``None`` for fewer than two differences. Raises ``ValueError`` for ``level`` outside (0, 1)
    or ``resamples`` below 1."""
    import numpy as np

    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, not {level!r}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, not {resamples!r}")
    values = np.asarray(differences, dtype=float)
    if len(values) < 2:
        return None
    rng = np.random.default_rng(seed)
    chunk = max(1, 1_000_000 // len(values))  # at most a million indices in memory at once (8 MB)
    means = np.concatenate([
        values[rng.integers(0, len(values), size=(min(chunk, resamples - done), len(values)))].mean(axis=1)
        for done in range(0, resamples, chunk)
    ])
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


@dataclass
class _Side:
    """One (model, judge, judge model, condition)'s answers grouped by pair: rates and dimension means."""

    rates: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    dims: dict[str, list[Mapping[str, float]]] = field(default_factory=lambda: defaultdict(list))

    def rate(self, pair: str) -> float:
        return statistics.fmean(self.rates[pair])

    def dim(self, pair: str, key: str) -> float | None:
        values = [d[key] for d in self.dims[pair] if key in d]
        return statistics.fmean(values) if values else None


def agent_gap(runs: Iterable[JudgedRun]) -> list[GapRow]:
    """Per answering model, judge and judge model, each no-repository condition against each agent condition that
    the model has scored answers under (see :func:`condition_side`): the paired mean score rates, the gap in
    percentage points with its bootstrap interval, the unpaired counts, and for dimension judges each dimension's
    mean on both sides (SWE-QA-Pro §4.2 Table 2).

    Per answer the rate is the mean over its scored runs, overrides applied (:func:`answer_scores`); per pair the
    mean over its samples; per row the mean over the pairs scored on both sides. Rows are sorted by model, judge
    (report order), judge model, then ``direct`` and ``agentic`` first."""
    runs = list(runs)
    pair_of = {r.answer_id: r.qa_pair_id for r in runs}
    labels: dict[str, tuple[str, float]] = {}
    for r in runs:
        for e in r.entries:
            labels.setdefault(e.key, (e.label, e.max))
    sides: dict[tuple[str, str, str], dict[str, _Side]] = defaultdict(lambda: defaultdict(_Side))
    for a in answer_scores(runs):
        if condition_side(a.key.condition) is None:
            continue
        side = sides[(a.key.model, a.key.judge, a.key.judge_model)][a.key.condition]
        pair = pair_of[a.answer_id]
        side.rates[pair].append(a.score_rate)
        side.dims[pair].append(a.dimensions)

    rows = []
    judge_rank = {j: i for i, j in enumerate(JUDGES)}
    for (model, judge, judge_model) in sorted(sides, key=lambda k: (k[0], judge_rank.get(k[1], len(JUDGES)), k[1],
                                                                   k[2])):
        by_condition = sides[(model, judge, judge_model)]
        directs = sorted((c for c in by_condition if condition_side(c) == "direct"),
                         key=lambda c: _condition_rank(c, "direct"))
        agents = sorted((c for c in by_condition if condition_side(c) == "agent"),
                        key=lambda c: _condition_rank(c, DEFAULT_AGENT_CONDITION))
        for dc in directs:
            for ac in agents:
                rows.append(_gap_row(model, judge, judge_model, dc, ac, by_condition[dc], by_condition[ac], labels))
    return rows


def _gap_row(model: str, judge: str, judge_model: str, dc: str, ac: str, d: _Side, a: _Side,
             labels: Mapping[str, tuple[str, float]]) -> GapRow:
    paired = sorted(set(d.rates) & set(a.rates))
    dr = [d.rate(p) for p in paired]
    ar = [a.rate(p) for p in paired]
    ci = paired_bootstrap_ci([100.0 * (y - x) for x, y in zip(dr, ar, strict=True)])
    dims: list[DimensionGap] = []
    if paired and not scores_checklist(judge):
        keys = dict.fromkeys(k for p in paired for side in (d, a) for dd in side.dims[p] for k in dd)
        for key in keys:
            dv = [v for p in paired if (v := d.dim(p, key)) is not None]
            av = [v for p in paired if (v := a.dim(p, key)) is not None]
            if dv and av:
                label, top = labels.get(key, (key, 0.0))
                dims.append(DimensionGap(key, label, top, statistics.fmean(dv), statistics.fmean(av)))
    direct_pct = 100.0 * statistics.fmean(dr) if paired else None
    agent_pct = 100.0 * statistics.fmean(ar) if paired else None
    return GapRow(
        model=model, judge=judge, judge_model=judge_model, direct_condition=dc, agent_condition=ac,
        pairs=len(paired), direct_only=len(set(d.rates) - set(a.rates)), agent_only=len(set(a.rates) - set(d.rates)),
        direct_samples=sum(len(d.rates[p]) for p in paired), agent_samples=sum(len(a.rates[p]) for p in paired),
        direct_pct=direct_pct, agent_pct=agent_pct,
        gap_pct=None if direct_pct is None or agent_pct is None else agent_pct - direct_pct,
        ci_low_pct=ci[0] if ci else None, ci_high_pct=ci[1] if ci else None, dimensions=tuple(dims),
        direct_total=sum(x.direct for x in dims) if dims else None,
        agent_total=sum(x.agent for x in dims) if dims else None,
        total_max=sum(x.max for x in dims) if dims else None,
    )


# ---------------------------------------------------------------------------------------------- tool usage
@dataclass(frozen=True)
class TrajectoryRecord:
    """One stored trajectory the tool-usage section reads.

    Attributes:
        model, condition: the answering model and the condition.
        status: ``ok`` (the trajectory of a stored answer, ``answers.trajectory_json``) or ``failed`` (the latest
            ``answer_runs`` row of a sample that has no answer).
        trajectory: the parsed JSON (our shape: a list of :meth:`benchwright.core.agent.model.Turn.as_json`
            objects), or any other JSON an import kept.
        reason: why a failed run failed (``turn limit reached (25) without Finish``, ``provider error: ...``).
    """

    model: str
    condition: str
    status: str
    trajectory: Any
    reason: str | None = None


@dataclass(frozen=True)
class TurnCounts:
    """What one trajectory of ours holds: turns, tool calls per tool, refused calls and elided outputs."""

    turns: int
    calls: Mapping[str, int]
    refused: int
    elided: int


def count_trajectory(trajectory: Any) -> TurnCounts | None:
    """The counts of a trajectory in our shape (a non-empty JSON list of turns, each an object with an integer
    ``index`` and a list ``tool_uses`` of objects with a string ``name``: :meth:`Turn.as_json
    <benchwright.core.agent.model.Turn.as_json>`), or ``None`` for any other shape (an imported SWE-QA agent
    trace, say). A tool use with ``ok`` false counts as refused; one with ``elided_at_turn`` set as elided."""
    if not isinstance(trajectory, list) or not trajectory:
        return None
    calls: dict[str, int] = defaultdict(int)
    refused = elided = 0
    for turn in trajectory:
        if (not isinstance(turn, dict) or not isinstance(turn.get("index"), int)
                or not isinstance(turn.get("tool_uses"), list)):
            return None
        for use in turn["tool_uses"]:
            if not isinstance(use, dict) or not isinstance(use.get("name"), str):
                return None
            calls[use["name"]] += 1
            refused += use.get("ok", True) is False
            elided += use.get("elided_at_turn") is not None
    return TurnCounts(turns=len(trajectory), calls=dict(calls), refused=refused, elided=elided)


@dataclass(frozen=True)
class ToolUsageRow:
    """How one model used the tools under one condition (SWE-QA-Pro §4.3 Figure 4).

    Attributes:
        model, condition: the answering model and the condition.
        answers: answers whose trajectory is ours (the ones counted in ``calls`` and the means).
        calls: tool calls per tool over those answers: every tool of the agent (:data:`TOOL_NAMES
            <benchwright.core.agent.tools.TOOL_NAMES>`, zero included, in its order), then any other name a
            trajectory holds, sorted.
        calls_total: their sum; ``calls_per_answer`` and ``turns_per_answer`` the means over ``answers`` (``None``
            with no answer).
        refused_calls: calls the tools refused or that failed (a path outside the workspace, a command not
            allowed, a timeout), included in ``calls``; ``elided_outputs``: tool outputs elided to fit the context.
        failed_runs: samples whose latest run failed (no answer): their ``failed_calls`` and
            ``failed_turns_per_run``, and ``failed_reasons`` (how many failed for each reason, the text before
            the first ``:``, so ``provider error: HTTP 500`` counts as ``provider error``).
        not_ours: trajectories of another shape (imported), skipped.
    """

    model: str
    condition: str
    answers: int
    calls: Mapping[str, int]
    calls_total: int
    calls_per_answer: float | None
    turns_per_answer: float | None
    refused_calls: int
    elided_outputs: int
    failed_runs: int
    failed_calls: int
    failed_turns_per_run: float | None
    failed_reasons: Mapping[str, int]
    not_ours: int


def _reason_kind(reason: str | None) -> str:
    return (reason or "(no reason)").split(":", 1)[0].strip() or "(no reason)"


def tool_usage(records: Iterable[TrajectoryRecord]) -> list[ToolUsageRow]:
    """Per answering model and condition, tool calls per tool, calls and turns per answer, refused calls, elided
    outputs and failed runs with their reasons, from the stored trajectories (SWE-QA-Pro §4.3 Figure 4).

    Answers' trajectories give the counts and the means; failed runs are counted apart (their calls are not in
    ``calls``: a failed run has no answer); trajectories not in our shape (:func:`count_trajectory`) are counted
    as ``not_ours`` and skipped. Rows exist for every model and condition with a record; sorted by model, then
    ``agentic`` first."""
    grouped: dict[tuple[str, str], list[TrajectoryRecord]] = defaultdict(list)
    for rec in records:
        grouped[(rec.model, rec.condition)].append(rec)
    rows = []
    for model, condition in sorted(grouped, key=lambda k: (k[0], _condition_rank(k[1], DEFAULT_AGENT_CONDITION))):
        calls: dict[str, int] = defaultdict(int)
        answered: list[TurnCounts] = []
        failed: list[TurnCounts] = []
        reasons: dict[str, int] = defaultdict(int)
        not_ours = 0
        for rec in grouped[(model, condition)]:
            counts = count_trajectory(rec.trajectory)
            if rec.status != "ok":
                reasons[_reason_kind(rec.reason)] += 1
                failed.append(counts or TurnCounts(0, {}, 0, 0))
                continue
            if counts is None:
                not_ours += 1
                continue
            answered.append(counts)
            for name, n in counts.calls.items():
                calls[name] += n
        total = sum(calls.values())
        others = sorted(n for n in calls if n not in TOOL_NAMES)
        rows.append(ToolUsageRow(
            model=model, condition=condition, answers=len(answered),
            calls={n: calls.get(n, 0) for n in (*TOOL_NAMES, *others)},
            calls_total=total, calls_per_answer=total / len(answered) if answered else None,
            turns_per_answer=statistics.fmean(c.turns for c in answered) if answered else None,
            refused_calls=sum(c.refused for c in answered), elided_outputs=sum(c.elided for c in answered),
            failed_runs=len(failed), failed_calls=sum(sum(c.calls.values()) for c in failed),
            failed_turns_per_run=statistics.fmean(c.turns for c in failed) if failed else None,
            failed_reasons=dict(sorted(reasons.items())), not_ours=not_ours,
        ))
    return rows
