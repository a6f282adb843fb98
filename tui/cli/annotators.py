"""Several annotators: ``benchwright assign``, ``blind``, ``agreement`` and ``merge``."""

from __future__ import annotations

import json

import click

from benchwright.core.assignment import STRATIFY_BY
from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError

from .common import friendly, open_store, parse_where, plural, shown_name, where_option


@click.command()
@click.option("--annotators", required=True, help="Comma-separated names, e.g. ada,bob,cy.")
@click.option("--overlap", type=int, default=2, show_default=True, help="Annotators per pair.")
@click.option("--seed", type=click.IntRange(-(2**63), 2**63 - 1), default=0, show_default=True,
              help="Seed of the tie-breaking order and of the QA sample's draw (a 64-bit integer).")
@click.option("--sample", "sample", type=int, metavar="N",
              help="Assign a QA sample of N pairs only (RepoProbe §3.2 human QA), drawn by --seed.")
@click.option("--fraction", type=float, metavar="F", help="Assign a QA sample of this share of the pairs (0 to 1).")
@click.option("--stratify-by", type=click.Choice(STRATIFY_BY),
              help="Split the sample across repositories or categories in proportion (at least one from each).")
@where_option
@click.option("--answers", "answers", is_flag=True,
              help="Hand out model answers to score against their checklists (human judgments) instead of pairs; "
                   "with --model and --sample N (replaces earlier answer assignments).")
@click.option("--model", help="With --answers: only answers of this model.")
@click.option("--as", "annotator", help="Who assigns.")
@click.pass_context
@friendly
def assign(ctx, annotators, overlap, seed, sample, fraction, stratify_by, where, answers, model, annotator) -> None:
    """Give every pair, or a QA sample of them, to OVERLAP annotators, balanced and reproducible (replaces
    earlier assignments).

    With --sample N or --fraction F only a sample is assigned: drawn from the pairs --where selects (e.g.
    --where curation=passed, the verifier's survivors), split across --stratify-by strata in proportion
    (largest remainders; one from each stratum when N allows), reproducible from --seed. qa-report counts it.
    With an overlap above 1, blind mode is turned on: nobody sees another's review of a pair before
    submitting their own.
    """
    names = [a for a in annotators.split(",")]
    if answers:
        _assign_answers(ctx, names, overlap, seed, sample, model, annotator,
                        refused=fraction is not None or stratify_by or where)
        return
    if model:
        raise BenchwrightError("--model chooses answers to score: give --answers too")
    if sample is None and fraction is None and (stratify_by or where):
        raise BenchwrightError("--stratify-by and --where choose a QA sample: give --sample N or --fraction F too")
    with open_store(ctx) as store:
        by = resolve_annotator(annotator)
        if sample is None and fraction is None:
            loads, drawn = store.assign(names, overlap, seed=seed, by=by), None
        else:
            flt = parse_where(where, facets=store.facets()) if where else None
            drawn = store.assign_sample(names, overlap, seed=seed, by=by, size=sample, fraction=fraction,
                                        stratify_by=stratify_by, where=flt, where_text=tuple(where))
            loads = drawn.loads
        blind = store.blind_mode
    if drawn is not None:
        click.echo(f"QA sample: {plural(len(drawn.pair_ids), 'pair')} of {drawn.pool}"
                   + (f" (the pool has only {drawn.pool})" if sample is not None and sample > drawn.pool else ""))
        if stratify_by:
            for stratum, (pool, taken) in drawn.strata.items():
                click.echo(f"  {stratify_by} {shown_name(stratum or '(none)')}\t{taken} of {pool}")
    for who, n in loads.items():
        click.echo(f"{shown_name(who)}\t{plural(n, 'pair')}")
    click.echo(f"overlap {overlap}, seed {seed}; blind mode {'on' if blind else 'off'}")


def _assign_answers(ctx, names, overlap, seed, sample, model, annotator, *, refused) -> None:
    """``assign --answers``: answers handed out to score (:meth:`Store.assign_answers`), the loads printed."""
    if refused:
        raise BenchwrightError("--answers takes --model and --sample N; --fraction, --stratify-by and --where "
                               "choose pairs")
    with open_store(ctx) as store:
        loads = store.assign_answers(names, overlap, seed=seed, by=resolve_annotator(annotator), model=model,
                                     sample=sample)
        blind = store.blind_mode
    for who, n in loads.items():
        click.echo(f"{shown_name(who)}\t{plural(n, 'answer')} to score")
    handed = sum(loads.values()) // overlap  # each answer goes to exactly ``overlap`` annotators
    if sample is not None and handed < sample:
        click.echo(f"sample of {sample} asked, {plural(handed, 'answer')} available: all assigned")
    click.echo(f"overlap {overlap}, seed {seed}; blind mode {'on' if blind else 'off'}"
               + (" (the judges' scores stay hidden from each until they have scored)" if blind else ""))


@click.command()
@click.argument("state", type=click.Choice(["on", "off"]))
@click.option("--as", "annotator", help="Who changes it.")
@click.pass_context
@friendly
def blind(ctx, state, annotator) -> None:
    """Turn blind mode on or off for the project."""
    with open_store(ctx) as store:
        store.set_setting("blind_mode", state, by=resolve_annotator(annotator))
    click.echo(f"blind mode {state}")

def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.pass_context
@friendly
def agreement(ctx, as_json) -> None:
    """Inter-annotator agreement: Cohen's kappa per annotator pair, Fleiss' kappa and Krippendorff's alpha
    for the decision and each QA criterion; key-point and weight agreement of checklists."""
    from dataclasses import asdict

    from rich.console import Console
    from rich.table import Table

    from benchwright.core.agreement import agreement_report, project_checklist_agreement

    with open_store(ctx) as store:
        report = agreement_report(store.review_ratings())
        checklists = project_checklist_agreement(store.checklist_edits())
    if as_json:
        click.echo(json.dumps({"reviews": {k: asdict(v) for k, v in report.items()},
                               "checklists": asdict(checklists)}, indent=2, default=str))
        return
    console = Console(highlight=False)
    table = Table(title="Agreement of reviews")
    for column in ("field", "pairs", "Cohen's kappa (pairs of annotators)", "Fleiss' kappa", "Krippendorff's alpha"):
        table.add_column(column)
    for name, fa in report.items():
        cohen = "; ".join(f"{k.annotator_a}-{k.annotator_b} {k.text} (n={k.n_items})" for k in fa.cohen) or "n/a"
        table.add_row(name, str(fa.n_items), cohen, f"{fa.fleiss.text} (n={fa.fleiss.n_items})",
                      f"{fa.krippendorff.text} (n={fa.krippendorff.n_items})")
    console.print(table)
    console.print(
        f"Checklists edited by two or more annotators: {plural(checklists.n_pairs, 'pair')}; key points matched "
        f"{checklists.n_matched}/{checklists.n_key_points} ({_fmt(checklists.match_rate)}); weights "
        f"Krippendorff's alpha (interval) {checklists.weight_alpha.text} (n={checklists.weight_alpha.n_items})"
    )


@click.command()
@click.argument("other", type=click.Path(dir_okay=False))
@click.pass_context
@friendly
def merge(ctx, other) -> None:
    """Bring another copy's reviews, notes, checklist versions and adjudications into this project.

    Human judgments of answers this project has come too. Idempotent: merging the same copy again adds
    nothing. Conflicting checklist edits are reported and show up in the adjudication queue.
    """
    from benchwright.db.merge import merge_project

    with open_store(ctx) as store:
        report = merge_project(store, other)
    added = ", ".join(plural(n, t.replace("_", " ").rstrip("s")) for t, n in report.added.items()) or "nothing new"
    click.echo(f"merged {other}: {added}")
    if report.unknown_pairs:
        click.echo(f"  {plural(report.unknown_pairs, 'row')} {'names a pair' if report.unknown_pairs == 1 else 'name pairs'} this project does not have (not merged)")
    for c in report.conflicts:
        click.echo(f"  conflict: {c}")

