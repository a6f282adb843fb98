"""``benchwright repos add|list``: the repositories questions are about."""

from __future__ import annotations

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.repository import describe_local_repository
from benchwright.core.text import printable

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
        click.echo(printable(f"{r.pin}\t{r.local_path or '(not checked out here)'}\t{r.url or ''}"))
