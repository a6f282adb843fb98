"""Migration m011 (issue 12 item 4): the ledger gains ``stop_reason`` / ``stop_reason_raw`` and the status
``truncated``; a project with calls from before keeps every row, its indexes and its append-only triggers."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest
import sqlite_utils

from benchwright.core.llm.base import CallStatus
from benchwright.core.llm.client import CallRecord
from benchwright.db import Store
from benchwright.db.migrations import migrations


def _old_row(conn, uid: str) -> None:
    conn.execute(
        "INSERT INTO llm_calls (created_at, provider, provider_kind, requested_model, request_hash, status, "
        "output_text, uid) VALUES ('2025-01-01', 'openai', 'openai', 'm1', 'h1', 'ok', '{\"a\": 1}', ?)", [uid])


def test_upgrade_keeps_old_calls_and_allows_truncated_with_stop_reasons(tmp_path):
    path = tmp_path / "project.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m011_llm_stop_reasons")
    _old_row(db.conn, "u1")
    with pytest.raises(sqlite3.IntegrityError):  # before m011 a truncated call could not be recorded
        db.conn.execute("INSERT INTO llm_calls (created_at, provider, provider_kind, requested_model, request_hash, "
                        "status, uid) VALUES ('x', 'p', 'openai', 'm', 'h', 'truncated', 'u2')")
    db.conn.commit()
    db.close()
    with Store.open(path) as store:
        [old] = store.llm_calls()
        assert (old.status, old.output_text, old.stop_reason, old.stop_reason_raw) == ("ok", '{"a": 1}', None, None)
        assert store.cached_call("h1", 0).id == old.id
        rid = store.record_call(CallRecord(
            provider="openai", provider_kind="openai", base_url=None, requested_model="m1", returned_model="m1",
            template_id=None, template_hash=None, request_hash="h2", repeat=0, attempt=1, params={"max_tokens": 5},
            status=CallStatus.TRUNCATED, output_text='{"a": ', stop_reason="length", stop_reason_raw="length"))
        new = store.llm_calls(ids=[rid])[0]
        assert (new.status, new.stop_reason, new.stop_reason_raw) == (CallStatus.TRUNCATED, "length", "length")
        conn = store.db.conn
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE llm_calls SET status = 'ok' WHERE id = ?", [rid])
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM llm_calls")
        with pytest.raises(ValueError, match="end_turn"):  # only the core vocabulary, checked on write
            store.record_call(dataclasses.replace(store.llm_calls(ids=[rid])[0], stop_reason="end_turn"))
        with pytest.raises(ValueError, match="finished"):
            store.record_call(dataclasses.replace(store.llm_calls(ids=[rid])[0], status="finished"))
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' "
                                              "AND tbl_name = 'llm_calls'")}
        assert {"llm_calls_cache", "llm_calls_pair"} <= indexes
