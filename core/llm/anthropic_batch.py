"""Anthropic's Message Batches API as a :class:`~.batch.BatchBackend` (issue 19), over the official SDK.

The SDK client is the provider's own (``AnthropicProvider._client``: same key, base URL, timeout and retries).

- A line is ``{"custom_id", "params"}`` where ``params`` is exactly the body the online ``messages.create`` call
  sends (:meth:`~.anthropic_provider.AnthropicProvider._body`, with ``extra_body`` merged in as the SDK merges it).
- ``custom_id`` must match ``^[a-zA-Z0-9_-]{1,64}$`` (:data:`CUSTOM_ID`); ``max_tokens`` must be at least 1.
- Results come as JSONL lines ``{"custom_id", "result": {"type": "succeeded", "message"} | {"type": "errored",
  "error": {"type": "error", "error": {"type", "message"}}} | {"type": "canceled"} | {"type": "expired"}}``,
  in any order; each is stored as the SDK parsed it (``model_dump(mode="json")``).
- Anthropic keeps no label or metadata with a batch: :meth:`AnthropicBatchBackend.find` recognises a batch by its
  creation time and request count.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ._sdk_common import to_llm_error
from .base import LLMConfigError, LLMError, LLMRequest, LLMResponse
from .batch import ANTHROPIC_LIMITS, BatchItem, BatchItemFailed, RemoteBatch, ResultKind

if TYPE_CHECKING:
    from .anthropic_provider import AnthropicProvider

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""The ``custom_id`` rule of Message Batches (``MessageBatchIndividualRequest.custom_id``)."""

CLOCK_SKEW = timedelta(minutes=1)
"""How far the provider's clock may be behind ours when :meth:`AnthropicBatchBackend.find` compares creation
times."""

RESULT_KINDS = {"succeeded": ResultKind.SUCCEEDED, "errored": ResultKind.ERRORED,
                "canceled": ResultKind.CANCELLED, "expired": ResultKind.EXPIRED}
"""Anthropic's ``result.type`` -> :class:`~.batch.ResultKind`."""


def check_custom_id(custom_id: str, provider: str) -> None:
    """Refuse a ``custom_id`` outside ``[a-zA-Z0-9_-]{1,64}`` (both providers' rule).

    Raises:
        LLMConfigError: naming the id and the rule.
    """
    if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
        raise LLMConfigError(f"provider '{provider}': batch custom_id {custom_id!r} is not allowed: use 1 to 64 "
                             "letters, digits, '_' or '-'")


def _parse_time(value: str) -> datetime:
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def _counts(batch: Any) -> dict[str, int]:
    rc = getattr(batch, "request_counts", None)
    if rc is None:
        return {}
    return {k: int(getattr(rc, k, 0) or 0) for k in ("processing", "succeeded", "errored", "canceled", "expired")}


def _remote(batch: Any) -> RemoteBatch:
    status = str(getattr(batch, "processing_status", "") or "")
    return RemoteBatch(id=batch.id, ended=status == "ended", status=status, counts=_counts(batch))


class AnthropicBatchBackend:
    """Message Batches for one :class:`~.anthropic_provider.AnthropicProvider` (see the module docstring).

    Args:
        provider: the provider whose SDK client, key and body builder are used.
    """

    kind = "anthropic"
    limits = ANTHROPIC_LIMITS

    def __init__(self, provider: AnthropicProvider):
        self.provider = provider

    # ------------------------------------------------------------------ helpers
    @property
    def _client(self) -> Any:
        return self.provider._client

    def _error(self, e: Exception) -> LLMError:
        from .anthropic_provider import _ERRORS

        p = self.provider
        return to_llm_error(e, _ERRORS, provider=p.name, base_url=p.base_url, timeout_s=p.timeout_s, secret=p._key,
                            plain_error=False)

    @property
    def _caught(self) -> tuple[type[Exception], ...]:
        from .anthropic_provider import _ERRORS

        return _ERRORS.caught

    # ------------------------------------------------------------------ BatchBackend
    def line(self, custom_id: str, request: LLMRequest) -> dict:
        """``{"custom_id", "params"}``, ``params`` being the online call's JSON body.

        Raises:
            LLMConfigError: a ``custom_id`` the API refuses, ``max_tokens`` below 1 or not an integer, or what the
                online call refuses (an unknown parameter, an unsendable schema or tool).
        """
        check_custom_id(custom_id, self.provider.name)
        mt = request.params.get("max_tokens")
        if mt is not None and (isinstance(mt, bool) or not isinstance(mt, int) or mt < 1):
            raise LLMConfigError(f"provider '{self.provider.name}': max_tokens {mt!r} cannot go into a message "
                                 "batch (it must be an integer of at least 1)")
        kwargs, _ = self.provider._body(request)
        params = {k: v for k, v in kwargs.items() if k != "extra_body"}
        params.update(kwargs.get("extra_body") or {})
        return {"custom_id": custom_id, "params": params}

    def endpoint(self, line: dict) -> str:
        """``/v1/messages`` (the only endpoint of Message Batches)."""
        return "/v1/messages"

    async def submit(self, lines: list[dict], *, label: str) -> str:
        """``messages.batches.create(requests=lines)``; the batch id. ``label`` is not sent (Anthropic keeps none).

        Raises:
            LLMError: the API refused the batch or could not be reached (the key scrubbed).
        """
        try:
            batch = await self._client.messages.batches.create(requests=lines)
        except self._caught as e:
            raise self._error(e) from None
        return batch.id

    async def find(self, label: str, *, created_after: str, count: int,
                   known: frozenset[str] = frozenset()) -> str | None:
        """The batch created at or after ``created_after`` (UTC ISO, less :data:`CLOCK_SKEW`) holding ``count``
        requests and not among ``known`` (the provider ids the project already holds), the one created closest to
        ``created_after`` when several match (the listing is newest first and is read until older batches), or
        None. Anthropic keeps no label with a batch, so this is a guess; a wrong one costs a retry, never a wrong
        result: results are matched by ``custom_id``, and another batch's are all ``missing`` here.

        Raises:
            LLMError: the listing failed.
        """
        ours = _parse_time(created_after)
        since = ours - CLOCK_SKEW
        hits: list[tuple[float, str]] = []
        try:
            async for b in self._client.messages.batches.list(limit=100):
                created = b.created_at if b.created_at.tzinfo is not None else b.created_at.replace(tzinfo=UTC)
                if created < since:
                    break
                if b.id not in known and sum(_counts(b).values()) == count:
                    hits.append((abs((created - ours).total_seconds()), b.id))
        except self._caught as e:
            raise self._error(e) from None
        return min(hits)[1] if hits else None

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        """``messages.batches.retrieve``: ``processing_status`` (``in_progress``, ``canceling``, ``ended``) and
        ``request_counts`` (``processing``, ``succeeded``, ``errored``, ``canceled``, ``expired``).

        Raises:
            LLMError: the API could not be reached or does not know the batch.
        """
        try:
            batch = await self._client.messages.batches.retrieve(batch_id)
        except self._caught as e:
            raise self._error(e) from None
        return _remote(batch)

    async def results(self, batch: RemoteBatch) -> AsyncIterator[BatchItem]:
        """Every result line of an ended batch, streamed, as :class:`~.batch.BatchItem` (``raw`` the line as
        JSON; ``canceled`` maps to ``cancelled``; an unknown type counts as ``errored``).

        Raises:
            LLMError: the results could not be fetched.
        """
        try:
            decoder = await self._client.messages.batches.results(batch.id)
            async for entry in decoder:
                raw = entry.model_dump(mode="json", exclude_unset=True)
                kind = RESULT_KINDS.get(str((raw.get("result") or {}).get("type")), ResultKind.ERRORED)
                yield BatchItem(str(raw.get("custom_id")), kind, raw)
        except self._caught as e:
            raise self._error(e) from None

    def response(self, item: BatchItem, request: LLMRequest) -> LLMResponse:
        """The succeeded result's ``message`` read exactly as the online answer
        (:func:`~.anthropic_provider.read_message`; the request id is the message id).

        Raises:
            BatchItemFailed: the item did not succeed (the error's type and message, or how it ended).
            LLMRefusalError: the answer is a refusal.
        """
        from .anthropic_provider import read_message

        result = item.raw.get("result") if isinstance(item.raw, dict) else None
        result = result if isinstance(result, dict) else {}
        if item.kind is not ResultKind.SUCCEEDED:
            raise BatchItemFailed(f"{self.provider.name}: batch request {item.custom_id} {item.kind}"
                                  + _error_text(result, item.raw), kind=item.kind)
        message = result.get("message")
        if not isinstance(message, dict):
            raise LLMError(f"{self.provider.name}: batch request {item.custom_id} succeeded without a message")
        return read_message(message, provider=self.provider.name, request=request,
                            sent=self.provider._params_sent(request), request_id=message.get("id"))

    async def cancel(self, batch_id: str) -> RemoteBatch:
        """``messages.batches.cancel``: the batch goes ``canceling``; requests not yet run come back
        ``canceled``.

        Raises:
            LLMError: the API refused or could not be reached.
        """
        try:
            batch = await self._client.messages.batches.cancel(batch_id)
        except self._caught as e:
            raise self._error(e) from None
        return _remote(batch)


def _error_text(result: dict, raw: Any) -> str:
    """``": TYPE: message"`` of an errored result (Anthropic nests ``error.error``), else ``""``."""
    err = result.get("error")
    if isinstance(err, dict) and isinstance(err.get("error"), dict):
        err = err["error"]
    if not isinstance(err, dict) and isinstance(raw, dict):
        err = raw.get("error")  # a result the batcher made (a refused batch): {"error": "why"}
    if isinstance(err, dict):
        parts = [str(err[k]) for k in ("type", "message") if err.get(k)]
        return (": " + ": ".join(parts)) if parts else ""
    return f": {err}" if err else ""
