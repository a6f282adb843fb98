"""Run one async task per item with bounded concurrency, progress reports and clean cancellation.

Used by every LLM step over many pairs. Items finish in any order; each finished item is handed to
``on_result`` at once (the caller stores it), so cancelling or killing the run loses nothing that finished.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .base import Usage

if TYPE_CHECKING:
    from .client import CallResult

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class JobProgress:
    """A snapshot of a running job.

    Attributes:
        total: items to do; done: items finished (ok, failed or skipped); failed: items that failed;
        skipped: items left alone (another process had them, or they were done meanwhile).
        calls: requests sent to the provider; cached: outputs reused from the ledger.
        usage: tokens of the calls made; cost_usd: their cost (0 without prices).
        elapsed_s: seconds since the start.
    """

    total: int
    done: int = 0
    failed: int = 0
    skipped: int = 0
    calls: int = 0
    cached: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    cost_unknown: int = 0
    """Calls made whose cost is unknown (no price configured, no usage reported, no answer); not in ``cost_usd``."""
    usage_missing: int = 0
    unanswered: int = 0
    """Of ``cost_unknown``: calls whose provider reported no token usage; calls that got no answer."""
    started: float = field(default_factory=time.monotonic)
    cancelled: bool = False

    @property
    def elapsed_s(self) -> float:
        """Seconds since the job started."""
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Items per second so far."""
        e = self.elapsed_s
        return self.done / e if e > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the current rate, or None before the first item."""
        r = self.rate
        return (self.total - self.done) / r if r > 0 else None


@dataclass
class ItemTally:
    """What one item contributes to the progress (steps fill it in)."""

    failed: bool = False
    skipped: bool = False
    calls: int = 0
    cached: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    cost_unknown: int = 0
    usage_missing: int = 0
    unanswered: int = 0


@dataclass(kw_only=True)
class OutcomeAccounting:
    """What one item's LLM calls took, summed over its calls: a base for per-item outcome dataclasses (curation
    steps, judgments, direct answers, failure-mode labels).

    The fields are keyword-only, so a subclass declares its own positional fields before them.

    Attributes:
        call_ids: ledger ids (``llm_calls.id``) of the calls, in order.
        calls: requests sent to the provider (0 when everything came from the cache).
        cached: outputs reused from the ledger.
        usage: tokens of the calls; cost_usd: their cost in US dollars (0 without prices).
    """

    call_ids: list[int] = field(default_factory=list)
    calls: int = 0
    cached: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    usage_missing: int = 0
    """Calls whose provider reported no token usage: their cost is unknown and not in ``cost_usd``."""
    cost_unknown: int = 0
    """Calls made whose cost is unknown (no price configured, no usage reported, or no answer)."""
    unanswered: int = 0
    """Of ``cost_unknown``, calls that got no answer (timeout, connection lost, cancelled in flight)."""

    def add(self, r: CallResult) -> None:
        """Account for one call result (:class:`~.client.CallResult`)."""
        self.call_ids += r.call_ids
        self.usage_missing += getattr(r, "usage_missing", 0)
        self.cost_unknown += getattr(r, "cost_unknown", 0)
        self.unanswered += getattr(r, "unanswered", 0)
        self.calls += r.calls
        self.cached += int(r.cached)
        self.usage = self.usage + r.usage
        self.cost_usd += r.cost_usd

    def item_failed(self) -> bool:
        """True when the item counts as failed in a job's progress; by default when it is not ``ok`` (a
        subclass without an ``ok`` property overrides this)."""
        return not self.ok  # type: ignore[attr-defined]

    def tally(self) -> ItemTally:
        """This outcome's share of a job's progress (:class:`ItemTally`; ``failed`` from :meth:`item_failed`)."""
        return ItemTally(failed=self.item_failed(), calls=self.calls, cached=self.cached, usage=self.usage,
                         cost_usd=self.cost_usd, cost_unknown=self.cost_unknown, usage_missing=self.usage_missing,
                         unanswered=self.unanswered)


class SkipItem(BaseException):
    """Raised by an item's work to leave the item alone, with no result (counted ``skipped``): ``batches resume``
    collects what its batches hold and sends nothing new (:attr:`~.batch.BatchPolicy.resume_only`). A
    ``BaseException``, so that a step's ``except Exception`` does not record it as the item's failure."""


class Job(Generic[T, R]):
    """Runs ``work(item)`` for every item with at most ``concurrency`` in flight.

    Args:
        work: the async task for one item; returns a result R.
        tally: how a result counts toward the progress.
        on_result: called (in the event loop) with each item and its result as soon as it finishes.
        on_progress: called after each item with the current :class:`JobProgress`.
    """

    def __init__(self, work: Callable[[T], Awaitable[R]], *, concurrency: int, tally: Callable[[R], ItemTally],
                 on_result: Callable[[T, R], Any] | None = None,
                 on_progress: Callable[[JobProgress], Any] | None = None):
        self.work = work
        self.concurrency = max(1, concurrency)
        self.tally = tally
        self.on_result = on_result
        self.on_progress = on_progress

    async def run(self, items: Iterable[T]) -> JobProgress:
        """Run every item; return the final progress (``cancelled`` set when the job was cancelled).

        Cancellation (Ctrl+C in the CLI, closing the screen in the app) cancels in-flight tasks; results
        already handed to ``on_result`` are kept. The :class:`asyncio.CancelledError` is re-raised.
        """
        items = list(items)
        progress = JobProgress(total=len(items))
        queue: asyncio.Queue = asyncio.Queue()
        for it in items:
            queue.put_nowait(it)

        async def worker() -> None:
            while True:
                try:
                    item = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                try:
                    result = await self.work(item)
                except SkipItem:
                    progress.done += 1
                    progress.skipped += 1
                    if self.on_progress is not None:
                        self.on_progress(progress)
                    continue
                t = self.tally(result)
                progress.done += 1
                progress.failed += int(t.failed)
                progress.skipped += int(t.skipped)
                progress.calls += t.calls
                progress.cached += t.cached
                progress.usage = progress.usage + t.usage
                progress.cost_usd += t.cost_usd
                progress.cost_unknown += t.cost_unknown
                progress.usage_missing += t.usage_missing
                progress.unanswered += t.unanswered
                if self.on_result is not None:
                    self.on_result(item, result)
                if self.on_progress is not None:
                    self.on_progress(progress)

        tasks = [asyncio.ensure_future(worker()) for _ in range(min(self.concurrency, len(items)) or 1)]
        try:
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            progress.cancelled = True
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.on_progress is not None:
                self.on_progress(progress)
            raise
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return progress


def describe_cost(cost_usd: float, *, calls: int, cost_unknown: int = 0, usage_missing: int = 0,
                  unanswered: int = 0) -> str:
    """How much some calls cost, for people: ``"$0.0123"``, ``"cost unknown (no price configured)"`` when no call
    made has a known cost, or ``"$0.0123 + unknown for 2 calls (...)"`` when only some do.

    Args:
        cost_usd: the known part, in US dollars.
        calls: requests sent to a provider (cached outputs are free and not counted).
        cost_unknown: of those, calls whose cost is unknown (see
            :func:`~benchwright.core.llm.client.cost_is_unknown`).
        usage_missing: of those, calls whose provider reported no token usage (named in the reason).
        unanswered: of those, calls that got no answer, which the provider may still bill (named in the reason).

    A cost is never shown as ``$0`` when it is in fact unknown (the ledger keeps ``cost_usd`` NULL for those).
    """
    missing = min(usage_missing, cost_unknown)
    silent = min(unanswered, cost_unknown - missing)
    unpriced = cost_unknown - missing - silent
    reasons = []
    if missing:
        reasons.append(f"{missing} reported no token usage")
    if silent:
        reasons.append(f"{silent} got no answer and may still be billed")
    if unpriced:
        reasons.append("no price configured" if unpriced == calls else f"{unpriced} without a configured price")
    why = f" ({'; '.join(reasons)})" if reasons else ""
    if calls and cost_unknown >= calls:
        return f"cost unknown{why}"
    if cost_unknown:
        return f"${cost_usd:.4f} + unknown for {cost_unknown} call{'s' if cost_unknown != 1 else ''}{why}"
    return f"${cost_usd:.4f}"
