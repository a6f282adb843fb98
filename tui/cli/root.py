"""The ``benchwright`` command line (click). It owns no logic: every command calls core, db or exports.

Errors benchwright raises on purpose are printed as ``error: ...`` on stderr with exit code 1 (usage
errors: click's exit code 2); no traceback.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import click

from benchwright.core import demo as demo_mod
from benchwright.core.checklist import is_valid
from benchwright.core.config import data_dir, resolve_annotator, resolve_db_path
from benchwright.core.errors import BenchwrightError, ImportReport
from benchwright.core.importers import FORMATS, TARGETS, parse
from benchwright.core.importers.answers import ANSWER_FORMATS
from benchwright.core.judgment import CONDITIONS
from benchwright.core.repository import describe_local_repository
from benchwright.core.text import printable
from benchwright.db import QueueFilter, Store

from .signals import interrupt_exit_code, received_signal, report_interrupt, signals_as_interrupt


def _friendly(fn):
    """Turn BenchwrightError into a message on stderr and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BenchwrightError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(1)

    return wrapper


def _open(ctx: click.Context, *, create: bool = False) -> Store:
    return Store.open(ctx.obj["db"], create=create)


class _ProjectGroup(click.Group):
    """The top-level group: ``--db PATH`` is accepted anywhere on the line (``benchwright init --db x.db`` as
    well as ``benchwright --db x.db init``); it is moved before the command name before parsing."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        hoisted: list[str] = []
        rest: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--":
                rest += args[i:]
                break
            if a == "--db" and i + 1 < len(args):
                hoisted += [a, args[i + 1]]
                i += 2
                continue
            if a.startswith("--db="):
                hoisted.append(a)
            else:
                rest.append(a)
            i += 1
        return super().parse_args(ctx, hoisted + rest)

    def invoke(self, ctx: click.Context):
        """Run the command with SIGTERM and SIGHUP acting as Ctrl+C (``tui/signals.py``); an interrupted
        command says so on stderr and exits with 128 + the signal number (130 for Ctrl+C)."""
        with signals_as_interrupt():
            try:
                result = super().invoke(ctx)
            except KeyboardInterrupt:
                report_interrupt()
                sys.exit(interrupt_exit_code())
            if received_signal() is not None:  # the command (the app) ended itself on the signal: not a success
                report_interrupt()
                sys.exit(interrupt_exit_code())
            return result


@click.group(cls=_ProjectGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", "db_path", type=click.Path(dir_okay=False), envvar="BENCHWRIGHT_DB",
              help="Project file (default: ./benchwright.db; env BENCHWRIGHT_DB).")
@click.version_option(package_name="benchwright")
@click.pass_context
def main(ctx: click.Context, db_path: str | None) -> None:
    """benchwright: build repository-level code-comprehension benchmarks."""
    ctx.ensure_object(dict)
    ctx.obj["db"] = resolve_db_path(db_path)


@main.command()
@click.pass_context
@_friendly
def init(ctx: click.Context) -> None:
    """Create an empty project file (or upgrade an existing one in place)."""
    with _open(ctx, create=True) as store:
        click.echo(f"project ready: {store.path} ({store.count_pairs()} Q&A pairs)")


# ----------------------------------------------------------------- repositories
@main.group()
def repo() -> None:
    """Register and list the repositories questions are about."""


@repo.command("add")
@click.argument("name")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--commit", help="Expected commit SHA (checked against a git checkout).")
@click.option("--version", "version", help="Version label for a plain directory (e.g. 3.1.1).")
@click.option("--url", help="Where the repository is published.")
@click.option("--language", help="Main programming language.")
@click.option("--theme", help="Repository theme (e.g. Web Framework).")
@click.option("--as", "annotator", help="Who registers it (default: configuration, then the OS user).")
@click.pass_context
@_friendly
def repo_add(ctx, name, path, commit, version, url, language, theme, annotator) -> None:
    """Register the local code base at PATH as NAME (a git checkout, or a directory with --version)."""
    repository = describe_local_repository(
        name, path, commit=commit, version=version, url=url, language=language, theme=theme
    )
    with _open(ctx) as store:
        saved = store.add_repository(repository, resolve_annotator(annotator))
    verified = " (commit read from git)" if saved.commit_verified else ""
    click.echo(f"registered {saved.pin}{verified} at {saved.local_path}")


@repo.command("list")
@click.pass_context
@_friendly
def repo_list(ctx) -> None:
    """List registered repositories."""
    with _open(ctx) as store:
        repos = store.repositories()
    if not repos:
        click.echo("no repositories registered; add one with: benchwright repo add NAME PATH")
    for r in repos:
        click.echo(f"{r.pin}\t{r.local_path or '(not checked out here)'}\t{r.url or ''}")


# ---------------------------------------------------------------------- import
@main.command("import")
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
@_friendly
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
        from .cli_answers import import_answers_file

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
        from .services.releases import import_release

        with _open(ctx) as store:
            pairs, checklists = import_release(store, Path(file), by=resolve_annotator(annotator))
        click.echo(f"{file}: added {_n(pairs, 'Q&A pair')} and {_n(checklists, 'checklist')}")
        return
    result = parse(fmt, file, repository=repository, mapping=mapping)
    with _open(ctx) as store:
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
        click.echo(f"  text repaired: {_n(len(repaired), 'pair')} held invalid Unicode (a lone surrogate), stored "
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
        click.echo(f"  recorded {_n(len(r.updated), 'new text version')} of pairs already in the project (--update):")
        for u in r.updated:
            click.echo(f"    {u.where}: #{u.ordinals[0]} {u.pair_ids[0]} is now at text version {u.version}"
                       f"{_earlier_work(u)}")
    if r.possible_updates:
        click.echo(f"  {_n(len(r.possible_updates), 'record')} with the question of a pair already in the project "
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


# ---------------------------------------------------------------------- review
def _run_app(store: Store, annotator: str, title: str | None = None) -> None:
    """Run the app; after a crash exit 1, saying where the traceback is (see ``tui/crash.py``)."""
    from .app import BenchwrightApp
    from .crash import run_app

    if run_app(BenchwrightApp(store, annotator, title=title)):
        sys.exit(1)


@main.command()
@click.option("--as", "annotator", help="Annotator name (default: BENCHWRIGHT_ANNOTATOR, config, OS user).")
@click.pass_context
@_friendly
def review(ctx, annotator) -> None:
    """Open the review app on the project."""
    path = ctx.obj["db"]
    if not Path(path).exists():
        raise BenchwrightError(f"{path}: no project here; create one with benchwright init, or pass --db")
    with _open(ctx) as store:
        _run_app(store, resolve_annotator(annotator))


@main.command()
@click.pass_context
@click.option("--as", "annotator", help="Annotator name.")
@_friendly
def status(ctx, annotator) -> None:
    """Print the project's counts and this annotator's progress."""
    who = resolve_annotator(annotator)
    with _open(ctx) as store:
        p = store.progress(who)
        click.echo(f"{store.path}: {p.total} Q&A pairs, {p.decided} decided, {p.mine} by {who}")
        for r in store.repositories():
            click.echo(f"  repository {r.pin}: {r.local_path or '(not checked out here)'}")
        for step, c in store.curation_counts().items():
            if any(c.values()):
                click.echo(f"  curation {step}: {c['ok']} ok, {c['failed']} failed, {c['flagged']} flagged")
        for model, condition, n in store.answer_models():
            click.echo(f"  answers {printable(model)} / {condition}: {n}")
        texts = store.text_version_counts()
        if texts["pairs"]:
            click.echo(f"  text versions: {_n(texts['pairs'], 'pair')} with more than one ({texts['versions']} "
                       f"after the first, {texts['imported']} from re-imports); benchwright history PAIR lists them")
        repairs = store.text_repair_counts()
        if repairs:
            from benchwright.db.textguard import TEXT_REPAIR_TABLES

            listed = ", ".join(f"{n} {TEXT_REPAIR_TABLES.get(t, t)}" for t, n in repairs.items())
            click.echo(f"  text repaired (lone surrogates stored as U+FFFD): {listed}")


# ------------------------------------------------------------------ checklists
@main.group()
def checklist() -> None:
    """Checklists (RepoProbe §4.1): schema, import, export, show, diff, history, restore."""


@checklist.command("schema")
def checklist_schema() -> None:
    """Print the JSON Schema of a checklist."""
    from benchwright.core.checklist import checklist_json_schema

    click.echo(json.dumps(checklist_json_schema(), indent=2, sort_keys=True))


def _resolve_pair(store: Store, record, file: str) -> str:
    where = f"{file}, line {record.line}" if record.line else file
    if record.pair_ref:
        try:
            store.ordinal_of(record.pair_ref)
        except BenchwrightError:
            raise BenchwrightError(f"{where}: no Q&A pair with id {record.pair_ref}; nothing was imported") from None
        return record.pair_ref
    if record.question:
        found = store.find_pairs_by_question(record.question)
        if len(found) == 1:
            return found[0]
        what = "no pair has" if not found else f"{len(found)} pairs have"
        raise BenchwrightError(f"{where}: {what} exactly this question; give qa_pair_id instead; nothing was imported")
    raise BenchwrightError(f"{where}: the checklist names no pair; add qa_pair_id, or pass --pair ID")


@checklist.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--pair", "pair", help="The Q&A pair (id, id prefix or #N), for a file holding one foreign rubric.")
@click.option("--format", "fmt", type=click.Choice(["auto", "benchwright", "rubberduck", "checkeval"]),
              default="auto", show_default=True, help="Checklist shape; auto detects it per record.")
@click.option("--as", "annotator", help="Who imports.")
@click.pass_context
@_friendly
def checklist_import(ctx, file, pair, fmt, annotator) -> None:
    """Import checklists: our JSON, RubberDuckBench point rubrics, CheckEval yes/no questions.

    All or nothing. A converted checklist that breaks the rules is stored as a draft with its violations;
    nothing is rescaled.
    """
    if pair:
        with _open(ctx) as store:
            try:
                pair = store.resolve_pair(pair)
            except BenchwrightError as e:
                raise BenchwrightError(f"--pair {pair}: {e}") from None
    from benchwright.core.importers.checklists import conversion_notes, read_checklists

    records = read_checklists(file, fmt=fmt, pair=pair)
    who = resolve_annotator(annotator)
    with _open(ctx) as store:
        targets = [_resolve_pair(store, r, file) for r in records]
        saved = store.import_checklists(
            [(pid, r.checklist, r.source_format, r.draft,
              f"import {Path(file).name} line {r.line or 1}" if r.text_repaired else None)
             for pid, r in zip(targets, records, strict=True)],
            author=who,
        )
    drafts = 0
    for (pid, version), r in zip(saved, records, strict=True):
        state = "draft" if (r.violations or r.draft) else "valid"
        drafts += bool(r.violations or r.draft)
        click.echo(f"{pid}: version {version} ({r.source_format}, {state})")
        for v in r.violations:
            click.echo(f"    {v}")
        for note in conversion_notes(r):
            click.echo(f"    converted: {note}")
        if r.text_repaired:
            click.echo("    text repaired: invalid Unicode (a lone surrogate) stored as U+FFFD")
    click.echo(f"imported {_n(len(saved), 'checklist')} ({_n(drafts, 'draft')} to fix in the editor)")


@checklist.command("export")
@click.option("--out", type=click.Path(dir_okay=False), help="Write here instead of standard output.")
@click.pass_context
@_friendly
def checklist_export(ctx, out) -> None:
    """Write every pair's current checklist as JSON lines (our schema, with version and origin)."""
    with _open(ctx) as store:
        rows = [
            json.dumps({"qa_pair_id": pid, "version": v.version, "origin": v.origin, "draft": v.is_draft,
                        "valid": v.is_valid, **v.checklist.model_dump(mode="json")}, ensure_ascii=False, sort_keys=True)
            for pid, v in store.current_checklists()
        ]
    text = "".join(r + "\n" for r in rows)
    if out:
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(rows)} checklists to {out}")
    else:
        click.echo(text, nl=False)


@checklist.command("show")
@click.argument("pair")
@click.option("--version", "version", type=int, help="A version number (default: the current one).")
@click.option("--as", "annotator", help="Who asks (blind mode hides others' edits until you reviewed).")
@click.pass_context
@_friendly
def checklist_show(ctx, pair, version, annotator) -> None:
    """Print a pair's checklist and its validity."""
    who = resolve_annotator(annotator)
    with _open(ctx) as store:
        pair = store.resolve_pair(pair)
        visible = store.visible_checklist_versions(pair, who)
        if version is None:
            version = visible[-1] if visible else None
            if version is None and store.checklist_version(pair) is not None:
                raise BenchwrightError(f"pair {pair}: blind mode hides the checklist edits of others until you "
                                       "submit your review")
        elif version not in visible and store.checklist_version(pair) is not None and \
                version <= store.checklist_version(pair).version:
            raise BenchwrightError(f"pair {pair}: version {version} is another annotator's edit, hidden in blind "
                                   "mode until you submit your review")
        v = store.checklist_version(pair, version) if version is not None else None
    if v is None:
        raise BenchwrightError(f"pair {pair} has no checklist")
    click.echo(f"version {v.version} · {v.origin}{' · draft' if v.is_draft else ''} · {v.author} · {v.created_at}")
    for i, it in enumerate(v.checklist.items, start=1):
        click.echo(f"{i}. [{it.kind.value}, weight {it.weight}] {printable(it.key_point)}")
        for t in sorted(it.rubric, key=lambda t: -t.score):
            click.echo(f"     {t.score}: {printable(t.criterion)}")
    click.echo("valid" if v.is_valid else "violations:\n" + "\n".join(f"  {x}" for x in v.violations))


@checklist.command("history")
@click.argument("pair")
@click.pass_context
@_friendly
def checklist_history(ctx, pair) -> None:
    """List the versions of a pair's checklist."""
    with _open(ctx) as store:
        pair = store.resolve_pair(pair)
        history = store.checklist_history(pair)
    if not history:
        raise BenchwrightError(f"pair {pair} has no checklist")
    for v in history:
        extra = f" (restored from {v.restored_from})" if v.restored_from else ""
        click.echo(f"v{v.version}\t{v.origin}{' draft' if v.is_draft else ''}\t{'valid' if v.is_valid else 'invalid'}"
                   f"\t{v.author}\t{v.created_at}{extra}")


@checklist.command("diff")
@click.argument("pair")
@click.argument("v1", type=int, required=False)
@click.argument("v2", type=int, required=False)
@click.pass_context
@_friendly
def checklist_diff(ctx, pair, v1, v2) -> None:
    """Word-level diff of two versions ([-removed-] {+added+}); default: generated (or first) vs current."""
    from benchwright.core.checklist_diff import diff_checklists, render_diff_text

    with _open(ctx) as store:
        pair = store.resolve_pair(pair)
        history = store.checklist_history(pair)
        if not history:
            raise BenchwrightError(f"pair {pair} has no checklist")
        generated = store.first_version_of_origin(pair, "generated")
        v1 = v1 or (generated.version if generated else history[0].version)
        v2 = v2 or history[-1].version
        a, b = store.checklist_version(pair, v1), store.checklist_version(pair, v2)
    click.echo(f"version {a.version} ({a.origin}) -> version {b.version} ({b.origin})")
    click.echo(printable(render_diff_text(diff_checklists(a.checklist, b.checklist))))


@checklist.command("restore")
@click.argument("pair")
@click.argument("version", type=int)
@click.option("--as", "annotator", help="Who restores.")
@click.pass_context
@_friendly
def checklist_restore(ctx, pair, version, annotator) -> None:
    """Make an older version current again (as a new version)."""
    with _open(ctx) as store:
        pair = store.resolve_pair(pair)
        v = store.restore_checklist(pair, version, author=resolve_annotator(annotator))
    click.echo(f"restored version {version} of {pair} as version {v.version}")


# ----------------------------------------------------------- several annotators
@main.command()
@click.option("--annotators", required=True, help="Comma-separated names, e.g. ada,bob,cy.")
@click.option("--overlap", type=int, default=2, show_default=True, help="Annotators per pair.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the tie-breaking order.")
@click.option("--as", "annotator", help="Who assigns.")
@click.pass_context
@_friendly
def assign(ctx, annotators, overlap, seed, annotator) -> None:
    """Give every pair to OVERLAP annotators, balanced and reproducible (replaces earlier assignments).

    With an overlap above 1, blind mode is turned on: nobody sees another's review of a pair before
    submitting their own.
    """
    names = [a for a in annotators.split(",")]
    with _open(ctx) as store:
        loads = store.assign(names, overlap, seed=seed, by=resolve_annotator(annotator))
        blind = store.blind_mode
    for who, n in loads.items():
        click.echo(f"{who}\t{n} pairs")
    click.echo(f"overlap {overlap}, seed {seed}; blind mode {'on' if blind else 'off'}")


@main.command()
@click.argument("state", type=click.Choice(["on", "off"]))
@click.option("--as", "annotator", help="Who changes it.")
@click.pass_context
@_friendly
def blind(ctx, state, annotator) -> None:
    """Turn blind mode on or off for the project."""
    with _open(ctx) as store:
        store.set_setting("blind_mode", state, by=resolve_annotator(annotator))
    click.echo(f"blind mode {state}")


def _n(count: int, noun: str) -> str:
    """``1 pair``, ``2 pairs``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.pass_context
@_friendly
def agreement(ctx, as_json) -> None:
    """Inter-annotator agreement: Cohen's kappa per annotator pair, Fleiss' kappa and Krippendorff's alpha
    for the decision and each QA criterion; key-point and weight agreement of checklists."""
    from dataclasses import asdict

    from rich.console import Console
    from rich.table import Table

    from benchwright.core.agreement import agreement_report, project_checklist_agreement

    with _open(ctx) as store:
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
        f"Checklists edited by two or more annotators: {checklists.n_pairs} pairs; key points matched "
        f"{checklists.n_matched}/{checklists.n_key_points} ({_fmt(checklists.match_rate)}); weights "
        f"Krippendorff's alpha (interval) {checklists.weight_alpha.text} (n={checklists.weight_alpha.n_items})"
    )


@main.group()
def adjudication() -> None:
    """Pairs whose reviews or checklist edits disagree, and their final decisions."""


@adjudication.command("list")
@click.pass_context
@_friendly
def adjudication_list(ctx) -> None:
    """List pairs awaiting adjudication and what their annotators disagree on."""
    with _open(ctx) as store:
        items = store.disagreements()
        for d in items:
            click.echo(f"#{store.ordinal_of(d.qa_pair_id)}\t{d.qa_pair_id}\t{', '.join(d.fields)}\t{', '.join(d.annotators)}")
    click.echo(f"{_n(len(items), 'pair')} await{'s' if len(items) == 1 else ''} adjudication")


@adjudication.command("accept-unanimous")
@click.option("--as", "annotator", help="The adjudicator.")
@click.pass_context
@_friendly
def adjudication_unanimous(ctx, annotator) -> None:
    """Record the final decision of every pair whose reviews all agree (bulk)."""
    with _open(ctx) as store:
        done = store.accept_unanimous(resolve_annotator(annotator))
    click.echo(f"adjudicated {_n(len(done), 'unanimous pair')}")


@main.command()
@click.argument("pair")
@click.option("--decision", type=click.Choice(["accept", "reject", "revise"]), required=True)
@click.option("--reason", required=True, help="Why (kept with the adjudication).")
@click.option("--checklist-from", "checklist_from", help="Make this annotator's checklist edit the adjudicated one.")
@click.option("--as", "annotator", help="The adjudicator.")
@click.pass_context
@_friendly
def adjudicate(ctx, pair, decision, reason, checklist_from, annotator) -> None:
    """Record the final decision on PAIR (an id or #N) with a reason."""
    with _open(ctx) as store:
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


@main.command()
@click.argument("pair")
@click.option("--as", "annotator", help="Who is asking (blind mode hides others' work until you reviewed).")
@click.pass_context
@_friendly
def history(ctx, pair, annotator) -> None:
    """Print PAIR's audit trail: every decision, review, note, checklist version and adjudication."""
    from .screens.history import is_private_event

    who = resolve_annotator(annotator)
    with _open(ctx) as store:
        pid = store.resolve_pair(pair)
        texts = store.text_versions(pid)
        if len(texts) > 1:
            click.echo(f"{pid} has {len(texts)} text versions; the current text is version {texts[-1].version} "
                       f"({texts[-1].origin}, by {printable(texts[-1].created_by or '?')})")
        see_all = store.may_see_others(pid, who)
        hidden = shown = 0
        for e in store.events_of(pid):
            if not see_all and is_private_event(e, who):
                hidden += 1
                continue
            shown += 1
            click.echo(f"{e['created_at']}\t{printable(e['actor'])}\t{e['kind']}\t"
                       f"{printable(json.dumps(e['before'], ensure_ascii=False))} -> "
                       f"{printable(json.dumps(e['after'], ensure_ascii=False))}")
    if not shown and not hidden:
        click.echo(f"no events for {pair} yet (decisions, reviews, notes, checklist versions and adjudications "
                   "appear here)")
    if hidden:
        click.echo(f"({_n(hidden, 'event')} of other annotators hidden until you submit your review: blind mode)")


@main.command()
@click.argument("other", type=click.Path(dir_okay=False))
@click.pass_context
@_friendly
def merge(ctx, other) -> None:
    """Bring another copy's reviews, notes, checklist versions and adjudications into this project.

    Idempotent: merging the same copy again adds nothing. Conflicting checklist edits are reported and show
    up in the adjudication queue.
    """
    from benchwright.db.merge import merge_project

    with _open(ctx) as store:
        report = merge_project(store, other)
    added = ", ".join(_n(n, t.replace("_", " ").rstrip("s")) for t, n in report.added.items()) or "nothing new"
    click.echo(f"merged {other}: {added}")
    if report.unknown_pairs:
        click.echo(f"  {report.unknown_pairs} rows name pairs this project does not have (not merged)")
    for c in report.conflicts:
        click.echo(f"  conflict: {c}")


# -------------------------------------------------------------------- releases
@main.group()
def release() -> None:
    """Frozen, versioned, checksummed benchmark releases."""


def _preflight_lines(pre) -> list[str]:
    lines = [f"included: {len(pre.included)} pairs"]
    for reason, n in pre.reasons().items():
        lines.append(f"excluded: {n} pairs: {reason}")
    return lines


@release.command("preflight")
@click.option("--list", "list_all", is_flag=True, help="List every excluded pair with its reason.")
@click.pass_context
@_friendly
def release_preflight(ctx, list_all) -> None:
    """Show what a release would include and exclude, and why."""
    with _open(ctx) as store:
        pre = store.release_preflight()
        for line in _preflight_lines(pre):
            click.echo(line)
        if list_all:
            for pid, reason in pre.excluded:
                click.echo(f"  #{store.ordinal_of(pid)}\t{pid}\t{reason}")


@release.command("create")
@click.argument("name")
@click.option("--version", "version", required=True, help="Semantic version X.Y.Z.")
@click.option("--out", "out", type=click.Path(file_okay=False), default="releases", show_default=True,
              help="Folder that receives NAME-VERSION/.")
@click.option("--with-annotators", is_flag=True, help="Write annotator names instead of pseudonymous ids.")
@click.option("--license", "license_", default="cc-by-4.0", show_default=True)
@click.option("--previous", "previous", type=click.Path(file_okay=False),
              help="The previous release folder (default: where it was written), for the changelog.")
@click.option("--as", "annotator", help="Who releases.")
@click.pass_context
@_friendly
def release_create(ctx, name, version, out, with_annotators, license_, previous, annotator) -> None:
    """Preflight, then write NAME-VERSION (JSONL, Parquet, dataset card, manifest, changelog)."""
    from .services.releases import create_release

    with _open(ctx) as store:
        pre = store.release_preflight()
        for line in _preflight_lines(pre):
            click.echo(line)
        notes: list[str] = []
        path = create_release(store, pre, name, version, Path(out), by=resolve_annotator(annotator),
                              with_annotators=with_annotators, license=license_,
                              previous_path=Path(previous) if previous else None, notes=notes)
    for note in notes:
        click.echo(note)
    if not notes:  # an adopted folder was written from the state of its own time: its card lists its fields
        click.echo(f"wrote {path}")
        click.echo(_extra_fields_line(pre))


def _extra_fields_line(pre) -> str:
    """Which imported extra fields the release carries in each row's ``extra`` (none are dropped)."""
    from benchwright.core.text import printable
    from benchwright.exports import extra_field_counts

    counts = extra_field_counts(c.pair.extra for c in pre.included)
    if not counts:
        return "extra fields: none (no included pair has fields beyond the release columns)"
    return "extra fields kept in `extra`: " + ", ".join(f"{printable(k)} ({_n(n, 'pair')})" for k, n in counts.items())


@release.command("rebuild")
@click.argument("name")
@click.option("--version", "version", required=True)
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, help="Folder to write into.")
@click.option("--with-annotators", is_flag=True)
@click.pass_context
@_friendly
def release_rebuild(ctx, name, version, out, with_annotators) -> None:
    """Write a recorded release again from the current state with its recorded time (same state, same bytes)."""
    from .services.releases import rebuild_release

    with _open(ctx) as store:
        path = rebuild_release(store, name, version, Path(out), by="", with_annotators=with_annotators)
    click.echo(f"wrote {path}")


@release.command("verify")
@click.argument("folder", type=click.Path(file_okay=False))
@_friendly
def release_verify(folder) -> None:
    """Check every checksum and the schema of a release folder."""
    from benchwright.exports import verify_release

    report = verify_release(Path(folder))
    for problem in report.problems:
        click.echo(f"  {problem}")
    if not report.ok:
        raise BenchwrightError(f"{folder}: the release differs from its manifest ({len(report.problems)} problems)")
    click.echo(f"{folder}: every checksum and the schema match")


# ---------------------------------------------------------------------- probes
@main.group()
def probe() -> None:
    """NITR probes: import, scaffold, run against variants, sign the oracle off."""


@probe.command("import")
@click.argument("case_dir", type=click.Path(file_okay=False))
@click.argument("evaluator_dir", type=click.Path(file_okay=False))
@click.option("--spec", type=click.Path(dir_okay=False), help="SPEC.md (default: CASE_DIR/SPEC.md).")
@click.option("--variants", "variants_dir", type=click.Path(file_okay=False),
              help="Variants folder (default: CASE_DIR/variants, else EVALUATOR_DIR/variants).")
@click.option("--as", "annotator", help="Who imports.")
@click.pass_context
@_friendly
def probe_import(ctx, case_dir, evaluator_dir, spec, variants_dir, annotator) -> None:
    """Import a probe: case folder (starter code, TASK*.md, SPEC.md) and evaluator (pipeline.json)."""
    from .services.probes import import_probe

    with _open(ctx) as store:
        probe_obj, variants = import_probe(store, Path(case_dir), Path(evaluator_dir), spec=spec,
                                           variants_dir=variants_dir, by=resolve_annotator(annotator))
    click.echo(f"imported probe {probe_obj.id} ({probe_obj.granularity}, {probe_obj.primary_dimension}) with "
               f"{_n(len(probe_obj.pipeline.modules), 'module')} and {_n(len(variants), 'variant')}")


@probe.command("new")
@click.argument("dest", type=click.Path(file_okay=False))
@click.option("--id", "probe_id", required=True, help="The new probe's id.")
@_friendly
def probe_new(dest, probe_id) -> None:
    """Scaffold a small working C++ probe (CMake, test, evaluator, variants) to edit."""
    from benchwright.core.probes import scaffold_probe

    if Path(dest).exists() and any(Path(dest).iterdir()):
        raise BenchwrightError(f"{dest}: not empty; choose a new folder")
    scaffold_probe(Path(dest), probe_id)
    click.echo(f"wrote probe {probe_id} to {dest}; import it with: benchwright probe import {dest}/case {dest}/evaluator")


@probe.command("list")
@click.pass_context
@_friendly
def probe_list(ctx) -> None:
    """List probes with their validation state."""
    with _open(ctx) as store:
        for pid in store.probe_ids():
            rec = store.probe_record(pid)
            click.echo(f"{pid}\t{rec['primary_dimension']}\t{len(rec['variants'])} variants\t{store.validation_state(pid)}"
                       f"\t{printable(rec['title'])}")


@probe.command("run")
@click.argument("probe_id")
@click.option("--variant", "variant_names", multiple=True, help="Variant name (repeatable; default: all).")
@click.option("--timeout", "timeout_s", type=float, default=300.0, show_default=True, help="Seconds per command.")
@click.option("--as", "annotator", help="Who runs.")
@click.pass_context
@_friendly
def probe_run(ctx, probe_id, variant_names, timeout_s, annotator) -> None:
    """Run the probe's oracle against its variants (fresh workspace each) and store the runs with logs.

    Each run's line shows pass, fail (caught by the oracle), failed to build (caught by the compiler) or error,
    and the tests each unit_test module ran; the shortcuts' lines say what caught each one."""
    from benchwright.core.probes import separation

    from .services.probes import run_probe_variants

    with _open(ctx) as store:
        runs = run_probe_variants(store, probe_id, list(variant_names) or None, timeout_s=timeout_s,
                                  by=resolve_annotator(annotator), progress=lambda m: click.echo(f"  {printable(m)}"))
        state = store.validation_state(probe_id)
    for r in runs:
        name = r.variant.name if r.variant else "(starter)"
        verdict = "as expected" if r.matches_expectation else ("UNEXPECTED" if r.matches_expectation is False else "")
        if r.caught_by == "build" and r.variant is not None and r.variant.kind == "shortcut":
            verdict = "the compiler caught it, not the oracle"
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


@probe.command("signoff")
@click.argument("probe_id")
@click.option("--verdict", type=click.Choice(["signed-off", "not-signed-off"]), required=True)
@click.option("--reason", default="", help="Why (required for not-signed-off).")
@click.option("--as", "annotator", help="Who signs.")
@click.pass_context
@_friendly
def probe_signoff(ctx, probe_id, verdict, reason, annotator) -> None:
    """Record the annotator's verdict on the probe's oracle (a later change to the probe makes it stale)."""
    with _open(ctx) as store:
        store.sign_off(probe_id, resolve_annotator(annotator), verdict, reason)
        click.echo(f"{probe_id}: {store.validation_state(probe_id)}")


# ------------------------------------------------------------------------ demo
def prepare_demo(folder: Path) -> Path:
    """Create (or reuse) the demo project in ``folder``; return the project file. Idempotent."""
    folder.mkdir(parents=True, exist_ok=True)
    repository = demo_mod.demo_repository()
    # One project per click version, so upgrading click never leaves a demo pinned to another version.
    db_path = folder / f"demo-click-{repository.version_label}.db"
    sample = demo_mod.prepare_demo_sample(folder / f"demo-click-{repository.version_label}.jsonl")
    with Store.open(db_path) as store:
        store.add_repository(repository, "benchwright-demo")
        result = parse("jsonl", sample, repository=demo_mod.DEMO_REPOSITORY, mapping=demo_mod.DEMO_MAPPING)
        store.apply_import(result, annotator="benchwright-demo", file_path=sample,
                           repository=demo_mod.DEMO_REPOSITORY)
        _demo_probes(store)
        for question_start, checklist in demo_mod.demo_checklists():
            pair_ids = [
                row.id for row in store.queue_page("benchwright-demo", QueueFilter(text=question_start), limit=2)
            ]
            if pair_ids and store.checklist_version(pair_ids[0]) is None:
                store.save_checklist(pair_ids[0], checklist, author="benchwright-demo", origin="generated",
                                     draft=not is_valid(checklist))
        _demo_answers(store)
    return db_path


def _demo_answers(store: Store) -> None:
    """Sample answers and judgments so the judge inspector (``j``) has something to show (idempotent)."""
    from benchwright.core.importers.answers import AnswerRecord

    for i, rec in enumerate(demo_mod.demo_answers()):
        rows = store.queue_page("benchwright-demo", QueueFilter(text=rec["question_startswith"]), limit=1)
        if not rows:
            continue
        pair_id = rows[0].id
        store.import_answers([AnswerRecord(line=i + 1, text=rec["answer"], pair_ref=pair_id)], model=rec["model"],
                             condition=rec["condition"], created_by="benchwright-demo", source_format="demo")
        (answer,) = store.answers(pair_id=pair_id, model=rec["model"], condition=rec["condition"])
        version = store.checklist_version(pair_id)
        for j in rec["judgments"]:
            store.save_judgment(answer.id, j["judge"], j["judge_model"], entries=j["entries"],
                                run_index=j["run_index"], checklist_version=version.version if version else None,
                                created_by="benchwright-demo", uid=f"demo-{answer.id}-{j['judge']}-{j['run_index']}")
        fm = rec.get("failure_mode")
        if fm and store.failure_mode(answer.id) is None:
            store.add_failure_mode(answer.id, fm["mode"], fm["rationale"], "llm", judge_model="sample-judge")


def _demo_probes(store: Store) -> None:
    """Import the demo probes shipped with benchwright (once; a newer benchwright's probes replace them)."""
    from benchwright.core.probes import probe_fingerprint, read_probe_folder, sample_probe_dirs

    known = set(store.probe_ids())
    for folder in sample_probe_dirs():
        probe_obj, variants = read_probe_folder(folder)
        fingerprint = probe_fingerprint(probe_obj, variants)
        if probe_obj.id in known and store.probe_record(probe_obj.id)["fingerprint"] == fingerprint:
            continue
        store.save_probe(probe_obj, variants, fingerprint, by="benchwright-demo")


@main.command()
@click.option("--as", "annotator", help="Annotator name.")
@click.option("--no-open", is_flag=True, help="Prepare the demo project and print its path; do not open the app.")
@_friendly
def demo(annotator, no_open) -> None:
    """Open the app on a bundled sample project about click (created once in the user data folder)."""
    db_path = prepare_demo(data_dir() / "demo")
    if no_open:
        click.echo(str(db_path))
        return
    with Store.open(db_path) as store:
        _run_app(store, resolve_annotator(annotator), title="demo project")


# Command groups that live in their own modules register themselves on ``main`` when imported.
from . import cli_answers, cli_generate, cli_judge, cli_llm, cli_report  # noqa: E402, F401

if __name__ == "__main__":  # pragma: no cover
    main()
