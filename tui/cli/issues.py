"""``benchwright issues``: issue texts as taxonomy seeds (SWE-QA-Pro §2.1): import a JSONL file or a GitHub
REST/GraphQL export, list what was imported."""

from __future__ import annotations

from pathlib import Path

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.importers.github_issues import parse_github_issues
from benchwright.core.text import printable
from benchwright.core.vocabulary import ISSUE_TEXT_MAX_BYTES, ISSUE_TEXT_MIN_BYTES

from .common import annotator_option, friendly, open_store, plural, shown_name

FILTERED_SHOWN = 20
"""Issue texts left out that the import summary lists one by one; the rest are counted (all are stored)."""


@click.group("issues")
def issues() -> None:
    """Issue texts (SWE-QA-Pro §2.1): import them as taxonomy seeds, list them."""


@issues.command("import")
@click.argument("file", type=click.Path(dir_okay=True))
@click.option("--repo", "repository", required=True, help="Registered repository the issues are about.")
@annotator_option("Who imports (default: configuration, then the OS user).")
@click.pass_context
@friendly
def issues_import(ctx, file, repository, annotator) -> None:
    """Import the issues of FILE (JSON lines, a GitHub REST list, or GraphQL pages; docs/data-methods.md) as
    issue texts of repository --repo: title, a blank line, body, kept when 10 bytes <= text <= 16 KB.

    All or nothing: a file with any invalid record imports nothing. Pull requests and texts outside the bounds
    are left out and listed. Importing the same file again adds nothing.
    """
    with open_store(ctx) as store:
        store.get_repository(repository)  # an unregistered --repo: the error names 'repos add'
        result = parse_github_issues(Path(file), file, repository)
        report = store.import_issues(result, annotator=resolve_annotator(annotator), file_path=file,
                                     repository=repository)
    click.echo(printable(f"{file}: read {report.read} records, added {plural(report.added, 'issue text')} "
                         f"to {shown_name(repository)}"))
    if report.already_present:
        changed = f" ({len(report.changed)} with another text now; the stored text is kept)" if report.changed else ""
        click.echo(f"  {report.already_present} already in the project (not added again){changed}")
    if report.duplicates_in_file:
        click.echo(f"  {report.duplicates_in_file} repeated earlier records of the same file (added once)")
    if report.filtered:
        click.echo(f"  left out {plural(len(report.filtered), 'record')} (texts must be {ISSUE_TEXT_MIN_BYTES} to "
                   f"{ISSUE_TEXT_MAX_BYTES} bytes; pull requests are not issues):")
        for f in report.filtered[:FILTERED_SHOWN]:
            url = "" if not f.url else f" {f.url}" if len(f.url) <= 300 else f" {f.url[:300]}…"
            click.echo(printable(f"    {f.place}{url}: {f.reason}"))
        if len(report.filtered) > FILTERED_SHOWN:
            click.echo(f"    ... and {len(report.filtered) - FILTERED_SHOWN} more (every one is in the import "
                       "batch's filtered_json)")


TITLE_CHARS = 100
"""Characters of an issue title ``issues list`` prints (the rest is cut, marked …)."""


@issues.command("list")
@click.option("--repo", "repository", help="Only the issues of this repository.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="Issues printed at most.")
@click.pass_context
@friendly
def issues_list(ctx, repository, limit) -> None:
    """Print the imported issue texts: number, bytes, labels, title (literal text)."""
    with open_store(ctx) as store:
        if repository:
            store.get_repository(repository)
        counts = store.issue_counts()
        rows = store.issues(repository, limit=limit)
    total = counts.get(repository, 0) if repository else sum(counts.values())
    if not total:
        click.echo("no issue texts imported" + (f" for {shown_name(repository)}" if repository else "")
                   + "; import them with: benchwright issues import FILE --repo NAME")
        return
    for i in rows:
        number = f"#{i.number}" if i.number is not None else "-"
        labels = ",".join(label.replace("\n", " ") for label in i.labels)  # one line per issue
        repo = "" if repository else f"{shown_name(i.repository, 30)}  "
        click.echo(f"{repo}{number:>7}  {i.text_bytes:>6} B  [{shown_name(labels, 40)}]  "
                   f"{shown_name(i.title.replace(chr(10), ' '), TITLE_CHARS)}")
    if total > len(rows):
        click.echo(f"... {total - len(rows)} more (--limit N)")
    repos = "" if repository else f" in {len(counts)} {'repository' if len(counts) == 1 else 'repositories'}"
    click.echo(plural(total, "issue text") + repos)
