"""Repository eligibility facts in the store (RepoProbe §3.2 "Repository Selection"): the m019 columns
``repositories.stars`` / ``created_on`` / ``answered_discussions``, set by the user (``repos add|set``) or by a
GitHub Discussions import, and the records imports filtered out (``import_batches.filtered_json``).

The rule itself is in :mod:`benchwright.core.eligibility`.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from benchwright.core.eligibility import RepositoryFacts
from benchwright.core.errors import FilteredRecord


class RepositoryFactsMixin:
    """Store methods for the eligibility facts (mixed into :class:`benchwright.db.store.Store`)."""

    def set_repository_facts(self, name: str, facts: RepositoryFacts) -> RepositoryFacts:
        """Set the facts of ``facts`` that are not None on repository ``name`` (the others stay as they are).

        Returns:
            The repository's facts as stored after the change.

        Raises:
            NotFoundError: ``name`` is not registered.
        """
        with self.write() as db:
            self.get_repository(name)
            updates = _fact_columns(facts)
            if updates:
                db["repositories"].update(name, updates)
        return self.get_repository(name).facts


def _fact_columns(facts: RepositoryFacts) -> dict[str, Any]:
    return {k: v for k, v in (("stars", facts.stars), ("created_on", facts.created_on),
                              ("answered_discussions", facts.answered_discussions)) if v is not None}


def unrecorded_filtered(db: Database, fmt: str, repository: str | None,
                        filtered: list[FilteredRecord]) -> list[FilteredRecord]:
    """The records of ``filtered`` whose upstream id no earlier import batch of ``fmt`` for ``repository``
    recorded as filtered: re-importing a file adds no batch for records already listed."""
    if not filtered:
        return []
    recorded = {r[0] for r in db.conn.execute(
        """SELECT json_extract(j.value, '$.upstream_id') FROM import_batches b, json_each(b.filtered_json) j
           WHERE b.format = ? AND coalesce(b.repository, '') = coalesce(?, '') AND b.filtered_count > 0""",
        [fmt, repository])}
    return [f for f in filtered if f.upstream_id not in recorded]


def record_import_facts(db: Database, result: Any, repository: str | None) -> RepositoryFacts | None:
    """Write the eligibility facts an import found (inside the import's transaction) and return the
    repository's facts after it; None when the import has none to give.

    ``result`` is a :class:`~benchwright.core.importers.ParseResult`. The export's ``stargazerCount``,
    ``createdAt`` and answered-discussions total replace the stored ones (the export is the newer
    observation). Without a total (``result.answered_counted``), the answered discussions are counted: the
    distinct threads with an accepted answer among every import of ``result.format`` for the repository (its
    pairs and the answered records it filtered out), this one included; the count replaces a smaller stored
    number only (it is a lower bound: an export may hold only some pages).
    """
    facts: RepositoryFacts | None = result.repository_facts
    if repository is None or (not result.answered_counted and (facts is None or not facts.any())):
        return None
    updates = _fact_columns(facts) if facts is not None else {}
    if result.answered_counted and "answered_discussions" not in updates:
        ids = {p.source.upstream_id for p in result.pairs if p.source.upstream_id}
        ids |= {f.upstream_id for f in result.filtered if f.answered}
        ids |= {r[0] for r in db.conn.execute(
            """SELECT source_upstream_id FROM qa_pairs WHERE repository = ? AND source_format = ?
               AND source_upstream_id IS NOT NULL
               UNION SELECT json_extract(j.value, '$.upstream_id') FROM import_batches b, json_each(b.filtered_json) j
               WHERE b.repository = ? AND b.format = ? AND json_extract(j.value, '$.answered') = 1""",
            [repository, result.format, repository, result.format])}
        stored = db.conn.execute("SELECT answered_discussions FROM repositories WHERE name = ?",
                                 [repository]).fetchone()
        if stored is not None and (stored[0] is None or len(ids) > stored[0]):
            updates["answered_discussions"] = len(ids)
    if updates:
        db["repositories"].update(repository, updates)
    row = db.conn.execute("SELECT stars, created_on, answered_discussions FROM repositories WHERE name = ?",
                          [repository]).fetchone()
    return None if row is None else RepositoryFacts(*row)

