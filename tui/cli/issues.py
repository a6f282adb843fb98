"""``benchwright issues``: issue texts as taxonomy seeds (SWE-QA-Pro §2.1): import a JSONL file or a GitHub
REST/GraphQL export, list what was imported."""

from __future__ import annotations

import click


@click.group("issues")
def issues() -> None:
    """Issue texts (SWE-QA-Pro §2.1): import them as taxonomy seeds, list them."""
