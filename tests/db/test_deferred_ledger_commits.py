"""Issue 19 item 2: inside a job's ``deferring_commits`` scope a ledger row commits with the item's next write (one
transaction), and at the latest on the event loop's next turn; outside the scope it commits at once. What another
connection (another process) sees is what a kill -9 would leave."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from benchwright.core.llm.base import CallStatus
from benchwright.core.llm.client import CallRecord
from benchwright.db import Store


def _record(h: str) -> CallRecord:
    return CallRecord(provider="p", provider_kind="openai", base_url=None, requested_model="m", returned_model="m",
                      template_id=None, template_hash=None, request_hash=h, repeat=0, attempt=1, params={},
                      status=CallStatus.OK, output_text="{}")


def _committed(path) -> set[str]:
    """Request hashes another connection sees (what survives a kill of the writer)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return {r[0] for r in conn.execute("SELECT request_hash FROM llm_calls")}


def test_outside_a_scope_or_an_event_loop_a_row_commits_at_once(store: Store, db_path):
    store.record_call(_record("a"))
    assert _committed(db_path) == {"a"}
    with store.deferring_commits():  # no event loop running: nothing to defer to
        store.record_call(_record("b"))
        assert _committed(db_path) == {"a", "b"}

    async def no_scope():
        store.record_call(_record("c"))
        assert _committed(db_path) == {"a", "b", "c"}

    asyncio.run(no_scope())


def test_the_row_commits_with_the_next_write_in_one_transaction(store: Store, db_path):
    async def item():
        rid = store.record_call(_record("a"))
        assert _committed(db_path) == set()  # not yet: it waits for the item's result
        assert store.cached_call("a", 0).id == rid  # this connection reads it already
        with store.write() as db:
            db.conn.execute("INSERT INTO work_claims (work, item, owner, claimed_at) VALUES ('w', 'i', 'o', 't')")
            assert _committed(db_path) == set()
        assert _committed(db_path) == {"a"}  # both in one commit
        assert not store.db.conn.in_transaction

    with store.deferring_commits():
        asyncio.run(item())


def test_an_await_commits_the_row_before_the_task_goes_on(store: Store, db_path):
    seen = []

    async def item():
        store.record_call(_record("a"))
        store.record_call(_record("b"))  # the same open transaction
        await asyncio.sleep(0)
        seen.append(_committed(db_path))

    with store.deferring_commits():
        asyncio.run(item())
    assert seen == [{"a", "b"}]


def test_a_failing_result_write_keeps_the_ledger_row(store: Store, db_path):
    async def item():
        store.record_call(_record("a"))
        with pytest.raises(RuntimeError), store.write() as db:
            db.conn.execute("INSERT INTO work_claims (work, item, owner, claimed_at) VALUES ('w', 'i', 'o', 't')")
            raise RuntimeError("the result could not be stored")
        assert _committed(db_path) == {"a"}  # the call was paid for: it stays in the ledger
        assert store.db.conn.execute("SELECT count(*) FROM work_claims").fetchone()[0] == 0

    with store.deferring_commits():
        asyncio.run(item())


def test_a_text_repaired_row_and_leaving_the_scope_or_closing_commit_too(store: Store, db_path):
    async def item():
        rec = _record("a")
        rec.text_repaired = True  # its flag is a write inside the ledger's own block
        store.record_call(rec)
        store.record_call(_record("b"))

    async def run():
        with store.deferring_commits():
            await item()
        assert _committed(db_path) == {"a", "b"}  # the scope's end commits (no loop turn needed)
        store.record_call(_record("c"))  # scope left: at once
        assert _committed(db_path) == {"a", "b", "c"}

    asyncio.run(run())
    assert store.text_repaired("llm_calls", store.cached_call("a", 0).id)

    async def last():
        with store.deferring_commits():
            store.record_call(_record("d"))
            store.close()

    asyncio.run(last())
    assert _committed(db_path) == {"a", "b", "c", "d"}


def test_during_a_job_a_thread_checkpoints_the_wal_and_the_setting_comes_back(store: Store, db_path):
    import threading
    import time

    def threads() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name == "benchwright-checkpoint"]

    assert store.db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    with store.deferring_commits():
        assert store.db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        assert threads() == ["benchwright-checkpoint"]
        with store.deferring_commits():  # nested: one thread
            assert threads() == ["benchwright-checkpoint"]
        for i in range(50):
            store.record_call(_record(f"h{i}"))
        deadline, in_file = time.monotonic() + 10, 0
        while time.monotonic() < deadline and in_file < 50:
            time.sleep(0.05)  # immutable=1 reads the database file alone, not the WAL: what was checkpointed
            conn = sqlite3.connect(f"file:{db_path}?immutable=1", uri=True)
            try:
                in_file = conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
            except sqlite3.OperationalError:  # the tables themselves are still in the WAL only
                in_file = 0
            finally:
                conn.close()
        assert in_file == 50
    assert store.db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    assert threads() == []
