"""``benchwright repos add|list|set|check|strip|manifest|move|evidence|pins``: the repositories questions are about,
their eligibility (RepoProbe §3.2), their code-only copies, and re-pinning one to another checkout (stale
evidence)."""

from __future__ import annotations

import json

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.eligibility import (
    ELIGIBLE,
    PAPER_CREATED_ON_OR_AFTER,
    PAPER_MIN_ANSWERED,
    PAPER_MIN_STARS,
    EligibilityRule,
    RepositoryFacts,
    parse_created_on,
)
from benchwright.core.errors import RepositoryError
from benchwright.core.evidence_drift import (
    EVIDENCE_OK,
    EVIDENCE_STALE,
    EVIDENCE_STATUSES,
    EVIDENCE_UNKNOWN,
    UNCHANGED,
    CitationChange,
    diff_excerpt,
)
from benchwright.core.repository import describe_local_repository
from benchwright.core.text import printable

from .common import annotator_option, friendly, open_store, plural


@click.group()
def repos() -> None:
    """Register and list the repositories questions are about."""


def _created_on(ctx, param, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return parse_created_on(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def _sqlite_int(ctx, param, value):
    """A count SQLite's INTEGER can hold (a larger one was an OverflowError traceback at the write)."""
    if value is not None and value > 2**63 - 1:
        raise click.BadParameter(f"{value} is too large (at most {2**63 - 1})")
    return value


def _fact_options(command):
    """``--stars N --created YYYY-MM-DD --answered N``: the eligibility facts (RepoProbe §3.2)."""
    for option in reversed((
        click.option("--stars", type=click.IntRange(min=0), callback=_sqlite_int, help="GitHub stars (RepoProbe §3.2 eligibility)."),
        click.option("--created", callback=_created_on, metavar="YYYY-MM-DD",
                     help="The day the repository was created on GitHub."),
        click.option("--answered", type=click.IntRange(min=0), callback=_sqlite_int,
                     help="Answered GitHub Discussions (with an accepted answer)."),
    )):
        command = option(command)
    return command


@repos.command("add")
@click.argument("name")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--commit", help="Expected commit SHA (checked against a git checkout).")
@click.option("--version", "version", help="Version label for a plain directory (e.g. 3.1.1).")
@click.option("--url", help="Where the repository is published.")
@click.option("--language", help="Main programming language.")
@click.option("--theme", help="Repository theme (e.g. Web Framework).")
@_fact_options
@click.option("--as", "annotator", help="Who registers it (default: configuration, then the OS user).")
@click.pass_context
@friendly
def repo_add(ctx, name, path, commit, version, url, language, theme, stars, created, answered, annotator) -> None:
    """Register the local code base at PATH as NAME (a git checkout, or a directory with --version).

    --stars, --created and --answered record the facts `repos check` reads (RepoProbe §3.2); registering NAME
    again with them replaces the stored ones.
    """
    repository = describe_local_repository(
        name, path, commit=commit, version=version, url=url, language=language, theme=theme
    ).model_copy(update={"stars": stars, "created_on": created, "answered_discussions": answered})
    with open_store(ctx) as store:
        saved = store.add_repository(repository, resolve_annotator(annotator))
    verified = " (commit read from git)" if saved.commit_verified else ""
    click.echo(printable(f"registered {saved.pin}{verified} at {saved.local_path}"))


@repos.command("list")
@click.pass_context
@friendly
def repo_list(ctx) -> None:
    """List registered repositories."""
    with open_store(ctx) as store:
        repos = store.repositories()
    if not repos:
        click.echo("no repositories registered; add one with: benchwright repos add NAME PATH")
    for r in repos:
        derived = f"\t({r.derivation} copy of {r.derived_from})" if r.derived_from else ""
        facts = f"\t{r.facts.describe()}" if r.facts.any() else ""
        click.echo(printable(f"{r.pin}\t{r.local_path or '(not checked out here)'}\t{r.url or ''}{derived}{facts}"))


@repos.command("set")
@click.argument("name")
@_fact_options
@click.pass_context
@friendly
def repo_set(ctx, name, stars, created, answered) -> None:
    """Set the eligibility facts of the registered repository NAME (RepoProbe §3.2; read by `repos check`).

    benchwright never fetches them: take them from the repository's GitHub page or a GraphQL export
    (`pairs import github-discussions` records stargazerCount and createdAt itself).
    """
    if stars is None and created is None and answered is None:
        raise click.UsageError("name at least one of --stars N, --created YYYY-MM-DD, --answered N")
    with open_store(ctx) as store:
        facts = store.set_repository_facts(name, RepositoryFacts(stars, created, answered))
    click.echo(printable(f"{name}: {facts.describe()}"))


@repos.command("check")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--min-stars", type=click.IntRange(min=0), default=PAPER_MIN_STARS, show_default=True,
              help="At least this many GitHub stars.")
@click.option("--created-after", type=click.DateTime(["%Y-%m-%d"]), default=PAPER_CREATED_ON_OR_AFTER.isoformat(),
              show_default=True, metavar="YYYY-MM-DD", help="Created on this day or later.")
@click.option("--min-answered", type=click.IntRange(min=0), default=PAPER_MIN_ANSWERED, show_default=True,
              help="At least this many answered discussions.")
@click.pass_context
@friendly
def repo_check(ctx, names, min_stars, created_after, min_answered) -> None:
    """Say whether each repository NAME (default: every registered checkout) meets RepoProbe's repository
    selection (§3.2: created on or after 2024-01-01, at least 1,000 stars, at least 10 answered discussions;
    the defaults). A fact not known makes a repository `unknown`. Exit 1 when any is not eligible or unknown.
    """
    rule = EligibilityRule(min_stars, created_after.date(), min_answered)
    with open_store(ctx) as store:
        checked = ([store.get_repository(n) for n in dict.fromkeys(names)] if names
                   else [r for r in store.repositories() if not r.derived_from])
    if not checked:
        click.echo("no repositories registered; add one with: benchwright repos add NAME PATH")
        return
    eligible = 0
    for repo in checked:
        result = rule.check(repo.facts)
        eligible += result.eligible
        parts = [*result.failed, *(f"{u} not known (set it: benchwright repos set {repo.name} --{u} "
                                   f"{'YYYY-MM-DD' if u == 'created' else 'N'})" for u in result.unknown)]
        if result.status == ELIGIBLE or not parts:
            parts = list(result.met)
        elif result.met:
            parts.append("met: " + "; ".join(result.met))
        click.echo(printable(f"{repo.name}: {result.status}: {'; '.join(parts)}"))
    click.echo(f"{eligible} of {len(checked)} eligible (at least {min_stars:,} stars, created on or after "
               f"{rule.created_on_or_after.isoformat()}, at least {min_answered:,} answered discussions)")
    if eligible < len(checked):
        ctx.exit(1)


@repos.command("strip")
@click.argument("name")
@click.option("--as", "as_name", metavar="COPY", help="Name of the copy (default: NAME-code-only).")
@click.option("--to", "to", type=click.Path(file_okay=False), help="Folder to write the copy to "
              "(default: repos/COPY beside the project file). It must not exist.")
@click.option("--keep-lines", is_flag=True, help="Keep every remaining line at its original number (removed "
              "lines become blank), so evidence cited against the full tree still resolves.")
@click.option("--force", is_flag=True, help="Rebuild the copy if it exists.")
@click.pass_context
@friendly
def repo_strip(ctx, name, as_name, to, keep_lines, force) -> None:
    """Make the code-only copy of NAME (Code-QA-Bench): docstrings, comments and documentation files removed.

    The copy is registered as its own repository (NAME-code-only), derived from NAME at the same commit; the
    code-only condition runs on it. What was removed is kept in the project: benchwright repos manifest COPY.
    Who registers it: BENCHWRIGHT_ANNOTATOR, else the configuration, else the OS user (--as names the copy).
    """
    from ..services.strip import strip_repository

    with open_store(ctx) as store:
        outcome = strip_repository(store, name, annotator=resolve_annotator(None), as_name=as_name, to=to,
                                   keep_lines=keep_lines, force=force)
    copy = outcome.repository
    if outcome.existed:
        made = "with --keep-lines" if (copy.manifest or {}).get("keep_lines") else "without --keep-lines"
        click.echo(printable(f"{copy.name}, the code-only copy of {outcome.original.pin}, already exists at "
                             f"{copy.local_path} (made {made}); --force rebuilds it"))
        return
    totals = copy.manifest["totals"]
    verb = "rebuilt" if outcome.rebuilt else "made"
    lines = "" if not copy.manifest["keep_lines"] else ", line numbers kept"
    click.echo(printable(f"{verb} {copy.name} from {outcome.original.pin} at {copy.local_path} "
                         f"in {outcome.seconds:.1f} s{lines}"))
    click.echo(f"  python files: {totals['python_files']} ({totals['stripped_files']} stripped); docstrings removed: "
               f"{totals['docstrings']}; comments removed: {totals['comments']} "
               f"(type comments kept: {totals['type_comments_kept']}); lines removed: {totals['lines_removed']}")
    click.echo(f"  files deleted (documentation): {totals['files_deleted']}; files copied: {totals['files_copied']}")
    for what, items in (("copied unchanged (does not parse)", copy.manifest["unchanged"]),
                        ("link not copied", copy.manifest["links"]["skipped"]),
                        ("not copied", copy.manifest["skipped"])):
        for item in items:
            click.echo(printable(f"  {what}: {item['path']}: {item['reason']}"))
    click.echo(printable(f"  the manifest: benchwright repos manifest {copy.name}"))


@repos.command("manifest")
@click.argument("name")
@click.pass_context
@friendly
def repo_manifest(ctx, name) -> None:
    """Print what stripping removed from the copy NAME (JSON: per file, deleted files, totals)."""
    with open_store(ctx) as store:
        repo = store.get_repository(name)
    if repo.manifest is None:
        raise RepositoryError(f"'{name}' is not a copy made by benchwright repos strip, so it has no manifest")
    click.echo(printable(json.dumps(repo.manifest, indent=2, sort_keys=True, ensure_ascii=False)))


# ------------------------------------------------------------------------------------------- re-pinning
PAIRS_SHOWN = 20
"""Pairs ``repos move`` and ``repos evidence`` print in full (stale first); the rest are counted."""
_ORDER = {EVIDENCE_STALE: 0, EVIDENCE_UNKNOWN: 1, EVIDENCE_OK: 2}


def _change_lines(change: CitationChange, *, whole: bool = False) -> list[str]:
    """A citation's change as printed: one line, then its diff (cut by :func:`diff_excerpt`; ``whole``: every line
    of it), indented."""
    out = [f"   {change.describe()}"]
    shown, more = diff_excerpt(change.diff, **({"max_lines": len(change.diff)} if whole else {}))
    out += [f"      {line}" for line in shown]
    if more:
        out.append(f"      … {plural(more, 'more diff line')} (repos evidence NAME --pair #N prints them all)")
    return out


def _print_checks(rows: list[tuple[int, str, tuple[CitationChange, ...]]], *, limit: int | None,
                  whole: bool = False) -> None:
    """Per pair ``#N status`` and its citations other than unchanged, stale pairs first, the first ``limit`` in full
    (None: all), the rest counted by status."""
    ordered = sorted(rows, key=lambda r: (_ORDER.get(r[1], 3), r[0]))
    shown = ordered if limit is None else ordered[:limit]
    for ordinal, status, changes in shown:
        unchanged = sum(1 for c in changes if c.status == UNCHANGED)
        tail = f" ({plural(unchanged, 'citation')} unchanged)" if unchanged else ""
        if not changes:
            tail = " (cites no file)"
        click.echo(f"#{ordinal} {status}{tail}")
        for c in changes:
            if c.status != UNCHANGED:
                click.echo(printable("\n".join(_change_lines(c, whole=whole))))
    rest = ordered[len(shown):]
    if rest:
        counts = ", ".join(f"{sum(1 for r in rest if r[1] == s)} {s}" for s in sorted(EVIDENCE_STATUSES, key=_ORDER.get)
                           if any(r[1] == s for r in rest))
        click.echo(f"... {plural(len(rest), 'more pair')} not shown ({counts}); --all shows every pair")


def _totals(statuses: list[str]) -> str:
    counts = {s: statuses.count(s) for s in EVIDENCE_STATUSES}
    why = " (could not be compared: listed, not stale)" if counts[EVIDENCE_UNKNOWN] else ""
    return (f"{plural(len(statuses), 'pair')}: {counts[EVIDENCE_STALE]} stale, {counts[EVIDENCE_OK]} ok, "
            f"{counts[EVIDENCE_UNKNOWN]} unknown{why}")


@repos.command("move")
@click.argument("name")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--commit", help="The new commit SHA (a git checkout at PATH must be at it; default: read from git).")
@click.option("--version", "version", help="The new version label, for a plain folder.")
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
@click.option("--all", "show_all", is_flag=True, help=f"Print every pair in full (default: the first {PAIRS_SHOWN}).")
@annotator_option("Who moves it (default: configuration, then the OS user).")
@click.pass_context
@friendly
def repo_move(ctx, name, path, commit, version, dry_run, show_all, annotator) -> None:
    """Re-pin NAME to the checkout at PATH (a git checkout, at --commit SHA if given; or a plain folder with
    --version LABEL) and re-check its pairs' citations.

    Each citation of the pairs' current text is compared between the old pin and the new one: unchanged, moved
    (the same lines at other numbers: stale, the new range said), changed (a diff of the cited lines), renamed,
    deleted, or unknown (the old text cannot be read: not stale). The old text is read from the old checkout if
    it is still at the old pin, else from git (the old commit in PATH's repository). Stale pairs are sent back
    to review (--where evidence=stale); nothing else changes. Copies made from NAME (repos strip) are listed as
    out of date.
    """
    from ..services.evidence_moves import apply_move, plan_move

    with open_store(ctx) as store:
        plan = plan_move(store, name, path, commit=commit, version=version)
        if not dry_run:
            apply_move(store, plan, resolve_annotator(annotator))
    before, after = plan.before, plan.after
    verb = "would move" if dry_run else "moved"
    click.echo(printable(f"{verb} {before.pin} ({before.local_path or 'not checked out here'}) to {after.pin} "
                         f"({after.local_path})"))
    click.echo(printable(f"old files read from {plan.old_source}" if plan.old_readable else
                         f"old files could not be read: {plan.old_source}; every citation is unknown"))
    _print_checks([(c.ordinal, c.status, c.changes) for c in plan.checks], limit=None if show_all else PAIRS_SHOWN)
    stale = plan.count(EVIDENCE_STALE)
    sent = "" if not stale else (" (would be sent back to review)" if dry_run else " (sent back to review)")
    click.echo(f"totals: {_totals([c.status for c in plan.checks])}{sent}")
    for copy in plan.derived:
        click.echo(printable(f"now out of date: {copy.name} ({copy.derivation} copy of {name}): re-run benchwright "
                             f"repos strip {name} --as {copy.name} --force"))
    if dry_run:
        click.echo("dry run: nothing was written")
    elif stale:
        click.echo(printable(f"they are back in the review queue (the app's evidence filter: stale); what changed: "
                             f"benchwright repos evidence {name}"))


@repos.command("evidence")
@click.argument("name")
@click.option("--pair", "pair", help="Only this pair (an id, id prefix or #N): every check of it, whole diffs.")
@click.option("--all", "show_all", is_flag=True, help=f"Print every pair in full (default: the first {PAIRS_SHOWN}).")
@click.pass_context
@friendly
def repo_evidence(ctx, name, pair, show_all) -> None:
    """Print the latest evidence check of NAME's pairs (made by repos move), stale first, with what changed."""
    with open_store(ctx) as store:
        repo = store.get_repository(name)
        if pair:
            pid = store.resolve_pair(pair)
            ordinal = store.ordinal_of(pid)
            checks = [c for c in store.evidence_checks(pid) if c.repository == name]
            if not checks:
                click.echo(f"#{ordinal} has no evidence check of {printable(name)} (repos move makes them)")
            for c in checks:
                click.echo(printable(f"{c.created_at} {c.created_by}: {c.from_pin} -> {c.to_pin}"))
                _print_checks([(ordinal, c.status, c.changes)], limit=None, whole=True)
            return
        rows = []
        for p in store.repository_pair_texts(name):
            check = store.evidence_check(p.pair_id)
            if check is not None:
                rows.append((p.ordinal, check.status, check.changes))
    if not rows:
        if repo.derived_from:  # a copy (repos strip) is never moved itself (repos move refuses it): its original is
            click.echo(f"{printable(name)} is a {repo.derivation} copy of {printable(repo.derived_from)}: evidence is "
                       f"checked when {printable(repo.derived_from)} moves (benchwright repos evidence "
                       f"{printable(repo.derived_from)})")
        else:
            click.echo(f"no evidence checks of {printable(name)} yet: benchwright repos move {printable(name)} "
                       "PATH --commit SHA makes them")
        return
    _print_checks(rows, limit=None if show_all else PAIRS_SHOWN)
    click.echo(f"totals: {_totals([r[1] for r in rows])}")


@repos.command("pins")
@click.argument("name")
@click.pass_context
@friendly
def repo_pins(ctx, name) -> None:
    """Print every pin NAME had, oldest first (repos move adds one)."""
    with open_store(ctx) as store:
        pins = store.repository_pins(name)
        current = store.get_repository(name)
    if not pins:
        click.echo(printable(f"{current.pin}\t{current.local_path or '(not checked out here)'}\t(never moved)"))
    for p in pins:
        at = p.commit[:12] if p.commit else p.version_label or "?"
        click.echo(printable(f"{p.created_at}\t{p.created_by}\t{name}@{at}\t{p.local_path or '(no local path)'}"))
