"""GitHub issues importer: issue texts as taxonomy seeds (SWE-QA-Pro §2.1).

SWE-QA-Pro clusters the texts of a repository's GitHub issues into a taxonomy; an issue's text is its title and
body, kept when it is at least :data:`~benchwright.core.vocabulary.ISSUE_TEXT_MIN_BYTES` (10) and at most
:data:`~benchwright.core.vocabulary.ISSUE_TEXT_MAX_BYTES` (16 KB = 16384) bytes of UTF-8. benchwright never
fetches issues; it reads a file the user exported, in any of these layouts:

- JSON lines, one issue a line (``{number, title, body, labels, url | html_url, state}``);
- GitHub's REST list (``gh api repos/OWNER/REPO/issues --paginate``): a JSON array of issues, or several arrays
  one after another (what ``--paginate`` prints); items with a ``pull_request`` key are pull requests (the REST
  list returns both) and are left out with that reason;
- GraphQL pages (``gh api graphql --paginate``): ``{"data": {"repository": {"issues": {"nodes": [...]}}}}`` (or
  ``edges: [{node}]``; the ``repository`` / ``issues`` wrappers may be left out), one page, an array of pages,
  pages one after another, or one page a line.

Fields read: ``number`` (a whole number, or digits), ``title`` (required), ``body``, ``labels`` (strings,
``{name}`` objects, or a GraphQL connection of them), ``html_url`` (else ``url``), ``state`` (lower-cased). The
text is ``title + "\\n\\n" + body`` (each stripped; the title alone when there is no body). Texts outside the byte
bounds are left out and listed (``IssueParseResult.filtered``, with the reason, number and url), as are pull
requests; an invalid record is a problem naming the file, line (or page and item) and field. An issue twice in
the file (same number, or same text when it has none) is read once.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FilteredRecord, InputProblem
from ..text import repair_value
from ..vocabulary import ISSUE_TEXT_MAX_BYTES, ISSUE_TEXT_MIN_BYTES
from .base import ParseResult, json_type, read_text
from .github_discussions import _records as export_records

FORMAT = "github-issues"
"""``import_batches.format`` of an issues import."""

PULL_REQUEST = "pull request"
"""Reason a REST list item with a ``pull_request`` key is left out."""

_MAX_NUMBER = 2**63 - 1
"""The largest issue number SQLite's INTEGER holds (a larger one was an OverflowError at the insert)."""


@dataclass(frozen=True)
class Issue:
    """One issue text (a row of ``issues``).

    Attributes:
        id: ``iss_`` + 16 hex digits (:func:`issue_id`).
        repository: the registered repository it belongs to.
        number: the issue number upstream, or None.
        title, body: as exported (``body`` None when empty).
        labels: label names.
        url: the issue's web page (``html_url``, else ``url``), or None.
        state: ``open`` / ``closed`` (lower case), or None.
        text: title, a blank line, body: what is embedded and clustered.
        text_bytes: UTF-8 length of ``text``.
        source_file, source_line: where it was read (line, or page of a JSON document).
        import_batch_id, created_at, created_by: set once stored.
    """

    id: str
    repository: str
    number: int | None
    title: str
    body: str | None
    labels: tuple[str, ...]
    url: str | None
    state: str | None
    text: str
    text_bytes: int
    source_file: str | None = None
    source_line: int | None = None
    import_batch_id: int | None = None
    created_at: str | None = None
    created_by: str | None = None


@dataclass
class IssueParseResult:
    """What :func:`parse_github_issues` read: ``read`` records, the issues kept (file order), every record left
    out by rule (:class:`~benchwright.core.errors.FilteredRecord`: too short, too long, pull request), every
    invalid record, and how many records repeated an earlier one."""

    file: str
    read: int = 0
    issues: list[Issue] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    filtered: list[FilteredRecord] = field(default_factory=list)
    duplicates: int = 0


@dataclass
class IssueImportReport:
    """What ``issues import`` did: records read, issues added, issues already in the project (``changed``: the
    numbers, or ids, of those whose text differs from the stored one, which is kept), duplicates in the file,
    the texts left out (each with its reason), and the import batch (None when nothing new was recorded)."""

    file: str
    read: int = 0
    added: int = 0
    already_present: int = 0
    duplicates_in_file: int = 0
    filtered: list[FilteredRecord] = field(default_factory=list)
    changed: list[int | str] = field(default_factory=list)
    batch_id: int | None = None


def issue_id(repository: str, number: int | None, text: str) -> str:
    """``iss_`` + 16 hex digits of SHA-256 over the repository and the issue number, or over the repository and
    the text when there is no number (so re-importing an issue finds it)."""
    key = f"{repository}\x00#{number}" if number is not None else f"{repository}\x00text\x00{text}"
    return "iss_" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def issue_text(title: str, body: str | None) -> str:
    """SWE-QA-Pro §2.1's issue text: the title, a blank line and the body (each stripped; the title alone when
    the body is empty)."""
    title, body = title.strip(), (body or "").strip()
    return f"{title}\n\n{body}" if body and title else title or body


def length_reason(text: str) -> str | None:
    """Why ``text`` is left out by §2.1's length rule (``too short: 9 bytes < 10``, ``too long: ...``), or None
    when ISSUE_TEXT_MIN_BYTES <= its UTF-8 length <= ISSUE_TEXT_MAX_BYTES."""
    n = len(text.encode("utf-8", "surrogatepass"))
    if n < ISSUE_TEXT_MIN_BYTES:
        return f"too short: {n} bytes < {ISSUE_TEXT_MIN_BYTES}"
    if n > ISSUE_TEXT_MAX_BYTES:
        return f"too long: {n} bytes > {ISSUE_TEXT_MAX_BYTES}"
    return None


def parse_github_issues(path: Path, display: str, repository: str) -> IssueParseResult:
    """Read an issues export (the layouts of the module docstring) for ``repository``.

    Args:
        path: the file; ``display`` is how messages name it.
        repository: the registered repository the issues belong to.

    Returns:
        The issues kept, the records left out with their reasons, every invalid record (file, line or page and
        item, field) and the duplicate count. Nothing is written.

    Raises:
        InputFileError: the file is missing, empty, not UTF-8, or not JSON at all.
    """
    result = IssueParseResult(display)
    text = read_text(path, display)
    reader = _Reader(result, display, repository)
    counter = ParseResult(FORMAT, display)  # json_lines counts the lines it reads here
    for unit, number, obj in export_records(text, display, counter):
        reader.record(unit, number, obj)
    result.problems[:0] = counter.problems  # lines that are not JSON objects
    result.read += len(counter.problems)
    return result


class _Reader:
    """Turns lines, REST arrays and GraphQL pages into issues, filtered records and problems."""

    def __init__(self, result: IssueParseResult, display: str, repository: str):
        self.result, self.display, self.repository = result, display, repository
        self.seen: set[str] = set()

    def problem(self, unit: str, number: int, item: int | None, fld: str | None, message: str) -> None:
        if item is not None:
            fld = f"[{item}]" + (f".{fld}" if fld else "")
        self.result.problems.append(InputProblem(self.display, number, fld, message, unit))

    def record(self, unit: str, number: int, obj: Any) -> None:
        """One line or one JSON document: an issue, an array of issues (REST), or a page (GraphQL)."""
        if isinstance(obj, list):
            for i, item in enumerate(obj, start=1):
                self.node(unit, number, i, item)
            return
        if isinstance(obj, dict) and not any(k in obj for k in ("data", "repository", "issues", "nodes", "edges",
                                                                "errors")):
            self.node("item" if unit == "page" else unit, number, None, obj)
            return
        if not isinstance(obj, dict):
            self.result.read += 1
            self.problem(unit, number, None, None, f"expected an issue, an array of issues or a GraphQL page, "
                                                   f"found {json_type(obj)}")
            return
        self.page(unit, number, obj)

    def page(self, unit: str, number: int, doc: dict) -> None:
        path = ""
        for key in ("data", "repository", "issues"):
            if key in doc or (key == "data" and "errors" in doc and "title" not in doc):
                if key == "data" and doc.get(key) is None and isinstance(doc.get("errors"), list):
                    self.result.read += 1
                    first = doc["errors"][0] if doc["errors"] else None
                    msg = first.get("message") if isinstance(first, dict) else first
                    self.problem(unit, number, None, "errors", "the GraphQL response holds errors and no data: "
                                 + repair_value(str(msg)[:200])[0])
                    return
                doc, path = doc.get(key), f"{path}.{key}" if path else key
                if not isinstance(doc, dict):
                    self.result.read += 1
                    self.problem(unit, number, None, path, f"must be an object, found {json_type(doc)}")
                    return
        nodes = _connection_nodes(doc)
        if not isinstance(nodes, list):
            self.result.read += 1
            where = f"{path}.nodes" if path else "nodes"
            self.problem(unit, number, None, where,
                         "required field is missing (a page is {\"data\": {\"repository\": {\"issues\": {\"nodes\": "
                         "[...]}}}}, or put one issue a line)" if nodes is None
                         else f"must be an array, found {json_type(nodes)}")
            return
        for i, node in enumerate(nodes, start=1):
            self.node(unit, number, i, node)

    def node(self, unit: str, number: int, item: int | None, node: Any) -> None:
        """One issue: kept, filtered, a duplicate, or a problem."""
        result = self.result
        result.read += 1
        if not isinstance(node, dict):
            self.problem(unit, number, item, None, f"expected an issue object, found {json_type(node)}")
            return
        node = repair_value(node)[0]
        bad = len(result.problems)
        num = self.number(unit, number, item, node.get("number"))
        title = self.string(unit, number, item, node, "title", required=True)
        body = self.string(unit, number, item, node, "body")
        url = self.string(unit, number, item, node, "html_url") or self.string(unit, number, item, node, "url")
        state = self.string(unit, number, item, node, "state")
        labels = self.labels(unit, number, item, node.get("labels"))
        if len(result.problems) > bad or title is None:
            return
        text = issue_text(title, body)
        iid = issue_id(self.repository, num, text)
        upstream = url or (str(num) if num is not None else iid)
        reason = PULL_REQUEST if "pull_request" in node else length_reason(text)
        if reason is not None:
            result.filtered.append(FilteredRecord(self.display, number, unit, item, upstream, url,
                                                  reason if num is None else f"{reason} (#{num})"))
            return
        if iid in self.seen:
            result.duplicates += 1
            return
        self.seen.add(iid)
        result.issues.append(Issue(
            id=iid, repository=self.repository, number=num, title=title.strip(), body=(body or "").strip() or None,
            labels=labels, url=url, state=state.lower() if state else None, text=text,
            text_bytes=len(text.encode("utf-8")), source_file=self.display, source_line=number))

    def number(self, unit: str, line: int, item: int | None, value: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, str) and re.fullmatch(r"[0-9]+", value.strip().lstrip("#")):
            value = int(value.strip().lstrip("#"))  # ASCII digits only: "²".isdigit() is True, int("²") fails
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_NUMBER:
            found = "a number over 2**63 - 1" if isinstance(value, int) and value > _MAX_NUMBER else json_type(value)
            self.problem(unit, line, item, "number", f"must be a whole number >= 0, found {found}")
            return None
        return value

    def string(self, unit: str, line: int, item: int | None, node: dict, key: str, *,
               required: bool = False) -> str | None:
        value = node.get(key)
        if value is None:
            if required:
                self.problem(unit, line, item, key, "required field is missing")
            return None
        if not isinstance(value, str):
            self.problem(unit, line, item, key, f"must be a string, found {json_type(value)}")
            return None
        return value

    def labels(self, unit: str, line: int, item: int | None, value: Any) -> tuple[str, ...]:
        """Label names from strings, ``{name}`` objects, or a GraphQL connection (``nodes`` / ``edges``)."""
        if value is None:
            return ()
        if isinstance(value, dict):
            nodes = _connection_nodes(value)
            value = value if nodes is None else nodes
        if not isinstance(value, list):
            self.problem(unit, line, item, "labels", f"must be an array, found {json_type(value)}")
            return ()
        names: list[str] = []
        for i, lab in enumerate(value, start=1):
            name = lab.get("name") if isinstance(lab, dict) else lab
            if not isinstance(name, str):
                self.problem(unit, line, item, f"labels[{i}]",
                             f"must be a string or an object with a string name, found {json_type(lab)}")
                return ()
            if name.strip() and name.strip() not in names:
                names.append(name.strip())
        return tuple(names)


def _connection_nodes(conn: dict) -> Any:
    """A GraphQL connection's items: its ``nodes``, else the ``node`` of each of its ``edges`` (None when it has
    neither; whatever ``nodes`` holds otherwise, for the caller to check)."""
    nodes = conn.get("nodes")
    if nodes is None and isinstance(conn.get("edges"), list):
        nodes = [e.get("node") if isinstance(e, dict) else e for e in conn["edges"]]
    return nodes
