"""``benchwright pairs import FORMAT FILE`` and ``benchwright pairs history PAIR``: Q&A pairs in, and each pair's
audit trail."""

from __future__ import annotations

import json

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import ImportReport
from benchwright.core.importers import DEFAULT_CATEGORIES, FORMATS, TARGETS, parse
from benchwright.core.text import printable

from .common import annotator_option, friendly, open_store, plural


@click.group()
def pairs() -> None:
    """Candidate Q&A pairs: import them from a file, print a pair's audit trail."""


@pairs.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("file", type=click.Path(dir_okay=True))
@click.option("--repo", "repository", help="Registered repository the pairs are about.")
@click.option("--map", "mapping", multiple=True, metavar="TARGET=COLUMN",
              help=f"For jsonl, csv and parquet: which column fills a field ({', '.join(TARGETS)}).")
@click.option("--categories", metavar="NAMES",
              help=f"For github-discussions: the discussion categories imported, comma-separated, without regard "
                   f"to case (default: {','.join(DEFAULT_CATEGORIES)}; '*': every one).")
@click.option("--skip-invalid", is_flag=True, help="Import the valid records and list every skipped one.")
@click.option("--update", is_flag=True,
              help="Record a record whose question is an existing pair's, with another answer, as a new text "
                   "version of that pair (without it such records are listed as possible updates, not added).")
@annotator_option("Who imports (default: configuration, then the OS user).")
@click.pass_context
@friendly
def pairs_import(ctx, fmt, file, repository, mapping, categories, skip_invalid, update, annotator) -> None:
    """Import candidate Q&A pairs from FILE in FORMAT (answers: ``answers import``; a release folder:
    ``releases import``).

    All or nothing: a file with any invalid record imports nothing (unless --skip-invalid), and
    importing the same file again adds nothing (white space aside: trailing spaces or CRLF line ends make no
    new pair). A record with an existing pair's question and another answer is listed as a possible update and
    not added; --update records it as a new text version of the pair. github-discussions lists the threads it
    leaves out (unanswered, no accepted answer, another category, relying on an image) with the reason.
    """
    result = parse(fmt, file, repository=repository, mapping=mapping, categories=categories)
    with open_store(ctx) as store:
        if repository:
            store.get_repository(repository)
        report = store.apply_import(
            result, annotator=resolve_annotator(annotator), file_path=file, skip_invalid=skip_invalid,
            repository=repository, options={"map": list(mapping), "skip_invalid": skip_invalid, "update": update,
                                            **({"categories": categories} if categories is not None else {})},
            update=update,
        )
        repaired = store.flag_import_repairs(result, report.batch_id)
    _print_report(report)
    if report.repository_facts is not None:
        counted = " (answered: counted from the imported threads)" if result.answered_counted else ""
        click.echo(printable(f"  repository {repository}: {report.repository_facts.describe()}{counted}; "
                             f"check it with: benchwright repos check {repository}"))
    if repaired:
        shown = ", ".join(map(str, repaired[:20])) + (" ..." if len(repaired) > 20 else "")
        click.echo(f"  text repaired: {plural(len(repaired), 'pair')} held invalid Unicode (a lone surrogate), stored "
                   f"as U+FFFD (line {shown})")


FILTERED_SHOWN = 20
"""Records left out by rule that the import summary lists one by one; the rest are counted."""


def _print_report(r: ImportReport) -> None:
    click.echo(f"{r.file}: read {r.read} records, added {r.added} Q&A pairs")
    if r.already_present:
        click.echo(f"  {r.already_present} already in the project (not added again)")
    if r.duplicates_in_file:
        click.echo(f"  {r.duplicates_in_file} repeated earlier records of the same file (added once)")
    if r.repositories_added:
        click.echo(f"  registered {len(r.repositories_added)} repositories: {', '.join(r.repositories_added)}")
        click.echo("  (not checked out here; add a local checkout with: benchwright repos add NAME PATH)")
    if r.needs_reference:
        click.echo(f"  {len(r.needs_reference)} pairs have no reference answer and need one:")
        for pid in r.needs_reference:
            click.echo(f"    {pid}")
    if r.skipped:
        click.echo(f"  skipped {len(r.skipped)} invalid records:")
        for p in r.skipped:
            click.echo(f"    {p}")
    if r.filtered:
        click.echo(f"  left out {plural(len(r.filtered), 'record')} by rule:")
        for f in r.filtered[:FILTERED_SHOWN]:
            url = f" {f.url}" if f.url and f.url != f.upstream_id else ""
            click.echo(printable(f"    {f.place} ({f.upstream_id}{url}): {f.reason}"))
        if len(r.filtered) > FILTERED_SHOWN:
            click.echo(f"    ... and {len(r.filtered) - FILTERED_SHOWN} more (every one is in the import batch's "
                       "filtered_json)")
    if r.updated:
        click.echo(f"  recorded {plural(len(r.updated), 'new text version')} of pairs already in the project (--update):")
        for u in r.updated:
            click.echo(f"    {u.where}: #{u.ordinals[0]} {u.pair_ids[0]} is now at text version {u.version}"
                       f"{_earlier_work(u)}")
    if r.possible_updates:
        click.echo(f"  {plural(len(r.possible_updates), 'record')} with the question of a pair already in the project "
                   "but another answer (possible updates; not added):")
        for u in r.possible_updates:
            pairs = ", ".join(f"#{n} {pid}" for n, pid in zip(u.ordinals, u.pair_ids, strict=True))
            click.echo(f"    {u.where}: {pairs}{_earlier_work(u)}{f' ({u.refused})' if u.refused else ''}")
        if not all(u.refused for u in r.possible_updates):
            click.echo("  to record them as new text versions of those pairs, repeat the import with --update")


def _earlier_work(u) -> str:
    """What was done on the pair's earlier text, for an import summary line (``TextUpdate``)."""
    out = ""
    if u.reviewed_by:
        out += f"; reviewed on the earlier text by {', '.join(printable(a) for a in u.reviewed_by)}"
    if u.has_checklist:
        out += "; its checklist was written from the earlier text"
    return out + ("; review it again" if u.reviewed_by and u.version else "")


@pairs.command("history")
@click.argument("pair")
@annotator_option("Who is asking (blind mode hides others' work until you reviewed).")
@click.pass_context
@friendly
def pairs_history(ctx, pair, annotator) -> None:
    """Print PAIR's audit trail: every decision, review, note, checklist version and adjudication."""
    who = resolve_annotator(annotator)
    with open_store(ctx) as store:
        pid = store.resolve_pair(pair)
        texts = store.text_versions(pid)
        if len(texts) > 1:
            click.echo(f"{pid} has {len(texts)} text versions; the current text is version {texts[-1].version} "
                       f"({texts[-1].origin}, by {printable(texts[-1].created_by or '?')})")
        events = store.events_of(pid, viewer=who)
        for e in events:
            click.echo(f"{e['created_at']}\t{printable(e['actor'])}\t{e['kind']}\t"
                       f"{printable(json.dumps(e['before'], ensure_ascii=False))} -> "
                       f"{printable(json.dumps(e['after'], ensure_ascii=False))}")
    if not events and not events.hidden:
        click.echo(f"no events for {pair} yet (decisions, reviews, notes, checklist versions and adjudications "
                   "appear here)")
    if events.hidden:
        click.echo(f"({plural(events.hidden, 'event')} of other annotators hidden until you submit your review: blind mode)")

