"""Answer-first generation in the store (m023, append-only; Code-QA-Bench "Methodology" 3 and 4).

- ``doc_chunk_runs``: one ``generate doc-chunks`` run of a repository at its pin (settings, chunks found and kept).
- ``doc_chunks``: the chunks a run kept, ranked; the current chunks of a repository are its latest run's.
- ``generation_results``: every gold / audit / question result of a chunk under a task set; the current result of
  (chunk, step, task set) is the latest row. A question result names the Q&A pair it made.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from benchwright.core.doc_chunks import DocChunk
from benchwright.core.errors import NotFoundError
from benchwright.core.models import utc_now

from .locking import serialized


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as a ``generate doc-chunks`` run stored it: the run, its rank there (1 = best), the pin."""

    run_id: int
    rank: int
    pin: str
    chunk: DocChunk


@dataclass(frozen=True)
class GenerationResult:
    """One ``generation_results`` row.

    Attributes:
        id: row id (later results have larger ids).
        chunk_id, repository, step (``gold`` / ``audit`` / ``question``), task_set: what it is a result of.
        status: ``ok`` or ``failed`` (``reason`` says why; ``raw_text`` is the model's output when it did not
            parse).
        flagged: an ok result with nothing usable (an empty gold answer, an audit that removed every claim, an
            empty question): the next step leaves the chunk out.
        output: the step's output (shapes in :mod:`benchwright.core.generation`).
        model, template_hash, input_hash: who made it, with which prompt, from which input (a result whose input
            hash is not the current input's is stale).
        call_ids, calls_made: the ledger rows and how many calls were sent (0: all from the cache).
        trajectory: the agent's turns (``gold`` on the documented repository), or None.
        qa_pair_id: the pair a ``question`` result made, or None.
        created_at, created_by: when (UTC) and by whom.
    """

    id: int
    chunk_id: str
    repository: str
    step: str
    task_set: str
    status: str
    flagged: bool
    output: dict
    reason: str | None
    raw_text: str | None
    model: str | None
    template_hash: str | None
    input_hash: str | None
    call_ids: list[int]
    calls_made: int
    trajectory: list | None
    qa_pair_id: str | None
    created_at: str
    created_by: str

    @property
    def ok(self) -> bool:
        """True when the step succeeded."""
        return self.status == "ok"


_CHUNK_COLS = ("run_id, id, rank, repository, pin, path, start_line, end_line, kind, title, text, scores_json, "
               "references_json, score")
_RESULT_COLS = ("id, chunk_id, repository, step, task_set, status, flagged, output_json, reason, raw_text, model, "
                "template_hash, input_hash, call_ids_json, calls_made, trajectory_json, qa_pair_id, created_at, "
                "created_by")


def _chunk(r) -> StoredChunk:
    refs = tuple((str(a), bool(b)) for a, b in json.loads(r[12] or "[]"))
    return StoredChunk(r[0], r[2], r[4], DocChunk(r[1], r[3], r[5], r[6], r[7], r[8], r[9], r[10],
                                                  json.loads(r[11] or "{}"), refs, r[13]))


def _result(r) -> GenerationResult:
    return GenerationResult(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), json.loads(r[7] or "{}"), r[8], r[9],
                            r[10], r[11], r[12], json.loads(r[13] or "[]"), r[14],
                            json.loads(r[15]) if r[15] else None, r[16], r[17], r[18])


class GenerationStoreMixin:
    """Answer-first generation methods of :class:`benchwright.db.Store` (needs ``self.db``, ``self.write``,
    ``self.get_repository``)."""

    def record_doc_chunks(self, repository: str, pin: str, chunks: Sequence[DocChunk], *, settings: dict,
                          top: int | None, found: int, by: str) -> int:
        """Append a ``generate doc-chunks`` run of ``repository`` at ``pin`` keeping ``chunks`` (best first).
        Returns the run id.

        Raises:
            NotFoundError: no such repository.
        """
        with self.write() as db:
            self.get_repository(repository)
            cur = db.conn.execute(
                "INSERT INTO doc_chunk_runs (repository, pin, settings_json, top, found, kept, created_at, created_by) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [repository, pin, json.dumps(settings, sort_keys=True), top, found, len(chunks), utc_now(), by])
            run_id = cur.lastrowid
            db.conn.executemany(
                f"INSERT INTO doc_chunks ({_CHUNK_COLS}) VALUES ({', '.join('?' * 14)})",
                [[run_id, c.id, rank, repository, pin, c.path, c.start_line, c.end_line, c.kind, c.title, c.text,
                  json.dumps(c.features, sort_keys=True), json.dumps([list(r) for r in c.references],
                                                                     ensure_ascii=False), c.score]
                 for rank, c in enumerate(chunks, 1)])
        return run_id

    @serialized
    def doc_chunk_run(self, repository: str) -> dict | None:
        """The latest ``generate doc-chunks`` run of ``repository`` as a dict (``id``, ``pin``, ``settings``,
        ``top``, ``found``, ``kept``, ``created_at``, ``created_by``), or None."""
        r = self.db.conn.execute(
            "SELECT id, pin, settings_json, top, found, kept, created_at, created_by FROM doc_chunk_runs "
            "WHERE repository = ? ORDER BY id DESC LIMIT 1", [repository]).fetchone()
        if r is None:
            return None
        return {"id": r[0], "pin": r[1], "settings": json.loads(r[2]), "top": r[3], "found": r[4], "kept": r[5],
                "created_at": r[6], "created_by": r[7]}

    @serialized
    def current_doc_chunks(self, repository: str | None = None) -> list[StoredChunk]:
        """The chunks of each repository's latest ``generate doc-chunks`` run (of ``repository`` only when
        given), by repository then rank."""
        sql = (f"SELECT {_CHUNK_COLS} FROM doc_chunks WHERE run_id IN (SELECT max(id) FROM doc_chunk_runs "
               "GROUP BY repository)")
        args: list = []
        if repository is not None:
            sql += " AND repository = ?"
            args.append(repository)
        return [_chunk(r) for r in self.db.conn.execute(sql + " ORDER BY repository, rank", args)]

    @serialized
    def doc_chunk(self, chunk_id: str) -> StoredChunk:
        """The latest stored row of chunk ``chunk_id`` (a full id, or a unique prefix of at least 6 characters).

        Raises:
            NotFoundError: no such chunk, or the prefix is ambiguous.
        """
        rows = self.db.conn.execute(
            f"SELECT {_CHUNK_COLS} FROM doc_chunks WHERE id = ? OR (length(?) >= 6 AND id LIKE ? || '%') "
            "ORDER BY run_id DESC", [chunk_id, chunk_id, chunk_id]).fetchall()
        ids = {r[1] for r in rows}
        if not rows or len(ids) > 1:
            raise NotFoundError(f"no documentation chunk {chunk_id!r}" if not rows else
                                f"chunk prefix {chunk_id!r} is ambiguous ({len(ids)} chunks)")
        return _chunk(rows[0])

    def save_generation_result(self, chunk_id: str, repository: str, step: str, task_set: str, *, status: str,
                               output: dict, by: str, flagged: bool = False, reason: str | None = None, raw_text: str | None = None,
                               model: str | None = None, template_hash: str | None = None,
                               input_hash: str | None = None, call_ids: Sequence[int] = (), calls_made: int = 0,
                               trajectory: list | None = None, qa_pair_id: str | None = None) -> int:
        """Append one result of ``step`` on a chunk under ``task_set``; returns its id."""
        with self.write() as db:
            cur = db.conn.execute(
                f"INSERT INTO generation_results ({_RESULT_COLS.removeprefix('id, ')}) "
                f"VALUES ({', '.join('?' * 18)})",
                [chunk_id, repository, step, task_set, status, int(flagged), json.dumps(output, ensure_ascii=False),
                 reason,
                 raw_text, model, template_hash, input_hash, json.dumps(list(call_ids)), calls_made,
                 json.dumps(trajectory, ensure_ascii=False) if trajectory is not None else None, qa_pair_id,
                 utc_now(), by])
            return cur.lastrowid

    @serialized
    def generation_current(self, chunk_id: str, step: str, task_set: str) -> GenerationResult | None:
        """The latest result of ``step`` on ``chunk_id`` under ``task_set``, or None."""
        r = self.db.conn.execute(
            f"SELECT {_RESULT_COLS} FROM generation_results WHERE chunk_id = ? AND step = ? AND task_set = ? "
            "ORDER BY id DESC LIMIT 1", [chunk_id, step, task_set]).fetchone()
        return _result(r) if r is not None else None

    @serialized
    def generation_results(self, *, chunk_id: str | None = None, qa_pair_id: str | None = None,
                           result_ids: Sequence[int] | None = None) -> list[GenerationResult]:
        """Results in id order: of one chunk, the one that made a pair, or these ids."""
        sql, args = f"SELECT {_RESULT_COLS} FROM generation_results WHERE 1", []
        if chunk_id is not None:
            sql += " AND chunk_id = ?"
            args.append(chunk_id)
        if qa_pair_id is not None:
            sql += " AND qa_pair_id = ?"
            args.append(qa_pair_id)
        if result_ids is not None:
            sql += f" AND id IN ({', '.join('?' * len(result_ids))})"
            args += list(result_ids)
        return [_result(r) for r in self.db.conn.execute(sql + " ORDER BY id", args)]


__all__ = ["GenerationResult", "GenerationStoreMixin", "StoredChunk"]
