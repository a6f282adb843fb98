"""``benchwright import FORMAT FILE`` and ``benchwright history PAIR``: Q&A pairs in, and each pair's audit trail."""

from __future__ import annotations

import json
from pathlib import Path

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import ImportReport
from benchwright.core.importers import FORMATS, TARGETS, parse
from benchwright.core.importers.answers import ANSWER_FORMATS
from benchwright.core.judgment import CONDITIONS
from benchwright.core.text import printable

from .common import friendly, open_store, plural


@click.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice([*FORMATS, "release", "answers"]))
@click.argument("file", type=click.Path(dir_okay=True))
@click.option("--repo", "repository", help="Registered repository the pairs are about.")
@click.option("--map", "mapping", multiple=True, metavar="TARGET=COLUMN",
              help=f"For jsonl, csv and parquet: which column fills a field ({', '.join(TARGETS)}).")
@click.option("--skip-invalid", is_flag=True, help="Import the valid records and list every skipped one.")
@click.option("--update", is_flag=True,
              help="Record a record whose question is an existing pair's, with another answer, as a new text "
                   "version of that pair (without it such records are listed as possible updates, not added).")
@click.option("--model", help="answers: the model that wrote the answers.")
@click.option("--condition", type=click.Choice(CONDITIONS), help="answers: the condition they were written under.")
@click.option("--scale", type=click.IntRange(min=1), help="answers: maximum score per dimension of imported scores.")
@click.option("--judge-model", "judge_model", help="answers: who gave the imported scores (default: unknown).")
@click.option("--answer-format", "answer_format", type=click.Choice(ANSWER_FORMATS), default="auto",
              show_default=True, help="answers: the file's shape.")
@click.option("--verbose", is_flag=True, help="answers: list every problem (default: the first 50 of each kind).")
@click.option("--as", "annotator", help="Who imports (default: configuration, then the OS user).")
@click.pass_context
@friendly
def import_cmd(ctx, fmt, file, repository, mapping, skip_invalid, model, condition, scale, judge_model,
               answer_format, verbose, annotator, update) -> None:
    """Import candidate Q&A pairs from FILE in FORMAT (``release``: a release folder made by benchwright;
    ``answers``: model answers to the project's pairs, with --model and --condition).

    All or nothing: a file with any invalid record imports nothing (unless --skip-invalid), and
    importing the same file again adds nothing (white space aside: trailing spaces or CRLF line ends make no
    new pair). A record with an existing pair's question and another answer is listed as a possible update and
    not added; --update records it as a new text version of the pair.
    """
    if update and fmt in ("answers", "release"):
        raise click.UsageError("--update is for Q&A pair formats, not for: benchwright import " + fmt)
    if fmt == "answers":
        from .answers import import_answers_file

        if repository or mapping:
            raise click.UsageError("--repo and --map are for Q&A pair formats; answers are matched to the "
                                   "project's pairs by id or question")

        import_answers_file(ctx, file, model=model, condition=condition, scale=scale, judge_model=judge_model,
                            answer_format=answer_format, skip_invalid=skip_invalid, annotator=annotator,
                            verbose=verbose)
        return
    if model or condition or scale or judge_model or answer_format != "auto" or verbose:
        raise click.UsageError("--model, --condition, --scale, --judge-model, --answer-format and --verbose are "
                               "for: benchwright import answers FILE")
    if fmt == "release":
        from ..services.releases import import_release

        with open_store(ctx) as store:
            pairs, checklists = import_release(store, Path(file), by=resolve_annotator(annotator))
        click.echo(f"{file}: added {plural(pairs, 'Q&A pair')} and {plural(checklists, 'checklist')}")
        return
    result = parse(fmt, file, repository=repository, mapping=mapping)
    with open_store(ctx) as store:
        if repository:
            store.get_repository(repository)
        report = store.apply_import(
            result, annotator=resolve_annotator(annotator), file_path=file, skip_invalid=skip_invalid,
            repository=repository, options={"map": list(mapping), "skip_invalid": skip_invalid, "update": update},
            update=update,
        )
        repaired = store.flag_import_repairs(result, report.batch_id)
    _print_report(report)
    if repaired:
        shown = ", ".join(map(str, repaired[:20])) + (" ..." if len(repaired) > 20 else "")
        click.echo(f"  text repaired: {plural(len(repaired), 'pair')} held invalid Unicode (a lone surrogate), stored "
                   f"as U+FFFD (line {shown})")


def _print_report(r: ImportReport) -> None:
    click.echo(f"{r.file}: read {r.read} records, added {r.added} Q&A pairs")
    if r.already_present:
        click.echo(f"  {r.already_present} already in the project (not added again)")
    if r.duplicates_in_file:
        click.echo(f"  {r.duplicates_in_file} repeated earlier records of the same file (added once)")
    if r.repositories_added:
        click.echo(f"  registered {len(r.repositories_added)} repositories: {', '.join(r.repositories_added)}")
        click.echo("  (not checked out here; add a local checkout with: benchwright repo add NAME PATH)")
    if r.needs_reference:
        click.echo(f"  {len(r.needs_reference)} pairs have no reference answer and need one:")
        for pid in r.needs_reference:
            click.echo(f"    {pid}")
    if r.skipped:
        click.echo(f"  skipped {len(r.skipped)} invalid records:")
        for p in r.skipped:
            click.echo(f"    {p}")
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


@click.command()
@click.argument("pair")
@click.option("--as", "annotator", help="Who is asking (blind mode hides others' work until you reviewed).")
@click.pass_context
@friendly
def history(ctx, pair, annotator) -> None:
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

