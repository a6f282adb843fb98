"""Re-pinning a repository and the evidence checks it makes (``benchwright repos move``, migration m019):
``repository_pins`` (every pin a repository had), ``evidence_checks`` (a pair's citations re-resolved at a new pin,
append-only) and ``evidence_current`` (the latest check per pair, kept by trigger).

A stale check sends its pair back to review: ``qa_pairs.reopened_at`` / ``reopened_reason``
(:data:`benchwright.core.vocabulary.REOPEN_EVIDENCE`). The rules of what is stale are in
:mod:`benchwright.core.evidence_drift`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from benchwright.core.errors import NotFoundError, RepositoryError
from benchwright.core.evidence_drift import (
    EVIDENCE_FILTERS,
    EVIDENCE_STALE,
    EVIDENCE_STATUSES,
    EVIDENCE_UNCHECKED,
    CitationChange,
)
from benchwright.core.models import Repository, utc_now
from benchwright.core.vocabulary import REOPEN_EVIDENCE

from .locking import serialized


@dataclass(frozen=True)
class EvidenceCheck:
    """One re-resolution of a pair's citations at a new pin (an ``evidence_checks`` row).

    Attributes:
        id: the row id.
        pair_id: the pair.
        repository: the repository re-pinned.
        from_pin / to_pin: ``NAME@SHA12`` or ``NAME@LABEL`` before and after the move.
        status: one of :data:`benchwright.core.evidence_drift.EVIDENCE_STATUSES`.
        changes: every citation's outcome, in the order of the text.
        created_at / created_by: when and by whom (``repos move --as``).
    """

    id: int
    pair_id: str
    repository: str
    from_pin: str | None
    to_pin: str
    status: str
    changes: tuple[CitationChange, ...]
    created_at: str
    created_by: str

    @property
    def stale_changes(self) -> tuple[CitationChange, ...]:
        """The citations that make the check stale."""
        return tuple(c for c in self.changes if c.stale)


@dataclass(frozen=True)
class RepositoryPin:
    """One pin a repository had (a ``repository_pins`` row), oldest first in :meth:`EvidenceStoreMixin.repository_pins`."""

    commit: str | None
    version_label: str | None
    local_path: str | None
    created_at: str
    created_by: str


@dataclass(frozen=True)
class PairEvidenceInput:
    """What a re-pin reads of one pair: id, position (``#N``) and current text (question, reference answer)."""

    pair_id: str
    ordinal: int
    question: str
    reference_answer: str | None


_CURRENT = "SELECT 1 FROM evidence_current e WHERE e.qa_pair_id = p.id"
EVIDENCE_FILTER_SQL = {
    **{status: f"EXISTS ({_CURRENT} AND e.status = '{status}')" for status in EVIDENCE_STATUSES},
    EVIDENCE_UNCHECKED: f"NOT EXISTS ({_CURRENT})",
}
"""The queue filter ``evidence=VALUE`` over ``qa_pairs p``, for each of
:data:`~benchwright.core.evidence_drift.EVIDENCE_FILTERS` (in that order)."""
EVIDENCE_FILTER_SQL = {k: EVIDENCE_FILTER_SQL[k] for k in EVIDENCE_FILTERS}

_CHECK_SELECT = ("SELECT id, qa_pair_id, repository, from_pin, to_pin, status, changes_json, created_at, created_by "
                 "FROM evidence_checks")


def _check_from_row(r) -> EvidenceCheck:
    return EvidenceCheck(id=r[0], pair_id=r[1], repository=r[2], from_pin=r[3], to_pin=r[4], status=r[5],
                         changes=tuple(CitationChange.from_json(c) for c in json.loads(r[6] or "[]")),
                         created_at=r[7], created_by=r[8])


class EvidenceStoreMixin:
    """Re-pin and evidence-check methods of :class:`benchwright.db.Store` (needs ``self.db``, ``self.write``,
    ``self.get_repository``, ``self.ordinal_of``)."""

    @serialized
    def repository_pair_texts(self, name: str) -> list[PairEvidenceInput]:
        """The current text of every pair of repository ``name``, in queue order."""
        return [PairEvidenceInput(*r) for r in self.db.conn.execute(
            "SELECT id, ordinal, question, reference_answer FROM qa_pairs WHERE repository = ? ORDER BY ordinal",
            [name])]

    def record_repository_move(self, before: Repository, after: Repository,
                               checks: list[tuple[str, str, list[CitationChange]]], annotator: str) -> str:
        """Re-pin ``before`` (the repository as read when the checks were made) to ``after`` and store ``checks``
        (``(pair id, status, changes)`` per pair), in one transaction: a ``repository_pins`` row (the first pin too,
        when the repository has none yet), the ``repositories`` row's commit, ``commit_verified``, version label and
        local path, one ``evidence_checks`` row per pair, and for each stale pair ``qa_pairs.reopened_at`` = now,
        ``reopened_reason`` = :data:`~benchwright.core.vocabulary.REOPEN_EVIDENCE`. Nothing else changes.

        Returns:
            The time recorded (ISO 8601, UTC).

        Raises:
            NotFoundError: the repository is not registered.
            RepositoryError: its pin or path changed since ``before`` was read (another move), or a pair of
                ``checks`` is not one of its pairs. Nothing is written.
            ValueError: a status outside :data:`~benchwright.core.evidence_drift.EVIDENCE_STATUSES`.
        """
        now = utc_now()
        with self.write() as db:
            current = self.get_repository(before.name)
            if (current.commit, current.version_label, current.local_path) != \
                    (before.commit, before.version_label, before.local_path):
                raise RepositoryError(f"repository '{before.name}' was re-pinned to {current.pin} at "
                                      f"{current.local_path} while its evidence was checked; nothing was written: "
                                      "run the move again")
            ours = {r[0] for r in db.conn.execute("SELECT id FROM qa_pairs WHERE repository = ?", [before.name])}
            for pid, status, _ in checks:
                if pid not in ours:
                    raise RepositoryError(f"pair {pid} is not a pair of repository '{before.name}'; nothing was written")
                if status not in EVIDENCE_STATUSES:
                    raise ValueError(f"evidence status {status!r}: use one of {', '.join(EVIDENCE_STATUSES)}")
            has_pins = db.conn.execute("SELECT 1 FROM repository_pins WHERE repository = ? LIMIT 1",
                                       [before.name]).fetchone()
            insert_pin = ("INSERT INTO repository_pins (repository, commit_sha, version_label, local_path, created_at, "
                          "created_by) VALUES (?, ?, ?, ?, ?, ?)")
            if not has_pins and (before.commit or before.version_label):
                made = db.conn.execute("SELECT created_at, created_by FROM repositories WHERE name = ?",
                                       [before.name]).fetchone()
                db.conn.execute(insert_pin, (before.name, before.commit, before.version_label, before.local_path,
                                             made[0], made[1]))
            db.conn.execute(insert_pin, (before.name, after.commit, after.version_label, after.local_path, now,
                                         annotator))
            db.conn.execute(
                "UPDATE repositories SET commit_sha = ?, commit_verified = ?, version_label = ?, local_path = ? "
                "WHERE name = ?",
                (after.commit, int(after.commit_verified), after.version_label, after.local_path, before.name))
            db.conn.executemany(
                "INSERT INTO evidence_checks (qa_pair_id, repository, from_pin, to_pin, status, changes_json, "
                "created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(pid, before.name, before.pin, after.pin, status,
                  json.dumps([c.to_json() for c in changes], ensure_ascii=False), now, annotator)
                 for pid, status, changes in checks])
            db.conn.executemany(
                "UPDATE qa_pairs SET reopened_at = ?, reopened_reason = ? WHERE id = ?",
                [(now, REOPEN_EVIDENCE, pid) for pid, status, _ in checks if status == EVIDENCE_STALE])
        return now

    def record_evidence_recheck(self, pair_id: str, pin: str, status: str, changes: list[CitationChange],
                                annotator: str) -> None:
        """Store a re-check of ``pair_id``'s citations at its repository's current ``pin`` (``from_pin`` and
        ``to_pin`` both ``pin``): made after an annotator edited the text of a pair whose evidence was stale, so
        the check follows the text they wrote. Reopens nothing (the edit itself reopened the pair).

        Raises:
            NotFoundError: no such pair, or it has no repository.
            ValueError: a status outside :data:`~benchwright.core.evidence_drift.EVIDENCE_STATUSES`.
        """
        if status not in EVIDENCE_STATUSES:
            raise ValueError(f"evidence status {status!r}: use one of {', '.join(EVIDENCE_STATUSES)}")
        with self.write() as db:
            row = db.conn.execute("SELECT repository FROM qa_pairs WHERE id = ?", [pair_id]).fetchone()
            if row is None or row[0] is None:
                raise NotFoundError(f"pair {pair_id} has no repository to check its evidence in")
            db.conn.execute(
                "INSERT INTO evidence_checks (qa_pair_id, repository, from_pin, to_pin, status, changes_json, "
                "created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (pair_id, row[0], pin, pin, status, json.dumps([c.to_json() for c in changes], ensure_ascii=False),
                 utc_now(), annotator))

    @serialized
    def evidence_check(self, pair_id: str) -> EvidenceCheck | None:
        """The latest evidence check of ``pair_id`` (``evidence_current``), or None when it was never checked.

        Raises:
            NotFoundError: no such pair.
        """
        self.ordinal_of(pair_id)
        row = self.db.conn.execute(
            _CHECK_SELECT + " WHERE id = (SELECT check_id FROM evidence_current WHERE qa_pair_id = ?)",
            [pair_id]).fetchone()
        return _check_from_row(row) if row else None

    @serialized
    def evidence_checks(self, pair_id: str) -> list[EvidenceCheck]:
        """Every evidence check of ``pair_id``, oldest first.

        Raises:
            NotFoundError: no such pair.
        """
        self.ordinal_of(pair_id)
        return [_check_from_row(r) for r in self.db.conn.execute(
            _CHECK_SELECT + " WHERE qa_pair_id = ? ORDER BY id", [pair_id])]

    @serialized
    def evidence_counts(self, name: str) -> dict[str, int]:
        """``{status: pairs}`` of repository ``name``'s pairs by their latest evidence check, for every status of
        :data:`~benchwright.core.evidence_drift.EVIDENCE_STATUSES` (0 when none), ``stale`` first; empty when none was
        checked."""
        rows = dict(self.db.conn.execute(
            "SELECT e.status, count(*) FROM evidence_current e JOIN qa_pairs p ON p.id = e.qa_pair_id "
            "WHERE p.repository = ? GROUP BY e.status", [name]).fetchall())
        order = (EVIDENCE_STALE, *(s for s in EVIDENCE_STATUSES if s != EVIDENCE_STALE))
        return {status: rows.get(status, 0) for status in order} if rows else {}

    @serialized
    def repository_pins(self, name: str) -> list[RepositoryPin]:
        """Every pin repository ``name`` had, oldest first (``repos move`` adds one).

        Raises:
            NotFoundError: the repository is not registered.
        """
        if self.get_repository(name, missing_ok=True) is None:
            raise NotFoundError(f"repository '{name}' is not registered; register it with: "
                                f"benchwright repos add {name} PATH")
        return [RepositoryPin(*r) for r in self.db.conn.execute(
            "SELECT commit_sha, version_label, local_path, created_at, created_by FROM repository_pins "
            "WHERE repository = ? ORDER BY id", [name])]
