"""``benchwright repos add|list|strip|manifest``: the repositories questions are about, and their code-only
copies."""

from __future__ import annotations

import json

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import RepositoryError
from benchwright.core.repository import describe_local_repository
from benchwright.core.text import printable

from ..services.strip import strip_repository
from .common import friendly, open_store


@click.group()
def repos() -> None:
    """Register and list the repositories questions are about."""


@repos.command("add")
@click.argument("name")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--commit", help="Expected commit SHA (checked against a git checkout).")
@click.option("--version", "version", help="Version label for a plain directory (e.g. 3.1.1).")
@click.option("--url", help="Where the repository is published.")
@click.option("--language", help="Main programming language.")
@click.option("--theme", help="Repository theme (e.g. Web Framework).")
@click.option("--as", "annotator", help="Who registers it (default: configuration, then the OS user).")
@click.pass_context
@friendly
def repo_add(ctx, name, path, commit, version, url, language, theme, annotator) -> None:
    """Register the local code base at PATH as NAME (a git checkout, or a directory with --version)."""
    repository = describe_local_repository(
        name, path, commit=commit, version=version, url=url, language=language, theme=theme
    )
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
        click.echo(printable(f"{r.pin}\t{r.local_path or '(not checked out here)'}\t{r.url or ''}{derived}"))


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
