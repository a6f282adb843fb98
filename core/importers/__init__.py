"""Importers of candidate Q&A pairs from the formats the field uses.

``parse(format, path, repository=..., mapping=...)`` reads a file into a :class:`ParseResult` without
writing anything; the store applies it in one transaction (``benchwright.db.Store.apply_import``). With
``stream=True`` the JSON-lines formats are read as the store consumes them, one line at a time (:data:`STREAMED`).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import BenchwrightError, InputFileError
from .base import ParseResult, paused_gc
from .github_discussions import DEFAULT_CATEGORIES, parse_categories, parse_github_discussions
from .swe_qa import parse_swe_qa, parse_swe_qa_categorized
from .swe_qa_pro import parse_swe_qa_pro
from .tabular import TARGETS, parse_csv, parse_jsonl, parse_mapping, parse_parquet

FORMATS = ("swe-qa", "swe-qa-categorized", "swe-qa-pro", "github-discussions", "jsonl", "csv", "parquet")
"""Names accepted by :func:`parse` and ``benchwright pairs import FORMAT``."""
KEPT_PROBLEMS = 10_000
"""Problems a streamed import that stops at any problem keeps (``keep_problems=True``); the others are counted."""
STREAMED = ("swe-qa", "swe-qa-categorized", "jsonl")
"""Formats :func:`parse` streams with ``stream=True``; the others (a Parquet table, a CSV file, GitHub export
pages) are read whole."""


def parse(
    fmt: str, path: str | Path, *, repository: str | None = None, mapping: list[str] | tuple[str, ...] = (),
    categories: str | None = None, stream: bool = False, keep_problems: bool = False,
) -> ParseResult:
    """Read ``path`` in format ``fmt``.

    Args:
        fmt: one of :data:`FORMATS`.
        path: the file; shown in messages as given.
        repository: the registered repository the pairs are about (not for ``swe-qa-pro``).
        mapping: ``TARGET=COLUMN`` items, for ``jsonl``, ``csv`` and ``parquet`` only.
        categories: for ``github-discussions`` only: the discussion categories imported, comma-separated
            (default ``Q&A,Help``; ``*`` for every one).
        stream: for the :data:`STREAMED` formats, return at once with the pairs in ``ParseResult.pending``,
            read line by line as the store consumes them (memory flat in the file's size); ``read``,
            ``problems`` and a line that is not UTF-8 come as they are reached. Other formats are read whole.
        keep_problems: with ``stream``, keep only the first :data:`KEPT_PROBLEMS` problems and count the others
            (``ParseResult.problem_count``), for an import that imports nothing when there is any.

    Returns:
        The valid pairs and every problem found; records with problems are not in ``pairs``.

    Raises:
        BenchwrightError: unknown format, a mapping or categories given to a format that takes none, or
            categories naming none.
        InputFileError: problems of the whole file (missing, empty, not UTF-8, not Parquet). Text of a
            Parquet row that is not valid UTF-8 is a problem of that row (row and field named).
    """
    with paused_gc():
        result = _parse(fmt, path, repository=repository, mapping=mapping, categories=categories, lazy=stream)
    if keep_problems and result.pending is not None:
        result.keep_problems(KEPT_PROBLEMS)
    return result


def _parse(fmt: str, path: str | Path, *, repository: str | None, mapping, categories=None,
           lazy: bool = False) -> ParseResult:
    display = str(path)
    p = Path(path)
    if fmt not in FORMATS:
        raise BenchwrightError(f"unknown format {fmt!r}; formats are {', '.join(FORMATS)}")
    if mapping and fmt not in ("jsonl", "csv", "parquet"):
        raise BenchwrightError(f"--map is for the jsonl, csv and parquet formats, not {fmt}")
    if categories is not None and fmt != "github-discussions":
        raise BenchwrightError(f"--categories is for the github-discussions format, not {fmt}")
    if fmt == "github-discussions":
        try:
            wanted = parse_categories(categories)
        except ValueError as e:
            raise BenchwrightError(str(e)) from None
        return parse_github_discussions(p, display, repository, wanted)
    if fmt == "swe-qa":
        return parse_swe_qa(p, display, repository, lazy=lazy)
    if fmt == "swe-qa-categorized":
        return parse_swe_qa_categorized(p, display, repository, lazy=lazy)
    if fmt == "swe-qa-pro":
        return parse_swe_qa_pro(p, display, repository)
    m = parse_mapping(mapping)
    if fmt == "parquet":
        return parse_parquet(p, display, repository, m)
    return parse_jsonl(p, display, repository, m, lazy=lazy) if fmt == "jsonl" else parse_csv(p, display, repository, m)


__all__ = ["DEFAULT_CATEGORIES", "FORMATS", "KEPT_PROBLEMS", "STREAMED", "TARGETS", "InputFileError", "ParseResult", "parse", "parse_mapping"]
