"""``benchwright calibrate``: difficulty calibration from direct answers (SWE-QA-Pro §2.3), and ``calibrate show``.

The method is :mod:`benchwright.core.calibration`'s; model names come from data, so every one is printed
literally (``rich.text.Text``, :func:`~benchwright.core.text.printable`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from benchwright.core.calibration import CalibrationResult, z_histogram
from benchwright.core.config import resolve_annotator
from benchwright.core.judges import JUDGES
from benchwright.core.vocabulary import (
    CALIBRATION_RULES,
    DEFAULT_CALIBRATION_RULE,
    DEFAULT_CALIBRATION_THRESHOLD,
    DIRECT_CONDITIONS,
)

from .common import (
    RegistryChoice,
    annotator_option,
    friendly,
    histogram_lines,
    model_list,
    open_store,
    out_console,
    parse_where,
    plural,
    shown_name,
    where_option,
)

if TYPE_CHECKING:
    from rich.console import Console


def _num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def print_calibration(console: Console, result: CalibrationResult, *, heading: str, judge: str,
                      judge_model: str | None, condition: str) -> None:
    """The summary of a calibration: parameters, per model mean / sd / pairs, the distribution of mean z and
    the decisions."""
    from rich.table import Table
    from rich.text import Text

    console.print(Text(f"{heading}: {plural(len(result.pairs), 'pair')}, rule {result.rule}, threshold "
                       f"{result.threshold:g}, at least {result.min_models} of {plural(len(result.models), 'model')} "
                       f"with a z-score; {condition} answers judged by {judge} / {shown_name(judge_model or '-')}"
                       + (f", at most {plural(result.samples, 'sample')} per model" if result.samples else "")))
    t = Table(title="s_m(q): mean score rate (0-1) of the model's direct answers; population sd over its pairs",
              title_justify="left")
    t.add_column("model")
    for name in ("pairs", "mean", "sd"):
        t.add_column(name, justify="right")
    t.add_column("z-scores")
    for m in result.models:
        st = result.model_stats.get(m)
        if st is None:
            continue
        usable = "yes" if st.usable else "none (sd 0 or under 2 pairs: its pairs lack this model)"
        t.add_row(Text(shown_name(m)), str(st.n), _num(st.mean), _num(st.sd), usable)
    console.print(t)
    decided = [p for p in result.pairs if p.decision != "insufficient"]
    shown = [("mean z over the models", [p.mean_z for p in decided])]
    if result.rule == "all-z":  # the statistic the rule decides on: every model's z >= threshold iff the minimum is
        shown.append(("min z over the models (all-z decides on it)", [p.min_z for p in decided]))
    for title, values in shown:
        for line in histogram_lines(z_histogram(values), f"{title}, {plural(len(decided), 'decided pair')}:"):
            console.print(Text(line))
    c = result.counts
    console.print(Text(f"too easy {c['too-easy']} · kept {c['kept']} · insufficient {c['insufficient']}"
                       + (" (fewer models with a z-score than required: --min-models)" if c["insufficient"] else "")))


@click.group("calibrate", invoke_without_command=True)
@click.option("--models", "models", metavar="A,B,C",
              help="The panel, comma-separated, exact names (default: every model with judged direct answers).")
@click.option("--judge", type=RegistryChoice(JUDGES),
              help="Whose scores (default: the judge with the most judged direct answers).")
@click.option("--judge-model", metavar="MODEL", help="Which judge model's scores (default: the one with the most).")
@click.option("--condition", type=click.Choice(DIRECT_CONDITIONS),
              help="Only direct answers under this condition (default: every direct condition).")
@click.option("--samples", type=click.IntRange(min=1), help="At most K answers per model and pair (lowest sample "
                                                             "index first; default: all).")
@click.option("--rule", type=click.Choice(CALIBRATION_RULES), default=DEFAULT_CALIBRATION_RULE, show_default=True,
              help="all-z: every model's z reaches the threshold; mean-z: the mean of the models' z does.")
@click.option("--threshold", type=float, default=DEFAULT_CALIBRATION_THRESHOLD, show_default=True,
              help="z (standard deviations above each model's mean) at or above which a pair is too easy.")
@click.option("--min-models", type=click.IntRange(min=1),
              help="Fewest models with a z-score for a decision (default: every model of the panel).")
@where_option
@click.option("--dry-run", is_flag=True, help="Compute and print, store nothing.")
@click.option("--show", is_flag=True, help="Print the latest stored run again (the same as `calibrate show`).")
@annotator_option("Who runs it (recorded with the run).")
@click.pass_context
@friendly
def calibrate(ctx, models, judge, judge_model, condition, samples, rule, threshold, min_models, where, dry_run,
              show, annotator) -> None:
    """Difficulty calibration from direct answers (SWE-QA-Pro §2.3): z-scores per model, too-easy pairs.

    Per model m, s_m(q) is the mean judged score rate of its direct answers (no repository) to pair q; z_m(q) =
    (s_m(q) - mean_m) / sd_m over the pairs m answered. A pair is too easy when every model's z (--rule
    all-z, the default) or the mean z over the models (mean-z) is at least --threshold; with z-scores from fewer than
    --min-models models it is insufficient. Values, parameters and decisions are stored per pair:
    --where difficulty=too-easy|kept|insufficient|uncalibrated selects them, and `sample` leaves too-easy pairs
    out. See docs/data-methods.md, "Difficulty calibration". Not `benchwright calibration`, which compares the LLM
    judges with human scores (docs/judge-calibration.md).
    """
    if ctx.invoked_subcommand is not None:
        return
    from rich.text import Text

    if show:
        ctx.invoke(calibrate_show)
        return
    from ..services.calibration import run_calibration

    by = resolve_annotator(annotator)
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets()) if where else None
        outcome = run_calibration(store, by=by, models=model_list(models), judge=judge, judge_model=judge_model,
                                  condition=condition, samples=samples, rule=rule, threshold=threshold,
                                  min_models=min_models, flt=flt, where=where, dry_run=dry_run)
    out = out_console()
    for note in outcome.panel.notes:
        out.print(Text(f"note: {shown_name(note, 200)}"))
    p = outcome.panel
    heading = "dry run (nothing stored)" if outcome.run_id is None else f"calibration run {outcome.run_id}"
    print_calibration(out, outcome.result, heading=heading, judge=p.judge, judge_model=p.judge_model,
                      condition=",".join(p.conditions))
    left = outcome.pairs_considered - len(outcome.result.pairs)
    if left:
        out.print(Text(f"{plural(left, 'pair')} without a judged answer of the panel: not calibrated "
                       "(--where difficulty=uncalibrated)"))
    if outcome.run_id is not None and outcome.result.counts["too-easy"]:
        out.print(Text("next: --where difficulty=too-easy selects the too-easy pairs (e.g. benchwright items "
                       "--where difficulty=kept); benchwright sample leaves them out"))


@calibrate.command("show")
@click.pass_context
@friendly
def calibrate_show(ctx) -> None:
    """Print the latest stored calibration run again."""
    from rich.text import Text

    with open_store(ctx) as store:
        run = store.latest_calibration()
    out = out_console()
    if run is None:
        out.print(Text("no calibration run yet: run benchwright calibrate --models A,B,C --judge JUDGE"))
        return
    print_calibration(out, run.result, heading=f"calibration run {run.id} ({run.created_at[:19]}, by "
                                                f"{shown_name(run.created_by)})",
                      judge=run.judge, judge_model=run.judge_model, condition=run.condition)
