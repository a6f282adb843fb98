"""``benchwright embeddings``: compute and inspect the cached text embeddings (the ``embedder`` role)."""

from __future__ import annotations

import click


@click.group("embeddings")
def embeddings() -> None:
    """Text embeddings (the embedder role): compute them into the cache, show what is cached."""
