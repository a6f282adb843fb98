"""Checklist versions in the store: append-only, compare-and-set on save, restore as a new version."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from benchwright.core.blind import HiddenInBlindMode, Visible, visible
from benchwright.core.checklist import Checklist, Origin, validate
from benchwright.core.checklist_diff import diff_checklists, render_diff_text
from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.core.models import utc_now

from .locking import serialized
from .textguard import storable_as_is

CHECKLIST_FILTERS = ("no-checklist", "invalid-checklist", "draft-checklist", "valid-checklist", "stale-checklist")
"""Queue filters on the current checklist of a pair (``stale-checklist``: made from an older text of the pair,
:func:`benchwright.core.models.checklist_stale`)."""


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
    ) -> ChecklistVersion:
        """Append a new version of ``pair_id``'s checklist; returns it.

        Args:
            expected_version: the version the edit started from (None: there was none). When the current
                version differs, someone else saved meanwhile and nothing is written. ``"any"`` skips the
                check (imports).
            draft: keep a checklist that breaks the rules, marked as a draft (never released).
            text_version: the pair's text version the checklist was written from (the editor's, when it was
                opened); default: the current one. A text saved meanwhile elsewhere thus leaves it stale.

        Raises:
            InvalidChecklistError: not a draft and :func:`validate` finds violations.
            ChecklistConflictError: the compare-and-set on ``expected_version`` failed.
            NotFoundError: no such pair.
        """
        origin = Origin(origin)
        violations = validate(checklist)
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
