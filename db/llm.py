"""The LLM call ledger (which is also the cache), the link store, and curation step results."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.core.llm.base import CallStatus, StopReason, ToolCall, Usage
from benchwright.core.llm.client import CallRecord
from benchwright.core.models import utc_now
from benchwright.core.steps import STEP_REGISTRY, STEPS

from .locking import serialized
from .textguard import storable_as_is

CURATION_STEPS = STEPS
"""The curation pipeline's steps in order (RepoProbe §3.2, figure 2): the live view of core's step registry, which
``curation_results.step`` is checked against on write (m016 dropped the CHECK)."""

_CALL_COLUMNS = (
    "id, created_at, provider, provider_kind, base_url, requested_model, returned_model, template_id, "
    "template_hash, request_hash, repeat_index, attempt, params_json, status, input_tokens, output_tokens, "
    "cache_read_tokens, cache_write_tokens, latency_s, cost_usd, request_id, http_attempts, http_status, "
    "output_text, parsed_json, error, purpose, qa_pair_id, stop_reason, stop_reason_raw, tool_calls_json"
)


@dataclass(frozen=True)
class CurationResult:
    """One stored result of a curation step for a pair.

    Attributes:
        status: ``ok`` or ``failed`` (``reason`` and ``raw_text`` say why).
        flagged: the step raised a flag (not code-relevant; verification failed).
        output: the step's structured output (see core/curation.py for each step's shape).
        call_ids: ledger ids of the calls behind it; ``calls_made``: how many of them were new (0 = cache).
    """

    id: int
    qa_pair_id: str
    step: str
    status: str
    flagged: bool
    output: dict
    raw_text: str | None
    reason: str | None
    model: str | None
    template_hash: str | None
    call_ids: list[int]
    calls_made: int
    created_at: str
    created_by: str
    input_hash: str | None = None


@dataclass(frozen=True)
class Link:
    """A resolved external URL: the text a user saved for it (``benchwright links add URL FILE``)."""

    url: str
    content: str
    source_file: str
    sha256: str
    added_at: str
    added_by: str


CLAIM_MAX_AGE_S = 24 * 3600
"""A claim older than this is taken over even when its owner seems alive (pids are reused)."""


def claim_owner() -> str:
    """This process's claim owner: ``host:pid:random`` (unique per process start)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_alive(owner: str, claimed_at: str) -> bool:
    """Whether the claim of ``owner`` made at ``claimed_at`` (UTC ISO time) still counts: a process on this
    host that still runs, or a claim from another host younger than :data:`CLAIM_MAX_AGE_S`
    (:func:`benchwright.core.llm.batch.owner_alive`, the rule batches use for their creator too)."""
    from benchwright.core.llm.batch import owner_alive as alive

    return alive(owner, claimed_at, max_age_s=CLAIM_MAX_AGE_S)
    return True


def _record_from_row(r: tuple) -> CallRecord:
    (id_, created_at, provider, kind, base_url, req_model, ret_model, tpl_id, tpl_hash, rhash, repeat, attempt,
     params, status, it, ot, crt, cwt, latency, cost, request_id, http_attempts, http_status, out, parsed,
     error, purpose, pair, stop_reason, stop_reason_raw, tool_calls) = r
    return CallRecord(
        provider=provider, provider_kind=kind, base_url=base_url, requested_model=req_model,
        returned_model=ret_model, template_id=tpl_id, template_hash=tpl_hash, request_hash=rhash, repeat=repeat,
        attempt=attempt, params=json.loads(params), status=CallStatus(status), usage=Usage(it, ot, crt, cwt),
        latency_s=latency, cost_usd=cost, request_id=request_id, http_attempts=http_attempts,
        http_status=http_status, output_text=out, parsed=json.loads(parsed) if parsed else None, error=error,
        purpose=purpose, qa_pair_id=pair, created_at=created_at, id=id_, stop_reason=stop_reason,
        stop_reason_raw=stop_reason_raw,
        tool_calls=tuple(ToolCall.from_json(c) for c in json.loads(tool_calls)) if tool_calls else (),
    )


class LLMStoreMixin:
    """Ledger, links and curation methods of :class:`benchwright.db.Store` (implements
    :class:`benchwright.core.llm.client.Ledger`)."""

    # ------------------------------------------------------------------ ledger
    @serialized
    def record_call(self, record: CallRecord) -> int:
        """Append one call to the ledger (committed at once, or within a job's
        :meth:`~benchwright.db.Store.deferring_commits` scope together with the item's next write, before the task
        that made the call awaits anything: so a kill loses nothing finished); its id. A call made from a batch
        result another process already recorded is not recorded twice: that row's id is returned and
        ``record.reused`` is set.

        API keys never reach here: records carry no headers.

        Raises:
            ValueError: ``status`` or ``stop_reason`` is not in core's vocabulary (``CallStatus``, ``StopReason``).
        """
        CallStatus(record.status)
        if record.stop_reason is not None:
            StopReason(record.stop_reason)
        u = record.usage
        # Inside a job's deferring_commits scope the row commits with the item's result (one transaction).
        with self.write_deferred() as db:
            if record.batch_custom_id is not None:
                # One ledger row per batch result: another process waiting on the same batch (the same command twice
                # at once) may have used it first; its row stands for this one (the result was paid for once).
                used = db.conn.execute("SELECT call_id FROM llm_batch_requests WHERE custom_id = ?",
                                       (record.batch_custom_id,)).fetchone()
                if used is not None and used[0] is not None:
                    record.id, record.reused = used[0], True
                    return record.id
            cur = db.conn.execute(
                f"INSERT INTO llm_calls ({_CALL_COLUMNS.replace('id, ', '', 1)}, uid, batch_id) "
                "VALUES (" + ", ".join(["?"] * 32) + ")",
                (
                    record.created_at, record.provider, record.provider_kind, record.base_url,
                    record.requested_model, record.returned_model, record.template_id, record.template_hash,
                    record.request_hash, record.repeat, record.attempt,
                    json.dumps(record.params, sort_keys=True, default=str), str(record.status),
                    u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, record.latency_s,
                    record.cost_usd, record.request_id, record.http_attempts, record.http_status,
                    record.output_text, json.dumps(record.parsed) if record.parsed is not None else None,
                    record.error, record.purpose, record.qa_pair_id, record.stop_reason, record.stop_reason_raw,
                    json.dumps([c.as_json() for c in record.tool_calls], ensure_ascii=False)
                    if record.tool_calls else None,
                    uuid.uuid4().hex, record.batch_id,
                ),
            )
            record.id = cur.lastrowid
            if record.batch_custom_id is not None:  # the batch result is used: a rerun will not use it again
                db.conn.execute("UPDATE llm_batch_requests SET call_id = ? WHERE custom_id = ?",
                                (record.id, record.batch_custom_id))
            if getattr(record, "text_repaired", False):
                self.flag_text_repair("llm_calls", record.id, "output_text", "llm output")
        return record.id

    @serialized
    def cached_call(self, request_hash: str, repeat: int) -> CallRecord | None:
        """The latest ``ok`` call with this request hash and repeat index (the cache), or None."""
        r = self.db.conn.execute(
            f"SELECT {_CALL_COLUMNS} FROM llm_calls WHERE request_hash = ? AND repeat_index = ? AND status = 'ok' "
            "ORDER BY id DESC LIMIT 1", (request_hash, repeat),
        ).fetchone()
        return _record_from_row(r) if r else None

    @serialized
    def llm_calls(self, *, qa_pair_id: str | None = None, purpose: str | None = None, since_id: int = 0,
                  ids: list[int] | None = None, limit: int | None = None) -> list[CallRecord]:
        """Ledger rows, oldest first, filtered by pair, purpose, id > ``since_id`` or explicit ids."""
        where, params = ["id > ?"], [since_id]
        if qa_pair_id is not None:
            where.append("qa_pair_id = ?")
            params.append(qa_pair_id)
        if purpose is not None:
            where.append("purpose = ?")
            params.append(purpose)
        if ids is not None:
            where.append(f"id IN ({', '.join('?' * len(ids))})" if ids else "0")
            params += ids
        sql = f"SELECT {_CALL_COLUMNS} FROM llm_calls WHERE {' AND '.join(where)} ORDER BY id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [_record_from_row(r) for r in self.db.conn.execute(sql, params).fetchall()]

    @serialized
    def ledger_summary(self) -> list[dict]:
        """Per purpose, model and status: calls, tokens, cost (None when no call had a price), latency."""
        rows = self.db.conn.execute(
            """SELECT coalesce(purpose, ''), requested_model, status, count(*), sum(input_tokens),
                      sum(output_tokens), sum(cache_read_tokens), sum(cost_usd), avg(latency_s)
               FROM llm_calls GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"""
        ).fetchall()
        keys = ("purpose", "model", "status", "calls", "input_tokens", "output_tokens", "cache_read_tokens",
                "cost_usd", "mean_latency_s")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    # ------------------------------------------------------------------- links
    @serialized
    def add_link(self, url: str, file: str | Path, *, by: str) -> Link:
        """Store ``file``'s text as the content of ``url`` (replacing an earlier one).

        Raises:
            BenchwrightError: the file cannot be read or is not UTF-8 text (named), or it is empty.
        """
        p = Path(file)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise BenchwrightError(f"{p}: no such file") from None
        except UnicodeDecodeError as e:
            raise BenchwrightError(f"{p}: not UTF-8 text (byte {e.start}); save the page as text or Markdown") from None
        except OSError as e:
            raise BenchwrightError(f"{p}: cannot read ({e.strerror})") from None
        if not text.strip():
            raise BenchwrightError(f"{p}: the file is empty")
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        now = utc_now()
        with self.write() as db:
            db.conn.execute(
                """INSERT INTO links (url, content, source_file, sha256, added_at, added_by) VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT (url) DO UPDATE SET content = excluded.content, source_file = excluded.source_file,
                   sha256 = excluded.sha256, added_at = excluded.added_at, added_by = excluded.added_by""",
                (url, text, str(p), sha, now, by),
            )
        return Link(url, text, str(p), sha, now, by)

    @serialized
    def get_link(self, url: str) -> Link | None:
        """The stored content of ``url``, or None when it was never added."""
        r = self.db.conn.execute(
            "SELECT url, content, source_file, sha256, added_at, added_by FROM links WHERE url = ?", (url,)
        ).fetchone()
        return Link(*r) if r else None

    @serialized
    def links(self) -> list[Link]:
        """Every stored link, by URL."""
        rows = self.db.conn.execute(
            "SELECT url, content, source_file, sha256, added_at, added_by FROM links ORDER BY url"
        ).fetchall()
        return [Link(*r) for r in rows]

    # ---------------------------------------------------------------- curation
    @serialized
    def save_curation_result(self, qa_pair_id: str, step: str, *, status: str, output: dict | None = None,
                             flagged: bool = False, raw_text: str | None = None, reason: str | None = None,
                             model: str | None = None, template_hash: str | None = None,
                             call_ids: list[int] | None = None, calls_made: int = 0, by: str,
                             input_hash: str | None = None) -> CurationResult:
        """Append a step result for a pair (it becomes the current one).

        Raises:
            BenchwrightError: unknown step or status. NotFoundError: no such pair.
        """
        STEP_REGISTRY.check(step)  # UnknownNameError, a BenchwrightError naming the steps there are
        if status not in ("ok", "failed"):
            raise BenchwrightError(f"step status must be ok or failed, not {status!r}")
        output_json, calls_json = json.dumps(output or {}, ensure_ascii=False), json.dumps(call_ids or [])
        created_at = utc_now()
        with self.write() as db:
            self.ordinal_of(qa_pair_id)
            cur = db.conn.execute(
                """INSERT INTO curation_results (qa_pair_id, step, status, flagged, output_json, raw_text, reason,
                   model, template_hash, call_ids_json, calls_made, created_at, created_by, uid, input_hash)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (qa_pair_id, step, status, int(flagged), output_json, raw_text,
                 reason, model, template_hash, calls_json, calls_made, created_at, by,
                 uuid.uuid4().hex, input_hash),
            )
            rid = cur.lastrowid
        texts = (qa_pair_id, step, output_json, raw_text, reason, model, template_hash, by, input_hash)
        if not storable_as_is(*texts):
            return self._curation_by_id(rid)  # stored with U+FFFD for a lone surrogate: as stored
        # The row as stored, without reading it back (the online path saves one per pair).
        return self._curation_from_row((rid, qa_pair_id, step, status, int(flagged), output_json, raw_text, reason,
                                        model, template_hash, calls_json, calls_made, created_at, by, input_hash))

    _CUR_COLS = ("id, qa_pair_id, step, status, flagged, output_json, raw_text, reason, model, template_hash, "
                 "call_ids_json, calls_made, created_at, created_by, input_hash")

    @staticmethod
    def _curation_from_row(r: tuple) -> CurationResult:
        return CurationResult(
            id=r[0], qa_pair_id=r[1], step=r[2], status=r[3], flagged=bool(r[4]), output=json.loads(r[5]),
            raw_text=r[6], reason=r[7], model=r[8], template_hash=r[9], call_ids=json.loads(r[10]),
            calls_made=r[11], created_at=r[12], created_by=r[13], input_hash=r[14],
        )

    @serialized
    def _curation_by_id(self, rid: int) -> CurationResult:
        r = self.db.conn.execute(f"SELECT {self._CUR_COLS} FROM curation_results WHERE id = ?", (rid,)).fetchone()
        if r is None:
            raise NotFoundError(f"no curation result {rid}")
        return self._curation_from_row(r)

    @serialized
    def curation_current(self, qa_pair_id: str) -> dict[str, CurationResult]:
        """The latest result of each step run on the pair, by step."""
        rows = self.db.conn.execute(
            f"SELECT {', '.join('r.' + c.strip() for c in self._CUR_COLS.split(','))} FROM curation_current c "
            "JOIN curation_results r ON r.id = c.result_id WHERE c.qa_pair_id = ?", (qa_pair_id,)
        ).fetchall()
        return {r[2]: self._curation_from_row(r) for r in rows}

    @serialized
    def curation_history(self, qa_pair_id: str, step: str | None = None) -> list[CurationResult]:
        """Every result of the pair (of one step), oldest first."""
        sql = f"SELECT {self._CUR_COLS} FROM curation_results WHERE qa_pair_id = ?"
        params: list[Any] = [qa_pair_id]
        if step:
            sql += " AND step = ?"
            params.append(step)
        return [self._curation_from_row(r) for r in self.db.conn.execute(sql + " ORDER BY id", params).fetchall()]

    @serialized
    def pairs_with_step_done(self, step: str, *, since: str | None = None) -> dict[str, str | None]:
        """Pairs whose current result of ``step`` is ``ok`` -> that result's input hash (None for results
        stored before input hashes existed). ``since``: only results created at or after this UTC time."""
        sql = ("SELECT c.qa_pair_id, r.input_hash FROM curation_current c JOIN curation_results r "
               "ON r.id = c.result_id WHERE c.step = ? AND c.status = 'ok'")
        params: list[Any] = [step]
        if since is not None:
            sql += " AND r.created_at >= ?"
            params.append(since)
        return dict(self.db.conn.execute(sql, params).fetchall())

    @serialized
    def pairs_with_step_result_since(self, step: str, since: str) -> set[str]:
        """Pairs whose current result of ``step`` (ok or not) was created at or after ``since`` (UTC)."""
        return {r[0] for r in self.db.conn.execute(
            "SELECT c.qa_pair_id FROM curation_current c JOIN curation_results r ON r.id = c.result_id "
            "WHERE c.step = ? AND r.created_at >= ?", (step, since))}

    @serialized
    def step_done_hash(self, qa_pair_id: str, step: str) -> str | None:
        """The input hash of the pair's current ok result of ``step``: ``"-"`` when there is none, None when it
        predates input hashes."""
        row = self.db.conn.execute(
            "SELECT r.input_hash FROM curation_current c JOIN curation_results r ON r.id = c.result_id "
            "WHERE c.qa_pair_id = ? AND c.step = ? AND c.status = 'ok'", (qa_pair_id, step),
        ).fetchone()
        return "-" if row is None else row[0]

    # ------------------------------------------------------------- claims and runs
    @serialized
    def claim(self, work: str, item: str, owner: str) -> bool:
        """Claim ``item`` of ``work`` for ``owner`` (see :func:`claim_owner`); False when another live owner
        holds it. A claim whose process is gone (same host, no such pid) or older than a day is taken over.

        Two processes running the same step on one project thus never work on the same pair at once."""
        with self.write() as db:
            row = db.conn.execute("SELECT owner, claimed_at FROM work_claims WHERE work = ? AND item = ?",
                                  (work, item)).fetchone()
            if row is not None and row[0] != owner and owner_alive(row[0], row[1]):
                return False
            db.conn.execute(
                """INSERT INTO work_claims (work, item, owner, claimed_at) VALUES (?, ?, ?, ?)
                   ON CONFLICT (work, item) DO UPDATE SET owner = excluded.owner, claimed_at = excluded.claimed_at""",
                (work, item, owner, utc_now()),
            )
        return True

    @serialized
    def release(self, work: str, item: str, owner: str) -> None:
        """Drop ``owner``'s claim of ``item`` (a claim of another owner stays)."""
        with self.write() as db:
            db.conn.execute("DELETE FROM work_claims WHERE work = ? AND item = ? AND owner = ?", (work, item, owner))

    @serialized
    def open_run(self, kind: str, signature: str, *, by: str) -> tuple[int, str, bool]:
        """The unfinished run of ``kind`` with this ``signature`` (the command's options), or a new one.

        Returns:
            ``(run id, started_at, resumed)``: ``resumed`` is True when an unfinished run was found, so the
            caller skips what that run already finished (its results are newer than ``started_at``).
        """
        with self.write() as db:
            row = db.conn.execute(
                "SELECT id, started_at FROM llm_runs WHERE kind = ? AND signature = ? AND finished_at IS NULL "
                "ORDER BY id DESC LIMIT 1", (kind, signature),
            ).fetchone()
            if row is not None:
                return row[0], row[1], True
            now = utc_now()
            cur = db.conn.execute(
                "INSERT INTO llm_runs (kind, signature, started_at, created_by) VALUES (?, ?, ?, ?)",
                (kind, signature, now, by),
            )
            return cur.lastrowid, now, False

    @serialized
    def finish_run(self, run_id: int) -> None:
        """Mark a run finished (a later identical command starts a new run)."""
        with self.write() as db:
            db.conn.execute("UPDATE llm_runs SET finished_at = ? WHERE id = ?", (utc_now(), run_id))

    @serialized
    def curation_counts(self) -> dict[str, dict[str, int]]:
        """Per step: pairs ok, failed and flagged (current results)."""
        out: dict[str, dict[str, int]] = {s: {"ok": 0, "failed": 0, "flagged": 0} for s in CURATION_STEPS}
        for step, status, flagged, n in self.db.conn.execute(
            "SELECT step, status, flagged, count(*) FROM curation_current GROUP BY 1, 2, 3"
        ).fetchall():
            counts = out.setdefault(step, {"ok": 0, "failed": 0, "flagged": 0})  # a step no longer registered too
            counts[status] += n
            if flagged:
                counts["flagged"] += n
        return out
