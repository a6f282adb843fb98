"""Issue texts in the store (``issues``, m020): GitHub issues imported as taxonomy seeds (SWE-QA-Pro §2.1).

The parsing and the §2.1 length rule are in :mod:`benchwright.core.importers.github_issues`; this module writes
an import in one transaction (with its ``import_batches`` row, format ``github-issues``) and reads issues back.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from benchwright.core.errors import InputFileError
from benchwright.core.importers.github_issues import FORMAT, Issue, IssueImportReport, IssueParseResult
from benchwright.core.models import utc_now

from .eligibility import unrecorded_filtered
from .locking import serialized

_COLUMNS = ("id, repository, number, title, body, labels_json, url, state, text, text_bytes, import_batch_id, "
            "source_file, source_line, created_at, created_by")


class IssueStoreMixin:
    """Store methods for issue texts (mixed into :class:`benchwright.db.store.Store`)."""

    @serialized
    def issue_texts(self, repository: str | None = None) -> list[tuple[str, str]]:
        """``[(issue id, text)]`` of the imported issues (of ``repository`` only, when given), in import order.
        ``text`` is title, a blank line, body (what is embedded and clustered, §2.1)."""
        sql = "SELECT id, text FROM issues"
        params: list = []
        if repository is not None:
            sql += " WHERE repository = ?"
            params.append(repository)
        return [(r[0], r[1]) for r in self.db.conn.execute(sql + " ORDER BY rowid", params)]

    @serialized
    def issues(self, repository: str | None = None, limit: int | None = None) -> list[Issue]:
        """The imported issues (of ``repository`` only, when given), in import order; at most ``limit``."""
        sql = f"SELECT {_COLUMNS} FROM issues"
        params: list = []
        if repository is not None:
            sql += " WHERE repository = ?"
            params.append(repository)
        sql += " ORDER BY rowid"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_issue(r) for r in self.db.conn.execute(sql, params)]

    @serialized
    def issue_counts(self) -> dict[str, int]:
        """``{repository: issues imported}``."""
        return dict(self.db.conn.execute("SELECT repository, count(*) FROM issues GROUP BY repository ORDER BY 1"))

    def import_issues(self, result: IssueParseResult, *, annotator: str, file_path: str | Path,
                      repository: str) -> IssueImportReport:
        """Write the issues of ``result`` (parsed for the registered ``repository``) in one transaction.

        An issue already in the project (same id: repository and number, or its text when it has no number) is
        counted, not written again, so importing the same file twice adds nothing; one whose stored text differs
        is kept as stored and counted as ``changed``. An ``import_batches`` row (format ``github-issues``) records
        an import that added issues or listed filtered texts not listed before.

        Raises:
            InputFileError: ``result`` has problems (nothing is written) or read no record.
            NotFoundError: ``repository`` is not registered.
        """
        if result.problems:
            raise InputFileError(result.problems)
        if result.read == 0:
            raise InputFileError.single(result.file, "contains no records")
        self.get_repository(repository)  # raises NotFoundError with the remedy
        report = IssueImportReport(file=result.file, read=result.read, filtered=list(result.filtered),
                                   duplicates_in_file=result.duplicates)
        path = Path(file_path)
        with path.open("rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        now = utc_now()
        with self.write() as db:
            stored: dict[str, str] = {}
            ids = [i.id for i in result.issues]
            for start in range(0, len(ids), 900):
                chunk = ids[start:start + 900]
                stored.update(db.conn.execute(
                    f"SELECT id, text FROM issues WHERE id IN ({', '.join('?' * len(chunk))})", chunk).fetchall())
            new = []
            for issue in result.issues:
                if issue.id in stored:
                    report.already_present += 1
                    if stored[issue.id] != issue.text:
                        report.changed.append(issue.number if issue.number is not None else issue.id)
                else:
                    new.append(issue)
            report.added = len(new)
            fresh = unrecorded_filtered(db, FORMAT, repository, report.filtered)
            if not new and not fresh:
                return report
            cursor = db.conn.execute(
                """INSERT INTO import_batches (format, file_name, file_path, file_sha256, repository, options_json,
                   read_count, added_count, already_present_count, duplicate_count, skipped_count, skipped_json,
                   created_at, created_by, filtered_count, filtered_json)
                   VALUES (?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, 0, '[]', ?, ?, ?, ?)""",
                (FORMAT, path.name, str(path.resolve()), digest, repository, report.read, report.added,
                 report.already_present, report.duplicates_in_file, now, annotator, len(report.filtered),
                 json.dumps([f.to_json() for f in report.filtered], ensure_ascii=False)))
            report.batch_id = cursor.lastrowid
            db.conn.executemany(
                f"INSERT INTO issues ({_COLUMNS}) VALUES ({', '.join('?' * 15)})",
                ((i.id, repository, i.number, i.title, i.body, json.dumps(list(i.labels), ensure_ascii=False),
                  i.url, i.state, i.text, i.text_bytes, report.batch_id, path.name, i.source_line, now, annotator)
                 for i in new))
        return report


def _issue(r: tuple) -> Issue:
    labels = json.loads(r[5] or "[]")
    return Issue(id=r[0], repository=r[1], number=r[2], title=r[3], body=r[4],
                 labels=tuple(str(x) for x in labels) if isinstance(labels, list) else (), url=r[6], state=r[7],
                 text=r[8], text_bytes=r[9], source_file=r[11], source_line=r[12], import_batch_id=r[10],
                 created_at=r[13], created_by=r[14])
