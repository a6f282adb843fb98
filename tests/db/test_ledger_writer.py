"""Issue 19 item 2: the job's store writer (benchwright.db.writer). Writes queued together commit in one
transaction; a coroutine is answered only after its rows are committed (what another connection, i.e. a kill -9,
sees); a failing write undoes only its own rows; ledger rows get provisional ids that map to the rows' ids; and a
curation run through it stores real call ids and leaves no claim behind, finished or cancelled."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from benchwright.core.curation import StepSettings
from benchwright.core.llm import Delay, LLMClient, ScriptedProvider
from benchwright.core.llm.base import CallStatus
from benchwright.core.llm.client import CallRecord
from benchwright.db import Store
from benchwright.db.writer import StoreWriter, WriterLedger
from benchwright.tui.services.curation_runs import run_curation

CHECKLIST = {"items": [
    {"kind": "knowledge", "key_point": "Fact one", "weight": 9,
     "rubric": [{"score": 0, "criterion": "Missing."}, {"score": 9, "criterion": "Stated."}]},
    {"kind": "clarity", "key_point": "Clarity & Organization", "weight": 1,
     "rubric": [{"score": 0, "criterion": "Severe hallucination, or an incoherent, disorganized answer."},
                {"score": 1, "criterion": "Clear, well-organized answer without severe hallucination."}]},
]}


def _record(h: str) -> CallRecord:
    return CallRecord(provider="p", provider_kind="fake", base_url=None, requested_model="m", returned_model="m",
                      template_id=None, template_hash=None, request_hash=h, repeat=0, attempt=1, params={},
                      status=CallStatus.OK, output_text="{}")


def _committed(path, sql: str = "SELECT request_hash FROM llm_calls") -> set:
    """What another connection sees (what survives a kill of this process)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return {r[0] for r in conn.execute(sql)}


def test_writes_queued_together_commit_in_one_transaction_and_answer_after_it(store: Store, db_path):
    seen_at_answer = []

    async def go(writer: StoreWriter):
        async def one(i: int):
            rid = await writer.run(lambda s: s.record_call(_record(f"h{i}")))
            seen_at_answer.append(f"h{i}" in _committed(db_path))
            return rid

        return await asyncio.gather(*(one(i) for i in range(40)))

    with StoreWriter(db_path) as writer:
        ids = asyncio.run(go(writer))
        assert writer.writes == 40 and writer.batches < 40  # grouped
    assert all(seen_at_answer)  # every answer came after its row was committed
    assert len(set(ids)) == 40
    assert _committed(db_path) == {f"h{i}" for i in range(40)}


def test_a_failing_write_undoes_its_own_rows_only(store: Store, db_path):
    def bad(s: Store):
        s.record_call(_record("bad"))
        raise ValueError("boom")

    async def go(writer: StoreWriter):
        return await asyncio.gather(writer.run(lambda s: s.record_call(_record("good"))), writer.run(bad),
                                    return_exceptions=True)

    with StoreWriter(db_path, linger_s=0.05) as writer:  # both in one batch
        good, err = asyncio.run(go(writer))
        assert writer.batches == 1
    assert isinstance(good, int) and isinstance(err, ValueError) and str(err) == "boom"
    assert _committed(db_path) == {"good"}


def test_submitted_writes_are_committed_by_close(store: Store, db_path):
    writer = StoreWriter(db_path, linger_s=0.2)
    for i in range(5):
        writer.submit(lambda s, i=i: s.record_call(_record(f"s{i}")))
    writer.close()
    writer.close()  # idempotent
    assert _committed(db_path) == {f"s{i}" for i in range(5)}
    with pytest.raises(RuntimeError, match="closed"):
        writer.submit(lambda s: None)


def test_provisional_ids_map_to_the_rows_in_queue_order(store: Store, db_path):
    with StoreWriter(db_path) as writer:
        ledger = WriterLedger(store, writer)
        a, b = ledger.record_call(_record("a")), ledger.record_call(_record("b"))
        assert a < 0 and b < 0 and a != b
        # a function queued after the rows finds their ids (and commits with them or after them)
        real = writer.call(lambda s: ledger.real_ids([a, 7, b]))
    rows = dict(sqlite3.connect(db_path).execute("SELECT request_hash, id FROM llm_calls").fetchall())
    assert real == [rows["a"], 7, rows["b"]]
    assert ledger.cached_call("a", 0).id == rows["a"]  # the cache reads committed rows


def _pairs(store: Store, n: int) -> list[str]:
    """``n`` distinct pairs of repository ``r``; their ids in queue order."""
    from benchwright.core.importers import ParseResult
    from benchwright.core.models import QAPair, Repository, SourceRef, qa_pair_id

    src = store.path.parent / "src.jsonl"
    src.write_text("{}\n")
    result = ParseResult("swe-qa", str(src))
    for i in range(n):
        q, a = f"How does part {i} work?", f"Part {i} works by calling f{i}."
        result.read += 1
        result.pairs.append(QAPair(id=qa_pair_id("r", q, a), repository="r", question=q, reference_answer=a,
                                   source=SourceRef(format="swe-qa", file=str(src), line=i + 1, unit="line")))
    store.add_repository(Repository(name="r", version_label="1"), "alice")
    store.apply_import(result, annotator="alice", file_path=src)
    return [r.id for r in store.queue_page("alice", limit=n + 1)]


def test_a_curation_run_through_the_writer_stores_real_call_ids_and_no_claims(store: Store, db_path):
    ids = _pairs(store, 150)  # more than one group of claims
    client = LLMClient(ScriptedProvider(lambda r: CHECKLIST, concurrency=8), store)
    progress = asyncio.run(run_curation(store, client, "checklist", ids, StepSettings(model="g"), by="alice"))
    assert (progress.done, progress.failed, progress.calls) == (150, 0, 150)
    assert client.ledger is store  # the caller's client is left as it was
    calls = dict(store.db.conn.execute("SELECT qa_pair_id, id FROM llm_calls").fetchall())
    stored = store.db.conn.execute("SELECT qa_pair_id, call_ids_json FROM curation_results").fetchall()
    assert len(stored) == 150
    assert all(json.loads(c) == [calls[p]] for p, c in stored)
    assert _committed(db_path, "SELECT item FROM work_claims") == set()


def test_a_cancelled_run_through_the_writer_keeps_what_finished_and_releases_every_claim(store: Store, db_path):
    ids = _pairs(store, 150)
    client = LLMClient(ScriptedProvider(lambda r: Delay(0.05, CHECKLIST), concurrency=4), store)

    async def go():
        task = asyncio.ensure_future(run_curation(store, client, "checklist", ids, StepSettings(model="g"),
                                                  by="alice"))
        while len(_committed(db_path, "SELECT qa_pair_id FROM curation_results")) < 5:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert _committed(db_path, "SELECT item FROM work_claims") == set()
    done = _committed(db_path, "SELECT qa_pair_id FROM curation_results")
    paid = _committed(db_path, "SELECT qa_pair_id FROM llm_calls WHERE status = 'ok'")
    assert 5 <= len(done) < 150 and done <= paid  # every stored result has its ledger row


def test_a_write_whose_waiter_was_cancelled_still_commits_and_the_writes_after_it_too(store: Store, db_path):
    # a stopped run cancels coroutines waiting on writer.run: the function runs and commits all the same, and the
    # thread goes on (it once died setting the cancelled future's result, losing every write queued after it)
    import threading

    running, go_on = threading.Event(), threading.Event()

    def slow(s):
        running.set()
        go_on.wait(10)
        return s.record_call(_record("slow"))

    async def go(writer: StoreWriter):
        task = asyncio.ensure_future(writer.run(slow))
        while not running.is_set():
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        after = writer.submit(lambda s: s.record_call(_record("after")))
        go_on.set()
        return after

    writer = StoreWriter(db_path)
    after = asyncio.run(go(writer))
    writer.close()
    assert after.result(timeout=5) is not None
    assert _committed(db_path) == {"slow", "after"}
