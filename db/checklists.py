"""Checklist versions in the store: append-only, compare-and-set on save, restore as a new version."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from benchwright.core.blind import HiddenInBlindMode, Visible, visible
from benchwright.core.canonical import canonical_json
from benchwright.core.checklist import Checklist, Origin, validate
from benchwright.core.checklist_diff import diff_checklists, render_diff_text
from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.core.models import question_identity_key, utc_now

from .locking import serialized
from .textguard import storable_as_is

CHECKLIST_FILTERS = ("no-checklist", "invalid-checklist", "draft-checklist", "valid-checklist", "stale-checklist")
"""Queue filters on the current checklist of a pair (``stale-checklist``: made from an older text of the pair,
:func:`benchwright.core.models.checklist_stale`)."""


CHECKLIST_IMPORT_CHUNK = 1000
"""Checklists :meth:`ChecklistStoreMixin.import_checklist_records` matches and writes at a time."""


@dataclass
class ChecklistImportReport:
    """What :meth:`ChecklistStoreMixin.import_checklist_records` stored.

    Attributes:
        saved: ``(pair_id, version)`` of every stored checklist, in file order.
        drafts: how many were stored as drafts (rule violations, or ``"draft": true`` in the file).
        repaired: how many held lone surrogates, stored as U+FFFD.
        formats: checklists per source format (``benchwright``, ``rubberduck``, ``checkeval``).
        unchanged: records skipped because the checklist is identical (canonical JSON of its items, weights,
            rubrics, everything it holds) to the pair's current version, in the same draft state: importing a file again adds nothing.
    """

    saved: list[tuple[str, int]] = field(default_factory=list)
    drafts: int = 0
    repaired: int = 0
    formats: dict[str, int] = field(default_factory=dict)
    unchanged: int = 0


class ChecklistConflictError(BenchwrightError):
    """Someone saved a newer version of the checklist since the editor loaded it (compare-and-set failed)."""


class InvalidChecklistError(BenchwrightError):
    """A non-draft save of a checklist that breaks the rules; ``violations`` lists them."""

    def __init__(self, violations):
        self.violations = violations
        super().__init__(
            "the checklist breaks the rules, so it can only be kept as a draft:\n"
            + "\n".join(f"  {v}" for v in violations)
        )


@dataclass(frozen=True)
class ChecklistVersion:
    """One stored version of a pair's checklist."""

    qa_pair_id: str
    version: int
    origin: str
    is_draft: bool
    is_valid: bool
    author: str
    created_at: str
    parent_version: int | None
    restored_from: int | None
    source_format: str | None
    checklist: Checklist
    violations: list[str]
    text_version: int | None = None
    """The pair's text version current when this version was saved (the text it was made from, m019)."""


class ChecklistStoreMixin:
    """Checklist methods of :class:`benchwright.db.Store` (needs ``self.db``, ``self.write``, ``self.ordinal_of``)."""

    @serialized
    def save_checklist(
        self, pair_id: str, checklist: Checklist, *, author: str, origin: Origin | str = Origin.EDITED,
        expected_version: int | str | None = "any", draft: bool = False, restored_from: int | None = None,
        source_format: str | None = None, visible_to: str | None = None, text_version: int | None = None,
        checked: bool = False,
    ) -> ChecklistVersion:
        """Append a new version of ``pair_id``'s checklist; returns it.

        Args:
            expected_version: the version the edit started from (None: there was none). When the current
                version differs, someone else saved meanwhile and nothing is written. ``"any"`` skips the
                check (imports).
            draft: keep a checklist that breaks the rules, marked as a draft (never released).
            text_version: the pair's text version the checklist was written from (the editor's, when it was
                opened); default: the current one. A text saved meanwhile elsewhere thus leaves it stale.
            checked: the caller has just checked ``checklist`` with :func:`validate` and it broke no rule (the
                generation step, whose output must pass the rules to succeed): it is stored as valid without
                checking it again.

        Raises:
            InvalidChecklistError: not a draft and :func:`validate` finds violations.
            ChecklistConflictError: the compare-and-set on ``expected_version`` failed.
            NotFoundError: no such pair.
        """
        origin = Origin(origin)
        violations = [] if checked else validate(checklist)
        if violations and not draft:
            raise InvalidChecklistError(violations)
        with self.write() as db:
            pair_row = db.conn.execute("SELECT text_version FROM qa_pairs WHERE id = ?", [pair_id]).fetchone()
            if pair_row is None:
                raise NotFoundError(f"no Q&A pair with id {pair_id}")
            row = db.conn.execute(
                "SELECT version FROM checklist_current WHERE qa_pair_id = ?", [pair_id]
            ).fetchone()
            latest = row[0] if row else None
            # In blind mode an annotator edits their own line: only their own and non-annotator versions count.
            current = self.visible_checklist_version(pair_id, visible_to) if visible_to else latest
            if expected_version != "any" and expected_version != current:
                changed = ""
                if current is not None:
                    newer = self.checklist_version(pair_id, current)
                    try:
                        base = self.checklist_version(pair_id, expected_version) if expected_version else None
                    except NotFoundError:
                        base = None
                    if base is not None:
                        changed = "\nwhat changed:\n" + render_diff_text(
                            diff_checklists(base.checklist, newer.checklist))
                    changed = f" by {newer.author} at {newer.created_at[11:19]} UTC" + changed
                raise ChecklistConflictError(
                    f"the checklist of this pair is now at version {current}, saved{changed}\n"
                    f"after you opened {f'version {expected_version}' if expected_version else 'it (no checklist then)'}; "
                    "nothing was overwritten. Reload it (leave and "
                    "press c again) and apply your edit again"
                )
            version = (latest or 0) + 1
            if text_version is None:
                text_version = pair_row[0]  # the pair's current text (read under this write lock)
            created_at, items_json = utc_now(), checklist.to_json()
            messages = [str(v) for v in violations]
            violations_json = json.dumps(messages)
            db.conn.execute(
                """INSERT INTO checklist_versions (qa_pair_id, version, origin, is_draft, is_valid, author,
                   created_at, parent_version, restored_from, source_format, items_json, violations_json, uid,
                   text_version)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    pair_id, version, origin.value, int(draft), int(not violations), author, created_at, current,
                    restored_from, source_format, items_json, violations_json, uuid.uuid4().hex, text_version,
                ),
            )
        if not storable_as_is(pair_id, author, source_format, items_json, violations_json, *messages):
            return self.checklist_version(pair_id, version)  # stored with U+FFFD for a lone surrogate: as stored
        # What was stored, without reading it back (the online path saves one per pair).
        return ChecklistVersion(
            qa_pair_id=pair_id, version=version, origin=origin.value, is_draft=bool(draft),
            is_valid=not violations, author=author, created_at=created_at, parent_version=current,
            restored_from=restored_from, source_format=source_format,
            checklist=Checklist.model_validate_json(items_json), violations=messages, text_version=text_version,
        )

    @serialized
    def checklist_version(self, pair_id: str, version: int | None = None) -> ChecklistVersion | None:
        """Version ``version`` of the pair's checklist (None: the current one); None if there is none.

        Raises:
            NotFoundError: ``version`` was given and does not exist.
        """
        if version is None:
            row = self.db.conn.execute(
                "SELECT version FROM checklist_current WHERE qa_pair_id = ?", [pair_id]
            ).fetchone()
            if row is None:
                return None
            version = row[0]
        rows = list(self.db.query(
            "SELECT * FROM checklist_versions WHERE qa_pair_id = ? AND version = ?", [pair_id, version]
        ))
        if not rows:
            raise NotFoundError(f"pair {pair_id} has no checklist version {version}")
        return _version(rows[0])

    @serialized
    def checklist_version_for(self, pair_id: str, viewer: str, version: int | None = None) -> ChecklistVersion | None:
        """Version ``version`` of the pair's checklist as ``viewer`` may see it (None: the latest they may see);
        None when the pair has no checklist.

        Raises:
            HiddenInBlindMode: blind mode holds that version (or every version) back from ``viewer``.
            NotFoundError: ``version`` was given and does not exist.
        """
        seen = self.visible_checklist_versions(pair_id, viewer)
        if version is None:
            if not seen and seen.hidden:
                raise HiddenInBlindMode(pair_id)
            return self.checklist_version(pair_id, seen[-1]) if seen else None
        found = self.checklist_version(pair_id, version)
        if version not in seen:
            raise HiddenInBlindMode(pair_id, version)
        return found

    @serialized
    def checklist_history(self, pair_id: str, *, viewer: str | None = None) -> Visible:
        """Every version of the pair's checklist, oldest first; with ``viewer``, only those blind mode lets
        them see (``hidden``: how many it holds back; :meth:`benchwright.core.blind.Sight.may_see_checklist`)."""
        versions = [_version(r) for r in self.db.query(
            "SELECT * FROM checklist_versions WHERE qa_pair_id = ? ORDER BY version", [pair_id])]
        if viewer is None:
            return Visible(versions)
        sight = self.sight(pair_id, viewer)
        return visible(versions, lambda v: sight.may_see_checklist(v.author, v.origin))

    @serialized
    def first_version_of_origin(self, pair_id: str, origin: str = "generated") -> ChecklistVersion | None:
        """The earliest version with ``origin`` (default: the generated one), or None."""
        row = self.db.conn.execute(
            "SELECT version FROM checklist_versions WHERE qa_pair_id = ? AND origin = ? ORDER BY version LIMIT 1",
            [pair_id, origin],
        ).fetchone()
        return self.checklist_version(pair_id, row[0]) if row else None

    @serialized
    def restore_checklist(self, pair_id: str, version: int, *, author: str,
                          expected_version: int | str | None = "any") -> ChecklistVersion:
        """Append a copy of ``version`` as the new current version (origin ``edited``, ``restored_from`` set).

        A restored draft stays a draft. Raises like :meth:`save_checklist`, and HiddenInBlindMode when blind mode
        holds ``version`` back from ``author`` (restoring it would show them another annotator's own work).
        """
        old = self.checklist_version(pair_id, version)
        if version not in self.visible_checklist_versions(pair_id, author):
            raise HiddenInBlindMode(pair_id, version)
        return self.save_checklist(
            pair_id, old.checklist, author=author, origin=Origin.EDITED, expected_version=expected_version,
            draft=old.is_draft or not old.is_valid, restored_from=version,
        )

    @serialized
    def import_checklists(
        self, entries: list[tuple], *, author: str
    ) -> list[tuple[str, int]]:
        """Store imported checklists in one transaction (all or nothing), origin ``imported``.

        ``entries`` are ``(pair_id, checklist, source_format)``, ``(..., draft)`` or ``(..., draft, repaired)``.
        A checklist that breaks the rules is stored as a draft with its violations; ``draft=True`` keeps a valid one
        a draft too. ``repaired`` (where the text came from, e.g. ``import FILE line N``) flags the version in
        ``text_repairs``: its text held lone surrogates, stored as U+FFFD. Returns ``[(pair_id, version)]`` in
        input order.
        """
        out: list[tuple[str, int]] = []
        with self.write():
            for entry in entries:
                pair_id, checklist, source_format = entry[:3]
                keep_draft = bool(entry[3]) if len(entry) > 3 else False
                saved = self.save_checklist(
                    pair_id, checklist, author=author, origin=Origin.IMPORTED,
                    draft=keep_draft or bool(validate(checklist)), source_format=source_format,
                )
                out.append((pair_id, saved.version))
                if len(entry) > 4 and entry[4]:
                    self.flag_text_repair("checklist_versions", self.checklist_rowid(pair_id, saved.version),
                                          "items_json", str(entry[4]))
        return out

    @serialized
    def import_checklist_records(
        self, records: Iterable, *, author: str, file: str,
        progress: Callable[[int], None] | None = None,
        on_saved: Callable[[object, str, int], None] | None = None,
    ) -> ChecklistImportReport:
        """Store the checklists read from ``file`` (:class:`benchwright.core.importers.checklists.ChecklistRecord`,
        e.g. :func:`~benchwright.core.importers.checklists.stream_checklists`) in one transaction, origin
        ``imported``: all or nothing.

        Each record names its pair by ``pair_ref`` (an exact pair id) or by ``question`` (exactly one pair whose
        question is this text, white space at the ends ignored, as :meth:`find_pairs_by_question`). Records are
        matched and written :data:`CHECKLIST_IMPORT_CHUNK` at a time with a few SQL lookups per chunk (pair ids,
        candidate questions through the indexed ``pair_texts.question_key``, current versions) and one
        ``executemany``, so ``records`` is read once and memory stays flat (issue 19). A checklist that breaks
        the rules (``record.violations``) or says ``draft`` is stored as a draft; a repaired text is flagged in
        ``text_repairs``. ``progress(done)`` is called after each chunk; ``on_saved(record, pair_id, version)``
        after each record is written (inside the transaction: an error later still rolls it back). Idempotent: a
        record whose checklist is identical (canonical JSON; draft state too) to its pair's current version, stored or earlier in
        the file, writes nothing and is counted in ``report.unchanged``.

        Raises:
            BenchwrightError: a record names no pair, an unknown pair id, or a question no pair or several pairs
                have (``FILE, line N: ...; nothing was imported``); everything written before is rolled back.
            InputFileError: from iterating ``records`` (a bad line), likewise rolled back.
        """
        report = ChecklistImportReport()
        with self.write() as db:
            repositories = [r[0] or "" for r in db.conn.execute("SELECT DISTINCT repository FROM qa_pairs")]
            latest: dict[str, tuple[int, tuple[str, bool] | None]] = {}
            chunk: list = []
            for record in records:
                chunk.append(record)
                if len(chunk) == CHECKLIST_IMPORT_CHUNK:
                    self._import_checklist_chunk(db, chunk, author, file, repositories, latest, report, on_saved)
                    chunk = []
                    if progress:
                        progress(len(report.saved))
            if chunk:
                self._import_checklist_chunk(db, chunk, author, file, repositories, latest, report, on_saved)
            if progress:
                progress(len(report.saved))
        return report

    def _import_checklist_chunk(self, db, chunk: list, author: str, file: str, repositories: list[str],
                                latest: dict[str, tuple[int, tuple[str, bool] | None]], report: ChecklistImportReport,
                                on_saved) -> None:
        """Match one chunk of checklist records to pairs in SQL and insert them (see
        :meth:`import_checklist_records`); ``latest`` is ``{pair_id: (current version, (its canonical JSON, is draft))}``."""
        def where(r) -> str:
            return f"{file}, line {r.line}" if r.line else file

        text_versions = dict(db.conn.execute(
            "SELECT id, text_version FROM qa_pairs WHERE id IN (SELECT value FROM json_each(?))",
            [json.dumps(sorted({r.pair_ref for r in chunk if r.pair_ref}))]))
        by_question = self._pairs_by_questions(
            db, {r.question.strip() for r in chunk if not r.pair_ref and r.question and r.question.strip()},
            repositories, text_versions)
        targets: list[str] = []
        for r in chunk:
            if r.pair_ref:
                if r.pair_ref not in text_versions:
                    raise BenchwrightError(f"{where(r)}: no Q&A pair with id {r.pair_ref}; nothing was imported")
                targets.append(r.pair_ref)
            elif r.question:
                found = by_question.get(r.question.strip(), [])
                if len(found) != 1:
                    what = "no pair has" if not found else f"{len(found)} pairs have"
                    raise BenchwrightError(f"{where(r)}: {what} exactly this question; give qa_pair_id instead; "
                                           "nothing was imported")
                targets.append(found[0])
            else:
                raise BenchwrightError(f"{where(r)}: the checklist names no pair; add qa_pair_id, or pass --pair ID")
        fresh = sorted(set(targets) - set(latest))
        latest.update(dict.fromkeys(fresh, (0, None)))
        latest.update((pid, (version, (canonical_json(json.loads(items)), bool(draft))))
                      for pid, version, items, draft in db.conn.execute(
            """SELECT c.qa_pair_id, c.version, v.items_json, v.is_draft FROM checklist_current c JOIN checklist_versions v
               ON v.qa_pair_id = c.qa_pair_id AND v.version = c.version
               WHERE c.qa_pair_id IN (SELECT value FROM json_each(?))""", [json.dumps(fresh)]))
        now, rows, saved, stored = utc_now(), [], [], []
        for r, pid in zip(chunk, targets, strict=True):
            items_json = r.checklist.to_json()
            draft = bool(r.draft or r.violations)
            key = (canonical_json(json.loads(items_json)), draft)
            if latest[pid][1] == key:
                report.unchanged += 1
                continue
            parent = latest[pid][0] or None
            version = (parent or 0) + 1
            latest[pid] = (version, key)
            rows.append((pid, version, Origin.IMPORTED.value, int(draft), int(not r.violations), author, now, parent,
                         None, r.source_format, items_json, json.dumps([str(v) for v in r.violations]),
                         uuid.uuid4().hex, text_versions[pid]))
            saved.append((pid, version))
            stored.append(r)
            report.drafts += draft
            report.formats[r.source_format] = report.formats.get(r.source_format, 0) + 1
        db.conn.executemany(
            """INSERT INTO checklist_versions (qa_pair_id, version, origin, is_draft, is_valid, author, created_at,
               parent_version, restored_from, source_format, items_json, violations_json, uid, text_version)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", rows)
        for r, (pid, version) in zip(stored, saved, strict=True):
            if r.text_repaired:
                report.repaired += 1
                self.flag_text_repair("checklist_versions", self.checklist_rowid(pid, version), "items_json",
                                      f"import {file.rsplit('/', 1)[-1]} line {r.line or 1}")
            if on_saved:
                on_saved(r, pid, version)
        report.saved += saved

    @staticmethod
    def _pairs_by_questions(db, wanted: set[str], repositories: list[str],
                            text_versions: dict[str, int]) -> dict[str, list[str]]:
        """``{question: [pair ids in queue order]}`` of the pairs whose question is exactly ``question`` (ends
        stripped): candidates through the indexed question keys of every repository, then compared as text.
        Fills ``text_versions`` for the pairs found."""
        if not wanted:
            return {}
        keys = {question_identity_key(repo, q): q for q in wanted for repo in repositories}
        out: dict[str, list[str]] = {}
        for pid, question, text_version in db.conn.execute(
            """SELECT id, question, text_version FROM qa_pairs WHERE id IN (
                 SELECT qa_pair_id FROM pair_texts WHERE question_key IN (SELECT value FROM json_each(?)))
               ORDER BY ordinal""", [json.dumps(list(keys))]):
            text = question.strip()
            if text in wanted:
                out.setdefault(text, []).append(pid)
                text_versions[pid] = text_version
        return out

    @serialized
    def find_pairs_by_question(self, question: str) -> list[str]:
        """Ids of pairs whose question is exactly ``question`` (white space at the ends of both ignored,
        as in pair ids: SQL's trim() would strip spaces only, not a trailing newline or tab)."""
        wanted = question.strip()
        if not wanted:
            return []
        return [pid for pid, text in self.db.conn.execute(
            "SELECT id, question FROM qa_pairs WHERE instr(question, ?) > 0 ORDER BY ordinal", [wanted]
        ) if text.strip() == wanted]

    @serialized
    def current_checklists(self) -> list[tuple[str, ChecklistVersion]]:
        """``(pair_id, current version)`` for every pair that has a checklist, in queue order."""
        rows = self.db.query(
            """SELECT v.* FROM checklist_current c JOIN checklist_versions v ON v.id = c.version_id
               JOIN qa_pairs p ON p.id = c.qa_pair_id ORDER BY p.ordinal"""
        )
        return [(r["qa_pair_id"], _version(r)) for r in rows]

    @serialized
    def current_checklist_origins(self) -> dict[str, str]:
        """``{pair_id: origin}`` of every pair's current checklist (pairs without one are absent)."""
        return dict(self.db.conn.execute("SELECT qa_pair_id, origin FROM checklist_current").fetchall())


def _version(r: dict) -> ChecklistVersion:
    return ChecklistVersion(
        qa_pair_id=r["qa_pair_id"], version=r["version"], origin=r["origin"], is_draft=bool(r["is_draft"]),
        is_valid=bool(r["is_valid"]), author=r["author"], created_at=r["created_at"],
        parent_version=r["parent_version"], restored_from=r["restored_from"], source_format=r["source_format"],
        checklist=Checklist.model_validate_json(r["items_json"]), violations=json.loads(r["violations_json"]),
        text_version=r.get("text_version"),
    )
