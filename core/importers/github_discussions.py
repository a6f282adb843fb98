"""GitHub Discussions importer: answered discussions as Q&A pairs (RepoProbe §3.2 "Data Collection").

RepoProbe's items are answered GitHub Discussions: the thread's title and body are the question, its accepted
answer the reference answer. benchwright never fetches them; it reads what the user exported with GitHub's
GraphQL API (``gh api graphql --paginate ...``), in any of these layouts:

- a JSON document per page, ``{"data": {"repository": {"discussions": {"nodes": [...], "pageInfo": {...}}}}}``
  (the bare ``{"repository": ...}`` and ``{"discussions": ...}`` wrappers and the connection ``{"nodes": [...]}``
  itself too): one document in the file, a JSON array of documents, documents one after another (what
  ``gh api --paginate`` prints), or one document a line;
- one discussion node a line (JSON lines), or a JSON array of nodes (``item N``).

Node fields read: ``number``, ``url``, ``title``, ``body``, ``createdAt``, ``isAnswered``, ``answer {body,
author {login}, authorAssociation}``, ``answerChosenAt``, ``answerChosenBy {login}``, ``category {name}``. The
question is ``title + "\\n\\n" + body``; the reference answer is ``answer.body``; the upstream id is the url (else the
number); the rest is kept in ``extra``. Left out by rule and listed with the reason (``ParseResult.filtered``,
not problems): unanswered threads, answered ones with no accepted answer body, categories outside
``categories`` (default ``Q&A, Help``, without regard to case; ``*`` takes every category), and threads whose
question or answer relies on an image (:func:`benchwright.core.images.pair_image_reason`). A thread on two pages
(the same url or number) is read once; the later copy counts as a duplicate.

Repository facts (RepoProbe §3.2 "Repository Selection") read from the ``repository`` node when present:
``stargazerCount``, ``createdAt`` and ``answeredDiscussions {totalCount}`` (a GraphQL alias of
``discussions(answered: true)``); without the total, the store counts the answered threads it imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..eligibility import RepositoryFacts, parse_created_on
from ..errors import FilteredRecord, InputFileError, InputProblem
from ..images import pair_image_reason
from ..text import repair_value
from .base import ParseResult, build_pair, json_lines, json_type, read_text

FORMAT = "github-discussions"
DEFAULT_CATEGORIES = ("Q&A", "Help")
"""RepoProbe §3.2 keeps question-like categories; GitHub's default Q&A category and the common ``Help``."""
ANY_CATEGORY = "*"
"""``--categories '*'``: every category is imported."""

UNANSWERED = "unanswered"
NO_ACCEPTED_ANSWER = "no accepted answer"

_MAX_COUNT = 2**63 - 1
"""The largest count (stars, answered discussions) SQLite's INTEGER holds; a larger one is a problem."""


def parse_categories(text: str | None) -> tuple[str, ...]:
    """``"Q&A, Help"`` -> ``("Q&A", "Help")``; None gives :data:`DEFAULT_CATEGORIES`.

    Raises:
        ValueError: no category named.
    """
    if text is None:
        return DEFAULT_CATEGORIES
    names = tuple(dict.fromkeys(c.strip() for c in text.split(",") if c.strip()))
    if not names:
        raise ValueError("--categories names no category (e.g. --categories 'Q&A,Help', or '*' for every one)")
    return names


def parse_github_discussions(
    path: Path, display: str, repository: str | None, categories: tuple[str, ...] = DEFAULT_CATEGORIES
) -> ParseResult:
    """Read a GitHub Discussions GraphQL export (see the module docstring for the layouts).

    Args:
        path: the file; ``display`` is how messages name it.
        repository: the registered repository the discussions belong to (required).
        categories: the discussion categories imported (case-insensitive; ``("*",)`` for every one).

    Returns:
        Pairs of the answered threads kept, every filtered thread with its reason, every invalid record (file,
        page or line, field), the duplicate count and the repository facts found.

    Raises:
        InputFileError: the file is missing, empty, not UTF-8, not JSON at all, or ``repository`` is None.
    """
    if repository is None:
        raise InputFileError.single(display, "github-discussions needs --repo NAME: the repository the discussions "
                                             "are about (register it first with benchwright repos add)")
    result = ParseResult(FORMAT, display, answered_counted=True, repaired_pairs=set())
    text = read_text(path, display)
    reader = _Reader(result, display, repository, categories)
    for unit, number, obj in _records(text, display, result):
        reader.record(unit, number, obj)
    result.repository_facts = reader.facts()
    if reader.next_cursor is not None:
        result.notes.append(
            f"the last page says there are more (pageInfo.hasNextPage is true, endCursor {reader.next_cursor!r}): "
            "the export stops before the last page; fetch the rest with after: that cursor (gh api graphql "
            "--paginate fetches every page)")
    return result


def _records(text: str, display: str, result: ParseResult) -> Iterator[tuple[str, int, Any]]:
    """``(unit, number, object)`` for each page (``page``, 1-based) or line (``line``) of the export.

    A file whose first non-blank line is a JSON object, or most of whose first lines are (the first one broken),
    is JSON lines (each line a node or a page document); otherwise it is one JSON document, an array of them,
    or documents one after another.
    """
    sample = [ln for ln in text.split("\n", 60)[:60] if ln.strip()]
    parsed = [_is_object(ln) for ln in sample]
    if parsed[0] or (len(sample) > 1 and sum(parsed) * 2 >= len(sample)):
        lines = not sample[0].lstrip().startswith("[")
    else:
        lines = False
    if lines:
        for number, obj in json_lines(text, display, result, repair=False):
            yield "line", number, obj
        return
    pages = _documents(text, display)
    if len(pages) == 1 and isinstance(pages[0], list):
        pages = pages[0]
    # Lone surrogates are repaired node by node (Reader.node), so only the threads that held one are flagged.
    for number, doc in enumerate(pages, start=1):
        yield "page", number, doc


def _is_object(line: str) -> bool:
    """Whether ``line`` alone is a JSON object (a line of JSON lines, not a line of a pretty-printed document)."""
    line = line.strip()
    if not (line.startswith("{") and line.endswith("}")):
        return False
    try:
        return isinstance(json.loads(line), dict)
    except (json.JSONDecodeError, RecursionError):
        return False


def _documents(text: str, display: str) -> list[Any]:
    """Every JSON value of ``text``, in order; an invalid one is a whole-file error naming its line and column
    (nothing after it can be read)."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n\ufeff":
            pos += 1
        if pos >= end:
            return out
        try:
            value, pos_after = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise InputFileError.single(
                display, f"invalid JSON: {e.msg} (column {e.colno}); the file must be a GraphQL export: JSON "
                         "documents of discussion pages, or one discussion node a line", e.lineno) from None
        except RecursionError:
            raise InputFileError.single(display, "invalid JSON: nested too deeply",
                                        text.count("\n", 0, pos) + 1) from None
        out.append(value)
        pos = pos_after


class _Reader:
    """Turns pages and nodes into pairs, filtered records and problems, and gathers the repository facts."""

    def __init__(self, result: ParseResult, display: str, repository: str, categories: tuple[str, ...]):
        self.result, self.display, self.repository = result, display, repository
        self.any_category = ANY_CATEGORY in categories
        self.categories = categories
        self.wanted = {c.casefold() for c in categories}
        self.seen: set[str] = set()
        self.stars: int | None = None
        self.created_on: str | None = None
        self.answered_total: int | None = None
        self.next_cursor: str | None = None
        """The last page's ``endCursor`` when its ``pageInfo.hasNextPage`` is true (the export is incomplete)."""

    def problem(self, unit: str, number: int, field: str | None, message: str) -> None:
        self.result.problems.append(InputProblem(self.display, number, field, message, unit))

    def facts(self) -> RepositoryFacts:
        return RepositoryFacts(self.stars, self.created_on, self.answered_total)

    # -------------------------------------------------------------------------------------------- layouts
    def record(self, unit: str, number: int, obj: Any) -> None:
        """One line (a node or a page document) or one document (a page, or a node of a JSON array of nodes:
        ``item N``); a page's nodes are its records."""
        if isinstance(obj, dict) and not _is_page(obj):
            if unit == "page":
                unit = "item"
                self.result.read += 1
            self.node(unit, number, None, obj, "")
            return
        if unit == "line":
            self.result.read -= 1  # json_lines counted the line; its nodes are counted one by one
        if not isinstance(obj, dict):
            self.result.read += 1
            self.problem(unit, number, None, f"expected a JSON object (a discussions page), found {json_type(obj)}")
            return
        self.page(unit, number, obj)

    def page(self, unit: str, number: int, doc: dict) -> None:
        path = ""
        if "data" in doc and "repository" not in doc and "discussions" not in doc:
            if isinstance(doc.get("errors"), list) and doc["data"] is None:
                self.result.read += 1
                self.problem(unit, number, "errors", "the GraphQL response holds errors and no data: "
                             f"{_first_error(doc['errors'])}")
                return
            doc, path = doc["data"], "data"
            if not isinstance(doc, dict):
                self.result.read += 1
                self.problem(unit, number, path, f"must be an object, found {json_type(doc)}")
                return
        if "repository" in doc:
            doc, path = doc["repository"], _join(path, "repository")
            if not isinstance(doc, dict):
                self.result.read += 1
                self.problem(unit, number, path, f"must be an object, found {json_type(doc)}")
                return
            self.repository_facts(unit, number, doc, path)
        if "discussions" in doc:
            conn, path = doc["discussions"], _join(path, "discussions")
        elif "nodes" in doc or "edges" in doc:
            conn = doc  # the connection itself: {"nodes": [...], "pageInfo": {...}}
        else:
            self.result.read += 1
            self.problem(unit, number, _join(path, "discussions"),
                         "required field is missing (a page is {\"data\": {\"repository\": {\"discussions\": "
                         "{\"nodes\": [...]}}}}, or put one discussion node a line)")
            return
        if not isinstance(conn, dict):
            self.result.read += 1
            self.problem(unit, number, path, f"must be an object, found {json_type(conn)}")
            return
        nodes = conn.get("nodes")
        if nodes is None and isinstance(conn.get("edges"), list):
            nodes = [e.get("node") if isinstance(e, dict) else e for e in conn["edges"]]
        if not isinstance(nodes, list):
            self.result.read += 1
            self.problem(unit, number, _join(path, "nodes"),
                         "required field is missing" if nodes is None else f"must be an array, found {json_type(nodes)}")
            return
        info = conn.get("pageInfo")
        if isinstance(info, dict) and isinstance(info.get("hasNextPage"), bool):
            cursor = repair_value(str(info.get("endCursor") or "")[:200])[0]
            self.next_cursor = cursor if info["hasNextPage"] else None
        for i, node in enumerate(nodes, start=1):
            self.node(unit, number, i, node, f"{_join(path, 'nodes')}[{i}].")

    def repository_facts(self, unit: str, number: int, repo: dict, path: str) -> None:
        stars = repo.get("stargazerCount")
        if stars is not None:
            if isinstance(stars, bool) or not isinstance(stars, int) or not 0 <= stars <= _MAX_COUNT:
                self.problem(unit, number, _join(path, "stargazerCount"),
                             f"must be a whole number >= 0, found {json_type(stars)} {stars!r}"[:200])
            else:
                self.stars = stars
        created = repair_value(repo.get("createdAt"))[0]
        if created is not None:
            try:
                self.created_on = parse_created_on(created) if isinstance(created, str) else None
                if not isinstance(created, str):
                    raise ValueError(f"must be a string, found {json_type(created)}")
            except ValueError as e:
                self.problem(unit, number, _join(path, "createdAt"), str(e)[:200])
        answered = repo.get("answeredDiscussions")
        if answered is not None:
            total = answered.get("totalCount") if isinstance(answered, dict) else answered
            if isinstance(total, bool) or not isinstance(total, int) or not 0 <= total <= _MAX_COUNT:
                self.problem(unit, number, _join(path, "answeredDiscussions.totalCount"),
                             f"must be a whole number >= 0, found {json_type(total)}")
            else:
                self.answered_total = total
                self.result.answered_counted = False

    # -------------------------------------------------------------------------------------------- one node
    def node(self, unit: str, number: int, index: int | None, node: Any, prefix: str) -> None:
        """One discussion node: a pair, a filtered record, a duplicate or problems."""
        result = self.result
        if index is not None:
            result.read += 1
        if not isinstance(node, dict):
            self.problem(unit, number, prefix.rstrip(".") or None,
                         f"expected a discussion object, found {json_type(node)}")
            return
        node, repaired = repair_value(node)
        f = _Fields(self, unit, number, prefix, node)
        num = f.integer("number")
        url = f.text("url")
        title = f.text("title")
        body = f.text("body")
        created_at = f.text("createdAt")
        is_answered = f.boolean("isAnswered")
        answer = f.obj("answer")
        answer_body = f.text("body", answer, "answer.body") if answer else None
        author = f.obj("author", answer, "answer.author") if answer else None
        login = f.text("login", author, "answer.author.login") if author else None
        association = f.text("authorAssociation", answer, "answer.authorAssociation") if answer else None
        chosen_at = f.text("answerChosenAt")
        chosen_by = f.obj("answerChosenBy")
        chosen_login = f.text("login", chosen_by, "answerChosenBy.login") if chosen_by else None
        category = f.obj("category")
        category_name = f.text("name", category, "category.name") if category else None
        if f.bad:
            return
        if url is None and num is None:
            self.problem(unit, number, f"{prefix}url", "required field is missing (a discussion needs its url or "
                                                       "its number: the thread's id upstream)")
            return
        if title is None or not title.strip():
            self.problem(unit, number, f"{prefix}title",
                         "required field is missing" if title is None else "must not be empty")
            return
        upstream_id = url or str(num)
        if upstream_id in self.seen:
            result.duplicates += 1
            return
        self.seen.add(upstream_id)
        answered = is_answered if is_answered is not None else answer is not None
        question = title.strip() + ("\n\n" + body.strip() if body and body.strip() else "")
        reason = self.reason(answered, answer_body, category_name, question)
        if reason:
            result.filtered.append(FilteredRecord(
                self.display, number, unit, index, upstream_id, url, reason,
                answered=bool(answered)))
            return
        extra: dict[str, Any] = {
            k: v for k, v in (
                ("number", num), ("url", url), ("created_at", created_at), ("discussion_category", category_name),
                ("answer_author", login), ("answer_author_association", association),
                ("answer_chosen_at", chosen_at), ("answer_chosen_by", chosen_login),
            ) if v is not None
        }
        if index is not None:
            extra["page_node"] = index
        pair = build_pair(
            display=self.display, line=number, unit=unit, fmt=FORMAT, problems=result.problems,
            question=question, reference_answer=answer_body, repository=self.repository,
            upstream_id=upstream_id, extra=extra,
        )
        if pair:
            result.pairs.append(pair)
            if repaired and result.repaired_pairs is not None:
                result.repaired_pairs.add(pair.id)

    def reason(self, answered: bool, answer_body: str | None, category: str | None, question: str) -> str | None:
        """Why a valid thread is left out (RepoProbe §3.2), or None to import it."""
        if not answered:
            return UNANSWERED
        if answer_body is None or not answer_body.strip():
            return NO_ACCEPTED_ANSWER
        if not self.any_category and (category or "").casefold() not in self.wanted:
            name = "(none)" if category is None else category if len(category) <= 80 else category[:80] + "…"
            return f"category {name} not in {', '.join(self.categories)}"
        image = pair_image_reason(question, answer_body)
        if image:
            side, _, why = image.partition(" ")
            return f"{side} relies on an image: {why}"
        return None


class _Fields:
    """Reads a node's fields by type, recording a problem (page or line, and the field's path) for a value of
    the wrong type; ``bad`` tells whether any was."""

    def __init__(self, reader: _Reader, unit: str, number: int, prefix: str, node: dict):
        self.reader, self.unit, self.number, self.prefix, self.node = reader, unit, number, prefix, node
        self.bad = False

    def _typed(self, key: str, within: dict | None, label: str | None, ok: Any, expected: str) -> Any:
        """``(within or the node)[key]`` when None or ``ok(value)``; else a problem naming the field, and None."""
        value = (self.node if within is None else within).get(key)
        if value is not None and not ok(value):
            self.bad = True
            self.reader.problem(self.unit, self.number, self.prefix + (label or key),
                                f"must be {expected}, found {json_type(value)}")
            return None
        return value

    def text(self, key: str, within: dict | None = None, label: str | None = None) -> str | None:
        """A string or None."""
        return self._typed(key, within, label, lambda v: isinstance(v, str), "a string")

    def integer(self, key: str) -> int | None:
        """A whole number or None."""
        return self._typed(key, None, None, lambda v: isinstance(v, int) and not isinstance(v, bool),
                           "a whole number")

    def boolean(self, key: str) -> bool | None:
        """true, false or None."""
        return self._typed(key, None, None, lambda v: isinstance(v, bool), "true or false")

    def obj(self, key: str, within: dict | None = None, label: str | None = None) -> dict | None:
        """An object or None."""
        return self._typed(key, within, label, lambda v: isinstance(v, dict), "an object")


def _is_page(obj: dict) -> bool:
    return any(k in obj for k in ("data", "repository", "discussions", "nodes", "edges"))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _first_error(errors: list) -> str:
    first = errors[0] if errors else None
    message = first.get("message") if isinstance(first, dict) else first
    return repair_value(str(message)[:200])[0]
