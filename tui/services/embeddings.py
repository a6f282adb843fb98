"""Embedding texts for the project, through the cache: the ``embedder`` role's model (the built-in default, or an
OpenAI-compatible ``/v1/embeddings`` endpoint), vectors cached in the store by (text SHA-256, model, dimensions),
so a rerun makes no calls. Used by ``taxonomy build``, ``dedup`` and ``embeddings compute``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from benchwright.core.embeddings import BUILTIN_PROVIDER, EmbeddingError, builtin_embedder, text_sha256
from benchwright.db import Store

from .llm import project_dir_of

BATCH = 256
"""Texts embedded per built-in call (and cached per transaction)."""


@dataclass
class EmbeddingBatch:
    """Vectors of texts, in the order given.

    Attributes:
        vectors: ``(n, dimensions)`` float32, rows L2-normalised.
        model, dimensions, provider: the cache key's model and dimensions, and the configured provider name.
        computed: texts embedded now; cached: texts found in the cache (``computed + cached`` = distinct texts).
        calls: provider calls made (0 for a built-in embedder); cost_usd: their known cost (None when no call's
            cost is known); cost_unknown: calls without a known cost (no price configured, or no usage reported).
    """

    vectors: np.ndarray
    model: str
    dimensions: int
    provider: str
    computed: int = 0
    cached: int = 0
    calls: int = 0
    cost_usd: float | None = 0.0
    cost_unknown: int = 0


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
    :data:`~benchwright.core.embeddings.DEFAULT_EMBEDDER_MODEL`), with ``--model`` / ``--dimensions`` applied.

    Args:
        project_dir: the project folder (its ``benchwright.toml``; None: the user file only).
        model_override: ``MODEL`` or ``PROVIDER:MODEL`` (:meth:`benchwright.core.llm.config.LLMConfig.embedder`).
        dimensions: replaces the configured dimensions.

    Raises:
        LLMConfigError: a bad configuration (named file and key), an unknown provider or built-in model, a
            provider of kind anthropic.
        EmbeddingError: dimensions a built-in model does not have.
    """
    from benchwright.core.llm.config import load_llm_config

    cfg = load_llm_config(project_dir).embedder(model_override or None, dimensions)
    if cfg.kind == BUILTIN_PROVIDER:
        builtin_embedder(cfg.model, cfg.dimensions)  # an unsupported dimension fails here, before any work
    return EmbedderChoice(cfg.provider, cfg.kind, cfg.model, cfg.dimensions)


def embed_texts(store: Store, texts: Sequence[str], choice: EmbedderChoice | None = None, *,
                progress: Callable[[int, int], None] | None = None, http_client=None,
                batch=None) -> EmbeddingBatch:
    """Vectors of ``texts`` (in order; equal texts share one vector) by ``choice`` (default: the configured
    ``embedder`` role), cached in ``store``. ``progress(done, total)`` is called after each batch of distinct
    texts not in the cache. A provider of kind ``openai`` is called through the ledger
    (:mod:`benchwright.core.llm.openai_embeddings`), requests split by the role's limits and sent
    ``concurrency`` at a time; each batch is cached as it arrives, so after a failure a rerun embeds only what is
    left. ``http_client``: an ``httpx2.AsyncClient`` for the SDK (tests). ``batch``
    (:class:`~benchwright.tui.services.batches.BatchOptions`): the requests go through the provider's Batch API
    (``/v1/embeddings`` lines; docs/batches.md); not for the built-in embedders.

    Raises:
        EmbeddingError: the embedder cannot be loaded or used, a text is over the token limit, a request failed
            or answered unusably (recorded in the ledger; the batches before it stay cached).
        LLMConfigError: the provider's API key variable is not set.
    """
    choice = choice or resolve_embedder(project_dir_of(store))
    hashes = [text_sha256(t) for t in texts]
    first: dict[str, str] = {}
    for h, t in zip(hashes, texts, strict=True):
        first.setdefault(h, t)
    if choice.kind != BUILTIN_PROVIDER:
        return _embed_remote(store, texts, hashes, first, choice, progress, http_client, batch_options=batch)
    if batch is not None:
        raise EmbeddingError(f"--batch is for an embeddings provider; the built-in {choice.model} runs here, "
                             "with no calls to batch")
    embedder = builtin_embedder(choice.model, choice.dimensions)
    dims, model = embedder.dimensions, embedder.model
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
    return EmbeddingBatch(_ordered(cached, hashes, dims), model, dims, choice.provider, computed=len(todo),
                          cached=len(first) - len(todo))


def _ordered(cached: dict, hashes: list[str], dims: int) -> np.ndarray:
    out = np.stack([cached[h] for h in hashes]) if hashes else np.zeros((0, dims), dtype=np.float32)
    return out.astype(np.float32, copy=False)


def _embed_remote(store: Store, texts: Sequence[str], hashes: list[str], first: dict[str, str],
                  choice: EmbedderChoice, progress, http_client, *, batch_options=None) -> EmbeddingBatch:
    """:func:`embed_texts` for a provider of kind ``openai``."""
    from benchwright.core.llm.config import load_llm_config
    from benchwright.core.llm.openai_embeddings import (
        EmbeddingLimits,
        OpenAIEmbeddingProvider,
        embed_batch,
        plan_requests,
    )

    config = load_llm_config(project_dir_of(store))
    cfg = replace(config.embedder(f"{choice.provider}:{choice.model}"), dimensions=choice.dimensions)
    s = cfg.settings
    model = cfg.model
    native = store.native_embedding_dimensions(model, cfg.provider)
    # A version recorded at the model's own dimensions is asked for without the parameter, as it was made.
    wire_dims = None if cfg.dimensions is not None and cfg.dimensions == native else cfg.dimensions
    dims = cfg.dimensions or native
    cached = store.cached_vectors(list(first), model, dims) if dims else {}
    todo = [h for h in first if h not in cached]
    batch = EmbeddingBatch(np.zeros((0, dims or 1), dtype=np.float32), model, dims or 0, cfg.provider,
                           computed=0, cached=len(first) - len(todo))
    if not todo:
        batch.vectors = _ordered(cached, hashes, dims or 0)
        return batch
    position: dict[str, int] = {}
    for i, h in enumerate(hashes):
        position.setdefault(h, i)
    groups = plan_requests([first[h] for h in todo],
                           EmbeddingLimits(cfg.max_inputs, cfg.max_input_tokens, cfg.max_request_tokens),
                           labels=[f"text {position[h] + 1} of {len(texts)}" for h in todo])
    provider = OpenAIEmbeddingProvider(cfg.provider, base_url=s.base_url, api_key_env=s.api_key_env,
                                       timeout_s=s.timeout_s, max_retries=s.max_retries, concurrency=s.concurrency,
                                       http_client=http_client)
    provider.check_dimensions(model, wire_dims)
    costs: list[float | None] = []
    failed: list[BaseException] = []
    state = {"dims": dims, "done": 0}

    async def one(group: list[int]) -> None:
        async with sem:
            if failed:
                return
            chunk = [todo[i] for i in group]
            try:
                vecs, record = await embed_batch(provider, store, config.prices, model, [first[h] for h in chunk],
                                                 wire_dims, expect=state["dims"], batcher=batcher)
            except EmbeddingError as e:
                batch.calls += 1
                failed.append(e)
                return
            batch.calls += 1
            costs.append(record.cost_usd)
            if state["dims"] is None:
                state["dims"] = vecs.shape[1]
            elif vecs.shape[1] != state["dims"]:
                failed.append(EmbeddingError(
                    f"{cfg.provider}: {model} answered with {vecs.shape[1]} dimensions where {state['dims']} were "
                    f"expected (ledger call {record.id}); nothing of that batch was cached"))
                return
            store.save_vectors(zip(chunk, vecs, strict=True), model=model, dimensions=state["dims"],
                               provider=cfg.provider, call_id=record.id)
            cached.update(zip(chunk, vecs, strict=True))
            batch.computed += len(chunk)
            state["done"] += len(chunk)
            if progress:
                progress(state["done"], len(todo))

    async def run() -> None:
        try:
            await asyncio.gather(*(one(g) for g in groups))
        finally:
            await provider.aclose()

    batcher = None
    if batch_options is not None:
        from benchwright.core.llm.batch import Batcher
        from benchwright.core.llm.openai_batch import OpenAIBatchBackend

        from .batches import ACTIVE, batch_policy

        if batch_options.batch_file is not None:
            raise EmbeddingError("--batch-file is for chat requests; embeddings go to the provider's Batch API "
                                 "(--batch)")
        batcher = Batcher(OpenAIBatchBackend(provider), store, batch_policy(config, batch_options), provider=cfg.provider,
                          provider_kind="openai", base_url=provider.base_url)
        ACTIVE.add(batcher)
    # in batch mode every request is in flight at once, so that they share a batch
    sem = asyncio.Semaphore(max(1, s.concurrency) if batcher is None else 10**6)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(run())
    else:  # called from inside an event loop (an app's handler): the requests get a thread and a loop of their own
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, run()).result()
    known = [c for c in costs if c is not None]
    batch.cost_unknown = batch.calls - len(known)
    batch.cost_usd = sum(known) if known or not batch.calls else None
    if failed:
        raise failed[0]
    batch.dimensions = state["dims"]
    batch.vectors = _ordered(cached, hashes, state["dims"])
    return batch
