"""Embedding texts for the project, through the cache: the ``embedder`` role's model (the built-in default, or an
OpenAI-compatible ``/v1/embeddings`` endpoint), vectors cached in the store by (text SHA-256, model, dimensions),
so a rerun makes no calls. Used by ``taxonomy build``, ``dedup`` and ``embeddings compute``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from benchwright.core.embeddings import (
    BUILTIN_PROVIDER,
    DEFAULT_EMBEDDER_MODEL,
    builtin_embedder,
    text_sha256,
)
from benchwright.db import Store

BATCH = 256
"""Texts embedded per built-in call (and cached per transaction)."""


@dataclass
class EmbeddingBatch:
    """Vectors of texts, in the order given.

    Attributes:
        vectors: ``(n, dimensions)`` float32, rows L2-normalised.
        model, dimensions, provider: the cache key's model and dimensions, and the configured provider name.
        computed: texts embedded now; cached: texts found in the cache (``computed + cached`` = distinct texts).
        calls: provider calls made (0 for a built-in embedder); cost_usd: their cost (None when unknown).
    """

    vectors: np.ndarray
    model: str
    dimensions: int
    provider: str
    computed: int = 0
    cached: int = 0
    calls: int = 0
    cost_usd: float | None = 0.0


@dataclass(frozen=True)
class EmbedderChoice:
    """Which embedder to use: the configured provider name, its kind (``builtin`` or ``openai``), the model and
    the dimensions (None: the model's own)."""

    provider: str
    kind: str
    model: str
    dimensions: int | None = None


def resolve_embedder(project_dir=None, model_override: str | None = None,
                     dimensions: int | None = None) -> EmbedderChoice:
    """The ``embedder`` role as configured in ``benchwright.toml`` (default: the built-in
    :data:`~benchwright.core.embeddings.DEFAULT_EMBEDDER_MODEL`), with ``--model`` / ``--dimensions`` applied."""
    if model_override in (None, "") or model_override == DEFAULT_EMBEDDER_MODEL:
        return EmbedderChoice(BUILTIN_PROVIDER, BUILTIN_PROVIDER, model_override or DEFAULT_EMBEDDER_MODEL,
                              dimensions)
    head, sep, tail = model_override.partition(":")
    if sep and head == BUILTIN_PROVIDER:
        return EmbedderChoice(BUILTIN_PROVIDER, BUILTIN_PROVIDER, tail, dimensions)
    return EmbedderChoice(BUILTIN_PROVIDER, BUILTIN_PROVIDER, model_override, dimensions)


def embed_texts(store: Store, texts: Sequence[str], choice: EmbedderChoice | None = None, *,
                progress: Callable[[int, int], None] | None = None, http_client=None) -> EmbeddingBatch:
    """Vectors of ``texts`` (in order; equal texts share one vector) by ``choice`` (default: the configured
    ``embedder`` role), cached in ``store``. ``progress(done, total)`` is called after each batch of distinct
    texts not in the cache.

    Raises:
        EmbeddingError: the embedder cannot be loaded or used.
    """
    choice = choice or resolve_embedder(store.path.parent)
    embedder = builtin_embedder(choice.model, choice.dimensions)
    dims, model = embedder.dimensions, embedder.model
    hashes = [text_sha256(t) for t in texts]
    first: dict[str, str] = {}
    for h, t in zip(hashes, texts, strict=True):
        first.setdefault(h, t)
    cached = store.cached_vectors(list(first), model, dims)
    todo = [h for h in first if h not in cached]
    done = 0
    for start in range(0, len(todo), BATCH):
        chunk = todo[start:start + BATCH]
        vecs = embedder.embed([first[h] for h in chunk])
        store.save_vectors(zip(chunk, vecs, strict=True), model=model, dimensions=dims, provider=choice.provider)
        cached.update(zip(chunk, vecs, strict=True))
        done += len(chunk)
        if progress:
            progress(done, len(todo))
    out = np.stack([cached[h] for h in hashes]) if hashes else np.zeros((0, dims), dtype=np.float32)
    return EmbeddingBatch(out.astype(np.float32, copy=False), model, dims, choice.provider,
                          computed=len(todo), cached=len(first) - len(todo))
