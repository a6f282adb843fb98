"""The OpenAI Batch API as a :class:`~.batch.BatchBackend` (issue 19), over the official SDK.

The SDK client is the provider's own (``OpenAIProvider._client``).

- A line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``, ``body`` exactly the online
  ``chat.completions.create`` keyword arguments (:func:`openai_batch_line`); embeddings lines go to
  ``/v1/embeddings`` (:func:`embedding_line`). One batch holds one endpoint.
- Submission uploads the lines as a JSONL file (``files.create(purpose="batch")``) and creates the batch with
  ``metadata = {"benchwright_batch": label}`` (:meth:`OpenAIBatchBackend.find` looks for it).
- Statuses: ``validating``, ``in_progress``, ``finalizing``, ``cancelling`` are still running; ``completed``,
  ``expired``, ``cancelled`` ended; ``failed`` is a batch refused as a whole (its ``errors``).
- Results are two files: the output file (lines ``{"id", "custom_id", "response": {"status_code", "request_id",
  "body"}, "error": null}``) and the error file (``"response": null`` or a non-200 status, ``"error": {"code",
  "message"}``; code ``batch_expired`` and ``batch_cancelled`` for requests that never ran). Both are read line by
  line (:func:`result_item`).

:func:`openai_batch_line` and :func:`openai_batch_response` need no live client: ``--batch-file``
(:class:`~.batch.FileBatchBackend`) uses them.
"""

from __future__ import annotations

import base64
import contextlib
import json
import struct
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ._sdk_common import to_llm_error
from .anthropic_batch import _parse_time, check_custom_id
from .base import LLMError, LLMRequest, LLMResponse, Usage
from .batch import OPENAI_LIMITS, BatchItem, BatchItemFailed, RemoteBatch, ResultKind

if TYPE_CHECKING:
    from .openai_provider import OpenAIProvider

CHAT_URL = "/v1/chat/completions"
EMBEDDINGS_URL = "/v1/embeddings"
LABEL_KEY = "benchwright_batch"
LABEL_WINDOW = timedelta(minutes=5)
"""How far before the local commit a batch found by its label may have been created (clock skew; the label is
unique, so a wide window costs only a longer listing)."""
"""The batch metadata key holding the local label."""

RUNNING = ("validating", "in_progress", "finalizing", "cancelling")
"""OpenAI batch statuses that are not ended."""

ERROR_KINDS = {"batch_expired": ResultKind.EXPIRED, "batch_cancelled": ResultKind.CANCELLED}
"""An error-file line's ``error.code`` that is not an error of the request itself."""


def openai_batch_line(provider: OpenAIProvider, custom_id: str, request: LLMRequest) -> dict:
    """The batch line of a chat request: ``{"custom_id", "method": "POST", "url": "/v1/chat/completions",
    "body"}``, ``body`` the online call's keyword arguments (no network needed).

    Raises:
        LLMConfigError: a ``custom_id`` outside ``[a-zA-Z0-9_-]{1,64}``, or what the online call refuses.
    """
    check_custom_id(custom_id, provider.name)
    body, _ = provider._body(request)
    return {"custom_id": custom_id, "method": "POST", "url": CHAT_URL, "body": body}


def embedding_line(custom_id: str, body: dict) -> dict:
    """The batch line of an embeddings request (``body``: ``{"model", "input", ...}`` as ``embeddings.create``
    takes it).

    Raises:
        LLMConfigError: a ``custom_id`` outside ``[a-zA-Z0-9_-]{1,64}``.
    """
    check_custom_id(custom_id, "openai")
    return {"custom_id": custom_id, "method": "POST", "url": EMBEDDINGS_URL, "body": body}


def result_item(line: dict) -> BatchItem:
    """One output- or error-file line as a :class:`~.batch.BatchItem`: ``response.status_code`` 200 without an
    error is ``succeeded``; an ``error`` with code ``batch_expired`` / ``batch_cancelled`` is ``expired`` /
    ``cancelled``; any other error or status is ``errored``. ``raw`` is the line."""
    error = line.get("error")
    response = line.get("response") if isinstance(line.get("response"), dict) else {}
    if error:
        code = error.get("code") if isinstance(error, dict) else None
        kind = ERROR_KINDS.get(str(code), ResultKind.ERRORED)
    elif response.get("status_code") == 200:
        kind = ResultKind.SUCCEEDED
    else:
        kind = ResultKind.ERRORED
    return BatchItem(str(line.get("custom_id")), kind, line)


def _failure(item: BatchItem, who: str) -> BatchItemFailed:
    raw = item.raw if isinstance(item.raw, dict) else {}
    err = raw.get("error")
    if not err:
        response = raw.get("response") if isinstance(raw.get("response"), dict) else {}
        body = response.get("body")
        err = body.get("error") if isinstance(body, dict) else None
        if err is None and response.get("status_code") is not None:
            err = f"HTTP {response.get('status_code')}"
    if isinstance(err, dict):
        parts = [str(err[k]) for k in ("code", "type", "message") if err.get(k)]
        detail = ": ".join(parts)
    else:
        detail = str(err or "")
    return BatchItemFailed(f"{who}: batch request {item.custom_id} {item.kind}" + (f": {detail}" if detail else ""),
                           kind=item.kind)


def openai_batch_response(item: BatchItem, request: LLMRequest, provider: OpenAIProvider | None = None) -> LLMResponse:
    """The chat completion in a succeeded output line, read exactly as the online answer
    (:func:`~.openai_provider.read_completion`; request id: the line's ``response.request_id``, else the
    completion id). Without ``provider`` (a ``--batch-file`` import) the name is ``batch`` and ``max_tokens`` is
    reported under that name.

    Raises:
        BatchItemFailed: the item did not succeed (the error's code and message).
        LLMRefusalError: the answer is a refusal; LLMError: a body that is not a completion.
    """
    from .openai_provider import params_sent, read_completion

    who = provider.name if provider is not None else "batch"
    if item.kind is not ResultKind.SUCCEEDED:
        raise _failure(item, who)
    response = item.raw.get("response") if isinstance(item.raw, dict) else None
    body = response.get("body") if isinstance(response, dict) else None
    if not isinstance(body, dict):
        raise LLMError(f"{who}: batch request {item.custom_id} succeeded without a completion body")
    sent = provider._params_sent(request) if provider is not None else params_sent(request)
    return read_completion(body, provider=who, base_url=provider.base_url if provider is not None else None,
                           request=request, sent=sent, request_id=response.get("request_id"))


def embedding_response(item: BatchItem) -> tuple[list[list[float]], Usage | None]:
    """The vectors (in input order) and usage of a succeeded embeddings output line (``embedding`` as floats,
    or base64 float32 when the body asked for ``encoding_format: base64``).

    Raises:
        BatchItemFailed: the item did not succeed; LLMError: a body without ``data``.
    """
    if item.kind is not ResultKind.SUCCEEDED:
        raise _failure(item, "openai")
    response = item.raw.get("response") if isinstance(item.raw, dict) else None
    body = response.get("body") if isinstance(response, dict) else None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise LLMError(f"openai: embeddings batch request {item.custom_id} has no data")
    vectors: list[list[float]] = []
    for d in sorted(data, key=lambda d: d.get("index", 0)):
        v = d.get("embedding")
        if isinstance(v, str):
            buf = base64.b64decode(v)
            v = list(struct.unpack(f"<{len(buf) // 4}f", buf))
        vectors.append([float(x) for x in v or []])
    u = body.get("usage")
    usage = Usage(input_tokens=u.get("prompt_tokens") or 0) if isinstance(u, dict) else None
    return vectors, usage


def _errors_text(batch: Any) -> str | None:
    errors = getattr(batch, "errors", None)
    data = getattr(errors, "data", None) or []
    parts = []
    for e in data[:10]:
        where = f" (line {e.line})" if getattr(e, "line", None) is not None else ""
        parts.append(f"{getattr(e, 'code', None) or 'error'}{where}: {getattr(e, 'message', None) or ''}".strip())
    return "; ".join(parts) or None


def _remote(batch: Any) -> RemoteBatch:
    status = str(batch.status)
    rc = getattr(batch, "request_counts", None)
    counts = ({k: int(getattr(rc, k, 0) or 0) for k in ("total", "completed", "failed")} if rc is not None else {})
    failed = status == "failed"
    return RemoteBatch(id=batch.id, ended=status not in RUNNING, status=status, counts=counts, failed=failed,
                       error=(_errors_text(batch) or "the batch failed validation") if failed else None,
                       output_file_id=getattr(batch, "output_file_id", None),
                       error_file_id=getattr(batch, "error_file_id", None))


class OpenAIBatchBackend:
    """The Batch API for one :class:`~.openai_provider.OpenAIProvider` (see the module docstring).

    Args:
        provider: the provider whose SDK client, key and body builder are used.
    """

    kind = "openai"
    limits = OPENAI_LIMITS

    def __init__(self, provider: OpenAIProvider):
        self.provider = provider

    @property
    def _client(self) -> Any:
        return self.provider._client

    @property
    def _caught(self) -> tuple[type[Exception], ...]:
        from .openai_provider import _ERRORS

        return _ERRORS.caught

    def _error(self, e: Exception) -> LLMError:
        from .openai_provider import _ERRORS

        p = self.provider
        return to_llm_error(e, _ERRORS, provider=p.name, base_url=p.base_url, timeout_s=p.timeout_s, secret=p._key)

    # ------------------------------------------------------------------ BatchBackend
    def line(self, custom_id: str, request: LLMRequest) -> dict:
        """:func:`openai_batch_line` of this provider."""
        return openai_batch_line(self.provider, custom_id, request)

    def endpoint(self, line: dict) -> str:
        """The line's ``url``."""
        return str(line.get("url") or CHAT_URL)

    async def submit(self, lines: list[dict], *, label: str) -> str:
        """Upload ``lines`` as ``LABEL.jsonl`` (purpose ``batch``) and create a 24-hour batch on their endpoint
        with metadata ``{"benchwright_batch": label}``; the batch id. A file whose batch was refused is deleted.

        Raises:
            LLMError: the upload or the creation was refused, or the API could not be reached.
        """
        data = b"".join(json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in lines)
        endpoint = self.endpoint(lines[0]) if lines else CHAT_URL
        try:
            file = await self._client.files.create(file=(f"{label}.jsonl", data), purpose="batch")
        except self._caught as e:
            raise self._error(e) from None
        try:
            batch = await self._client.batches.create(input_file_id=file.id, endpoint=endpoint,
                                                      completion_window="24h", metadata={LABEL_KEY: label})
        except self._caught as e:
            err = self._error(e)
            with contextlib.suppress(*self._caught):
                await self._client.files.delete(file.id)
            raise err from None
        return batch.id

    async def find(self, label: str, *, created_after: str, count: int,
                   known: frozenset[str] = frozenset()) -> str | None:
        """The batch whose metadata holds ``label`` (listing newest first, down to ``created_after`` less the
        clock skew), or None. ``count`` is not compared (a batch still validating reports 0 requests).

        Raises:
            LLMError: the listing failed, or several batches carry the label.
        """
        since = (_parse_time(created_after) - LABEL_WINDOW).timestamp()
        hits: list[str] = []
        try:
            async for b in self._client.batches.list(limit=100):
                if b.created_at < since:
                    break
                if (b.metadata or {}).get(LABEL_KEY) == label and b.id not in known:
                    hits.append(b.id)
        except self._caught as e:
            raise self._error(e) from None
        if len(hits) > 1:
            raise LLMError(f"{self.provider.name}: several batches carry the label {label} ({', '.join(hits)})")
        return hits[0] if hits else None

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        """``batches.retrieve``: status, counts (``total``, ``completed``, ``failed``), result file ids; a
        ``failed`` batch with its ``errors`` as text.

        Raises:
            LLMError: the API could not be reached or does not know the batch.
        """
        try:
            batch = await self._client.batches.retrieve(batch_id)
        except self._caught as e:
            raise self._error(e) from None
        return _remote(batch)

    async def results(self, batch: RemoteBatch) -> AsyncIterator[BatchItem]:
        """The output file's lines, then the error file's, streamed line by line (:func:`result_item`).

        Raises:
            LLMError: a file could not be fetched, or a line is not JSON.
        """
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            try:
                async with self._client.files.with_streaming_response.content(file_id) as resp:
                    async for text in resp.iter_lines():
                        if not text.strip():
                            continue
                        try:
                            doc = json.loads(text)
                        except ValueError:
                            raise LLMError(f"{self.provider.name}: batch {batch.id}: a line of file {file_id} "
                                           f"is not JSON: {text[:200]!r}") from None
                        yield result_item(doc)
            except self._caught as e:
                raise self._error(e) from None

    def response(self, item: BatchItem, request: LLMRequest) -> LLMResponse:
        """:func:`openai_batch_response` of this provider."""
        return openai_batch_response(item, request, self.provider)

    async def cancel(self, batch_id: str) -> RemoteBatch:
        """``batches.cancel``: the batch goes ``cancelling``, then ``cancelled``.

        Raises:
            LLMError: the API refused or could not be reached.
        """
        try:
            batch = await self._client.batches.cancel(batch_id)
        except self._caught as e:
            raise self._error(e) from None
        return _remote(batch)
