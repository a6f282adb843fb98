"""Importing a NITR checkout: its cases, evaluators and SPEC files as benchwright probes.

A NITR checkout (github.com/ucr-riple/NITR) holds, per case ``<id>`` (``021.inline-filter-entrypoint-reuse``)::

    cases/<id>/                 starter code, CMakeLists.txt, TASK.md or TASK1.md ... TASKn.md
    evaluator/<id>/             pipeline.json, checks/, hidden tests/, data/
    docs/<id>/SPEC.md           the hidden spec (primary dimension, secondary dimensions, language ...)
    docs/design_matrix.md       the primary dimension and granularity of every case (a table)
    evaluator/shared/, third_party/, CMakeLists.txt ...   run-time files shared by every case

:func:`read_nitr_checkout` reads every case (or the named ones) into :class:`~benchwright.core.probes.model.Probe`
objects whose ``checkout_root`` is the checkout, so a run's workspace gets NITR's layout and run-time files
(:mod:`benchwright.core.probes._workspace`). Nothing is written into the checkout.

``SPEC.md`` comes in three layouts, all read by :func:`parse_nitr_spec`:

* a YAML block in a fenced section (a ```` ```yaml ```` fence), or YAML front matter between ``---`` lines, or
  bare ``key: value`` lines opening the file: ``primary_dimension``, ``secondary_dimensions`` (a list, a
  string or ``[]``), ``title``, ``language``, ``difficulty``, ``domain``, ``granularity``, ``paired_with``;
* Markdown: ``- **Primary maintainability dimension:** side_effect_containment``, ``Primary dimension: D9``,
  ``- **Secondary:** API Stability, Responsibility Boundaries``, or a heading / a ``Primary Dimension:`` line
  with the value in the list under it.

Dimension names (slugs, phrases, codes and mixed forms) map to D-codes with
:func:`~benchwright.core.probes.model.dimension_code`; a name that maps to none is an error naming the file,
the line and the value, with the accepted names. The YAML value wins over the Markdown one; when both are
given and differ, that is an error too. A spec without a primary dimension (NITR's oldest cases only
give ``domain`` and ``principle``) takes the one ``docs/design_matrix.md`` records for the case; with neither,
the case is refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import InputFileError, InputProblem
from .importer import outward_symlinks, read_tasks
from .model import Probe, dimension_code, dimension_names
from .pipeline import parse_pipeline

SPEC_NAME = "SPEC.md"
DESIGN_MATRIX = Path("docs") / "design_matrix.md"
SPEC_TEXT_FIELDS = ("title", "language", "difficulty", "domain", "granularity", "paired_with")
"""YAML keys of a NITR spec kept as text (a number such as ``difficulty: 3`` becomes ``"3"``)."""

_FENCE = re.compile(r"^\s*```\s*(\S*)\s*$")
_PROSE_KEY = re.compile(
    r"^\s{0,3}(?:#{1,6}\s*|[-*+]\s+)?(?:\*\*|__)?\s*(primary|secondary)"
    r"(?:\s+maintainability)?(?:\s+(?:dimensions?|probe))?\s*(?:\*\*|__)?\s*(:)?\s*(?:\*\*|__)?\s*(.*?)\s*$",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(r"^\s*[-*+]\s+(.*\S)\s*$")


def _yaml_block(lines: list[str]) -> tuple[int, int, bool] | None:
    """``(first, end, declared)`` line indexes (0-based, end exclusive) of the spec's YAML metadata, or None;
    ``declared`` is False for bare ``key: value`` lines opening the file (which may be prose after all)."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None
    if lines[first].strip() == "---":
        for end in range(first + 1, len(lines)):
            if lines[end].strip() == "---":
                return first + 1, end, True
        return None
    if re.match(r"^[A-Za-z_][\w-]*\s*:\s", lines[first] + " "):
        end = first
        while end < len(lines) and lines[end].strip():
            end += 1
        return first, end, False
    for index, line in enumerate(lines):
        fence = _FENCE.match(line)
        if fence and fence.group(1).lower() in ("yaml", "yml"):
            for end in range(index + 1, len(lines)):
                if _FENCE.match(lines[end]):
                    return index + 1, end, True
    return None


def _read_yaml(lines: list[str], block: tuple[int, int, bool], file: str) -> tuple[dict[str, Any], dict[str, int]]:
    start, end, declared = block
    try:
        data = yaml.safe_load("\n".join(lines[start:end]))
    except yaml.YAMLError as error:
        if not declared:
            return {}, {}  # "Note: ..." lines opening a Markdown spec, not metadata
        mark = getattr(error, "problem_mark", None)
        line = start + 1 + (mark.line if mark is not None else 0)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise InputFileError.single(file, f"the YAML metadata cannot be read: {problem}", line=line) from None
    if not isinstance(data, dict):
        return {}, {}
    where: dict[str, int] = {}
    for index in range(start, end):
        match = re.match(r"^([A-Za-z_][\w-]*)\s*:", lines[index])
        if match:
            where.setdefault(match.group(1), index + 1)
    return data, where


def _prose_values(lines: list[str], skip: tuple[int, int, bool] | None) -> dict[str, tuple[str, int]]:
    """The first Markdown ``primary`` and ``secondary`` values: ``{kind: (text, line)}``; a key with its value
    in the list under it gives the items joined by ``, ``."""
    found: dict[str, tuple[str, int]] = {}
    for index, line in enumerate(lines):
        if skip and skip[0] - 1 <= index <= skip[1]:
            continue
        match = _PROSE_KEY.match(line)
        if not match:
            continue
        kind, colon, value = match.group(1).lower(), match.group(2), match.group(3)
        heading = line.lstrip().startswith("#")
        if kind in found or (not colon and not (heading and not value)):
            continue
        if value.lower().startswith(("and ", "&")):
            continue
        if not value:
            items: list[str] = []
            for follow in lines[index + 1:]:
                item = _LIST_ITEM.match(follow)
                if item:
                    items.append(item.group(1))
                elif follow.strip() and not items:
                    items.append(follow.strip())
                    break
                elif follow.strip() or items:
                    break
            value = ", ".join(items)
        if value:
            found[kind] = (value.strip().rstrip("."), index + 1)
    return found


def _clean(value: str) -> str:
    return re.sub(r"[`*]", "", value).strip()


def _secondary_names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [_clean(str(v)) for v in value if str(v).strip()]
    text = _clean(str(value))
    if text.lower() in ("", "none", "n/a", "[]", "-"):
        return []
    codes = re.findall(r"\bD\d+\b[^,;]*", text)
    return [c.strip() for c in codes] if codes else [part.strip() for part in re.split(r"[,;]", text) if part.strip()]


def _unmappable(file: str, line: int | None, field: str, value: str) -> InputProblem:
    return InputProblem(file, line, field, f"{value!r} is not a dimension name; accepted: {dimension_names()}")


def design_matrix(checkout: str | Path) -> dict[str, tuple[str, str, int]]:
    """The rows of a checkout's ``docs/design_matrix.md`` table: case number (``"021"``) -> (D-code,
    granularity, line). Rows whose dimension does not map are left out; a missing file gives ``{}``."""
    path = Path(checkout) / DESIGN_MATRIX
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    rows: dict[str, tuple[str, str, int]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        if len(cells) >= 2:
            case = re.match(r"^(\d{3})\b", cells[0])
            code = dimension_code(cells[1]) if case else None
            if case and code:
                rows.setdefault(case.group(1), (code, cells[2].lower() if len(cells) > 2 else "", number))
    return rows


def parse_nitr_spec(
    text: str, file: str | Path = SPEC_NAME, *, matrix_row: tuple[str, str, int] | None = None,
    matrix_file: str | Path = DESIGN_MATRIX,
) -> dict[str, Any]:
    """The fields of a NITR ``SPEC.md`` (see the module docstring): ``primary_dimension``,
    ``secondary_dimensions`` (D-codes, in order, without the primary), and when given ``title``, ``language``,
    ``difficulty``, ``domain``, ``granularity`` (``micro`` / ``multi-step``), ``paired_with``.

    ``matrix_row`` is the case's row of the design matrix (:func:`design_matrix`), used when the spec names
    no primary dimension (``matrix_file`` names it in messages).

    Raises:
        InputFileError: unreadable YAML metadata (with its line), a dimension name that maps to no D-code
            (file, line, value and the accepted names), YAML and Markdown primaries that differ, or no primary
            dimension in the spec nor in the design matrix.
    """
    file = str(file)
    lines = text.splitlines()
    block = _yaml_block(lines)
    data, where = _read_yaml(lines, block, file) if block else ({}, {})
    prose = _prose_values(lines, block)
    problems: list[InputProblem] = []
    fields: dict[str, Any] = {}
    primary: str | None = None
    yaml_primary = data.get("primary_dimension")
    if yaml_primary not in (None, ""):
        line = where.get("primary_dimension")
        primary = dimension_code(_clean(str(yaml_primary)))
        if primary is None:
            problems.append(_unmappable(file, line, "primary_dimension", str(yaml_primary)))
    if "primary" in prose:
        value, line = prose["primary"]
        code = dimension_code(_clean(value))
        if code is None:
            if primary is None and not problems:
                problems.append(_unmappable(file, line, "Primary dimension", value))
        elif primary is None and not problems:
            primary = code
        elif primary is not None and code != primary:
            problems.append(InputProblem(
                file, line, "Primary dimension",
                f"{value!r} ({code}) differs from primary_dimension {yaml_primary!r} ({primary}) on line "
                f"{where.get('primary_dimension')}; a case has exactly one primary dimension",
            ))
    if primary is None and not problems:
        if matrix_row is not None:
            primary = matrix_row[0]
        else:
            problems.append(InputProblem(
                file, None, "primary_dimension",
                f"missing, and {matrix_file} has no row for this case; add 'primary_dimension: <name>' "
                f"(accepted: {dimension_names()})",
            ))
    if primary is not None:
        fields["primary_dimension"] = primary
    secondary_source: tuple[Any, int | None, str] | None = None
    if "secondary_dimensions" in data:
        secondary_source = (data["secondary_dimensions"], where.get("secondary_dimensions"), "secondary_dimensions")
    elif "secondary" in prose:
        secondary_source = (prose["secondary"][0], prose["secondary"][1], "Secondary dimensions")
    secondary: list[str] = []
    if secondary_source is not None:
        raw, line, label = secondary_source
        for name in _secondary_names(raw):
            code = dimension_code(name)
            if code is None:
                problems.append(_unmappable(file, line, label, name))
            elif code != primary and code not in secondary:
                secondary.append(code)
    fields["secondary_dimensions"] = secondary
    for key in SPEC_TEXT_FIELDS:
        value = data.get(key)
        if value not in (None, ""):
            fields[key] = str(value).strip()
    if "title" not in fields:
        heading = next((m.group(1) for m in (re.match(r"^#\s+(.*\S)", line) for line in lines) if m), None)
        if heading:
            fields["title"] = heading
    if "granularity" in fields:
        value = re.sub(r"[\s_-]+", "", fields["granularity"].lower())
        if value.startswith("micro"):
            fields["granularity"] = "micro"
        elif value.startswith("multi"):
            fields["granularity"] = "multi-step"
        else:
            problems.append(InputProblem(file, where.get("granularity"), "granularity", "expected micro or multi-step"))
    if problems:
        raise InputFileError(problems)
    return fields


def nitr_case_ids(checkout: str | Path) -> list[str]:
    """The case folder names of a checkout's ``cases/`` (those with an ``evaluator/<id>/``), sorted."""
    root = Path(checkout)
    return sorted(p.name for p in (root / "cases").iterdir() if p.is_dir() and (root / "evaluator" / p.name).is_dir())


def is_nitr_checkout(path: str | Path) -> bool:
    """True for a folder laid out as a NITR checkout (``cases/`` and ``evaluator/`` with at least one case)."""
    root = Path(path)
    return (root / "cases").is_dir() and (root / "evaluator").is_dir() and bool(nitr_case_ids(root))


def _pick(ids: Sequence[str], wanted: Sequence[str], root: Path) -> list[str]:
    chosen: list[str] = []
    unknown: list[str] = []
    for item in wanted:
        name = item.strip().rstrip("/").split("/")[-1]
        hits = [i for i in ids if i == name or i.split(".", 1)[0] == name]
        if len(hits) == 1:
            chosen.extend(h for h in hits if h not in chosen)
        else:
            unknown.append(item)
    if unknown:
        raise InputFileError.single(
            root / "cases", f"no case {', '.join(repr(u) for u in unknown)} in this checkout; its cases: {', '.join(ids)}",
            field="--case",
        )
    return chosen


def read_nitr_case(checkout: str | Path, case_id: str, *, matrix: dict[str, tuple[str, str, int]] | None = None) -> Probe:
    """One case of a NITR checkout as a probe (id: the case folder name).

    Raises:
        InputFileError: no evaluator folder or ``pipeline.json``, no task files, a spec problem
            (:func:`parse_nitr_spec`), a pipeline problem, or a granularity that the task files contradict.
    """
    root = Path(checkout).resolve()
    case, evaluator = root / "cases" / case_id, root / "evaluator" / case_id
    for folder, what in ((case, "case"), (evaluator, "evaluator")):
        if not folder.is_dir():
            raise InputFileError.single(folder, f"no such {what} folder")
    spec_path = next((p for p in (root / "docs" / case_id / SPEC_NAME, case / SPEC_NAME) if p.is_file()), None)
    rows = design_matrix(root) if matrix is None else matrix
    row = rows.get(case_id.split(".", 1)[0])
    problems: list[InputProblem] = outward_symlinks(case, root) + outward_symlinks(evaluator, root)
    fields: dict[str, Any] = {}
    if spec_path is None:
        if row is None:
            problems.append(InputProblem(str(root / "docs" / case_id / SPEC_NAME), None, None,
                                         "no such file, and docs/design_matrix.md has no row for this case"))
        else:
            fields = {"primary_dimension": row[0], "secondary_dimensions": []}
    else:
        try:
            raw = spec_path.read_bytes()
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:  # refused, as the Q&A imports refuse invalid UTF-8
            problems.append(InputProblem(str(spec_path), raw.count(b"\n", 0, error.start) + 1, None,
                                         f"not UTF-8 text: byte {raw[error.start]:#04x} at offset {error.start}"))
        except OSError as error:
            problems.append(InputProblem(str(spec_path), None, None, f"cannot be read: {error}"))
        else:
            try:
                fields = parse_nitr_spec(text, spec_path, matrix_row=row, matrix_file=root / DESIGN_MATRIX)
            except InputFileError as error:
                problems.extend(error.problems)
    try:
        granularity, steps = read_tasks(case)
    except InputFileError as error:
        problems.extend(error.problems)
        granularity, steps = None, []
    try:
        pipeline = parse_pipeline(evaluator / "pipeline.json")
    except InputFileError as error:
        problems.extend(error.problems)
        pipeline = None
    if granularity and fields.get("granularity", granularity) != granularity:
        problems.append(InputProblem(str(spec_path), None, "granularity",
                                     f"says {fields['granularity']} but the task files make a {granularity} probe"))
    if problems:
        raise InputFileError(problems)
    try:
        return Probe(
            id=case_id, title=fields.get("title") or case_id, primary_dimension=fields["primary_dimension"],
            secondary_dimensions=fields.get("secondary_dimensions", []), granularity=granularity, steps=steps,
            case_dir=str(case), evaluator_dir=str(evaluator), pipeline=pipeline,
            spec_file=str(spec_path) if spec_path else None, checkout_root=str(root),
            language=fields.get("language", ""), difficulty=fields.get("difficulty", ""),
            domain=fields.get("domain", ""), paired_with=fields.get("paired_with", ""),
        )
    except ValidationError as error:
        raise InputFileError([
            InputProblem(str(spec_path or case), None, ".".join(str(p) for p in item["loc"]) or None,
                         str(item["msg"]).removeprefix("Value error, "))
            for item in error.errors()
        ]) from None


def read_nitr_checkout(checkout: str | Path, case_ids: Sequence[str] = ()) -> list[Probe]:
    """Every case of a NITR checkout (or those of ``case_ids``: folder names or their numbers, ``021``) as
    probes, in case order. All or nothing: every problem of every case is reported at once.

    Raises:
        InputFileError: ``checkout`` is not a NITR checkout, an unknown case id (the known ones are listed),
            or any problem of :func:`read_nitr_case`, each naming its file.
    """
    probes, problems = read_nitr_cases(checkout, case_ids)
    if problems:
        raise InputFileError([p for case_problems in problems.values() for p in case_problems])
    return probes


def read_nitr_cases(checkout: str | Path, case_ids: Sequence[str] = ()) -> tuple[list[Probe], dict[str, list[InputProblem]]]:
    """The cases of a checkout that read, and the problems of each case that does not (case id -> problems),
    for an import that takes the valid cases (``--skip-invalid``).

    Raises:
        InputFileError: ``checkout`` is not a NITR checkout, or an unknown case id.
    """
    root = Path(checkout)
    if not is_nitr_checkout(root):
        raise InputFileError.single(root, "not a NITR checkout: it needs cases/<id>/ and evaluator/<id>/ folders")
    ids = nitr_case_ids(root)
    chosen = _pick(ids, case_ids, root) if case_ids else ids
    matrix = design_matrix(root)
    probes: list[Probe] = []
    problems: dict[str, list[InputProblem]] = {}
    for case_id in chosen:
        try:
            probes.append(read_nitr_case(root, case_id, matrix=matrix))
        except InputFileError as error:
            problems[case_id] = list(error.problems)
    return probes, problems
