"""Difficulty calibration (SWE-QA-Pro §2.3) and item statistics over a model panel, for the front ends: read the
judged answers from the store, choose the panel (:func:`benchwright.core.calibration.choose_panel`), compute in
core, store the run. ``benchwright calibrate`` and ``benchwright items`` call these."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchwright.core.calibration import CalibrationResult, Panel, calibrate, choose_panel, short_name
from benchwright.core.errors import BenchwrightError
from benchwright.core.item_stats import ItemStatsResult, ItemThresholds, default_condition, item_stats
from benchwright.core.judges import JUDGES
from benchwright.core.vocabulary import CONDITIONS, DIRECT_CONDITIONS
from benchwright.db import QueueFilter, Store


@dataclass(frozen=True)
class CalibrationOutcome:
    """A calibration computed (and stored unless a dry run): the panel, the result, the run id (None for a dry
    run) and the pairs the ``--where`` let through."""

    panel: Panel
    result: CalibrationResult
    run_id: int | None
    pairs_considered: int


@dataclass(frozen=True)
class ItemStatsOutcome:
    """An ``items`` run computed and stored: the panel (its one condition), the result, the run id."""

    panel: Panel
    result: ItemStatsResult
    run_id: int | None
    pairs_considered: int


def _pairs(store: Store, annotator: str, flt: QueueFilter | None) -> list[str]:
    """The pairs of the run: every pair, or those ``flt`` lets through (refused when none)."""
    ids = store.filtered_pair_ids(annotator, flt or QueueFilter())
    if flt is not None and not ids:
        raise BenchwrightError("--where matches no pair; nothing to compute")
    return ids


def _among(flt: QueueFilter | None, pair_ids: Sequence[str]) -> str:
    return "" if flt is None else f" to the {len(pair_ids)} pair{'' if len(pair_ids) == 1 else 's'} --where selects"


def _unjudged_hint(store: Store) -> str:
    answered = store.answer_models()
    if not answered:
        return ("\nNo answers are stored: write direct answers with benchwright answers generate --model M, or "
                "import them with benchwright answers import FILE --model M --condition closed-book")
    lines = "\n".join(f"  {short_name(m)} ({c}): {n} answer{'' if n == 1 else 's'}" for m, c, n in answered[:12])
    return f"\nAnswers stored (judged or not; benchwright answers list):\n{lines}"


def run_calibration(store: Store, *, by: str, models: Sequence[str] | None = None, judge: str | None = None,
                    judge_model: str | None = None, condition: str | None = None, samples: int | None = None,
                    rule: str, threshold: float, min_models: int | None = None, flt: QueueFilter | None = None,
                    where: Sequence[str] = (), dry_run: bool = False) -> CalibrationOutcome:
    """Calibrate the pairs ``flt`` lets through (all by default) from the direct answers (``condition``, or every
    direct condition pooled) of ``models`` judged by ``judge`` / ``judge_model`` (defaults:
    :func:`~benchwright.core.calibration.choose_panel`), and store the run unless ``dry_run``. Only pairs with
    at least one judged answer of the panel are calibrated (the others stay ``uncalibrated``), and each model is
    standardised over the pairs of the run (``flt``'s), not the whole project.

    Raises:
        BenchwrightError: a non-direct ``condition``; no judged answers for the models or judge (the message
            lists what exists); invalid parameters (:func:`benchwright.core.calibration.check_parameters`).
    """
    if condition is not None and condition not in DIRECT_CONDITIONS:
        raise BenchwrightError(f"calibration uses direct answers: --condition must be one of "
                               f"{', '.join(DIRECT_CONDITIONS)}, not {condition!r}")
    pair_ids = _pairs(store, by, flt)
    wanted = set(pair_ids)
    everything = store.scored_answers()
    conditions = (condition,) if condition else tuple(DIRECT_CONDITIONS)
    try:
        panel = choose_panel([a for a in everything if a.qa_pair_id in wanted] if flt else everything,
                             conditions=conditions, judge=judge, judge_model=judge_model, models=models,
                             judge_order=JUDGES, what="judged direct answers" + _among(flt, pair_ids))
    except BenchwrightError as e:
        raise BenchwrightError(f"{e}{_unjudged_hint(store)}") from None
    answers = [a for a in panel.answers(everything) if a.qa_pair_id in wanted]
    answered = {a.qa_pair_id for a in answers}
    result = calibrate(answers, panel.models, rule=rule, threshold=threshold, min_models=min_models,
                       samples=samples, pair_ids=[p for p in pair_ids if p in answered])
    run_id = None
    if not dry_run:
        run_id = store.save_calibration(
            result, judge=panel.judge, judge_model=panel.judge_model, condition=",".join(panel.conditions),
            params={"where": list(where), "conditions": list(panel.conditions)}, created_by=by)
    return CalibrationOutcome(panel, result, run_id, len(pair_ids))


def run_item_stats(store: Store, *, by: str, models: Sequence[str] | None = None, judge: str | None = None,
                   judge_model: str | None = None, condition: str | None = None, samples: int | None = None,
                   thresholds: ItemThresholds | None = None, flt: QueueFilter | None = None,
                   where: Sequence[str] = (), dry_run: bool = False,
                   min_models_given: bool = False) -> ItemStatsOutcome:
    """Item statistics of the pairs ``flt`` lets through over ``models``' answers under one ``condition``
    (default: :func:`~benchwright.core.item_stats.default_condition`) judged by ``judge`` / ``judge_model``, the
    ``closed-book-solvable`` flag from each pair's latest calibration; stored unless ``dry_run``.

    ``min_models_given``: the user chose ``thresholds.min_models`` (``--min-models``); more than the panel's models
    is then refused (with the default, a one-model panel simply flags nothing).

    Raises:
        BenchwrightError: an unknown condition, no judged answers for the panel (the message lists what exists),
            invalid thresholds, a chosen minimum of models larger than the panel.
    """
    if condition is not None and condition not in CONDITIONS:
        raise BenchwrightError(f"unknown condition {condition!r}; use one of {', '.join(CONDITIONS)}")
    pair_ids = _pairs(store, by, flt)
    wanted = set(pair_ids)
    everything = store.scored_answers()
    pool = [a for a in everything if a.qa_pair_id in wanted] if flt else everything
    filtered = [a for a in pool if (judge is None or a.judge == judge)
                and (judge_model is None or a.judge_model == judge_model)
                and (models is None or a.model in set(models))]
    chosen = condition or default_condition(filtered) or default_condition(pool)
    try:
        panel = choose_panel(pool, conditions=(chosen,) if chosen else tuple(CONDITIONS), judge=judge,
                             judge_model=judge_model, models=models, judge_order=JUDGES,
                             what="judged answers" + _among(flt, pair_ids))
    except BenchwrightError as e:
        raise BenchwrightError(f"{e}{_unjudged_hint(store)}") from None
    if condition is None:
        panel = Panel(panel.judge, panel.judge_model, panel.conditions, panel.models,
                      (*panel.notes, f"condition {chosen} (--condition)"))
    if min_models_given and thresholds is not None and thresholds.min_models > len(panel.models):
        raise BenchwrightError(f"--min-models {thresholds.min_models} is more than the {len(panel.models)} models of "
                               f"the panel: no pair could have that many (use at most {len(panel.models)})")
    answers = [a for a in panel.answers(everything) if a.qa_pair_id in wanted]
    answered = {a.qa_pair_id for a in answers}
    decisions = store.difficulty_decisions(answered)
    result = item_stats(answers, panel.models, thresholds=thresholds or ItemThresholds(), samples=samples,
                        too_easy=[p for p, d in decisions.items() if d == "too-easy"],
                        pair_ids=[p for p in pair_ids if p in answered])
    run_id = None
    if not dry_run:
        run_id = store.save_item_stats(result, judge=panel.judge, judge_model=panel.judge_model,
                                       condition=chosen, created_by=by,
                                       params={"where": list(where), "samples": samples})
    return ItemStatsOutcome(panel, result, run_id, len(pair_ids))


def release_difficulty(store: Store, pair_ids: Sequence[str]) -> dict | None:
    """The dataset card's difficulty figures of the released ``pair_ids`` (the manifest's ``difficulty``):
    ``{"calibration": {models, judge, judge_model, condition, rule, threshold (of the latest run), counts per
    decision and ``uncalibrated``}, "items": {models, judge, judge_model, condition, thresholds, counts per flag
    and ``unrated``}}``, each key present only when such a run exists; None when neither does (a release
    without runs keeps its bytes)."""
    out: dict = {}
    counts = store.difficulty_counts(pair_ids)
    cal = store.latest_calibration() if counts is not None else None
    if cal is not None:
        out["calibration"] = {"models": list(cal.result.models), "judge": cal.judge, "judge_model": cal.judge_model,
                              "condition": cal.condition, "rule": cal.result.rule,
                              "threshold": cal.result.threshold, "counts": counts}
    flags = store.item_flag_counts(pair_ids)
    run = store.latest_item_stats() if flags is not None else None
    if run is not None:
        bars = run.result.thresholds.to_dict()
        out["items"] = {"models": list(run.result.models), "judge": run.judge, "judge_model": run.judge_model,
                        "condition": run.condition, "thresholds": bars, "counts": flags}
    return out or None
