"""Judge calibration against humans: how well each LLM judge's checklist scores agree with annotators' scores of
the same answers, item by item (issue 20, item 5).

NOT the same thing as :mod:`benchwright.core.calibration`, which is SWE-QA-Pro's *difficulty* calibration (pairs
models answer well without the repository are too easy, ``benchwright calibrate``). This module asks "does the
LLM judge score like a human?" (``benchwright calibration``); the two share no code and no names.

Pure functions over plain values (no store). The store side (:mod:`benchwright.db.judge_calibration`) pairs each
human judgment (judge ``human``, ``judge_model`` the annotator) with the LLM judges' latest runs of the same answer
against the same checklist version and gives one :class:`PairedScore` per (answer, checklist item, annotator, LLM
judge); :func:`judge_calibration` does the arithmetic. Method, formulas and choices: docs/judge-calibration.md.

The unit of comparison is one **observation**: an LLM judge's score and one annotator's score of one checklist item
of one answer. Per LLM judge (judge name and model), overall, per checklist item (a pair's item: pair id and
item key), per item kind, per answer model and per stratum value (:data:`benchwright.core.metrics.STRATA`),
:func:`agreement` gives:

- ``n``: observations; ``exact``: the share with judge score == human score.
- ``kappa``: weighted Cohen's kappa (:func:`weighted_kappa`: the formula of ``sklearn.metrics.cohen_kappa_score``
  with ``labels`` = the allowed scores, linear weights by default, quadratic as an option). scikit-learn weighs the *positions* of the labels in the
  allowed set (``|i - j|``), which is the scores' distance when they are evenly spaced (``0..2``) and their rank
  distance otherwise (``[0, 1, 3]``: 0 to 3 is two steps).
- ``alpha``: Krippendorff's alpha at the ordinal level (``krippendorff.alpha(level_of_measurement="ordinal",
  value_domain=allowed)``); the units are the (answer, item) pairs and the coders the judge and the humans (or
  the judge and the humans' consensus, see :data:`HUMAN_MODES`).
- ``mean_diff``: the mean signed difference judge - human in points (positive: the judge over-scores), with a 95%
  t interval (``mean +- t(0.975, n-1) * sd / sqrt(n)``, the sample sd) when n >= 2.

Choices the issue leaves open, each an option (:class:`CalibrationOptions`):

- **runs** (:data:`RUN_MODES`): ``mean`` (default) compares the mean over the judge's runs with the human score;
  exact agreement, kappa and alpha need a score of the allowed set, so the mean is snapped to the nearest allowed
  score (a tie goes to the lower score) while the mean difference uses the unsnapped mean. ``each`` counts every
  run as its own observation (and its own coder in alpha).
- **humans** (:data:`HUMAN_MODES`): ``each`` (default) pairs the judge with every annotator of the answer (one
  observation per annotator; alpha has the judge as one more coder beside the humans, so disagreement among the
  humans lowers it too); ``consensus`` compares the judge with the humans' median score per item (the lower
  median of an even count, always an allowed score): one observation per (answer, item), alpha between two coders.

numpy, krippendorff and scipy are imported inside the functions that use them, so the CLI can read
this module's choices (:data:`WEIGHTS`, ...) without loading them.

No figure is ever NaN: an undefined one is ``None`` with a reason (:class:`Figure`): no observations; kappa from a
single observation, alpha from a single unit (both would be 0 by arithmetic, not by disagreement); every score one
value (0/0).
"""

from __future__ import annotations

import functools
import math
import statistics
import warnings
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import BenchwrightError
from .judges import human_label, judge_label
from .metrics import STRATA

Weights = Literal["linear", "quadratic"]
WEIGHTS: tuple[str, ...] = ("linear", "quadratic")
"""Weights of Cohen's kappa: ``linear`` (default, ``|i - j|``) or ``quadratic`` (``(i - j)^2``)."""

RUN_MODES: tuple[str, ...] = ("mean", "each")
"""How a judge's several runs of one answer count: their ``mean`` (default) or ``each`` run on its own."""

HUMAN_MODES: tuple[str, ...] = ("each", "consensus")
"""How several annotators of one answer count: ``each`` one against the judge (default) or their ``consensus``
(the lower median per item)."""

MODEL_GROUP = "model"
"""The grouping by the answer's model (beside the stratum axes of :data:`benchwright.core.metrics.STRATA`)."""

KIND_GROUP = "kind"
"""The grouping by the checklist item's kind (knowledge / clarity)."""

DEFAULT_WORST = 10
"""How many of the largest disagreements a report lists by default."""

CONFIDENCE = 0.95
"""The level of the mean difference's t interval."""


class JudgeCalibrationError(BenchwrightError):
    """Bad options or observations for judge calibration (an unknown weight, mode or grouping, a score outside its
    item's allowed set); the message names the field."""


@dataclass(frozen=True)
class PairedScore:
    """One LLM judge's and one annotator's scores of one checklist item of one answer.

    Attributes:
        answer_id: the answer scored (``ans_...``).
        qa_pair_id: its pair (the item's checklist belongs to the pair).
        item: the checklist item's key (``"1"``, ``"2"``, ...; the 1-based item number).
        allowed: the item's allowed scores (its rubric), ascending; what kappa and alpha count as categories.
        judge, judge_model: the LLM judge (``checklist``) and its model.
        judge_scores: the judge's score in each of its latest runs (one per run index; at least one), points.
        annotator: who gave the human score.
        human_score: the annotator's score, points (one of ``allowed``).
        answer_model: the model that wrote the answer.
        strata: the pair's stratum values by axis name (``category``, ``repository``, ``qa_type``, ...).
        item_label: the item's key point (for listings).
        item_kind: ``knowledge`` or ``clarity``.
        checklist_version: the checklist version both scored against.
    """

    answer_id: str
    qa_pair_id: str
    item: str
    allowed: tuple[int, ...]
    judge: str
    judge_model: str
    judge_scores: tuple[float, ...]
    annotator: str
    human_score: float
    answer_model: str
    strata: Mapping[str, str] = field(default_factory=dict)
    item_label: str = ""
    item_kind: str = ""
    checklist_version: int | None = None

    @property
    def item_id(self) -> str:
        """``PAIR#KEY``: the checklist item across answers (item keys are numbers within one pair's checklist);
        ``PAIR@vN#KEY`` for a version N other than 1 (item 1 of another version may be another key point)."""
        version = "" if self.checklist_version in (None, 1) else f"@v{self.checklist_version}"
        return f"{self.qa_pair_id}{version}#{self.item}"

    @property
    def judge_label(self) -> str:
        """``JUDGE:MODEL`` (:func:`benchwright.core.judges.judge_label`)."""
        return judge_label(self.judge, self.judge_model)


@dataclass(frozen=True)
class CalibrationOptions:
    """The choices of :func:`judge_calibration` (see the module docstring and docs/judge-calibration.md).

    Attributes:
        weights: kappa's weights, one of :data:`WEIGHTS`.
        runs: one of :data:`RUN_MODES`.
        humans: one of :data:`HUMAN_MODES`.
        by: the groupings computed besides overall and per item: :data:`MODEL_GROUP`, :data:`KIND_GROUP` or
            stratum axis names (``category``, ``repository``, ``qa_type``, ...).
        worst: how many of the largest disagreements to list (0: none).
    """

    weights: str = "linear"
    runs: str = "mean"
    humans: str = "each"
    by: tuple[str, ...] = (MODEL_GROUP,)
    worst: int = DEFAULT_WORST

    def __post_init__(self) -> None:
        for name, value, choices in (("weights", self.weights, WEIGHTS), ("runs", self.runs, RUN_MODES),
                                     ("humans", self.humans, HUMAN_MODES)):
            if value not in choices:
                raise JudgeCalibrationError(f"{name}: unknown value {value!r}; use one of {', '.join(choices)}")
        unknown = [g for g in self.by if g not in (MODEL_GROUP, KIND_GROUP, *STRATA)]
        if unknown:
            raise JudgeCalibrationError(
                f"by: unknown grouping {unknown[0]!r}; use one of {', '.join((MODEL_GROUP, KIND_GROUP, *STRATA))}")
        if self.worst < 0:
            raise JudgeCalibrationError(f"worst: must be 0 or more, not {self.worst}")


@dataclass(frozen=True)
class Figure:
    """One statistic: ``value``, or ``None`` with ``reason`` saying why it is undefined."""

    value: float | None
    reason: str | None = None

    def text(self, digits: int = 3, *, signed: bool = False) -> str:
        """``0.712`` (``+0.712`` when ``signed``), or ``n/a (REASON)``."""
        if self.value is None:
            return f"n/a ({self.reason})" if self.reason else "n/a"
        return f"{self.value:+.{digits}f}" if signed else f"{self.value:.{digits}f}"

    def to_dict(self) -> dict[str, Any]:
        """``{"value": float | None, "reason": str | None}``."""
        return {"value": self.value, "reason": self.reason}


@dataclass(frozen=True)
class Agreement:
    """Agreement between one LLM judge and the humans over a set of observations.

    Attributes:
        n: observations (judge score, human score).
        answers: distinct answers among them; annotators: distinct annotators.
        exact: share of observations with equal scores, in [0, 1].
        kappa: weighted Cohen's kappa (weights as asked), in [-1, 1].
        alpha: Krippendorff's alpha, ordinal, at most 1.
        mean_diff: mean of judge - human, points (positive: the judge over-scores).
        ci_low, ci_high: its 95% t interval, or None (n < 2).
        mean_judge, mean_human: the mean scores, points (None when n = 0).
    """

    n: int
    answers: int
    annotators: int
    exact: Figure
    kappa: Figure
    alpha: Figure
    mean_diff: Figure
    ci_low: float | None = None
    ci_high: float | None = None
    mean_judge: float | None = None
    mean_human: float | None = None

    def ci_text(self, digits: int = 2) -> str:
        """``[-0.12, +0.40]`` or ``""`` when there is no interval."""
        if self.ci_low is None or self.ci_high is None:
            return ""
        return f"[{self.ci_low:+.{digits}f}, {self.ci_high:+.{digits}f}]"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: every field, figures as ``{"value", "reason"}``."""
        return {"n": self.n, "answers": self.answers, "annotators": self.annotators, "exact": self.exact.to_dict(),
                "kappa": self.kappa.to_dict(), "alpha": self.alpha.to_dict(), "mean_diff": self.mean_diff.to_dict(),
                "ci_low": self.ci_low, "ci_high": self.ci_high, "mean_judge": self.mean_judge,
                "mean_human": self.mean_human}


@dataclass(frozen=True)
class Disagreement:
    """One observation where the judge and an annotator disagree (for the worst-disagreements listing).

    Attributes:
        answer_id, qa_pair_id, item, item_label: what was scored.
        judge_score: the judge's score (the mean over runs, or one run's, as the options say), points.
        human_score: the annotator's (or the consensus) score, points.
        annotator: who (``consensus`` of NAMES in consensus mode).
        diff: judge - human.
        answer_model: the answer's model.
    """

    answer_id: str
    qa_pair_id: str
    item: str
    item_label: str
    judge_score: float
    human_score: float
    annotator: str
    diff: float
    answer_model: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class JudgeCalibration:
    """One LLM judge against the humans.

    Attributes:
        judge, judge_model, label: the judge (``label`` = ``JUDGE:MODEL``).
        overall: over every observation.
        items: per checklist item (``PAIR#KEY``, in pair then item order).
        item_labels: ``PAIR#KEY`` -> the item's key point.
        groups: grouping name (``model``, ``kind``, ``category``, ...) -> group value -> agreement.
        worst: the largest disagreements (|diff| descending, then answer id and item), at most ``options.worst``.
    """

    judge: str
    judge_model: str
    label: str
    overall: Agreement
    items: dict[str, Agreement]
    item_labels: dict[str, str]
    groups: dict[str, dict[str, Agreement]]
    worst: list[Disagreement]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the shape of ``benchwright calibration --json``'s ``judges`` entries)."""
        return {"judge": self.judge, "judge_model": self.judge_model, "label": self.label,
                "overall": self.overall.to_dict(),
                "items": {k: {"label": self.item_labels.get(k, ""), **a.to_dict()} for k, a in self.items.items()},
                "groups": {g: {v: a.to_dict() for v, a in vals.items()} for g, vals in self.groups.items()},
                "worst": [d.to_dict() for d in self.worst]}


@dataclass(frozen=True)
class CalibrationReport:
    """Every LLM judge against the humans (:func:`judge_calibration`).

    Attributes:
        judges: one entry per LLM judge and model with paired scores, sorted by label.
        options: the choices used.
        observations: paired scores given (before the runs / humans modes are applied).
        applied: observations after the runs and humans modes apply (what the tables count: the sum of the
            judges' ``overall.n``).
        withheld: answers left out of the worst-disagreements lists (blind mode: answers the viewer is still
            to score, see :func:`judge_calibration`); how many.
    """

    judges: list[JudgeCalibration]
    options: CalibrationOptions
    observations: int
    applied: int = 0
    withheld: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"options": {...}, "observations": N, "applied_observations": M,
        "withheld_answers": W, "judges": [...]}``."""
        o = self.options
        return {"options": {"weights": o.weights, "runs": o.runs, "humans": o.humans, "by": list(o.by),
                            "worst": o.worst},
                "observations": self.observations, "applied_observations": self.applied,
                "withheld_answers": self.withheld, "judges": [j.to_dict() for j in self.judges]}


# ------------------------------------------------------------------------------------------------ arithmetic
@dataclass(frozen=True)
class _Obs:
    """One comparison after the runs / humans modes: the snapped judge score for the categorical figures, the raw
    one for the mean difference, and the coder names for alpha."""

    src: PairedScore
    judge_raw: float
    judge_cat: float
    judge_coder: str
    human: float
    human_coder: str


def snap(value: float, allowed: Sequence[float]) -> float:
    """The allowed score nearest ``value`` (a tie goes to the lower one); ``value`` itself if ``allowed`` is empty."""
    if not allowed:
        return value
    return min(sorted(allowed), key=lambda a: (abs(a - value), a))


def _plain(x: float) -> float | int:
    return int(x) if float(x).is_integer() else float(x)


def _expand(scores: Iterable[PairedScore], options: CalibrationOptions) -> list[_Obs]:
    """Apply the runs and humans modes."""
    out: list[_Obs] = []
    units: dict[tuple[str, str, str], list[PairedScore]] = defaultdict(list)
    for s in scores:
        if not s.judge_scores:
            raise JudgeCalibrationError(f"answer {s.answer_id}, item {s.item}: judge_scores is empty")
        if s.allowed and s.human_score not in s.allowed:
            raise JudgeCalibrationError(
                f"answer {s.answer_id}, item {s.item}, field 'human_score': {s.human_score!r} is not one of "
                f"{list(s.allowed)}")
        units[(s.judge_label, s.answer_id, s.item_id)].append(s)
    for members in units.values():
        if options.humans == "consensus":
            human = statistics.median_low(sorted(m.human_score for m in members))
            names = ", ".join(sorted({m.annotator for m in members}))
            members = [PairedScore(**{**members[0].__dict__, "annotator": f"consensus of {names}",
                                      "human_score": human})]
        for m in members:
            hcoder = "consensus" if options.humans == "consensus" else human_label(m.annotator)
            if options.runs == "mean":
                raw = statistics.fmean(m.judge_scores)
                out.append(_Obs(m, raw, snap(raw, m.allowed), "judge", m.human_score, hcoder))
            else:
                for r, score in enumerate(m.judge_scores):
                    out.append(_Obs(m, score, snap(score, m.allowed), f"judge#{r}", m.human_score, hcoder))
    return out


def _labels(obs: Sequence[_Obs]) -> list[float]:
    values: set[float] = set()
    for o in obs:
        values.update(o.src.allowed)
        values.update((o.judge_cat, o.human))
    return sorted(values)


def weighted_kappa(judge: Sequence[float], human: Sequence[float], labels: Sequence[float],
                   weights: str = "linear") -> float | None:
    """Weighted Cohen's kappa of two aligned score lists, ``1 - sum(W * O) / sum(W * E)``: ``O`` the confusion
    matrix over ``labels`` (judge rows, human columns), ``E`` the outer product of its marginals over n, ``W``
    ``|i - j|`` (linear) or ``(i - j)^2`` (quadratic) over the labels' positions. The formula and weights of
    ``sklearn.metrics.cohen_kappa_score(judge, human, labels=labels, weights=weights)`` (a test checks they agree
    on random data), computed directly: scikit-learn's input checks cost about 15 ms a call, tens of seconds over a
    project's checklist items.

    Returns:
        kappa in [-1, 1], or None when undefined (the expected disagreement is 0, or no scores).

    Raises:
        ValueError: a score not in ``labels``; lists of different lengths; unknown ``weights``.
    """
    import numpy as np

    if len(judge) != len(human):
        raise ValueError(f"judge and human scores differ in length ({len(judge)} and {len(human)})")
    if weights not in WEIGHTS:
        raise ValueError(f"unknown weights {weights!r}; use one of {', '.join(WEIGHTS)}")
    index = {v: i for i, v in enumerate(labels)}
    k = len(labels)
    observed = np.zeros((k, k))
    for a, b in zip(judge, human, strict=True):
        if a not in index or b not in index:
            raise ValueError(f"score {a if a not in index else b!r} is not one of the labels {list(labels)}")
        observed[index[a], index[b]] += 1
    n = observed.sum()
    if n == 0:
        return None
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    positions = np.arange(k)
    distance = np.abs(positions[:, None] - positions[None, :]).astype(float)
    w = distance if weights == "linear" else distance**2
    chance = float((w * expected).sum())
    if chance == 0:
        return None
    return 1 - float((w * observed).sum()) / chance


def _kappa(obs: Sequence[_Obs], labels: Sequence[float], weights: str) -> Figure:
    if not obs:
        return Figure(None, "no paired scores")
    if len(obs) < 2:
        return Figure(None, "a single paired score")
    judge = [o.judge_cat for o in obs]
    human = [o.human for o in obs]
    if len(set(judge) | set(human)) < 2:
        return Figure(None, "no variance: every score is the same")
    value = weighted_kappa(judge, human, labels, weights)
    if value is None or not math.isfinite(value):
        return Figure(None, "undefined: the expected disagreement is 0")
    return Figure(value)


def _alpha(obs: Sequence[_Obs], labels: Sequence[float]) -> Figure:
    import krippendorff
    import numpy as np

    if not obs:
        return Figure(None, "no paired scores")
    units: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for o in obs:
        unit = units[(o.src.answer_id, o.src.item_id)]
        unit[o.judge_coder] = o.judge_cat
        unit[o.human_coder] = o.human
    pairable = [u for u in units.values() if len(u) >= 2]
    if len(pairable) < 2:
        return Figure(None, "fewer than 2 items scored by the judge and a human")
    values = {v for u in pairable for v in u.values()}
    if len(values) < 2 or len(labels) < 2:
        return Figure(None, "no variance: every score is the same")
    coders = sorted({c for u in pairable for c in u})
    data = np.full((len(coders), len(pairable)), np.nan)
    for j, u in enumerate(pairable):
        for c, v in u.items():
            data[coders.index(c), j] = v
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal",
                                             value_domain=list(labels)))
        except (ValueError, ZeroDivisionError) as exc:
            return Figure(None, f"undefined: {exc}")
    if not math.isfinite(value):
        return Figure(None, "undefined: the expected disagreement is 0")
    return Figure(value)


@functools.lru_cache(maxsize=256)
def _t_quantile(df: int) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + CONFIDENCE / 2, df))


def _agreement(observations: Sequence[_Obs], weights: str) -> Agreement:
    """The figures of :class:`Agreement` over expanded observations."""
    n = len(observations)
    answers = len({o.src.answer_id for o in observations})
    annotators = len({o.human_coder for o in observations})
    if n == 0:
        none = Figure(None, "no paired scores")
        return Agreement(0, 0, 0, none, none, none, none)
    labels = _labels(observations)
    exact = Figure(sum(o.judge_cat == o.human for o in observations) / n)
    diffs = [o.judge_raw - o.human for o in observations]
    mean = statistics.fmean(diffs)
    low = high = None
    if n >= 2:
        half = _t_quantile(n - 1) * statistics.stdev(diffs) / math.sqrt(n)
        low, high = mean - half, mean + half
    return Agreement(
        n, answers, annotators, exact, _kappa(observations, labels, weights), _alpha(observations, labels),
        Figure(mean), low, high, statistics.fmean(o.judge_raw for o in observations),
        statistics.fmean(o.human for o in observations))


def _group_value(o: _Obs, group: str) -> str:
    if group == MODEL_GROUP:
        return o.src.answer_model
    if group == KIND_GROUP:
        return o.src.item_kind or "-"
    return o.src.strata.get(group) or "-"


def _worst(observations: Sequence[_Obs], limit: int, withheld: Collection[str] = ()) -> list[Disagreement]:
    rows = [Disagreement(o.src.answer_id, o.src.qa_pair_id, o.src.item, o.src.item_label, _plain(o.judge_raw),
                         _plain(o.human), o.src.annotator, _plain(o.judge_raw - o.human), o.src.answer_model)
            for o in observations if o.judge_raw != o.human and o.src.answer_id not in withheld]
    rows.sort(key=lambda d: (-abs(d.diff), d.answer_id, _item_order(d.item), d.annotator))
    return rows[:limit]


def _item_sort(s: PairedScore) -> tuple:
    return (s.qa_pair_id, s.checklist_version or 0, _item_order(s.item))


def _item_order(key: str) -> tuple[int, str]:
    return (int(key), "") if key.isdigit() else (1 << 30, key)


def judge_matches(score: PairedScore, which: str) -> bool:
    """True when ``which`` names ``score``'s LLM judge: its label (``checklist:gpt-4o``), its judge name
    (``checklist``: every model of it) or its judge model (``gpt-4o``: every judge run with it)."""
    return which in (score.judge_label, score.judge, score.judge_model)


def select_judge(scores: Iterable[PairedScore], which: str | None) -> list[PairedScore]:
    """The paired scores of the judge ``which`` names (:func:`judge_matches`; None: all).

    Raises:
        JudgeCalibrationError: ``which`` names none of the judges there are (the message lists them).
    """
    scores = list(scores)
    if which is None:
        return scores
    chosen = [s for s in scores if judge_matches(s, which)]
    if not chosen and scores:
        labels = ", ".join(sorted({s.judge_label for s in scores}))
        raise JudgeCalibrationError(f"judge: no judge {which!r} has scores paired with human ones; "
                                    f"the judges there are: {labels}")
    return chosen


def judge_calibration(scores: Iterable[PairedScore], options: CalibrationOptions | None = None, *,
                      withheld: Collection[str] = ()) -> CalibrationReport:
    """Every LLM judge in ``scores`` against the humans: overall, per checklist item, per grouping in
    ``options.by``, and the largest disagreements (method: the module docstring, docs/judge-calibration.md).

    Args:
        scores: paired scores (:class:`PairedScore`), any order; one per (answer, item, annotator, judge).
        options: the choices (default :class:`CalibrationOptions`).
        withheld: answer ids never listed among the worst disagreements (they still count in every figure):
            in blind mode the answers the viewer is still to score (:func:`benchwright.core.human.judges_hidden`),
            whose judge and annotator scores the list would reveal.

    Returns:
        A :class:`CalibrationReport`, judges sorted by label; no figure is NaN (undefined ones are None with a
        reason).

    Raises:
        JudgeCalibrationError: a human score outside its item's allowed set, or a paired score with no judge
            score.
    """
    options = options or CalibrationOptions()
    scores = list(scores)
    by_judge: dict[str, list[_Obs]] = defaultdict(list)
    for o in _expand(scores, options):
        by_judge[o.src.judge_label].append(o)
    judges = []
    for label in sorted(by_judge):
        obs = by_judge[label]
        per_item: dict[str, list[_Obs]] = defaultdict(list)
        for o in obs:
            per_item[o.src.item_id].append(o)
        order = sorted(per_item, key=lambda k: _item_sort(per_item[k][0].src))
        groups: dict[str, dict[str, Agreement]] = {}
        for group in options.by:
            members: dict[str, list[_Obs]] = defaultdict(list)
            for o in obs:
                members[_group_value(o, group)].append(o)
            groups[group] = {v: _agreement(members[v], options.weights) for v in sorted(members)}
        first = obs[0].src
        judges.append(JudgeCalibration(
            first.judge, first.judge_model, label, _agreement(obs, options.weights),
            {k: _agreement(per_item[k], options.weights) for k in order},
            {k: per_item[k][0].src.item_label for k in order}, groups, _worst(obs, options.worst, withheld)))
    return CalibrationReport(judges, options, len(scores), sum(j.overall.n for j in judges),
                             len({s.answer_id for s in scores} & set(withheld)))


__all__ = [
    "CONFIDENCE",
    "DEFAULT_WORST",
    "HUMAN_MODES",
    "KIND_GROUP",
    "MODEL_GROUP",
    "RUN_MODES",
    "WEIGHTS",
    "Agreement",
    "CalibrationOptions",
    "CalibrationReport",
    "Disagreement",
    "Figure",
    "JudgeCalibration",
    "JudgeCalibrationError",
    "PairedScore",
    "judge_calibration",
    "judge_matches",
    "select_judge",
    "snap",
    "weighted_kappa",
]
