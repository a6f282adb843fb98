"""Item statistics across a model panel (issue 17 item 7; none of the anchor papers has these): per pair the
mean, spread and share passing of the models' scores, flags, and a discrimination index.

Pure functions over :class:`benchwright.core.calibration.ScoredAnswer` values (one judge, judge model and
condition). Definitions (also in docs/data-methods.md, "Item statistics"):

- **A model's score on an item**: the mean over its answers (samples) of each answer's mean score rate over its
  scored judge runs, in [0, 1] (as :mod:`benchwright.core.calibration` computes s_m(q)).
- **mean**: over the models with a score; **sd**: the *sample* standard deviation across those models
  (``n - 1``; the panel is a sample of the models one could ask, as in ``report``'s across-model tables), None
  with fewer than two models; **pass share**: the share of models scoring at least the pass bar.
- **Flags** (:data:`~benchwright.core.vocabulary.ITEM_FLAGS`), given only when at least ``min_models`` models
  have a score: ``saturated`` every model >= the high bar; ``unsolved`` every model <= the low bar;
  ``closed-book-solvable`` the pair's latest calibration says too easy; ``low-discrimination`` the
  discrimination index is below its bar (an item without an index is not flagged).
- **Discrimination index**: the corrected item-total correlation across models: the Pearson correlation between
  the models' scores on this item and each model's mean score on every *other* item of the run (the item itself
  left out, so it does not correlate with itself). Near 1 the item ranks the models as the rest of the benchmark
  does (strong models pass, weak ones fail); near 0 or negative it does not separate them. None with fewer than
  three models (two points always correlate perfectly), when a model has no other item, or when either side has
  no variance.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .calibration import ModelScore, ScoredAnswer, model_pair_scores
from .errors import BenchwrightError
from .vocabulary import (
    ACCESS_REPOSITORY,
    CONDITION_ACCESS,
    CONDITIONS,
    DEFAULT_AGENT_CONDITION,
    ITEM_FLAGS,
)


@dataclass(frozen=True)
class ItemThresholds:
    """The bars of the flags, stored with the run (``item_stats_runs.thresholds_json``).

    Attributes:
        high: a model at or above it has solved the item (``saturated`` when every model is). Default 0.9.
        low: a model at or below it has failed it (``unsolved`` when every model is). Default 0.1.
        pass_bar: the score counted as passing in the pass share. Default 0.5.
        min_discrimination: an index below it flags ``low-discrimination``. Default 0.2.
        min_models: the fewest models with a score for any flag. Default 2.
    """

    high: float = 0.9
    low: float = 0.1
    pass_bar: float = 0.5
    min_discrimination: float = 0.2
    min_models: int = 2

    def check(self) -> None:
        """Raises BenchwrightError when a bar is outside [0, 1] (the discrimination bar: [-1, 1]), ``low`` is
        above ``high``, or ``min_models`` is below 1."""
        for name, v in (("--high", self.high), ("--low", self.low), ("--pass", self.pass_bar)):
            if not (isinstance(v, int | float) and math.isfinite(v) and 0 <= v <= 1):
                raise BenchwrightError(f"{name} {v!r} must be a number between 0 and 1")
        if not (math.isfinite(self.min_discrimination) and -1 <= self.min_discrimination <= 1):
            raise BenchwrightError(f"--min-discrimination {self.min_discrimination!r} must be between -1 and 1")
        if self.low > self.high:
            raise BenchwrightError(f"--low {self.low} is above --high {self.high}")
        if self.min_models < 1:
            raise BenchwrightError(f"--min-models {self.min_models} must be at least 1")

    def to_dict(self) -> dict:
        """As stored: ``{"high", "low", "pass", "min_discrimination", "min_models"}``."""
        return {"high": self.high, "low": self.low, "pass": self.pass_bar,
                "min_discrimination": self.min_discrimination, "min_models": self.min_models}


@dataclass(frozen=True)
class ItemStat:
    """One pair's statistics: ``scores`` model -> its score (0-1), the figures of the module docstring and its
    flags (in :data:`~benchwright.core.vocabulary.ITEM_FLAGS` order)."""

    qa_pair_id: str
    scores: Mapping[str, float]
    mean: float | None
    sd: float | None
    pass_share: float | None
    discrimination: float | None
    flags: tuple[str, ...]

    @property
    def models(self) -> int:
        """Models with a score on the pair."""
        return len(self.scores)


@dataclass(frozen=True)
class ItemStatsResult:
    """A whole run: the panel, the thresholds, one :class:`ItemStat` per pair (input order)."""

    models: tuple[str, ...]
    thresholds: ItemThresholds
    items: tuple[ItemStat, ...] = field(default=())

    @property
    def counts(self) -> dict[str, int]:
        """Pairs per flag, every flag present (0 when none)."""
        c = Counter(f for i in self.items for f in i.flags)
        return {f: c.get(f, 0) for f in ITEM_FLAGS}

    def ranked(self) -> list[ItemStat]:
        """The items with a discrimination index, most discriminating first (ties by pair id)."""
        return sorted((i for i in self.items if i.discrimination is not None),
                      key=lambda i: (-i.discrimination, i.qa_pair_id))  # type: ignore[operator]


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """The Pearson correlation of two equally long sequences (numpy's ``corrcoef``); None with fewer than two
    points or when either has no variance."""
    import numpy as np

    if len(xs) != len(ys) or len(xs) < 2:
        return None
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if np.ptp(x) <= 1e-12 or np.ptp(y) <= 1e-12:
        return None
    return float(np.clip(np.corrcoef(x, y)[0, 1], -1.0, 1.0))


def item_stats(answers: Iterable[ScoredAnswer], models: Sequence[str], *,
               thresholds: ItemThresholds = ItemThresholds(), too_easy: Iterable[str] = (),
               samples: int | None = None, pair_ids: Sequence[str] | None = None) -> ItemStatsResult:
    """Item statistics of every pair over the panel ``models`` (definitions in the module docstring).

    Args:
        answers: judged answers under one condition, judge and judge model (other models' are ignored).
        models: the panel.
        thresholds: the bars (:class:`ItemThresholds`).
        too_easy: pair ids whose latest calibration decided ``too-easy`` (flag ``closed-book-solvable``).
        samples: at most this many answers per model and pair (lowest sample index first).
        pair_ids: the pairs to report, in this order (default: every pair with a score); one without any
            score gets no figures and no flags.

    Raises:
        BenchwrightError: invalid thresholds, no models, ``samples`` below 1.
    """
    thresholds.check()
    if not models:
        raise BenchwrightError("item statistics need at least one model")
    panel = set(models)
    per_pair: dict[str, dict[str, ModelScore]] = model_pair_scores((a for a in answers if a.model in panel),
                                                                  samples=samples)
    scores = {q: {m: by[m].s for m in models if m in by} for q, by in per_pair.items()}
    totals = {m: [s[m] for s in scores.values() if m in s] for m in models}
    sums = {m: sum(v) for m, v in totals.items()}
    easy = set(too_easy)
    t = thresholds
    out = []
    for q in (list(scores) if pair_ids is None else list(pair_ids)):
        mine = scores.get(q, {})
        values = list(mine.values())
        n = len(values)
        xs, ys = [], []
        for m, s in mine.items():
            others = len(totals[m]) - 1
            if others < 1:
                xs = []
                break
            xs.append(s)
            ys.append((sums[m] - s) / others)
        disc = pearson(xs, ys) if len(xs) >= 3 else None
        flags: list[str] = []
        if n >= t.min_models:
            if all(v >= t.high for v in values):
                flags.append("saturated")
            if all(v <= t.low for v in values):
                flags.append("unsolved")
        if q in easy:
            flags.append("closed-book-solvable")
        if n >= t.min_models and disc is not None and disc < t.min_discrimination:
            flags.append("low-discrimination")
        out.append(ItemStat(
            qa_pair_id=q, scores=mine, mean=statistics.fmean(values) if values else None,
            sd=statistics.stdev(values) if n >= 2 else None,
            pass_share=sum(v >= t.pass_bar for v in values) / n if n else None,
            discrimination=disc, flags=tuple(f for f in ITEM_FLAGS if f in flags),
        ))
    return ItemStatsResult(models=tuple(models), thresholds=thresholds, items=tuple(out))


def default_condition(answers: Iterable[ScoredAnswer]) -> str | None:
    """The condition ``items`` uses without ``--condition``: the condition with repository access
    (:data:`~benchwright.core.vocabulary.ACCESS_REPOSITORY`: an agent in the repository, the benchmark's own
    setting) with the most judged answers, ties to ``agentic``; when there is none, the condition with the most
    judged answers (ties in registry order). None without any answer."""
    c = Counter(a.condition for a in answers)
    if not c:
        return None
    order = {name: i for i, name in enumerate(CONDITIONS)}

    def rank(name: str) -> tuple:
        return (-c[name], name != DEFAULT_AGENT_CONDITION, order.get(name, len(order)), name)

    repo = [name for name in c if CONDITION_ACCESS.get(name) == ACCESS_REPOSITORY]
    return min(repo or list(c), key=rank)
