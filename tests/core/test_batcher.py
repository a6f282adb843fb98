"""The batcher (core/llm/batch.py) with the project store: gathering, commit before submit, out-of-order results
matched by custom_id, retries of errored / expired / missing requests, resume without a second submission, a
pending batch recovered after a kill between commit and the provider's answer, the batch price in the ledger."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket

import pytest

from benchwright.core.llm.base import ChatMessage, LLMError, LLMRequest, LLMResponse, Usage
from benchwright.core.llm.batch import (
    Batcher,
    BatchItem,
    BatchItemFailed,
    BatchLimits,
    BatchPolicy,
    BatchStatus,
    RemoteBatch,
    ResultKind,
    RetryPolicy,
)
from benchwright.core.llm.client import LLMClient, Price
from benchwright.core.llm.fake import ScriptedProvider
from benchwright.db import Store

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class Died(BaseException):
    """A process death in the middle of a submission (a BaseException, as a kill is not an error to handle)."""


class LoopBackend:
    """A provider batch API in memory: every request answered ``{"n": <its number>}``; knobs for errored, expired,
    missing ids, a shuffled order, polls before the end, a submission that dies after the provider created it."""

    kind = "fake"

    def __init__(self, *, polls: int = 1, errored=(), expired=(), missing=(), limits=None, die_after_create=False,
                 errored_in=None):
        self.limits = limits or BatchLimits(max_requests=1000, max_bytes=10**9)
        self.polls, self.errored, self.expired, self.missing = polls, set(errored), set(expired), set(missing)
        self.batches: dict[str, dict] = {}
        self.submissions = 0
        self.die_after_create = die_after_create
        self.errored_in = errored_in  # None: errored in every batch; else only in these batch ids

    def line(self, custom_id, request):
        return {"custom_id": custom_id, "params": {"n": int(request.messages[-1].content)}}

    def endpoint(self, line):
        return "/v1/messages"

    async def submit(self, lines, *, label):
        self.submissions += 1
        bid = f"b{len(self.batches) + 1}"
        self.batches[bid] = {"lines": list(lines), "label": label, "polls": 0}
        if self.die_after_create:
            self.die_after_create = False
            raise Died  # the process dies after the provider created the batch, before we recorded it
        return bid

    async def find(self, label, *, created_after, count, known=frozenset()):
        hits = [b for b, v in self.batches.items() if v["label"] == label]
        return hits[0] if hits else None

    async def retrieve(self, batch_id):
        b = self.batches[batch_id]
        b["polls"] += 1
        ended = b["polls"] > self.polls
        return RemoteBatch(id=batch_id, ended=ended, status="ended" if ended else "in_progress",
                           counts={"processing": 0 if ended else len(b["lines"])})

    async def results(self, batch):
        lines = list(self.batches[batch.id]["lines"])
        random.Random(7).shuffle(lines)
        for ln in lines:
            n = ln["params"]["n"]
            if n in self.missing:
                continue
            errs = n in self.errored and (self.errored_in is None or batch.id in self.errored_in)
            kind = (ResultKind.ERRORED if errs else ResultKind.EXPIRED if n in self.expired
                    else ResultKind.SUCCEEDED)
            yield BatchItem(ln["custom_id"], kind, {"custom_id": ln["custom_id"], "n": n, "kind": str(kind)})

    def response(self, item, request):
        if item.kind is not ResultKind.SUCCEEDED:
            raise BatchItemFailed("not succeeded", kind=item.kind)
        return LLMResponse(text=json.dumps({"n": item.raw["n"]}), model="m", usage=Usage(100, 10),
                           request_id=f"msg-{item.raw['n']}", stop_reason="end_turn")

    async def cancel(self, batch_id):
        return RemoteBatch(id=batch_id, ended=True, status="canceling")


def _client(store, backend, *, retry=RetryPolicy.ONLINE, online=None):
    provider = ScriptedProvider(online or (lambda r: {"n": -1}))
    client = LLMClient(provider, store, prices={"m": Price(input=2.0, output=8.0)})
    client.batch = Batcher(backend, store, BatchPolicy(poll_interval_s=0.001, gather_s=0.01, retry=retry,
                                                       owner=f"{socket.gethostname()}:{os.getpid()}:x"),
                           provider="fake", provider_kind="fake")
    return client, provider


def _req(n: int) -> LLMRequest:
    return LLMRequest(model="m", messages=(ChatMessage("user", str(n)),), json_schema=SCHEMA)


async def _run_all(client, ns):
    return await asyncio.gather(*(client.call(_req(n), purpose="t") for n in ns))


@pytest.fixture()
def store(tmp_path):
    with Store.open(tmp_path / "p.db", create=True) as s:
        yield s


async def test_requests_are_gathered_into_one_batch_and_matched_by_custom_id(store):
    backend = LoopBackend(polls=2)
    client, provider = _client(store, backend)
    results = await _run_all(client, range(20))
    assert [r.parsed["n"] for r in results] == list(range(20))  # shuffled results, each back with its request
    assert backend.submissions == 1 and not provider.calls
    (batch,) = store.batches()
    assert batch.status is BatchStatus.COLLECTED and batch.request_count == 20
    rows = store.db.conn.execute("SELECT count(*), count(DISTINCT batch_id), sum(cost_usd) FROM llm_calls").fetchone()
    # batch price: half of (100 x $2 + 10 x $8) per million, for each of 20 calls
    assert rows[0] == 20 and rows[1] == 1 and rows[2] == pytest.approx(20 * (100 * 1.0 + 10 * 4.0) / 1e6)
    assert store.batch_request_counts(batch.id)["used"] == 20


async def test_a_rerun_uses_the_cache_and_submits_nothing(store):
    backend = LoopBackend()
    client, _ = _client(store, backend)
    await _run_all(client, range(5))
    client2, _ = _client(store, backend)
    again = await _run_all(client2, range(5))
    assert all(r.cached for r in again) and backend.submissions == 1


async def test_errored_expired_and_missing_requests_are_retried_online_never_scored(store):
    backend = LoopBackend(errored={1}, expired={2}, missing={3})
    client, provider = _client(store, backend, online=lambda r: {"n": 100 + int(r.messages[-1].content)})
    results = await _run_all(client, range(5))
    assert [r.parsed["n"] for r in results] == [0, 101, 102, 103, 4]
    assert sorted(int(r.messages[-1].content) for r in provider.calls) == [1, 2, 3]
    kinds = dict(store.db.conn.execute("SELECT result_kind, count(*) FROM llm_batch_requests GROUP BY 1").fetchall())
    assert kinds == {"succeeded": 3, "errored": 1, "expired": 1, "missing": 1} | {"succeeded": 2}


async def test_retry_in_a_new_batch(store):
    backend = LoopBackend(errored={1}, errored_in={"b1"})  # errored in the first batch, answered in the second
    client, provider = _client(store, backend, retry=RetryPolicy.BATCH)
    results = await _run_all(client, range(3))
    assert [r.parsed["n"] for r in results] == [0, 1, 2]
    assert backend.submissions == 2 and not provider.calls
    assert [b.request_count for b in store.batches()] == [1, 3]


async def test_provider_limits_split_a_job_into_several_batches(store):
    backend = LoopBackend(limits=BatchLimits(max_requests=4, max_bytes=10**9))
    client, _ = _client(store, backend)
    results = await _run_all(client, range(10))
    assert [r.parsed["n"] for r in results] == list(range(10))
    assert backend.submissions == 3 and sorted(b.request_count for b in store.batches()) == [2, 4, 4]


async def test_a_killed_client_resumes_the_batch_without_a_second_submission(store):
    backend = LoopBackend(polls=10**6)  # never ends while the first client waits
    client, _ = _client(store, backend)
    task = asyncio.ensure_future(_run_all(client, range(6)))
    while not store.batches() or store.batches()[0].status is not BatchStatus.SUBMITTED:
        await asyncio.sleep(0.005)
    task.cancel()  # Ctrl+C: the batch stays at the provider
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.db.conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0] == 0  # nothing recorded cancelled
    backend.polls = 0
    client2, _ = _client(store, backend)
    results = await _run_all(client2, range(6))
    assert [r.parsed["n"] for r in results] == list(range(6)) and backend.submissions == 1


async def test_results_stored_but_not_used_are_used_on_the_rerun(store):
    backend = LoopBackend()
    client, _ = _client(store, backend)
    await _run_all(client, range(3))
    # as if the process died after storing the results and before making ledger rows of two of them
    batch = store.batches()[0]
    with store.write() as db:
        db.conn.execute("UPDATE llm_batch_requests SET call_id = NULL WHERE batch_id = ?", (batch.id,))
    client2, _ = _client(store, backend)
    again = await asyncio.gather(*(client2.call(_req(n), purpose="t", force=True) for n in range(3)))
    assert [r.parsed["n"] for r in again] == [0, 1, 2] and backend.submissions == 1


async def test_a_pending_batch_whose_process_died_is_found_at_the_provider(store):
    backend = LoopBackend(die_after_create=True)
    client, _ = _client(store, backend)
    await _run_all(client, range(4))  # the calls end in errors: the process "died"
    (batch,) = store.batches()
    assert batch.status is BatchStatus.PENDING and batch.provider_batch_id is None
    with store.write() as db:  # the dead process's owner
        db.conn.execute("UPDATE llm_batches SET created_by = ?", (f"{socket.gethostname()}:999999999:dead",))
    client2, _ = _client(store, backend)
    results = await _run_all(client2, range(4))
    assert [r.parsed["n"] for r in results] == list(range(4))
    assert backend.submissions == 1 and store.batches()[0].provider_batch_id == "b1"


async def test_a_refused_batch_is_failed_and_its_requests_go_online(store):
    backend = LoopBackend()

    async def refuse(lines, *, label):
        raise LLMError("HTTP 400: too big")

    backend.submit = refuse
    client, provider = _client(store, backend, online=lambda r: {"n": 7})
    results = await _run_all(client, range(2))
    assert [r.parsed["n"] for r in results] == [7, 7] and len(provider.calls) == 2
    assert store.batches()[0].status is BatchStatus.FAILED and "too big" in store.batches()[0].error


async def test_a_copy_of_the_project_on_another_machine_resumes_the_batch(tmp_path):
    import shutil

    backend = LoopBackend(polls=10**6)
    with Store.open(tmp_path / "p.db", create=True) as store:
        client, _ = _client(store, backend)
        task = asyncio.ensure_future(_run_all(client, range(4)))
        while not store.batches() or store.batches()[0].status is not BatchStatus.SUBMITTED:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    (tmp_path / "elsewhere").mkdir()
    shutil.copy(tmp_path / "p.db", tmp_path / "elsewhere" / "p.db")  # the project file, closed, carried over
    backend.polls = 0
    with Store.open(tmp_path / "elsewhere" / "p.db") as copy:
        client2, _ = _client(copy, backend)
        results = await _run_all(client2, range(4))
        assert [r.parsed["n"] for r in results] == list(range(4)) and backend.submissions == 1
        assert copy.batches()[0].status is BatchStatus.COLLECTED


async def test_two_clients_on_one_batch_record_each_result_once(store):
    backend = LoopBackend(polls=3)
    client1, _ = _client(store, backend)
    client2, _ = _client(store, backend)
    first, second = await asyncio.gather(_run_all(client1, range(5)), _run_all(client2, range(5)))
    assert [r.parsed["n"] for r in first] == [r.parsed["n"] for r in second] == list(range(5))
    assert backend.submissions == 1
    assert store.db.conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0] == 5  # not 10: paid once
    assert sum(r.calls for r in first + second) == 5 and sum(r.cached for r in first + second) == 5


async def test_resume_only_sends_nothing_new(store):
    from benchwright.core.llm.jobs import ItemTally, Job, SkipItem

    backend = LoopBackend(polls=10**6)
    client, _ = _client(store, backend)
    task = asyncio.ensure_future(_run_all(client, range(3)))
    while not store.batches() or store.batches()[0].status is not BatchStatus.SUBMITTED:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    backend.polls = 0
    client2, _ = _client(store, backend)
    client2.batch.policy.resume_only = True
    done: dict[int, int] = {}

    async def work(n):
        return await client2.call(_req(n), purpose="t")

    job = Job(work, concurrency=100, tally=lambda r: ItemTally(), on_result=lambda n, r: done.__setitem__(n, r.parsed["n"]))
    final = await job.run(range(6))  # the batch holds 0, 1, 2; 3, 4, 5 are in no batch
    assert done == {0: 0, 1: 1, 2: 2} and final.skipped == 3 and backend.submissions == 1
    assert issubclass(SkipItem, BaseException) and not issubclass(SkipItem, Exception)


async def test_a_failed_batch_has_no_request_left_waiting(store):
    backend = LoopBackend()

    async def refuse(lines, *, label):
        raise LLMError("HTTP 404: no batch API here")

    backend.submit = refuse
    client, _ = _client(store, backend, online=lambda r: {"n": 1})
    await _run_all(client, range(3))
    (batch,) = store.batches()
    counts = store.batch_request_counts(batch.id)
    assert counts["waiting"] == 0 and counts["errored"] == 3
    assert client.batch.progress.batches[batch.id]["status"] == "failed"
    assert store.batch_lookup(client.request_hash(_req(0)), 0) is None
