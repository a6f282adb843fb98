"""Project-wide one-shots: ``benchwright init``, ``review``, ``status`` and ``demo``."""

from __future__ import annotations

from pathlib import Path

import click

from benchwright.core.config import data_dir, resolve_annotator
from benchwright.core.errors import BenchwrightError, Remedy, with_remedy
from benchwright.core.text import printable

from .common import friendly, open_store, plural, run_app


@click.command()
@click.pass_context
@friendly
def init(ctx: click.Context) -> None:
    """Create an empty project file (or upgrade an existing one in place)."""
    with open_store(ctx, create=True) as store:
        click.echo(f"project ready: {store.path} ({plural(store.count_pairs(), 'Q&A pair')})")

@click.command()
@click.option("--as", "annotator", help="Annotator name (default: BENCHWRIGHT_ANNOTATOR, config, OS user).")
@click.pass_context
@friendly
def review(ctx, annotator) -> None:
    """Open the review app on the project."""
    path = ctx.obj["db"]
    if not Path(path).exists():
        raise with_remedy(BenchwrightError(f"{path}: no project here"), Remedy.CREATE_PROJECT)
    with open_store(ctx) as store:
        run_app(store, resolve_annotator(annotator))


@click.command()
@click.pass_context
@click.option("--as", "annotator", help="Annotator name.")
@friendly
def status(ctx, annotator) -> None:
    """Print the project's counts and this annotator's progress."""
    who = resolve_annotator(annotator)
    with open_store(ctx) as store:
        p = store.progress(who)
        click.echo(f"{store.path}: {plural(p.total, 'Q&A pair')}, {p.decided} decided, {p.mine} by {printable(who)}")
        for r in store.repositories():
            click.echo(printable(f"  repository {r.pin}: {r.local_path or '(not checked out here)'}"))
            evidence = store.evidence_counts(r.name)
            if evidence:
                click.echo(printable("    evidence after repos move: " + ", ".join(
                    f"{n} {status}" for status, n in evidence.items()) + f" (benchwright repos evidence {r.name})"))
        for step, c in store.curation_counts().items():
            if any(c.values()):
                click.echo(f"  curation {step}: {c['ok']} ok, {c['failed']} failed, {c['flagged']} flagged")
        for model, condition, n in store.answer_models():
            click.echo(f"  answers {printable(model)} / {condition}: {n}")
        texts = store.text_version_counts()
        if texts["pairs"]:
            click.echo(f"  text versions: {plural(texts['pairs'], 'pair')} with more than one ({texts['versions']} "
                       f"after the first, {texts['imported']} from re-imports); benchwright pairs text PAIR lists them")
        reopened = store.reopened_counts()
        if reopened:
            from benchwright.core.vocabulary import REOPEN_WHY

            click.echo("  back in review (their earlier reviews no longer count): " + ", ".join(
                printable(f"{plural(n, 'pair')} ({REOPEN_WHY.get(why, why)})") for why, n in reopened.items()))
        repairs = store.text_repair_counts()
        if repairs:
            from benchwright.db.textguard import TEXT_REPAIR_TABLES

            names = {t: TEXT_REPAIR_TABLES.get(t, t) for t in repairs}
            listed = ", ".join(plural(n, names[t].removesuffix("s"), names[t]) for t, n in repairs.items())
            click.echo(f"  text repaired (lone surrogates stored as U+FFFD): {listed}")

@click.command()
@click.option("--as", "annotator", help="Annotator name.")
@click.option("--no-open", is_flag=True, help="Prepare the demo project and print its path; do not open the app.")
@friendly
def demo(annotator, no_open) -> None:
    """Open the app on a bundled sample project about click (created once in the user data folder)."""
    from benchwright.db import Store

    from ..services.demo import prepare_demo

    db_path = prepare_demo(data_dir() / "demo")
    if no_open:
        click.echo(str(db_path))
        return
    with Store.open(db_path) as store:
        run_app(store, resolve_annotator(annotator), title="demo project")
