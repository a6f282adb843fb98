"""The scores a dataset card prints (and its figures draw): per model and judge, the released pairs' answers' score
distribution and mean, overall and per stratum.

Pure arithmetic over :class:`~benchwright.core.metrics.JudgedRun` values (no store): the per-answer score rate is
:func:`~benchwright.core.metrics.answer_scores`' (the mean over an answer's scored runs, SWE-QA-Pro §4.1) and the
means are :func:`~benchwright.core.metrics.summarize`'s (RepoProbe §5.1.3 Overall %, §5.2.2 Table 4 per stratum),
so the card says what ``benchwright report`` says about the same answers. The result is a plain JSON-able dict kept
in the release's manifest (``scores``), so a rebuild prints and draws the recorded numbers.

The papers give no histogram; its bins are ours: ``bins`` equal bins of the score rate over 0-100 %, each closed
on the left, the last also on the right (a perfect answer is in the last bin). Default 10 (:data:`SCORE_BINS`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence

from .judges import is_human_judge
from .metrics import NO_VALUE, STRATA, JudgedRun, answer_scores, summarize

SCORE_BINS = 10
"""Bins of the score distribution (0-10 %, 10-20 %, ... 90-100 %)."""

SCORE_AXES = ("category", "qa_type")
"""The stratification axes the card's per-stratum scores use by default (RepoProbe §5.2.2 Table 4 stratifies by
category; SWE-QA-Pro appendix G by QA type)."""


def _bin(rate: float, bins: int) -> int:
    """The bin of a score rate in 0-1 (the last bin holds 1.0)."""
    return min(bins - 1, max(0, math.floor(round(rate * bins, 9))))  # float error at a bin edge


def _key(row) -> dict:
    return {"model": row.model, "condition": row.condition, "judge": row.judge, "judge_model": row.judge_model}


def release_scores(runs: Iterable[JudgedRun], pair_ids: Collection[str], *, axes: Sequence[str] = SCORE_AXES,
                   bins: int = SCORE_BINS) -> dict | None:
    """The card's scores of the answers to ``pair_ids`` (runs of other pairs are left out, and human judgments:
    their judge model is an annotator's name, which a release pseudonymizes).

    Returns ``{"bins": bins, "groups": [...], "strata": [...]}`` or None when no answer to those pairs has a
    scored run (the card then has no Scores section and no score figures). ``groups`` has one entry per model,
    condition, judge and judge model, in the report's order: ``{"model", "condition", "judge", "judge_model",
    "answers", "runs", "overall_pct", "histogram"}``, ``overall_pct`` the mean score rate in % rounded to 0.1
    (what the card prints) and ``histogram`` the answers per bin (``bins`` counts summing to ``answers``).
    ``strata`` has one ``{"axis", "rows"}`` per axis of ``axes`` (in :data:`~benchwright.core.metrics.STRATA`
    order) on which some pair has a value, ``rows`` the same keys with ``stratum`` (``(none)`` for pairs without a
    value), ``answers`` and ``overall_pct``, by stratum then group.

    Raises:
        ValueError: an unknown axis, or ``bins`` below 1.
    """
    unknown = [a for a in axes if a not in STRATA]
    if unknown:
        raise ValueError(f"unknown stratification axis {unknown[0]!r}; use one of {', '.join(STRATA)}")
    if bins < 1:
        raise ValueError(f"bins must be 1 or more, not {bins}")
    wanted = set(pair_ids)
    runs = [r for r in runs if r.qa_pair_id in wanted and not is_human_judge(r.judge)]
    rows = summarize(runs)
    if not rows:
        return None
    histograms: dict[tuple, list[int]] = {}
    for a in answer_scores(runs):
        k = (a.key.model, a.key.condition, a.key.judge, a.key.judge_model)
        histograms.setdefault(k, [0] * bins)[_bin(a.score_rate, bins)] += 1
    groups = [{**_key(r), "answers": r.answers, "runs": r.runs, "overall_pct": round(r.overall_pct, 1),
               "histogram": histograms[(r.model, r.condition, r.judge, r.judge_model)]} for r in rows]
    order = {(g["model"], g["condition"], g["judge"], g["judge_model"]): i for i, g in enumerate(groups)}
    strata = []
    for axis in (a for a in STRATA if a in axes):
        per = summarize(runs, by=axis)
        if all(r.stratum == NO_VALUE for r in per):  # no pair has a value on this axis: nothing to compare
            continue
        per.sort(key=lambda r: (r.stratum or "", order[(r.model, r.condition, r.judge, r.judge_model)]))
        strata.append({"axis": axis, "rows": [{"stratum": r.stratum, **_key(r), "answers": r.answers,
                                               "overall_pct": round(r.overall_pct, 1)} for r in per]})
    return {"bins": bins, "groups": groups, "strata": strata}


__all__ = ["SCORE_AXES", "SCORE_BINS", "release_scores"]
