"""Batcher.aclose (core/llm/batch.py): a front end whose event loop outlives the job (the app) stops the batcher's
pollers and gathering when the job stops, instead of leaving them polling the provider in the background; the batch
stays at the provider and in the project."""

from __future__ import annotations

import asyncio

import pytest
from test_batcher import LoopBackend, _client, _run_all

from benchwright.core.llm.batch import BatchStatus
from benchwright.db import Store


@pytest.fixture()
def store(tmp_path):
    with Store.open(tmp_path / "p.db", create=True) as s:
        yield s


async def test_aclose_stops_polling_a_batch_left_running(store):
    backend = LoopBackend(polls=10**6)  # never ends
    client, _ = _client(store, backend)
    reports = []
    client.batch.on_progress = reports.append
    task = asyncio.ensure_future(_run_all(client, range(4)))
    while not store.batches() or store.batches()[0].status is not BatchStatus.SUBMITTED:
        await asyncio.sleep(0.005)
    task.cancel()  # the job stops; its poller is a task of the batcher, not of the job
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.02)
    (remote,) = backend.batches.values()
    assert remote["polls"] > 0  # still polling after the job stopped: what aclose ends
    await client.batch.aclose()
    polls, seen = remote["polls"], len(reports)
    await asyncio.sleep(0.05)  # 50 poll intervals
    assert remote["polls"] == polls and len(reports) == seen
    assert not client.batch._tasks
    (batch,) = store.batches()
    assert batch.status is BatchStatus.SUBMITTED and backend.submissions == 1  # left at the provider, kept here


async def test_aclose_cancels_a_gathering_that_was_not_submitted(store):
    backend = LoopBackend()
    client, _ = _client(store, backend)
    client.batch.policy.gather_s = 60  # the gathering timer would submit in a minute
    task = asyncio.ensure_future(_run_all(client, range(3)))
    while client.batch.progress.gathering < 3:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await client.batch.aclose()
    assert not client.batch._timer and backend.submissions == 0 and store.batches() == []
