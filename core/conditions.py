"""Condition deltas (Code-QA-Bench "Methodology 1" and "Key Results"): what code access and documentation add.

Pure functions over the judged runs of :mod:`benchwright.core.metrics` (human overrides already applied; no store,
no UI). Per answering model, judge, judge model and task set (and optionally a stratum), the mean normalized score
per condition (``closed-book``, ``code-only``, ``documented``: the vocabulary's :data:`CONDITIONS`) and the two
deltas of the paper, each **paired** over the pairs scored under both conditions:

- ``code-only - closed-book``: what reading the code adds beyond memorization;
- ``documented - code-only``: what the documentation adds to the code.

How scores combine (also docs/metrics.md, *Condition deltas*):

1. An answer's normalized score (0-1) is the mean over its scored runs of points / maximum
   (:func:`benchwright.core.metrics.answer_scores`; for the 0-5 judge the normalized mean of accuracy,
   completeness and specificity, as the paper's "final score").
2. A pair's score under a condition is the mean over its samples (K samples weigh as one pair).
3. A delta is over the pairs scored under both of its conditions: ``n``, the mean difference, a percentile
   bootstrap 95 % interval (seeded) and a paired test (:data:`PAIRED_TESTS`); pairs scored under one of the two only
   are counted (``only_treatment``, ``only_baseline``) and left out.
4. Below :data:`MIN_PAIRS_INTERVAL` pairs no interval, below :data:`MIN_PAIRS_TEST` no p-value: the row says so.
"""

from __future__ import annotations

import statistics
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from .agent_metrics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, paired_bootstrap_ci
from .metrics import JUDGES, NO_VALUE, STRATA, JudgedRun, answer_scores

CODE_QA_CONDITIONS = ("closed-book", "code-only", "documented")
"""The three conditions of Code-QA-Bench's design, in the order the table shows them."""

DELTAS = (("code-only", "closed-book"), ("documented", "code-only"))
"""The deltas, as (treatment, baseline): treatment - baseline (Code-QA-Bench "Key metrics")."""

PAIRED_TESTS = {
    "wilcoxon": "Wilcoxon signed-rank (scipy.stats.wilcoxon, zero_method='wilcox': zero differences dropped, "
                "two-sided)",
    "ttest": "paired t-test (scipy.stats.ttest_rel, two-sided)",
}
"""The paired tests ``report --conditions --test`` offers, with how the output names them."""

DEFAULT_TEST = "wilcoxon"
"""The test of ``report --conditions`` without ``--test``."""

MIN_PAIRS_TEST = 5
"""Least number of paired pairs for a p-value (ours: below it the test says nothing useful; Wilcoxon's exact
two-sided p cannot go below 0.0625 with 4 pairs). For Wilcoxon the non-zero differences must reach it too."""

MIN_PAIRS_INTERVAL = 2
"""Least number of paired pairs for a bootstrap interval (one pair resamples to itself)."""


@dataclass(frozen=True)
class ConditionMean:
    """One condition's mean normalized score (0-1) over the pairs scored under it (``pairs``)."""

    condition: str
    pairs: int
    mean: float | None


@dataclass(frozen=True)
class ConditionDelta:
    """``treatment - baseline`` over the pairs scored under both.

    Attributes:
        treatment, baseline: the two conditions.
        n: pairs scored under both (the paired n).
        only_treatment, only_baseline: pairs scored under one of them only (left out, counted).
        mean_delta: mean of the paired differences (normalized score, -1 to 1); ``None`` when ``n`` is 0.
        ci_low, ci_high: the percentile bootstrap 95 % interval of the mean difference; ``None`` below
            :data:`MIN_PAIRS_INTERVAL`.
        test: the paired test's name (a key of :data:`PAIRED_TESTS`).
        statistic, p_value: the test's result; ``None`` when it was not run (see ``note``).
        note: why there is no interval or p-value (empty when both are there).
    """

    treatment: str
    baseline: str
    n: int
    only_treatment: int
    only_baseline: int
    mean_delta: float | None
    ci_low: float | None
    ci_high: float | None
    test: str
    statistic: float | None
    p_value: float | None
    note: str = ""

    @property
    def name(self) -> str:
        """``code-only - closed-book`` form."""
        return f"{self.treatment} - {self.baseline}"


@dataclass(frozen=True)
class ConditionRow:
    """One model, judge, judge model, task set (and stratum): the means per condition and the deltas."""

    model: str
    judge: str
    judge_model: str
    task_set: str
    axis: str | None
    stratum: str | None
    means: tuple[ConditionMean, ...]
    deltas: tuple[ConditionDelta, ...]

    def to_dict(self) -> dict:
        """The row as JSON-ready values (``report --json``'s ``conditions`` section)."""
        return asdict(self)


def paired_test(differences: Sequence[float], test: str = DEFAULT_TEST) -> tuple[float | None, float | None, str]:
    """The paired test of ``differences`` (treatment - baseline): ``(statistic, p_value, note)``.

    ``wilcoxon``: ``scipy.stats.wilcoxon(differences, zero_method="wilcox")`` (two-sided; zero differences are
    dropped before ranking, Wilcoxon 1945). ``ttest``: ``scipy.stats.ttest_rel`` of the two sides, which is the
    one-sample t-test of the differences (two-sided). No test (``None, None`` and the reason in ``note``) below
    :data:`MIN_PAIRS_TEST` pairs, for Wilcoxon below that many non-zero differences (all zero: "no difference"),
    and for the t-test when every difference is the same (zero variance: t undefined).

    Raises ``ValueError`` for a test not in :data:`PAIRED_TESTS`."""
    import numpy as np
    from scipy import stats

    if test not in PAIRED_TESTS:
        raise ValueError(f"unknown paired test {test!r}; use one of {', '.join(PAIRED_TESTS)}")
    d = np.asarray(differences, dtype=float)
    if len(d) < MIN_PAIRS_TEST:
        return None, None, f"too few pairs for a p-value ({len(d)} < {MIN_PAIRS_TEST})"
    if test == "wilcoxon":
        nonzero = int(np.count_nonzero(d))
        if nonzero == 0:
            return None, None, f"no difference: all {len(d)} paired differences are zero"
        if nonzero < MIN_PAIRS_TEST:
            return None, None, (f"too few non-zero differences for a p-value ({nonzero} < {MIN_PAIRS_TEST}; "
                                "zero differences are dropped)")
        r = stats.wilcoxon(d, zero_method="wilcox")
        return float(r.statistic), float(r.pvalue), ""
    if np.ptp(d) == 0:
        return None, None, f"every paired difference is {d[0]:+.3g}: no variance, t undefined"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = stats.ttest_rel(d, np.zeros_like(d))
    return float(r.statistic), float(r.pvalue), ""


def condition_delta(treatment: Mapping[str, float], baseline: Mapping[str, float], *, treatment_name: str,
                    baseline_name: str, test: str = DEFAULT_TEST, resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = BOOTSTRAP_SEED) -> ConditionDelta:
    """The paired delta of two conditions' per-pair scores (``pair id -> normalized score``).

    The differences are taken over the pairs in both mappings, in pair-id order (so the bootstrap, seeded with
    ``seed``, resamples the same list for the same data). Raises ``ValueError`` for an unknown test, or
    ``resamples`` below 1."""
    paired = sorted(set(treatment) & set(baseline))
    diffs = [treatment[p] - baseline[p] for p in paired]
    ci = paired_bootstrap_ci(diffs, resamples=resamples, seed=seed)
    statistic, p_value, note = paired_test(diffs, test)
    if not paired:
        note = "no pair is scored under both conditions"
    elif ci is None:
        note = f"too few pairs for an interval ({len(paired)} < {MIN_PAIRS_INTERVAL}); " + note
    return ConditionDelta(
        treatment=treatment_name, baseline=baseline_name, n=len(paired),
        only_treatment=len(set(treatment) - set(baseline)), only_baseline=len(set(baseline) - set(treatment)),
        mean_delta=statistics.fmean(diffs) if diffs else None,
        ci_low=ci[0] if ci else None, ci_high=ci[1] if ci else None,
        test=test, statistic=statistic, p_value=p_value, note=note,
    )


def has_conditions(runs: Iterable[JudgedRun]) -> bool:
    """True when some model has scored answers under two or more of :data:`CODE_QA_CONDITIONS`."""
    seen: dict[str, set[str]] = defaultdict(set)
    for r in runs:
        if r.is_scored and r.condition in CODE_QA_CONDITIONS:
            seen[r.model].add(r.condition)
    return any(len(c) >= 2 for c in seen.values())


def condition_deltas(runs: Iterable[JudgedRun], *, by: str | None = None, test: str = DEFAULT_TEST,
                     resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> list[ConditionRow]:
    """Per model, judge, judge model and task set (and the stratum of ``by``, one of :data:`STRATA`), the mean
    normalized score per condition of :data:`CODE_QA_CONDITIONS` and the :data:`DELTAS`, paired over pairs
    (Code-QA-Bench "Methodology 1", "Key Results" 1-3). A pair without a task set is in task set
    :data:`~benchwright.core.metrics.NO_VALUE`.

    Only groups with scored answers under two or more of the conditions get a row. Rows are sorted by model,
    judge (report order), judge model, task set, stratum. Raises ``ValueError`` for an unknown axis or test."""
    if by is not None and by not in STRATA:
        raise ValueError(f"unknown stratification axis {by!r}; use one of {', '.join(STRATA)}")
    if test not in PAIRED_TESTS:
        raise ValueError(f"unknown paired test {test!r}; use one of {', '.join(PAIRED_TESTS)}")
    runs = [r for r in runs if r.condition in CODE_QA_CONDITIONS]
    pair_of = {r.answer_id: r.qa_pair_id for r in runs}
    samples: dict[tuple, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for a in answer_scores(runs):
        task_set = a.strata.value("task_set")
        stratum = a.strata.value(by) if by else None
        key = (a.key.model, a.key.judge, a.key.judge_model, task_set, stratum)
        samples[key][a.key.condition][pair_of[a.answer_id]].append(a.score_rate)
    rank = {j: i for i, j in enumerate(JUDGES)}
    rows = []
    for key in sorted(samples, key=lambda k: (k[0], rank.get(k[1], len(JUDGES)), k[1], k[2], k[3], k[4] or "")):
        by_condition = {c: {p: statistics.fmean(v) for p, v in pairs.items()} for c, pairs in samples[key].items()}
        if len(by_condition) < 2:
            continue
        model, judge, judge_model, task_set, stratum = key
        means = tuple(
            ConditionMean(c, len(by_condition.get(c, {})),
                          statistics.fmean(by_condition[c].values()) if by_condition.get(c) else None)
            for c in CODE_QA_CONDITIONS)
        deltas = tuple(
            condition_delta(by_condition.get(t, {}), by_condition.get(b, {}), treatment_name=t, baseline_name=b,
                            test=test, resamples=resamples, seed=seed)
            for t, b in DELTAS)
        rows.append(ConditionRow(model=model, judge=judge, judge_model=judge_model, task_set=task_set,
                                 axis=by, stratum=stratum if by else None, means=means, deltas=deltas))
    return rows


SATURATION_JUDGE = "code-qa-bench"
"""The judge whose ``specificity`` axis the saturation check reads (Code-QA-Bench's 0-5 judge)."""

SATURATION_KEY = "specificity"

SATURATION_WARNING = 0.5
"""Share of a model's answers at the top specificity score above which the report warns (ours: the paper names
"specificity saturation" a diagnostic signal but gives no threshold; above half, the axis no longer tells answers
apart)."""


@dataclass(frozen=True)
class SaturationRow:
    """Specificity saturation of one model, condition and judge model under the 0-5 judge.

    ``answers``: answers with a scored specificity; ``at_max``: those whose specificity (mean over their scored
    runs) is the maximum, 5 of 5; ``share`` = at_max / answers; ``warning``: share above the threshold."""

    model: str
    condition: str
    judge_model: str
    answers: int
    at_max: int
    share: float
    warning: bool

    def to_dict(self) -> dict:
        """The row as JSON-ready values."""
        return asdict(self)


def specificity_saturation(runs: Iterable[JudgedRun], *,
                           threshold: float = SATURATION_WARNING) -> list[SaturationRow]:
    """Per model, condition and judge model, the share of answers the Code-QA-Bench judge gave the top
    specificity (Code-QA-Bench "Significance" 4: specificity saturation as a diagnostic signal), and whether it is
    above ``threshold``. An answer's specificity is the mean over its scored runs (overrides applied), so an answer
    is at the top only when every run gave it 5. Sorted by model, condition, judge model."""
    tops: dict[str, float] = {}
    for r in runs:
        if r.judge == SATURATION_JUDGE:
            for e in r.entries:
                if e.key == SATURATION_KEY:
                    tops.setdefault(r.answer_id, e.max)
    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for a in answer_scores(r for r in runs if r.judge == SATURATION_JUDGE):
        value = a.dimensions.get(SATURATION_KEY)
        if value is None or a.answer_id not in tops:
            continue
        c = counts[(a.key.model, a.key.condition, a.key.judge_model)]
        c[0] += 1
        c[1] += value >= tops[a.answer_id]
    return [SaturationRow(model=m, condition=c, judge_model=j, answers=n, at_max=k, share=k / n,
                          warning=k / n > threshold)
            for (m, c, j), (n, k) in sorted(counts.items())]


CONDITION_FIELDS = (
    "model", "judge", "judge_model", "task_set", "axis", "stratum",
    *(f"{c.replace('-', '_')}_{x}" for c in CODE_QA_CONDITIONS for x in ("mean", "pairs")),
    "delta", "n", "only_treatment", "only_baseline", "mean_delta", "ci_low", "ci_high", "test", "statistic",
    "p_value", "note",
)
"""The columns of :func:`condition_records` (``conditions.csv`` of ``report --conditions --csv``)."""


def condition_records(rows: Iterable[ConditionRow]) -> list[dict]:
    """One flat record per row and delta (two per :class:`ConditionRow`), keys :data:`CONDITION_FIELDS`: the
    row's means beside each delta, numbers unrounded, ``delta`` named ``code-only - closed-book``."""
    out = []
    for r in rows:
        means = {}
        for m in r.means:
            means[f"{m.condition.replace('-', '_')}_mean"] = m.mean
            means[f"{m.condition.replace('-', '_')}_pairs"] = m.pairs
        for d in r.deltas:
            out.append({"model": r.model, "judge": r.judge, "judge_model": r.judge_model, "task_set": r.task_set,
                        "axis": r.axis, "stratum": r.stratum, **means, "delta": d.name, "n": d.n,
                        "only_treatment": d.only_treatment, "only_baseline": d.only_baseline,
                        "mean_delta": d.mean_delta, "ci_low": d.ci_low, "ci_high": d.ci_high, "test": d.test,
                        "statistic": d.statistic, "p_value": d.p_value, "note": d.note})
    return out


__all__ = [
    "CODE_QA_CONDITIONS",
    "CONDITION_FIELDS",
    "DEFAULT_TEST",
    "DELTAS",
    "MIN_PAIRS_INTERVAL",
    "MIN_PAIRS_TEST",
    "NO_VALUE",
    "PAIRED_TESTS",
    "SATURATION_WARNING",
    "ConditionDelta",
    "ConditionMean",
    "ConditionRow",
    "SaturationRow",
    "condition_delta",
    "condition_deltas",
    "condition_records",
    "has_conditions",
    "paired_test",
    "specificity_saturation",
]
