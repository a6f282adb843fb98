"""``benchwright checklists schema|import|export|show|history|diff|restore`` (RepoProbe §4.1)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from benchwright.core.blind import HiddenInBlindMode
from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError
from benchwright.core.text import printable

from .common import friendly, open_store, plural, step_progress


@click.group()
def checklists() -> None:
    """Checklists (RepoProbe §4.1): schema, import, export, show, diff, history, restore."""


@checklists.command("schema")
def checklist_schema() -> None:
    """Print the JSON Schema of a checklist."""
    from benchwright.core.checklist import checklist_json_schema

    click.echo(json.dumps(checklist_json_schema(), indent=2, sort_keys=True))


@checklists.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--pair", "pair", help="The Q&A pair (id, id prefix or #N), for a file holding one foreign rubric.")
@click.option("--format", "fmt", type=click.Choice(["auto", "benchwright", "rubberduck", "checkeval"]),
              default="auto", show_default=True, help="Checklist shape; auto detects it per record.")
@click.option("--as", "annotator", help="Who imports.")
@click.option("--verbose", "-v", is_flag=True, help="Also print one line per checklist (its version and state, "
              "violations and conversion notes).")
@click.pass_context
@friendly
def checklist_import(ctx, file, pair, fmt, annotator, verbose) -> None:
    """Import checklists: our JSON, RubberDuckBench point rubrics, CheckEval yes/no questions.

    All or nothing: one transaction, written in chunks of 1,000 as the file is read (JSON lines are read one line
    at a time); a bad line anywhere rolls everything back, naming the file and line. A converted checklist that
    breaks the rules is stored as a draft with its violations; nothing is rescaled. A checklist identical to its
    pair's current version (and in the same draft state) is skipped and counted "unchanged": importing a file
    again adds nothing. Prints a progress bar and a
    summary; a line per checklist too for up to 20 of them (--verbose: always).
    """
    from ..signals import declare_all_or_nothing

    declare_all_or_nothing("imported")
    if pair:
        with open_store(ctx) as store:
            try:
                pair = store.resolve_pair(pair)
            except BenchwrightError as e:
                raise BenchwrightError(f"--pair {pair}: {e}") from None
    from benchwright.core.importers.checklists import stream_checklists

    stream = stream_checklists(file, fmt=fmt, pair=pair)
    who = resolve_annotator(annotator)
    lines: list[str] = []
    shown = {"records": 0}

    def on_saved(record, pid: str, version: int) -> None:
        shown["records"] += 1
        if verbose or shown["records"] <= DETAIL_LIMIT:
            _detail_lines(lines, record, pid, version)

    with open_store(ctx) as store, step_progress(f"import {Path(file).name}") as report:
        result = store.import_checklist_records(stream.records, author=who, file=file,
                                                progress=lambda done: report(done, max(done, stream.total)),
                                                on_saved=on_saved)
    if verbose or len(result.saved) <= DETAIL_LIMIT:
        for line in lines:
            click.echo(printable(line))
    unchanged = f"; {result.unchanged} unchanged (identical to the current version, not added again)" \
        if result.unchanged else ""
    click.echo(f"imported {plural(len(result.saved), 'checklist')} ({plural(result.drafts, 'draft')} to fix in the "
               f"editor){unchanged}")
    if len(result.saved) > DETAIL_LIMIT and not verbose:
        formats = ", ".join(f"{name} {n}" for name, n in sorted(result.formats.items()))
        click.echo(f"  formats: {formats}" + (f"; text repaired (a lone surrogate stored as U+FFFD) in "
                                     f"{plural(result.repaired, 'checklist')}" if result.repaired else ""))
        click.echo("  (--verbose prints a line per checklist, with its violations and conversion notes)")


DETAIL_LIMIT = 20
"""Up to this many checklists, ``checklists import`` prints a line per checklist without --verbose."""


def _detail_lines(lines: list[str], record, pid: str, version: int) -> None:
    """The --verbose lines of one stored checklist (appended to ``lines``, printed after the commit)."""
    from benchwright.core.importers.checklists import conversion_notes

    state = "draft" if (record.violations or record.draft) else "valid"
    lines.append(f"{pid}: version {version} ({record.source_format}, {state})")
    lines += [f"    {v}" for v in record.violations]
    lines += [f"    converted: {note}" for note in conversion_notes(record)]
    if record.text_repaired:
        lines.append("    text repaired: invalid Unicode (a lone surrogate) stored as U+FFFD")


@checklists.command("export")
@click.option("--out", type=click.Path(dir_okay=False), help="Write here instead of standard output.")
@click.pass_context
@friendly
def checklist_export(ctx, out) -> None:
    """Write every pair's current checklist as JSON lines (our schema, with version and origin)."""
    with open_store(ctx) as store:
        rows = [
            json.dumps({"qa_pair_id": pid, "version": v.version, "origin": v.origin, "draft": v.is_draft,
                        "valid": v.is_valid, **v.checklist.model_dump(mode="json")}, ensure_ascii=False, sort_keys=True)
            for pid, v in store.current_checklists()
        ]
    text = "".join(r + "\n" for r in rows)
    if out:
        try:
            Path(out).write_text(text, encoding="utf-8")
        except OSError as e:
            raise BenchwrightError(f"{out}: cannot write the checklists ({e.strerror or e})") from None
        click.echo(f"wrote {plural(len(rows), 'checklist')} to {out}")
    else:
        click.echo(text, nl=False)


def _hidden(error: HiddenInBlindMode) -> BenchwrightError:
    """The command line's words for a checklist version blind mode holds back."""
    if error.version is None:
        return BenchwrightError(f"pair {error.qa_pair_id}: blind mode hides the checklist edits of others until you "
                                "submit your review")
    return BenchwrightError(f"pair {error.qa_pair_id}: version {error.version} is another annotator's edit, hidden "
                            "in blind mode until you submit your review")


@checklists.command("show")
@click.argument("pair")
@click.option("--version", "version", type=int, help="A version number (default: the current one).")
@click.option("--as", "annotator", help="Who asks (blind mode hides others' edits until you reviewed).")
@click.pass_context
@friendly
def checklist_show(ctx, pair, version, annotator) -> None:
    """Print a pair's checklist and its validity."""
    who = resolve_annotator(annotator)
    with open_store(ctx) as store:
        pair = store.resolve_pair(pair)
        try:
            v = store.checklist_version_for(pair, who, version)
        except HiddenInBlindMode as error:
            raise _hidden(error) from None
    if v is None:
        raise BenchwrightError(f"pair {pair} has no checklist")
    click.echo(f"version {v.version} · {v.origin}{' · draft' if v.is_draft else ''} · {printable(v.author)} · {v.created_at}")
    for i, it in enumerate(v.checklist.items, start=1):
        click.echo(f"{i}. [{it.kind.value}, weight {it.weight}] {printable(it.key_point)}")
        for t in sorted(it.rubric, key=lambda t: -t.score):
            click.echo(f"     {t.score}: {printable(t.criterion)}")
    click.echo("valid" if v.is_valid else "violations:\n" + "\n".join(f"  {x}" for x in v.violations))


@checklists.command("history")
@click.argument("pair")
@click.option("--as", "annotator", help="Who asks (blind mode hides others' edits until you reviewed).")
@click.pass_context
@friendly
def checklist_history(ctx, pair, annotator) -> None:
    """List the versions of a pair's checklist."""
    with open_store(ctx) as store:
        pair = store.resolve_pair(pair)
        history = store.checklist_history(pair, viewer=resolve_annotator(annotator))
    if not history:
        raise _hidden(HiddenInBlindMode(pair)) if history.hidden else BenchwrightError(f"pair {pair} has no checklist")
    for v in history:
        extra = f" (restored from {v.restored_from})" if v.restored_from else ""
        click.echo(f"v{v.version}\t{v.origin}{' draft' if v.is_draft else ''}\t{'valid' if v.is_valid else 'invalid'}"
                   f"\t{printable(v.author)}\t{v.created_at}{extra}")
    if history.hidden:
        click.echo(f"({plural(history.hidden, 'version')} of other annotators hidden until you submit your review: "
                   "blind mode)")


@checklists.command("diff")
@click.argument("pair")
@click.argument("v1", type=int, required=False)
@click.argument("v2", type=int, required=False)
@click.option("--as", "annotator", help="Who asks (blind mode hides others' edits until you reviewed).")
@click.pass_context
@friendly
def checklist_diff(ctx, pair, v1, v2, annotator) -> None:
    """Word-level diff of two versions ([-removed-] {+added+}); default: generated (or first) vs current."""
    from benchwright.core.checklist_diff import diff_checklists, render_diff_text

    with open_store(ctx) as store:
        pair = store.resolve_pair(pair)
        who = resolve_annotator(annotator)
        history = store.checklist_history(pair, viewer=who)
        if not history and not history.hidden:
            raise BenchwrightError(f"pair {pair} has no checklist")
        generated = store.first_version_of_origin(pair, "generated")
        first = v1 or (generated.version if generated else history[0].version if history else None)
        try:
            a = store.checklist_version_for(pair, who, first)
            b = store.checklist_version_for(pair, who, v2)
        except HiddenInBlindMode as error:
            raise _hidden(error) from None
    click.echo(f"version {a.version} ({a.origin}) -> version {b.version} ({b.origin})")
    click.echo(printable(render_diff_text(diff_checklists(a.checklist, b.checklist))))


@checklists.command("restore")
@click.argument("pair")
@click.argument("version", type=int)
@click.option("--as", "annotator", help="Who restores.")
@click.pass_context
@friendly
def checklist_restore(ctx, pair, version, annotator) -> None:
    """Make an older version current again (as a new version)."""
    with open_store(ctx) as store:
        pair = store.resolve_pair(pair)
        try:
            v = store.restore_checklist(pair, version, author=resolve_annotator(annotator))
        except HiddenInBlindMode as error:
            raise _hidden(error) from None
    click.echo(f"restored version {version} of {pair} as version {v.version}")
