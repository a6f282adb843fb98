"""The project store: one SQLite file per project, opened through sqlite-utils.

WAL mode, foreign keys on, a busy timeout so two annotators on one file wait for each other instead of
failing, and one write path. Write transactions start with ``BEGIN IMMEDIATE``: they take SQLite's write
lock first (waiting up to the busy timeout), because a transaction that reads first and upgrades to a
write later fails at once with "database is locked" when another process holds the lock. One lock
serializes every use of the connection (reads as well as writes) so Textual worker threads may share it.
History is append-only: decisions and notes are new rows; "current" is a query.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from sqlite_utils import Database

from benchwright.core.errors import (
    BenchwrightError,
    ImportReport,
    InputFileError,
    NotFoundError,
    Remedy,
    RepositoryError,
    StoreError,
    TextUpdate,
    with_remedy,
)
from benchwright.core.funnel import PASSED, dropped_filter, funnel_filters
from benchwright.core.importers import ParseResult
from benchwright.core.importers.base import paused_gc
from benchwright.core.models import (
    Decision,
    QAPair,
    Repository,
    SourceRef,
    TextOrigin,
    identity_keys,
    pair_identity_key,
    question_identity_key,
    utc_now,
)
from benchwright.core.review import Criteria, decision_reason
from benchwright.core.steps import gating_steps
from benchwright.core.vocabulary import REOPEN_TEXT

from . import data_filters
from .answers import AnswerStoreMixin
from .batches import BatchStoreMixin
from .calibration import CalibrationStoreMixin
from .checklists import CHECKLIST_FILTERS, ChecklistStoreMixin
from .dedup import DedupStoreMixin
from .eligibility import RepositoryFactsMixin, record_import_facts, unrecorded_filtered
from .embeddings import EmbeddingStoreMixin
from .evidence import EVIDENCE_FILTER_SQL, EvidenceStoreMixin
from .funnel import FunnelStoreMixin
from .generation import GenerationStoreMixin
from .human_judgments import HumanJudgmentStoreMixin
from .issues import IssueStoreMixin
from .leakage import LeakageStoreMixin
from .llm import LLMStoreMixin
from .locking import serialized
from .migrations import PAIR_TEXT_COLUMNS, migrations, original_text_uid
from .probes import ProbeStoreMixin
from .releases import ReleaseStoreMixin
from .repositories import DerivedRepositoryMixin, derived_columns, derived_fields
from .results import ResultStoreMixin
from .reviews import AgreementInputsMixin, ReviewStoreMixin
from .selections import SelectionStoreMixin
from .taxonomy import TaxonomyStoreMixin
from .textguard import GuardedConnection, TextRepairMixin
from .texts import REOPENED_SQL, STALE_CHECKLIST_SQL, TextVersionStoreMixin

BUSY_TIMEOUT_S = 10.0
"""Seconds a write waits for another process's write to finish before failing."""
RESUME_STEP = 64
"""``Store.first_undecided`` moves ``review_resume`` (m028) when the first undecided pair is this many ordinals or
more past it: one short write now and then, not one per decision."""

CURATION_FILTERS = ("flagged", "step-failed", "not-code-relevant", "verify-failed", "unresolved-links",
                    "refined", "not-classified", *funnel_filters())
"""Queue filters on the curation pipeline's current results (RepoProbe §3.2); ``passed`` and ``dropped:STEP`` are
the funnel's (:func:`benchwright.core.funnel.funnel_filters`)."""
_CUR = "SELECT 1 FROM curation_current k WHERE k.qa_pair_id = p.id"
_GATING = ", ".join(f"'{s}'" for s in gating_steps())
_CURATION_SQL = {
    "flagged": f"EXISTS ({_CUR} AND k.flagged = 1)",
    "step-failed": f"EXISTS ({_CUR} AND k.status = 'failed')",
    "not-code-relevant": f"EXISTS ({_CUR} AND k.step = 'classify' AND k.flagged = 1)",
    "verify-failed": f"EXISTS ({_CUR} AND k.step = 'verify' AND k.flagged = 1)",
    "unresolved-links": f"EXISTS ({_CUR} AND k.step = 'enrich' AND k.flagged = 1)",
    "refined": f"EXISTS ({_CUR} AND k.step = 'refine' AND k.status = 'ok')",
    "not-classified": f"NOT EXISTS ({_CUR} AND k.step = 'classify' AND k.status = 'ok')",
    # the funnel (core.funnel): passed = a gating step ran and none failed or dropped the pair
    PASSED: f"EXISTS ({_CUR} AND k.step IN ({_GATING}) AND k.status = 'ok') "
            f"AND NOT EXISTS ({_CUR} AND k.step IN ({_GATING}) AND (k.status = 'failed' OR k.flagged = 1))",
    **{dropped_filter(s): f"EXISTS ({_CUR} AND k.step = '{s}' AND k.status = 'ok' AND k.flagged = 1)"
       for s in gating_steps()},
}
STATUSES = ("undecided", "accepted", "rejected", "to-revise", "skipped", "needs-reference")
"""Status filters of the queue, as seen by one annotator (``needs-reference`` is a property of the pair)."""

_STATUS_DECISION = {"accepted": "accept", "rejected": "reject", "to-revise": "revise", "skipped": "skip"}
_COUNTED = "('accept', 'reject', 'revise')"
"""The decisions :meth:`Store.progress` counts as decided."""
_PAIR_COLUMNS = (
    "id, ordinal, repository, question, reference_answer, needs_reference, category, qa_type, qa_subtype, "
    "cluster_id, cluster_name, language, theme, task_set, source_format, source_file, source_line, "
    "source_unit, source_upstream_id, extra_json, split, cluster_origin"
)

@dataclass(frozen=True)
class QueueFilter:
    """Which pairs the queue and previous/next walk through; ``None`` fields do not filter.

    Attributes:
        status: one of :data:`STATUSES`, judged for the annotator the store is asked about.
        repository: a repository name.
        qa_type: What / Why / How / Where.
        category: a RepoProbe category.
        text: a case-insensitive substring of the question or the reference answer.
        checklist: one of :data:`CHECKLIST_FILTERS`, on the pair's current checklist.
        assigned_to: only pairs assigned to this annotator.
        curation: one of :data:`CURATION_FILTERS`, on the pairs' current curation results.
        evidence: one of :data:`benchwright.core.evidence_drift.EVIDENCE_FILTERS`, on the pair's latest evidence
            check (``repos move``); ``unchecked``: never checked.
        dedup: one of :data:`benchwright.core.vocabulary.DEDUP_FILTERS`, over the latest dedup run.
        difficulty: one of :data:`benchwright.core.vocabulary.DIFFICULTY_FILTERS`, the pair's latest calibration.
        item: one of :data:`benchwright.core.vocabulary.ITEM_FILTERS`, the pair's latest item statistics.
        leakage: one of :data:`benchwright.core.vocabulary.LEAKAGE_FILTERS`, on the current text version.
        selection: the name of a selection (``sample``): its latest members.
        split: the pair's split (``train``, ``test``...).
        task_set: the pair's task set (``code-derivable``, ``doc-dependent``: :data:`~benchwright.core.vocabulary.TASK_SETS`).
    """

    status: str | None = None
    repository: str | None = None
    qa_type: str | None = None
    category: str | None = None
    text: str | None = None
    checklist: str | None = None
    assigned_to: str | None = None
    curation: str | None = None
    evidence: str | None = None
    dedup: str | None = None
    difficulty: str | None = None
    item: str | None = None
    leakage: str | None = None
    selection: str | None = None
    split: str | None = None
    task_set: str | None = None

    def sql(self, annotator: str) -> tuple[str, list]:
        """``(where_clause, params)`` over ``qa_pairs p LEFT JOIN review_state s`` (s for ``annotator``).

        A decision made before the pair was sent back to review (``qa_pairs.reopened_at``: a new text version,
        stale evidence) no longer counts: the pair is ``undecided`` again, not ``accepted`` / ``rejected`` /
        ``to-revise`` / ``skipped``."""
        clauses: list[str] = []
        params: list = []
        if self.status == "undecided":
            clauses.append(f"(s.decision IS NULL OR s.decision = 'skip' OR {REOPENED_SQL})")
        elif self.status == "needs-reference":
            clauses.append("p.needs_reference = 1")
        elif self.status in _STATUS_DECISION:
            clauses.append(f"s.decision = ? AND NOT coalesce({REOPENED_SQL}, 0)")
            params.append(_STATUS_DECISION[self.status])
        elif self.status is not None:
            raise BenchwrightError(f"unknown status {self.status!r}; statuses are {', '.join(STATUSES)}")
        for column in ("repository", "qa_type", "category"):
            value = getattr(self, column)
            if value is not None:
                clauses.append(f"p.{column} = ?")
                params.append(value)
        if self.text:
            clauses.append("(p.question LIKE ? ESCAPE '\\' OR p.reference_answer LIKE ? ESCAPE '\\')")
            like = "%" + self.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            params += [like, like]
        if self.assigned_to is not None:
            clauses.append("EXISTS (SELECT 1 FROM assignments a WHERE a.qa_pair_id = p.id AND a.annotator = ?)")
            params.append(self.assigned_to)
        if self.checklist is not None:
            if self.checklist not in CHECKLIST_FILTERS:
                raise BenchwrightError(
                    f"unknown checklist filter {self.checklist!r}; use one of {', '.join(CHECKLIST_FILTERS)}"
                )
            current = "SELECT 1 FROM checklist_current c WHERE c.qa_pair_id = p.id"
            clauses.append({
                "no-checklist": f"NOT EXISTS ({current})",
                "invalid-checklist": f"EXISTS ({current} AND c.is_valid = 0)",
                "draft-checklist": f"EXISTS ({current} AND c.is_draft = 1)",
                "valid-checklist": f"EXISTS ({current} AND c.is_valid = 1 AND c.is_draft = 0)",
                "stale-checklist": STALE_CHECKLIST_SQL,
            }[self.checklist])
        if self.curation is not None:
            if self.curation not in CURATION_FILTERS:
                raise BenchwrightError(
                    f"unknown curation filter {self.curation!r}; use one of {', '.join(CURATION_FILTERS)}"
                )
            clauses.append(_CURATION_SQL[self.curation])
        if self.evidence is not None:
            if self.evidence not in EVIDENCE_FILTER_SQL:
                raise BenchwrightError(
                    f"unknown evidence filter {self.evidence!r}; use one of {', '.join(EVIDENCE_FILTER_SQL)}"
                )
            clauses.append(EVIDENCE_FILTER_SQL[self.evidence])
        if self.dedup is not None:
            clauses.append(data_filters.dedup_sql(self.dedup))
        for value, build in ((self.difficulty, data_filters.difficulty_sql), (self.item, data_filters.item_sql),
                             (self.leakage, data_filters.leakage_sql), (self.selection, data_filters.selection_sql)):
            if value is not None:
                clause, extra = build(value)
                clauses.append(clause)
                params += extra
        if self.split is not None:
            clauses.append("p.split = ?")
            params.append(self.split)
        if self.task_set is not None:
            clauses.append("p.task_set = ?")
            params.append(self.task_set)
        return (" AND ".join(clauses) or "1"), params


class _Locked(Exception):
    """Opening met SQLite's lock of another process that is still setting the file up (retried)."""


class StaleReviewError(BenchwrightError):
    """A decision based on a view of the pair that another session has changed since."""


ANY_NOTE = object()
"""``add_note(expected=ANY_NOTE)``: append without a compare-and-set."""


class NoteConflictError(BenchwrightError):
    """A note was saved on the pair by another session after the editor loaded it; nothing was written.

    Attributes:
        current_id: the id of the newer note; current: its text.
    """

    def __init__(self, current_id: int, current: str) -> None:
        self.current_id, self.current = current_id, current
        super().__init__("your note was not saved: another session saved a newer note on this pair since you "
                         "opened it")


@dataclass(frozen=True)
class QueueRow:
    """One line of the queue: a pair's id, position, question, labels and this annotator's decision."""

    id: str
    ordinal: int
    question: str
    repository: str | None
    qa_type: str | None
    category: str | None
    needs_reference: bool
    decision: str | None
    flags: str | None = None
    """Curation steps whose current result flags the pair, comma-separated (``classify``: not code-relevant,
    ``enrich``: an unresolved link, ``verify``: a check failed), or None."""
    reopened: str | None = None
    """Why the pair is back in this annotator's review (``qa_pairs.reopened_reason``) when their decision was made
    before it was reopened (``decision`` is then None), else None."""
    duplicate: bool = False
    """The pair is a member of an unresolved duplicate group of the latest dedup run (``benchwright dedup``)."""


@dataclass(frozen=True)
class Progress:
    """Counts for the progress line: ``decided`` by anyone (accept or reject), and by this annotator."""

    total: int
    decided: int
    mine: int


class Store(ChecklistStoreMixin, ReviewStoreMixin, AgreementInputsMixin, ReleaseStoreMixin, ProbeStoreMixin,
            LLMStoreMixin, AnswerStoreMixin, CalibrationStoreMixin, TextRepairMixin, ResultStoreMixin, DerivedRepositoryMixin,
            TextVersionStoreMixin, FunnelStoreMixin, RepositoryFactsMixin, EvidenceStoreMixin, EmbeddingStoreMixin,
            IssueStoreMixin, DedupStoreMixin, SelectionStoreMixin, TaxonomyStoreMixin, LeakageStoreMixin,
            GenerationStoreMixin, BatchStoreMixin, HumanJudgmentStoreMixin):
    """A benchwright project database.

    Open with :meth:`Store.open`; use as a context manager or call :meth:`close`.

    Raises:
        StoreError: the file is not a SQLite database, or is locked by another writer for longer than
            :data:`BUSY_TIMEOUT_S`.
    """

    def __init__(self, db: Database, path: Path):
        self.db = db
        self.path = path
        self._lock = threading.RLock()
        """Held around every use of ``db``: sqlite-utils reads use savepoints, which must not interleave
        with another thread's transaction on the same connection."""
        self._deferring = 0
        """Open :meth:`deferring_commits` scopes."""
        self._commit_pending = False
        """A transaction of :meth:`write_deferred` is open, its COMMIT not made yet."""

    # ----------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> Store:
        """Open the project at ``path`` (creating it when ``create`` and it does not exist) and apply
        pending migrations.

        Raises:
            StoreError: no project there and ``create`` is False; an existing file that is not a SQLite
                database (it is never overwritten); a folder that does not exist; a migration failed.
        """
        p = Path(path)
        if p.is_dir():
            raise StoreError(f"{p}: is a directory; give the path of a project file, e.g. {p / 'benchwright.db'}")
        if not p.parent.exists():
            raise StoreError(f"{p}: folder {p.parent} does not exist")
        if not p.exists() and not create:
            raise with_remedy(StoreError(f"{p}: no project here"), Remedy.CREATE_PROJECT)
        if p.exists():
            with p.open("rb") as fh:
                header = fh.read(16)
            if header != b"SQLite format 3\x00" and not (header == b"" and create):
                raise StoreError(f"{p}: not a benchwright project (not a SQLite database); nothing was changed")
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                return cls._open_once(p)
            except _Locked:
                # Switching a brand-new file to WAL takes an exclusive lock that SQLite does not wait for:
                # several processes creating one project at the same moment retry here instead of failing.
                if time.monotonic() > deadline:
                    raise StoreError(f"{p}: another process held the project for too long; try again") from None
                time.sleep(0.05)

    @classmethod
    def _open_once(cls, p: Path) -> Store:
        conn: sqlite3.Connection | None = None
        try:
            # GuardedConnection: no text with a lone surrogate ever reaches SQLite (db/textguard.py).
            conn = sqlite3.connect(str(p), check_same_thread=False, timeout=BUSY_TIMEOUT_S,
                                   factory=GuardedConnection)
            db = Database(conn)
            with db.ensure_autocommit_on():
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
            store = cls(db, p)
            if migrations.pending(db):
                # All pending migrations in one write transaction: two processes opening a new project at
                # once would otherwise both see m001 pending and the second would fail half-way.
                # Migrations.apply re-reads what is applied inside the transaction. If one fails, the
                # whole upgrade rolls back and every migration of it stays pending (nothing half-made).
                with store.write():
                    migrations.apply(db)
        except sqlite3.DatabaseError as e:
            if conn is not None:
                conn.close()
            if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
                raise _Locked from None
            raise StoreError(f"{p}: cannot open as a benchwright project ({e})") from None
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        return store

    def close(self) -> None:
        """Close the connection (after committing a deferred write); committed work is on disk."""
        with self._lock:
            self.commit_pending()
            self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def write(self) -> Iterator[Database]:
        """One write transaction through the single write path; rolled back whole on any error.

        The outermost block starts with ``BEGIN IMMEDIATE`` (waiting up to :data:`BUSY_TIMEOUT_S` for
        another process's write to finish); a nested block is a savepoint of the outer transaction.

        Raises:
            StoreError: another process held the write lock for longer than :data:`BUSY_TIMEOUT_S`.
        """
        with self._lock:
            try:
                if self._commit_pending:
                    # A deferred write (write_deferred) is open: this block joins it and commits both. Its own
                    # rows are a savepoint, so an error undoes them alone and the deferred rows still commit.
                    self._commit_pending = False
                    try:
                        with self.db.atomic():
                            yield self.db
                    finally:
                        self._commit()
                    return
                if self.db.conn.in_transaction:
                    with self.db.atomic():
                        yield self.db
                    return
                self.db.conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self.db
                except BaseException:
                    self.db.rollback()
                    raise
                try:
                    self.db.conn.execute("COMMIT")
                except BaseException:
                    self.db.rollback()
                    raise
            except sqlite3.OperationalError as e:
                if "locked" in str(e) or "busy" in str(e):
                    raise StoreError(f"{self.path}: another process held the project for too long; try again") from e
                raise

    def _commit(self) -> None:
        if not self.db.conn.in_transaction:  # a trigger's RAISE(ROLLBACK) ended it: nothing left to commit
            return
        try:
            self.db.conn.execute("COMMIT")
        except BaseException:
            self.db.rollback()
            raise

    @contextmanager
    def deferring_commits(self) -> Iterator[None]:
        """A scope in which :meth:`write_deferred` may leave its COMMIT to the next write (a job's runner: the
        ledger row of an item's last call then commits with the item's result, one transaction instead of two).
        Leaving the scope commits what is still pending."""
        with self._lock:
            self._deferring += 1
            checkpointer = _Checkpointer.start(self) if self._deferring == 1 else None
        try:
            yield
        finally:
            with self._lock:
                self._deferring -= 1
                self.commit_pending()
            if checkpointer is not None:
                checkpointer.stop()

    @contextmanager
    def write_deferred(self) -> Iterator[Database]:
        """A write transaction whose COMMIT may wait a moment (the ledger's rows).

        Inside :meth:`deferring_commits`, in a thread running an event loop, and outside any other write block,
        the transaction stays open after the block: the next :meth:`write` block joins it and commits both, and
        at the latest the loop's next turn commits it (:meth:`commit_pending`), so it never waits across an
        ``await`` of the task that wrote it: a kill loses at most rows whose task had not yet reached its next
        write or await. Anywhere else it is :meth:`write`.

        Raises:
            StoreError: another process held the write lock for longer than :data:`BUSY_TIMEOUT_S`.
        """
        with self._lock:
            loop = _running_loop() if self._deferring else None
            if loop is None or (self.db.conn.in_transaction and not self._commit_pending):
                with self.write() as db:
                    yield db
                return
            if not self._commit_pending:
                try:
                    self.db.conn.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError as e:
                    if "locked" in str(e) or "busy" in str(e):
                        raise StoreError(f"{self.path}: another process held the project for too long; "
                                         "try again") from e
                    raise
                loop.call_soon(self.commit_pending)
            self._commit_pending = False  # a write block inside this one is a savepoint of it
            try:
                with self.db.atomic():
                    yield self.db
            finally:
                self._commit_pending = self.db.conn.in_transaction

    def commit_pending(self) -> None:
        """Commit the open transaction of :meth:`write_deferred`, if any (nothing to do otherwise)."""
        with self._lock:
            if self._commit_pending:
                self._commit_pending = False
                self._commit()

    @serialized
    def _one(self, sql: str, params: list | tuple = ()) -> tuple | None:
        return self.db.conn.execute(sql, params).fetchone()

    # ----------------------------------------------------------- repositories
    def add_repository(self, repo: Repository, annotator: str) -> Repository:
        """Register ``repo``; registering the same repository again is a no-op.

        An existing entry without a local path gains ``repo.local_path`` when the pins agree; eligibility facts
        (``stars``, ``created_on``, ``answered_discussions``) given again replace the stored ones.

        Raises:
            RepositoryError: the name is registered with another commit or version, or another path.
        """
        with self.write() as db:
            existing = self.get_repository(repo.name, missing_ok=True)
            if existing is None:
                db["repositories"].insert(_repo_row(repo, annotator))
                return repo
            if not _pins_agree(existing, repo):
                raise RepositoryError(
                    f"repository '{repo.name}' is already registered as {existing.pin}; "
                    f"it cannot be registered again as {repo.pin}"
                )
            updates = {}
            if repo.local_path and existing.local_path != repo.local_path:
                if existing.local_path:
                    raise RepositoryError(
                        f"repository '{repo.name}' is already registered at {existing.local_path}"
                    )
                updates["local_path"] = repo.local_path
                if repo.commit_verified:
                    updates.update(commit_sha=repo.commit, commit_verified=1)
            for key in ("url", "version_label", "language", "theme"):
                if getattr(repo, key) and not getattr(existing, key):
                    updates[key] = getattr(repo, key)
            for key in ("stars", "created_on", "answered_discussions"):  # facts given again replace the stored ones
                if getattr(repo, key) is not None and getattr(repo, key) != getattr(existing, key):
                    updates[key] = getattr(repo, key)
            if updates:
                db["repositories"].update(repo.name, updates)
        return self.get_repository(repo.name)

    @serialized
    def get_repository(self, name: str, *, missing_ok: bool = False) -> Repository | None:
        """The repository called ``name``.

        Raises:
            NotFoundError: no such repository (unless ``missing_ok``, which returns ``None``).
        """
        rows = list(self.db.query("SELECT * FROM repositories WHERE name = ?", [name]))
        if not rows:
            if missing_ok:
                return None
            raise NotFoundError(
                f"repository '{name}' is not registered; register it with: benchwright repos add {name} PATH"
            )
        return _repo_from_row(rows[0])

    @serialized
    def repositories(self) -> list[Repository]:
        """Every registered repository, by name."""
        return [_repo_from_row(r) for r in self.db.query("SELECT * FROM repositories ORDER BY name")]

    # ------------------------------------------------------------------ import
    def apply_import(
        self, result: ParseResult, *, annotator: str, file_path: str | Path, skip_invalid: bool = False,
        repository: str | None = None, options: dict | None = None, update: bool = False,
    ) -> ImportReport:
        """Write the valid pairs of ``result`` in one transaction (all or nothing).

        Pairs already in the project are counted, not written again, so importing the same file twice adds
        nothing: a record is already present when its text is any text version of a pair, white space aside
        (:func:`~benchwright.core.models.pair_identity_key`; trailing spaces or CRLF never make a twin). A record
        whose question is an existing pair's but whose answer is not is a possible update
        (``report.possible_updates``), never a new pair; with ``update`` it is recorded as a new text version
        of that pair (origin ``imported``), unless several pairs have that question or several records of the
        file are new texts of one pair. Repositories named by the file are registered.

        The pairs are written in chunks of :data:`IMPORT_CHUNK` as they come, each checked against the project
        (and the pairs this import already wrote) in SQL, so a streamed ``result`` (``parse(..., stream=True)``,
        its pairs in ``result.pending``) is read once, record by record, with memory flat in the file's size; its
        problems are known only at its end, so a record found invalid there rolls back everything written before.

        Raises:
            InputFileError: ``result`` has problems and ``skip_invalid`` is False, or it read no record; a streamed
                file's line that is not UTF-8.
            NotFoundError: a pair names a repository that is not registered.
            RepositoryError: the file names a repository at a commit, and the project has that name
                registered at another commit or with only a version label (which cannot be checked
                against the commit), so its pairs would be filed under code they were not written for.
        """
        report = ImportReport(file=result.file, format=result.format, read=result.read)
        with Path(file_path).open("rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        earlier = self._one(
            "SELECT repository, created_at FROM import_batches WHERE file_sha256 = ? AND format = ? "
            "AND coalesce(repository, '') != coalesce(?, '') ORDER BY id LIMIT 1",
            [digest, result.format, repository],
        )
        if earlier is not None and result.format != "swe-qa-pro":
            was = f"--repo {earlier[0]}" if earlier[0] else "no --repo"
            now = f"--repo {repository}" if repository else "no --repo"
            raise InputFileError.single(
                result.file,
                f"this file was imported on {earlier[1][:10]} with {was}; importing it with {now} would add every "
                f"pair again under another repository. Repeat the earlier --repo to add nothing",
            )
        streamed = result.pending is not None
        if not streamed:
            _refuse_invalid(result, skip_invalid)
        registered = {r.name: r for r in self.repositories()}
        for repo in result.repositories:
            existing = registered.get(repo.name)
            if existing is not None and (
                not _pins_agree(existing, repo) or (repo.commit and not existing.commit)
            ):
                raise RepositoryError(
                    f"{result.file} names repository '{repo.name}' at {repo.pin}, but the project has it "
                    f"registered as {existing.pin}; nothing was imported"
                )
        known = set(registered) | {r.name for r in result.repositories}
        unknown = {p.repository for p in result.pairs if p.repository} - known
        if not streamed:
            for name in sorted(unknown):
                self.get_repository(name)  # raises NotFoundError with the fix
        path = Path(file_path)
        now = utc_now()
        with paused_gc(), self.write() as db, _import_cache(db):
            for repo in result.repositories:
                if self.get_repository(repo.name, missing_ok=True) is None:
                    db["repositories"].insert(_repo_row(repo, annotator))
                    report.repositories_added.append(repo.name)
            run = _ImportRun(db=db, report=report, path=path, digest=digest, now=now, annotator=annotator,
                             repository=repository, options=options, format=result.format,
                             next_ordinal=(self._one("SELECT coalesce(max(ordinal), 0) FROM qa_pairs") or (0,))[0])
            source = result.pending if streamed else iter(result.pairs)
            result.pending = None
            kept: list[QAPair] = []  # a streamed result's pairs from repaired lines, for flag_import_repairs
            chunk: list[QAPair] = []
            for pair in source:
                if streamed:
                    if pair.repository and pair.repository not in known:
                        unknown.add(pair.repository)
                    if result.repaired_lines and result.repaired_lines[-1] == pair.source.line:
                        kept.append(pair)
                    if (result.problems and not skip_invalid) or unknown:
                        continue  # the import fails at the end; read on to report every problem
                chunk.append(pair)
                if len(chunk) == IMPORT_CHUNK:
                    self._import_chunk(run, chunk)
                    chunk = []
            if chunk and not (streamed and ((result.problems and not skip_invalid) or unknown)):
                self._import_chunk(run, chunk)
            if streamed:
                result.pairs = kept
                report.read = result.read
                _refuse_invalid(result, skip_invalid)
                for name in sorted(unknown):
                    self.get_repository(name)  # raises NotFoundError with the fix; rolls back what was written
            report.skipped = list(result.problems)
            report.filtered = list(result.filtered)
            report.duplicates_in_file += result.duplicates
            to_apply = self._plan_text_updates(db, run.changed, update)
            chosen = {id(item[-1]) for item in to_apply}
            report.possible_updates = [u for *_, u in run.changed if id(u) not in chosen]
            fresh_filtered = unrecorded_filtered(db, result.format, repository, report.filtered)
            if not report.added and not to_apply and not report.repositories_added and not fresh_filtered:
                report.repository_facts = record_import_facts(db, result, repository)
                return report
            db.conn.execute(
                """UPDATE import_batches SET read_count = ?, added_count = ?, already_present_count = ?,
                   duplicate_count = ?, skipped_count = ?, skipped_json = ?, updated_count = ?,
                   possible_update_count = ?, possible_updates_json = ?, filtered_count = ?, filtered_json = ?
                   WHERE id = ?""",
                (
                    report.read, report.added, report.already_present, report.duplicates_in_file,
                    len(report.skipped), json.dumps([str(p) for p in report.skipped]), len(to_apply),
                    len(report.possible_updates),
                    json.dumps([f"{u.where}: {', '.join(u.pair_ids)}" for u in report.possible_updates]),
                    len(report.filtered), json.dumps([f.to_json() for f in report.filtered], ensure_ascii=False),
                    run.batch_id_now(),
                ),
            )
            for pair, text_key, question_key, u in to_apply:
                u.version = self._insert_text_version(
                    db, u.pair_ids[0], pair.question, pair.reference_answer, TextOrigin.IMPORTED, annotator, now,
                    text_key=text_key, question_key=question_key, batch_id=report.batch_id,
                    source=(path.name, pair.source.line, pair.source.unit),
                )
                report.updated.append(u)
            report.repository_facts = record_import_facts(db, result, repository)
        return report

    def _import_chunk(self, run: _ImportRun, chunk: list[QAPair]) -> None:
        """Sort one chunk of an import's pairs (already present, repeated in the file, possible update, new)
        against the project in SQL, and write the new ones (inside the import's transaction)."""
        db, report = run.db, run.report
        keys = [identity_keys(p.repository, p.question, p.reference_answer) for p in chunk]
        # Rows of this import have its batch id (texts: their first version; updates are written at the end);
        # before it wrote a pair there is none (-1 matches no row, NULL included).
        this = report.batch_id if report.batch_id is not None else -1
        present_ids = {r[0] for r in db.conn.execute(
            "SELECT id FROM qa_pairs WHERE id IN (SELECT value FROM json_each(?)) AND import_batch_id IS NOT ?",
            [json.dumps([p.id for p in chunk]), this])}
        texts: dict[str, bool] = {}  # identity key -> a text from before this import has it
        for key, earlier in db.conn.execute(
            """SELECT identity_key, max(import_batch_id IS NOT ?) FROM pair_texts
               WHERE identity_key IN (SELECT value FROM json_each(?)) GROUP BY identity_key""",
            [this, json.dumps([k for k, _ in keys])],
        ):
            texts[key] = bool(earlier)
        questions: dict[str, list[str]] = {}
        for key, pid in db.conn.execute(
            """SELECT DISTINCT t.question_key, t.qa_pair_id FROM pair_texts t JOIN qa_pairs p ON p.id = t.qa_pair_id
               WHERE t.question_key IN (SELECT value FROM json_each(?)) AND p.import_batch_id IS NOT ?
               ORDER BY p.ordinal""",
            [json.dumps(sorted({q for _, q in keys})), this],
        ):
            questions.setdefault(key, []).append(pid)
        new: list[tuple[QAPair, str, str]] = []
        seen: set[str] = set()
        for pair, (text_key, question_key) in zip(chunk, keys, strict=True):
            if pair.id in present_ids or texts.get(text_key):
                report.already_present += 1
            elif text_key in texts or text_key in seen or text_key in run.changed_keys:
                report.duplicates_in_file += 1
            elif question_key in questions:
                run.changed_keys.add(text_key)
                targets = questions[question_key]
                run.changed.append((pair, text_key, question_key, TextUpdate(
                    pair.source.file, pair.source.line, pair.source.unit, targets,
                    [self.ordinal_of(t) for t in targets])))
            else:
                seen.add(text_key)
                new.append((pair, text_key, question_key))
        if not new:
            return
        batch_id, name, now, start = run.batch_id_now(), run.path.name, run.now, run.next_ordinal
        report.needs_reference += [p.id for p, _, _ in new if p.needs_reference]
        report.added += len(new)
        run.next_ordinal += len(new)
        db.conn.executemany(
            f"INSERT INTO qa_pairs ({_PAIR_COLUMNS}, import_batch_id, created_at) VALUES ({', '.join('?' * 24)})",
            [(*_pair_values(p, start + i + 1, name), batch_id, now) for i, (p, _, _) in enumerate(new)],
        )
        db.conn.executemany(
            f"INSERT INTO pair_texts ({PAIR_TEXT_COLUMNS}) VALUES ({', '.join('?' * 14)})",
            [
                (p.id, 1, TextOrigin.ORIGINAL.value, p.question, p.reference_answer, text_key, question_key,
                 run.annotator, now, batch_id, name, p.source.line, p.source.unit, original_text_uid(p.id))
                for p, text_key, question_key in new
            ],
        )

    def _plan_text_updates(self, db: Database, changed: list, update: bool) -> list:
        """Fill in what the import summary says of each possible update (earlier reviews, a checklist) and,
        with ``update``, choose those to record: one pair with the question, one record of the file for it."""
        per_pair: dict[str, list[TextUpdate]] = {}
        for *_, u in changed:
            if len(u.pair_ids) == 1:
                per_pair.setdefault(u.pair_ids[0], []).append(u)
                u.reviewed_by = [r[0] for r in db.conn.execute(
                    "SELECT annotator FROM review_state WHERE qa_pair_id = ? "
                    "AND decision IN ('accept', 'reject', 'revise') ORDER BY annotator", [u.pair_ids[0]])]
                u.has_checklist = db.conn.execute(
                    "SELECT 1 FROM checklist_current WHERE qa_pair_id = ?", [u.pair_ids[0]]).fetchone() is not None
        if not update:
            return []
        chosen = []
        for item in changed:
            u = item[-1]
            if len(u.pair_ids) > 1:
                u.refused = (f"{len(u.pair_ids)} pairs have this question "
                             f"({', '.join(f'#{n}' for n in u.ordinals)}); not recorded")
            elif len(per_pair[u.pair_ids[0]]) > 1:
                lines = ", ".join(str(o.line) for o in per_pair[u.pair_ids[0]])
                u.refused = f"several records of this file ({u.unit}s {lines}) are new texts of this pair; not recorded"
            else:
                chosen.append(item)
        return chosen

    def _insert_text_version(
        self, db: Database, pair_id: str, question: str, reference_answer: str | None, origin: TextOrigin,
        by: str, at: str, *, text_key: str | None = None, question_key: str | None = None,
        batch_id: int | None = None, source: tuple[str, int | None, str] | None = None,
    ) -> int:
        """Append the next text version of ``pair_id`` (inside the caller's transaction); returns its number.
        The pair's current text follows by trigger."""
        repository = db.conn.execute("SELECT repository FROM qa_pairs WHERE id = ?", [pair_id]).fetchone()[0]
        version = db.conn.execute(
            "SELECT coalesce(max(version), 0) + 1 FROM pair_texts WHERE qa_pair_id = ?", [pair_id]).fetchone()[0]
        file, line, unit = source or (None, None, None)
        db.conn.execute(
            f"INSERT INTO pair_texts ({PAIR_TEXT_COLUMNS}) VALUES ({', '.join('?' * 14)})",
            (pair_id, version, TextOrigin(origin).value, question, reference_answer,
             text_key or pair_identity_key(repository, question, reference_answer),
             question_key or question_identity_key(repository, question), by, at, batch_id, file, line, unit,
             uuid.uuid4().hex),
        )
        return version

    @serialized
    def text_version_counts(self) -> dict[str, int]:
        """``{"pairs": pairs with more than one text version, "versions": text versions after the first,
        "imported": of those, new texts recorded by re-imports}``, for ``status``."""
        row = self._one(
            """SELECT count(DISTINCT qa_pair_id), count(*), coalesce(sum(origin = 'imported'), 0)
               FROM pair_texts WHERE version > 1""")
        return {"pairs": row[0], "versions": row[1], "imported": row[2]}

    # ------------------------------------------------------------------- pairs
    @serialized
    def get_pair(self, pair_id: str) -> QAPair:
        """The Q&A pair ``pair_id``.

        Raises:
            NotFoundError: no such pair.
        """
        row = self.db.conn.execute(f"SELECT {_PAIR_COLUMNS} FROM qa_pairs WHERE id = ?", [pair_id]).fetchone()
        if row is None:
            raise NotFoundError(f"no Q&A pair with id {pair_id}")
        return _pair_from_row(row)

    @serialized
    def resolve_pair(self, ref: str) -> str:
        """A pair id from ``ref``: an id (``qa_...``), a unique prefix of one (at least ``qa_`` and 4 more
        characters), or a queue position (``#12`` or ``12``).

        Raises:
            NotFoundError: no such pair, or a prefix that several pairs share (the message says how many).
        """
        text = ref.strip()
        if re.fullmatch(r"#?[0-9]+", text):
            row = self._one("SELECT id FROM qa_pairs WHERE ordinal = ?", [int(text.removeprefix("#"))])
            if row is None:
                raise NotFoundError(f"no Q&A pair at position {text}")
            return row[0]
        if self._one("SELECT 1 FROM qa_pairs WHERE id = ?", [text]) is not None:
            return text
        if re.fullmatch(r"qa_[0-9a-f]{4,15}", text):
            with self._lock:
                rows = self.db.conn.execute(
                    "SELECT id FROM qa_pairs WHERE id >= ? AND id < ? ORDER BY id LIMIT 3", [text, text + "g"]
                ).fetchall()
            if len(rows) == 1:
                return rows[0][0]
            if len(rows) > 1:
                raise NotFoundError(f"{text} is the start of several pair ids ({', '.join(r[0] for r in rows[:2])}, "
                                    "...); give more characters, or the position as #N")
        self.ordinal_of(text)
        return text

    @serialized
    def count_pairs(self) -> int:
        """Number of Q&A pairs in the project."""
        return self._one("SELECT count(*) FROM qa_pairs")[0]

    @serialized
    def ordinal_of(self, pair_id: str) -> int:
        """The queue position (1-based import order) of ``pair_id``; NotFoundError if absent."""
        row = self._one("SELECT ordinal FROM qa_pairs WHERE id = ?", [pair_id])
        if row is None:
            raise NotFoundError(f"no Q&A pair with id {pair_id}")
        return row[0]

    @serialized
    def facets(self) -> dict[str, list[str]]:
        """Distinct non-empty values of repository, qa_type and category, for filter choices, and ``selection``:
        the names of the selections."""
        out = {}
        for column in ("repository", "qa_type", "category"):
            out[column] = [
                r[0] for r in self.db.conn.execute(
                    f"SELECT DISTINCT {column} FROM qa_pairs WHERE {column} IS NOT NULL ORDER BY {column}"
                )
            ]
        out["selection"] = self.selection_names()
        return out

    # ---------------------------------------------------------------- queue
    @serialized
    def queue_page(
        self, annotator: str, flt: QueueFilter = QueueFilter(), *, after_ordinal: int = 0, limit: int = 200
    ) -> list[QueueRow]:
        """Up to ``limit`` queue rows after ``after_ordinal`` in queue order, filtered."""
        where, params = flt.sql(annotator)
        rows = self.db.conn.execute(
            f"""SELECT p.id, p.ordinal, p.question, p.repository, p.qa_type, p.category, p.needs_reference,
                       s.decision,
                       (SELECT group_concat(k.step, ',') FROM curation_current k
                        WHERE k.qa_pair_id = p.id AND k.flagged = 1),
                       CASE WHEN {REOPENED_SQL} THEN coalesce(p.reopened_reason, '{REOPEN_TEXT}') END,
                       {data_filters.UNRESOLVED_MEMBER_SQL}
                FROM qa_pairs p LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                WHERE p.ordinal > ? AND {where} ORDER BY p.ordinal LIMIT ?""",
            [annotator, after_ordinal, *params, limit],
        ).fetchall()
        return [QueueRow(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), None if r[9] else r[7], r[8], r[9],
                         bool(r[10])) for r in rows]

    @serialized
    def count_filtered(self, annotator: str, flt: QueueFilter) -> int:
        """Number of pairs ``flt`` lets through for ``annotator``."""
        where, params = flt.sql(annotator)
        return self._one(
            f"""SELECT count(*) FROM qa_pairs p
                LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ? WHERE {where}""",
            [annotator, *params],
        )[0]

    @serialized
    def filtered_pair_ids(self, annotator: str, flt: QueueFilter = QueueFilter()) -> list[str]:
        """Ids of the pairs ``flt`` lets through for ``annotator``, in queue order (every pair by default).

        Raises:
            BenchwrightError: an unknown status, checklist or curation filter.
        """
        where, params = flt.sql(annotator)
        return [r[0] for r in self.db.conn.execute(
            f"""SELECT p.id FROM qa_pairs p LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                WHERE {where} ORDER BY p.ordinal""", [annotator, *params])]

    def fill_category(self, pair_id: str, category: str | None) -> None:
        """Set ``pair_id``'s category to ``category`` when its source gave none (an existing category is never
        overwritten); committed at once."""
        with self.write() as db:
            db.conn.execute("UPDATE qa_pairs SET category = ? WHERE id = ? AND category IS NULL", (category, pair_id))

    @serialized
    def neighbor(self, pair_id: str, annotator: str, flt: QueueFilter = QueueFilter(), *, step: int = 1) -> str | None:
        """The id of the next (``step=1``) or previous (``step=-1``) pair in filtered queue order, or None."""
        ordinal = self.ordinal_of(pair_id)
        where, params = flt.sql(annotator)
        op, order = (">", "ASC") if step > 0 else ("<", "DESC")
        row = self._one(
            f"""SELECT p.id FROM qa_pairs p
                LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                WHERE p.ordinal {op} ? AND {where} ORDER BY p.ordinal {order} LIMIT 1""",
            [annotator, ordinal, *params],
        )
        return row[0] if row else None

    @serialized
    def first_undecided(self, annotator: str, flt: QueueFilter = QueueFilter()) -> str | None:
        """Where work resumes: the first pair ``annotator`` has not seen, else the first they skipped, else None.

        Pairs assigned to ``annotator`` come first: only when none of them is left does work resume among
        the others. The search starts at the annotator's ``review_resume`` ordinal (m028: every pair before it
        is decided), so on 100,000 pairs with 60,000 decided it reads a few rows, not 60,000; with no filter it
        moves that ordinal forward (:data:`RESUME_STEP`).
        """
        if flt.assigned_to is None and self._one("SELECT 1 FROM assignments WHERE annotator = ? LIMIT 1", [annotator]):
            mine = self.first_undecided(annotator, replace(flt, assigned_to=annotator))
            if mine is not None:
                return mine
        where, params = flt.sql(annotator)
        unseen = self._first_unseen(annotator, where, params)
        if unseen is not None and flt == QueueFilter() and unseen[1] - unseen[2] >= RESUME_STEP:
            unseen = self._advance_resume(annotator, where, params)
        if unseen is not None:
            return unseen[0]
        row = self._one(
            f"""SELECT p.id FROM qa_pairs p
                LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                WHERE s.decision = 'skip' AND {where} ORDER BY p.ordinal LIMIT 1""",
            [annotator, *params],
        )
        return row[0] if row else None

    def _first_unseen(self, annotator: str, where: str, params: list) -> tuple[str, int, int] | None:
        """(id, ordinal, the resume ordinal searched from) of the first pair ``annotator`` has no counting
        decision on among those ``where`` lets through, searching from ``review_resume`` (m028) on; None: none."""
        hint = self._one("SELECT ordinal FROM review_resume WHERE annotator = ?", [annotator])
        start = hint[0] if hint else -(2**62)
        row = self._one(
            f"""SELECT p.id, p.ordinal FROM qa_pairs p
                LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                WHERE p.ordinal >= ? AND (s.decision IS NULL OR {REOPENED_SQL}) AND {where}
                ORDER BY p.ordinal LIMIT 1""",
            [annotator, start, *params],
        )
        return (row[0], row[1], start) if row else None

    def _advance_resume(self, annotator: str, where: str, params: list) -> tuple[str, int, int] | None:
        """Search again inside one write transaction and move ``review_resume`` to the pair found, so no
        undo, import or reopen in another process can slip between the search and the write (their triggers
        run before or after both). A read-only or busy file keeps the plain search."""
        try:
            with self.write() as db:
                unseen = self._first_unseen(annotator, where, params)
                if unseen is not None:
                    db.conn.execute(
                        """INSERT INTO review_resume (annotator, ordinal) VALUES (?, ?)
                           ON CONFLICT (annotator) DO UPDATE SET ordinal = excluded.ordinal""",
                        [annotator, unseen[1]],
                    )
                return unseen
        except (StoreError, sqlite3.OperationalError):
            return self._first_unseen(annotator, where, params)

    @serialized
    def progress(self, annotator: str) -> Progress:
        """Totals for the progress line. A decision made before the pair was sent back to review (a new text
        version, stale evidence: ``qa_pairs.reopened_at``) is not counted, as the queue shows it undecided."""
        total = self.count_pairs()
        # Every decision counts, less those made before their pair was reopened: the first terms read indexes
        # only (review_state_pair_decision, review_state_annotator), the corrections visit the reopened pairs
        # only (qa_pairs_reopened), so no pair's row is read (review_state's foreign key: every row has its pair).
        # Same counts as joining qa_pairs and testing NOT coalesce(REOPENED_SQL, 0) on each decision.
        decided = self._one(f"SELECT count(DISTINCT qa_pair_id) FROM review_state WHERE decision IN {_COUNTED}")[0]
        decided -= self._one(
            f"""SELECT count(*) FROM qa_pairs p INDEXED BY qa_pairs_reopened WHERE p.reopened_at IS NOT NULL
                AND EXISTS (SELECT 1 FROM review_state s WHERE s.qa_pair_id = p.id AND s.decision IN {_COUNTED})
                AND NOT EXISTS (SELECT 1 FROM review_state s WHERE s.qa_pair_id = p.id
                                AND s.decision IN {_COUNTED} AND NOT {REOPENED_SQL})""")[0]
        mine = self._one(
            f"SELECT count(*) FROM review_state WHERE annotator = ? AND decision IN {_COUNTED}", [annotator])[0]
        mine -= self._one(
            f"""SELECT count(*) FROM qa_pairs p INDEXED BY qa_pairs_reopened WHERE p.reopened_at IS NOT NULL
                AND EXISTS (SELECT 1 FROM review_state s WHERE s.qa_pair_id = p.id AND s.annotator = ?
                            AND s.decision IN {_COUNTED} AND {REOPENED_SQL})""", [annotator])[0]
        return Progress(total, decided, mine)

    # -------------------------------------------------------------- decisions
    def record_decision(
        self, pair_id: str, annotator: str, decision: Decision | str, *, criteria: Criteria | None = None,
        notes: str | None = None, expected_state: int | str | None = "any", reason: str | None = None,
        expected_text_version: int | None = None,
    ) -> int:
        """Append ``annotator``'s decision on ``pair_id`` (with the four criteria and notes, a review);
        committed before returning. Returns the row id.

        A reject stores its ``reason`` (:func:`benchwright.core.review.decision_reason`: one of
        ``REJECT_REASONS``, by default the first failing criterion).

        ``expected_state`` is the ``review_state.decision_id`` the caller showed (None: no decision yet);
        when the state moved on meanwhile (the same annotator in another terminal), nothing is written.
        ``expected_text_version`` is the text version the caller showed: when the pair's text changed since (an
        edit or a rewrite in another session), nothing is written, so a review never counts for a text its
        annotator did not see.

        Raises:
            NotFoundError: no such pair.
            ValueError: not a known decision.
            StaleReviewError: ``expected_state`` no longer holds.
            BenchwrightError: a reason with a decision other than reject, or an unknown or contradicted reason.
        """
        decision = Decision(decision)
        try:
            reason = decision_reason(decision.value, criteria, reason)
        except ValueError as e:
            raise BenchwrightError(str(e)) from None
        with self.write() as db:
            self.ordinal_of(pair_id)
            if expected_state != "any":
                row = db.conn.execute(
                    """SELECT s.decision_id, s.decision, s.updated_at FROM review_state s
                       WHERE s.qa_pair_id = ? AND s.annotator = ?""", [pair_id, annotator]
                ).fetchone()
                if (row[0] if row else None) != expected_state:
                    what = row[1] or "undecided (an undo)" if row else "undecided"
                    raise StaleReviewError(
                        f"this pair was changed in another session meanwhile (now: {what}, at "
                        f"{row[2][11:19] if row else '?'} UTC); the screen shows it now; press the key again "
                        "to replace it"
                    )
            if expected_text_version is not None and decision is not Decision.SKIP:
                now = db.conn.execute("SELECT text_version FROM qa_pairs WHERE id = ?", [pair_id]).fetchone()[0]
                if now is not None and now != expected_text_version:
                    raise StaleReviewError(
                        f"the text of this pair changed in another session meanwhile (now: text v{now}, you saw "
                        f"v{expected_text_version}); the screen shows it now; press the key again to decide on it"
                    )
            previous = self.current_decision(pair_id, annotator)
            cur = db.conn.execute(
                """INSERT INTO review_decisions (qa_pair_id, annotator, decision, previous_decision, created_at,
                                                 criteria_json, notes, reason)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                (pair_id, annotator, decision.value, previous.value if previous else None, utc_now(),
                 criteria.to_json() if criteria else None, notes, reason),
            )
            return cur.lastrowid

    @serialized
    def state_id(self, pair_id: str, annotator: str) -> int | None:
        """The id of ``annotator``'s latest decision row on ``pair_id`` (for :meth:`record_decision`'s check)."""
        row = self._one(
            "SELECT decision_id FROM review_state WHERE qa_pair_id = ? AND annotator = ?", [pair_id, annotator]
        )
        return row[0] if row else None

    @serialized
    def current_decision(self, pair_id: str, annotator: str) -> Decision | None:
        """``annotator``'s current decision on ``pair_id``, or None."""
        row = self._one(
            "SELECT decision FROM review_state WHERE qa_pair_id = ? AND annotator = ?", [pair_id, annotator]
        )
        return Decision(row[0]) if row and row[0] else None

    def undo_last(self, annotator: str) -> str | None:
        """Undo ``annotator``'s latest decision not yet undone, by appending a row that restores the state
        before it. Works across restarts, since it reads the log. Returns the pair's id, or None if there is
        nothing to undo.
        """
        with self.write() as db:
            row = db.conn.execute(
                """SELECT d.id, d.qa_pair_id, d.previous_decision FROM review_decisions d
                   WHERE d.annotator = ? AND d.reverts_id IS NULL
                     AND NOT EXISTS (SELECT 1 FROM review_decisions u WHERE u.reverts_id = d.id)
                   ORDER BY d.created_at DESC, d.id DESC LIMIT 1""",
                [annotator],
            ).fetchone()
            if row is None:
                return None
            decision_id, pair_id, previous = row
            current = self.current_decision(pair_id, annotator)
            before = db.conn.execute(
                """SELECT criteria_json, notes, reason, created_at FROM review_decisions
                   WHERE qa_pair_id = ? AND annotator = ? AND id != ?
                     AND created_at <= (SELECT created_at FROM review_decisions WHERE id = ?)
                   ORDER BY created_at DESC, id DESC LIMIT 1""",
                [pair_id, annotator, decision_id, decision_id],
            ).fetchone()
            reopened_at = db.conn.execute("SELECT reopened_at FROM qa_pairs WHERE id = ?", [pair_id]).fetchone()[0]
            if previous and before and reopened_at and before[3] < reopened_at:
                # the decision restored judged a text (or evidence) the pair has since left: restoring it with a new
                # row's time would make it count for the current text; the earlier state is "back in review"
                previous = None
            db.conn.execute(
                """INSERT INTO review_decisions
                   (qa_pair_id, annotator, decision, previous_decision, reverts_id, created_at, criteria_json, notes,
                    reason)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (pair_id, annotator, previous, current.value if current else None, decision_id, utc_now(),
                 before[0] if before else None, before[1] if before else None,
                 before[2] if before and previous == "reject" else None),
            )
            return pair_id

    @serialized
    def decision_history(self, pair_id: str) -> list[dict]:
        """Every decision row of ``pair_id``, oldest first (id, annotator, decision, reverts_id, created_at)."""
        return list(
            self.db.query(
                "SELECT id, annotator, decision, previous_decision, reverts_id, created_at "
                "FROM review_decisions WHERE qa_pair_id = ? ORDER BY id",
                [pair_id],
            )
        )

    # ------------------------------------------------------------------ notes
    def add_note(self, pair_id: str, annotator: str, text: str, *, expected: int | object | None = ANY_NOTE) -> int:
        """Append ``annotator``'s note on ``pair_id`` (the latest note is the current one); returns its id.

        ``expected`` is the id of the note the editor started from (None: there was none), from
        :meth:`current_note_version`; the save is a compare-and-set against it, so the same annotator in two
        terminals never silently replaces the newer note. Leave it out to append unconditionally.

        Raises:
            NoteConflictError: another session saved a note on the pair since (``current`` holds it).
            NotFoundError: no such pair.
        """
        with self.write() as db:
            self.ordinal_of(pair_id)
            if expected is not ANY_NOTE:
                row = db.conn.execute(
                    "SELECT id, text FROM review_notes WHERE qa_pair_id = ? AND annotator = ? ORDER BY id DESC LIMIT 1",
                    (pair_id, annotator)).fetchone()
                if (row[0] if row else None) != expected:
                    raise NoteConflictError(row[0], row[1])
            cur = db.conn.execute(
                "INSERT INTO review_notes (qa_pair_id, annotator, text, created_at, uid) VALUES (?, ?, ?, ?, ?)",
                (pair_id, annotator, text, utc_now(), uuid.uuid4().hex),
            )
            return cur.lastrowid

    @serialized
    def current_note(self, pair_id: str, annotator: str) -> str:
        """``annotator``'s latest note on ``pair_id``, or ``""``."""
        return self.current_note_version(pair_id, annotator)[1]

    @serialized
    def current_note_version(self, pair_id: str, annotator: str) -> tuple[int | None, str]:
        """``(id, text)`` of ``annotator``'s latest note on ``pair_id``; ``(None, "")`` when there is none. The id
        is what :meth:`add_note` takes as ``expected``."""
        row = self._one(
            "SELECT id, text FROM review_notes WHERE qa_pair_id = ? AND annotator = ? ORDER BY id DESC LIMIT 1",
            [pair_id, annotator],
        )
        return (row[0], row[1]) if row else (None, "")


# ------------------------------------------------------------------- helpers
class _Checkpointer:
    """WAL checkpoints in a thread of their own while a job runs (:meth:`Store.deferring_commits`).

    SQLite checkpoints the WAL into the database file when a commit finds it over 1,000 pages: that commit then
    copies the pages and syncs both files, tens of milliseconds on a busy disk during which the job's event loop
    stands still. During a job the store's connection does not checkpoint (``wal_autocheckpoint`` 0); this thread
    runs a passive checkpoint (it never blocks a writer or a reader) on its own connection every
    :data:`INTERVAL_S`, with the interpreter lock released while SQLite works. The setting is restored at the end.
    """

    INTERVAL_S = 0.2

    def __init__(self, store: Store, previous: int):
        self.store, self.previous = store, previous
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="benchwright-checkpoint", daemon=True)

    @classmethod
    def start(cls, store: Store) -> _Checkpointer | None:
        """Take over the store's checkpoints (None when its journal is not a WAL, e.g. a database in memory)."""
        conn = store.db.conn
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            return None
        previous = conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        conn.execute("PRAGMA wal_autocheckpoint=0")
        self = cls(store, previous)
        self.thread.start()
        return self

    def _run(self) -> None:
        conn = None
        try:
            conn = sqlite3.connect(str(self.store.path), timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            while not self.done.wait(self.INTERVAL_S):
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass  # the store's own checkpoints take over again when the job ends
        finally:
            if conn is not None:
                conn.close()

    def stop(self) -> None:
        """End the thread and give the checkpoints back to the store's connection."""
        self.done.set()
        self.thread.join()
        with self.store._lock, contextlib.suppress(sqlite3.ProgrammingError):  # closed meanwhile
            self.store.db.conn.execute(f"PRAGMA wal_autocheckpoint={int(self.previous)}")


def _running_loop():
    """The asyncio event loop running in this thread, or None (also when asyncio was never imported)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _pins_agree(a: Repository, b: Repository) -> bool:
    if a.commit and b.commit:
        x, y = a.commit.lower(), b.commit.lower()  # git accepts either case; so does describe_local_repository
        return x.startswith(y) or y.startswith(x)
    if a.version_label and b.version_label:
        return a.version_label == b.version_label
    return True


def _repo_row(repo: Repository, annotator: str) -> dict:
    return {
        "name": repo.name, "url": repo.url, "commit_sha": repo.commit, "commit_verified": int(repo.commit_verified),
        "version_label": repo.version_label, "local_path": repo.local_path, "language": repo.language,
        "theme": repo.theme, "created_at": utc_now(), "created_by": annotator, **derived_columns(repo),
        "stars": repo.stars, "created_on": repo.created_on, "answered_discussions": repo.answered_discussions,
    }


def _repo_from_row(row: dict) -> Repository:
    return Repository(
        name=row["name"], url=row["url"], commit=row["commit_sha"], version_label=row["version_label"],
        local_path=row["local_path"], language=row["language"], theme=row["theme"],
        commit_verified=bool(row["commit_verified"]), **derived_fields(row),
        stars=row.get("stars"), created_on=row.get("created_on"), answered_discussions=row.get("answered_discussions"),
    )


IMPORT_CHUNK = 1000
"""Pairs an import sorts and writes at a time (one ``executemany`` per table)."""


def _refuse_invalid(result: ParseResult, skip_invalid: bool) -> None:
    """Raise the import's InputFileError: problems (without ``skip_invalid``), or no record read."""
    if result.problems and not skip_invalid:
        raise InputFileError(result.problems, total=result.problem_count)
    if result.read == 0:
        raise InputFileError.single(result.file, "contains no records")


IMPORT_CACHE_KIB = 65536
"""SQLite page cache of an import's connection while it runs (KiB): the indexes the import writes in key (hash)
order stay in memory instead of being written out and read back page by page."""


@contextmanager
def _import_cache(db: Database) -> Iterator[None]:
    before = db.conn.execute("PRAGMA cache_size").fetchone()[0]
    db.conn.execute(f"PRAGMA cache_size = -{IMPORT_CACHE_KIB}")
    try:
        yield
    finally:
        db.conn.execute(f"PRAGMA cache_size = {int(before)}")


@dataclass
class _ImportRun:
    """The state of one :meth:`Store.apply_import` across its chunks."""

    db: Database
    report: ImportReport
    path: Path
    digest: str
    now: str
    annotator: str
    repository: str | None
    options: dict | None
    format: str
    next_ordinal: int
    changed: list = field(default_factory=list)
    """``(pair, text key, question key, TextUpdate)`` of the possible updates, in file order."""
    changed_keys: set[str] = field(default_factory=set)

    def batch_id_now(self) -> int:
        """The import batch row, written (its counts are filled in at the end) the first time it is asked for."""
        if self.report.batch_id is None:
            path = self.path
            self.report.batch_id = self.db.conn.execute(
                """INSERT INTO import_batches (format, file_name, file_path, file_sha256, repository, options_json,
                   read_count, added_count, already_present_count, duplicate_count, skipped_count, created_at,
                   created_by) VALUES (?, ?, ?, ?, ?, ?, 0, 0, 0, 0, 0, ?, ?)""",
                (self.format, path.name, str(path.resolve()), self.digest, self.repository,
                 json.dumps(self.options or {}, sort_keys=True), self.now, self.annotator),
            ).lastrowid
        return self.report.batch_id


def _pair_values(p: QAPair, ordinal: int, file_name: str) -> tuple:
    return (
        p.id, ordinal, p.repository, p.question, p.reference_answer, int(p.needs_reference), p.category,
        p.qa_type, p.qa_subtype, p.cluster_id, p.cluster_name, p.language, p.theme, p.task_set,
        p.source.format, file_name, p.source.line, p.source.unit, p.source.upstream_id,
        json.dumps(p.extra, ensure_ascii=False, default=str), p.split,
        "imported" if p.cluster_id is not None or p.cluster_name is not None else None,
    )


def _pair_from_row(r: tuple) -> QAPair:
    return QAPair.model_construct(
        id=r[0], repository=r[2], question=r[3], reference_answer=r[4], category=r[6], qa_type=r[7],
        qa_subtype=r[8], cluster_id=r[9], cluster_name=r[10], language=r[11], theme=r[12], task_set=r[13],
        source=SourceRef(format=r[14], file=r[15], line=r[16], unit=r[17], upstream_id=r[18]),
        extra=json.loads(r[19]), split=r[20],
    )
