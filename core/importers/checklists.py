"""Reading checklists from files: our JSON schema, and two foreign rubric shapes converted to ours.

- ``benchwright``: ``{"qa_pair_id" | "question", "items": [...]}`` objects (one JSON object, a list of
  them, ``{"checklists": [...]}``, or JSON lines), items as in :class:`benchwright.core.checklist.ChecklistItem`.
- ``rubberduck``: RubberDuckBench point rubrics: a list of ``{desc, points, subitems: [{desc, points, lie}]}``,
  where each subitem is a deduction and a grader may apply several of an item's deductions at once (the
  item then scores ``points`` minus their sum, never below 0). Converted per item: key point = ``desc``,
  weight = ``points``, and one rubric tier for every score the deductions can reach: ``points``, ``points``
  minus the sum of every subset of the deductions (clamped at 0), and 0. A tier's criterion names the single
  deductions of that size (equal scores joined) or, for a score only a combination reaches, the combination
  of fewest deductions. :func:`conversion_notes` says how many scores each item allows.
- ``checkeval``: CheckEval yes/no question lists: YAML or JSON ``{definition, sub_aspect: {name: question}}``,
  or a list of questions. A sub-aspect's text may hold several questions (CheckEval's elaborated lists fold
  them into one YAML string; CheckEval splits them after each ``?``, and so do we). Each question becomes
  a binary knowledge item of weight 1.

Conversions never rescale: a converted checklist that breaks the RepoProbe rules (for example weights
summing to 8, or 6 questions) is returned with its violations, to be stored as a draft and fixed by hand.
A clarity item is added when the source has none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..checklist import Checklist, ChecklistItem, ItemKind, RubricTier, Violation, clarity_item, validate
from ..errors import InputFileError, InputProblem
from ..text import repair_value
from .base import read_text, text_lines

CHECKLIST_FORMATS = ("auto", "benchwright", "rubberduck", "checkeval")


@dataclass
class ChecklistRecord:
    """One checklist read from a file, not yet matched to a stored pair.

    Attributes:
        pair_ref: the pair's id, or None when the file names the pair by ``question`` (or not at all).
        question: the exact question text, when the file names the pair that way.
        checklist: the checklist (possibly breaking the rules).
        violations: :func:`benchwright.core.checklist.validate` of it.
        source_format: ``benchwright``, ``rubberduck`` or ``checkeval``.
        line: where the record starts in the file (1-based), for messages.
    """

    pair_ref: str | None
    question: str | None
    checklist: Checklist
    source_format: str
    line: int | None = None
    violations: list[Violation] = field(default_factory=list)
    draft: bool = False
    """True when the record itself says ``"draft": true`` (an exported draft stays a draft)."""
    text_repaired: bool = False
    """The record's text held lone surrogates (``\\udc81`` escapes), read as U+FFFD (:func:`~..text.repair_value`)."""


def _with_clarity(items: list[ChecklistItem]) -> Checklist:
    if not any(i.kind is ItemKind.CLARITY for i in items):
        items = [*items, clarity_item()]
    return Checklist(items=items)


def convert_rubberduck(rubric: list[dict], display: str = "<rubric>", line: int | None = None) -> Checklist:
    """A RubberDuckBench point rubric as a checklist (see the module docstring).

    Every score a grader can give by applying any subset of an item's deductions is an allowed score
    (RubberDuckBench's human graders combine deductions: 2a+2b+2c on a 4-point item scores 1). A deduction
    larger than the item's points counts as 0; a deduction of 0 or fewer points is kept as a tier of its own
    (``points - deduction``), which validation reports.

    Raises:
        InputFileError: an item lacks ``desc`` or integer ``points``, or a deduction has no integer
            ``points`` or a ``desc`` that is not text.
    """
    items: list[ChecklistItem] = []
    problems: list[InputProblem] = []
    for n, raw in enumerate(rubric, start=1):
        where = f"item {n}"
        if not isinstance(raw, dict) or not isinstance(raw.get("desc"), str) or isinstance(raw.get("points"), bool) \
                or not isinstance(raw.get("points"), int):
            problems.append(InputProblem(display, line, where, "needs a text 'desc' and integer 'points'"))
            continue
        weight = raw["points"]
        tiers: dict[int, list[str]] = {weight: [f"Fully satisfies: {raw['desc']}"]}
        deductions: list[tuple[int, str]] = []
        for m, sub in enumerate(raw.get("subitems") or [], start=1):
            if not isinstance(sub, dict) or isinstance(sub.get("points"), bool) or not isinstance(sub.get("points"), int):
                problems.append(InputProblem(display, line, f"{where}.subitems[{m}]", "needs integer 'points'"))
                continue
            if not isinstance(sub.get("desc", ""), str):
                problems.append(InputProblem(display, line, f"{where}.subitems[{m}]", "'desc' must be text"))
                continue
            label = " (a false claim)" if sub.get("lie") else ""
            text = f"{sub.get('desc', '').strip()}{label}"
            if sub["points"] <= 0:
                tiers.setdefault(weight - sub["points"], []).append(text)
                continue
            deductions.append((sub["points"], text))
            tiers.setdefault(max(weight - sub["points"], 0), []).append(text)
        for score, combination in _reachable_scores(weight, [d for d, _ in deductions]).items():
            if score not in tiers:
                parts = " + ".join(f"(-{deductions[i][0]}) {deductions[i][1]}" for i in combination)
                tiers[score] = [f"Several deductions together: {parts}"]
        tiers.setdefault(0, ["Does not address the point, or contradicts it."])
        items.append(ChecklistItem(
            kind=ItemKind.KNOWLEDGE, key_point=raw["desc"].strip(), weight=weight,
            rubric=[RubricTier(score=s, criterion=" / ".join(c)) for s, c in sorted(tiers.items(), reverse=True)],
        ))
    if problems:
        raise InputFileError(problems)
    return _with_clarity(items)


def _reachable_scores(weight: int, deductions: list[int]) -> dict[int, tuple[int, ...]]:
    """Every score ``weight - sum(subset)`` (clamped at 0) over the subsets of the positive ``deductions``,
    each with the subset of fewest deductions reaching it (indices into ``deductions``, earliest first).

    Dynamic programming over scores (at most ``weight + 1`` of them), so a rubric with many deductions costs
    ``len(deductions) * weight`` steps, not ``2 ** len(deductions)``.
    """
    best: dict[int, tuple[int, ...]] = {weight: ()}
    for i, d in enumerate(deductions):
        for score, combination in list(best.items()):
            reached = max(score - d, 0)
            candidate = (*combination, i)
            if reached not in best or len(candidate) < len(best[reached]):
                best[reached] = candidate
    return best


def conversion_notes(record: ChecklistRecord) -> list[str]:
    """What a conversion did that a reader of the file would not guess, one line per note.

    For a RubberDuckBench rubric: how many scores each knowledge item allows (every total its deductions can
    reach), e.g. ``item 2 (weight 4): 5 allowed scores (4, 3, 2, 1, 0)``. Other shapes have no notes.
    """
    if record.source_format != "rubberduck":
        return []
    return [
        f"item {n} (weight {it.weight}): {len(it.allowed_scores)} allowed scores "
        f"({', '.join(str(s) for s in reversed(it.allowed_scores))})"
        for n, it in enumerate(record.checklist.knowledge_items, start=1)
    ]


def convert_checkeval(data: Any, display: str = "<checkeval>") -> Checklist:
    """CheckEval yes/no questions as binary knowledge items of weight 1 (see the module docstring).

    Raises:
        InputFileError: no questions found.
    """
    questions: list[str] = []
    if isinstance(data, dict):
        sub = data.get("sub_aspect") or data.get("questions") or {}
        if isinstance(sub, dict):
            for value in sub.values():
                for q in value if isinstance(value, list) else _split_questions(value):
                    if isinstance(q, str) and q.strip():
                        questions.append(q.strip())
        elif isinstance(sub, list):
            questions = [q.strip() for q in sub if isinstance(q, str) and q.strip()]
    elif isinstance(data, list):
        questions = [q.strip() for q in data if isinstance(q, str) and q.strip()]
    if not questions:
        raise InputFileError.single(display, "no yes/no questions found (expected sub_aspect: {name: question})")
    items = [
        ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=q, weight=1, rubric=[
            RubricTier(score=1, criterion=f"Yes: {q}"), RubricTier(score=0, criterion="No."),
        ])
        for q in questions
    ]
    return _with_clarity(items)


def _split_questions(value: Any) -> list[Any]:
    """A sub-aspect's text as its questions: split after each ``?`` that ends a question (as CheckEval does)."""
    if not isinstance(value, str):
        return [value]
    return [q for q in re.split(r"(?<=\?)\s+", value.strip()) if q]


def _detect(obj: Any) -> str:
    if isinstance(obj, dict) and "items" in obj:
        return "benchwright"
    if isinstance(obj, dict) and ("sub_aspect" in obj or "questions" in obj):
        return "checkeval"
    if isinstance(obj, dict) and "rubric" in obj:
        return "rubberduck"
    if isinstance(obj, list) and obj and all(isinstance(x, dict) and "desc" in x for x in obj) \
            and any("points" in x for x in obj):
        return "rubberduck"  # an item without points is then reported by name, not as an unknown shape
    if isinstance(obj, list) and obj and all(isinstance(x, str) for x in obj):
        return "checkeval"
    return "unknown"


def _record(obj: Any, fmt: str, display: str, line: int | None, pair: str | None) -> ChecklistRecord:
    obj, repaired = repair_value(obj)
    ref = question = None
    if isinstance(obj, dict):
        ref = obj.get("qa_pair_id") or pair
        question = obj.get("question") if isinstance(obj.get("question"), str) else None
    else:
        ref = pair
    kind = _detect(obj) if fmt == "auto" else fmt
    try:
        if kind == "benchwright":
            checklist = Checklist.model_validate({"items": obj.get("items")} if isinstance(obj, dict) else obj)
        elif kind == "rubberduck":
            rubric = obj.get("rubric") if isinstance(obj, dict) else obj
            if not isinstance(rubric, list) or not rubric:
                raise InputFileError.single(display, "not a RubberDuckBench rubric (a list of {desc, points, "
                                            "subitems}, or an object with one under 'rubric')", line)
            checklist = convert_rubberduck(rubric, display, line)
        elif kind == "checkeval":
            checklist = convert_checkeval(obj, display)
        else:
            raise InputFileError.single(display, "not a checklist shape benchwright knows "
                                        "(benchwright items, RubberDuckBench rubric, CheckEval questions)", line)
    except ValidationError as e:
        raise InputFileError([
            InputProblem(display, line, ".".join(str(x) for x in err["loc"]), err["msg"]) for err in e.errors()
        ]) from None
    draft = isinstance(obj, dict) and obj.get("draft") is True
    return ChecklistRecord(ref, question, checklist, kind, line, validate(checklist), draft, repaired)


def read_checklists(path: str | Path, *, fmt: str = "auto", pair: str | None = None) -> list[ChecklistRecord]:
    """Every checklist in ``path`` (JSON, JSON lines or YAML), converted to our schema (a list: the whole file in
    memory; :func:`stream_checklists` reads JSON lines one line at a time).

    Args:
        fmt: one of :data:`CHECKLIST_FORMATS`; ``auto`` detects the shape of each record.
        pair: the pair a single-checklist file (a bare foreign rubric) belongs to.

    Raises:
        InputFileError: unreadable file, invalid JSON/YAML (line named), unknown shape, bad fields.
    """
    return list(stream_checklists(path, fmt=fmt, pair=pair).records)


@dataclass
class ChecklistStream:
    """The checklists of one file as they are read (:func:`stream_checklists`).

    Attributes:
        records: the records, in file order; iterating raises :class:`InputFileError` at the first bad one.
        total: how many records there are (JSON lines: the lines holding more than white space, counted without
            parsing them), for a progress bar.
    """

    records: Iterator[ChecklistRecord]
    total: int


def stream_checklists(path: str | Path, *, fmt: str = "auto", pair: str | None = None) -> ChecklistStream:
    """The checklists of ``path`` as :func:`read_checklists` reads them, but a JSON lines file is parsed one line
    at a time as ``records`` is iterated (memory flat in the file's size; issue 19). A file is JSON lines when its
    first line holding more than white space is a JSON value by itself and the whole file is not one JSON
    document; otherwise (one JSON document, YAML) it is read whole, as before.

    Raises:
        InputFileError: at once: unreadable or empty file, unknown ``fmt``, invalid JSON/YAML of a whole
            document; while iterating: a JSON line that does not parse or a record with bad fields (file and line
            named).
    """
    display = str(path)
    if fmt not in CHECKLIST_FORMATS:
        raise InputFileError.single(display, f"unknown checklist format {fmt!r}; use one of {', '.join(CHECKLIST_FORMATS)}")
    first = _first_json_line(Path(path), display)
    if first is not None:
        with Path(path).open("rb") as fh:
            total = sum(1 for raw in fh if raw.strip())
        if total > 1:
            return ChecklistStream(_json_lines(Path(path), display, fmt, pair), total)
    objects = _whole_document(read_text(Path(path), display), display)
    records = [r for line, obj in objects for r in _records_of(obj, fmt, display, line, pair)]
    return ChecklistStream(iter(records), len(records))


def _first_json_line(path: Path, display: str) -> Any:
    """The first line holding more than white space, parsed, when it starts with ``[`` or ``{`` and is a JSON
    value by itself; else None."""
    for _, raw in text_lines(path, display):
        if not raw.strip():
            continue
        if not raw.lstrip().startswith(("[", "{")):
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return None
    return None


def _json_lines(path: Path, display: str, fmt: str, pair: str | None) -> Iterator[ChecklistRecord]:
    for number, raw in text_lines(path, display):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            raise InputFileError.single(display, f"invalid JSON: {e.msg} at column {e.colno}", number) from None
        yield from _records_of(obj, fmt, display, number, pair)


def _whole_document(text: str, display: str) -> list[tuple[int | None, Any]]:
    """``[(line, object)]`` of a file read whole: one JSON document, JSON lines (a short file), or YAML."""
    objects: list[tuple[int | None, Any]] = []
    if text.lstrip().startswith(("[", "{")):
        try:
            return [(1, json.loads(text))]
        except json.JSONDecodeError as first_error:
            # JSON lines: one object a line
            for number, raw in enumerate(text.split("\n"), start=1):
                if not raw.strip():
                    continue
                try:
                    objects.append((number, json.loads(raw)))
                except json.JSONDecodeError as e:
                    # when the first line is no JSON value by itself, the file is not JSON lines but one
                    # JSON document, broken where the whole-file parse stopped
                    bad, at = (e, number) if objects else (first_error, first_error.lineno)
                    raise InputFileError.single(display, f"invalid JSON: {bad.msg} at column {bad.colno}", at) from None
            return objects
    import yaml

    try:
        return [(1, yaml.safe_load(text))]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        # the parser's own words, without its '<unicode string>' position lines (the line is named)
        words = ", ".join(x for x in (getattr(e, "context", None), getattr(e, "problem", None)) if x) or str(e)
        raise InputFileError.single(display, f"invalid YAML: {words}", mark.line + 1 if mark else None) from None


def _records_of(obj: Any, fmt: str, display: str, line: int | None, pair: str | None) -> list[ChecklistRecord]:
    if isinstance(obj, dict) and isinstance(obj.get("checklists"), list):
        return [_record(o, fmt, display, line, pair) for o in obj["checklists"]]
    if isinstance(obj, list) and obj and all(isinstance(o, dict) and "items" in o for o in obj):
        return [_record(o, fmt, display, line, pair) for o in obj]
    return [_record(obj, fmt, display, line, pair)]
