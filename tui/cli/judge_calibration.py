"""``benchwright calibration``: LLM judges against the humans' scores of the same answers, item by item (issue 20
item 5).

Not ``benchwright calibrate`` (:mod:`.calibration`), the difficulty calibration from direct answers. The method is
:mod:`benchwright.core.judge_calibration`'s (docs/judge-calibration.md); judge, model, annotator and item texts
come from data and are printed literally (``rich.text.Text``, :func:`~.common.shown_name`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from benchwright.core.judge_calibration import (
    DEFAULT_WORST,
    HUMAN_MODES,
    KIND_GROUP,
    MODEL_GROUP,
    RUN_MODES,
    WEIGHTS,
)
from benchwright.core.metrics import AXIS_OPTIONS, STRATA, axis_of_option

from .common import friendly, open_store, out_console, plural, shown_name

if TYPE_CHECKING:
    from rich.console import Console

    from benchwright.core.judge_calibration import Agreement, CalibrationReport, JudgeCalibration

_BY_CHOICES = [MODEL_GROUP, KIND_GROUP, *(AXIS_OPTIONS[a] for a in STRATA)]
_COLUMNS = ("n", "exact", "kappa", "alpha", "judge−human", "95% CI")
_LABEL_CHARS = 60


def _group_of(option: str) -> str:
    return option if option in (MODEL_GROUP, KIND_GROUP) else axis_of_option(option)


def _cells(a: Agreement, reasons: dict[str, None]) -> list[str]:
    """The row's figures; an undefined one is ``n/a`` and its reason is added to ``reasons`` (printed once under
    the table)."""
    cells = [str(a.n)]
    for figure, signed in ((a.exact, False), (a.kappa, False), (a.alpha, False), (a.mean_diff, True)):
        if figure.value is None and figure.reason:
            reasons[figure.reason] = None
            cells.append("n/a")
        else:
            cells.append(figure.text(signed=signed))
    return [*cells, a.ci_text()]


def _print_with_reasons(console: Console, table, reasons: dict[str, None]) -> None:
    from rich.text import Text

    console.print(table)
    if reasons:
        console.print(Text("n/a: " + "; ".join(reasons)))


def _num(x: float, sign: str = "") -> str:
    """A score or difference in points: ``3``, ``3.33`` (a mean over runs, 2 decimals at most), ``+1``."""
    return f"{round(x, 2):{sign}g}"


def _table(title: str, first: tuple[str, ...]):
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for name in first:
        t.add_column(name)
    for name in _COLUMNS:
        t.add_column(name, justify="right")
    return t


def print_judge(console: Console, j: JudgeCalibration, weights: str, runs: str = "mean") -> None:
    """One judge's tables: overall and per group, per checklist item, then the worst disagreements."""
    from rich.table import Table
    from rich.text import Text

    label = shown_name(j.label)
    t = _table(f"{label} against the humans (kappa: {weights} weights; alpha: ordinal; judge−human in points, "
               "positive: the judge over-scores)", ("", "group"))
    reasons: dict[str, None] = {}
    t.add_row("overall", "", *_cells(j.overall, reasons))
    for group, values in j.groups.items():
        for value, a in values.items():
            t.add_row(Text(group), Text(shown_name(value)), *_cells(a, reasons))
    _print_with_reasons(console, t, reasons)
    items = _table(f"{label}: per checklist item (PAIR#ITEM)", ("item", "key point"))
    reasons = {}
    for key, a in j.items.items():
        items.add_row(Text(shown_name(key)), Text(shown_name(j.item_labels.get(key, ""), _LABEL_CHARS)),
                      *_cells(a, reasons))
    _print_with_reasons(console, items, reasons)
    if not j.worst:
        console.print(Text(f"{label}: no disagreement to list"))
        return
    runs_note = "the judge's score is the mean over its runs" if runs == "mean" else "one row per judge run"
    w = Table(title=f"{label}: the largest disagreements (|judge − human|; {runs_note})", title_justify="left")
    for name in ("answer", "item", "key point", "model", "judge", "human", "annotator", "judge−human"):
        w.add_column(name, justify="right" if name in ("judge", "human", "judge−human") else "left")
    for d in j.worst:
        w.add_row(Text(d.answer_id), Text(shown_name(d.item)), Text(shown_name(d.item_label, _LABEL_CHARS)),
                  Text(shown_name(d.answer_model)), _num(d.judge_score), _num(d.human_score),
                  Text(shown_name(d.annotator)), _num(d.diff, "+"))
    console.print(w)


def print_report(console: Console, report: CalibrationReport) -> None:
    """Every judge's tables, after a line with the options; a hint when nothing is paired yet."""
    from rich.text import Text

    o = report.options
    raw = f" ({report.observations} before they apply)" if report.applied != report.observations else ""
    console.print(Text(f"judge calibration against humans: {plural(report.applied, 'paired score')} with runs: "
                       f"{o.runs}, humans: {o.humans}{raw} (docs/judge-calibration.md; `benchwright calibrate` is "
                       "the difficulty calibration)"))
    if report.withheld:
        console.print(Text(f"blind mode: {plural(report.withheld, 'answer')} still to score by you left out of the "
                           "largest-disagreements lists (they count in the figures); score them first"))
    if not report.judges:
        console.print(Text("no human score is paired with an LLM judge's score of the same answer and checklist "
                           "version yet: score answers in the judge inspector (h), or record scores with "
                           "benchwright judgments human ANSWER_ID --score 1=SCORE ... --as NAME"))
        return
    for j in report.judges:
        print_judge(console, j, o.weights, o.runs)


@click.command("calibration")
@click.option("--judge", "judge", metavar="J",
              help="Only this judge: JUDGE:MODEL (checklist:gpt-4o), a judge name (checklist) or a judge model.")
@click.option("--by", "by", type=click.Choice(_BY_CHOICES), default=MODEL_GROUP, show_default=True,
              help="Group by the answer's model, the item's kind or a stratum of the pair.")
@click.option("--weights", type=click.Choice(WEIGHTS), default=WEIGHTS[0], show_default=True,
              help="Weights of Cohen's kappa.")
@click.option("--runs", type=click.Choice(RUN_MODES), default=RUN_MODES[0], show_default=True,
              help="A judge's runs of an answer: their mean (snapped to the nearest allowed score for exact, kappa "
                   "and alpha), or each run on its own.")
@click.option("--humans", type=click.Choice(HUMAN_MODES), default=HUMAN_MODES[0], show_default=True,
              help="Several annotators of an answer: each against the judge, or their consensus (lower median).")
@click.option("--worst", type=click.IntRange(min=0), default=DEFAULT_WORST, show_default=True,
              help="How many of the largest disagreements to list.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--as", "annotator", help="Who looks (blind mode; default: configuration, then the OS user).")
@click.pass_context
@friendly
def calibration(ctx, judge, by, weights, runs, humans, worst, as_json, annotator) -> None:
    """Agreement of each LLM judge with the humans' scores of the same answers, per checklist item and overall.

    Pairs every human judgment (an annotator's checklist scores, human:NAME) with the LLM judges' latest runs of
    the same answer against the same checklist version, and gives per judge, overall, per --by group and per
    checklist item: n, exact agreement, weighted Cohen's kappa, Krippendorff's alpha (ordinal) and the mean
    difference judge − human with its 95% interval (positive: the judge over-scores), then the items where they
    disagree most. Undefined figures print as n/a with the reason. Not `benchwright calibrate`, the difficulty
    calibration from direct answers. See docs/judge-calibration.md. In blind mode the disagreements list leaves
    out the answers assigned to the annotator (--as) that they have not scored yet (it names annotators and
    their scores); the header says how many.
    """
    import json

    from benchwright.core.config import resolve_annotator
    from benchwright.core.judge_calibration import CalibrationOptions

    from ..services.judge_calibration import calibration_report

    options = CalibrationOptions(weights=weights, runs=runs, humans=humans, by=(_group_of(by),), worst=worst)
    with open_store(ctx) as store:
        report = calibration_report(store, options, judge=judge, viewer=resolve_annotator(annotator))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return
    print_report(out_console(), report)
