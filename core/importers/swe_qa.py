"""SWE-QA importers (Peng et al., 2025; the SWE-QA-Bench repository's data layout).

- ``swe-qa``: JSON lines ``{question, answer}`` (``Benchmark__<repo>.jsonl``); other keys are kept in
  ``extra``.
- ``swe-qa-categorized``: JSON lines with Markdown heading lines between them
  (``origin_question__generated_questions_<repo>_categorized.jsonl``); fields ``question``,
  ``ground_truth`` (the reference answer), ``category_type`` (what / why / how / where: the QA type) and
  ``category`` (the subtype, e.g. ``architecture``). A record with no ground truth is imported as needing
  a reference answer and reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputProblem
from ..models import QAPair, normalize_qa_type
from .base import ParseResult, build_pair, json_file_lines, optional_text, require_text

_TYPE_HEADING = re.compile(r"^#\s+(WHAT|WHY|HOW|WHERE)\b", re.IGNORECASE)
_SUBTYPE_HEADING = re.compile(r"^##\s+(\S.*)$")


def parse_swe_qa(path: Path, display: str, repository: str | None, *, lazy: bool = False) -> ParseResult:
    """Read a SWE-QA ``{question, answer}`` JSONL file; both fields are required non-empty strings.

    ``lazy``: the pairs are read line by line as the store consumes them (:meth:`ParseResult.finish`)."""
    result = ParseResult("swe-qa", display)
    return result.finish(_swe_qa_pairs(json_file_lines(path, display, result, lazy=lazy), display, repository, result),
                         lazy)


def _swe_qa_pairs(records: Iterator[tuple[int, dict]], display: str, repository: str | None,
                  result: ParseResult) -> Iterator[QAPair]:
    for line, rec in records:
        before = len(result.problems)
        question = require_text(rec, "question", display, line, result.problems)
        answer = require_text(rec, "answer", display, line, result.problems)
        if len(result.problems) > before:
            continue
        extra = {k: v for k, v in rec.items() if k not in ("question", "answer")}
        pair = build_pair(
            display=display, line=line, unit="line", fmt="swe-qa", problems=result.problems,
            question=question, reference_answer=answer, repository=repository, extra=extra,
        )
        if pair:
            yield pair


def parse_swe_qa_categorized(path: Path, display: str, repository: str | None, *, lazy: bool = False) -> ParseResult:
    """Read the SWE-QA categorized layout: JSON lines under ``# WHAT CATEGORIES`` / ``## subtype`` headings.

    The record's own ``category_type`` and ``category`` win; the headings fill them in when absent. ``lazy``: as
    :func:`parse_swe_qa`.
    """
    result = ParseResult("swe-qa-categorized", display)
    records = json_file_lines(path, display, result, headings=True, lazy=lazy)
    return result.finish(_categorized_pairs(records, display, repository, result), lazy)


def _categorized_pairs(records: Iterator[tuple[int, Any]], display: str, repository: str | None,
                       result: ParseResult) -> Iterator[QAPair]:
    heading_type: str | None = None
    heading_subtype: str | None = None
    for line, rec in records:
        if isinstance(rec, str):
            if m := _TYPE_HEADING.match(rec):
                heading_type, heading_subtype = m.group(1), None
            elif m := _SUBTYPE_HEADING.match(rec):
                heading_subtype = m.group(1).strip()
            continue
        before = len(result.problems)
        question = require_text(rec, "question", display, line, result.problems)
        reference = require_text(rec, "ground_truth", display, line, result.problems, allow_missing=True)
        used = {"question", "ground_truth", "category_type", "category"}
        if reference is None:
            reference = require_text(rec, "answer", display, line, result.problems, allow_missing=True)
            if reference is not None:
                used.add("answer")
        ok_t, raw_type = optional_text(rec, "category_type", display, line, result.problems)
        ok_s, subtype = optional_text(rec, "category", display, line, result.problems)
        if len(result.problems) > before or not (ok_t and ok_s):
            continue
        if not (raw_type or heading_type):
            result.problems.append(InputProblem(
                display, line, "category_type",
                "required field is missing and no '# WHAT CATEGORIES'-style heading precedes the record; "
                "is this the categorized layout? (plain {question, answer} files are format swe-qa)",
            ))
            continue
        try:
            qa_type = normalize_qa_type(raw_type or heading_type)
        except ValueError as e:
            result.problems.append(InputProblem(display, line, "category_type", str(e)))
            continue
        extra = {k: v for k, v in rec.items() if k not in used and v is not None}
        pair = build_pair(
            display=display, line=line, unit="line", fmt="swe-qa-categorized", problems=result.problems,
            question=question, reference_answer=reference, repository=repository, extra=extra,
            qa_type=qa_type, qa_subtype=subtype or heading_subtype,
        )
        if pair:
            yield pair
