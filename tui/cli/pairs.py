"""``benchwright pairs import FORMAT FILE``, ``pairs history PAIR`` and the text commands (``pairs text`` / ``edit`` /
``revert`` / ``accept-text``): Q&A pairs in, each pair's audit trail, and its text versions."""

from __future__ import annotations

import json

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import ImportReport
from benchwright.core.importers import DEFAULT_CATEGORIES, FORMATS, TARGETS, parse
from benchwright.core.text import printable

from .common import annotator_option, friendly, open_store, parse_where, plural, where_option


@click.group()
def pairs() -> None:
    """Candidate Q&A pairs: import them from a file, print a pair's audit trail, show, edit, revert and accept
    its text versions, check rewritten questions for leaked terms."""


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
    result = parse(fmt, file, repository=repository, mapping=mapping, categories=categories, stream=True,
                   keep_problems=not skip_invalid)
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
    for note in result.notes:
        click.echo(printable(f"  note: {note}"))
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
    click.echo(f"{r.file}: read {plural(r.read, 'record')}, added {plural(r.added, 'Q&A pair')}")
    if r.already_present:
        click.echo(f"  {r.already_present} already in the project (not added again)")
    if r.duplicates_in_file:
        click.echo(f"  {r.duplicates_in_file} repeated earlier records of the same file (added once)")
    if r.repositories_added:
        click.echo(f"  registered {plural(len(r.repositories_added), 'repository', 'repositories')}: {', '.join(r.repositories_added)}")
        click.echo("  (not checked out here; add a local checkout with: benchwright repos add NAME PATH)")
    if r.needs_reference:
        one = len(r.needs_reference) == 1
        click.echo(f"  {plural(len(r.needs_reference), 'pair')} {'has' if one else 'have'} no reference answer and "
                   f"{'needs' if one else 'need'} one:")
        for pid in r.needs_reference:
            click.echo(f"    {pid}")
    if r.skipped:
        click.echo(f"  skipped {plural(len(r.skipped), 'invalid record')}:")
        for p in r.skipped:
            click.echo(f"    {p}")
    if r.filtered:
        click.echo(f"  left out {plural(len(r.filtered), 'record')} by rule:")
        for f in r.filtered[:FILTERED_SHOWN]:
            url = f" {f.url}" if f.url and f.url != f.upstream_id else ""
            ident = f"{f.upstream_id}{url}"
            ident = ident if len(ident) <= 300 else ident[:300] + "…"
            click.echo(printable(f"    {f.place} ({ident}): {f.reason}"))
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



# ------------------------------------------------------------------------------------------- text versions
def _version_line(t, accepted_by: list[str], current: int) -> str:
    """One line of ``pairs text``: number (``*`` current), origin, model, who, when, calls, accepted by."""
    parts = [f"v{t.version}{'*' if t.version == current else ' '}", f"{t.origin:<8}"]
    if t.model:
        parts.append(f"model {t.model}")
    parts.append(f"by {t.created_by or '?'}")
    parts.append(t.created_at[:19])
    if t.call_ids:
        parts.append("calls " + ",".join(map(str, t.call_ids)))
    if t.restored_from is not None:
        parts.append(f"restores v{t.restored_from}")
    if t.source:
        parts.append(f"from {t.source}")
    parts.append("accepted by " + (", ".join(accepted_by) if accepted_by else "-"))
    return printable("  ".join(parts))


def _print_text(label: str, text: str) -> None:
    click.echo(f"{label}:")
    for line in (text or "(none)").split("\n"):
        click.echo("  " + printable(line))


@pairs.command("text")
@click.argument("pair")
@click.option("--diff", "show_diff", is_flag=True,
              help="Show the word diff of the version against the original ([-removed-] {+added+}).")
@click.option("--version", "number", type=click.IntRange(min=1), help="Show this text version (default: the current).")
@click.pass_context
@friendly
def pairs_text(ctx, pair, show_diff, number) -> None:
    """Print PAIR's text versions (origin, model, who, when, who accepted each) and the current text, or with
    --diff its word diff against the original. The current text is what review, checklists, judges and releases
    use; a rewrite (enrich, refine) or an edit after a review sends the pair back to review."""
    from benchwright.core.checklist_diff import render_word_diff

    from ..services.texts import text_diffs, text_label, text_view

    with open_store(ctx) as store:
        view = text_view(store, store.resolve_pair(pair))
    shown = view.version(number)
    click.echo(printable(f"{view.pair_id} (#{view.ordinal}): {plural(len(view.versions), 'text version')}; "
                         f"current: {text_label(view.current)}"))
    for t in view.versions:
        click.echo("  " + _version_line(t, view.accepted_by.get(t.version, []), view.current.version))
    if view.stale_checklist:
        click.echo(f"checklist: stale, {view.stale_note()} (write a new one: benchwright curation run checklist "
                   "--force, or edit it)")
    click.echo(printable(f"version {shown.version} ({text_label(shown)})") + ":")
    if show_diff:
        if shown.version == 1:
            click.echo("  (this is the original text: nothing to compare)")
            return
        q, a = text_diffs(view.original, shown)
        _print_text("question diff against the original", render_word_diff(q))
        _print_text("reference answer diff against the original", render_word_diff(a))
        return
    _print_text("question", shown.question)
    _print_text("reference answer", shown.reference_answer or "")


@pairs.command("edit")
@click.argument("pair")
@click.option("--question", help="The new question text.")
@click.option("--question-file", type=click.Path(), help="Read the new question from this UTF-8 file.")
@click.option("--answer", help="The new reference answer (default: keep the current one).")
@click.option("--answer-file", type=click.Path(), help="Read the new reference answer from this UTF-8 file.")
@click.option("--expect-version", type=click.IntRange(min=1),
              help="Refuse if the current text is no longer this version (compare-and-set; see pairs text).")
@annotator_option("Who edits (default: configuration, then the OS user).")
@click.pass_context
@friendly
def pairs_edit(ctx, pair, question, question_file, answer, answer_file, expect_version, annotator) -> None:
    """Record an edit of PAIR's text (question and/or reference answer) as a new text version; it becomes the
    current text and sends the pair back to review. The other part is kept as it is."""
    from benchwright.core.errors import BenchwrightError

    from ..services.texts import edit_text, read_text_file

    if (question is not None and question_file is not None) or (answer is not None and answer_file is not None):
        raise BenchwrightError("give the text or its file, not both (--question or --question-file, --answer or "
                               "--answer-file)")
    if question_file is not None:
        question = read_text_file(question_file, "question")
    if answer_file is not None:
        answer = read_text_file(answer_file, "reference answer")
    if question is None and answer is None:
        raise BenchwrightError("nothing to edit: give --question/--question-file and/or --answer/--answer-file")
    who = resolve_annotator(annotator)
    with open_store(ctx) as store:
        pid = store.resolve_pair(pair)
        current = store.text_version(pid)
        saved = edit_text(store, pid, current.question if question is None else question,
                          current.reference_answer if answer is None else answer, by=who,
                          expected_version=expect_version if expect_version is not None else current.version)
        _print_saved(pid, saved, f"the text is version {current.version} already", store)


def _print_saved(pid: str, saved, unchanged: str, store=None) -> None:
    """The line of ``pairs edit`` / ``revert``: the version recorded, or why nothing was; and the re-check of
    stale evidence the change made, if it made one."""
    from ..services.texts import text_label

    if saved is None:
        click.echo(f"{pid}: unchanged ({unchanged})")
        return
    click.echo(printable(f"{pid}: recorded {text_label(saved)}; the pair is back in review"))
    check = store.evidence_check(pid) if store is not None else None
    if check is not None and check.from_pin == check.to_pin and check.created_at >= saved.created_at:
        click.echo(printable(f"{pid}: its stale evidence was checked again at {check.to_pin}: {check.status}"))


@pairs.command("revert")
@click.argument("pair")
@click.option("--to", "to_version", type=click.IntRange(min=1), default=1, show_default=True,
              help="The version whose text becomes current again (1: the original).")
@annotator_option("Who reverts (default: configuration, then the OS user).")
@click.pass_context
@friendly
def pairs_revert(ctx, pair, to_version, annotator) -> None:
    """Make an earlier text of PAIR current again (the original by default), as a new version that restores it;
    nothing is deleted."""
    from ..services.texts import revert_text

    who = resolve_annotator(annotator)
    with open_store(ctx) as store:
        pid = store.resolve_pair(pair)
        saved = revert_text(store, pid, by=who, to_version=to_version)
        _print_saved(pid, saved, f"the current text is version {to_version}'s already", store)


@pairs.command("accept-text")
@click.argument("pair")
@click.option("--version", "number", type=click.IntRange(min=1), help="The version accepted (default: the current).")
@annotator_option("Who accepts (default: configuration, then the OS user).")
@click.pass_context
@friendly
def pairs_accept_text(ctx, pair, number, annotator) -> None:
    """Record that you accept a text version of PAIR (a rewrite by enrich or refine, or an edit) as the item."""
    who = resolve_annotator(annotator)
    with open_store(ctx) as store:
        pid = store.resolve_pair(pair)
        v = store.accept_text(pid, who, number)
    click.echo(printable(f"{pid}: {who} accepts text version {v}"))


@pairs.command("leakage")
@where_option
@click.option("--recheck", is_flag=True,
              help="Check every rewritten pair again (after a new checklist, or with other --min-words), not only "
                   "the ones whose current text was never checked.")
@click.option("--min-words", type=click.IntRange(min=1), default=None,
              help="Content words a leaked key-point phrase has at least, for the checks made now (default 3).")
@annotator_option("Who checks (default: configuration, then the OS user).")
@click.pass_context
@friendly
def pairs_leakage(ctx, where, recheck, min_words, annotator) -> None:
    """List the pairs whose current text is a rewrite (enrich, refine) or an edit and whose question gives away
    terms of the reference answer or the checklist that the original question did not have: identifiers, paths
    and key-point phrases, each with its kind and source; then the counts. A text never checked is checked now
    (rewrites and edits are checked as they are saved); --where leakage=leaked selects the leaked pairs
    everywhere."""
    from benchwright.core.leakage import LeakageRules, leaked_terms

    from ..services.leakage import check_rewritten
    from ..services.texts import text_label

    who = resolve_annotator(annotator)
    rules = LeakageRules(min_words=min_words) if min_words is not None else None
    with open_store(ctx) as store:
        ids = store.filtered_pair_ids(who, parse_where(where, facets=store.facets())) if where else None
        rows = check_rewritten(store, ids, by=who, recheck=recheck, rules=rules)
        labels = {r.pair_id: text_label(store.text_version(r.pair_id)) for r in rows if r.check.status == "leaked"}
    for r in rows:
        if r.check.status != "leaked":
            continue
        terms = leaked_terms(r.check.spans)
        click.echo(printable(f"#{r.ordinal} {r.pair_id} ({labels[r.pair_id]}): leaked {plural(len(terms), 'term')}"))
        for s in terms:
            click.echo(printable(f"    {s.kind:<10}  from the {s.source:<16}  {s.text}"))
    leaked = sum(r.check.status == "leaked" for r in rows)
    click.echo(f"{plural(len(rows), 'rewritten pair')}{' matching --where' if where else ''}: {leaked} leaked, "
               f"{len(rows) - leaked} clean; {sum(r.checked_now for r in rows)} checked now")
