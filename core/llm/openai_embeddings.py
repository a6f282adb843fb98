"""Text embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM serving an embedding model)
through the official ``openai`` SDK, every call in the ledger (SWE-QA-Pro §2.1/§2.3 embed with Qwen3-8B-Embedding,
which vLLM serves this way).

Wire: ``AsyncOpenAI.embeddings.create(model=..., input=[...], encoding_format="float")``, plus ``dimensions`` only
when asked for (OpenAI takes it from ``text-embedding-3`` on; ``text-embedding-ada-002`` on api.openai.com is
refused before any request). Request limits (OpenAI's: at most 2048 inputs, 8192 tokens per input, 300000 tokens
summed over a request; ``[roles.embedder]`` ``max_inputs`` / ``max_input_tokens`` / ``max_request_tokens``)
are kept by :func:`plan_requests`, with tokens estimated as UTF-8 bytes / 3 rounded up
(:data:`BYTES_PER_TOKEN`; no tokenizer is assumed): a text over ``max_input_tokens`` by that estimate, or an
empty one, is an error naming it before any request; nothing is truncated.

Ledger (:func:`embed_batch`): one ``llm_calls`` row per request, purpose ``embed``, input tokens from
``usage.prompt_tokens``, cost from ``[prices]`` (input price), latency, request id, HTTP attempts, status and
error. A failed request is recorded and raised as :class:`~benchwright.core.embeddings.EmbeddingError`; an answer
with the wrong number of vectors, vectors of unequal or unexpected length, or numbers that are not finite is
recorded ``invalid`` and raised, never returned. The API key is read from the environment only and scrubbed from
every message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx2
import numpy as np
import openai

from ..embeddings import EmbeddingError, normalize_rows, text_sha256
from . import scrub as _scrub
from ._sdk_common import SDKErrors, read_api_key, to_llm_error
from .base import CallStatus, LLMError, Usage
from .client import CallRecord, Ledger, Price

PURPOSE = "embed"
"""``llm_calls.purpose`` of an embeddings request."""

BYTES_PER_TOKEN = 3
"""The token estimate: a text of N UTF-8 bytes counts as ceil(N / 3) tokens (BPE tokenizers such as cl100k and
Qwen's average nearer 4 bytes a token on English and code, so the estimate errs on the large side)."""

OFFICIAL_HOST = "api.openai.com"
NO_DIMENSIONS_MODELS = ("text-embedding-ada-002",)
"""Models api.openai.com serves without the ``dimensions`` parameter (it came with ``text-embedding-3``)."""

NO_KEY_PLACEHOLDER = "not-needed"

_ERRORS = SDKErrors(status=openai.APIStatusError, timeout=openai.APITimeoutError,
                    connection=openai.APIConnectionError, base=openai.OpenAIError)


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: its UTF-8 bytes / :data:`BYTES_PER_TOKEN`, rounded up (at least 1)."""
    return max(1, math.ceil(len(text.encode("utf-8", "surrogatepass")) / BYTES_PER_TOKEN))


@dataclass(frozen=True)
class EmbeddingLimits:
    """What one request may carry: ``max_inputs`` texts, ``max_input_tokens`` per text, ``max_request_tokens``
    summed (tokens estimated by :func:`estimate_tokens`)."""

    max_inputs: int = 2048
    max_input_tokens: int = 8192
    max_request_tokens: int = 300000


def plan_requests(texts: Sequence[str], limits: EmbeddingLimits, labels: Sequence[str] | None = None
                  ) -> list[list[int]]:
    """Indices of ``texts`` grouped into requests, in order, each within ``limits``.

    Args:
        labels: how an error names each text (default ``text N``, 1-based).

    Raises:
        EmbeddingError: an empty text, or one over ``max_input_tokens`` by the estimate (named, with its first
            characters, its byte count and the estimate; nothing is sent).
    """
    groups: list[list[int]] = []
    current: list[int] = []
    tokens = 0
    for i, text in enumerate(texts):
        label = labels[i] if labels is not None else f"text {i + 1}"
        if not text.strip():
            raise EmbeddingError(f"{label} is empty: an embeddings endpoint refuses empty input")
        n = estimate_tokens(text)
        if n > limits.max_input_tokens:
            head = text[:60].replace("\n", " ")
            raise EmbeddingError(
                f"{label} ({len(text.encode('utf-8', 'surrogatepass')):,} bytes, about {n:,} tokens at "
                f"{BYTES_PER_TOKEN} bytes a token, starting {head!r}) is over the embedder's max_input_tokens "
                f"({limits.max_input_tokens:,}); raise [roles.embedder] max_input_tokens if the model takes more, or "
                "shorten the text; nothing was sent")
        if current and (len(current) >= limits.max_inputs or tokens + n > limits.max_request_tokens):
            groups.append(current)
            current, tokens = [], 0
        current.append(i)
        tokens += n
    if current:
        groups.append(current)
    return groups


@dataclass
class EmbeddingResponse:
    """One answer: ``vectors`` in input order, the model the server named, usage (None when not reported),
    request id, latency (seconds), HTTP attempts and the parameters sent."""

    vectors: list[list[float]]
    model: str
    usage: Usage | None
    request_id: str | None
    latency_s: float
    attempts: int
    params_sent: dict


class OpenAIEmbeddingProvider:
    """An OpenAI-compatible embeddings endpoint (settings as for :class:`~.openai_provider.OpenAIProvider`).

    Raises:
        LLMConfigError: ``api_key_env`` names an unset variable (at construction, before any call).
    """

    kind = "openai"

    def __init__(self, name: str = "openai", *, base_url: str | None = None,
                 api_key_env: str | None = "OPENAI_API_KEY", timeout_s: float = 60.0, max_retries: int = 2,
                 concurrency: int = 8, http_client: httpx2.AsyncClient | None = None):
        self.name = name
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self._key = read_api_key(name, api_key_env, allow_missing=True)
        self._client = openai.AsyncOpenAI(api_key=self._key or NO_KEY_PLACEHOLDER, base_url=base_url,
                                          timeout=timeout_s, max_retries=max_retries, http_client=http_client)
        self.base_url: str | None = str(self._client.base_url).rstrip("/")
        self.secrets = _scrub.env_secrets([self._key])

    def check_dimensions(self, model: str, dimensions: int | None) -> None:
        """Refuse ``dimensions`` for a model api.openai.com serves without it (:data:`NO_DIMENSIONS_MODELS`).

        Raises:
            EmbeddingError: naming the model and the option.
        """
        if dimensions is not None and model in NO_DIMENSIONS_MODELS \
                and (urlsplit(self.base_url or "").hostname or "") == OFFICIAL_HOST:
            raise EmbeddingError(f"{model} takes no dimensions parameter (OpenAI added it with text-embedding-3); "
                                 "leave --dimensions and [roles.embedder] dimensions unset")

    @staticmethod
    def body(model: str, texts: Sequence[str], dimensions: int | None = None) -> dict[str, Any]:
        """The request body (``embeddings.create`` keyword arguments; also a batch line's ``body``)."""
        kwargs: dict[str, Any] = {"model": model, "input": list(texts), "encoding_format": "float"}
        if dimensions is not None:
            kwargs["dimensions"] = dimensions
        return kwargs

    async def embed(self, model: str, texts: Sequence[str], dimensions: int | None = None) -> EmbeddingResponse:
        """Vectors of ``texts`` (one request).

        Raises:
            LLMError: HTTP error after the SDK's retries, timeout, connection error, or an unreadable answer.
        """
        kwargs = self.body(model, texts, dimensions)
        t0 = time.perf_counter()
        try:
            raw = await self._client.embeddings.with_raw_response.create(**kwargs)
            answer = raw.parse()
        except _ERRORS.caught as e:
            raise to_llm_error(e, _ERRORS, provider=self.name, base_url=self.base_url, timeout_s=self.timeout_s,
                               secret=self._key) from None
        latency = time.perf_counter() - t0
        data = sorted(getattr(answer, "data", None) or [], key=lambda d: getattr(d, "index", 0) or 0)
        u = getattr(answer, "usage", None)
        usage = None if u is None else Usage(input_tokens=getattr(u, "prompt_tokens", None) or 0)
        params = {k: v for k, v in kwargs.items() if k in ("encoding_format", "dimensions")}
        params["inputs"] = len(texts)
        return EmbeddingResponse(vectors=[list(getattr(d, "embedding", None) or []) for d in data],
                                 model=getattr(answer, "model", None) or model, usage=usage,
                                 request_id=raw.request_id, latency_s=latency, attempts=raw.retries_taken + 1,
                                 params_sent=params)

    async def aclose(self) -> None:
        """Close the SDK client and its HTTP connections."""
        await self._client.close()


def request_hash(provider: OpenAIEmbeddingProvider, model: str, texts: Sequence[str], dimensions: int | None) -> str:
    """SHA-256 (hex) of what determines an embeddings answer: provider kind, base URL, model, dimensions and the
    texts' hashes (the ledger's ``request_hash``; embeddings are cached in the ``embeddings`` table, not here)."""
    payload = {"provider": provider.kind, "base_url": (provider.base_url or "").rstrip("/"), "model": model,
               "dimensions": dimensions, "texts": [text_sha256(t) for t in texts], "purpose": PURPOSE}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def answer_problem(response: EmbeddingResponse, count: int, dimensions: int | None) -> str | None:
    """Why ``response`` cannot be used for ``count`` texts at ``dimensions`` (asked for, or known as the model's own;
    None: any length, equal for all):
    the wrong number of vectors, unequal or unexpected lengths, an empty vector, a value that is not a finite
    number. None when it is usable."""
    if len(response.vectors) != count:
        return f"the answer holds {len(response.vectors)} vectors for {count} texts"
    lengths = {len(v) for v in response.vectors}
    if len(lengths) > 1:
        return f"the answer's vectors have different lengths ({', '.join(map(str, sorted(lengths)))})"
    length = lengths.pop() if lengths else 0
    if length == 0:
        return "the answer's vectors are empty"
    if dimensions is not None and length != dimensions:
        return f"the answer's vectors have {length} dimensions where {dimensions} were expected"
    for v in response.vectors:
        if not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in v):
            return "the answer's vectors hold values that are not finite numbers"
    return None


async def _embed_through_batch(batcher: Any, provider: OpenAIEmbeddingProvider, record: CallRecord, model: str,
                               texts: Sequence[str], dimensions: int | None) -> EmbeddingResponse:
    """One embeddings request through the batch API (``/v1/embeddings`` lines; issue 19): the stored or new
    result, or the online answer when it did not succeed in its batch (never used as vectors). Sets the record's
    batch fields when the answer came from a batch.

    Raises:
        LLMError: the online retry failed; BatchDeferred: handed off.
    """
    from .batch import ResultKind
    from .openai_batch import embedding_line, embedding_response

    body = provider.body(model, texts, dimensions)
    t0 = time.perf_counter()
    item, batch_id = await batcher.request_line(lambda cid: embedding_line(cid, body),
                                                request_hash=record.request_hash, purpose=PURPOSE)
    if item.kind is not ResultKind.SUCCEEDED:
        return await provider.embed(model, texts, dimensions)
    vectors, usage = embedding_response(item)
    record.batch_id, record.batch_custom_id = batch_id, item.custom_id
    resp = item.raw.get("response") or {}
    answer = resp.get("body") or {}
    params = {k: v for k, v in body.items() if k in ("encoding_format", "dimensions")}
    params["inputs"] = len(texts)
    return EmbeddingResponse(vectors=vectors, model=answer.get("model") or model, usage=usage,
                             request_id=resp.get("request_id"), latency_s=time.perf_counter() - t0, attempts=1,
                             params_sent=params)


async def embed_batch(provider: OpenAIEmbeddingProvider, ledger: Ledger, prices: dict[str, Price], model: str,
                      texts: Sequence[str], dimensions: int | None = None, *,
                      expect: int | None = None, batcher: Any = None) -> tuple[np.ndarray, CallRecord]:
    """One embeddings request, recorded in ``ledger``: ``(vectors (len(texts), d) float32 L2-normalised, the
    ledger row)`` (``record.id`` its id, ``record.cost_usd`` its cost, None without a price or usage).
    ``dimensions`` is sent (None: not sent); ``expect`` is the length the vectors must have when it is not sent
    (the model's own dimensions, known from earlier answers; None: any). With ``batcher`` (a
    :class:`~.batch.Batcher` on the provider's Batch API) the request goes into a batch (``embeddings compute
    --batch``): the row names the batch and costs the batch price.

    Raises:
        EmbeddingError: the request failed (its row has status ``error``, the message names the row) or the
            answer is unusable (:func:`answer_problem`; status ``invalid``). Nothing of the batch is returned.
    """
    record = CallRecord(provider=provider.name, provider_kind=provider.kind, base_url=provider.base_url,
                        requested_model=model, returned_model=None, template_id=None, template_hash=None,
                        request_hash=request_hash(provider, model, texts, dimensions), repeat=0, attempt=1,
                        params={"encoding_format": "float", "inputs": len(texts),
                                **({"dimensions": dimensions} if dimensions is not None else {})},
                        status=CallStatus.OK, purpose=PURPOSE)
    t0 = time.perf_counter()
    try:
        response = (await provider.embed(model, texts, dimensions) if batcher is None else
                    await _embed_through_batch(batcher, provider, record, model, texts, dimensions))
    except asyncio.CancelledError:
        if batcher is not None:  # the batch keeps running at the provider: nothing to record
            raise
        record.status, record.error = CallStatus.CANCELLED, "cancelled before the answer arrived"
        record.latency_s = time.perf_counter() - t0
        ledger.record_call(record)
        raise
    except LLMError as e:
        record.latency_s = time.perf_counter() - t0
        record.status, record.error = e.status, _scrub.scrub_text(str(e), provider.secrets)
        record.http_status, record.http_attempts = e.http_status, e.attempts
        record.request_id = _scrub.scrub_text(e.request_id, provider.secrets)
        call_id = ledger.record_call(record)
        raise EmbeddingError(f"{record.error} (ledger call {call_id}; vectors already computed stay cached: "
                             "run again to continue)") from None
    record.latency_s = response.latency_s
    record.returned_model = _scrub.scrub_text(response.model, provider.secrets)
    record.request_id = _scrub.scrub_text(response.request_id, provider.secrets)
    record.http_attempts = response.attempts
    record.params = dict(response.params_sent)
    record.usage = response.usage or Usage()
    record.usage_missing = response.usage is None
    price = prices.get(record.returned_model or "") or prices.get(model)
    record.cost_usd = (price.cost(record.usage, batch=record.batch_id is not None)
                       if price and response.usage is not None else None)
    problem = answer_problem(response, len(texts), dimensions if dimensions is not None else expect)
    if problem:
        record.status, record.error = CallStatus.INVALID, f"{provider.name}: {problem}"
        call_id = ledger.record_call(record)
        raise EmbeddingError(f"{provider.name}: unusable answer from {provider.base_url}: {problem}; nothing of this "
                             f"batch was cached (ledger call {call_id})")
    ledger.record_call(record)
    return normalize_rows(np.asarray(response.vectors, dtype=np.float32)), record
