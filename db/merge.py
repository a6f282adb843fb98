"""Merging another copy of a project (an annotator who worked offline) into this one.

Rows of the append-only tables carry a ``uid``; a row whose uid is already here is skipped, so merging the
same copy twice adds nothing. Reviews keep their times, so ``review_state`` follows whichever review is
newer. A checklist version whose number is taken here by different content is appended under the next free
number and reported as a conflict; two annotators' differing edits then appear in the adjudication queue.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from benchwright.core.errors import StoreError

from .human_judgments import merge_human_judgments
from .migrations import MIGRATION_SET


@dataclass
class MergeReport:
    """What a merge brought in (counts per table) and what it could not place."""

    added: dict[str, int] = field(default_factory=dict)
    skipped_present: dict[str, int] = field(default_factory=dict)
    unknown_pairs: int = 0
    conflicts: list[str] = field(default_factory=list)


_TABLES = ("review_decisions", "review_notes", "checklist_versions", "adjudications", "text_acceptances")


def merge_project(store, other_path: str | Path) -> MergeReport:
    """Bring ``other_path``'s reviews, notes, pair text versions, checklist versions, adjudications and human
    judgments (:func:`benchwright.db.human_judgments.merge_human_judgments`) into
    ``store`` (one transaction; events are written by the store's triggers).

    Raises:
        StoreError: the other file is missing or not a benchwright project.
    """
    from .store import Store

    other = Path(other_path)
    if not other.is_file():
        raise StoreError(f"{other}: no such project file")
    # Upgrade a copy, never the other file itself.
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "other.db"
        try:
            _backup(other, copy)
            _check_is_project(copy)
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{other}: not a benchwright project ({e})") from None
        except _NotAProject as e:
            raise StoreError(f"{other}: not a benchwright project ({e}); nothing was merged") from None
        try:
            theirs = Store.open(copy, create=False)
        except StoreError as e:
            raise StoreError(f"{other}: cannot read it as a benchwright project ({e})") from None
        with theirs:
            return _merge(store, theirs.db.conn)


class _NotAProject(Exception):
    pass


def _uri(path: Path) -> str:
    """A read-only SQLite URI for ``path`` (``?`` and ``#`` in a file name would otherwise end the path)."""
    return f"{path.resolve().as_uri()}?mode=ro"


def _backup(src: Path, dest: Path) -> None:
    """Copy the database ``src`` to ``dest`` through SQLite's backup API (``src`` is opened read-only)."""
    s = sqlite3.connect(_uri(src), uri=True)
    try:
        d = sqlite3.connect(dest)
        try:
            s.backup(d)
        finally:
            d.close()
    finally:
        s.close()


def _check_is_project(path: Path) -> None:
    """Raise _NotAProject unless ``path`` is a SQLite file holding benchwright's schema (any version)."""
    conn = sqlite3.connect(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "_sqlite_migrations" not in tables or "qa_pairs" not in tables:
            raise _NotAProject("it has no benchwright tables")
        applied = conn.execute(
            "SELECT count(*) FROM _sqlite_migrations WHERE migration_set = ?", [MIGRATION_SET]
        ).fetchone()[0]
        if not applied:
            raise _NotAProject("it has no benchwright migrations")
    finally:
        conn.close()


def _merge(store, theirs: sqlite3.Connection) -> MergeReport:
    report = MergeReport()
    theirs.row_factory = sqlite3.Row
    with store.write() as db:
        conn = db.conn
        pairs = {r[0] for r in conn.execute("SELECT id FROM qa_pairs")}
        known = {t: {r[0] for r in conn.execute(f"SELECT uid FROM {t}")} for t in _TABLES}
        # decisions first, mapping their ids for reverts_id
        id_map: dict[int, int] = {}
        local_by_uid = {r[0]: r[1] for r in conn.execute("SELECT uid, id FROM review_decisions")}
        for r in theirs.execute("SELECT * FROM review_decisions ORDER BY id"):
            if r["uid"] in known["review_decisions"]:
                id_map[r["id"]] = local_by_uid[r["uid"]]
                report.skipped_present["review_decisions"] = report.skipped_present.get("review_decisions", 0) + 1
                continue
            if r["qa_pair_id"] not in pairs:
                report.unknown_pairs += 1
                continue
            cur = conn.execute(
                """INSERT INTO review_decisions (qa_pair_id, annotator, decision, previous_decision, reverts_id,
                   created_at, criteria_json, notes, uid, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (r["qa_pair_id"], r["annotator"], r["decision"], r["previous_decision"],
                 id_map.get(r["reverts_id"]) if r["reverts_id"] else None, r["created_at"], r["criteria_json"],
                 r["notes"], r["uid"], r["reason"]),
            )
            id_map[r["id"]] = cur.lastrowid
            report.added["review_decisions"] = report.added.get("review_decisions", 0) + 1
        for r in theirs.execute("SELECT * FROM review_notes ORDER BY id"):
            if r["uid"] in known["review_notes"] or r["qa_pair_id"] not in pairs:
                report.unknown_pairs += r["qa_pair_id"] not in pairs
                continue
            conn.execute(
                "INSERT INTO review_notes (qa_pair_id, annotator, text, created_at, uid) VALUES (?, ?, ?, ?, ?)",
                (r["qa_pair_id"], r["annotator"], r["text"], r["created_at"], r["uid"]),
            )
            report.added["review_notes"] = report.added.get("review_notes", 0) + 1
        text_map = _merge_text_versions(conn, theirs, pairs, report)
        # Checklist versions. Their numbers may be taken here; a version is then appended under the next free
        # number, so their numbers are mapped: (pair, their version) -> version here, for parent_version,
        # restored_from and adjudications.checklist_version.
        local_uid_version = {
            r[0]: (r[1], r[2]) for r in conn.execute("SELECT uid, qa_pair_id, version FROM checklist_versions")
        }
        before = {(r[0], r[1]): r[2] for r in conn.execute(
            "SELECT qa_pair_id, version, items_json FROM checklist_versions")}
        version_map: dict[tuple[str, int], int] = {}
        for r in theirs.execute("SELECT * FROM checklist_versions ORDER BY qa_pair_id, version"):
            pid = r["qa_pair_id"]
            if r["uid"] in known["checklist_versions"]:
                version_map[(pid, r["version"])] = local_uid_version[r["uid"]][1]
                report.skipped_present["checklist_versions"] = report.skipped_present.get("checklist_versions", 0) + 1
                continue
            if pid not in pairs:
                report.unknown_pairs += 1
                continue
            taken = conn.execute(
                "SELECT 1 FROM checklist_versions WHERE qa_pair_id = ? AND version = ?", (pid, r["version"])
            ).fetchone()
            version = r["version"]
            if taken is not None:
                version = conn.execute(
                    "SELECT max(version) + 1 FROM checklist_versions WHERE qa_pair_id = ?", (pid,)
                ).fetchone()[0]
                # A conflict is a number that was taken here before this merge by different content; their
                # later versions that only move along with it are not reported again.
                ours = before.get((pid, r["version"]))
                if ours is not None and ours != r["items_json"]:
                    report.conflicts.append(
                        f"{pid}: their checklist version {r['version']} by {r['author']} differs from "
                        f"version {r['version']} here; added as version {version}"
                    )
            version_map[(pid, r["version"])] = version

            def mapped(v, pid=pid):
                return version_map.get((pid, v), v) if v is not None else None

            conn.execute(
                """INSERT INTO checklist_versions (qa_pair_id, version, origin, is_draft, is_valid, author, created_at,
                   parent_version, restored_from, source_format, items_json, violations_json, uid, text_version)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (pid, version, r["origin"], r["is_draft"], r["is_valid"], r["author"], r["created_at"],
                 mapped(r["parent_version"]), mapped(r["restored_from"]), r["source_format"], r["items_json"],
                 r["violations_json"], r["uid"],
                 text_map.get((pid, r["text_version"]), r["text_version"]) if r["text_version"] else None),
            )
            report.added["checklist_versions"] = report.added.get("checklist_versions", 0) + 1
        for r in theirs.execute("SELECT * FROM adjudications ORDER BY id"):
            if r["uid"] in known["adjudications"]:
                report.skipped_present["adjudications"] = report.skipped_present.get("adjudications", 0) + 1
                continue
            if r["qa_pair_id"] not in pairs:
                report.unknown_pairs += 1
                continue
            v = r["checklist_version"]
            conn.execute(
                """INSERT INTO adjudications (qa_pair_id, adjudicator, decision, reason, checklist_version, created_at, uid)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (r["qa_pair_id"], r["adjudicator"], r["decision"], r["reason"],
                 version_map.get((r["qa_pair_id"], v), v) if v is not None else None, r["created_at"], r["uid"]),
            )
            report.added["adjudications"] = report.added.get("adjudications", 0) + 1
        _merge_text_acceptances(conn, theirs, pairs, known["text_acceptances"], text_map, report)
        merge_human_judgments(conn, theirs, version_map, report)
    return report


def _merge_text_acceptances(conn: sqlite3.Connection, theirs: sqlite3.Connection, pairs: set[str], known: set[str],
                            text_map: dict[tuple[str, int], int], report: MergeReport) -> None:
    """Their acceptances of rewrites (``text_acceptances``, append-only) not here by uid, with the text version
    numbered as merged (``text_map``: their (pair, version) -> version here)."""
    for r in theirs.execute("SELECT * FROM text_acceptances ORDER BY id"):
        if r["uid"] in known:
            report.skipped_present["text_acceptances"] = report.skipped_present.get("text_acceptances", 0) + 1
            continue
        if r["qa_pair_id"] not in pairs:
            report.unknown_pairs += 1
            continue
        conn.execute(
            "INSERT INTO text_acceptances (qa_pair_id, version, annotator, created_at, uid) VALUES (?, ?, ?, ?, ?)",
            (r["qa_pair_id"], text_map.get((r["qa_pair_id"], r["version"]), r["version"]), r["annotator"],
             r["created_at"], r["uid"]))
        report.added["text_acceptances"] = report.added.get("text_acceptances", 0) + 1


def _merge_text_versions(conn: sqlite3.Connection, theirs: sqlite3.Connection, pairs: set[str],
                         report: MergeReport) -> dict[tuple[str, int], int]:
    """Their text versions of pairs (``pair_texts``; version 1 is the same everywhere) that are not here, appended
    after ours in their order, so the last one merged becomes the current text; when both copies added texts
    to one pair, that is reported as a conflict naming the current one. Returns their (pair, version) -> the
    version here, for what refers to a text version (checklists' ``text_version``, acceptances)."""
    known = {r[0] for r in conn.execute("SELECT uid FROM pair_texts")}
    ours_added = {r[0] for r in conn.execute("SELECT DISTINCT qa_pair_id FROM pair_texts WHERE version > 1")}
    version_map: dict[tuple[str, int], int] = {}
    columns = [c[1] for c in conn.execute("PRAGMA table_info(pair_texts)") if c[1] != "id"]
    for r in theirs.execute("SELECT * FROM pair_texts ORDER BY qa_pair_id, version"):
        pid = r["qa_pair_id"]
        if r["version"] == 1 and r["uid"] not in known:
            continue  # the original text comes with its pair, which a merge does not bring
        if r["uid"] in known:
            local = conn.execute("SELECT version FROM pair_texts WHERE uid = ?", [r["uid"]]).fetchone()[0]
            version_map[(pid, r["version"])] = local
            report.skipped_present["pair_texts"] = report.skipped_present.get("pair_texts", 0) + 1
            continue
        if pid not in pairs:
            report.unknown_pairs += 1
            continue
        version = conn.execute("SELECT max(version) + 1 FROM pair_texts WHERE qa_pair_id = ?", [pid]).fetchone()[0]
        version_map[(pid, r["version"])] = version
        row = dict(r)
        row["version"] = version
        row["import_batch_id"] = None  # their import batch is not merged (source_file and line stay)
        if row.get("restored_from") is not None:
            row["restored_from"] = version_map.get((pid, row["restored_from"]), row["restored_from"])
        present = [c for c in columns if c in row]
        conn.execute(f"INSERT INTO pair_texts ({', '.join(present)}) VALUES ({', '.join('?' * len(present))})",
                     [row[c] for c in present])
        report.added["pair_texts"] = report.added.get("pair_texts", 0) + 1
        if pid in ours_added:
            report.conflicts.append(f"{pid}: both copies recorded new texts; their version {r['version']} by "
                                    f"{r['created_by'] or 'unknown'} is added as version {version}, the current "
                                    "text (see history; an earlier version can be restored)")
    return version_map


def copy_project(src: str | Path, dest: str | Path) -> None:
    """Copy a project file consistently (SQLite backup), e.g. for an annotator going offline.

    Raises:
        StoreError: ``dest`` exists, ``src`` is missing or not a benchwright project (no copy is left).
    """
    src, dest = Path(src), Path(dest)
    if dest.exists():
        raise StoreError(f"{dest}: already exists; choose another name")
    if not src.is_file():
        raise StoreError(f"{src}: no such project file")
    try:
        _backup(src, dest)
        _check_is_project(dest)
    except (sqlite3.DatabaseError, _NotAProject) as e:
        for leftover in (dest, Path(f"{dest}-wal"), Path(f"{dest}-shm")):
            leftover.unlink(missing_ok=True)
        raise StoreError(f"{src}: not a benchwright project ({e}); nothing was copied") from None
    shutil.copymode(src, dest)
