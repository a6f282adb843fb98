"""One writer thread for a job's store writes, with group commit (issue 19 item 2).

An LLM job's event loop is CPU-bound in the provider's SDK; every store write it makes itself (the ledger row of
each call, the item's claim, its result) stops the loop for the SQL and the commit. :class:`StoreWriter` runs those
writes in a thread of its own, on a connection of its own: a coroutine hands it a function of the store and awaits
the answer, and the thread runs every function queued meanwhile in ONE transaction (each in a savepoint of it, so
one failing function undoes only its own rows) and answers them after the COMMIT. SQLite works without the
interpreter lock, so the commits and most of the SQL run beside the event loop, on the other core.

The durability rule is unchanged: a coroutine goes on only once its rows are committed (a ledger row before the
output it records is used, the item's result before the item counts as done), so a kill -9 loses only writes that
were still in flight (queued, not yet answered). Functions queued with :meth:`StoreWriter.submit` (a cancelled
call's ledger row, a claim's release) are not waited for, but :meth:`StoreWriter.close` commits them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from benchwright.core.llm.client import CallRecord

T = TypeVar("T")

_STOP = object()


class StoreWriter:
    """A thread that runs store writes in batches, one transaction per batch (group commit).

    Args:
        path: the project file (the thread opens its own :class:`~benchwright.db.Store` on it).
        linger_s: after the first queued write, wait this long for more before the transaction (0: take only
            what is queued already; while one batch commits the next one gathers anyway). Seconds; default 0.
        max_batch: at most this many functions in one transaction.

    Raises:
        StoreError: the project cannot be opened (from :meth:`~benchwright.db.Store.open`).
    """

    def __init__(self, path: str | Path, *, linger_s: float = 0.0, max_batch: int = 256):
        from .store import Store

        self.store = Store.open(path, create=False)
        self.linger_s = linger_s
        self.max_batch = max(1, max_batch)
        self.batches = 0
        """Transactions committed so far (each holds one or more functions)."""
        self.writes = 0
        """Functions run so far."""
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="benchwright-store-writer", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ API
    async def run(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(store)`` in the writer's next transaction; its value once that transaction is committed.

        Raises:
            whatever ``fn`` raised (its rows are undone, the others of the batch commit); the commit's error
            (e.g. :class:`~benchwright.core.errors.StoreError` when another process held the project too long).
        """
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._put(fn, fut)
        return await asyncio.wrap_future(fut)

    def call(self, fn: Callable[[Any], T]) -> T:
        """:meth:`run` for code that cannot await (waits in this thread)."""
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._put(fn, fut)
        return fut.result()

    def submit(self, fn: Callable[[Any], Any]) -> concurrent.futures.Future:
        """Queue ``fn(store)`` without waiting for it (:meth:`close` commits it); its future."""
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._put(fn, fut)
        return fut

    def close(self) -> None:
        """Commit everything queued, end the thread and close its connection (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join()
        self.store.close()

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ the thread
    def _put(self, fn: Callable, fut: concurrent.futures.Future) -> None:
        if self._closed:
            raise RuntimeError("the store writer is closed")
        self._queue.put((fn, fut))

    def _take(self) -> tuple[list[tuple[Callable, concurrent.futures.Future]], bool]:
        first = self._queue.get()
        if first is _STOP:
            return [], True
        jobs, stop = [first], False
        deadline = time.monotonic() + self.linger_s
        while len(jobs) < self.max_batch:
            try:
                timeout = deadline - time.monotonic()
                nxt = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
            except queue.Empty:
                break
            if nxt is _STOP:
                stop = True
                break
            jobs.append(nxt)
        return jobs, stop

    def _run(self) -> None:
        stop = False
        while not stop:
            jobs, stop = self._take()
            if jobs:
                self._batch(jobs)

    def _batch(self, jobs: list[tuple[Callable, concurrent.futures.Future]]) -> None:
        done: list[tuple[concurrent.futures.Future, Any, BaseException | None]] = []
        store = self.store
        try:
            with store.write() as db:
                for fn, fut in jobs:
                    try:
                        with db.atomic():  # a savepoint: an error undoes this function's rows alone
                            done.append((fut, fn(store), None))
                    except Exception as e:  # handed to the waiting coroutine
                        done.append((fut, None, e))
        except BaseException as e:  # the BEGIN or the COMMIT failed: nothing of the batch is stored
            for _, fut in jobs:
                if not fut.done():
                    fut.set_exception(e)
            return
        self.batches += 1
        self.writes += len(jobs)
        for fut, value, err in done:  # answered only now: after the COMMIT
            if fut.cancelled():
                # its coroutine was cancelled while waiting (a stopped run): the function ran and committed all
                # the same; setting a cancelled future's result would raise InvalidStateError here and end the
                # thread, losing every write queued after it (claims' releases, other items' results)
                continue
            if err is not None:
                fut.set_exception(err)
            else:
                fut.set_result(value)


class WriterLedger:
    """The :class:`~benchwright.core.llm.client.Ledger` of a job that writes through a :class:`StoreWriter`.

    :meth:`record_call` queues the row and returns at once with a provisional id (a negative number); the writer
    inserts rows in queue order, so any function queued after it (the item's result) finds the row's real id with
    :meth:`real_ids` and commits in the same transaction as the row or a later one. The paid output is thus stored
    before, or with, what is made from it (as the ledger row committed with the item's result before the writer);
    a kill -9 loses only what was still queued. The cache is read on the job's own connection (committed rows).
    """

    def __init__(self, store: Any, writer: StoreWriter):
        self.store = store
        self.writer = writer
        self._next = 0
        self._ids: dict[int, int] = {}
        """Provisional id -> the row's id (filled in the writer thread when the row is inserted)."""

    def record_call(self, record: CallRecord) -> int:
        """Queue ``record`` for the writer's next transaction; its provisional id (negative; :meth:`real_ids`)."""
        self._next -= 1
        provisional = self._next

        def insert(s: Any) -> int:
            rid = s.record_call(record)
            self._ids[provisional] = rid
            return rid

        self.writer.submit(insert)
        return provisional

    def real_ids(self, ids: list[int]) -> list[int]:
        """``ids`` with each provisional id replaced by its row's id; for functions run by the writer (after the
        rows' inserts, which were queued first).

        Raises:
            KeyError: a row was not inserted (its insert failed).
        """
        return [self._ids[i] if i < 0 else i for i in ids]

    def cached_call(self, request_hash: str, repeat: int) -> CallRecord | None:
        """The cache (the latest committed ``ok`` row), read on the job's connection."""
        return self.store.cached_call(request_hash, repeat)
