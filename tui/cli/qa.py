"""``benchwright qa-report``: the human QA pass in numbers (RepoProbe §3.2 "Quality Assurance")."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from benchwright.core.errors import BenchwrightError
from benchwright.core.qa_report import QAReport, Tally, qa_report
from benchwright.core.review import CRITERIA, CRITERION_LABELS
from benchwright.core.text import plural, printable
from benchwright.core.vocabulary import REJECT_REASON_NAMES

from .common import friendly, open_store, out_console, shown_name

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

CSV_FILES = ("summary.csv", "criteria.csv", "reasons.csv")
"""What ``qa-report --csv DIR`` writes: one row per scope; per scope, criterion and verdict; per scope and reason."""


def _cell(value) -> Text:
    """A table cell shown literally (names come from data: never read as markup), a long name cut."""
    from rich.text import Text

    return Text("—" if value is None else shown_name(str(value)))


def _rate(t: Tally) -> str:
    return "—" if t.discard_rate is None else f"{t.discard_rate:.1%}"


def _reason_name(reason: str) -> str:
    return REJECT_REASON_NAMES.get(reason, reason)


def _summary_table(title: str, first: str, rows: list[tuple[str, Tally]]) -> Table:
    from rich.table import Table

    table = Table(title=title)
    for column in (first, "pairs", "accepted", "rejected", "to revise", "undecided", "discard rate"):
        table.add_column(column, justify="left" if column == first else "right")
    for name, t in rows:
        table.add_row(_cell(name or "(none)"), *(_cell(v) for v in (t.units, t.accepted, t.rejected, t.to_revise,
                                                                     t.undecided)), _cell(_rate(t)))
    return table


def _sample_line(params: dict | None) -> str:
    if not params:
        return "QA sample: no assignment recorded (the sample is the assigned pairs; see benchwright assign --sample)"
    sample = params.get("sample")
    who = ", ".join(shown_name(a) for a in params.get("annotators", []))
    if not sample:
        return (f"QA sample: every pair assigned ({plural(int(params.get('pairs') or 0), 'pair')}; {who}; overlap "
                f"{params.get('overlap')})")
    size = f"--sample {sample['size']}" if sample.get("size") is not None else f"--fraction {sample.get('fraction')}"
    strata = f", stratified by {sample['stratify_by']}" if sample.get("stratify_by") else ""
    where = f", where {' '.join(sample['where'])}" if sample.get("where") else ""
    return (f"QA sample: {sample['sampled']} of {plural(int(sample['pool']), 'pair')} ({size}{strata}{where}; seed "
            f"{params.get('seed')}; {who}; overlap {params.get('overlap')})")


def _print(report: QAReport, params: dict | None) -> None:
    from rich.table import Table
    from rich.text import Text

    console = out_console()
    console.print(Text(printable(_sample_line(params))))
    if not report.overall.units:
        console.print(Text("no pair is assigned or reviewed yet: nothing to report"))
        return
    console.print(_summary_table("QA pass (final decisions; all: the QA sample and every reviewed pair)", "scope",
                                 [("all", report.overall), ("QA sample", report.sample)]))
    console.print(_summary_table("By repository", "repository", list(report.by_repository.items())))
    console.print(_summary_table("By annotator (their own reviews)", "annotator", list(report.by_annotator.items())))
    reasons = Table(title="Rejected pairs by reason (a pair counts under each reason its rejects give)")
    annotators = list(report.by_annotator)
    for column in ("reason", "all", "QA sample", *annotators):
        reasons.add_column(Text(shown_name(column)), justify="left" if column == "reason" else "right")
    for r in report.reasons():
        reasons.add_row(_cell(_reason_name(r)), _cell(report.overall.reasons.get(r, 0)),
                        _cell(report.sample.reasons.get(r, 0)),
                        *(_cell(report.by_annotator[a].reasons.get(r, 0)) for a in annotators))
    console.print(reasons)
    criteria = Table(title="Criteria over every review (pass / fail / unset; in accepts and in rejects)")
    for column in ("criterion", "pass", "fail", "unset", "pass in accepts", "fail in rejects"):
        criteria.add_column(column, justify="left" if column == "criterion" else "right")
    for c in CRITERIA:
        counts = report.overall.criteria[c]
        criteria.add_row(_cell(CRITERION_LABELS[c]), *(_cell(sum(counts[v].values())) for v in ("pass", "fail", "unset")),
                         _cell(counts["pass"]["accept"]), _cell(counts["fail"]["reject"]))
    console.print(criteria)
    if report.overall.pending:
        pending = "; ".join(f"{why} {n}" for why, n in sorted(report.overall.pending.items()))
        console.print(Text(f"undecided pairs: {pending}"))


def _write_csv(folder: Path, report: QAReport) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in zip(CSV_FILES, (report.summary_rows(), report.criterion_rows(), report.reason_rows()),
                          strict=True):
        with open(folder / name, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["scope", "name"])
            writer.writeheader()
            writer.writerows(rows)


@click.command("qa-report")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the numbers as JSON to this file ('-': standard output, instead of the tables).")
@click.option("--csv", "csv_dir", type=click.Path(file_okay=False, path_type=Path),
              help=f"Also write {', '.join(CSV_FILES)} into this folder.")
@click.pass_context
@friendly
def qa_report_command(ctx, json_file, csv_dir) -> None:
    """The human QA pass (RepoProbe §3.2): accepted and rejected pairs, the discard rate (rejected / decided),
    rejects by reason, criteria pass / fail, by repository and by annotator.

    Counts every pair in the QA sample (the assigned pairs; benchwright assign --sample) and every reviewed
    pair. A pair's outcome is its final decision: every assignee's review agreeing, or an adjudication;
    pairs without one are undecided, with why. An annotator's outcome is their own review.
    """
    with open_store(ctx) as store:
        report = qa_report(store.qa_items())
        params = store.assignment_parameters()
    data = {"assignment": params, **report.as_dict()}
    if json_file is not None:
        text = json.dumps(data, indent=2, ensure_ascii=False)
        if str(json_file) == "-":
            click.echo(text)
        else:
            try:
                json_file.write_text(text + "\n", encoding="utf-8")
            except OSError as e:
                raise BenchwrightError(f"{json_file}: cannot write the JSON ({e.strerror})") from None
    if csv_dir is not None:
        try:
            _write_csv(csv_dir, report)
        except OSError as e:
            raise BenchwrightError(f"{csv_dir}: cannot write the CSV files ({e.strerror})") from None
    if str(json_file) != "-":
        _print(report, params)
        written = [str(p) for p in (json_file, csv_dir) if p is not None]
        if written:
            click.echo(printable(f"written: {', '.join(written)}"))
