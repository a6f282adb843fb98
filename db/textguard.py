"""The store's backstop against text SQLite cannot take: no ``str`` holding a surrogate ever reaches sqlite3.

sqlite3 encodes every ``str`` parameter as UTF-8 and raises ``UnicodeEncodeError`` for a lone surrogate (a JSON
``\\udc81`` escape from a model or a file): the statement, and with it the write transaction, fails. The entry
points repair such text themselves (imports, LLM output; :func:`benchwright.core.text.repair_text`) and flag the
record; this connection class catches whatever an entry point missed (a note, an editor field, a future
importer): every ``str`` parameter of every statement is repaired with the same rule, JSON text written with
``ensure_ascii`` has its lone-surrogate escapes rewritten as ``\\ufffd``, and a repaired row of an ``INSERT`` is
recorded in ``text_repairs`` (table, rowid, columns), so the record is flagged wherever it came from.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Iterable
from typing import Any

from benchwright.core.models import utc_now
from benchwright.core.text import _JSON_SURROGATE_ESCAPE, has_surrogates, repair_json_text, repair_text

from .locking import serialized

_INSERT = re.compile(r"^\s*(?:INSERT|REPLACE)\s+(?:OR\s+\w+\s+)?INTO\s+[\"\[`]?(\w+)[\"\]`]?\s*\(([^)]*)\)\s*"
                     r"VALUES\s*\(([^)]*)\)", re.I | re.S)
_JSON_START = ("{", "[", '"')


def _inserted_rowid(cursor: sqlite3.Cursor) -> int | None:
    """The rowid of the row the statement just inserted, or None when it inserted none (``INSERT OR IGNORE`` that
    was ignored): ``lastrowid`` then still names an earlier row, which must not be flagged."""
    return cursor.lastrowid if cursor.rowcount == 1 else None


def repaired_param(value: Any) -> tuple[Any, bool]:
    """``(value, repaired)`` for one statement parameter: a ``str`` with its surrogates replaced by U+FFFD; JSON
    text (starting with ``{``, ``[`` or ``"`` and parsing as JSON) with its lone-surrogate escapes rewritten;
    anything else as is."""
    if not isinstance(value, str):
        return value, False
    if has_surrogates(value):
        value, _ = repair_text(value)
        fixed, _ = _repair_json_escapes(value)
        return fixed, True
    return _repair_json_escapes(value)


def _repair_json_escapes(value: str) -> tuple[str, bool]:
    if "\\u" not in value or not value.lstrip().startswith(_JSON_START):
        return value, False
    fixed, changed = repair_json_text(value)
    if not changed:
        return value, False
    import json

    try:
        json.loads(value)
    except ValueError:
        return value, False  # not JSON: the text "\udc81" typed by a person is text, kept as typed
    return fixed, True


def _clean(values) -> bool:
    """True when no string among ``values`` can need a repair (the fast path: C-level checks only)."""
    for v in values:
        if v.__class__ is not str:
            continue
        if not v.isascii():  # isascii is a flag lookup; only other text is encoded (a C loop) to find surrogates
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return False
        if "\\u" in v and ("\\ud" in v or "\\uD" in v) and _JSON_SURROGATE_ESCAPE.search(v) is not None:
            return False
    return True


def storable_as_is(*values: Any) -> bool:
    """True when the store keeps every ``str`` of ``values`` exactly as given (none needs the repair above), so a
    caller may build what it just wrote from its own values instead of reading the row back."""
    return _clean(values)


def _repair_params(params: Any) -> tuple[Any, list]:
    """``(params, repaired keys)``: positional (a sequence) or named (a mapping) parameters, repaired."""
    if isinstance(params, list | tuple):
        if _clean(params):
            return params, []
    elif isinstance(params, dict) and _clean(params.values()):
        return params, []
    if isinstance(params, dict):
        out, keys = {}, []
        for k, v in params.items():
            out[k], changed = repaired_param(v)
            if changed:
                keys.append(k)
        return (out, keys) if keys else (params, [])
    if isinstance(params, list | tuple):
        out_l, idx = [], []
        for i, v in enumerate(params):
            v2, changed = repaired_param(v)
            out_l.append(v2)
            if changed:
                idx.append(i)
        return (out_l, idx) if idx else (params, [])
    return params, []


@functools.lru_cache(maxsize=512)
def _insert_columns(sql: str) -> tuple[str | None, tuple[str, ...]]:
    """(table, the column of each ``?`` parameter in order) of an ``INSERT ... (cols) VALUES (...)`` whose values
    are ``?`` or simple literals; (table, ()) when the columns cannot be told; (None, ()) for other statements."""
    m = _INSERT.match(sql)
    if m is None:
        return None, ()
    columns = [c.strip().strip('"[]`') for c in m.group(2).split(",")]
    values = [v.strip() for v in m.group(3).split(",")]
    if len(values) != len(columns):
        return m.group(1), ()
    return m.group(1), tuple(c for c, v in zip(columns, values, strict=True) if v == "?")


def _fields(columns: tuple[str, ...], keys: list) -> str:
    return ",".join(k if isinstance(k, str) else columns[k] if k < len(columns) else "" for k in keys).strip(",")


@functools.lru_cache(maxsize=512)
def _link_columns(columns: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    return tuple((i, c) for i, c in enumerate(columns) if c in ("call_ids_json", "extra_json"))


def _call_ids(columns: tuple[str, ...], params: Any) -> list[int]:
    """The ledger call ids an inserted row names (``call_ids_json``, or ``call_ids`` in ``extra_json``)."""
    links = _link_columns(columns)
    if not links or not isinstance(params, list | tuple) or len(params) != len(columns):
        return []
    import json

    ids: list = []
    for i, col in links:
        value = params[i]
        if not isinstance(value, str) or value in ("[]", "{}") or (col != "call_ids_json" and '"call_ids"' not in value):
            continue
        try:
            data = json.loads(value)
        except ValueError:
            continue
        found = data if col == "call_ids_json" else (data.get("call_ids") if isinstance(data, dict) else None)
        if isinstance(found, list):
            ids += [i for i in found if isinstance(i, int) and not isinstance(i, bool)]
    return ids


RECORD_SQL = ("INSERT INTO text_repairs (table_name, row_id, fields, origin, created_at) VALUES (?, ?, ?, ?, ?)")


class GuardedConnection(sqlite3.Connection):
    """A ``sqlite3.Connection`` (pass as ``factory=`` to :func:`sqlite3.connect`) whose ``execute`` and
    ``executemany`` repair surrogates in parameters and flag the repaired rows (see the module docstring)."""

    def _after_insert(self, sql: str, params: Any, keys: list, rowid: int | None) -> None:
        """Flag the row just inserted when its parameters were repaired, or when it was made from a ledger call
        whose text was repaired (a judgment, a curation result, a generated answer)."""
        table, columns = _insert_columns(sql)
        if table is None or table == "text_repairs" or not rowid:
            return
        if keys:
            if self._has_repairs_table():
                super().execute(RECORD_SQL, (table, rowid, _fields(columns, keys), "store", utc_now()))
            return
        ids = _call_ids(columns, params) if table != "llm_calls" else []
        if ids and self._has_repairs_table():
            marks = ", ".join("?" * len(ids))
            if super().execute(f"SELECT 1 FROM text_repairs WHERE table_name = 'llm_calls' AND row_id IN ({marks}) "
                               "LIMIT 1", ids).fetchone():
                super().execute(RECORD_SQL, (table, rowid, "", "llm output", utc_now()))

    def _has_repairs_table(self) -> bool:
        if not getattr(self, "_repairs_table", False):
            self._repairs_table = super().execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'text_repairs'").fetchone() is not None
        return self._repairs_table

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        params, keys = _repair_params(parameters)
        cursor = super().execute(sql, params)
        if params and sql.lstrip()[:1] in "IiRr":
            self._after_insert(sql, params, keys, _inserted_rowid(cursor))
        return cursor

    def executemany(self, sql: str, seq_of_parameters: Iterable, /) -> sqlite3.Cursor:
        rows = list(seq_of_parameters)
        repaired = [_repair_params(p) for p in rows]
        table, columns = _insert_columns(sql)
        linked = (table not in (None, "llm_calls") and bool(_link_columns(columns))
                  and any(_call_ids(columns, p) for p, _ in repaired))
        if not linked and not any(keys for _, keys in repaired):
            return super().executemany(sql, rows)
        # Rare: one statement per row, in order, so each repaired row's rowid is known.
        cursor = None
        for params, keys in repaired:
            cursor = super().execute(sql, params)
            self._after_insert(sql, params, keys, _inserted_rowid(cursor))
        return cursor if cursor is not None else super().executemany(sql, [])


TEXT_REPAIR_TABLES = {
    "qa_pairs": "pairs", "answers": "answers", "checklist_versions": "checklist versions",
    "judgments": "judgments", "llm_calls": "ledger calls", "curation_results": "curation results",
    "review_notes": "notes", "review_decisions": "reviews", "probes": "probes", "probe_variants": "probe variants",
    "failure_modes": "failure modes",
}
"""How ``status`` names the tables whose rows can be flagged (any other table is named as it is)."""


class TextRepairMixin:
    """``text_repairs`` methods of :class:`benchwright.db.Store`: records stored with U+FFFD for a lone surrogate."""

    def flag_text_repair(self, table: str, row_id: int, fields: str = "", origin: str = "") -> None:
        """Record that row ``row_id`` (its rowid) of ``table`` was stored with U+FFFD in place of lone surrogates
        in ``fields`` (comma-separated column or field names); ``origin`` says where the text came from (``import
        FILE line N``, ``llm output``). Joins the caller's write transaction, or commits at once."""
        with self.write() as db:
            db.conn.execute(RECORD_SQL, (table, int(row_id), fields, origin or "store", utc_now()))

    @serialized
    def text_repaired(self, table: str, row_id: int | str) -> bool:
        """Whether the row of ``table`` (by rowid; for ``qa_pairs`` and ``answers`` also by id) is flagged."""
        if isinstance(row_id, str) and not row_id.isdigit():
            r = self.db.conn.execute(f"SELECT rowid FROM [{table}] WHERE id = ?", (row_id,)).fetchone()
            if r is None:
                return False
            row_id = r[0]
        return self.db.conn.execute("SELECT 1 FROM text_repairs WHERE table_name = ? AND row_id = ? LIMIT 1",
                                    (table, int(row_id))).fetchone() is not None

    @serialized
    def text_repair_counts(self) -> dict[str, int]:
        """Flagged records per table (each record once), tables in name order; empty when none."""
        rows = self.db.conn.execute("SELECT table_name, count(DISTINCT row_id) FROM text_repairs GROUP BY 1 "
                                    "ORDER BY 1").fetchall()
        return dict(rows)

    def flag_import_repairs(self, result: Any, batch_id: int | None) -> list[int]:
        """Flag the pairs import batch ``batch_id`` added from lines of ``result`` (a
        :class:`~benchwright.core.importers.ParseResult`) listed in ``result.repaired_lines``; returns those lines
        (sorted) whose pair was added. Pairs already in the project are not flagged again."""
        lines = set(getattr(result, "repaired_lines", ()) or ())
        ids = getattr(result, "repaired_pairs", None)
        if (not lines and not ids) or batch_id is None:
            return []
        name = str(result.file).replace("\\", "/").rsplit("/", 1)[-1]
        done = []
        with self.write() as db:
            for pair in result.pairs:
                line = pair.source.line
                if (pair.id not in ids) if ids is not None else (line not in lines):
                    continue
                r = db.conn.execute("SELECT rowid FROM qa_pairs WHERE id = ? AND import_batch_id = ?",
                                    (pair.id, batch_id)).fetchone()
                if r is not None:
                    db.conn.execute(RECORD_SQL, ("qa_pairs", r[0], "question,reference_answer",
                                                 f"import {name} line {line}", utc_now()))
                    done.append(line)
        return sorted(done)

    @serialized
    def calls_text_repaired(self, call_ids) -> bool:
        """Whether any of the ledger calls ``call_ids`` is flagged (its output was stored with U+FFFD)."""
        ids = [int(i) for i in call_ids or ()]
        if not ids:
            return False
        return self.db.conn.execute(
            f"SELECT 1 FROM text_repairs WHERE table_name = 'llm_calls' AND row_id IN ({', '.join('?' * len(ids))}) "
            "LIMIT 1", ids).fetchone() is not None

    @serialized
    def checklist_rowid(self, pair_id: str, version: int) -> int:
        """The ``checklist_versions`` rowid of version ``version`` of the pair's checklist (for flags).

        Raises:
            NotFoundError: no such version."""
        r = self.db.conn.execute("SELECT id FROM checklist_versions WHERE qa_pair_id = ? AND version = ?",
                                 (pair_id, version)).fetchone()
        if r is None:
            from benchwright.core.errors import NotFoundError

            raise NotFoundError(f"pair {pair_id} has no checklist version {version}")
        return r[0]
