"""Batches in the project (``llm_batches``, ``llm_batch_requests``, m024): the store side of batch mode
(:mod:`benchwright.core.llm.batch`, issue 19).

Everything a batch needs to be resumed is committed before it is submitted (its requests, their ``custom_id`` and
the lines sent) and as soon as the provider answers (its id); results are stored as the provider returned them
before any is used. A copy of the project on another machine holds the same rows, so it resumes the same batches.
"""

from __future__ import annotations

import json

from benchwright.core.llm.batch import (
    OPEN_BATCH_STATUSES,
    BatchItem,
    BatchStatus,
    NewRequest,
    ResultKind,
    StoredBatch,
    StoredRequest,
)
from benchwright.core.models import utc_now

_BATCH_COLUMNS = ("id, label, provider, provider_kind, endpoint, status, provider_batch_id, request_count, bytes, "
                  "created_at, created_by, command_json, provider_status, counts_json, error, submitted_at, ended_at, "
                  "collected_at, file, retry_of")
_OPEN = tuple(str(s) for s in OPEN_BATCH_STATUSES)


def _batch_from_row(r: tuple) -> StoredBatch:
    (id_, label, provider, kind, endpoint, status, pid, n, size, created_at, created_by, command, pstatus, counts,
     error, submitted_at, ended_at, collected_at, file, retry_of) = r
    return StoredBatch(id=id_, label=label, provider=provider, provider_kind=kind, endpoint=endpoint,
                       status=BatchStatus(status), provider_batch_id=pid, request_count=n, bytes=size,
                       created_at=created_at, created_by=created_by, command=json.loads(command or "[]"),
                       provider_status=pstatus, counts=json.loads(counts or "{}"), error=error,
                       submitted_at=submitted_at, ended_at=ended_at, collected_at=collected_at, file=file,
                       retry_of=retry_of)


class BatchStoreMixin:
    """Store methods for batch mode (implements :class:`benchwright.core.llm.batch.BatchStore`; mixed into
    :class:`benchwright.db.store.Store`)."""

    def batch_lookup(self, request_hash: str, repeat: int) -> StoredRequest | None:
        """The latest batch request for ``(request_hash, repeat)`` still of use: one in an open batch with no
        result yet (wait for it), or one whose succeeded result has not become a ledger row (use it: it was paid
        for). Errored, expired, cancelled and missing results are not of use (a new attempt is made). None when
        there is none."""
        with self._lock:
            r = self.db.conn.execute(
                "SELECT q.custom_id, q.batch_id, b.status, q.result_kind, q.result_json, q.call_id "
                "FROM llm_batch_requests q JOIN llm_batches b ON b.id = q.batch_id "
                "WHERE q.request_hash = ? AND q.repeat_index = ? AND q.call_id IS NULL AND ("
                f"(q.result_kind IS NULL AND b.status IN ({', '.join('?' * len(_OPEN))})) "
                "OR q.result_kind = 'succeeded') ORDER BY q.batch_id DESC LIMIT 1",
                (request_hash, repeat, *_OPEN)).fetchone()
        if r is None:
            return None
        return StoredRequest(custom_id=r[0], batch_id=r[1], batch_status=BatchStatus(r[2]),
                             result_kind=ResultKind(r[3]) if r[3] else None,
                             result=json.loads(r[4]) if r[4] else None, call_id=r[5])

    def create_batch(self, *, label: str, provider: str, provider_kind: str, base_url: str | None, endpoint: str,
                     owner: str, command: list[str], requests: list[NewRequest], status: BatchStatus,
                     file: str | None = None, retry_of: int | None = None
                     ) -> tuple[int | None, dict[str, StoredRequest]]:
        """Commit a batch of ``requests`` (status ``status``: ``pending``, or ``exported`` for a file) in one write
        transaction, leaving out each request another process committed meanwhile (in an open batch, or with an
        unused succeeded result): those are returned, ``our custom_id -> theirs``.

        Returns:
            ``(the new batch's id, or None when every request was left out; the requests left out)``.
        """
        BatchStatus(status)
        now = utc_now()
        dropped: dict[str, StoredRequest] = {}
        with self.write() as db:
            keep: list[tuple] = []
            size = 0
            for q in requests:
                theirs = self.batch_lookup(q.request_hash, q.repeat)
                if theirs is not None:
                    dropped[q.custom_id] = theirs
                    continue
                line = json.dumps(q.line, ensure_ascii=False, separators=(",", ":"))
                size += len(line.encode()) + 1
                keep.append((q.custom_id, q.request_hash, q.repeat, q.purpose, q.qa_pair_id, line))
            if not keep:
                return None, dropped
            cur = db.conn.execute(
                "INSERT INTO llm_batches (label, provider, provider_kind, base_url, endpoint, status, request_count, "
                "bytes, file, command_json, retry_of, created_at, created_by) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (label, provider, provider_kind, base_url, endpoint, str(status), len(keep), size, file,
                 json.dumps(command, ensure_ascii=False), retry_of, now, owner))
            batch_id = cur.lastrowid
            db.conn.executemany(
                "INSERT INTO llm_batch_requests (custom_id, batch_id, request_hash, repeat_index, purpose, "
                "qa_pair_id, line_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(cid, batch_id, h, rep, purpose, pair, line) for cid, h, rep, purpose, pair, line in keep])
        return batch_id, dropped

    def batch_submitted(self, batch_id: int, provider_batch_id: str) -> None:
        """Record the provider's id of a batch: status ``submitted``."""
        with self.write() as db:
            db.conn.execute("UPDATE llm_batches SET provider_batch_id = ?, status = 'submitted', submitted_at = ? "
                            "WHERE id = ?", (provider_batch_id, utc_now(), batch_id))

    def batch_state(self, batch_id: int, *, status: BatchStatus, provider_status: str | None = None,
                    counts: dict | None = None, error: str | None = None) -> None:
        """Record the provider's latest report of a batch (status, its own status word, counts, an error). A
        ``failed`` batch's requests without a result become ``errored`` (they were retried, not waited for)."""
        BatchStatus(status)
        now = utc_now()
        with self.write() as db:
            if status == BatchStatus.FAILED:  # refused whole: its requests are not waiting (they are retried)
                db.conn.execute(
                    "UPDATE llm_batch_requests SET result_kind = 'errored', result_json = ?, collected_at = ? "
                    "WHERE batch_id = ? AND result_kind IS NULL",
                    (json.dumps({"error": error or "the provider refused the batch"}, ensure_ascii=False), now,
                     batch_id))
            db.conn.execute(
                "UPDATE llm_batches SET status = ?, provider_status = coalesce(?, provider_status), "
                "counts_json = coalesce(?, counts_json), error = coalesce(?, error), polled_at = ?, "
                "ended_at = CASE WHEN ? IN ('ended', 'failed') AND ended_at IS NULL THEN ? ELSE ended_at END "
                "WHERE id = ? AND status NOT IN ('collected')",
                (str(status), provider_status, json.dumps(counts, sort_keys=True) if counts is not None else None,
                 error, now, str(status), now, batch_id))

    def store_batch_results(self, batch_id: int, items: list[BatchItem]) -> int:
        """Store results of a batch as the provider sent them, where none is stored yet (a second collection of the
        same batch changes nothing). A ``custom_id`` not in the batch is ignored. Returns how many were stored."""
        now = utc_now()
        with self.write() as db:
            before = db.conn.total_changes
            db.conn.executemany(
                "UPDATE llm_batch_requests SET result_kind = ?, result_json = ?, collected_at = ? "
                "WHERE custom_id = ? AND batch_id = ? AND result_kind IS NULL",
                [(str(it.kind), json.dumps(it.raw, ensure_ascii=False), now, it.custom_id, batch_id)
                 for it in items])
            return db.conn.total_changes - before

    def batch_collected(self, batch_id: int) -> None:
        """Every result of the batch is stored: its requests still without one are ``missing``; the batch is
        ``collected``."""
        now = utc_now()
        with self.write() as db:
            db.conn.execute("UPDATE llm_batch_requests SET result_kind = 'missing', collected_at = ? "
                            "WHERE batch_id = ? AND result_kind IS NULL", (now, batch_id))
            db.conn.execute("UPDATE llm_batches SET status = 'collected', collected_at = ?, "
                            "ended_at = coalesce(ended_at, ?) WHERE id = ?", (now, now, batch_id))

    def batch(self, batch_id: int) -> StoredBatch | None:
        """One batch, or None."""
        with self._lock:
            r = self.db.conn.execute(f"SELECT {_BATCH_COLUMNS} FROM llm_batches WHERE id = ?", (batch_id,)).fetchone()
        return _batch_from_row(r) if r else None

    def batches(self, *, open_only: bool = False) -> list[StoredBatch]:
        """Every batch (or only the open ones: pending, submitted, ended, exported), newest first."""
        sql = f"SELECT {_BATCH_COLUMNS} FROM llm_batches"
        args: tuple = ()
        if open_only:
            sql += f" WHERE status IN ({', '.join('?' * len(_OPEN))})"
            args = _OPEN
        with self._lock:
            return [_batch_from_row(r) for r in self.db.conn.execute(sql + " ORDER BY id DESC", args)]

    def batch_lines(self, batch_id: int) -> list[dict]:
        """The request lines of a batch, as committed, in their order."""
        with self._lock:
            return [json.loads(r[0]) for r in self.db.conn.execute(
                "SELECT line_json FROM llm_batch_requests WHERE batch_id = ? ORDER BY rowid", (batch_id,))]

    def batch_results(self, batch_id: int) -> dict[str, tuple[ResultKind | None, dict | None]]:
        """``custom_id -> (result kind, result as stored)`` of a batch (``(None, None)`` before collection)."""
        with self._lock:
            return {r[0]: (ResultKind(r[1]) if r[1] else None, json.loads(r[2]) if r[2] else None)
                    for r in self.db.conn.execute(
                        "SELECT custom_id, result_kind, result_json FROM llm_batch_requests WHERE batch_id = ? "
                        "ORDER BY rowid", (batch_id,))}

    def batch_request_counts(self, batch_id: int) -> dict[str, int]:
        """How the batch's requests stand in the project: ``{"requests", "succeeded", "errored", "expired",
        "cancelled", "missing", "waiting", "used", "unused"}`` (``used``: turned into a ledger row; ``unused``:
        succeeded results not yet used, e.g. imported ones before the command runs again)."""
        out = {"requests": 0, "waiting": 0, "used": 0, "unused": 0, **{str(k): 0 for k in ResultKind}}
        with self._lock:
            for kind, used, n in self.db.conn.execute(
                    "SELECT result_kind, call_id IS NOT NULL, count(*) FROM llm_batch_requests WHERE batch_id = ? "
                    "GROUP BY 1, 2", (batch_id,)):
                out["requests"] += n
                out[kind or "waiting"] += n
                out["used"] += n if used else 0
                out["unused"] += n if kind == "succeeded" and not used else 0
        return out

    def custom_ids_of(self, batch_id: int) -> set[str]:
        """The ``custom_id`` values of a batch's requests."""
        with self._lock:
            return {r[0] for r in self.db.conn.execute(
                "SELECT custom_id FROM llm_batch_requests WHERE batch_id = ?", (batch_id,))}

    def batch_of_custom_id(self, custom_id: str) -> int | None:
        """The local batch holding ``custom_id``, or None (an imported result line that is not ours)."""
        with self._lock:
            r = self.db.conn.execute("SELECT batch_id FROM llm_batch_requests WHERE custom_id = ?",
                                     (custom_id,)).fetchone()
        return r[0] if r else None
