"""Readers of model-answer files: plain JSONL, SWE-QA agent runs and SWE-QA error analyses (Peng et al., 2025).

``parse_answers(path, fmt=..., scale=...)`` reads a file into :class:`AnswerRecord` objects without writing
anything; the store matches them to Q&A pairs and writes them in one transaction
(``benchwright.db.Store.import_answers``).

Shapes (``fmt``; ``auto`` looks at the first JSON record):

- ``jsonl``: one JSON object a line. The pair: ``qa_pair_id`` (aliases ``pair_id``, ``id``) and/or
  ``question`` (its exact text). The answer: ``answer`` (aliases ``response``, ``model_answer``,
  ``prediction``). Optional: ``trajectory`` (a JSON array/object, or a string holding JSON), ``scores`` (an
  object of dimension name to number; needs a scale) and ``critique`` (alias ``error_analysis``). Every other
  field is kept in the answer's ``extra``.
- ``swe-qa-agent`` (``cursor_agent_unidentified_question__<repo>.jsonl``): ``question`` is a rewrite that hides
  identifiers, ``origin_question`` the original; matching tries ``origin_question`` first, then ``question``.
  ``trajectory`` is a string holding JSON: it is parsed and kept (viewable). ``rewriting_reason``, the two
  questions, latency and token counts go to ``extra``.
- ``swe-qa-error-analysis`` (``ErrorAnalysis__error_analysis.<repo>.jsonl``): ``question``, ``reference``,
  ``answer``, ``scores`` (correctness, completeness, clarity, relevance, reasoning), ``total``, ``rate`` and
  ``error_analysis`` (the critique). The scores become an imported judgment.

Imported scores need their scale (the maximum per dimension): it is never guessed. Without one the file is
refused with the highest value seen and what the file's own ``rate`` suggests; a value above the scale, a
``total`` that is not the sum of the scores, or a ``rate`` that is not ``total / (dimensions x scale)``
refuses the file naming file, line and field. These are not skipped by ``--skip-invalid``: a wrong scale
would be wrong for every record.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BenchwrightError, InputFileError, InputProblem
from .base import ParseResult, json_lines, json_type, read_bytes, read_text

ANSWER_FORMATS = ("auto", "jsonl", "swe-qa-agent", "swe-qa-error-analysis")
"""Values of ``--answer-format``."""

PAIR_ID_FIELDS = ("qa_pair_id", "pair_id", "id")
"""Fields naming the Q&A pair by id, in order of preference."""
ANSWER_FIELDS = ("answer", "response", "model_answer", "prediction")
"""Fields holding the answer text, in order of preference."""
CRITIQUE_FIELDS = ("critique", "error_analysis")
"""Fields holding a written assessment of the answer (kept with imported scores)."""

_AGENT_MARKERS = ("trajectory", "origin_question", "rewriting_reason")
_RATE_TOLERANCE = 0.005


@dataclass
class AnswerRecord:
    """One answer read from a file, before it is matched to a pair.

    Attributes:
        line: 1-based line of the record.
        text: the answer.
        pair_ref: the pair id the record names, or ``None``.
        questions: ``(field, question text)`` candidates for matching by exact question, tried in order
            (SWE-QA agent runs: ``origin_question`` then ``question``).
        trajectory: parsed run trace (JSON value) or ``None``.
        scores: imported scores ``{dimension: number}`` in file order, or ``None``.
        critique: a written assessment kept with the imported scores, or ``None``.
        extra: the record's other fields.
        pair_field: the field ``pair_ref`` came from (``qa_pair_id``, ``pair_id`` or ``id``), for messages.
        notes: warnings about the record (``line N: ...``) that do not stop it from being imported, e.g.
            which of two differing answer fields was used; the import copies them into its report.
    """

    line: int
    text: str
    pair_ref: str | None = None
    questions: list[tuple[str, str]] = field(default_factory=list)
    trajectory: Any = None
    scores: dict[str, int | float] | None = None
    critique: str | None = None
    extra: dict = field(default_factory=dict)
    pair_field: str = "qa_pair_id"
    notes: list[str] = field(default_factory=list)
    text_repaired: bool = False
    """The record held lone surrogates (``\\udc81`` escapes), read as U+FFFD; the stored answer is flagged."""

    @property
    def question(self) -> str | None:
        """The first candidate question (for messages), or ``None``."""
        return self.questions[0][1] if self.questions else None

    def describe(self, width: int = 60) -> str:
        """``line N: "first 60 characters of the question..."`` (or the pair id), for reports."""
        what = self.question or (f"pair {self.pair_ref}" if self.pair_ref else "(no question)")
        what = " ".join(what.split())
        if len(what) > width:
            what = what[:width] + "..."
        return f"line {self.line}: {what!r}" if self.question else f"line {self.line}: {what}"


@dataclass
class AnswerParseResult:
    """What :func:`parse_answers` read from one file.

    Attributes:
        format: the shape read (``jsonl``, ``swe-qa-agent``, ``swe-qa-error-analysis``).
        file: the file as given.
        read: records read (valid or not).
        records: valid records in file order.
        problems: every invalid record (file, line, field); ``--skip-invalid`` leaves them out.
        scale: the maximum per dimension of imported scores, ``None`` when the file has none (a ``--scale``
            given for a file without scores is dropped, with a warning).
        warnings: warnings about the whole file that do not stop the import (a ``--scale`` for a file
            without scores, scores a format ignores), one sentence each.
    """

    format: str
    file: str
    read: int = 0
    records: list[AnswerRecord] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    scale: int | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def has_scores(self) -> bool:
        """True when some record carries imported scores."""
        return any(r.scores for r in self.records)


def parse_answers(path: str | Path, *, fmt: str = "auto", scale: int | None = None) -> AnswerParseResult:
    """Read an answer file.

    Args:
        path: the file; shown in messages as given.
        fmt: one of :data:`ANSWER_FORMATS`.
        scale: the maximum score per dimension of imported scores (``--scale``); required when the file has
            scores.

    Returns:
        The valid records and the problems of the others (bad JSON, missing or mistyped fields).

    Raises:
        BenchwrightError: unknown format, or a scale below 1.
        InputFileError: the file is missing, empty, binary (e.g. Parquet) or not UTF-8; it has scores and no
            scale; the scores
            contradict the scale (a value above it, ``total`` or ``rate`` inconsistent with it) — every such
            record is named with its line and field.
    """
    if fmt not in ANSWER_FORMATS:
        raise BenchwrightError(f"unknown answer format {fmt!r}; use one of {', '.join(ANSWER_FORMATS)}")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, int) or scale < 1):
        raise BenchwrightError(f"--scale must be a whole number of at least 1, not {scale!r}")
    display = str(path)
    _refuse_binary(Path(path), display)
    text = read_text(Path(path), display)
    sink = ParseResult("answers", display)
    objects = list(json_lines(text, display, sink))
    shape = fmt if fmt != "auto" else _detect(objects)
    result = AnswerParseResult(shape, display, read=sink.read, problems=list(sink.problems), scale=scale)
    reader = {"jsonl": _read_jsonl, "swe-qa-agent": _read_agent, "swe-qa-error-analysis": _read_error_analysis}
    repaired = set(sink.repaired_lines)
    for line, rec in objects:
        problems: list[InputProblem] = []
        record = reader[shape](rec, display, line, problems)
        if problems or record is None:
            result.problems.extend(problems)
        else:
            if line in repaired:
                record.text_repaired = True
                record.notes.append(f"line {line}: invalid Unicode (a lone surrogate) stored as U+FFFD")
            result.records.append(record)
    result.problems.sort(key=lambda p: (p.line or 0))
    _warn_ignored(result, objects, shape, scale)
    _check_scale(result, objects, shape)
    return result


_BINARY_MAGIC = ((b"PAR1", "Parquet"), (b"PK\x03\x04", "a zip archive"), (b"\x1f\x8b", "gzip"),
                 (b"SQLite format 3", "an SQLite database"))


def _refuse_binary(path: Path, display: str) -> None:
    """InputFileError when the file is plainly not text (Parquet, zip, gzip, SQLite, or NUL bytes)."""
    data = read_bytes(path, display)
    head = data[:8192]
    kind = next((name for magic, name in _BINARY_MAGIC if head.startswith(magic)), None)
    if kind is None and b"\x00" in head:
        kind = "binary"
    if kind is not None:
        raise InputFileError.single(
            display, f"not a JSON lines file (looks like {kind}); answers come as JSON lines, one object a line"
        )


def _warn_ignored(result: AnswerParseResult, objects: list[tuple[int, dict]], shape: str,
                  scale: int | None) -> None:
    """File-level warnings: scores the format ignores, a --scale for a file without scores."""
    if shape == "swe-qa-agent":
        with_scores = sum(1 for _, rec in objects if rec.get("scores") is not None)
        if with_scores:
            result.warnings.append(
                f"{_n(with_scores, 'record')} {'has' if with_scores == 1 else 'have'} 'scores', which the "
                "swe-qa-agent format ignores (kept only as extra fields, no judgment); to import them use "
                "--answer-format jsonl or swe-qa-error-analysis"
            )
    if scale is not None and not result.has_scores:
        result.warnings.append(f"--scale {scale} is ignored: the file has no imported scores")
        result.scale = None


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _detect(objects: list[tuple[int, dict]]) -> str:
    for _, rec in objects:
        if any(k in rec for k in _AGENT_MARKERS):
            return "swe-qa-agent"
        if "scores" in rec and ("error_analysis" in rec or "reference" in rec):
            return "swe-qa-error-analysis"
        return "jsonl"
    return "jsonl"


# ------------------------------------------------------------------------------------------ the readers
def _text(rec: dict, key: str, display: str, line: int, problems: list[InputProblem], *,
          required: bool) -> str | None:
    value = rec.get(key)
    if value is None:
        if required:
            problems.append(InputProblem(display, line, key, "required field is missing"))
        return None
    if not isinstance(value, str):
        problems.append(InputProblem(display, line, key, f"must be a string, found {json_type(value)}"))
        return None
    if not value.strip():
        if required:
            problems.append(InputProblem(display, line, key, "must not be empty"))
        return None
    return value


def _first_present(rec: dict, keys: tuple[str, ...]) -> str | None:
    return next((k for k in keys if rec.get(k) is not None), None)


def _answer_text(rec: dict, display: str, line: int, problems: list[InputProblem],
                 notes: list[str]) -> tuple[str | None, str]:
    key = _first_present(rec, ANSWER_FIELDS)
    if key is None:
        problems.append(InputProblem(
            display, line, "answer", f"required field is missing (accepted names: {', '.join(ANSWER_FIELDS)})"
        ))
        return None, "answer"
    text = _text(rec, key, display, line, problems, required=True)
    if text is not None:
        others = [k for k in ANSWER_FIELDS if k != key and rec.get(k) is not None and rec.get(k) != rec[key]]
        if others:
            notes.append(
                f"line {line}: has '{key}' and {', '.join(repr(k) for k in others)} with different texts; "
                f"used '{key}' (preferred order: {', '.join(ANSWER_FIELDS)})"
            )
    return text, key


def _trajectory(rec: dict, display: str, line: int, problems: list[InputProblem]) -> Any:
    value = rec.get("trajectory")
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            return json.loads(value)
        except json.JSONDecodeError as e:
            problems.append(InputProblem(
                display, line, "trajectory",
                f"holds no valid JSON ({e.msg} at line {e.lineno}, column {e.colno} of the trajectory)",
            ))
            return None
    if isinstance(value, list | dict):
        return value
    problems.append(InputProblem(
        display, line, "trajectory", f"must be a JSON array or object (or a string holding one), found {json_type(value)}"
    ))
    return None


def _scores(rec: dict, display: str, line: int, problems: list[InputProblem], *,
            required: bool) -> dict[str, int | float] | None:
    value = rec.get("scores")
    if value is None:
        if required:
            problems.append(InputProblem(display, line, "scores", "required field is missing"))
        return None
    if not isinstance(value, dict) or not value:
        problems.append(InputProblem(
            display, line, "scores", f"must be a non-empty object of dimension name to number, found {json_type(value)}"
        ))
        return None
    out: dict[str, int | float] = {}
    for key, score in value.items():
        if not str(key).strip():
            problems.append(InputProblem(display, line, "scores", "a dimension name is empty"))
        elif isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            problems.append(InputProblem(display, line, f"scores.{key}", f"must be a number, found {json_type(score)}"))
        elif score < 0:
            problems.append(InputProblem(
                display, line, f"scores.{key}", f"scores.{key} = {score:g} is negative; scores are 0 or more"
            ))
        else:
            out[str(key)] = score
    return out if len(out) == len(value) else None


def _critique(rec: dict, display: str, line: int, problems: list[InputProblem]) -> str | None:
    key = _first_present(rec, CRITIQUE_FIELDS)
    return _text(rec, key, display, line, problems, required=False) if key else None


def _read_jsonl(rec: dict, display: str, line: int, problems: list[InputProblem]) -> AnswerRecord | None:
    notes: list[str] = []
    text, answer_key = _answer_text(rec, display, line, problems, notes)
    id_key = _first_present(rec, PAIR_ID_FIELDS)
    pair_ref = None
    if id_key is not None:
        value = rec[id_key]
        if isinstance(value, bool) or not isinstance(value, str | int):
            problems.append(InputProblem(display, line, id_key, f"must be a string, found {json_type(value)}"))
        else:
            pair_ref = str(value).strip() or None
    question = _text(rec, "question", display, line, problems, required=False)
    if pair_ref is None and question is None and not any(p.field in (id_key, "question") for p in problems):
        problems.append(InputProblem(
            display, line, "question",
            f"the record names no Q&A pair: give qa_pair_id (or {', '.join(PAIR_ID_FIELDS[1:])}) or the exact question",
        ))
    trajectory = _trajectory(rec, display, line, problems)
    scores = _scores(rec, display, line, problems, required=False)
    critique = _critique(rec, display, line, problems)
    used = {answer_key, "question", "trajectory", "scores", *PAIR_ID_FIELDS, *CRITIQUE_FIELDS}
    return AnswerRecord(
        line=line, text=text or "", pair_ref=pair_ref, questions=[("question", question)] if question else [],
        trajectory=trajectory, scores=scores, critique=critique,
        extra={k: v for k, v in rec.items() if k not in used}, pair_field=id_key or "qa_pair_id", notes=notes,
    )


def _read_agent(rec: dict, display: str, line: int, problems: list[InputProblem]) -> AnswerRecord | None:
    text = _text(rec, "answer", display, line, problems, required=True)
    origin = _text(rec, "origin_question", display, line, problems, required=False)
    rewrite = _text(rec, "question", display, line, problems, required=False)
    if origin is None and rewrite is None and not any(
        p.field in ("origin_question", "question") for p in problems
    ):
        problems.append(InputProblem(display, line, "origin_question",
                                     "required field is missing (and so is question): nothing to match the answer by"))
    trajectory = _trajectory(rec, display, line, problems)
    questions = [(k, q) for k, q in (("origin_question", origin), ("question", rewrite)) if q]
    return AnswerRecord(
        line=line, text=text or "", questions=questions, trajectory=trajectory,
        extra={k: v for k, v in rec.items() if k not in ("answer", "trajectory")},
    )


def _read_error_analysis(rec: dict, display: str, line: int, problems: list[InputProblem]) -> AnswerRecord | None:
    question = _text(rec, "question", display, line, problems, required=True)
    text = _text(rec, "answer", display, line, problems, required=True)
    scores = _scores(rec, display, line, problems, required=True)
    critique = _text(rec, "error_analysis", display, line, problems, required=False)
    for key in ("total", "rate"):
        value = rec.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            problems.append(InputProblem(display, line, key, f"must be a number, found {json_type(value)}"))
    total = rec.get("total")
    if (scores is not None and isinstance(total, int | float) and not isinstance(total, bool)
            and not math.isclose(total, sum(scores.values()), abs_tol=1e-9)):
        problems.append(InputProblem(
            display, line, "total", f"= {total} but the scores add up to {sum(scores.values())}"
        ))
    return AnswerRecord(
        line=line, text=text or "", questions=[("question", question)] if question else [], scores=scores,
        critique=critique,
        extra={k: v for k, v in rec.items() if k not in ("question", "answer", "scores", "error_analysis")},
    )


# --------------------------------------------------------------------------------------------- the scale
def _rate_of(rec: dict) -> float | None:
    rate = rec.get("rate")
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate):
        return None
    return float(rate)


def _implied_scale(rec: AnswerRecord, raw: dict) -> float | None:
    """The per-dimension maximum the record's own ``rate`` implies: sum / rate / dimensions."""
    rate = _rate_of(raw)
    if not rec.scores or not rate:
        return None
    return sum(rec.scores.values()) / rate / len(rec.scores)


def _check_scale(result: AnswerParseResult, objects: list[tuple[int, dict]], shape: str) -> None:
    scored = [r for r in result.records if r.scores]
    if not scored:
        return
    raw = dict(objects)
    display = result.file
    top_line, top_key, top = max(
        ((r.line, k, v) for r in scored for k, v in r.scores.items()), key=lambda t: (t[2], -t[0])
    )
    if result.scale is None:
        implied = sorted({round(s, 3) for r in scored if (s := _implied_scale(r, raw[r.line])) is not None})
        hint = ""
        if len(implied) == 1:
            n = len(scored[0].scores)
            s = implied[0]
            shown = int(s) if float(s).is_integer() else s
            hint = (f" The records' own 'rate' equals total / {round(s * n, 3):g}, which suggests {shown:g} "
                    f"per dimension over {n} dimensions.")
        raise InputFileError.single(
            display,
            f"the answers carry imported scores ({len(scored)} records) but no scale was given. The highest "
            f"score is {top:g} (line {top_line}, scores.{top_key}).{hint} Pass --scale N, the maximum score "
            "per dimension, after checking the source of the scores (benchwright never guesses a scale).",
        )
    problems: list[InputProblem] = []
    for r in scored:
        for key, value in r.scores.items():
            if value > result.scale:
                top_note = "" if problems else f" (the highest score in the file is {top:g})"
                problems.append(InputProblem(
                    display, r.line, f"scores.{key}",
                    f"scores.{key} = {value:g} is above --scale {result.scale}{top_note}; pass the scale the "
                    "scores were given on",
                ))
        rate = _rate_of(raw[r.line])
        if shape == "swe-qa-error-analysis" and rate is not None and not any(p.line == r.line for p in problems):
            expected = sum(r.scores.values()) / (len(r.scores) * result.scale)
            if abs(expected - rate) > _RATE_TOLERANCE:
                implied = _implied_scale(r, raw[r.line])
                also = f" (the rate implies a scale of {implied:g})" if implied else ""
                problems.append(InputProblem(
                    display, r.line, "rate",
                    f"rate = {rate:g} but total / ({len(r.scores)} x --scale {result.scale}) = {expected:.4g}"
                    f"{also}; pass the scale the scores were given on",
                ))
    if problems:
        raise InputFileError(problems)


__all__ = ["ANSWER_FIELDS", "ANSWER_FORMATS", "PAIR_ID_FIELDS", "AnswerParseResult", "AnswerRecord", "parse_answers"]
