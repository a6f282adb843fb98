"""``benchwright adjudication decide|list|accept-unanimous``: final decisions."""

from __future__ import annotations

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError

from .common import friendly, open_store, plural


@click.group()
def adjudication() -> None:
    """Pairs whose reviews or checklist edits disagree, and their final decisions."""


@adjudication.command("list")
@click.pass_context
@friendly
def adjudication_list(ctx) -> None:
    """List pairs awaiting adjudication and what their annotators disagree on."""
    with open_store(ctx) as store:
        items = store.disagreements()
        for d in items:
            click.echo(f"#{store.ordinal_of(d.qa_pair_id)}\t{d.qa_pair_id}\t{', '.join(d.fields)}\t{', '.join(d.annotators)}")
    click.echo(f"{plural(len(items), 'pair')} await{'s' if len(items) == 1 else ''} adjudication")


@adjudication.command("accept-unanimous")
@click.option("--as", "annotator", help="The adjudicator.")
@click.pass_context
@friendly
def adjudication_unanimous(ctx, annotator) -> None:
    """Record the final decision of every pair whose reviews all agree (bulk)."""
    with open_store(ctx) as store:
        done = store.accept_unanimous(resolve_annotator(annotator))
    click.echo(f"adjudicated {plural(len(done), 'unanimous pair')}")


@adjudication.command("decide")
@click.argument("pair")
@click.option("--decision", type=click.Choice(["accept", "reject", "revise"]), required=True)
@click.option("--reason", required=True, help="Why (kept with the adjudication).")
@click.option("--checklist-from", "checklist_from", help="Make this annotator's checklist edit the adjudicated one.")
@click.option("--as", "annotator", help="The adjudicator.")
@click.pass_context
@friendly
def adjudication_decide(ctx, pair, decision, reason, checklist_from, annotator) -> None:
    """Record the final decision on PAIR (an id or #N) with a reason."""
    with open_store(ctx) as store:
        pid = store.resolve_pair(pair)
        checklist = None
        if checklist_from:
            versions = store.annotator_checklists(pid)
            if checklist_from not in versions:
                raise BenchwrightError(f"{checklist_from} has not edited the checklist of {pid}")
            checklist = store.checklist_version(pid, versions[checklist_from]).checklist
        adj = store.adjudicate(pid, resolve_annotator(annotator), decision, reason, checklist=checklist)
    extra = f", checklist version {adj.checklist_version}" if adj.checklist_version else ""
    click.echo(f"{pid}: {adj.decision} ({adj.reason}){extra}")

