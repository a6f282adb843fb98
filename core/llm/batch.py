"""Batch mode: the same calls sent through a provider's batch API (half price, results within 24 hours).

Issue 19 ("Scale past one machine's patience"). Anthropic's Message Batches and OpenAI's Batch API take many
requests at once, each with a ``custom_id``, and return results out of order once the batch ends. benchwright keeps
every batch in the project (``llm_batches``, ``llm_batch_requests``: docs/store.md), so a killed client, a reboot or
a second machine with a copy of the project resumes a batch instead of paying for it twice.

How a call goes (:class:`Batcher`, used by :meth:`~.client.LLMClient.call` when the client is in batch mode):

1. The client's first attempt of a request asks the batcher instead of the provider. The batcher looks the request
   up in the project by ``(request_hash, repeat)``:

   - a stored result not yet turned into a ledger row (it was paid for; the process that fetched it died): it is
     used at once, no network;
   - a request in a batch that is still open (``pending``, ``submitted``, ``ended``): the call waits for that
     batch (it is polled and collected, never submitted again);
   - otherwise the request joins the batch being gathered.

2. Requests are gathered until none has arrived for ``gather_s`` seconds or a provider limit is reached
   (:class:`BatchLimits`: request count and bytes); then the batch and each request's ``custom_id`` and body are
   committed (status ``pending``) **before** the batch is submitted, and the provider's batch id is committed as
   soon as the provider returns it (``submitted``). A request another process committed meanwhile is not
   submitted again (checked inside the write transaction).
3. Open batches are polled every ``poll_interval_s`` seconds. When one ends, every result is stored as the provider
   sent it (``llm_batch_requests.result_json``) in the project before any is used; then each waiting call gets its
   result, matched by ``custom_id`` (results come back in any order).
4. A succeeded result becomes an :class:`~.base.LLMResponse` and goes through the client's usual path: validation,
   the repair turn (online), the truncation retry (online), the ledger (with the batch id and the batch price) and
   the cache. An errored, expired or cancelled request, or one missing from the results, is never scored: it is
   retried online or in a new batch (:attr:`BatchPolicy.retry`).

A batch whose ``pending`` row outlived its process (killed between the commit and the provider's answer) is
recovered by asking the provider for a batch with its label (:meth:`BatchBackend.find`); if none exists, its stored
requests are submitted as they were. ``--batch-file`` (:class:`FileBatchBackend`) writes the requests in the
OpenAI batch format instead (for ``vllm run-batch``); ``batches import`` stores the results and a rerun collects
them through the same path.

Cancelling the waiting task (Ctrl+C) leaves the batch running at the provider; nothing is recorded as cancelled.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from .base import LLMConfigError, LLMError, LLMRequest, LLMResponse
from .jobs import SkipItem


class BatchStatus(StrEnum):
    """A batch's state in the project (``llm_batches.status``).

    ``pending``: committed, the provider's answer to the submission not yet recorded; ``submitted``: the provider
    has it and is working; ``ended``: the provider finished (its own status in ``provider_status``), results not
    yet stored; ``collected``: every result is stored; ``failed``: the provider refused the whole batch (its
    requests are retried); ``exported``: written to a file (``--batch-file``), waiting for ``batches import``.
    """

    PENDING = "pending"
    SUBMITTED = "submitted"
    ENDED = "ended"
    COLLECTED = "collected"
    FAILED = "failed"
    EXPORTED = "exported"


OPEN_BATCH_STATUSES = (BatchStatus.PENDING, BatchStatus.SUBMITTED, BatchStatus.ENDED, BatchStatus.EXPORTED)
"""States in which a batch's requests are still to come back: a rerun waits for them instead of submitting."""


class ResultKind(StrEnum):
    """How one request of a batch ended (``llm_batch_requests.result_kind``; both providers' words mapped).

    ``succeeded``: an answer (it may still be a refusal or invalid: the client decides); ``errored``: the provider
    answered the request with an error; ``expired``: the batch ended (24 hours) before the request ran;
    ``cancelled``: the batch was cancelled first; ``missing``: the batch ended and this ``custom_id`` is in neither
    the output nor the error file.
    """

    SUCCEEDED = "succeeded"
    ERRORED = "errored"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    MISSING = "missing"


class RetryPolicy(StrEnum):
    """What happens to a request that did not succeed in its batch (``--retry``)."""

    ONLINE = "online"
    BATCH = "batch"


@dataclass(frozen=True)
class BatchLimits:
    """A provider's limits on one batch (a job past them is split into several batches).

    Attributes:
        max_requests: requests per batch (Anthropic 100,000; OpenAI 50,000).
        max_bytes: bytes of the request lines (Anthropic 256 MB; OpenAI 200 MB input file).
    """

    max_requests: int
    max_bytes: int


ANTHROPIC_LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * 1000 * 1000)
"""Anthropic Message Batches: "limited to either 100,000 Message requests or 256 MB in size, whichever is reached
first" (docs, build-with-claude/batch-processing)."""
OPENAI_LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * 1000 * 1000)
"""OpenAI Batch API: an input file holds "up to 50,000 requests, and can be up to 200 MB in size" (API reference,
batches.create)."""


@dataclass
class RemoteBatch:
    """A batch as the provider reports it.

    Attributes:
        id: the provider's batch id.
        ended: the provider finished processing (every request succeeded, errored, expired or was cancelled);
            OpenAI's ``completed``, ``expired``, ``cancelled`` and ``failed``, Anthropic's ``ended``.
        failed: the provider refused the batch as a whole (OpenAI ``failed``: validation errors); ``error`` says why.
        status: the provider's own status word.
        counts: request counts as the provider gives them (``succeeded``, ``errored``, ``processing``...).
        output_file_id, error_file_id: OpenAI's result files (None for Anthropic).
    """

    id: str
    ended: bool
    status: str
    counts: dict[str, int] = field(default_factory=dict)
    failed: bool = False
    error: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None


@dataclass(frozen=True)
class BatchItem:
    """One request's result, as stored: ``custom_id``, how it ended, and the provider's result line (JSON)."""

    custom_id: str
    kind: ResultKind
    raw: dict


class BatchItemFailed(LLMError):
    """A request that did not succeed in its batch (errored, expired, cancelled, missing): retried, never scored."""

    def __init__(self, message: str, *, kind: ResultKind, **kw: Any):
        super().__init__(message, **kw)
        self.kind = kind


class BatchDeferred(BaseException):
    """The requests were handed off (written to a ``--batch-file``, or a batch is still running when the caller
    asked not to wait): the command ends and collects them on a rerun or ``batches resume``.

    A ``BaseException`` (like a cancellation), so that a step's ``except Exception`` never records it as a failure
    of the item: the item is not done, its request is in a batch.

    Attributes:
        batch_ids: the local batch ids (``llm_batches.id``) holding the requests.
        message: what the user does next.
        exit_code: the CLI's exit status (0: handed off as asked; 1: the provider refused us, e.g. HTTP 401 on a
            status request, and the user must act).
    """

    def __init__(self, message: str, batch_ids: tuple[int, ...] = (), *, exit_code: int = 0):
        super().__init__(message)
        self.batch_ids = batch_ids
        self.exit_code = exit_code


class BatchBackend(Protocol):
    """One provider's batch API (implemented over the official SDKs: :mod:`.anthropic_batch`, :mod:`.openai_batch`;
    :class:`FileBatchBackend` for ``--batch-file``; tests script one).

    Attributes:
        kind: the provider kind (``anthropic``, ``openai``, ``file``, ``fake``).
        limits: the provider's batch limits.
    """

    kind: str
    limits: BatchLimits

    def line(self, custom_id: str, request: LLMRequest) -> dict:
        """The batch entry for one chat request, as the provider takes it (Anthropic ``{"custom_id", "params"}``;
        OpenAI ``{"custom_id", "method": "POST", "url", "body"}``), built exactly as the online call's body.

        Raises:
            LLMConfigError: a parameter or feature the batch API cannot take.
        """
        ...

    def endpoint(self, line: dict) -> str:
        """The API path a line goes to (one batch holds one endpoint): ``/v1/chat/completions``,
        ``/v1/embeddings``, ``/v1/messages``."""
        ...

    async def submit(self, lines: list[dict], *, label: str) -> str:
        """Create a batch of ``lines`` labelled ``label`` (OpenAI: batch metadata and file name; Anthropic keeps
        no label, see :meth:`find`); return the provider's batch id.

        Raises:
            LLMError: the provider refused or could not be reached (nothing was created, as far as it said).
        """
        ...

    async def find(self, label: str, *, created_after: str, count: int,
                   known: frozenset[str] = frozenset()) -> str | None:
        """The id of a batch created with ``label`` (after ``created_after``, UTC ISO, holding ``count``
        requests, not among ``known``: the provider ids the project already holds), or None when there is none:
        recovering a submission whose answer was never recorded.

        Raises:
            LLMError: the provider could not be asked, or several batches match (the message lists them).
        """
        ...

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        """The batch's status and counts.

        Raises:
            LLMError: the provider could not be reached or does not know the batch.
        """
        ...

    def results(self, batch: RemoteBatch) -> AsyncIterator[BatchItem]:
        """Every result of an ended batch, in the provider's order (any order).

        Raises:
            LLMError: the results could not be fetched.
        """
        ...

    def response(self, item: BatchItem, request: LLMRequest) -> LLMResponse:
        """The answer in a succeeded result, as the online call would have returned it.

        Raises:
            LLMRefusalError: the answer is a refusal; LLMError: an unusable result;
            BatchItemFailed: the item did not succeed.
        """
        ...

    async def cancel(self, batch_id: str) -> RemoteBatch:
        """Ask the provider to cancel the batch (requests not yet run come back ``cancelled``)."""
        ...


@dataclass(frozen=True)
class StoredRequest:
    """A request of a batch, as the project holds it (:meth:`BatchStore.batch_lookup`).

    Attributes:
        custom_id: the id sent with it; batch_id: the local batch (``llm_batches.id``); batch_status: that
            batch's :class:`BatchStatus`; result_kind / result: the stored result (None before collection);
        call_id: the ledger row made from the result (None: not used yet).
    """

    custom_id: str
    batch_id: int
    batch_status: BatchStatus
    result_kind: ResultKind | None = None
    result: dict | None = None
    call_id: int | None = None


@dataclass(frozen=True)
class NewRequest:
    """A request to commit with a new batch: its ``custom_id``, cache key, bookkeeping and the line sent."""

    custom_id: str
    request_hash: str
    repeat: int
    purpose: str | None
    qa_pair_id: str | None
    line: dict


@dataclass(frozen=True)
class StoredBatch:
    """A batch row (``llm_batches``), as :meth:`BatchStore.batch` returns it."""

    id: int
    label: str
    provider: str
    provider_kind: str
    endpoint: str
    status: BatchStatus
    provider_batch_id: str | None
    request_count: int
    bytes: int
    created_at: str
    created_by: str
    command: list[str] = field(default_factory=list)
    provider_status: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    submitted_at: str | None = None
    ended_at: str | None = None
    collected_at: str | None = None
    file: str | None = None
    retry_of: int | None = None


class BatchStore(Protocol):
    """Where batches are kept (the project database implements it: ``benchwright.db`` ``BatchStoreMixin``)."""

    def batch_lookup(self, request_hash: str, repeat: int) -> StoredRequest | None:
        """The latest batch request for this cache key that is still of use: in an open batch, or with a result
        not yet turned into a ledger row. None otherwise."""
        ...

    def create_batch(self, *, label: str, provider: str, provider_kind: str, base_url: str | None, endpoint: str,
                     owner: str, command: list[str], requests: list[NewRequest], status: BatchStatus,
                     file: str | None = None, retry_of: int | None = None) -> tuple[int | None, dict[str, StoredRequest]]:
        """In one write transaction: drop the requests another process committed meanwhile (returned by
        ``custom_id`` of ours, mapped to theirs) and commit a batch of the rest. Returns ``(batch id or None when
        nothing is left, the dropped ones)``."""
        ...

    def batch_submitted(self, batch_id: int, provider_batch_id: str) -> None:
        """Record the provider's id: status ``submitted``."""
        ...

    def batch_state(self, batch_id: int, *, status: BatchStatus, provider_status: str | None = None,
                    counts: dict | None = None, error: str | None = None) -> None:
        """Record the provider's latest report."""
        ...

    def store_batch_results(self, batch_id: int, items: list[BatchItem]) -> int:
        """Store results (only where none is stored yet); the number stored."""
        ...

    def batch_collected(self, batch_id: int) -> None:
        """Every result is stored: mark requests without one ``missing`` and the batch ``collected``."""
        ...

    def batch(self, batch_id: int) -> StoredBatch | None:
        """One batch, or None."""
        ...

    def batch_lines(self, batch_id: int) -> list[dict]:
        """The request lines of a batch, as committed (a recovery submits them again)."""
        ...

    def batch_results(self, batch_id: int) -> dict[str, tuple[ResultKind | None, dict | None]]:
        """``custom_id -> (result kind, result)`` of a batch (None, None before collection)."""
        ...


@dataclass
class BatchPolicy:
    """How a job uses the batch API (``--batch``, ``--retry``, ``--poll-interval``, ``[batch]`` in
    benchwright.toml).

    Attributes:
        poll_interval_s: seconds between two status requests of an open batch (default 30).
        gather_s: a batch is submitted once no new request arrived for this many seconds (default 2), or at a
            provider limit.
        retry: errored, expired, cancelled and missing requests go ``online`` (default) or into a new ``batch``.
        max_batch_retries: with ``retry = batch``, rounds of new batches before the request goes online.
        wait: wait for the results (default); False: submit, record, and end with :class:`BatchDeferred`.
        poll_backoff_max_s: a status request that failed transiently (connection error, timeout, HTTP 408/409/429,
            5xx) is tried again after ``poll_interval_s`` doubled at each consecutive failure, capped at this many
            seconds (default 300). Our choice (issue 20 names no figure): configurable in ``[batch]``.
        poll_max_failures: after this many consecutive failed status requests (default 20) ...
        poll_give_up_s: ... or this many seconds of failures (default 3600), whichever comes first, the job stops
            with :class:`BatchDeferred` (the batch is still running at the provider; nothing is marked errored and no
            ledger row is written; ``batches resume`` collects it). An HTTP 401/403 stops at once, the same way.
        command: the command line that made the batch (``batches resume`` runs it again); never holds a key.
        owner: this process (host:pid:random), recorded with the batches it creates.
        limits: overrides the backend's limits (tests, a stricter gateway).
    """

    poll_interval_s: float = 30.0
    gather_s: float = 2.0
    retry: RetryPolicy = RetryPolicy.ONLINE
    max_batch_retries: int = 2
    wait: bool = True
    poll_backoff_max_s: float = 300.0
    poll_max_failures: int = 20
    poll_give_up_s: float = 3600.0
    command: list[str] = field(default_factory=list)
    owner: str = ""
    limits: BatchLimits | None = None
    resume_only: bool = False
    """``batches resume``: collect and use what the project's batches hold; a request in none of them is not sent
    (its item is skipped, :class:`~.jobs.SkipItem`), so resuming a ``--limit`` command never picks new items."""


@dataclass
class BatchProgress:
    """What the batcher has on hand (for the progress line in the CLI and the app).

    Attributes:
        gathering: requests waiting to be submitted; waiting: requests submitted and not back;
        batches: local ids of the open batches this run waits for, with the provider's counts;
        collected: results received; retried: requests sent again (online or in a new batch).
    """

    gathering: int = 0
    waiting: int = 0
    batches: dict[int, dict[str, Any]] = field(default_factory=dict)
    collected: int = 0
    retried: int = 0

    def line(self) -> str:
        """One line for a progress display, e.g. ``batch #3 in_progress 120/500 (errored 2); 0 gathering``."""
        parts = []
        for bid, info in sorted(self.batches.items()):
            counts = info.get("counts") or {}
            done = sum(v for k, v in counts.items() if k not in ("processing", "total", "in_progress"))
            total = info.get("requests") or counts.get("total") or 0
            extra = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())
                              if k in ("errored", "failed", "expired", "canceled", "cancelled") and v)
            parts.append(f"batch #{bid} {info.get('status', '?')} {done}/{total}" + (f" ({extra})" if extra else "")
                         + (f", {info['poll_error']}" if info.get("poll_error") else ""))
        parts.append(f"{self.gathering} gathering, {self.waiting} waiting, {self.collected} back")
        return "; ".join(parts)


def new_custom_id() -> str:
    """A fresh ``custom_id``: ``bw-`` and 32 hex digits (both providers take ``[A-Za-z0-9_-]{1,64}``)."""
    return f"bw-{uuid.uuid4().hex}"


@dataclass
class _Pending:
    custom_id: str
    key: tuple[str, int]
    purpose: str | None
    qa_pair_id: str | None
    line: dict
    size: int
    future: asyncio.Future


class Batcher:
    """Gathers a client's requests into provider batches, keeps them in the project, waits and hands results back.

    Args:
        backend: the provider's batch API (:class:`BatchBackend`).
        store: the project (:class:`BatchStore`).
        policy: intervals, retry and limits (:class:`BatchPolicy`).
        provider: the configured provider name, kind and base URL (recorded with each batch).
        on_progress: called with a :class:`BatchProgress` after each change (the CLI's status line, the app).

    One batcher serves one event loop (one command). :meth:`request` is what the client calls.
    """

    def __init__(self, backend: BatchBackend, store: BatchStore, policy: BatchPolicy | None = None, *,
                 provider: str = "", provider_kind: str = "", base_url: str | None = None,
                 on_progress: Callable[[BatchProgress], Any] | None = None):
        self.backend = backend
        self.store = store
        self.policy = policy or BatchPolicy()
        self.provider, self.provider_kind, self.base_url = provider, provider_kind or backend.kind, base_url
        self.on_progress = on_progress
        self.progress = BatchProgress()
        self._gathering: dict[str, list[_Pending]] = {}  # endpoint -> pending requests
        self._bytes: dict[str, int] = {}
        self._timer: dict[str, asyncio.TimerHandle] = {}
        self._waiters: dict[str, asyncio.Future] = {}  # custom_id -> future of its BatchItem
        self._pollers: dict[int, asyncio.Task] = {}
        self._batch_of: dict[str, int] = {}  # custom_id -> local batch id, for the calls waiting here
        self._tasks: set[asyncio.Task] = set()  # submissions and chains in flight (kept so none is collected)

    def _spawn(self, coro: Any) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def limits(self) -> BatchLimits:
        """The limits in force (the policy's, else the backend's)."""
        return self.policy.limits or self.backend.limits

    async def aclose(self) -> None:
        """Stop this batcher's work in this process (gathering timers, submissions, pollers) and its progress
        reports, as the end of a command's event loop does; the batches stay at the provider and in the project (a
        rerun or ``batches resume`` collects them). For a front end whose loop outlives the job (the app)."""
        self.on_progress = None
        for handle in self._timer.values():
            handle.cancel()
        self._timer.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _changed(self) -> None:
        self.progress.gathering = sum(len(v) for v in self._gathering.values())
        self.progress.waiting = sum(1 for f in self._waiters.values() if not f.done())
        if self.on_progress is not None:
            self.on_progress(self.progress)

    # ------------------------------------------------------------------ the client's entry point
    async def complete(self, request: LLMRequest, *, request_hash: str, purpose: str | None,
                       qa_pair_id: str | None, online: Callable[[LLMRequest], Any]) -> tuple[LLMResponse, int | None, str | None]:
        """The answer to the first attempt of ``request`` through the batch API.

        Args:
            request: the request as it goes to the provider; request_hash: its cache key (with ``request.repeat``).
            online: ``async (request) -> LLMResponse``: the online call, for retries (:attr:`BatchPolicy.retry`).

        Returns:
            ``(response, local batch id or None when it came online, custom_id or None)``.

        Raises:
            LLMError / LLMRefusalError: as the online call would (an errored request retried online that failed
                again, a refused answer).
            BatchDeferred: the requests were handed off (``--batch-file``, or not waiting).
        """
        rounds = 0
        key = (request_hash, request.repeat)
        while True:
            item, batch_id = await self._result_for(request, key, purpose, qa_pair_id, fresh=rounds > 0)
            if item.kind is ResultKind.SUCCEEDED:
                try:
                    return self.backend.response(item, request), batch_id, item.custom_id
                except LLMError as e:  # a refusal or an unusable answer: recorded with its batch (it was paid for)
                    e.batch_id, e.batch_custom_id = batch_id, item.custom_id
                    raise
            self.progress.retried += 1
            self._changed()
            rounds += 1
            if self.policy.retry is RetryPolicy.ONLINE or rounds > self.policy.max_batch_retries:
                return await online(request), None, None

    async def _result_for(self, request: LLMRequest, key: tuple[str, int], purpose: str | None,
                          qa_pair_id: str | None, *, fresh: bool) -> tuple[BatchItem, int]:
        if not fresh:
            known = self.store.batch_lookup(*key)
            if known is not None:
                if known.result_kind is not None and known.result is not None:
                    return BatchItem(known.custom_id, known.result_kind, known.result), known.batch_id
                if known.result_kind is not None:  # missing from an ended batch
                    return BatchItem(known.custom_id, known.result_kind, {}), known.batch_id
                return await self._attach(known.custom_id, known.batch_id), known.batch_id
        if self.policy.resume_only and not fresh:
            raise SkipItem(f"not in a batch being resumed (request {key[0][:12]})")
        return await self._gather(lambda cid: self.backend.line(cid, request), key, purpose, qa_pair_id)

    async def request_line(self, build: Callable[[str], dict], *, request_hash: str, repeat: int = 0,
                           purpose: str | None = None, qa_pair_id: str | None = None) -> tuple[BatchItem, int]:
        """Any batch request (an embeddings line: ``/v1/embeddings``): ``build(custom_id) -> line``; returns the
        result item as stored and its local batch id, reusing a stored or pending one for the same
        ``(request_hash, repeat)`` like :meth:`complete`. The caller reads the item and retries what did not succeed.

        Raises:
            BatchDeferred: handed off (a file, or not waiting); LLMError: the batch could not be polled.
        """
        key = (request_hash, repeat)
        known = self.store.batch_lookup(*key)
        if known is not None:
            if known.result_kind is not None:
                return BatchItem(known.custom_id, known.result_kind, known.result or {}), known.batch_id
            return await self._attach(known.custom_id, known.batch_id), known.batch_id
        if self.policy.resume_only:
            raise SkipItem(f"not in a batch being resumed (request {request_hash[:12]})")
        return await self._gather(build, key, purpose, qa_pair_id)

    async def _gather(self, build: Callable[[str], dict], key: tuple[str, int], purpose: str | None,
                      qa_pair_id: str | None) -> tuple[BatchItem, int]:
        custom_id = new_custom_id()
        line = build(custom_id)
        endpoint = self.backend.endpoint(line)
        size = len(json.dumps(line, ensure_ascii=False).encode()) + 1
        fut = _future()
        pending = _Pending(custom_id, key, purpose, qa_pair_id, line, size, fut)
        batch = self._gathering.setdefault(endpoint, [])
        if batch and (len(batch) + 1 > self.limits.max_requests
                      or self._bytes.get(endpoint, 0) + size > self.limits.max_bytes):
            self._flush_now(endpoint)
            batch = self._gathering.setdefault(endpoint, [])
        batch.append(pending)
        self._bytes[endpoint] = self._bytes.get(endpoint, 0) + size
        self._arm(endpoint)
        self._changed()
        item, batch_id = await asyncio.shield(fut)
        return item, batch_id

    async def _attach(self, custom_id: str, batch_id: int) -> BatchItem:
        fut = self._waiters.get(custom_id)
        if fut is None:
            fut = self._waiters[custom_id] = _future()
        self._batch_of[custom_id] = batch_id
        self._ensure_poller(batch_id)
        self._changed()
        item, _ = await asyncio.shield(fut)
        return item

    # ------------------------------------------------------------------ gathering and submission
    def _arm(self, endpoint: str) -> None:
        old = self._timer.pop(endpoint, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timer[endpoint] = loop.call_later(self.policy.gather_s, self._flush_now, endpoint)

    def _flush_now(self, endpoint: str) -> None:
        timer = self._timer.pop(endpoint, None)
        if timer is not None:
            timer.cancel()
        batch = self._gathering.pop(endpoint, [])
        self._bytes.pop(endpoint, None)
        if batch:
            task = self._spawn(self._submit(endpoint, batch))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())  # errors go to the futures

    async def _submit(self, endpoint: str, batch: list[_Pending]) -> None:
        try:
            label = f"benchwright-{uuid.uuid4().hex[:16]}"
            batch_id, dropped = self.store.create_batch(
                label=label, provider=self.provider, provider_kind=self.provider_kind, base_url=self.base_url,
                endpoint=endpoint, owner=self.policy.owner, command=list(self.policy.command),
                requests=[NewRequest(p.custom_id, p.key[0], p.key[1], p.purpose, p.qa_pair_id, p.line)
                          for p in batch],
                status=BatchStatus.EXPORTED if self.backend.kind == "file" else BatchStatus.PENDING,
                file=getattr(self.backend, "path_text", None))
            # A request another process committed meanwhile waits for that process's batch.
            for p in batch:
                theirs = dropped.get(p.custom_id)
                if theirs is not None:
                    self._chain(p.future, self._attach(theirs.custom_id, theirs.batch_id), theirs.batch_id)
            mine = [p for p in batch if p.custom_id not in dropped]
            if batch_id is None or not mine:
                return
            for p in mine:
                self._waiters[p.custom_id] = p.future
                self._batch_of[p.custom_id] = batch_id
            self.progress.batches[batch_id] = {"status": "pending", "requests": len(mine), "counts": {}}
            self._changed()
            await self._send_batch(batch_id, [p.line for p in mine], label)
        except BaseException as e:
            usable = isinstance(e, (Exception, BatchDeferred))
            for p in batch:
                if not p.future.done():
                    p.future.set_exception(e if usable else LLMError(f"batch submission stopped: {e!r}"))
            if not usable:
                raise

    def _chain(self, fut: asyncio.Future, coro: Any, batch_id: int) -> None:
        async def run() -> None:
            try:
                item = await coro
                if not fut.done():
                    fut.set_result((item, batch_id))
            except BaseException as e:
                if not fut.done():
                    fut.set_exception(e if isinstance(e, Exception) else LLMError(repr(e)))
        self._spawn(run())

    async def _send_batch(self, batch_id: int, lines: list[dict], label: str) -> None:
        if self.backend.kind == "file":
            try:
                await self.backend.submit(lines, label=label)
            except LLMConfigError as e:  # nothing was written: the batch holds no request to wait for
                self.store.batch_state(batch_id, status=BatchStatus.FAILED, error=str(e)[:2000])
                self.progress.batches[batch_id].update(status="failed", error=str(e))
                raise
            self._defer(batch_id)
            return
        try:
            provider_id = await self.backend.submit(lines, label=label)
        except LLMError as e:
            self.store.batch_state(batch_id, status=BatchStatus.FAILED, error=str(e)[:2000])
            self.progress.batches[batch_id].update(status="failed", error=str(e))
            self._fail_waiters(batch_id, ResultKind.ERRORED, f"the batch was not accepted: {e}")
            return
        self.store.batch_submitted(batch_id, provider_id)
        self.progress.batches[batch_id]["status"] = "submitted"
        self._changed()
        if not self.policy.wait:
            self._defer(batch_id)
            return
        self._ensure_poller(batch_id)

    def _defer(self, batch_id: int) -> None:
        stored = self.store.batch(batch_id)
        where = (f"written to {stored.file}" if stored is not None and stored.file else "submitted")
        err = BatchDeferred(f"batch #{batch_id} {where}", (batch_id,))
        for cid, fut in list(self._waiters.items()):
            if not fut.done() and self._batch_of.get(cid) == batch_id:
                fut.set_exception(err)

    def _fail_waiters(self, batch_id: int, kind: ResultKind, why: str) -> None:
        for cid, fut in list(self._waiters.items()):
            if self._batch_of.get(cid) == batch_id and not fut.done():
                fut.set_result((BatchItem(cid, kind, {"error": why}), batch_id))

    # ------------------------------------------------------------------ polling and collection
    def _ensure_poller(self, batch_id: int) -> None:
        task = self._pollers.get(batch_id)
        if task is None or task.done():
            self._pollers[batch_id] = self._spawn(self._poll(batch_id))

    async def _poll(self, batch_id: int) -> None:
        try:
            await self._poll_until_collected(batch_id)
        except asyncio.CancelledError:
            raise
        except (Exception, BatchDeferred) as e:
            for cid, fut in list(self._waiters.items()):
                if not fut.done() and self._batch_of.get(cid) == batch_id:
                    fut.set_exception(e)
            return
        results = self.store.batch_results(batch_id)
        for cid, (kind, raw) in results.items():
            fut = self._waiters.get(cid)
            if fut is not None and not fut.done():
                fut.set_result((BatchItem(cid, kind or ResultKind.MISSING, raw or {}), batch_id))
        self.progress.collected += sum(1 for k, _ in results.values() if k is not None)
        self._changed()

    async def _poll_failed(self, batch_id: int, e: LLMError, info: dict[str, Any], failures: int,
                           failing_s: float) -> None:
        """A status request of batch ``batch_id`` failed (issue 20): wait and try again when it is transient;
        else (HTTP 401/403, past :attr:`BatchPolicy.poll_max_failures` / :attr:`BatchPolicy.poll_give_up_s`, or an
        error that is not transient) end its waiters WITHOUT marking a request errored: the batch is still running.

        Raises:
            BatchDeferred: the job stops; ``batches resume`` collects the batch. LLMError: ``e``, not transient
                (e.g. HTTP 404, the provider does not know the batch).
        """
        resume = f"`benchwright batches resume {batch_id}` collects it"
        if e.http_status in (401, 403):
            raise BatchDeferred(f"batch #{batch_id}: the provider refused the status request as unauthorized "
                                f"(HTTP {e.http_status}: {e}); check the API key. The batch is still running at "
                                f"the provider and no request was marked errored; {resume}", (batch_id,),
                                exit_code=1)
        if not e.transient:
            raise e
        if failures >= self.policy.poll_max_failures or failing_s >= self.policy.poll_give_up_s:
            raise BatchDeferred(f"batch #{batch_id} still running at the provider; {resume} (polling failed "
                                f"{failures} times in a row over {failing_s:.0f}s; last: {e})", (batch_id,))
        delay = min(self.policy.poll_interval_s * 2 ** (failures - 1), self.policy.poll_backoff_max_s)
        info["poll_error"] = f"poll failed ({e}), retrying in {delay:.0f}s"
        self._changed()
        await asyncio.sleep(delay)

    async def _poll_until_collected(self, batch_id: int) -> None:
        failures, first_failure = 0, 0.0
        while True:
            stored = self.store.batch(batch_id)
            if stored is None:
                raise LLMError(f"batch #{batch_id} is not in the project")
            if stored.status is BatchStatus.COLLECTED or stored.status is BatchStatus.FAILED:
                return
            if stored.status is BatchStatus.EXPORTED:
                results = self.store.batch_results(batch_id)
                back = sum(1 for k, _ in results.values() if k is not None)
                if results and back == len(results):
                    self.store.batch_collected(batch_id)
                    return
                what = "its results are not imported yet" if not back else (
                    f"{back} of its {len(results)} results are imported; import the rest")
                raise BatchDeferred(f"batch #{batch_id} was written to {stored.file} and {what}", (batch_id,))
            if stored.status is BatchStatus.PENDING:
                await self._recover(stored)
                continue
            info = self.progress.batches.setdefault(batch_id, {"requests": stored.request_count})
            try:
                remote = await self.backend.retrieve(stored.provider_batch_id or "")
            except LLMError as e:
                failures += 1
                first_failure = first_failure or time.monotonic()
                await self._poll_failed(batch_id, e, info, failures, time.monotonic() - first_failure)
                continue
            failures, first_failure = 0, 0.0
            info.pop("poll_error", None)
            info.update(status=remote.status, counts=dict(remote.counts))
            self._changed()
            if remote.failed:
                self.store.batch_state(batch_id, status=BatchStatus.FAILED, provider_status=remote.status,
                                       counts=remote.counts, error=remote.error)
                info.update(status="failed", error=remote.error or remote.status)
                self._fail_waiters(batch_id, ResultKind.ERRORED, remote.error or "the provider refused the batch")
                return
            if remote.ended:
                self.store.batch_state(batch_id, status=BatchStatus.ENDED, provider_status=remote.status,
                                       counts=remote.counts)
                try:
                    await self._download(batch_id, remote)
                except LLMError as e:  # the results' download failed like a poll: stored ones are kept
                    failures += 1
                    first_failure = first_failure or time.monotonic()
                    await self._poll_failed(batch_id, e, info, failures, time.monotonic() - first_failure)
                    continue
                self.store.batch_collected(batch_id)
                return
            self.store.batch_state(batch_id, status=BatchStatus.SUBMITTED, provider_status=remote.status,
                                   counts=remote.counts)
            if not self.policy.wait:
                raise BatchDeferred(f"batch #{batch_id} is still running at the provider ({remote.status})",
                                    (batch_id,))
            await asyncio.sleep(self.policy.poll_interval_s)

    async def _download(self, batch_id: int, remote: RemoteBatch) -> None:
        """Store the results of the ended batch ``remote`` in chunks of 1000 (a result already stored is kept:
        a download tried again after a failure stores only the rest).

        Raises:
            LLMError: a results file could not be fetched.
        """
        chunk: list[BatchItem] = []
        async for item in self.backend.results(remote):
            chunk.append(item)
            if len(chunk) >= 1000:
                self.store.store_batch_results(batch_id, chunk)
                chunk = []
        if chunk:
            self.store.store_batch_results(batch_id, chunk)

    async def _recover(self, stored: StoredBatch) -> None:
        """A ``pending`` batch: its creator is alive (wait for it) or died between commit and the provider's
        answer (find the batch at the provider, or submit the committed lines as they were)."""
        if stored.created_by and stored.created_by != self.policy.owner and owner_alive(stored.created_by,
                                                                                          stored.created_at):
            await asyncio.sleep(min(self.policy.poll_interval_s, 1.0))
            return
        if stored.created_by == self.policy.owner and stored.id in self.progress.batches:
            await asyncio.sleep(min(self.policy.poll_interval_s, 0.05))  # our own submission is in flight
            return
        known = frozenset(b.provider_batch_id for b in self.store.batches() if b.provider_batch_id)
        found = await self.backend.find(stored.label, created_after=stored.created_at, count=stored.request_count,
                                        known=known)
        if found is None:
            found = await self.backend.submit(self.store.batch_lines(stored.id), label=stored.label)
        self.store.batch_submitted(stored.id, found)


def _future() -> asyncio.Future:
    """A future for one request's result whose exception counts as seen even when its caller was cancelled (Ctrl+C,
    the app closing a screen): the batch goes on, and asyncio does not log "exception was never retrieved"."""
    fut = asyncio.get_running_loop().create_future()
    fut.add_done_callback(lambda f: f.cancelled() or f.exception())
    return fut


def owner_alive(owner: str, created_at: str, *, max_age_s: float = 86_400) -> bool:
    """Whether the process ``owner`` (``host:pid:random``) that made something at ``created_at`` (UTC ISO) still
    counts as running: a live pid on this host, or another host's owner younger than ``max_age_s`` seconds (pids
    are reused, and another host's cannot be asked). Batches use it for their creator, the store for work claims."""
    import os
    import socket
    from datetime import UTC, datetime

    try:
        age = (datetime.now(UTC) - datetime.fromisoformat(created_at.replace("Z", "+00:00"))).total_seconds()
    except ValueError:
        return False
    if age > max_age_s:
        return False
    host, _, rest = owner.partition(":")
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(rest.partition(":")[0]), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


class FileBatchBackend:
    """``--batch-file OUT.jsonl``: the requests are written in the OpenAI batch format (``{"custom_id", "method":
    "POST", "url": "/v1/chat/completions", "body"}`` per line) for ``vllm run-batch`` or any OpenAI-compatible batch
    runner; ``batches import RESULTS.jsonl`` reads its output (OpenAI batch output lines) back.

    Args:
        path: the file to write (several batches of one run are appended to it).
        line_for: builds the OpenAI body of a request (the OpenAI provider's, so the file is what the online call
            would send).
        response_for: reads one output line's body as the online call would (the OpenAI provider's).
    """

    kind = "file"
    limits = BatchLimits(max_requests=10**9, max_bytes=10**15)

    def __init__(self, path: str | Path, *, line_for: Callable[[str, LLMRequest], dict],
                 response_for: Callable[[BatchItem, LLMRequest], LLMResponse]):
        self.path = Path(path)
        self.path_text = str(self.path)
        self._line_for = line_for
        self._response_for = response_for
        self._written = False

    def line(self, custom_id: str, request: LLMRequest) -> dict:
        """The OpenAI batch line of ``request``."""
        return self._line_for(custom_id, request)

    def endpoint(self, line: dict) -> str:
        """The line's ``url``."""
        return str(line.get("url") or "/v1/chat/completions")

    async def submit(self, lines: list[dict], *, label: str) -> str:
        """Write (the first batch) or append the lines; return ``file:PATH``.

        Raises:
            LLMConfigError: the file cannot be written (the message names it).
        """
        if not self._written and self.path.exists() and self.path.stat().st_size > 0:
            raise LLMConfigError(f"--batch-file {self.path}: the file exists and is not empty (it may hold the "
                                 "requests of an earlier batch still to import); choose a new file name")
        mode = "a" if self._written else "w"
        try:
            with self.path.open(mode, encoding="utf-8") as f:
                for line in lines:
                    f.write(json.dumps(line, ensure_ascii=False) + "\n")
        except OSError as e:
            raise LLMConfigError(f"--batch-file {self.path}: cannot write it ({e.strerror or e})") from None
        self._written = True
        return f"file:{self.path}"

    async def find(self, label: str, *, created_after: str, count: int,
                   known: frozenset[str] = frozenset()) -> str | None:
        """A written file has no provider to ask: None."""
        return None

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        """Never ended by itself: ``batches import`` stores its results."""
        return RemoteBatch(id=batch_id, ended=False, status="exported")

    async def results(self, batch: RemoteBatch) -> AsyncIterator[BatchItem]:  # pragma: no cover - never ended
        """Nothing: results arrive through ``batches import``."""
        if False:
            yield

    def response(self, item: BatchItem, request: LLMRequest) -> LLMResponse:
        """The answer in an imported output line."""
        return self._response_for(item, request)

    async def cancel(self, batch_id: str) -> RemoteBatch:
        """Nothing to cancel at a provider."""
        return RemoteBatch(id=batch_id, ended=True, status="cancelled")
