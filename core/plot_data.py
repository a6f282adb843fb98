"""The numbers behind the statistics screen's plots (issue 20 item 2), computed from the same inputs and with the
same functions as ``benchwright report`` and ``benchwright agreement``, so a plot never shows a figure the
report does not.

Pure functions over plain values (no store, no UI, no plotting library). The store side
(:func:`benchwright.db.plot_data.decision_days`, :func:`benchwright.db.report.report_inputs`) reads the inputs;
``tui/services/views.py`` (``statistics_view``) puts them together; the screen only draws.

- :func:`progress_over_time`: per annotator the submitted reviews per UTC day and their running total. The
  reviews counted are the ones the progress table counts (``Store.annotator_progress``: each annotator's current
  accept / reject / revise, not made before the pair was sent back to review), each on the day of that current
  decision, so the last running total of an annotator is their "submitted reviews".
- :func:`agreement_bars`: Krippendorff's alpha of the decision and of each QA criterion
  (:func:`benchwright.core.agreement.agreement_report`, the "Krippendorff's alpha" column of ``agreement``).
- :func:`score_distributions`: per model, condition, judge and judge model the per-answer score rates
  (:func:`benchwright.core.metrics.answer_scores`: the mean over an answer's scored runs, RepoProbe §5.1.3,
  SWE-QA-Pro §4.1) in bins; their mean is the report's Overall % (:func:`benchwright.core.metrics.summarize`).
- :func:`calibration_bars`: judge calibration against humans (:func:`benchwright.core.judge_calibration.
  judge_calibration`, the numbers of ``benchwright calibration``): per LLM judge, overall and per answer model,
  the mean signed difference judge - human (points; positive: the judge over-scores) beside exact agreement,
  weighted kappa and ordinal alpha.
- :func:`stability_ranges`: judge stability (:func:`benchwright.core.metrics.judge_stability`, RepoProbe §5.3.1
  Table 5): each run's mean score rate with the lowest and highest run mean.
"""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .review import CRITERION_LABELS

if TYPE_CHECKING:  # the statistics libraries behind these take seconds to load: not when the screen opens
    from .agreement import FieldAgreement
    from .judge_calibration import Agreement, CalibrationReport
    from .metrics import JudgedRun, StabilityRow

SCORE_BINS = 10
"""Default number of equal-width bins of the score distributions over 0-100 % (10 points each). The issue and
the papers name no binning; :func:`score_distributions` takes ``bins``."""


# ------------------------------------------------------------------------------------------------ progress
@dataclass(frozen=True)
class ProgressSeries:
    """One annotator's submitted reviews over the days of :class:`ProgressOverTime`.

    Attributes:
        annotator: the annotator's name (as stored: show it literally).
        per_day: reviews whose current decision was made that day, one count per day of ``days``.
        cumulative: the running total of ``per_day``; the last value is the annotator's submitted reviews.
    """

    annotator: str
    per_day: tuple[int, ...]
    cumulative: tuple[int, ...]

    @property
    def total(self) -> int:
        """The annotator's submitted reviews (the last running total, 0 without days)."""
        return self.cumulative[-1] if self.cumulative else 0


@dataclass(frozen=True)
class ProgressOverTime:
    """Submitted reviews per day for every annotator on one day axis.

    Attributes:
        days: every UTC day (``YYYY-MM-DD``) with at least one counted review, ascending (days without any are
            left out, so a project reviewed in bursts does not plot long flat runs).
        series: one :class:`ProgressSeries` per annotator with a counted review, sorted by name.
    """

    days: tuple[str, ...] = ()
    series: tuple[ProgressSeries, ...] = ()


def progress_over_time(decisions: Iterable[tuple[str, str]]) -> ProgressOverTime:
    """Count ``decisions`` (``(annotator, day)`` pairs, one per counted review; ``day`` is ``YYYY-MM-DD``) per
    annotator and day, with running totals. An empty input gives empty ``days`` and ``series``."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for annotator, day in decisions:
        counts[annotator][day] += 1
    days = tuple(sorted({d for per in counts.values() for d in per}))
    series = []
    for annotator in sorted(counts):
        per_day = tuple(counts[annotator].get(d, 0) for d in days)
        running, total = [], 0
        for n in per_day:
            total += n
            running.append(total)
        series.append(ProgressSeries(annotator, per_day, tuple(running)))
    return ProgressOverTime(days, tuple(series))


# ----------------------------------------------------------------------------------------------- agreement
@dataclass(frozen=True)
class AgreementBar:
    """Krippendorff's alpha of one rated field (the decision or a QA criterion).

    Attributes:
        field: the field's name (``decision`` or a key of :data:`benchwright.core.review.CRITERION_LABELS`).
        label: its display label.
        value: the alpha, or ``None`` when undefined (too few items, no variance: ``text`` says which).
        text: the figure as every front end words it (:attr:`benchwright.core.agreement.AgreementFigure.text`).
        n_items: items (pairs) that entered the alpha.
    """

    field: str
    label: str
    value: float | None
    text: str
    n_items: int


def agreement_bars(report: Mapping[str, FieldAgreement]) -> list[AgreementBar]:
    """One :class:`AgreementBar` per field of ``report`` (:func:`~benchwright.core.agreement.agreement_report`),
    in its order, from its Krippendorff's alpha."""
    return [AgreementBar(name, CRITERION_LABELS.get(name, name), fa.krippendorff.value, fa.krippendorff.text,
                         fa.krippendorff.n_items)
            for name, fa in report.items()]


# ------------------------------------------------------------------------------------------ distributions
@dataclass(frozen=True)
class ScoreDistribution:
    """The per-answer score rates of one model under one judge.

    Attributes:
        model, condition, judge, judge_model: the report group (:class:`benchwright.core.metrics.GroupKey`).
        scores_pct: each answer's score rate in % (mean over its scored runs), in answer-id order.
        counts: answers per bin of :func:`bin_labels` (``bins`` equal bins over 0-100 %; a rate on an inner edge
            falls in the upper bin, 100 % in the last).
        mean_pct: the mean of ``scores_pct``: the report's Overall % (checklist) or score rate % (scalar).
    """

    model: str
    condition: str
    judge: str
    judge_model: str
    scores_pct: tuple[float, ...]
    counts: tuple[int, ...]
    mean_pct: float


def bin_labels(bins: int = SCORE_BINS) -> list[str]:
    """The labels of ``bins`` equal bins over 0-100 %: ``["0-10", "10-20", ..., "90-100"]`` for 10."""
    edges = [100 * i / bins for i in range(bins + 1)]
    return [f"{lo:g}-{hi:g}" for lo, hi in itertools.pairwise(edges)]


def _bin(pct: float, bins: int) -> int:
    return min(bins - 1, max(0, int(pct * bins // 100 + 1e-9)))


def score_distributions(runs: Iterable[JudgedRun], *, bins: int = SCORE_BINS) -> list[ScoreDistribution]:
    """Per model, condition, judge and judge model (the report's groups and order), the per-answer score rates
    of :func:`~benchwright.core.metrics.answer_scores` in % and their counts in ``bins`` bins. Groups without a
    scored answer are left out. Raises ``ValueError`` when ``bins`` < 1."""
    from .metrics import answer_scores

    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    groups: dict = {}
    for a in answer_scores(runs):
        groups.setdefault(a.key, []).append(100.0 * a.score_rate)
    out = []
    for key, scores in groups.items():
        counts = [0] * bins
        for s in scores:
            counts[_bin(s, bins)] += 1
        out.append(ScoreDistribution(key.model, key.condition, key.judge, key.judge_model, tuple(scores),
                                     tuple(counts), statistics.fmean(scores)))
    return out


# ---------------------------------------------------------------------------------------------- stability
@dataclass(frozen=True)
class StabilityRange:
    """One model's judge stability under one judge (RepoProbe §5.3.1 Table 5) for plotting.

    Attributes:
        row: the report's :class:`~benchwright.core.metrics.StabilityRow` (run means, score rate, std, range).
        low_pct, high_pct: the lowest and highest run mean in %; their difference is ``row.range_pct``.
    """

    row: StabilityRow
    low_pct: float
    high_pct: float


def stability_ranges(rows: Iterable[StabilityRow]) -> list[StabilityRange]:
    """The rows of :func:`~benchwright.core.metrics.judge_stability` that have two or more run means (a spread to
    show), with the lowest and highest of them, in the report's order."""
    return [StabilityRange(r, min(m.score_rate_pct for m in r.runs), max(m.score_rate_pct for m in r.runs))
            for r in rows if len(r.runs) >= 2]


# -------------------------------------------------------------------------------------------- calibration
@dataclass(frozen=True)
class CalibrationBar:
    """One LLM judge against the humans, overall or on one answer model's answers.

    Attributes:
        judge_label: the judge (``checklist:gpt-4o``, as ``benchwright calibration`` names it).
        model: the answer model, or ``None`` for the judge's overall figures.
        agreement: the :class:`~benchwright.core.judge_calibration.Agreement` (n, exact agreement, weighted
            kappa, ordinal alpha, mean signed difference with its 95 % interval).
    """

    judge_label: str
    model: str | None
    agreement: Agreement


def calibration_bars(report: CalibrationReport | None) -> list[CalibrationBar]:
    """Per judge of ``report`` (``calibration_report`` of the store; ``None``: none) its overall figures, then
    one bar per answer model when the report is grouped by model (its default), in the report's order."""
    from .judge_calibration import MODEL_GROUP

    if report is None:
        return []
    out = []
    for j in report.judges:
        out.append(CalibrationBar(j.label, None, j.overall))
        for model, agreement in j.groups.get(MODEL_GROUP, {}).items():
            out.append(CalibrationBar(j.label, model, agreement))
    return out


# -------------------------------------------------------------------------------------------------- all
@dataclass(frozen=True)
class StatisticsPlots:
    """Every plot's numbers (see the module docstring).

    Attributes:
        progress, agreement, scores, stability: as above (empty when there is nothing to plot).
        scores_error: why the judged answers could not be read (a judgment that cannot be parsed), else ``None``;
            then ``scores`` and ``stability`` are empty.
        calibration: the judge-vs-human calibration (:func:`calibration_bars`), empty without paired scores.
        calibration_error: why it could not be computed, else ``None``.
    """

    progress: ProgressOverTime = ProgressOverTime()
    agreement: tuple[AgreementBar, ...] = ()
    scores: tuple[ScoreDistribution, ...] = ()
    stability: tuple[StabilityRange, ...] = ()
    scores_error: str | None = None
    calibration: tuple[CalibrationBar, ...] = ()
    calibration_error: str | None = None
