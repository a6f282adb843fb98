"""Leakage checks in the store (``leakage_checks``, m020, append-only): for one text version of a pair, the terms of
the reference answer or the checklist that a rewrite (enrich, refine) or an edit put into the question
(:mod:`benchwright.core.leakage`). The latest check of the pair's current text version counts; the queue filter
``leakage=`` is :func:`benchwright.db.data_filters.leakage_sql`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from benchwright.core.errors import BenchwrightError
from benchwright.core.leakage import LeakedSpan, leakage_status
from benchwright.core.models import utc_now
from benchwright.core.vocabulary import LEAKAGE_FILTERS

from .locking import serialized


@dataclass(frozen=True)
class LeakageCheck:
    """One leakage check of a pair's text version (a ``leakage_checks`` row).

    Attributes:
        id: the row id (later checks have larger ids).
        pair_id: the pair; text_version: the version checked.
        status: ``leaked`` or ``clean`` (:data:`~benchwright.core.vocabulary.LEAKAGE_STATUSES`).
        spans: the leaked spans of that version's question, by offset.
        created_at / created_by: when (UTC ISO 8601) and by whom (who made the rewrite or the edit, or ran
            ``pairs leakage``).
    """

    id: int
    pair_id: str
    text_version: int
    status: str
    spans: tuple[LeakedSpan, ...]
    created_at: str
    created_by: str


_SELECT = "SELECT id, qa_pair_id, text_version, status, spans_json, created_at, created_by FROM leakage_checks"


def _check(r) -> LeakageCheck:
    return LeakageCheck(r[0], r[1], r[2], r[3], tuple(LeakedSpan.from_json(s) for s in json.loads(r[4] or "[]")),
                        r[5], r[6])


class LeakageStoreMixin:
    """Leakage-check methods of :class:`benchwright.db.Store` (needs ``self.db``, ``self.write``,
    ``self.ordinal_of``)."""

    def record_leakage_check(self, pair_id: str, text_version: int, spans: Sequence[LeakedSpan], *,
                             by: str) -> LeakageCheck:
        """Append the check of ``pair_id``'s text version ``text_version``: status ``leaked`` when ``spans`` is
        not empty, else ``clean``. Returns the row.

        Raises:
            NotFoundError: no such pair.
            BenchwrightError: the pair has no such text version.
        """
        status = leakage_status(spans)
        with self.write() as db:
            self.ordinal_of(pair_id)
            if db.conn.execute("SELECT 1 FROM pair_texts WHERE qa_pair_id = ? AND version = ?",
                               [pair_id, text_version]).fetchone() is None:
                raise BenchwrightError(f"pair {pair_id} has no text version {text_version} to check for leakage")
            cur = db.conn.execute(
                "INSERT INTO leakage_checks (qa_pair_id, text_version, status, spans_json, created_at, created_by) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [pair_id, text_version, status, json.dumps([s.to_json() for s in spans], ensure_ascii=False),
                 utc_now(), by])
            row = db.conn.execute(_SELECT + " WHERE id = ?", [cur.lastrowid]).fetchone()
        return _check(row)

    @serialized
    def leakage_check(self, pair_id: str, text_version: int | None = None) -> LeakageCheck | None:
        """The latest check of ``pair_id``'s text version ``text_version`` (None: the current one), or None when
        that version was never checked (or there is no such pair)."""
        if text_version is None:
            row = self.db.conn.execute("SELECT text_version FROM qa_pairs WHERE id = ?", [pair_id]).fetchone()
            if row is None:
                return None
            text_version = row[0]
        r = self.db.conn.execute(_SELECT + " WHERE qa_pair_id = ? AND text_version = ? ORDER BY id DESC LIMIT 1",
                                 [pair_id, text_version]).fetchone()
        return _check(r) if r else None

    @serialized
    def rewritten_pair_ids(self, ids: Sequence[str] | None = None) -> list[str]:
        """Ids of the pairs whose current text is not their first (``text_version`` > 1: a rewrite, an edit, a
        re-import), in queue order; only those of ``ids`` when given."""
        rows = self.db.conn.execute("SELECT id FROM qa_pairs WHERE text_version > 1 ORDER BY ordinal").fetchall()
        keep = None if ids is None else set(ids)
        return [r[0] for r in rows if keep is None or r[0] in keep]

    @serialized
    def leakage_counts(self) -> dict[str, int]:
        """``{status: pairs}`` over the pairs whose current text is not their first, by the latest check of that
        text, every one of :data:`~benchwright.core.vocabulary.LEAKAGE_FILTERS` present (``unchecked``: none)."""
        counts = dict.fromkeys(LEAKAGE_FILTERS, 0)
        for status, n in self.db.conn.execute(
                """SELECT coalesce((SELECT l.status FROM leakage_checks l WHERE l.qa_pair_id = p.id
                                    AND l.text_version = p.text_version ORDER BY l.id DESC LIMIT 1), 'unchecked'),
                          count(*)
                   FROM qa_pairs p WHERE p.text_version > 1 GROUP BY 1"""):
            counts[status] = n
        return counts
