"""Text versions of a pair in the store (``pair_texts``, migrations m013 and m019): rewrites the curation steps write
(RepoProbe §3.2: the enriched and refined text is the item), annotators' edits and reverts, and acceptances of a
rewrite (``text_acceptances``).

The latest version is the pair's current text: ``qa_pairs.question`` / ``reference_answer`` / ``text_version``
follow it by trigger, and a new version after the first sends the pair back to review (``qa_pairs.reopened_at``).
"""

from __future__ import annotations

import json
import uuid

from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.core.models import (
    PairText,
    TextOrigin,
    checklist_stale,
    pair_identity_key,
    question_identity_key,
    utc_now,
)
from benchwright.core.vocabulary import REOPEN_TEXT

from .locking import serialized
from .migrations import PAIR_TEXT_COLUMNS

_REWRITE_BASE_ORIGINS = (TextOrigin.ORIGINAL.value, TextOrigin.IMPORTED.value)

_TEXT_SELECT = (
    "SELECT version, origin, question, reference_answer, created_by, created_at, source_file, source_line, "
    "source_unit, model, call_ids_json, restored_from FROM pair_texts"
)


REOPENED_SQL = "(s.updated_at < p.reopened_at)"
"""Over ``qa_pairs p LEFT JOIN review_state s``: the annotator's latest decision was made before the pair was sent
back to review (``qa_pairs.reopened_at``: a new text version, or stale evidence), so it no longer counts: the
queue shows the pair as undecided again and progress does not count it (the rule
:func:`benchwright.core.adjudication.final_decision` applies to the final decision)."""

STALE_CHECKLIST_SQL = (
    "EXISTS (SELECT 1 FROM checklist_current c JOIN checklist_versions v ON v.id = c.version_id "
    "JOIN pair_texts m ON m.qa_pair_id = p.id AND m.version = v.text_version "
    "JOIN pair_texts t ON t.qa_pair_id = p.id AND t.version = p.text_version "
    "WHERE c.qa_pair_id = p.id AND v.text_version < p.text_version AND m.identity_key <> t.identity_key)"
)
"""Over ``qa_pairs p``: the pair's current checklist is stale, the rule of
:func:`benchwright.core.models.checklist_stale` in SQL (``identity_key`` compares the texts white space aside;
tests/db/test_text_versions.py checks the two agree)."""


class TextConflictError(BenchwrightError):
    """The pair's text changed (another session, a curation run) after the editor loaded it; nothing was written."""


def _text_from_row(pair_id: str, r) -> PairText:
    return PairText(
        qa_pair_id=pair_id, version=r[0], origin=r[1], question=r[2], reference_answer=r[3], created_by=r[4],
        created_at=r[5], source=f"{r[6]} {r[8] or 'line'} {r[7]}" if r[6] and r[7] is not None else r[6],
        model=r[9], call_ids=tuple(json.loads(r[10] or "[]")), restored_from=r[11],
    )


class TextVersionStoreMixin:
    """Text-version methods of :class:`benchwright.db.Store` (needs ``self.db``, ``self.write``,
    ``self.ordinal_of``)."""

    @serialized
    def text_versions(self, pair_id: str) -> list[PairText]:
        """Every text version of ``pair_id``, oldest first (the last is the current text).

        Raises:
            NotFoundError: no such pair.
        """
        self.ordinal_of(pair_id)
        return [_text_from_row(pair_id, r) for r in self.db.conn.execute(
            _TEXT_SELECT + " WHERE qa_pair_id = ? ORDER BY version", [pair_id])]

    @serialized
    def text_version(self, pair_id: str, version: int | None = None) -> PairText:
        """Version ``version`` of the pair's text (None: the current one).

        Raises:
            NotFoundError: no such pair or version.
        """
        self.ordinal_of(pair_id)
        if version is None:
            r = self.db.conn.execute(_TEXT_SELECT + " WHERE qa_pair_id = ? ORDER BY version DESC LIMIT 1",
                                     [pair_id]).fetchone()
        else:
            r = self.db.conn.execute(_TEXT_SELECT + " WHERE qa_pair_id = ? AND version = ?",
                                     [pair_id, version]).fetchone()
        if r is None:
            raise NotFoundError(f"pair {pair_id} has no text version {version}")
        return _text_from_row(pair_id, r)

    def original_text(self, pair_id: str) -> PairText:
        """Version 1 of the pair's text: as first imported.

        Raises:
            NotFoundError: no such pair.
        """
        return self.text_version(pair_id, 1)

    @serialized
    def rewrite_base(self, pair_id: str) -> PairText:
        """The text the rewriting steps start from: the latest version that came from the source (``original``,
        or a re-import's ``imported``). Rewrites and edits are never fed back into ``enrich`` / ``refine``.

        Raises:
            NotFoundError: no such pair.
        """
        self.ordinal_of(pair_id)
        r = self.db.conn.execute(
            _TEXT_SELECT + f" WHERE qa_pair_id = ? AND origin IN ({', '.join('?' * len(_REWRITE_BASE_ORIGINS))}) "
            "ORDER BY version DESC LIMIT 1", [pair_id, *_REWRITE_BASE_ORIGINS]).fetchone()
        if r is None:
            raise NotFoundError(f"pair {pair_id} has no original text")
        return _text_from_row(pair_id, r)

    def save_text_version(
        self, pair_id: str, question: str, reference_answer: str | None, *, origin: TextOrigin | str, by: str,
        model: str | None = None, call_ids: tuple[int, ...] | list[int] = (), restored_from: int | None = None,
        expected_version: int | None = None, if_changed: bool = True,
    ) -> PairText | None:
        """Append a text version of ``pair_id`` (it becomes the current text and sends the pair back to review).

        Args:
            origin: ``enriched`` / ``refined`` (a curation step, with ``model`` and ``call_ids``), ``edited`` (an
                annotator; a revert gives ``restored_from``).
            expected_version: the version the edit started from; when the current version differs nothing is
                written (:class:`TextConflictError`). None skips the check (curation steps).
            if_changed: when the text equals the current text exactly, write nothing and return None.

        Returns:
            The new version, or None when ``if_changed`` and the text is unchanged.

        Raises:
            NotFoundError: no such pair.
            TextConflictError: the compare-and-set on ``expected_version`` failed.
            BenchwrightError: an empty question, or an origin that is not a :class:`TextOrigin`.
        """
        origin = TextOrigin(origin)
        if not question or not question.strip():
            raise BenchwrightError("the question must not be empty")
        with self.write() as db:
            self.ordinal_of(pair_id)
            repository, current, cq, ca = db.conn.execute(
                "SELECT repository, text_version, question, reference_answer FROM qa_pairs WHERE id = ?",
                [pair_id]).fetchone()
            if expected_version is not None and expected_version != current:
                raise TextConflictError(
                    f"the text of this pair is now at version {current}, after you opened version "
                    f"{expected_version}; nothing was overwritten. Reload the pair and apply your edit again")
            if if_changed and cq == question and (ca or "") == (reference_answer or ""):
                return None
            version = db.conn.execute(
                "SELECT coalesce(max(version), 0) + 1 FROM pair_texts WHERE qa_pair_id = ?", [pair_id]).fetchone()[0]
            db.conn.execute(
                f"INSERT INTO pair_texts ({PAIR_TEXT_COLUMNS}, model, call_ids_json, restored_from) "
                f"VALUES ({', '.join('?' * (len(PAIR_TEXT_COLUMNS.split(',')) + 3))})",
                (pair_id, version, origin.value, question, reference_answer,
                 pair_identity_key(repository, question, reference_answer), question_identity_key(repository, question),
                 by, utc_now(), None, None, None, None, uuid.uuid4().hex, model, json.dumps(list(call_ids)),
                 restored_from),
            )
        return self.text_version(pair_id, version)

    def revert_text(self, pair_id: str, *, by: str, to_version: int = 1,
                    expected_version: int | None = None) -> PairText | None:
        """Make version ``to_version`` (default: the original) current again, as a new ``edited`` version with
        ``restored_from`` set; None when it is the current text already.

        Raises:
            NotFoundError: no such pair or version.
            TextConflictError: see :meth:`save_text_version`.
        """
        old = self.text_version(pair_id, to_version)
        return self.save_text_version(pair_id, old.question, old.reference_answer, origin=TextOrigin.EDITED, by=by,
                                      restored_from=to_version, expected_version=expected_version)

    @serialized
    def accept_text(self, pair_id: str, annotator: str, version: int | None = None) -> int:
        """Record that ``annotator`` accepts text version ``version`` (None: the current one) of the pair; returns
        the version accepted.

        Raises:
            NotFoundError: no such pair or version.
        """
        v = self.text_version(pair_id, version).version
        with self.write() as db:
            db.conn.execute("INSERT INTO text_acceptances (qa_pair_id, version, annotator, created_at) "
                            "VALUES (?, ?, ?, ?)", [pair_id, v, annotator, utc_now()])
        return v

    @serialized
    def text_acceptances(self, pair_id: str) -> dict[int, list[str]]:
        """Text version -> the annotators who accepted it (sorted, each once)."""
        out: dict[int, list[str]] = {}
        for v, who in self.db.conn.execute(
                "SELECT DISTINCT version, annotator FROM text_acceptances WHERE qa_pair_id = ? ORDER BY 1, 2",
                [pair_id]):
            out.setdefault(v, []).append(who)
        return out

    @serialized
    def stale_checklist(self, pair_id: str) -> tuple[int, int] | None:
        """``(made from, current)`` text versions when the pair's current checklist is stale (the rule of
        :func:`benchwright.core.models.checklist_stale`), else None (no checklist, or it fits the current text).

        Raises:
            NotFoundError: no such pair.
        """
        self.ordinal_of(pair_id)
        row = self.db.conn.execute(
            """SELECT v.text_version FROM checklist_current c JOIN checklist_versions v ON v.id = c.version_id
               WHERE c.qa_pair_id = ?""", [pair_id]).fetchone()
        if row is None or row[0] is None:
            return None
        current = self.text_version(pair_id)
        made_from = self.db.conn.execute(_TEXT_SELECT + " WHERE qa_pair_id = ? AND version = ?",
                                         [pair_id, row[0]]).fetchone()
        if made_from is None or not checklist_stale(_text_from_row(pair_id, made_from), current):
            return None
        return row[0], current.version

    @serialized
    def reopened_counts(self) -> dict[str, int]:
        """``{reopen reason: pairs}``: pairs sent back to review (``qa_pairs.reopened_reason``) that hold a review
        made before it, which no longer counts (sorted by reason; empty when there is none)."""
        return dict(self.db.conn.execute(
            f"""SELECT p.reopened_reason, count(DISTINCT p.id) FROM qa_pairs p
                JOIN review_state s ON s.qa_pair_id = p.id
                WHERE s.decision IN ('accept', 'reject', 'revise') AND {REOPENED_SQL}
                GROUP BY p.reopened_reason ORDER BY p.reopened_reason""").fetchall())

    @serialized
    def reopening(self, pair_id: str) -> tuple[str | None, str | None]:
        """``(reopened_at, reopened_reason)`` of ``pair_id``: when and why it was last sent back to review (both
        None when it never was, or there is no such pair)."""
        row = self.db.conn.execute("SELECT reopened_at, reopened_reason FROM qa_pairs WHERE id = ?",
                                   [pair_id]).fetchone()
        return (row[0], row[1]) if row else (None, None)

    @serialized
    def reopened(self, pair_id: str, annotator: str) -> str | None:
        """The reason (``qa_pairs.reopened_reason``: :data:`~benchwright.core.vocabulary.REOPEN_TEXT`,
        :data:`~benchwright.core.vocabulary.REOPEN_EVIDENCE`) ``pair_id`` is back in ``annotator``'s review, or
        None: their latest decision (if any) was made after the pair was last reopened."""
        row = self.db.conn.execute(
            f"""SELECT p.reopened_reason FROM qa_pairs p
                JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                WHERE p.id = ? AND {REOPENED_SQL}""", [annotator, pair_id]).fetchone()
        return (row[0] or REOPEN_TEXT) if row else None
