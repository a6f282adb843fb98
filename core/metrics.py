"""Paper metrics over judged answers: the numbers of ``benchwright report``.

Pure functions over plain dataclasses (no store, no UI). The store side (``benchwright.db.report``) reads the
tables into :class:`ReportInputs`; everything here is arithmetic on those inputs, with means from
:mod:`statistics` and spreads from :mod:`numpy`.

What is computed, and from which paper:

- :func:`summarize`: per model, condition, judge and judge model, Overall %, Knowledge %, Clarity % and
  Perfect Solve Rate % of the checklist judge (RepoProbe §5.1.3), the score rate % of the scalar judges
  (SWE-QA-Pro §4.1, Code-QA-Bench "Evaluation"); with ``by=`` the same per stratum (language, category,
  theme, QA type, cluster, repository, QA subtype: :data:`STRATUM_AXIS_REGISTRY`; RepoProbe §5.2.2 Table 4,
  SWE-QA-Pro appendix G).
- :func:`scalar_summary`: mean per dimension and the final normalized score of the scalar judges.
- :func:`judge_stability`: the score rate of each run, their standard deviation and range (RepoProbe §5.3.1
  Table 5), checklist and scalar judges alike.
- :func:`stratum_summary`: per stratum the mean across models with the sample standard deviation across models
  and the number of models (RepoProbe §5.2.2 Table 4).
- :func:`instability_cases`: answers whose scalar-judge runs spread widely while the checklist runs agree
  (RepoProbe §5.3.2 Table 6).
- :func:`coverage`: scored and unscored runs, answers without any scored run, overrides used.
- :func:`failure_breakdown`: failure modes of the answers below 60 % (RepoProbe §5.4 Table 7).
- :func:`benchwright.core.agent_metrics.agent_gap` and :func:`~benchwright.core.agent_metrics.tool_usage`: direct
  answers against agent answers (SWE-QA-Pro §4.2 Table 2) and the agents' tool calls (§4.3 Figure 4).
- :func:`build_report`: all of them at once, as a :class:`Report` with :meth:`Report.to_dict`.

How scores combine (the conventions, also in docs/metrics.md):

1. **One run** (one judgment of one judge on one answer, after human overrides). Checklist judge: score rate
   ``s/10``, knowledge rate ``s_kn/9``, clarity rate ``s_cl/1`` (knowledge items sum to 9 and the clarity item
   is 1: RepoProbe §4.1, §5.1.3); the run is a *perfect solve* when ``s = 10``. Scalar judges:
   ``sum(score) / sum(max)``, which is the dimension mean / 10 for SWE-QA-Pro (five dimensions, 1-10), the
   mean / 5 for Code-QA-Bench (three axes, 0-5, the "normalized mean") and ``sum / sum(max)`` for imported
   scores.
2. **Repeated runs** of one answer are averaged: the answer's rate is the mean of its scored runs' rates
   (SWE-QA-Pro §4.1: "each answer is scored independently three times, and scores are averaged"). Its perfect
   solve value is the *share* of its scored runs with ``s = 10``.
3. **A model's metric** is the mean over its answers of the per-answer values (RepoProbe §5.1.3: "the mean of
   s/10 ... the fraction with s = 10"). With the same number of runs for every answer this equals the mean over
   runs of each run's benchmark-wide metric, which is the "Score Rate" of RepoProbe Table 5.
4. **Unscored runs** (the judge's output failed validation) are left out of every mean and counted
   (:func:`coverage`); an answer without a single scored run is left out of the means and counted.
5. **Stability**: for each run index *r*, the mean rate over the answers scored in *every* run of that model
   and judge (so runs are compared on the same answers); the standard deviation and the range (max - min) of
   those run means. RepoProbe Table 5 does not say which standard deviation it reports; we report the
   *sample* standard deviation (``ddof=1``, the estimate of the judge's run-to-run spread from the runs we
   have) as ``std_pct`` and the population one (``ddof=0``) beside it as ``std_population_pct``.

Every percentage is a float in 0-100 (``*_pct``); dimension means are in the dimension's own scale.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from .checklist import CLARITY_POINTS, KNOWLEDGE_POINTS, TOTAL_POINTS
from .judges import JUDGE_REGISTRY, JUDGES, JudgeKind
from .judges import SCALAR_JUDGES as SCALAR_JUDGES
from .registry import Attribute, Names, Registry, UnknownNameError
from .vocabulary import FAILURE_MODE_NAMES as FAILURE_MODE_NAMES
from .vocabulary import FAILURE_MODES, FAILURE_THRESHOLD

if TYPE_CHECKING:
    from .agent_metrics import GapRow, ToolUsageRow, TrajectoryRecord

@dataclass(frozen=True)
class StratumAxis:
    """One axis a report can be stratified by.

    Attributes:
        name: the pair attribute (:class:`PairStrata`), the JSON key under ``strata`` and the CSV name
            (``by_NAME.csv``).
        option: its spelling in ``report --by``.
        display: how tables title it.
        source: where the axis comes from (a paper and section).
    """

    name: str
    option: str
    display: str
    source: str = ""


STRATUM_AXIS_REGISTRY: Registry[StratumAxis] = Registry("stratification axis")
"""Every stratification axis, in the order of ``report --by``'s choices and the report's tables."""

for _axis in (
    StratumAxis("language", "language", "Language", "RepoProbe §5.2.2 Table 4"),
    StratumAxis("category", "category", "Category", "RepoProbe §5.2.2 Table 4"),
    StratumAxis("theme", "theme", "Theme", "RepoProbe §5.2.2"),
    StratumAxis("qa_type", "qa-type", "QA type", "SWE-QA-Pro appendix G"),
    StratumAxis("cluster", "cluster", "Cluster", "SWE-QA-Pro appendix G.3"),
    StratumAxis("repository", "repository", "Repository", "RepoProbe §5.2.2, SWE-QA-Pro Table 2"),
    StratumAxis("qa_subtype", "qa-subtype", "QA subtype", "SWE-QA-Pro appendix G"),
    StratumAxis("task_set", "task-set", "Task set", "Code-QA-Bench \"Methodology 4\" (dual task set)"),
):
    STRATUM_AXIS_REGISTRY.register(_axis)

STRATA = Names(STRATUM_AXIS_REGISTRY)
"""Axes a report can be stratified by (a live view of :data:`STRATUM_AXIS_REGISTRY`)."""

AXIS_OPTIONS = Attribute(STRATUM_AXIS_REGISTRY, "option")
"""Axis -> its ``--by`` spelling (``qa_type`` -> ``qa-type``)."""

AXIS_TITLES = Attribute(STRATUM_AXIS_REGISTRY, "display")
"""Axis -> its title in tables (``qa_type`` -> ``QA type``)."""


def axis_of_option(option: str) -> str:
    """The axis a ``--by`` spelling names (``qa-type`` -> ``qa_type``; an axis name is accepted as it is).

    Raises:
        UnknownNameError: no axis is spelled so (the message lists the ``--by`` spellings).
    """
    for axis in STRATUM_AXIS_REGISTRY:
        if option in (axis.option, axis.name):
            return axis.name
    raise UnknownNameError("stratification axis", option, [a.option for a in STRATUM_AXIS_REGISTRY])


INSTABILITY_THRESHOLD = 0.3
"""Default least range (max - min, normalized score 0-1) of a scalar judge's runs on one answer for the answer to
be an instability case (RepoProbe §5.3.2 Table 6 shows such cases but states no threshold: ours)."""

CHECKLIST_TOLERANCE = 0.1
"""Default largest range (normalized score 0-1) of the checklist judge's runs on the same answer for them to
"agree" in an instability case (RepoProbe §5.3.2 Table 6; the paper states no tolerance: ours)."""

# JUDGES (report order), SCALAR_JUDGES, FAILURE_MODES and FAILURE_MODE_NAMES are the registries' live views
# (core/judges.py, core/vocabulary.py), imported above: a registered judge or mode is in every section.


NO_VALUE = "(none)"
"""Stratum value of pairs that have no value on the axis."""


# ------------------------------------------------------------------------------------------------ inputs
def scores_checklist(judge: str) -> bool:
    """True when ``judge``'s entries are checklist items (knowledge %, clarity % and perfect solve apply); an
    unregistered name is treated as a dimension judge."""
    return judge in JUDGE_REGISTRY and JUDGE_REGISTRY.get(judge).scores_checklist


@dataclass(frozen=True)
class EffectiveScore:
    """One checklist item's or dimension's effective score in one judgment (after human overrides); not the
    stored ``scores_json`` entry (that is :class:`benchwright.core.judgment.ScoreEntry`).

    Attributes:
        key: the item's or dimension's key (``k1``, ``clarity``, ``correctness``).
        label: its display text.
        kind: ``knowledge`` or ``clarity`` (checklist judge) or ``dimension`` (scalar judges).
        score: the score in points, or ``None`` when the judge gave none.
        max: the most points the entry can get (> 0).
        overridden: True when a human override replaced the judge's score.
    """

    key: str
    label: str
    kind: str
    score: float | None
    max: float
    overridden: bool = False


@dataclass(frozen=True)
class PairStrata:
    """The stratification attributes of a Q&A pair (language and theme fall back to its repository's)."""

    language: str | None = None
    category: str | None = None
    theme: str | None = None
    qa_type: str | None = None
    cluster_id: str | None = None
    cluster_name: str | None = None
    repository: str | None = None
    qa_subtype: str | None = None
    task_set: str | None = None

    def value(self, axis: str) -> str:
        """The pair's value on ``axis`` (one of :data:`STRATA`), :data:`NO_VALUE` when it has none.

        The cluster is shown as ``"<id> <name>"`` (SWE-QA-Pro appendix G.3 lists both). Raises ``ValueError``
        for an unknown axis."""
        if axis not in STRATA:
            raise ValueError(f"unknown stratification axis {axis!r}; use one of {', '.join(STRATA)}")
        if axis == "cluster":
            parts = [p for p in (self.cluster_id, self.cluster_name) if p not in (None, "")]
            return " ".join(str(p) for p in parts) or NO_VALUE
        v = getattr(self, axis)
        return NO_VALUE if v in (None, "") else str(v)


@dataclass(frozen=True)
class RunRates:
    """The rates of one scored run, fractions in 0-1 (RepoProbe §5.1.3 for the checklist parts).

    ``knowledge``/``clarity`` are ``None`` when the run has no entry of that kind (always for scalar judges)."""

    score_rate: float
    knowledge: float | None
    clarity: float | None
    perfect: bool


@dataclass(frozen=True)
class JudgedRun:
    """One run of one judge on one answer: a row of ``judgments`` with its answer and pair.

    Attributes:
        judgment_id: the ``judgments.id``.
        answer_id, qa_pair_id, model, condition: the answer judged and what it answers.
        judge: one of :data:`JUDGES`; ``judge_model`` the model that judged (or the source of imported scores).
        run_index: the repeat index (0-based).
        status: ``scored`` or ``unscored`` (the judge's output failed validation; ``reason`` says why).
        entries: the effective score entries (overrides applied).
        overrides_used: how many entries a human override replaced.
        strata: the pair's stratification attributes.
    """

    judgment_id: int
    answer_id: str
    qa_pair_id: str
    model: str
    condition: str
    judge: str
    judge_model: str
    run_index: int
    status: str
    entries: tuple[EffectiveScore, ...] = ()
    overrides_used: int = 0
    strata: PairStrata = field(default_factory=PairStrata)
    reason: str | None = None

    @property
    def key(self) -> GroupKey:
        """The report group this run belongs to."""
        return GroupKey(self.model, self.condition, self.judge, self.judge_model)

    @property
    def is_scored(self) -> bool:
        """True when the run counts in aggregates: status ``scored``, at least one entry, every entry scored.

        A run stored as ``scored`` with an entry lacking a score is treated as unscored (and counted so)."""
        return (
            self.status == "scored"
            and bool(self.entries)
            and all(e.score is not None for e in self.entries)
            and sum(e.max for e in self.entries) > 0
        )

    def rates(self) -> RunRates | None:
        """The run's :class:`RunRates`, or ``None`` when it is not :attr:`is_scored`.

        Checklist judge (RepoProbe §5.1.3): score rate ``s/10``, knowledge ``s_kn/9``, clarity ``s_cl/1``, perfect
        when ``s = 10`` (the fixed points of RepoProbe §4.1, as ``core.checklist`` defines them). Scalar judges:
        ``sum(score)/sum(max)``, i.e. the mean/10 of SWE-QA-Pro §4.1, the mean/5 of Code-QA-Bench "Evaluation",
        and sum/sum(max) for imported scores."""
        if not self.is_scored:
            return None
        total = sum(e.score for e in self.entries)  # type: ignore[misc]
        if not scores_checklist(self.judge):
            return RunRates(score_rate=total / sum(e.max for e in self.entries), knowledge=None, clarity=None,
                            perfect=math.isclose(total, sum(e.max for e in self.entries), abs_tol=1e-9))

        def part(kind: str, points: int) -> float | None:
            items = [e for e in self.entries if e.kind == kind]
            return sum(e.score for e in items) / points if items else None  # type: ignore[misc]

        return RunRates(
            score_rate=total / TOTAL_POINTS,
            knowledge=part("knowledge", KNOWLEDGE_POINTS),
            clarity=part("clarity", CLARITY_POINTS),
            perfect=total >= TOTAL_POINTS - 1e-9,
        )


@dataclass(frozen=True)
class FailureLabel:
    """The current failure-mode label of one answer (latest row of ``failure_modes``), RepoProbe §5.4.

    ``mode`` is one of :data:`FAILURE_MODES`; ``origin`` is ``llm`` or ``annotator``."""

    answer_id: str
    model: str
    condition: str
    mode: str
    origin: str


@dataclass(frozen=True)
class ReportInputs:
    """Everything a report is computed from.

    Attributes:
        runs: every current judgment (latest row per answer, judge, judge model and run index).
        failure_labels: the current failure-mode label of each labelled answer.
        answer_counts: answers stored per ``(model, condition)``, judged or not.
        trajectories: the stored agent trajectories (answers' and failed runs'), for the tool-usage section.
    """

    runs: tuple[JudgedRun, ...] = ()
    failure_labels: tuple[FailureLabel, ...] = ()
    answer_counts: Mapping[tuple[str, str], int] = field(default_factory=dict)
    trajectories: tuple[TrajectoryRecord, ...] = ()


@dataclass(frozen=True, order=True)
class GroupKey:
    """A report row's identity: the answering model and condition, the judge and the judging model."""

    model: str
    condition: str
    judge: str
    judge_model: str


def _judge_order(key: GroupKey) -> tuple:
    rank = JUDGES.index(key.judge) if key.judge in JUDGES else len(JUDGES)
    return (key.model, key.condition, rank, key.judge, key.judge_model)


def _pct(x: float | None) -> float | None:
    return None if x is None else 100.0 * x


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.fmean(vals) if vals else None


# ------------------------------------------------------------------------------------------ per answer
@dataclass(frozen=True)
class AnswerScore:
    """One answer's scores under one judge and judge model: means over its scored runs (SWE-QA-Pro §4.1).

    Rates are fractions in 0-1; ``perfect_share`` is the share of its runs with ``s`` at the maximum;
    ``dimensions`` maps each entry key to its mean score in points."""

    key: GroupKey
    answer_id: str
    strata: PairStrata
    runs: int
    score_rate: float
    knowledge: float | None
    clarity: float | None
    perfect_share: float
    dimensions: Mapping[str, float]


def answer_scores(runs: Iterable[JudgedRun]) -> list[AnswerScore]:
    """Per answer and :class:`GroupKey`, the mean over its scored runs of each run's rates.

    Unscored runs are ignored; an answer with no scored run gets no :class:`AnswerScore`. Repeated runs are
    averaged as in SWE-QA-Pro §4.1; the rates are those of RepoProbe §5.1.3. Sorted by key and answer id."""
    grouped: dict[tuple[GroupKey, str], list[JudgedRun]] = defaultdict(list)
    for run in runs:
        if run.is_scored:
            grouped[(run.key, run.answer_id)].append(run)
    out = []
    for (key, answer_id), rs in sorted(grouped.items(), key=lambda kv: (_judge_order(kv[0][0]), kv[0][1])):
        rates = [r.rates() for r in rs]
        dims: dict[str, list[float]] = defaultdict(list)
        for r in rs:
            for e in r.entries:
                dims[e.key].append(float(e.score))  # type: ignore[arg-type]
        out.append(AnswerScore(
            key=key, answer_id=answer_id, strata=rs[0].strata, runs=len(rs),
            score_rate=statistics.fmean(x.score_rate for x in rates),  # type: ignore[union-attr]
            knowledge=_mean(x.knowledge for x in rates),  # type: ignore[union-attr]
            clarity=_mean(x.clarity for x in rates),  # type: ignore[union-attr]
            perfect_share=statistics.fmean(1.0 if x.perfect else 0.0 for x in rates),  # type: ignore[union-attr]
            dimensions={k: statistics.fmean(v) for k, v in dims.items()},
        ))
    return out


# ------------------------------------------------------------------------------------------- summaries
@dataclass(frozen=True)
class SummaryRow:
    """A model's headline metrics under one judge (RepoProbe §5.1.3), overall or in one stratum.

    Attributes:
        model, condition, judge, judge_model: the row's :class:`GroupKey`.
        axis, stratum: the stratification axis and value, or ``None`` for the whole benchmark.
        answers: answers with at least one scored run (the ones averaged).
        runs: scored runs behind them.
        overall_pct: mean over answers of the answer's score rate (checklist: Overall Performance, s/10).
        knowledge_pct, clarity_pct, perfect_solve_pct: checklist judge only (``s_kn/9``, ``s_cl``, share with
            ``s = 10``); ``None`` for scalar judges.
    """

    model: str
    condition: str
    judge: str
    judge_model: str
    axis: str | None
    stratum: str | None
    answers: int
    runs: int
    overall_pct: float
    knowledge_pct: float | None
    clarity_pct: float | None
    perfect_solve_pct: float | None


def summarize(runs: Iterable[JudgedRun], *, by: str | None = None) -> list[SummaryRow]:
    """Overall %, Knowledge %, Clarity % and Perfect Solve Rate % per model, condition, judge and judge model
    (RepoProbe §5.1.3), optionally per stratum of ``by`` (one of :data:`STRATA`; RepoProbe §5.2.2 Table 4).

    Each is the mean over answers of the per-answer mean over scored runs (see the module docstring). Scalar
    judges get ``overall_pct`` = their score rate and ``None`` for the checklist-only metrics. Rows are sorted
    by model, condition, judge (in :data:`JUDGES` order), judge model, then stratum. Raises ``ValueError`` for
    an unknown axis."""
    runs = list(runs)
    if by is not None and by not in STRATA:
        raise ValueError(f"unknown stratification axis {by!r}; use one of {', '.join(STRATA)}")
    groups: dict[tuple[GroupKey, str | None], list[AnswerScore]] = defaultdict(list)
    for a in answer_scores(runs):
        groups[(a.key, a.strata.value(by) if by else None)].append(a)
    rows = []
    for (key, stratum), items in sorted(groups.items(), key=lambda kv: (_judge_order(kv[0][0]), kv[0][1] or "")):
        checklist = scores_checklist(key.judge)
        rows.append(SummaryRow(
            model=key.model, condition=key.condition, judge=key.judge, judge_model=key.judge_model,
            axis=by, stratum=stratum, answers=len(items), runs=sum(a.runs for a in items),
            overall_pct=_pct(statistics.fmean(a.score_rate for a in items)),  # type: ignore[arg-type]
            knowledge_pct=_pct(_mean(a.knowledge for a in items)) if checklist else None,
            clarity_pct=_pct(_mean(a.clarity for a in items)) if checklist else None,
            perfect_solve_pct=_pct(statistics.fmean(a.perfect_share for a in items)) if checklist else None,
        ))
    return rows


@dataclass(frozen=True)
class DimensionMean:
    """Mean score of one dimension in points (its own scale, e.g. 1-10), over answers (SWE-QA-Pro Table 2)."""

    key: str
    label: str
    mean: float
    max: float
    answers: int


@dataclass(frozen=True)
class ScalarRow:
    """A model's scalar-judge result (SWE-QA-Pro §4.1 Table 2; Code-QA-Bench "Evaluation").

    Attributes:
        dimensions: mean per dimension, in the order the judge lists them.
        total: sum of the dimension means (SWE-QA-Pro's "Overall", out of ``total_max``, e.g. 50).
        final_pct: the final normalized score: mean over answers of ``sum(score)/sum(max)`` (SWE-QA-Pro:
            mean/10; Code-QA-Bench: mean/5), in %.
    """

    model: str
    condition: str
    judge: str
    judge_model: str
    answers: int
    runs: int
    dimensions: tuple[DimensionMean, ...]
    total: float
    total_max: float
    final_pct: float


def scalar_summary(runs: Iterable[JudgedRun]) -> list[ScalarRow]:
    """Mean per dimension and the final normalized score per model, condition, scalar judge and judge model
    (SWE-QA-Pro §4.1: three runs averaged per answer, Table 2; Code-QA-Bench "Evaluation": normalized mean
    of accuracy, completeness, specificity). Checklist runs are ignored. Sorted like :func:`summarize`."""
    runs = [r for r in runs if not scores_checklist(r.judge)]
    meta: dict[GroupKey, dict[str, tuple[str, float]]] = defaultdict(dict)
    for r in runs:
        if r.is_scored:
            for e in r.entries:
                meta[r.key].setdefault(e.key, (e.label, e.max))
    groups: dict[GroupKey, list[AnswerScore]] = defaultdict(list)
    for a in answer_scores(runs):
        groups[a.key].append(a)
    rows = []
    for key in sorted(groups, key=_judge_order):
        items = groups[key]
        dims = []
        for dim_key, (label, top) in meta[key].items():
            vals = [a.dimensions[dim_key] for a in items if dim_key in a.dimensions]
            dims.append(DimensionMean(dim_key, label, statistics.fmean(vals), top, len(vals)))
        rows.append(ScalarRow(
            model=key.model, condition=key.condition, judge=key.judge, judge_model=key.judge_model,
            answers=len(items), runs=sum(a.runs for a in items), dimensions=tuple(dims),
            total=sum(d.mean for d in dims), total_max=sum(d.max for d in dims),
            final_pct=100.0 * statistics.fmean(a.score_rate for a in items),
        ))
    return rows


# ------------------------------------------------------------------------------------------- stability
@dataclass(frozen=True)
class RunMean:
    """One run's mean score rate over the compared answers, in %."""

    run_index: int
    answers: int
    score_rate_pct: float


@dataclass(frozen=True)
class StabilityRow:
    """Judge stability of one model under one judge (RepoProbe §5.3.1 Table 5).

    Attributes:
        runs: each run index's mean score rate over the ``answers`` compared.
        answers: answers scored in every run (the ones compared); ``answers_left_out``: answers scored in some
            runs but not all (left out so every run mean is over the same answers).
        score_rate_pct: mean of the run means (Table 5 "Score Rate").
        std_pct: sample standard deviation (``ddof=1``) of the run means; ``None`` with fewer than two runs.
        std_population_pct: population standard deviation (``ddof=0``); ``None`` with fewer than two runs.
        range_pct: max - min of the run means; ``None`` with fewer than two runs.
    """

    model: str
    condition: str
    judge: str
    judge_model: str
    runs: tuple[RunMean, ...]
    answers: int
    answers_left_out: int
    score_rate_pct: float | None
    std_pct: float | None
    std_population_pct: float | None
    range_pct: float | None


def judge_stability(runs: Iterable[JudgedRun]) -> list[StabilityRow]:
    """For each model, condition, judge and judge model: the mean score rate of each run index over the answers
    scored in every run, and the standard deviation and range of those run means (RepoProbe §5.3.1 Table 5:
    "Score Rate, StdDev, Range" of 5 runs, checklist beside scalar scoring).

    Table 5 does not state which standard deviation it uses; ``std_pct`` is the sample one (numpy
    ``ddof=1``), ``std_population_pct`` the population one (``ddof=0``). A group with no answer scored in
    every run has empty ``runs`` and ``None`` figures. Sorted like :func:`summarize`."""
    import numpy as np

    per_group: dict[GroupKey, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    run_indices: dict[GroupKey, set[int]] = defaultdict(set)
    for r in runs:
        run_indices[r.key].add(r.run_index)
        rates = r.rates()
        if rates is not None:
            per_group[r.key][r.answer_id][r.run_index] = rates.score_rate
    rows = []
    for key in sorted(run_indices, key=_judge_order):
        indices = sorted(run_indices[key])
        answers = per_group.get(key, {})
        complete = {a: by_run for a, by_run in answers.items() if all(i in by_run for i in indices)}
        run_means = (
            [RunMean(i, len(complete), 100.0 * statistics.fmean(by_run[i] for by_run in complete.values()))
             for i in indices]
            if complete else []
        )
        values = np.array([m.score_rate_pct for m in run_means], dtype=float)
        spread = len(values) >= 2
        rows.append(StabilityRow(
            model=key.model, condition=key.condition, judge=key.judge, judge_model=key.judge_model,
            runs=tuple(run_means), answers=len(complete), answers_left_out=len(answers) - len(complete),
            score_rate_pct=float(values.mean()) if len(values) else None,
            std_pct=float(np.std(values, ddof=1)) if spread else None,
            std_population_pct=float(np.std(values, ddof=0)) if spread else None,
            range_pct=float(np.ptp(values)) if spread else None,
        ))
    return rows


# ----------------------------------------------------------------------------------- across models (Table 4)
@dataclass(frozen=True)
class StratumSummaryRow:
    """One stratum's result across the evaluated models under one judge (RepoProbe §5.2.2 Table 4 form: the
    mean over models with the spread between models).

    Attributes:
        axis, stratum: the stratification axis and value.
        condition, judge, judge_model: what the models are compared under.
        models: how many models have a scored answer in the stratum (the n of the mean and sd).
        overall_mean_pct: mean over those models of each model's Overall % in the stratum.
        overall_sd_pct: the *sample* standard deviation (n - 1) of those Overall %; None with one model.
        perfect_solve_mean_pct: mean over models of the Perfect Solve Rate % (checklist judge; None otherwise).
        answers: answers behind the models' figures (summed over models).
    """

    axis: str
    stratum: str
    condition: str
    judge: str
    judge_model: str
    models: int
    overall_mean_pct: float
    overall_sd_pct: float | None
    perfect_solve_mean_pct: float | None
    answers: int


def stratum_summary(rows: Iterable[SummaryRow]) -> list[StratumSummaryRow]:
    """Per axis, stratum, condition, judge and judge model: the mean of the models' Overall % with the sample
    standard deviation across models (``statistics.stdev``, n - 1, the spread of the population of models the
    benchmark samples; None with one model) and the number of models, and the mean Perfect Solve Rate % for the
    checklist judge (RepoProbe §5.2.2 Table 4 reports per category and language the mean ± sd across models).

    ``rows`` are :func:`summarize` rows with an axis (rows of the whole benchmark are ignored). Sorted by axis
    (registry order), judge (report order), judge model, condition and stratum."""
    groups: dict[tuple[str, str, str, str, str], list[SummaryRow]] = defaultdict(list)
    for r in rows:
        if r.axis is not None and r.stratum is not None:
            groups[(r.axis, r.judge, r.judge_model, r.condition, r.stratum)].append(r)

    def order(k: tuple[str, str, str, str, str]) -> tuple:
        axis, judge, judge_model, condition, stratum = k
        return (STRATA.index(axis) if axis in STRATA else len(STRATA), axis,
                JUDGES.index(judge) if judge in JUDGES else len(JUDGES), judge, judge_model, condition, stratum)

    out = []
    for key in sorted(groups, key=order):
        axis, judge, judge_model, condition, stratum = key
        items = groups[key]
        overall = [r.overall_pct for r in items]
        solved = [r.perfect_solve_pct for r in items if r.perfect_solve_pct is not None]
        out.append(StratumSummaryRow(
            axis=axis, stratum=stratum, condition=condition, judge=judge, judge_model=judge_model,
            models=len({r.model for r in items}), overall_mean_pct=statistics.fmean(overall),
            overall_sd_pct=statistics.stdev(overall) if len(overall) >= 2 else None,
            perfect_solve_mean_pct=statistics.fmean(solved) if scores_checklist(judge) and solved else None,
            answers=sum(r.answers for r in items),
        ))
    return out


# ----------------------------------------------------------------------------------- instability (Table 6)
_SLACK = 1e-9
"""Ranges are compared with this slack, so 0.7 - 0.4 (0.29999...) counts as reaching a 0.3 threshold."""


@dataclass(frozen=True)
class InstabilityCase:
    """One answer whose scalar judge's runs spread widely while the checklist judge's runs agree (RepoProbe
    §5.3.2 Table 6).

    Attributes:
        qa_pair_id, answer_id, model, condition: the answer.
        scalar_judge, scalar_judge_model: the scalar judge and its model.
        scalar_scores: its normalized score (0-1) in each scored run, by run index; ``scalar_range`` max - min.
        checklist_judge, checklist_judge_model: the checklist judge and its model.
        checklist_scores: its score rate (s/10, 0-1) in each scored run, by run index; ``checklist_range``.
    """

    qa_pair_id: str
    answer_id: str
    model: str
    condition: str
    scalar_judge: str
    scalar_judge_model: str
    scalar_scores: tuple[float, ...]
    scalar_range: float
    checklist_judge: str
    checklist_judge_model: str
    checklist_scores: tuple[float, ...]
    checklist_range: float


def instability_cases(runs: Iterable[JudgedRun], *, threshold: float = INSTABILITY_THRESHOLD,
                      tolerance: float = CHECKLIST_TOLERANCE) -> list[InstabilityCase]:
    """Answers whose scalar-judge runs (the LLM scalar judges: swe-qa-pro, code-qa-bench; at least two scored
    runs) have a range of normalized score of at least ``threshold`` while the same answer's checklist-judge runs
    (at least two scored runs) have a range of at most ``tolerance``: RepoProbe §5.3.2 Table 6's instability
    cases. One case per answer, scalar judge and model, and checklist judge model. Ranges are max - min of the
    runs' rates (0-1), compared with a 1e-9 slack. Sorted by scalar range (widest first), then pair, model,
    condition, answer and judges.

    Raises:
        ValueError: ``threshold`` or ``tolerance`` outside 0-1.
    """
    for name, value in (("threshold", threshold), ("tolerance", tolerance)):
        if not 0 <= value <= 1:
            raise ValueError(f"instability {name} must be between 0 and 1 (a normalized score), not {value!r}")
    scores: dict[tuple[str, str, str], dict[int, float]] = defaultdict(dict)
    about: dict[str, JudgedRun] = {}
    for r in runs:
        rates = r.rates()
        if rates is None or r.judge not in JUDGE_REGISTRY:
            continue
        kind = JUDGE_REGISTRY.get(r.judge).kind
        if kind is JudgeKind.SCALAR or kind is JudgeKind.CHECKLIST:
            scores[(r.answer_id, r.judge, r.judge_model)][r.run_index] = rates.score_rate
            about.setdefault(r.answer_id, r)
    per_answer: dict[str, list[tuple[str, str, tuple[float, ...]]]] = defaultdict(list)
    for (answer_id, judge, judge_model), by_run in scores.items():
        if len(by_run) >= 2:
            per_answer[answer_id].append((judge, judge_model, tuple(by_run[i] for i in sorted(by_run))))
    cases = []
    for answer_id, groups in per_answer.items():
        scalar = [g for g in groups if JUDGE_REGISTRY.get(g[0]).kind is JudgeKind.SCALAR]
        checklist = [g for g in groups if JUDGE_REGISTRY.get(g[0]).kind is JudgeKind.CHECKLIST]
        r = about[answer_id]
        for s_judge, s_model, s_scores in scalar:
            s_range = max(s_scores) - min(s_scores)
            if s_range < threshold - _SLACK:
                continue
            for c_judge, c_model, c_scores in checklist:
                c_range = max(c_scores) - min(c_scores)
                if c_range > tolerance + _SLACK:
                    continue
                cases.append(InstabilityCase(
                    qa_pair_id=r.qa_pair_id, answer_id=answer_id, model=r.model, condition=r.condition,
                    scalar_judge=s_judge, scalar_judge_model=s_model, scalar_scores=s_scores, scalar_range=s_range,
                    checklist_judge=c_judge, checklist_judge_model=c_model, checklist_scores=c_scores,
                    checklist_range=c_range,
                ))
    cases.sort(key=lambda c: (-c.scalar_range, c.qa_pair_id, c.model, c.condition, c.answer_id, c.scalar_judge,
                              c.scalar_judge_model, c.checklist_judge_model))
    return cases


# -------------------------------------------------------------------------------------------- coverage
@dataclass(frozen=True)
class CoverageRow:
    """What a model's aggregates under one judge rest on (unscored runs are excluded and counted here).

    Attributes:
        answers: answers with at least one judgment (scored or not) by this judge and judge model.
        answers_scored: answers with at least one scored run (the ones in the means).
        answers_unscored: answers whose every run is unscored (left out of the means).
        runs_scored, runs_unscored: judgments counted in / left out of the aggregates.
        overrides_used: entries of scored runs whose score a human override replaced (issue #5 item 5).
        unscored_reasons: how many unscored runs gave each reason (``None`` reason as ``"(no reason)"``).
    """

    model: str
    condition: str
    judge: str
    judge_model: str
    answers: int
    answers_scored: int
    answers_unscored: int
    runs_scored: int
    runs_unscored: int
    overrides_used: int
    unscored_reasons: Mapping[str, int]


def coverage(runs: Iterable[JudgedRun]) -> list[CoverageRow]:
    """Scored and unscored counts and overrides used per model, condition, judge and judge model.

    Unscored runs (Inspect AI's "unscored, not guessed", issue #5 item 3) never enter a mean; this says how
    many there were. Overrides are counted only where they entered an aggregate (scored runs). Sorted like
    :func:`summarize`."""
    groups: dict[GroupKey, list[JudgedRun]] = defaultdict(list)
    for r in runs:
        groups[r.key].append(r)
    rows = []
    for key in sorted(groups, key=_judge_order):
        rs = groups[key]
        scored = [r for r in rs if r.is_scored]
        unscored = [r for r in rs if not r.is_scored]
        all_answers = {r.answer_id for r in rs}
        scored_answers = {r.answer_id for r in scored}
        reasons: dict[str, int] = defaultdict(int)
        for r in unscored:
            reasons[r.reason or ("(no reason)" if r.status == "unscored" else "scored without every score")] += 1
        rows.append(CoverageRow(
            model=key.model, condition=key.condition, judge=key.judge, judge_model=key.judge_model,
            answers=len(all_answers), answers_scored=len(scored_answers),
            answers_unscored=len(all_answers - scored_answers), runs_scored=len(scored),
            runs_unscored=len(unscored), overrides_used=sum(r.overrides_used for r in scored),
            unscored_reasons=dict(sorted(reasons.items())),
        ))
    return rows


# ------------------------------------------------------------------------------------------ failures
@dataclass(frozen=True)
class FailureRow:
    """Failure-mode breakdown of one model and condition (RepoProbe §5.4 Table 7).

    Attributes:
        below: answers whose reference score rate is below the threshold (the failure cases).
        classified: failure cases with a label; ``unclassified``: failure cases without one.
        counts: failure cases per mode (every mode of :data:`FAILURE_MODES`, zero included).
        pct_of_classified: ``counts / classified`` in % (Table 7's form: the modes sum to 100 %).
        pct_of_below: ``counts / below`` in % (with ``unclassified`` the rest).
        labelled_not_below: labelled answers that are not failure cases now (e.g. an override raised their
            score, or they have no scored judgment); not in the counts.
        reference_judges: the judge each failure case's score came from, and how many.
    """

    model: str
    condition: str
    threshold_pct: float
    below: int
    classified: int
    unclassified: int
    counts: Mapping[str, int]
    pct_of_classified: Mapping[str, float | None]
    pct_of_below: Mapping[str, float | None]
    labelled_not_below: int
    reference_judges: Mapping[str, int]


def reference_scores(runs: Iterable[JudgedRun]) -> dict[str, tuple[str, float]]:
    """Each answer's reference score rate for failure analysis: ``answer_id -> (judge, rate in 0-1)``.

    The reference judge is the first of :data:`JUDGES` (checklist first) with a scored run of the answer; the
    rate is the mean over that judge's scored runs, all judge models together (RepoProbe §5.4 classifies
    "failure cases with a score below 60%" under the checklist protocol)."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        rates = r.rates()
        if rates is not None:
            per[r.answer_id][r.judge].append(rates.score_rate)
    out = {}
    for answer_id, by_judge in per.items():
        judge = min(by_judge, key=lambda j: JUDGES.index(j) if j in JUDGES else len(JUDGES))
        out[answer_id] = (judge, statistics.fmean(by_judge[judge]))
    return out


def failure_breakdown(
    runs: Iterable[JudgedRun], labels: Iterable[FailureLabel], *, threshold: float = FAILURE_THRESHOLD
) -> list[FailureRow]:
    """Counts and percentages of failure modes per model and condition among the answers below ``threshold``
    (a fraction, default 0.6), RepoProbe §5.4 Table 7.

    An answer is a failure case when its :func:`reference_scores` rate is below ``threshold``; its label is
    its latest failure-mode row. Rows exist for every model and condition with a failure case or a label,
    sorted by model and condition. Raises ``ValueError`` for a threshold outside 0-1."""
    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be a fraction between 0 and 1, not {threshold!r}")
    runs = list(runs)
    ref = reference_scores(runs)
    answer_group: dict[str, tuple[str, str]] = {r.answer_id: (r.model, r.condition) for r in runs}
    label_of = {lab.answer_id: lab for lab in labels}
    for lab in label_of.values():
        answer_group.setdefault(lab.answer_id, (lab.model, lab.condition))
    below: dict[tuple[str, str], list[str]] = defaultdict(list)
    for answer_id, (_judge, rate) in ref.items():
        if rate < threshold:
            below[answer_group[answer_id]].append(answer_id)
    groups = set(below) | {answer_group[a] for a in label_of}
    rows = []
    for group in sorted(groups):
        cases = below.get(group, [])
        case_set = set(cases)
        counts = {m: 0 for m in FAILURE_MODES}
        judges: dict[str, int] = defaultdict(int)
        for a in cases:
            judges[ref[a][0]] += 1
            if a in label_of and label_of[a].mode in counts:
                counts[label_of[a].mode] += 1
        classified = sum(counts.values())
        labelled_here = [a for a, lab in label_of.items() if answer_group[a] == group]
        rows.append(FailureRow(
            model=group[0], condition=group[1], threshold_pct=100.0 * threshold, below=len(cases),
            classified=classified, unclassified=len(cases) - classified, counts=counts,
            pct_of_classified={m: (100.0 * c / classified if classified else None) for m, c in counts.items()},
            pct_of_below={m: (100.0 * c / len(cases) if cases else None) for m, c in counts.items()},
            labelled_not_below=sum(1 for a in labelled_here if a not in case_set),
            reference_judges=dict(sorted(judges.items())),
        ))
    return rows


# -------------------------------------------------------------------------------------------- report
@dataclass(frozen=True)
class Report:
    """All sections of ``benchwright report``; :meth:`to_dict` gives the JSON form.

    Attributes:
        summary: :func:`summarize` over the whole benchmark.
        strata: :func:`summarize` per requested axis (``axis -> rows``).
        scalar: :func:`scalar_summary`; stability: :func:`judge_stability`; coverage: :func:`coverage`;
        failures: :func:`failure_breakdown`.
        answer_counts: answers stored per ``(model, condition)``.
        agent_gap: :func:`~benchwright.core.agent_metrics.agent_gap`; tool_usage:
            :func:`~benchwright.core.agent_metrics.tool_usage`.
        strata_summary: :func:`stratum_summary` per requested axis (``axis -> rows``; Table 4).
        instability: :func:`instability_cases` with ``instability_threshold`` and ``checklist_tolerance``
            (Table 6).
    """

    summary: list[SummaryRow]
    strata: dict[str, list[SummaryRow]]
    scalar: list[ScalarRow]
    stability: list[StabilityRow]
    coverage: list[CoverageRow]
    failures: list[FailureRow]
    answer_counts: Mapping[tuple[str, str], int]
    agent_gap: list[GapRow] = field(default_factory=list)
    tool_usage: list[ToolUsageRow] = field(default_factory=list)
    strata_summary: dict[str, list[StratumSummaryRow]] = field(default_factory=dict)
    instability: list[InstabilityCase] = field(default_factory=list)
    instability_threshold: float = INSTABILITY_THRESHOLD
    checklist_tolerance: float = CHECKLIST_TOLERANCE

    @property
    def is_empty(self) -> bool:
        """True when there is no judgment at all (nothing to report)."""
        return not self.coverage

    def to_dict(self) -> dict:
        """The report as JSON-ready data: one list of row dicts per section, plus the conventions used."""
        return {
            "conventions": {
                "percent": "every *_pct value is a percentage in 0-100",
                "runs": "per answer, mean over its scored runs; per model, mean over answers (SWE-QA-Pro §4.1, "
                        "RepoProbe §5.1.3); unscored runs are excluded and counted in 'coverage'",
                "perfect_solve": "per answer, share of its scored runs with s equal to the maximum (s = 10); "
                                 "per model, mean over answers (RepoProbe §5.1.3)",
                "stability": "run means over the answers scored in every run; std_pct is the sample standard "
                             "deviation (ddof=1), std_population_pct the population one (ddof=0); range_pct is "
                             "max - min (RepoProbe §5.3.1 Table 5)",
                "failures": f"answers whose reference score rate is below {100 * FAILURE_THRESHOLD:.0f}% "
                            "(checklist judge first) broken down by their latest failure-mode label "
                            "(RepoProbe §5.4 Table 7)",
                "agent_gap": "per model and judge, a no-repository condition against an agent condition over the "
                             "pairs scored under both: per pair the mean over its samples, gap_pct = agent_pct - "
                             "direct_pct in percentage points, ci_*_pct a paired bootstrap 95% interval "
                             "(SWE-QA-Pro §4.2 Table 2)",
                "tool_usage": "per model and condition, tool calls of the answers' trajectories; failed runs (the "
                              "latest run of a sample without an answer) apart; other trajectory shapes counted "
                              "as not_ours (SWE-QA-Pro §4.3 Figure 4)",
                "strata_summary": "per stratum, condition, judge and judge model: the mean over models of their "
                                  "Overall % with the sample standard deviation across models (n - 1; null with "
                                  "one model), the number of models, and the mean Perfect Solve Rate % for the "
                                  "checklist judge (RepoProbe §5.2.2 Table 4)",
                "instability": "answers whose scalar-judge runs (>= 2) have a range of normalized score >= "
                               f"{self.instability_threshold:g} while their checklist-judge runs (>= 2) have a "
                               f"range <= {self.checklist_tolerance:g}; scores are fractions in 0-1 by run index; "
                               "the thresholds are ours (RepoProbe §5.3.2 Table 6 states none)",
            },
            "instability_settings": {"threshold": self.instability_threshold,
                                     "checklist_tolerance": self.checklist_tolerance},
            "answers": [
                {"model": m, "condition": c, "answers": n} for (m, c), n in sorted(self.answer_counts.items())
            ],
            "summary": [asdict(r) for r in self.summary],
            "strata": {axis: [asdict(r) for r in rows] for axis, rows in self.strata.items()},
            "scalar": [asdict(r) for r in self.scalar],
            "stability": [asdict(r) for r in self.stability],
            "coverage": [asdict(r) for r in self.coverage],
            "failures": [asdict(r) for r in self.failures],
            "agent_gap": [asdict(r) for r in self.agent_gap],
            "tool_usage": [asdict(r) for r in self.tool_usage],
            "strata_summary": {axis: [asdict(r) for r in rows] for axis, rows in self.strata_summary.items()},
            "instability": [asdict(r) for r in self.instability],
        }


def build_report(inputs: ReportInputs, *, by: Sequence[str] = (), instability_threshold: float = INSTABILITY_THRESHOLD,
                 checklist_tolerance: float = CHECKLIST_TOLERANCE) -> Report:
    """Every section of the report from ``inputs``, stratified by each axis in ``by`` (see :data:`STRATA`).

    Methods: RepoProbe §5.1.3 (summary), §5.2.2 (strata, and Table 4's mean and sd across models), §5.3.1
    Table 5 (stability), §5.3.2 Table 6 (instability cases, with ``instability_threshold`` and
    ``checklist_tolerance``), §5.4 Table 7 (failures); SWE-QA-Pro §4.1 and Code-QA-Bench "Evaluation" (scalar),
    §4.2 Table 2 (agent gap), §4.3 Figure 4 (tool usage). Raises ``ValueError`` for an unknown axis or a
    threshold outside 0-1."""
    from .agent_metrics import agent_gap, tool_usage

    for axis in by:
        if axis not in STRATA:
            raise ValueError(f"unknown stratification axis {axis!r}; use one of {', '.join(STRATA)}")
    runs = list(inputs.runs)
    strata = {axis: summarize(runs, by=axis) for axis in dict.fromkeys(by)}
    return Report(
        summary=summarize(runs),
        strata=strata,
        strata_summary={axis: stratum_summary(rows) for axis, rows in strata.items()},
        instability=instability_cases(runs, threshold=instability_threshold, tolerance=checklist_tolerance),
        instability_threshold=instability_threshold,
        checklist_tolerance=checklist_tolerance,
        scalar=scalar_summary(runs),
        stability=judge_stability(runs),
        coverage=coverage(runs),
        failures=failure_breakdown(runs, inputs.failure_labels),
        answer_counts=dict(inputs.answer_counts),
        agent_gap=agent_gap(runs),
        tool_usage=tool_usage(inputs.trajectories),
    )
