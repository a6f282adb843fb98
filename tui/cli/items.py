"""``benchwright items``: item statistics of the pairs across a model panel (mean, spread, share passing,
flags, discrimination)."""

from __future__ import annotations

import click


@click.command("items")
def items() -> None:
    """Item statistics across a model panel: mean, spread, share passing, flags, discrimination."""
    raise click.ClickException("not built yet")
