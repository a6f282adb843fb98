"""``benchwright probes import|new|list|run|signoff|import-results|report|attempt``: NITR probes, model results on
NITR cases (NITR Table 3) and model attempts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError
from benchwright.core.probes.results import REGIMES, ResultsReport, Tally
from benchwright.core.text import printable

from .common import (
    exit_unfinished,
    friendly,
    open_store,
    out_console,
    plural,
    write_csv_tables,
    write_json_file,
)

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text


@click.group()
def probes() -> None:
    """NITR probes: import, scaffold, run against variants, sign the oracle off."""


@probes.command("import")
@click.argument("case_dir", type=click.Path(file_okay=False))
@click.argument("evaluator_dir", type=click.Path(file_okay=False), required=False)
@click.option("--case", "case_ids", multiple=True,
              help="With a NITR checkout: a case to import (folder name or number, e.g. 021; repeatable; default all).")
@click.option("--spec", type=click.Path(dir_okay=False), help="SPEC.md (default: CASE_DIR/SPEC.md).")
@click.option("--variants", "variants_dir", type=click.Path(file_okay=False),
              help="Variants folder (default: CASE_DIR/variants, else EVALUATOR_DIR/variants; with a NITR checkout: "
                   "a <case id>/ folder per case, or one case's variants with --case).")
@click.option("--skip-invalid", is_flag=True,
              help="With a NITR checkout: import the cases that read and list every case left out, with its problems.")
@click.option("--as", "annotator", help="Who imports.")
@click.pass_context
@friendly
def probe_import(ctx, case_dir, evaluator_dir, case_ids, spec, variants_dir, skip_invalid, annotator) -> None:
    """Import a probe: CASE_DIR (starter code, TASK*.md, SPEC.md) and EVALUATOR_DIR (pipeline.json); or, with one
    folder, a NITR checkout (cases/, evaluator/, docs/<id>/SPEC.md): every case, or those of --case."""
    from benchwright.core.probes.nitr import is_nitr_checkout

    from ..services.probes import import_nitr_checkout, import_probe

    if evaluator_dir is None:
        if not is_nitr_checkout(case_dir):
            raise BenchwrightError(f"{case_dir}: not a NITR checkout (cases/<id>/ and evaluator/<id>/); to import "
                                   "one probe give its case and evaluator folders: probes import CASE_DIR EVALUATOR_DIR")
        if spec:
            raise BenchwrightError("--spec is for one probe (CASE_DIR EVALUATOR_DIR); a checkout's are docs/<id>/SPEC.md")
        with open_store(ctx) as store:
            imported, skipped = import_nitr_checkout(store, Path(case_dir), case_ids, by=resolve_annotator(annotator),
                                                     variants_dir=Path(variants_dir) if variants_dir else None,
                                                     skip_invalid=skip_invalid)
        with open_store(ctx) as store:
            counts = {item.id: len(store.probe_record(item.id)["variants"]) for item in imported}
        for item in imported:
            click.echo(f"{item.id}\t{item.granularity}\t{item.primary_dimension}\t"
                       f"{plural(len(item.pipeline.modules), 'module')}\t{plural(counts[item.id], 'variant')}")
        click.echo(f"imported {plural(len(imported), 'NITR case')} from {printable(case_dir)} (nothing written there)")
        for case_id, problems in skipped.items():
            click.echo(f"skipped {printable(case_id)}:", err=True)
            for problem in problems:
                click.echo(f"  {printable(str(problem))}", err=True)
        if skipped:
            raise SystemExit(1)
        return
    if case_ids or skip_invalid:
        raise BenchwrightError("--case and --skip-invalid are for a NITR checkout (probes import NITR_ROOT --case ID)")
    with open_store(ctx) as store:
        probe_obj, variants = import_probe(store, Path(case_dir), Path(evaluator_dir), spec=spec,
                                           variants_dir=variants_dir, by=resolve_annotator(annotator))
    click.echo(f"imported probe {probe_obj.id} ({probe_obj.granularity}, {probe_obj.primary_dimension}) with "
               f"{plural(len(probe_obj.pipeline.modules), 'module')} and {plural(len(variants), 'variant')}")


@probes.command("new")
@click.argument("dest", type=click.Path(file_okay=False))
@click.option("--id", "probe_id", required=True, help="The new probe's id.")
@friendly
def probe_new(dest, probe_id) -> None:
    """Scaffold a small working C++ probe (CMake, test, evaluator, variants) to edit."""
    from benchwright.core.probes import scaffold_probe

    if Path(dest).exists() and any(Path(dest).iterdir()):
        raise BenchwrightError(f"{dest}: not empty; choose a new folder")
    try:
        scaffold_probe(Path(dest), probe_id)
    except OSError as e:
        raise BenchwrightError(f"{dest}: cannot write the probe ({e.strerror or e})") from None
    click.echo(f"wrote probe {probe_id} to {dest}; import it with: benchwright probes import {dest}/case {dest}/evaluator")


@probes.command("list")
@click.pass_context
@friendly
def probe_list(ctx) -> None:
    """List probes with their validation state."""
    with open_store(ctx) as store:
        for pid in store.probe_ids():
            rec = store.probe_record(pid)
            click.echo(f"{pid}\t{rec['primary_dimension']}\t{len(rec['variants'])} variants\t{store.validation_state(pid)}"
                       f"\t{printable(rec['title'])}")


@probes.command("run")
@click.argument("probe_id")
@click.option("--variant", "variant_names", multiple=True, help="Variant name (repeatable; default: all).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Run each variant N times; differing verdicts mark the oracle flaky (not separating).")
@click.option("--min-variants", type=click.IntRange(min=1), default=None,
              help="Intended and shortcut variants needed for stable separation (default: the project's, "
                   "see probes min-variants; 2 per family).")
@click.option("--submission", type=click.Path(file_okay=False, exists=True),
              help="Evaluate this folder (a whole case tree) in place of the case; nothing is stored.")
@click.option("--logs", is_flag=True, help="Print each module's log.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Set a pipeline variable for this run, as NITR's --set (e.g. enable_hidden_evaluator=true); "
                   "such runs are not stored.")
@click.option("--timeout", "timeout_s", type=float, default=300.0, show_default=True, help="Seconds per command.")
@click.option("--as", "annotator", help="Who runs.")
@click.pass_context
@friendly
def probe_run(ctx, probe_id, variant_names, repeat, min_variants, submission, logs, settings, timeout_s,
              annotator) -> None:
    """Run the probe's oracle against its variants (fresh workspace each) and store the runs with logs.

    Each run's line shows pass, fail (caught by the oracle), failed to build (caught by the compiler) or error
    ("cannot run here: missing X" when this machine lacks a tool), and the tests each unit_test module ran; the
    shortcuts' lines say what caught each one. With --submission, the oracle judges that folder instead."""
    from benchwright.core.probes import ExpectationCheck, separation

    words = {ExpectationCheck.AS_EXPECTED: "as expected", ExpectationCheck.MISMATCH: "UNEXPECTED",
             ExpectationCheck.COMPILER_CAUGHT: "the compiler caught it, not the oracle"}

    from ..services.probes import run_probe_submission, run_probe_variants

    say = lambda m: click.echo(f"  {printable(m)}")  # noqa: E731
    pairs = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise BenchwrightError(f"--set {item!r}: expected KEY=VALUE")
        pairs[key.strip()] = value
    if submission is not None:
        if variant_names or repeat != 1:
            raise BenchwrightError("--submission evaluates one folder; leave out --variant and --repeat")
        with open_store(ctx) as store:
            run = run_probe_submission(store, probe_id, Path(submission), timeout_s=timeout_s, progress=say,
                                       settings=pairs)
        _echo_run(run, "(submission)", "", logs)
        if run.outcome == "error":
            raise SystemExit(1)
        return
    with open_store(ctx) as store:
        runs = run_probe_variants(store, probe_id, list(variant_names) or None, timeout_s=timeout_s,
                                  by=resolve_annotator(annotator), progress=say, repeat=repeat, settings=pairs)
        state = store.validation_state(probe_id)
        min_variants = min_variants or store.min_variants_per_family()
    for r in runs:
        _echo_run(r, r.variant.name if r.variant else "(starter)", words.get(r.expectation_check, ""), logs)
    verdict = separation(runs, min_per_family=min_variants)
    if verdict.shortcut_notes:
        click.echo("shortcuts:")
        for note in verdict.shortcut_notes:
            click.echo(f"  {printable(note)}")
    for note in verdict.notes:
        click.echo(f"note: {printable(note)}")
    click.echo(f"separation: {'stably separating' if verdict.separating else 'not separating'}"
               + (f" (flaky: {', '.join(verdict.flaky)})" if verdict.flaky else ""))
    click.echo(f"validation state: {state}" + (" (runs with --set are not stored)" if pairs else ""))


def _echo_run(r, name: str, verdict: str, logs: bool) -> None:
    """One run: its line, then a line per module with tests or failing (and its findings); every log with ``logs``."""
    click.echo(f"{printable(name)}\t{r.verdict}\texpected {r.expected or '-'}\t{verdict}"
               + (f"\t{printable(r.error)}" if r.error else ""))
    for m in r.modules:
        if m.passed and m.tests is not None:
            click.echo(f"    {printable(m.name)} ({m.module_name}): {m.tests.text()}")
        if not m.passed:
            click.echo(f"    {printable(m.name)} ({m.module_name}): {printable(m.reason or '')}")
            for hit in m.matches[:5]:
                where = f"{hit.relative_path}:{hit.line}" if hit.line else str(hit.relative_path)
                click.echo(f"      {printable(hit.rule_id)}: {printable(hit.message or where)}")
        elif logs:
            click.echo(f"    {printable(m.name)} ({m.module_name}): {printable(m.reason or '')}")
        if logs and m.log:
            click.echo("\n".join(f"      | {printable(line)}" for line in m.log.splitlines()))
    if r.apply_error:
        click.echo(f"    not applied: {printable(r.apply_error)}")
    if r.sandbox.startswith("not sandboxed"):
        click.echo(f"    {printable(r.sandbox)}")


@probes.command("min-variants")
@click.argument("count", type=click.IntRange(min=1), required=False)
@click.option("--as", "annotator", help="Who changes it.")
@click.pass_context
@friendly
def probe_min_variants(ctx, count, annotator) -> None:
    """Show, or set to COUNT, how many intended and how many shortcut variants a probe needs before its
    validation state can be 'separating' (NITR's stable separation of a solution family; default 2)."""
    with open_store(ctx) as store:
        if count is not None:
            store.set_min_variants_per_family(count, by=resolve_annotator(annotator))
        need = store.min_variants_per_family()
    click.echo(f"stable separation needs {need} intended and {need} shortcut variant{'s' if need != 1 else ''} "
               "per probe")


@probes.command("signoff")
@click.argument("probe_id")
@click.option("--verdict", type=click.Choice(["signed-off", "not-signed-off"]), required=True)
@click.option("--reason", default="", help="Why (required for not-signed-off).")
@click.option("--as", "annotator", help="Who signs.")
@click.pass_context
@friendly
def probe_signoff(ctx, probe_id, verdict, reason, annotator) -> None:
    """Record the annotator's verdict on the probe's oracle (a later change to the probe makes it stale)."""
    with open_store(ctx) as store:
        store.sign_off(probe_id, resolve_annotator(annotator), verdict, reason)
        click.echo(f"{probe_id}: {store.validation_state(probe_id)}")


# ------------------------------------------------------------- model results (NITR Table 3) and attempts
# Configuration names, case ids and logs come from data: every table cell is a rich Text (shown literally).
def _t(value: object) -> Text:
    from rich.text import Text

    return Text("—" if value is None else printable(str(value)))


def _tally(t: Tally) -> str:
    return "—" if t.total == 0 else f"{t.passes}/{t.total} {100 * t.rate:.1f} %"


def _table(title: str, columns: list[str], numeric_from: int, numeric_to: int | None = None) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        numeric = numeric_from <= i < (len(columns) if numeric_to is None else numeric_to)
        table.add_column(col, justify="right" if numeric else "left", overflow="fold")
    return table


@probes.command("import-results")
@click.argument("csv_file", type=click.Path())
@click.option("--docs", "docs_dir", type=click.Path(file_okay=False),
              help="The checkout's docs/ folder, for design_matrix.md and cases.md (default: the CSV's folder).")
@click.option("--update", is_flag=True, help="Record verdicts that differ from the project's current ones.")
@click.option("--as", "annotator", help="Who imports.")
@click.pass_context
@friendly
def probe_import_results(ctx, csv_file, docs_dir, update, annotator) -> None:
    """Import NITR's pass matrix (docs/model_case_pass_matrix.csv, or a checkout's root): one verdict per
    configuration and case, the row counts checked against the cells; all or nothing, and importing it again
    adds nothing."""
    from ..services.probes import import_results as run
    from ..signals import declare_all_or_nothing

    declare_all_or_nothing("imported")
    with open_store(ctx) as store:
        report, docs = run(store, Path(csv_file), docs_dir=Path(docs_dir) if docs_dir else None,
                           by=resolve_annotator(annotator), update=update)
    click.echo(f"{printable(report.file)}: {plural(report.read, 'verdict')} of "
               f"{plural(report.configurations, 'configuration')}: {report.added} added, "
               f"{report.already_present} already present" + (f", {report.updated} updated" if report.updated else ""))
    if docs:
        click.echo(f"cases described by {', '.join(printable(Path(d).name) for d in docs)}"
                   f" ({plural(report.cases, 'case')} recorded or changed)")
    else:
        click.echo("no design_matrix.md or cases.md beside the file (or in --docs): cases are described by their "
                   "imported probes only")
    pending = len(report.changed) - report.updated
    if pending:
        click.echo(f"{plural(pending, 'verdict')} differ from the project's and were not recorded "
                   "(--update records them):")
        for line in report.changed[:20]:
            click.echo(f"  {printable(line)}")
        if pending > 20:
            click.echo(f"  ... and {pending - 20} more")


def _print_report(rep: ResultsReport) -> None:
    console = out_console()
    n = len(rep.suite)
    regimes = list(REGIMES)
    suite = "every case" if not rep.left_out else f"the {plural(n, 'case')} every configuration was evaluated on"
    t = _table(f"Configurations ({suite})", ["configuration", "regime", "passes", "every evaluated case"], 2)
    for c in rep.configurations:
        t.add_row(_t(c.configuration), _t(c.regime), _tally(c.suite), _tally(c.evaluated))
    for key in (*regimes, "all"):
        t.add_row(_t(f"all {key}" if key != "all" else "all"), _t(""), _tally(rep.regimes[key]), _t(""))
    console.print(t)
    t = _table("Micro vs multi-step (NITR Step 4)", ["granularity", "cases", "all", *regimes], 1)
    for g in rep.granularity:
        t.add_row(_t(g.label), str(len(g.cases)), _tally(g.tally), *(_tally(g.by_regime[r]) for r in regimes))
    console.print(t)
    t = _table("Dimensions (primary)", ["dimension", "cases", "all", *regimes], 2)
    for d in rep.dimensions:
        t.add_row(_t(f"{d.key} {d.label}"), _t(" ".join(d.cases)), _tally(d.tally),
                  *(_tally(d.by_regime[r]) for r in regimes))
    console.print(t)
    t = _table("Cases", ["case", "id", "dimension", "granularity", "passed by", *regimes, "flag", "passing"], 4, 7)
    for c in rep.cases:
        flag = "saturated" if c.saturated else "unsolved" if c.unsolved else ""
        if not c.in_suite:
            flag = (flag + " " if flag else "") + "(not in the suite)"
        who = ("all" if c.saturated else "none" if c.unsolved else ", ".join(c.passing)
               if len(c.passing) <= len(c.failing) else "all but " + ", ".join(c.failing))
        t.add_row(_t(c.info.case), _t(c.info.case_id), _t(c.info.primary_dimension), _t(c.info.granularity),
                  _tally(c.tally), *(_tally(c.by_regime[r]) for r in regimes), _t(flag), _t(who))
    console.print(t)
    for note in rep.notes:
        click.echo(f"note: {printable(note)}")


@probes.command("report")
@click.option("--all-cases", is_flag=True, help="Count every verdict, not only the cases every configuration has.")
@click.option("--config", "configs", multiple=True,
              help="Only this configuration, as NITR names it: 'GPT-5.4 (API)' (repeatable).")
@click.option("--cases", "case_selection", help="Only these cases: numbers and ranges, e.g. 001-021,030.")
@click.option("--csv", "csv_dir", type=click.Path(file_okay=False), help="Also write one CSV file per table here.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Also write the whole report as JSON.")
@click.pass_context
@friendly
def probe_report(ctx, all_cases, configs, case_selection, csv_dir, json_file) -> None:
    """NITR's tables over the model verdicts (Table 3): passes per configuration and regime, per case (saturated
    and unsolved flagged), micro vs multi-step per regime, per primary dimension. See docs/probes.md."""
    from benchwright.core.probes.results import parse_case_selection

    from ..services.probes import results_report

    try:
        only = parse_case_selection(case_selection) if case_selection is not None else None
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--cases") from None
    with open_store(ctx) as store:
        rep = results_report(store, all_cases=all_cases, configurations=list(configs) or None, only_cases=only)
    if rep.is_empty:
        click.echo("no model results yet; import NITR's with: benchwright probes import-results "
                   "NITR_ROOT/docs/model_case_pass_matrix.csv, or record one with: benchwright probes attempt")
    else:
        _print_report(rep)
    if csv_dir:
        write_csv_tables(csv_dir, {f"{name}.csv": table for name, table in rep.tables().items()})
    if json_file:
        write_json_file(json_file, rep.to_dict())


@probes.command("attempt")
@click.argument("probe_id")
@click.option("--config", "model", required=True, help="The model (configuration name without the regime).")
@click.option("--regime", type=click.Choice(list(REGIMES)), required=True, help="How the model was run.")
@click.option("--submission", type=click.Path(file_okay=False, exists=True),
              help="The tree the model produced (with step-1 ... step-n folders: every step's tree).")
@click.option("--agent-command", help="Run per task, in the step's tree, with the task file and the tree "
              "(or where {task} and {tree} say; also {step}, {steps}).")
@click.option("--out", "folder", type=click.Path(file_okay=False),
              help="Where the trees are kept (a new folder; default: attempts/PROBE/CONFIG-TIME beside the project).")
@click.option("--step-timeout", "step_timeout_s", type=float, default=3600.0, show_default=True,
              help="Seconds per agent step.")
@click.option("--timeout", "timeout_s", type=float, default=300.0, show_default=True,
              help="Seconds per oracle command.")
@click.option("--as", "annotator", help="Who runs.")
@click.pass_context
@friendly
def probe_attempt(ctx, probe_id, model, regime, submission, agent_command, folder, step_timeout_s, timeout_s,
            annotator) -> None:
    """A model's attempt at a probe: TASK1..n handed to --agent-command in order, each on the tree the previous
    step produced (every tree kept), or a finished --submission; the final tree is evaluated by the oracle and
    the verdict recorded for the configuration."""
    from ..services.probes import attempt_probe

    if (submission is None) == (agent_command is None):
        raise BenchwrightError("give either --submission DIR or --agent-command CMD")
    with open_store(ctx) as store:
        result, run = attempt_probe(
            store, probe_id, model=model, regime=regime, folder=Path(folder) if folder else None,
            agent_command=agent_command, submission=Path(submission) if submission else None, timeout_s=timeout_s,
            step_timeout_s=step_timeout_s, by=resolve_annotator(annotator),
            progress=lambda m: click.echo(printable(m), err=True))
    click.echo(f"{printable(result.configuration)} on {printable(probe_id)}: trees kept in {printable(result.folder)}")
    for s in result.steps:
        state = "ok" if s.ok else "timed out" if s.timed_out else "cancelled" if s.cancelled else \
            f"exit code {s.returncode}"
        click.echo(f"  step {s.step} ({s.task}): {state}" + (f", {s.duration_s:.1f} s" if s.command else ""))
    if run is None:
        click.echo(f"not evaluated: {printable(result.error)}", err=True)
        exit_unfinished(result.cancelled, [result])
        return
    why = run.apply_error or run.error
    click.echo(f"verdict: {run.verdict}" + (f": {printable(why)}" if why else ""))
    for m in run.modules:
        click.echo(f"  {'✓' if m.passed else '✗'} {printable(m.name)} ({m.module_name}): {printable(m.reason)}")
    if run.outcome == "error":
        click.echo("not recorded as a verdict: the oracle could not judge the final tree", err=True)
    exit_unfinished(run.cancelled, [run] if run.outcome == "error" else [])
