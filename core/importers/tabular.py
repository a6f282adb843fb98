"""Generic importers: any JSONL, CSV or Parquet file, with a field mapping (``--map question=COL``).

Targets a mapping may name are :data:`TARGETS`; ``question`` and ``answer`` are required, and default to
columns of the same name. In JSONL and Parquet a column may be a dotted path into nested objects (structs)
(``extra_info.answer``). CSV records are numbered by the line they start on (the header is line 1); Parquet
rows from 1.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import BenchwrightError, InputFileError, InputProblem
from ..models import QAPair, normalize_qa_type
from ..vocabulary import normalize_task_set
from .base import ParseResult, build_pair, json_file_lines, json_type, parquet_rows, read_parquet, read_text

TARGETS = (
    "question", "answer", "id", "category", "qa_type", "qa_subtype", "cluster_id", "cluster_name",
    "language", "theme", "task_set", "split",
)
"""Fields a ``--map`` may fill. ``answer`` becomes the reference answer, ``id`` the upstream id."""

_MISSING = object()


def parse_mapping(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Turn ``["question=title", "answer=body"]`` into ``{"question": "title", "answer": "body"}``.

    Unmapped ``question`` and ``answer`` default to columns of the same name.

    Raises:
        BenchwrightError: an item is not ``TARGET=COLUMN``, names an unknown target, or repeats one.
    """
    mapping: dict[str, str] = {}
    for item in items:
        target, sep, column = item.partition("=")
        target, column = target.strip(), column.strip()
        if not sep or not target or not column:
            raise BenchwrightError(f"--map {item!r}: write it as TARGET=COLUMN, e.g. question=title")
        if target not in TARGETS:
            raise BenchwrightError(f"--map {item!r}: unknown target {target!r}; targets are {', '.join(TARGETS)}")
        if target in mapping:
            raise BenchwrightError(f"--map: target {target!r} is mapped twice")
        if any(not part for part in column.split(".")):
            raise BenchwrightError(f"--map {item!r}: {column!r} is not a column or a dotted path such as a.b")
        mapping[target] = column
    mapping.setdefault("question", "question")
    mapping.setdefault("answer", "answer")
    return mapping


def _lookup(record: dict, column: str) -> Any:
    if column in record:
        return record[column]
    node: Any = record
    for part in column.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _records_to_pairs(
    records, fmt: str, display: str, repository: str | None, mapping: dict[str, str], result: ParseResult,
    unit: str = "line",
) -> Iterator[QAPair]:
    problems = result.problems
    for line, rec in records:
        values: dict[str, str | None] = {}
        bad = False
        for target, column in mapping.items():
            label = column if column == target else f"{column} (mapped to {target})"
            raw = _lookup(rec, column)
            if raw is _MISSING or raw is None or (isinstance(raw, str) and not raw.strip()):
                if target in ("question", "answer"):
                    what = ("required field is missing" if raw is _MISSING
                            else "is null; a text is required" if raw is None else "must not be empty")
                    problems.append(InputProblem(display, line, label, what, unit))
                    bad = True
                values[target] = None
                continue
            text_only = target in ("question", "answer")
            if isinstance(raw, bool) or not isinstance(raw, str if text_only else str | int | float):
                problems.append(InputProblem(display, line, label, f"must be a string, found {json_type(raw)}", unit))
                bad = True
                continue
            values[target] = str(raw)
        if bad:
            continue
        try:
            qa_type = normalize_qa_type(values.get("qa_type"))
        except ValueError as e:
            problems.append(InputProblem(display, line, mapping["qa_type"], str(e), unit))
            continue
        try:
            values["task_set"] = normalize_task_set(values.get("task_set"))
        except ValueError as e:
            problems.append(InputProblem(display, line, mapping["task_set"], str(e), unit))
            continue
        mapped_columns = set(mapping.values())
        extra = {k: v for k, v in rec.items() if k not in mapped_columns and v not in (None, "")}
        pair = build_pair(
            display=display, line=line, unit=unit, fmt=fmt, problems=problems,
            question=values["question"], reference_answer=values["answer"], repository=repository,
            upstream_id=values.get("id"), extra=extra, qa_type=qa_type,
            **{k: values.get(k) for k in ("category", "qa_subtype", "cluster_id", "cluster_name", "language", "theme", "task_set",
                                          "split")},
        )
        if pair:
            yield pair


def parse_jsonl(path: Path, display: str, repository: str | None, mapping: dict[str, str], *,
                lazy: bool = False) -> ParseResult:
    """Read any JSONL file of objects through ``mapping`` (see :func:`parse_mapping`), line by line; ``lazy``: as
    the store consumes the pairs (:meth:`ParseResult.finish`)."""
    result = ParseResult("jsonl", display)
    records = json_file_lines(path, display, result, lazy=lazy)
    return result.finish(_records_to_pairs(records, "jsonl", display, repository, mapping, result), lazy)


def parse_parquet(path: Path, display: str, repository: str | None, mapping: dict[str, str]) -> ParseResult:
    """Read any Parquet file through ``mapping`` (see :func:`parse_mapping`); rows are numbered from 1.

    Raises:
        InputFileError: not a readable Parquet file, or a mapped column is not in it (named).
    """
    result = ParseResult("parquet", display)
    table = read_parquet(path, display)
    missing = [
        InputProblem(display, None, column, f"column is not in the file (mapped to {target})")
        for target, column in mapping.items()
        if column not in table.column_names and column.split(".", 1)[0] not in table.column_names
    ]
    if missing:
        raise InputFileError(missing)
    rows = parquet_rows(table, display, result)
    return result.finish(_records_to_pairs(rows, "parquet", display, repository, mapping, result, "row"), False)


def parse_csv(path: Path, display: str, repository: str | None, mapping: dict[str, str]) -> ParseResult:
    """Read a CSV file with a header row through ``mapping``.

    Quoting is strict: a quoted field that is never closed, or text after a closing quote, is a problem
    of the line its record starts on (a lenient reader would swallow the rest of the file into one field).
    Fields may be as long as the file.

    Raises:
        InputFileError: a mapped column is not in the header (named), or the CSV is malformed (line named).
    """
    result = ParseResult("csv", display)
    text = read_text(path, display)
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(old_limit, len(text) + 1))
    try:
        _parse_csv_text(text, display, repository, mapping, result)
    finally:
        csv.field_size_limit(old_limit)
    return result


def _parse_csv_text(text: str, display: str, repository: str | None, mapping: dict[str, str], result: ParseResult) -> None:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except csv.Error as e:
        raise InputFileError.single(display, f"malformed CSV header: {e}", 1) from None
    header = [h.strip() for h in header]
    repeated = sorted({h for h in header if header.count(h) > 1 and h})
    if repeated:
        raise InputFileError([
            InputProblem(display, 1, h, "column name appears more than once in the header") for h in repeated
        ])
    missing = [
        InputProblem(display, 1, column, f"column is not in the header (mapped to {target})")
        for target, column in mapping.items() if column not in header
    ]
    if missing:
        raise InputFileError(missing)

    def records():
        start = reader.line_num + 1
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as e:
                result.read += 1
                why = "a quoted field is not closed before the end of the file" if "end of data" in str(e) else e
                result.problems.append(InputProblem(
                    display, start, None, f"malformed CSV: {why}; the rest of the file was not read"
                ))
                return
            line, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            result.read += 1
            if len(row) != len(header):
                result.problems.append(
                    InputProblem(display, line, None, f"has {len(row)} cells; the header has {len(header)}")
                )
                continue
            yield line, dict(zip(header, row, strict=True))

    result.finish(_records_to_pairs(records(), "csv", display, repository, mapping, result), False)
