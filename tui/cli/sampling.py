"""``benchwright sample`` and ``benchwright selections``: balanced samples over the taxonomy (SWE-QA-Pro §2.4)
written as named selections."""

from __future__ import annotations

import click


@click.command("sample")
def sample() -> None:
    """A balanced sample over clusters and QA types (SWE-QA-Pro §2.4), written as a named selection."""
    raise click.ClickException("not built yet")


@click.group("selections")
def selections() -> None:
    """Named selections (``sample``): list them, show one's members and coverage."""
