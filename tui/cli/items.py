"""``benchwright items``: item statistics of the pairs across a model panel (mean, spread, share passing,
flags, discrimination). The definitions are :mod:`benchwright.core.item_stats`'s; model names and questions come
from data and are printed literally."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.item_stats import ItemThresholds
from benchwright.core.judges import JUDGES
from benchwright.core.vocabulary import CONDITIONS, ITEM_FLAGS

from .common import (
    FractionRange,
    RegistryChoice,
    annotator_option,
    friendly,
    model_list,
    open_store,
    out_console,
    parse_where,
    plural,
    shown_name,
    where_option,
    write_json_file,
)

if TYPE_CHECKING:
    from benchwright.core.item_stats import ItemStat

_DEFAULTS = ItemThresholds()
SHOWN = 5
"""Items listed at each end of the discrimination ranking."""


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _row(item: ItemStat, ordinal: int, question: str) -> dict:
    return {"qa_pair_id": item.qa_pair_id, "position": ordinal, "question": question, "models": item.models,
            "mean": item.mean, "sd": item.sd, "pass_share": item.pass_share,
            "discrimination": item.discrimination, "flags": list(item.flags), "scores": dict(item.scores)}


@click.command("items")
@click.option("--judge", type=RegistryChoice(JUDGES), help="Whose scores (default: the judge with the most judged "
                                                            "answers under the condition).")
@click.option("--judge-model", metavar="MODEL", help="Which judge model's scores (default: the one with the most).")
@click.option("--models", "models", metavar="A,B,C",
              help="The panel, comma-separated, exact names (default: every model with judged answers).")
@click.option("--condition", type=RegistryChoice(CONDITIONS),
              help="Answers under this condition (default: the repository condition with the most judged answers, "
                   "agentic on a tie; else the condition with the most).")
@click.option("--samples", type=click.IntRange(min=1), help="At most K answers per model and pair.")
@click.option("--high", type=FractionRange(), default=_DEFAULTS.high, show_default=True,
              help="saturated: every model's score at or above it.")
@click.option("--low", type=FractionRange(), default=_DEFAULTS.low, show_default=True,
              help="unsolved: every model's score at or below it.")
@click.option("--pass", "pass_bar", type=FractionRange(), default=_DEFAULTS.pass_bar, show_default=True,
              help="The score a model needs to count as passing (the pass share).")
@click.option("--min-discrimination", type=click.FloatRange(-1, 1), default=_DEFAULTS.min_discrimination,
              show_default=True, help="low-discrimination: the discrimination index below it.")
@click.option("--min-models", type=click.IntRange(min=1), default=_DEFAULTS.min_models, show_default=True,
              help="Fewest models with a score for any flag.")
@where_option
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Also write every item's figures as JSON.")
@click.option("--dry-run", is_flag=True, help="Compute and print, store nothing.")
@annotator_option("Who runs it (recorded with the run).")
@click.pass_context
@friendly
def items(ctx, judge, judge_model, models, condition, samples, high, low, pass_bar, min_discrimination, min_models,
          where, json_file, dry_run, annotator) -> None:
    """Item statistics across a model panel: mean, spread, share passing, flags, discrimination.

    Per pair, each model's score is the mean judged score rate (0-1) of its answers under one condition; the
    pair gets the mean, the sample sd across models, the share of models at or above --pass, and the
    discrimination index: the correlation across models between their scores on this pair and their mean score
    on every other pair (None with fewer than 3 models). Flags: saturated, unsolved, closed-book-solvable (the
    latest calibration says too easy), low-discrimination. The run and its thresholds are stored; --where
    item=FLAG|unrated selects the pairs. See docs/data-methods.md, "Item statistics".
    """
    from rich.table import Table
    from rich.text import Text

    from ..services.calibration import run_item_stats

    by = resolve_annotator(annotator)
    thresholds = ItemThresholds(high=high, low=low, pass_bar=pass_bar, min_discrimination=min_discrimination,
                                min_models=min_models)
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets()) if where else None
        outcome = run_item_stats(store, by=by, models=model_list(models), judge=judge, judge_model=judge_model,
                                 condition=condition, samples=samples, thresholds=thresholds, flt=flt,
                                 where=where, dry_run=dry_run,
                                 min_models_given=ctx.get_parameter_source("min_models")
                                 is not click.core.ParameterSource.DEFAULT)
        ids = [i.qa_pair_id for i in outcome.result.items]
        ordinals = {pid: store.ordinal_of(pid) for pid in ids}
        questions = {pid: store.get_pair(pid).question for pid in ids} if json_file else {}
    out = out_console()
    p, result = outcome.panel, outcome.result
    for note in p.notes:
        out.print(Text(f"note: {shown_name(note, 200)}"))
    heading = "dry run (nothing stored)" if outcome.run_id is None else f"items run {outcome.run_id}"
    out.print(Text(f"{heading}: {plural(len(result.items), 'pair')} over {plural(len(p.models), 'model')} "
                   f"({', '.join(shown_name(m) for m in p.models)}), {','.join(p.conditions)} answers judged by "
                   f"{p.judge} / {shown_name(p.judge_model)}; bars: high {high:g}, low {low:g}, pass {pass_bar:g}, "
                   f"discrimination {min_discrimination:g}, at least {min_models} models"))
    counts = result.counts
    out.print(Text("flags: " + " · ".join(f"{f} {counts[f]}" for f in ITEM_FLAGS)
                   + " (--where item=FLAG)"))
    ranked = result.ranked()
    if not ranked:
        out.print(Text("no pair has a discrimination index (it needs 3 or more models and some spread)"))
    else:
        t = Table(title="Discrimination (corrected item-total correlation across models): the most and the least "
                        "discriminating pairs", title_justify="left")
        t.add_column("pair")
        for name in ("index", "mean", "sd", "pass share", "models"):
            t.add_column(name, justify="right")
        t.add_column("flags")
        shown = ranked if len(ranked) <= 2 * SHOWN else [*ranked[:SHOWN], None, *ranked[-SHOWN:]]
        for i in shown:
            if i is None:
                t.add_row("…", "", "", "", "", "", "")
                continue
            t.add_row(f"#{ordinals[i.qa_pair_id]}", _num(i.discrimination), _num(i.mean), _num(i.sd),
                      _num(i.pass_share), str(i.models), ", ".join(i.flags))
        out.print(t)
    if json_file:
        write_json_file(json_file, {
            "run_id": outcome.run_id, "judge": p.judge, "judge_model": p.judge_model,
            "condition": ",".join(p.conditions), "models": list(p.models), "thresholds": thresholds.to_dict(),
            "counts": counts,
            "items": [_row(i, ordinals[i.qa_pair_id], questions[i.qa_pair_id]) for i in result.items]})
