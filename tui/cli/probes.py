"""``benchwright probes import|new|list|run|signoff``: NITR probes."""

from __future__ import annotations

from pathlib import Path

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError
from benchwright.core.text import printable

from .common import friendly, open_store, plural


@click.group()
def probes() -> None:
    """NITR probes: import, scaffold, run against variants, sign the oracle off."""


@probes.command("import")
@click.argument("case_dir", type=click.Path(file_okay=False))
@click.argument("evaluator_dir", type=click.Path(file_okay=False))
@click.option("--spec", type=click.Path(dir_okay=False), help="SPEC.md (default: CASE_DIR/SPEC.md).")
@click.option("--variants", "variants_dir", type=click.Path(file_okay=False),
              help="Variants folder (default: CASE_DIR/variants, else EVALUATOR_DIR/variants).")
@click.option("--as", "annotator", help="Who imports.")
@click.pass_context
@friendly
def probe_import(ctx, case_dir, evaluator_dir, spec, variants_dir, annotator) -> None:
    """Import a probe: case folder (starter code, TASK*.md, SPEC.md) and evaluator (pipeline.json)."""
    from ..services.probes import import_probe

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
    scaffold_probe(Path(dest), probe_id)
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
@click.option("--timeout", "timeout_s", type=float, default=300.0, show_default=True, help="Seconds per command.")
@click.option("--as", "annotator", help="Who runs.")
@click.pass_context
@friendly
def probe_run(ctx, probe_id, variant_names, timeout_s, annotator) -> None:
    """Run the probe's oracle against its variants (fresh workspace each) and store the runs with logs.

    Each run's line shows pass, fail (caught by the oracle), failed to build (caught by the compiler) or error,
    and the tests each unit_test module ran; the shortcuts' lines say what caught each one."""
    from benchwright.core.probes import ExpectationCheck, separation

    words = {ExpectationCheck.AS_EXPECTED: "as expected", ExpectationCheck.MISMATCH: "UNEXPECTED",
             ExpectationCheck.COMPILER_CAUGHT: "the compiler caught it, not the oracle"}

    from ..services.probes import run_probe_variants

    with open_store(ctx) as store:
        runs = run_probe_variants(store, probe_id, list(variant_names) or None, timeout_s=timeout_s,
                                  by=resolve_annotator(annotator), progress=lambda m: click.echo(f"  {printable(m)}"))
        state = store.validation_state(probe_id)
    for r in runs:
        name = r.variant.name if r.variant else "(starter)"
        verdict = words.get(r.expectation_check, "")
        click.echo(f"{printable(name)}\t{r.verdict}\texpected {r.expected or '-'}\t{verdict}")
        for m in r.modules:
            if m.passed and m.tests is not None:
                click.echo(f"    {printable(m.name)} ({m.module_name}): {m.tests.text()}")
            if not m.passed:
                click.echo(f"    {m.name} ({m.module_name}): {printable(m.reason or '')}")
                for hit in m.matches[:5]:
                    where = f"{hit.relative_path}:{hit.line}" if hit.line else str(hit.relative_path)
                    click.echo(f"      {hit.rule_id}: {printable(hit.message or where)}")
        if r.apply_error:
            click.echo(f"    variant not applied: {printable(r.apply_error)}")
    notes = separation(runs).shortcut_notes
    if notes:
        click.echo("shortcuts:")
        for note in notes:
            click.echo(f"  {printable(note)}")
    click.echo(f"validation state: {state}")


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

