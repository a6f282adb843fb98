"""``benchwright links add|list``: the link store, saved contents of external URLs that the enrich step resolves."""

from __future__ import annotations

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError

from .common import friendly, open_store


# ------------------------------------------------------------------------------------------------- links
@click.group()
def links() -> None:
    """The link store: saved contents of external URLs that the enrich step resolves (runs are often offline)."""


@links.command("add")
@click.argument("url")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--as", "annotator", help="Who adds it.")
@click.pass_context
@friendly
def links_add(ctx, url, file, annotator) -> None:
    """Save FILE's text as the content of URL."""
    from benchwright.core.curation import PAGE_CHARS, is_external_url, normalize_url

    if not is_external_url(url):
        raise BenchwrightError(f"{url}: not an external http(s) URL (no spaces; localhost and private addresses "
                               "are ignored)")
    key = normalize_url(url)
    with open_store(ctx) as store:
        link = store.add_link(key, file, by=resolve_annotator(annotator))
    note = f" for {key} (the #fragment is dropped)" if key != url else ""
    click.echo(f"saved {key} ({len(link.content):,} characters from {file}){note}")
    if len(link.content) > PAGE_CHARS:
        click.echo(f"  note: only the first {PAGE_CHARS:,} characters go to the model; save the relevant part "
                   "to keep the rest")


@links.command("list")
@click.pass_context
@friendly
def links_list(ctx) -> None:
    """List saved links."""
    with open_store(ctx) as store:
        rows = store.links()
    if not rows:
        click.echo("no links saved; add one with: benchwright links add URL FILE")
    for lk in rows:
        click.echo(f"{lk.url}\t{len(lk.content):,} chars\t{lk.source_file}\t{lk.added_at}")

