"""Difficulty calibration from direct answers (SWE-QA-Pro §2.3): pairs that models answer well without the
repository are "too easy" and filtered out.

Pure functions over plain values (no store). The store side (:mod:`benchwright.db.calibration`) reads the judged
answers into :class:`ScoredAnswer` values; :func:`calibrate` does the arithmetic:

1. **s_m(q)**, model m's score on pair q: the mean over its direct answers (samples) of each answer's mean over
   its scored judge runs (:func:`benchwright.core.metrics.answer_scores`), each run's *score rate* in [0, 1]
   (``sum(score) / sum(max)``). The paper uses the average total score; the score rate is that total divided by
   a constant (50 for SWE-QA-Pro's five 1-10 dimensions), and a z-score does not change under a positive linear
   map, so z_m(q) is the paper's exactly while every judge's scores stay comparable.
2. **mean_m, sd_m**: the mean and the *population* standard deviation (``ddof=0``) of s_m(q) over the pairs model
   m has a score on. The pairs calibrated are the whole set being standardised, not a sample of a larger one, so
   with the population sd every model's z-scores have mean 0 and variance 1 over its pairs.
3. **z_m(q) = (s_m(q) - mean_m) / sd_m**. A model whose sd is 0 (every pair the same score, or a single pair) has
   no z-score at all: it cannot tell easy from hard, and the pairs it answered count it as not judged (never a
   division by zero).
4. **The rule** over the models with a z-score on q: ``mean-z`` calls q too easy when the mean of their z is at
   least the threshold; ``all-z`` when each of them is (their minimum is at least the threshold). A tie at the
   threshold counts as too easy (compared with a 1e-9 tolerance, so a z that equals the threshold in exact
   arithmetic is not lost to rounding). A pair with z-scores from fewer than ``min_models`` models (default:
   every model of the panel) is ``insufficient``: neither too easy nor kept on evidence.

The default rule and threshold are :data:`benchwright.core.vocabulary.DEFAULT_CALIBRATION_RULE` and
:data:`~benchwright.core.vocabulary.DEFAULT_CALIBRATION_THRESHOLD` (why: docs/data-methods.md, "Difficulty
calibration").
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .errors import BenchwrightError
from .vocabulary import CALIBRATION_RULES, DIFFICULTY_DECISIONS

TIE_TOLERANCE = 1e-9
"""A z (or mean z) within this of the threshold counts as reaching it (floating-point rounding)."""


@dataclass(frozen=True)
class ScoredAnswer:
    """One answer's judged score: the mean score rate (0-1) of its scored runs under one judge and judge model.

    Attributes:
        qa_pair_id, model, condition, sample_index: the answer (``answers`` columns).
        judge, judge_model: who scored it.
        score: the mean over its scored runs of each run's score rate, in [0, 1].
        runs: the scored runs averaged (>= 1).
    """

    qa_pair_id: str
    model: str
    condition: str
    sample_index: int
    judge: str
    judge_model: str
    score: float
    runs: int


@dataclass(frozen=True)
class ModelStats:
    """mean_m and sd_m of one model's s_m(q) over the pairs it has a score on (population sd); ``sd`` 0 or
    ``n`` below 2 leaves the model without z-scores (:attr:`usable` False)."""

    model: str
    mean: float | None
    sd: float | None
    n: int

    @property
    def usable(self) -> bool:
        """True when z-scores can be computed (at least two pairs and a positive sd)."""
        return self.n >= 2 and self.sd is not None and self.sd > 0

    def to_dict(self) -> dict:
        """``{"mean", "sd", "n"}`` as stored in ``calibration_runs.model_stats_json``."""
        return {"mean": self.mean, "sd": self.sd, "n": self.n}


@dataclass(frozen=True)
class ModelScore:
    """Model m on pair q: ``s`` = s_m(q) (0-1), ``z`` = z_m(q) (None when the model has no usable sd), ``n`` the
    answers averaged, ``runs`` the scored judge runs behind them."""

    s: float
    z: float | None
    n: int
    runs: int

    def to_dict(self) -> dict:
        """``{"s", "z", "n", "runs"}`` as stored in ``calibration_values.scores_json``."""
        return {"s": self.s, "z": self.z, "n": self.n, "runs": self.runs}


@dataclass(frozen=True)
class PairCalibration:
    """One pair's calibration: per model its :class:`ModelScore`, the mean and minimum of the z-scores it has
    (None without any), how many models gave one, and the decision (one of
    :data:`~benchwright.core.vocabulary.DIFFICULTY_DECISIONS`)."""

    qa_pair_id: str
    scores: Mapping[str, ModelScore]
    mean_z: float | None
    min_z: float | None
    models_with_z: int
    decision: str


@dataclass(frozen=True)
class CalibrationResult:
    """A whole calibration: the parameters, per model its :class:`ModelStats`, per pair its
    :class:`PairCalibration` (in input order)."""

    models: tuple[str, ...]
    rule: str
    threshold: float
    min_models: int
    samples: int | None
    model_stats: Mapping[str, ModelStats]
    pairs: tuple[PairCalibration, ...] = field(default=())

    @property
    def counts(self) -> dict[str, int]:
        """Pairs per decision, every decision present (0 when none)."""
        c = Counter(p.decision for p in self.pairs)
        return {d: c.get(d, 0) for d in DIFFICULTY_DECISIONS}


def check_parameters(rule: str, threshold: float, models: Sequence[str], min_models: int | None) -> int:
    """Validate the parameters of :func:`calibrate`; returns the minimum number of models (default: all).

    Raises:
        BenchwrightError: an unknown rule, a threshold that is not a finite number, no models, a model named
            twice, or ``min_models`` outside 1..len(models).
    """
    if rule not in CALIBRATION_RULES:
        raise BenchwrightError(f"unknown calibration rule {rule!r}; use one of {', '.join(CALIBRATION_RULES)}")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold):
        raise BenchwrightError(f"calibration threshold {threshold!r} is not a finite number")
    if not models:
        raise BenchwrightError("calibration needs at least one model")
    twice = sorted(m for m, n in Counter(models).items() if n > 1)
    if twice:
        raise BenchwrightError(f"model(s) named twice: {', '.join(twice)}")
    need = len(models) if min_models is None else min_models
    if not 1 <= need <= len(models):
        raise BenchwrightError(f"--min-models {min_models} must be between 1 and the {len(models)} models given")
    return need


def model_pair_scores(answers: Iterable[ScoredAnswer], *, samples: int | None = None
                      ) -> dict[str, dict[str, ModelScore]]:
    """``{pair id: {model: ModelScore without z}}``: s_m(q), the mean over the answers (the first ``samples`` by
    sample index, all when None) of each answer's score. Pairs and models in first-seen order.

    Raises:
        BenchwrightError: ``samples`` below 1.
    """
    if samples is not None and samples < 1:
        raise BenchwrightError(f"--samples {samples} must be at least 1")
    grouped: dict[str, dict[str, list[ScoredAnswer]]] = defaultdict(lambda: defaultdict(list))
    for a in answers:
        grouped[a.qa_pair_id][a.model].append(a)
    out: dict[str, dict[str, ModelScore]] = {}
    for pair_id, by_model in grouped.items():
        out[pair_id] = {}
        for model, rows in by_model.items():
            rows = sorted(rows, key=lambda a: a.sample_index)[:samples]
            out[pair_id][model] = ModelScore(s=statistics.fmean(a.score for a in rows), z=None, n=len(rows),
                                             runs=sum(a.runs for a in rows))
    return out


def model_stats(scores: Mapping[str, Mapping[str, ModelScore]], models: Sequence[str]) -> dict[str, ModelStats]:
    """Per model, the mean and population sd of s_m(q) over the pairs in ``scores`` it has a score on."""
    out = {}
    for m in models:
        values = [by_model[m].s for by_model in scores.values() if m in by_model]
        if not values:
            out[m] = ModelStats(m, None, None, 0)
            continue
        out[m] = ModelStats(m, statistics.fmean(values), statistics.pstdev(values), len(values))
    return out


def calibrate(answers: Iterable[ScoredAnswer], models: Sequence[str], *, rule: str, threshold: float,
              min_models: int | None = None, samples: int | None = None,
              pair_ids: Sequence[str] | None = None) -> CalibrationResult:
    """Difficulty calibration of SWE-QA-Pro §2.3 (the method is in the module docstring).

    Args:
        answers: the judged direct answers (one judge and judge model; answers of other models are ignored).
        models: the panel, in the order reported.
        rule: ``mean-z`` or ``all-z`` (:data:`~benchwright.core.vocabulary.CALIBRATION_RULES`).
        threshold: the z (in standard deviations) at or above which a pair is too easy.
        min_models: the fewest models with a z-score for a decision (default: every model).
        samples: use at most this many answers per model and pair (lowest sample index first).
        pair_ids: the pairs to decide, in this order (default: every pair with an answer); one without any
            answer is ``insufficient``.

    Returns:
        A :class:`CalibrationResult`.

    Raises:
        BenchwrightError: invalid parameters (:func:`check_parameters`, ``samples`` below 1).
    """
    need = check_parameters(rule, threshold, models, min_models)
    panel = set(models)
    scores = model_pair_scores((a for a in answers if a.model in panel), samples=samples)
    stats = model_stats(scores, models)
    order = list(scores) if pair_ids is None else list(pair_ids)
    pairs = []
    for pair_id in order:
        by_model = {}
        for m in models:
            ms = scores.get(pair_id, {}).get(m)
            if ms is None:
                continue
            st = stats[m]
            z = (ms.s - st.mean) / st.sd if st.usable else None  # type: ignore[operator]
            by_model[m] = ModelScore(ms.s, z, ms.n, ms.runs)
        zs = [s.z for s in by_model.values() if s.z is not None]
        mean_z = statistics.fmean(zs) if zs else None
        min_z = min(zs) if zs else None
        if len(zs) < need:
            decision = "insufficient"
        else:
            deciding = mean_z if rule == "mean-z" else min_z
            decision = "too-easy" if deciding >= threshold - TIE_TOLERANCE else "kept"  # type: ignore[operator]
        pairs.append(PairCalibration(pair_id, by_model, mean_z, min_z, len(zs), decision))
    return CalibrationResult(models=tuple(models), rule=rule, threshold=float(threshold), min_models=need,
                             samples=samples, model_stats=stats, pairs=tuple(pairs))


HISTOGRAM_EDGES = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0)
"""Bin edges of :func:`z_histogram` (in standard deviations); values below the first or at/above the last go in
the open end bins."""


def z_histogram(values: Iterable[float | None], edges: Sequence[float] = HISTOGRAM_EDGES
                ) -> list[tuple[str, int]]:
    """The distribution of z values as ``(bin label, count)`` rows, lowest bin first: ``< -2``, ``[-2, -1.5)``,
    ..., ``>= 2`` (None values are skipped). Every bin is listed, empty ones too; a value within
    :data:`TIE_TOLERANCE` below an edge counts as on it (a mean z of 0 computed as -1e-17 is in ``[0, 0.5)``)."""
    labels = [f"< {edges[0]:g}"] + [f"[{lo:g}, {hi:g})" for lo, hi in itertools.pairwise(edges)] + [f">= {edges[-1]:g}"]
    counts = [0] * len(labels)
    for v in values:
        if v is None:
            continue
        i = 0
        while i < len(edges) and v >= edges[i] - TIE_TOLERANCE:
            i += 1
        counts[i] += 1
    return list(zip(labels, counts, strict=True))


@dataclass(frozen=True)
class Panel:
    """Whose answers a calibration or ``items`` run uses: one judge and judge model, the conditions pooled, the
    models, and ``notes`` saying which defaults were taken (for the front ends to print)."""

    judge: str
    judge_model: str
    conditions: tuple[str, ...]
    models: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def answers(self, answers: Iterable[ScoredAnswer]) -> list[ScoredAnswer]:
        """The answers of ``answers`` this panel uses."""
        models, conditions = set(self.models), set(self.conditions)
        return [a for a in answers if a.judge == self.judge and a.judge_model == self.judge_model
                and a.condition in conditions and a.model in models]


NAME_CHARS = 80
"""A model or judge-model name is cut at this many characters in a message (a 1 MB name is not printed whole)."""


def short_name(name: str) -> str:
    """``name`` cut at :data:`NAME_CHARS` characters, marked ``…``."""
    return name if len(name) <= NAME_CHARS else name[:NAME_CHARS] + "…"


def available_text(answers: Sequence[ScoredAnswer], limit: int = 12) -> str:
    """What judged answers exist, one line per model, condition, judge and judge model with the number of
    answers (most first, at most ``limit`` lines): the body of the "no judged answers" errors."""
    c = Counter((a.model, a.condition, a.judge, a.judge_model) for a in answers)
    rows = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
    lines = [f"  {short_name(m)} ({cond}) judged by {j} / {short_name(jm)}: {n} answer{'' if n == 1 else 's'}"
             for (m, cond, j, jm), n in rows[:limit]]
    if len(rows) > limit:
        lines.append(f"  ... and {len(rows) - limit} more")
    return "\n".join(lines) if lines else "  none"


def _most(values: Iterable[str], order: Sequence[str] = ()) -> list[str]:
    """Distinct values, most frequent first, ties by their place in ``order`` then by name."""
    c = Counter(values)
    rank = {v: i for i, v in enumerate(order)}
    return sorted(c, key=lambda v: (-c[v], rank.get(v, len(rank)), v))


def choose_panel(answers: Sequence[ScoredAnswer], *, conditions: Sequence[str], judge: str | None = None,
                 judge_model: str | None = None, models: Sequence[str] | None = None,
                 judge_order: Sequence[str] = (), what: str = "judged answers") -> Panel:
    """The panel of a run over ``answers`` (every judged answer of the project): under ``conditions``, the
    ``judge`` given or the one with the most judged answers there (ties in ``judge_order``), its ``judge_model``
    given or the one with the most answers, and the ``models`` given or every model with such answers.

    Raises:
        BenchwrightError: no judged answer under the conditions (or of the judge / judge model given), or a
            model given without any; the message lists the judged answers that exist.
    """
    cond = set(conditions)
    pool = [a for a in answers if a.condition in cond]
    where = f"under {' or '.join(conditions)}"
    if not pool:
        raise BenchwrightError(f"no {what} {where}; judged answers that exist:\n{available_text(answers)}")
    notes: list[str] = []
    existing = f"; judged answers that exist:\n{available_text(answers)}"

    def narrow(pool: list[ScoredAnswer], field: str, given: str | None, option: str, order: Sequence[str] = ()):
        """The value of ``field`` given, or the most frequent one (noted when there are others), and the pool
        narrowed to it; refused when nothing is left."""
        values = _most((getattr(a, field) for a in pool), order)
        value = values[0] if given is None else given
        if given is None and len(values) > 1:
            notes.append(f"{option.removeprefix('--').replace('-', ' ')} {short_name(value)} (the most judged "
                         f"answers; also: {', '.join(short_name(v) for v in values[1:])}; {option})")
        return value, [a for a in pool if getattr(a, field) == value]

    judge, pool = narrow(pool, "judge", judge, "--judge", judge_order)
    if not pool:
        raise BenchwrightError(f"no {what} {where} judged by {judge}{existing}")
    judge_model, pool = narrow(pool, "judge_model", judge_model, "--judge-model")
    if not pool:
        raise BenchwrightError(f"no {what} {where} judged by {judge} / {short_name(judge_model)}{existing}")
    present = _most(a.model for a in pool)
    if models is None:
        models = sorted(present)
    else:
        missing = [m for m in models if m not in present]
        if missing:
            raise BenchwrightError(
                f"no {what} {where} judged by {judge} / {short_name(judge_model)} for model(s) "
                f"{', '.join(short_name(m) for m in missing)} (names must match exactly){existing}")
    panel = set(models)
    used = tuple(c for c in conditions if any(a.condition == c and a.model in panel for a in pool))
    return Panel(judge=judge, judge_model=judge_model, conditions=used, models=tuple(models), notes=tuple(notes))
