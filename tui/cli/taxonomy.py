"""``benchwright taxonomy``: versioned two-level topic taxonomies (SWE-QA-Pro §2.1): build, label, edit,
assign, show."""

from __future__ import annotations

import click


@click.group("taxonomy")
def taxonomy() -> None:
    """Topic taxonomies (SWE-QA-Pro §2.1): build, label, edit, assign pairs to leaves, show."""
