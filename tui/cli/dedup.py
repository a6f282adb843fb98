"""``benchwright dedup``: semantic deduplication of questions (SWE-QA-Pro §2.3), and the resolution of
duplicate groups."""

from __future__ import annotations

import click


@click.group("dedup")
def dedup() -> None:
    """Semantic dedup of questions (SWE-QA-Pro §2.3): find duplicate groups, list and resolve them."""
