"""Shared machinery of the importers: reading text safely, JSON lines, building pairs, the result type."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..eligibility import RepositoryFacts
from ..errors import FilteredRecord, InputFileError, InputProblem
from ..models import QA_TYPES, QAPair, Repository, SourceRef, qa_pair_id
from ..text import repair_value


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects at once (an import of 100,000
    records otherwise spends seconds in full collections that find nothing to free)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class ParseResult:
    """What an importer read from one file, before anything is written.

    Attributes:
        format: the importer's name.
        file: the file as given.
        read: number of records read (valid or not).
        pairs: valid pairs in file order.
        problems: every invalid record, with file, line or row, and field.
        repositories: repositories named by the records themselves (SWE-QA-Pro), to register.
        repaired_lines: lines whose text held lone surrogates (``\\udc81`` escapes), read with U+FFFD in their
            place (:func:`benchwright.core.text.repair_value`); the store flags their pairs.
        repaired_pairs: when not None, the ids of the pairs whose own text held lone surrogates (an importer
            whose line or page holds several records); the store flags these, not every pair of a listed line.
        filtered: valid records left out by the importer's rules, each with its reason (GitHub Discussions:
            unanswered, no accepted answer, another category, relies on an image); not problems.
        duplicates: records repeating an earlier record of the file by upstream id (a thread on two pages),
            read once.
        repository_facts: eligibility facts the file carries about the ``--repo`` repository
            (:class:`~benchwright.core.eligibility.RepositoryFacts`), or None.
        answered_counted: True when ``repository_facts.answered_discussions`` is absent from the file and is
            to be counted from the imports (threads with an accepted answer).
        notes: what the importer wants the user to know that is neither a problem nor a filtered record (an
            export that stops before its last page).
        pending: a streamed result's pairs, not read yet (:func:`benchwright.core.importers.parse` with
            ``stream=True``): an iterator the store consumes once, record by record; ``pairs`` is then empty
            (after the import it holds only the pairs read from ``repaired_lines``, for the store's flags), and
            the file's problems (a line that is not UTF-8 raises :class:`InputFileError` when it is reached) are
            known only when it is exhausted. None once read whole.
    """

    format: str
    file: str
    read: int = 0
    pairs: list[QAPair] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    repositories: list[Repository] = field(default_factory=list)
    repaired_lines: list[int] = field(default_factory=list)
    repaired_pairs: set[str] | None = None
    filtered: list[FilteredRecord] = field(default_factory=list)
    duplicates: int = 0
    repository_facts: RepositoryFacts | None = None
    answered_counted: bool = False
    notes: list[str] = field(default_factory=list)
    pending: Iterator[QAPair] | None = field(default=None, repr=False, compare=False)

    def keep_problems(self, limit: int) -> None:
        """Keep only the first ``limit`` problems from now on, counting the others (:attr:`problem_count`): for a
        streamed import that fails on any problem, whose message shows only the first ones. Call it before the
        pairs are read."""
        self.problems = _KeptProblems(self.problems, limit)

    @property
    def problem_count(self) -> int:
        """Problems found, kept or not (:meth:`keep_problems`)."""
        return len(self.problems) + getattr(self.problems, "dropped", 0)

    def finish(self, pairs: Iterator[QAPair], lazy: bool) -> ParseResult:
        """Take the importer's pairs: read them all into ``pairs`` now, or with ``lazy`` keep the iterator in
        ``pending`` for the store to consume once (``read``, ``problems`` and ``repaired_lines`` then grow as
        it is consumed). Returns ``self``."""
        if lazy:
            self.pending = pairs
        else:
            self.pairs.extend(pairs)
        return self


class _KeptProblems(list):
    """A list of problems that keeps the first ``limit`` appended and counts the rest in ``dropped``."""

    def __init__(self, items: list, limit: int):
        super().__init__(items[:limit])
        self.limit = limit
        self.dropped = max(0, len(items) - limit)

    def append(self, item: InputProblem) -> None:
        if len(self) < self.limit:
            super().append(item)
        else:
            self.dropped += 1

    def extend(self, items) -> None:
        for item in items:
            self.append(item)


def read_text(path: Path, display: str) -> str:
    """Read a whole UTF-8 text file (a BOM is allowed).

    Raises:
        InputFileError: the file is missing, a directory, empty (or only white space), or not valid
            UTF-8 (the problem names the line of the first bad byte).
    """
    data = read_bytes(path, display)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputFileError.single(
            display, f"not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); save the file as UTF-8", line
        ) from None
    if not text.strip():
        raise InputFileError.single(display, "the file is empty")
    return text


def text_lines(path: Path, display: str) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` of a UTF-8 text file read one line at a time (memory flat in the file's size): the
    same lines, numbers and errors as :func:`read_text` followed by ``text.split("\\n")`` (a BOM at the start is
    dropped; the ``\\n`` is not part of the line).

    Raises:
        InputFileError: at once, the file is missing, a directory, unreadable, or empty (only ASCII white space);
            when the iterator reaches it, a line that is not valid UTF-8 (its line and byte offset named as
            :func:`read_text` names them), or an end with no line holding more than white space ("the file is
            empty").
    """
    _check_file(path, display)
    return _text_lines(path, display)


def _text_lines(path: Path, display: str) -> Iterator[tuple[int, str]]:
    offset = 0
    blank = True
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise InputFileError.single(
                    display,
                    f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at offset {offset + e.start}); save the file as UTF-8",
                    number,
                ) from None
            offset += len(raw)
            if line.endswith("\n"):
                line = line[:-1]
            if blank and line.strip():
                blank = False
            yield number, line
    if blank:
        raise InputFileError.single(display, "the file is empty")


def _check_file(path: Path, display: str) -> None:
    """:func:`read_bytes`' refusals (missing, a directory, unreadable, empty) without reading the whole file."""
    _check_path(path, display)
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 16):
                if chunk.strip():
                    return
    except OSError as e:
        raise _unreadable(display, e) from None
    raise InputFileError.single(display, "the file is empty")


def read_bytes(path: Path, display: str) -> bytes:
    """Read a file's bytes, refusing missing, unreadable and empty files and directories (InputFileError)."""
    _check_path(path, display)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise _unreadable(display, e) from None
    if not data.strip():
        raise InputFileError.single(display, "the file is empty")
    return data


def _check_path(path: Path, display: str) -> None:
    if not path.exists():
        raise InputFileError.single(display, "no such file")
    if path.is_dir():
        raise InputFileError.single(display, "is a directory, not a file")


def _unreadable(display: str, e: OSError) -> InputFileError:
    return InputFileError.single(display, f"cannot be read ({e.strerror or e})")


def read_parquet(path: Path, display: str) -> Any:
    """Read a whole Parquet file as a ``pyarrow.Table``.

    Raises:
        InputFileError: the file is missing, a directory, empty, or not a readable Parquet file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    read_bytes(path, display)
    try:
        return pq.read_table(path)
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as e:
        raise InputFileError.single(display, f"not a readable Parquet file ({e})") from None


def parquet_rows(table: Any, display: str, result: ParseResult) -> Iterator[tuple[int, dict]]:
    """Yield ``(row_number, row)`` for each row of the ``pyarrow.Table`` (1-based), as Python values.

    Every row counts in ``result.read``. Text (string, large string and binary columns, at any depth of
    structs and lists) that is not valid UTF-8 is a problem naming the row and the field (``extra_info.question``,
    ``prompt[2].content``; list positions 1-based) and the row is not yielded: a Parquet writer does not
    always check the bytes of its string columns, and a binary column holding text is read as text.
    """
    import pyarrow as pa

    def as_bytes(t: Any) -> Any:
        if pa.types.is_string(t) or pa.types.is_string_view(t):
            return pa.binary()
        if pa.types.is_large_string(t):
            return pa.large_binary()
        if pa.types.is_struct(t):
            return pa.struct([f.with_type(as_bytes(f.type)) for f in t])
        if pa.types.is_large_list(t):
            return pa.large_list(t.value_field.with_type(as_bytes(t.value_type)))
        if pa.types.is_list(t):
            return pa.list_(t.value_field.with_type(as_bytes(t.value_type)))
        return t

    def has_binary(t: Any) -> bool:
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
            return True
        if pa.types.is_struct(t):
            return any(has_binary(f.type) for f in t)
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return has_binary(t.value_type)
        return False

    decode = any(has_binary(f.type) for f in table.schema)
    rows: list[dict] | None
    try:
        rows = table.to_pylist()  # the common case: every text valid, decoded by pyarrow at its own speed
    except UnicodeDecodeError:
        decode = True
        try:
            rows = table.cast(pa.schema([f.with_type(as_bytes(f.type)) for f in table.schema])).to_pylist()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a nesting pyarrow cannot cast: row by row
            rows = None
    for offset in range(table.num_rows):
        number = offset + 1
        result.read += 1
        if rows is None:
            try:
                [row] = table.slice(offset, 1).to_pylist()
            except UnicodeDecodeError as e:
                result.problems.append(InputProblem(display, number, None, _not_utf8(e), "row"))
                continue
        else:
            row = rows[offset]
        if decode:
            bad: list[InputProblem] = []
            row = {k: _decoded(v, k, display, number, bad) for k, v in row.items()}
            if bad:
                result.problems.extend(bad)
                continue
        yield number, row


def _not_utf8(e: UnicodeDecodeError) -> str:
    return f"not valid UTF-8 (byte 0x{e.object[e.start]:02x} at offset {e.start}); write the file with UTF-8 text"


def _decoded(value: Any, where: str, display: str, row: int, bad: list[InputProblem]) -> Any:
    """``value`` with every ``bytes`` decoded as UTF-8 (a problem at ``where`` for bytes that are not)."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as e:
            bad.append(InputProblem(display, row, where, _not_utf8(e), "row"))
            return None
    if isinstance(value, dict):
        return {k: _decoded(v, f"{where}.{k}", display, row, bad) for k, v in value.items()}
    if isinstance(value, list):
        return [_decoded(v, f"{where}[{i}]", display, row, bad) for i, v in enumerate(value, start=1)]
    return value


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, for messages: object, array, string, number, boolean, null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_lines(
    text: str, display: str, result: ParseResult, *, headings: bool = False, repair: bool = True
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for each JSON line of ``text`` (1-based line numbers).

    Lines end at ``\\n`` only (a ``\\r`` before it is dropped): JSON text may hold U+2028, U+0085 and other
    characters :meth:`str.splitlines` would break a record on. Blank lines are passed over. Every other
    line counts in ``result.read``. With ``headings=True`` lines starting with ``#`` are Markdown headings
    (the SWE-QA categorized layout), are not counted, and are yielded as ``(line, "# heading text")``
    strings. A line that is not valid JSON or not a JSON object is added to ``result.problems`` and not
    yielded. A ``\\u`` escape of a lone surrogate (text no UTF-8 file, store or terminal can hold) is read as
    U+FFFD and the line number added to ``result.repaired_lines`` (the record is kept, and flagged when stored);
    ``repair=False`` leaves that to the caller (a line holding several records, each flagged on its own).
    """
    return json_objects(enumerate(text.split("\n"), start=1), display, result, headings=headings, repair=repair)


def json_file_lines(
    path: Path, display: str, result: ParseResult, *, headings: bool = False, repair: bool = True, lazy: bool = False
) -> Iterator[tuple[int, Any]]:
    """:func:`json_lines` of the file at ``path``: read whole first (:func:`read_text`), or with ``lazy`` one line
    at a time (:func:`text_lines`: the file's own refusals are raised at once, a line that is not UTF-8 when it is
    reached)."""
    if not lazy:
        return json_lines(read_text(path, display), display, result, headings=headings, repair=repair)
    return json_objects(text_lines(path, display), display, result, headings=headings, repair=repair)


def json_objects(
    lines: Iterable[tuple[int, str]], display: str, result: ParseResult, *, headings: bool = False, repair: bool = True
) -> Iterator[tuple[int, Any]]:
    """:func:`json_lines` over numbered lines ``(line_number, text)``."""
    problems = result.problems
    for number, raw in lines:
        line = raw.strip()
        if not line:
            continue
        if headings and line.startswith("#"):
            yield number, line
            continue
        result.read += 1
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(InputProblem(display, number, None, f"invalid JSON: {e.msg} (column {e.colno})"))
            continue
        except RecursionError:
            problems.append(InputProblem(display, number, None, "invalid JSON: nested too deeply"))
            continue
        if not isinstance(obj, dict):
            problems.append(
                InputProblem(display, number, None, f"expected a JSON object, found {json_type(obj)}")
            )
            continue
        if repair and "\\ud" in line.lower():
            obj, repaired = repair_value(obj)
            if repaired:
                result.repaired_lines.append(number)
        yield number, obj


def require_text(
    record: dict, key: str, display: str, line: int, problems: list[InputProblem], *, label: str | None = None,
    unit: str = "line", allow_missing: bool = False,
) -> str | None:
    """Return ``record[key]`` as a non-empty string, or record a problem and return ``None``.

    ``allow_missing`` accepts a missing or null value (returns ``None`` without a problem) but still
    refuses a value of the wrong type.
    """
    name = label or key
    if key not in record or record[key] is None:
        if not allow_missing:
            problems.append(InputProblem(display, line, name, "required field is missing", unit))
        return None
    value = record[key]
    if not isinstance(value, str):
        problems.append(
            InputProblem(display, line, name, f"must be a string, found {json_type(value)}", unit)
        )
        return None
    if not value.strip():
        if allow_missing:
            return None
        problems.append(InputProblem(display, line, name, "must not be empty", unit))
        return None
    return value


def optional_text(
    record: dict, key: str, display: str, line: int, problems: list[InputProblem], unit: str = "line"
) -> tuple[bool, str | None]:
    """``(ok, value)`` for an optional string field: numbers are turned into text, other types refused."""
    value = record.get(key)
    if value is None:
        return True, None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        problems.append(InputProblem(display, line, key, f"must be a string, found {json_type(value)}", unit))
        return False, None
    text = str(value).strip()
    return True, text or None


def build_pair(
    *,
    display: str,
    line: int,
    unit: str,
    fmt: str,
    problems: list[InputProblem],
    question: str,
    reference_answer: str | None,
    repository: str | None,
    upstream_id: str | None = None,
    extra: dict | None = None,
    **fields: Any,
) -> QAPair | None:
    """Make a :class:`QAPair` with a content-hash id and its provenance, or record the problem.

    The importers have already checked every field's type (text fields are strings, the QA type is
    normalized), so the common case builds the model without re-validating it (100,000 records a second
    faster); anything unexpected still goes through pydantic, whose errors become problems naming the field.
    """
    simple = (
        isinstance(question, str) and question.strip()
        and (reference_answer is None or isinstance(reference_answer, str))
        and all(v is None or isinstance(v, str) for v in fields.values())
        and fields.get("qa_type") in (None, *QA_TYPES)
        and set(fields) <= set(_OPTIONAL_FIELDS)
    )
    if simple:
        return QAPair.model_construct(
            id=qa_pair_id(repository, question, reference_answer), repository=repository, question=question,
            reference_answer=reference_answer,
            source=SourceRef.model_construct(format=fmt, file=display, line=line, unit=unit, upstream_id=upstream_id),
            extra=extra or {}, **{k: fields.get(k) for k in _OPTIONAL_FIELDS},
        )
    try:
        return QAPair(
            id=qa_pair_id(repository, question, reference_answer),
            repository=repository,
            question=question,
            reference_answer=reference_answer,
            source=SourceRef(format=fmt, file=display, line=line, unit=unit, upstream_id=upstream_id),
            extra=extra or {},
            **fields,
        )
    except ValidationError as e:
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"]) or None
            problems.append(InputProblem(display, line, loc, err["msg"], unit))
        return None


_OPTIONAL_FIELDS = (
    "category", "qa_type", "qa_subtype", "cluster_id", "cluster_name", "language", "theme", "task_set", "split",
)
