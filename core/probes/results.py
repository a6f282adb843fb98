"""Model results on NITR cases: the pass matrix, case dimensions, and the paper's aggregate tables.

NITR publishes one verdict per model configuration and case in ``docs/model_case_pass_matrix.csv``: a row per
configuration (``GPT-5.4 (API)``, ``Claude Opus 4.6 (Agt)``: the model and its evaluation regime), a column per
case number (``001`` ...), cells ``pass`` / ``fail`` / ``N/A`` (not evaluated), and the row's own
``pass_count``, ``total_count`` and ``pass_rate``. :func:`read_pass_matrix` reads it and checks those counts
against the cells; :func:`read_design_matrix` and :func:`read_case_list` read which dimension and granularity
each case has (``docs/design_matrix.md``, "Current primary-dimension assignment"; ``docs/cases.md``).

:func:`results_report` computes what NITR reports from those verdicts (NITR, Table 3 and its discussion): passes
per configuration and regime; per case, how many configurations pass it, with saturated (every configuration
passes) and unsolved (none does) cases flagged; micro versus multi-step cases per regime (NITR, Step 4:
"We use a micro probe when the targeted maintainability pressure can be exposed by a single localized change,
and a multi-step probe when it only becomes visible under continued evolution"); and pass rates per primary
dimension (Table 3, bottom row). Pure functions: no store, no files except the readers'.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, get_args

from ..errors import InputFileError, InputProblem, NotFoundError
from ..importers.base import read_text
from ..registry import Attribute, Names, Registry
from .model import DIMENSIONS, Expectation, Granularity

Regime = Literal["api", "agent"]
"""How a configuration was evaluated (NITR, Table 3): ``api`` (one model call per task, "API-only systems") or
``agent`` (the model inside a coding agent, "agent-mode systems")."""


@dataclass(frozen=True)
class RegimeSpec:
    """An evaluation regime: ``name`` (stored in ``model_results.regime``), ``labels`` (the suffixes NITR writes
    after a model's name, ``GPT-5.4 (API)``; the first is the one benchwright writes), ``description``."""

    name: str
    labels: tuple[str, ...]
    description: str = ""


REGIME_REGISTRY: Registry[RegimeSpec] = Registry("regime")
"""The evaluation regimes of NITR's Table 3, in the table's order."""

REGIME_REGISTRY.register(RegimeSpec("api", ("API",), "API-only: the model answers each task in one call"))
REGIME_REGISTRY.register(RegimeSpec("agent", ("Agt", "Agent"), "agent mode: the model inside a coding agent"))

REGIMES = Names(REGIME_REGISTRY)
"""Names of the regimes (a live view of the registry)."""

REGIME_LABELS = Attribute(REGIME_REGISTRY, "labels")
"""Regime -> the suffixes NITR writes for it (``API``; ``Agt``, ``Agent``)."""

Outcome = Expectation
"""A configuration's verdict on a case: ``pass`` or ``fail`` (the words of a variant's expectation; an oracle
``error`` is no verdict)."""
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)

GRANULARITIES: tuple[Granularity, ...] = get_args(Granularity)

PASS_MATRIX_IN_CHECKOUT = "docs/model_case_pass_matrix.csv"
"""Where a NITR checkout keeps its pass matrix (given a checkout's root, the import reads this file)."""

NOT_EVALUATED = ("n/a", "na", "-", "")
"""Cell values (case-insensitive) of a case a configuration was not evaluated on."""

_CONFIG_RE = re.compile(r"^(?P<model>.*\S)\s*\(\s*(?P<regime>[^()]+?)\s*\)$")
_COUNT_COLUMNS = ("pass_count", "total_count", "pass_rate")


@dataclass(frozen=True)
class Configuration:
    """A model evaluated in one regime: ``name`` as NITR writes it (``GPT-5.4 (API)``, spaces collapsed), ``model``
    (``GPT-5.4``) and ``regime`` (``api`` or ``agent``)."""

    name: str
    model: str
    regime: Regime


def parse_configuration(name: str) -> Configuration:
    """Split a configuration name such as ``GPT-5.4 (API)`` or ``Claude Opus 4.6 (Agt)`` into model and regime;
    the name is given back as NITR writes it (:func:`configuration_name`: ``x(agent)`` is ``x (Agt)``).

    Raises:
        ValueError: the name does not end with a regime in parentheses (``(API)``, ``(Agt)`` or ``(Agent)``);
            the message lists them.
    """
    text = " ".join(name.split())
    m = _CONFIG_RE.match(text)
    if m:
        label = m.group("regime").casefold()
        for regime, labels in REGIME_LABELS.items():
            if label in (x.casefold() for x in labels):
                return Configuration(configuration_name(m.group("model"), regime), m.group("model"), regime)
    accepted = ", ".join(f"({x})" for labels in REGIME_LABELS.values() for x in labels)
    raise ValueError(f"configuration {name!r} does not say its regime: end it with one of {accepted}")


def configuration_name(model: str, regime: Regime) -> str:
    """The configuration name NITR would write for a model in a regime: ``GPT-5.4 (Agt)``."""
    return f"{' '.join(model.split())} ({REGIME_LABELS[regime][0]})"


def case_number(case: str) -> str | None:
    """The three-digit case number of a NITR case id or number: ``021.inline-filter-entrypoint-reuse``,
    ``021-inline-filter`` and ``21`` give ``021``; an id that does not start with digits gives None."""
    m = re.match(r"^\s*(\d+)(?:$|[.\-_\s])", case)
    return m.group(1).zfill(3) if m else None


@dataclass(frozen=True)
class CaseResult:
    """One configuration's verdict on one case.

    Attributes:
        configuration, model, regime: see :class:`Configuration`.
        case: the case number (``021``).
        outcome: ``pass`` or ``fail``.
        line: the 1-based line of the pass matrix it was read from (None for results not read from a file).
    """

    configuration: str
    model: str
    regime: Regime
    case: str
    outcome: Outcome
    line: int | None = None


@dataclass(frozen=True)
class PassMatrix:
    """A pass matrix as read: ``file`` (as given), ``sha256`` of its bytes, the ``cases`` of its columns in
    order, the ``configurations`` of its rows in order, and every ``pass``/``fail`` cell as a
    :class:`CaseResult` (cells not evaluated are absent)."""

    file: str
    sha256: str
    cases: tuple[str, ...]
    configurations: tuple[Configuration, ...]
    results: tuple[CaseResult, ...]


def read_pass_matrix(path: str | Path, display: str | None = None) -> PassMatrix:
    """Read NITR's ``docs/model_case_pass_matrix.csv`` (a header ``model,001,002,...,pass_count,total_count,
    pass_rate``, then one row per configuration).

    Case columns are the columns named by a number; ``pass_count``, ``total_count`` and ``pass_rate`` are
    optional, and when present must agree with the row's cells (passes; passes plus fails; their ratio to 4
    decimals). Cells are ``pass``, ``fail`` or not evaluated (``N/A``, empty), case-insensitive.

    Raises:
        InputFileError: every problem found, each naming the file, the line and the column (field): no
            ``model`` column, an unknown or repeated column, a configuration without a regime or seen twice, a
            cell that is not a verdict, counts that disagree with the cells, a row of the wrong length, no rows.
    """
    path = Path(path)
    shown = display or str(path)
    text = read_text(path, shown)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    problems: list[InputProblem] = []

    def problem(line: int | None, column: str | None, message: str) -> None:
        problems.append(InputProblem(shown, line, column, message))

    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    header_line = 0
    for row in reader:
        if any(cell.strip() for cell in row):
            header, header_line = [c.strip() for c in row], reader.line_num
            break
    if header is None:
        raise InputFileError.single(shown, "the file has no header line")
    cases: list[tuple[int, str]] = []
    counts: dict[str, int] = {}
    config_col: int | None = None
    seen_cols: dict[str, int] = {}
    for i, name in enumerate(header):
        key = name.casefold()
        number = case_number(name) if re.fullmatch(r"\d+", name) else None
        ident = number or key
        if ident in seen_cols:
            problem(header_line, name, f"column {name!r} appears twice (columns {seen_cols[ident] + 1} and {i + 1})")
            continue
        seen_cols[ident] = i
        if key in ("model", "configuration", "config"):
            config_col = i
        elif number is not None:
            cases.append((i, number))
        elif key in _COUNT_COLUMNS:
            counts[key] = i
        else:
            problem(header_line, name or f"column {i + 1}",
                    "unknown column; expected model, case numbers (001, 002 ...), pass_count, total_count, pass_rate")
    if config_col is None:
        problem(header_line, None, "no 'model' column naming the configuration of each row")
    if not cases:
        problem(header_line, None, "no case columns (columns named by a case number: 001, 002 ...)")
    if problems:
        raise InputFileError(problems)

    configurations: list[Configuration] = []
    results: list[CaseResult] = []
    config_lines: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problem(line, None, f"{len(row)} cells, but the header has {len(header)} columns")
            continue
        raw_name = row[config_col].strip()
        try:
            config = parse_configuration(raw_name)
        except ValueError as e:
            problem(line, header[config_col], str(e))
            continue
        if config.name in config_lines:
            problem(line, header[config_col],
                    f"configuration {config.name!r} appears twice (lines {config_lines[config.name]} and {line})")
            continue
        config_lines[config.name] = line
        row_results: list[CaseResult] = []
        bad = False
        for i, number in cases:
            cell = row[i].strip()
            value = cell.casefold()
            if value in OUTCOMES:
                row_results.append(CaseResult(config.name, config.model, config.regime, number, value, line))
            elif value not in NOT_EVALUATED:
                problem(line, header[i], f"{cell!r} is not a verdict; expected pass, fail or N/A")
                bad = True
        if bad:
            continue
        passes = sum(r.outcome == "pass" for r in row_results)
        total = len(row_results)
        row_ok = _check_counts(row, counts, passes, total, lambda column, msg, _line=line: problem(_line, column, msg))
        if row_ok:
            configurations.append(config)
            results.extend(row_results)
    if not problems and not configurations:
        problem(None, None, "no configuration rows below the header")
    if problems:
        raise InputFileError(problems)
    return PassMatrix(shown, digest, tuple(n for _, n in cases), tuple(configurations), tuple(results))


def _check_counts(row: Sequence[str], counts: Mapping[str, int], passes: int, total: int, problem) -> bool:
    ok = True
    for column, actual in (("pass_count", passes), ("total_count", total)):
        if column not in counts:
            continue
        cell = row[counts[column]].strip()
        if not re.fullmatch(r"\d+", cell):
            problem(column, f"{cell!r} is not a whole number")
            ok = False
        elif int(cell) != actual:
            what = "pass cell" if column == "pass_count" else "pass and fail cell"
            problem(column, f"says {cell}, but the row has {actual} {what}{'' if actual == 1 else 's'}")
            ok = False
    if "pass_rate" in counts and ok:
        cell = row[counts["pass_rate"]].strip()
        try:
            rate = float(cell)
        except ValueError:
            problem("pass_rate", f"{cell!r} is not a number")
            return False
        expected = passes / total if total else 0.0
        if abs(rate - expected) > 0.00005 + 1e-9:
            problem("pass_rate", f"says {cell}, but {passes}/{total} is {expected:.4f}")
            ok = False
    return ok


@dataclass(frozen=True)
class CaseInfo:
    """What a case is, for the aggregates: ``case`` (number), ``case_id`` (``021.inline-filter-entrypoint-reuse``,
    or None when unknown), ``primary_dimension`` (``D1`` ... ``D9`` or None), ``granularity`` (``micro``,
    ``multi-step`` or None) and ``source`` (where it was read: ``docs/design_matrix.md line 212``)."""

    case: str
    case_id: str | None = None
    primary_dimension: str | None = None
    granularity: Granularity | None = None
    source: str = ""


def _granularity(value: str) -> Granularity | None:
    key = re.sub(r"[\s_\-]+", "", value.strip("*` ").casefold())
    return {"micro": "micro", "multistep": "multi-step"}.get(key)


def read_design_matrix(path: str | Path, display: str | None = None) -> dict[str, CaseInfo]:
    """Read the case table of NITR's ``docs/design_matrix.md`` ("Current primary-dimension assignment": rows
    ``| 021 inline-filter-entrypoint-reuse | D2 Reuse and Repo Awareness | micro |``) into
    ``{case number: CaseInfo}``.

    The table is the one whose header names ``Case``, ``Primary dimension`` and ``Granularity``. A dimension is
    a code ``D1`` ... ``D9``, optionally followed by its name (which must be that code's name); a granularity is
    ``micro`` or ``multi-step``.

    Raises:
        InputFileError: no such table, or rows with an unknown dimension or granularity or a case without a
            number; each problem names the file, the line, the column and the value, with the accepted values.
    """
    path = Path(path)
    shown = display or str(path)
    lines = read_text(path, shown).splitlines()
    problems: list[InputProblem] = []
    infos: dict[str, CaseInfo] = {}
    columns: dict[str, int] | None = None
    accepted_dims = "; ".join(f"{code} {name}" for code, name in DIMENSIONS.items())
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line.startswith("|"):
            columns = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if columns is None:
            names = [c.casefold() for c in cells]
            if {"case", "primary dimension", "granularity"} <= set(names):
                columns = {name: names.index(name) for name in ("case", "primary dimension", "granularity")}
            continue
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            continue
        if len(cells) <= max(columns.values()):
            problems.append(InputProblem(shown, n, None, f"{len(cells)} cells; the table has more columns"))
            continue
        case_cell, dim_cell, gran_cell = (cells[columns[k]] for k in ("case", "primary dimension", "granularity"))
        number = case_number(case_cell.strip("`"))
        if number is None:
            problems.append(InputProblem(shown, n, "Case", f"{case_cell!r} does not start with a case number"))
            continue
        m = re.fullmatch(r"`?(D\d+)`?\s*(.*)", dim_cell, flags=re.IGNORECASE)
        code = m.group(1).upper() if m else None
        if code not in DIMENSIONS or (m.group(2) and m.group(2).casefold() != DIMENSIONS[code].casefold()):
            problems.append(InputProblem(shown, n, "Primary dimension",
                                         f"{dim_cell!r} is not a dimension; accepted: {accepted_dims}"))
            continue
        granularity = _granularity(gran_cell)
        if granularity is None:
            problems.append(InputProblem(shown, n, "Granularity",
                                         f"{gran_cell!r} is not a granularity; accepted: micro, multi-step"))
            continue
        if number in infos:
            problems.append(InputProblem(shown, n, "Case", f"case {number} appears twice ({infos[number].source})"))
            continue
        infos[number] = CaseInfo(number, None, code, granularity, f"{path.name} line {n}")
    if not problems and not infos:
        problems.append(InputProblem(shown, None, None,
                                     "no case table (a Markdown table with columns Case, Primary dimension, "
                                     "Granularity)"))
    if problems:
        raise InputFileError(problems)
    return infos


def read_case_list(path: str | Path, display: str | None = None) -> dict[str, str]:
    """Read the case ids listed in NITR's ``docs/cases.md`` (list items such as
    ``- `021.inline-filter-entrypoint-reuse` ``) as ``{case number: case id}``, in file order.

    Raises:
        InputFileError: the file cannot be read, or lists no case.
    """
    shown = display or str(path)
    found: dict[str, str] = {}
    for line in read_text(Path(path), shown).splitlines():
        m = re.fullmatch(r"\s*[-*]\s+`?(\d+[.\-][\w.\-]+)`?\s*", line)
        if m and (number := case_number(m.group(1))) and number not in found:
            found[number] = m.group(1)
    if not found:
        raise InputFileError.single(shown, "lists no case (list items such as - `021.inline-filter-entrypoint-reuse`)")
    return found


# ------------------------------------------------------------------------------------------------ report
def rate(passes: int, total: int) -> float | None:
    """``passes / total``, or None when nothing was evaluated."""
    return passes / total if total else None


@dataclass(frozen=True)
class Tally:
    """Passes out of evaluated attempts (``rate`` is None when ``total`` is 0)."""

    passes: int
    total: int

    @property
    def rate(self) -> float | None:
        return rate(self.passes, self.total)

    def to_dict(self) -> dict:
        return {"passes": self.passes, "total": self.total, "rate": self.rate}


def _tally(results: Iterable[CaseResult]) -> Tally:
    rows = list(results)
    return Tally(sum(r.outcome == "pass" for r in rows), len(rows))


def _by_regime(results: Sequence[CaseResult]) -> dict[str, Tally]:
    return {regime: _tally(r for r in results if r.regime == regime) for regime in REGIMES}


@dataclass(frozen=True)
class ConfigurationRow:
    """A configuration's passes on the report's suite (``suite``) and on every case it was evaluated on
    (``evaluated``)."""

    configuration: str
    model: str
    regime: Regime
    suite: Tally
    evaluated: Tally


@dataclass(frozen=True)
class CaseRow:
    """A case: ``info``; ``tally`` over the configurations evaluated on it, ``by_regime``; the configurations
    passing it and those failing it (``passing``, ``failing``, in configuration order); ``saturated`` (every
    evaluated configuration passes), ``unsolved`` (none does); ``in_suite`` (counted in the aggregates)."""

    info: CaseInfo
    tally: Tally
    by_regime: dict[str, Tally]
    passing: tuple[str, ...]
    saturated: bool
    unsolved: bool
    in_suite: bool
    failing: tuple[str, ...] = ()


@dataclass(frozen=True)
class GroupRow:
    """An aggregate over a group of cases of the suite (a granularity or a dimension): ``key`` (``micro``,
    ``D6``), ``label`` (``multi-step``, ``Dependency Control``), ``cases`` (numbers), ``tally`` over every
    configuration and ``by_regime``."""

    key: str
    label: str
    cases: tuple[str, ...]
    tally: Tally
    by_regime: dict[str, Tally]


@dataclass(frozen=True)
class ResultsReport:
    """NITR's aggregate tables over model verdicts (NITR, Table 3 and its discussion).

    Attributes:
        suite: the case numbers the aggregates count. By default the cases every configuration was evaluated
            on (NITR's "21-case suite": rates compare configurations on the same cases); all cases with
            ``all_cases``.
        left_out: cases with verdicts that are not in the suite, as ``{case: configurations evaluated}``.
        configurations: one row per configuration, in the order first seen.
        regimes: passes per regime over the suite (``{"api": Tally, "agent": Tally}``), and ``all``.
        cases: every case with a verdict, in number order.
        granularity: ``micro`` and ``multi-step`` over the suite's cases of known granularity.
        dimensions: per primary dimension (D1 ... D9) with cases in the suite.
        unknown: suite cases whose granularity or dimension is not known (left out of those tables).
        notes: sentences about what was left out or disagreed.
    """

    suite: tuple[str, ...]
    left_out: dict[str, int]
    configurations: tuple[ConfigurationRow, ...]
    regimes: dict[str, Tally]
    cases: tuple[CaseRow, ...]
    granularity: tuple[GroupRow, ...]
    dimensions: tuple[GroupRow, ...]
    unknown: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def is_empty(self) -> bool:
        return not self.configurations

    def to_dict(self) -> dict:
        """The whole report as JSON-ready data (rates as fractions in [0, 1], None when nothing was evaluated)."""

        def conv(value):
            if isinstance(value, Tally):
                return value.to_dict()
            if isinstance(value, dict):
                return {k: conv(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [conv(v) for v in value]
            return value

        return {
            "suite": list(self.suite),
            "left_out": dict(self.left_out),
            "configurations": [{"configuration": c.configuration, "model": c.model, "regime": c.regime,
                                "suite": conv(c.suite), "evaluated": conv(c.evaluated)}
                               for c in self.configurations],
            "regimes": conv(self.regimes),
            "cases": [{**asdict(c.info), **conv(c.tally), "by_regime": conv(c.by_regime),
                       "passing": list(c.passing), "failing": list(c.failing), "saturated": c.saturated,
                       "unsolved": c.unsolved,
                       "in_suite": c.in_suite} for c in self.cases],
            "granularity": [_group_dict(g, conv) for g in self.granularity],
            "dimensions": [_group_dict(g, conv) for g in self.dimensions],
            "unknown": list(self.unknown),
            "notes": list(self.notes),
        }

    def tables(self) -> dict[str, tuple[list[str], list[list[object]]]]:
        """Every table as ``name -> (header, rows)`` (``configurations``, ``cases``, ``granularity``,
        ``dimensions``); rates as unrounded fractions, None when nothing was evaluated."""
        regime_cols = [f"{r}_{x}" for r in REGIMES for x in ("passes", "total", "rate")]

        def regime_cells(by: Mapping[str, Tally]) -> list[object]:
            return [v for r in REGIMES for v in (by[r].passes, by[r].total, by[r].rate)]

        def group_rows(rows: Sequence[GroupRow]) -> list[list[object]]:
            return [[g.key, g.label, " ".join(g.cases), g.tally.passes, g.tally.total, g.tally.rate,
                     *regime_cells(g.by_regime)] for g in rows]

        group_header = ["key", "label", "cases", "passes", "total", "rate", *regime_cols]
        return {
            "configurations": (
                ["configuration", "model", "regime", "passes", "total", "rate", "evaluated_passes",
                 "evaluated_total", "evaluated_rate"],
                [[c.configuration, c.model, c.regime, c.suite.passes, c.suite.total, c.suite.rate,
                  c.evaluated.passes, c.evaluated.total, c.evaluated.rate] for c in self.configurations]),
            "cases": (
                ["case", "case_id", "primary_dimension", "granularity", "passes", "total", "rate", *regime_cols,
                 "saturated", "unsolved", "in_suite", "passing", "failing"],
                [[c.info.case, c.info.case_id, c.info.primary_dimension, c.info.granularity, c.tally.passes,
                  c.tally.total, c.tally.rate, *regime_cells(c.by_regime), c.saturated, c.unsolved, c.in_suite,
                  "; ".join(c.passing), "; ".join(c.failing)] for c in self.cases]),
            "granularity": (group_header, group_rows(self.granularity)),
            "dimensions": (group_header, group_rows(self.dimensions)),
        }


def _group_dict(g: GroupRow, conv) -> dict:
    return {"key": g.key, "label": g.label, "cases": list(g.cases), **conv(g.tally), "by_regime": conv(g.by_regime)}


def parse_case_selection(text: str) -> list[str]:
    """Case numbers from a selection such as ``001-021,030`` or ``1-3 7`` (ranges inclusive), in order.

    Raises:
        ValueError: a part that is not a number or a range of numbers (the message names it).
    """
    out: list[str] = []
    for part in re.split(r"[,\s]+", text.strip()):
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise ValueError(f"{part!r} is not a case number or a range such as 001-021")
        width = max(3, len(m.group(1)))
        for n in range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1):
            if (number := str(n).zfill(width)) not in out:
                out.append(number)
    if not out:
        raise ValueError("no case numbers given (e.g. 001-021)")
    return out


def results_report(results: Iterable[CaseResult], cases: Mapping[str, CaseInfo] | None = None, *,
                   all_cases: bool = False, notes: Sequence[str] = (), configurations: Sequence[str] | None = None,
                   only_cases: Sequence[str] | None = None) -> ResultsReport:
    """NITR's aggregates over verdicts (NITR, Table 3 and the discussion of it: per configuration, the
    universally solved and unsolved cases, "micro cases ... versus multi-step cases" per regime, and the pass
    rate per maintainability dimension).

    ``results`` holds at most one verdict per configuration and case (a later one replaces an earlier one).
    ``cases`` says each case's dimension and granularity (see :func:`read_design_matrix`); a case it lacks is
    left out of the granularity and dimension tables and listed in ``unknown``. Every rate is passes over
    evaluated attempts of the suite (by default the cases every configuration has a verdict on; every case
    with ``all_cases``). On NITR's published matrix this gives micro 123/230, multi-step 52/253, API 53/120
    versus 18/132, agent 70/110 versus 34/121 and D6 2/46 (4.3 %), as the paper reports. ``notes`` are put
    before the report's own notes. ``configurations`` (names, as :func:`parse_configuration` spells them; case
    aside) and ``only_cases`` (case numbers) keep only those verdicts.

    Raises:
        NotFoundError: a configuration in ``configurations`` has no verdict (the message lists those that do),
            or no verdict is on a case of ``only_cases`` (the message lists the cases that have one).
    """
    infos = dict(cases or {})
    results = list(results)
    if configurations is not None:
        known = {r.configuration.casefold(): r.configuration for r in results}
        wanted = [parse_configuration(c).name if _CONFIG_RE.match(c.strip()) else c for c in configurations]
        missing = [c for c in wanted if c.casefold() not in known]
        if missing:
            raise NotFoundError(f"no verdicts of configuration {', '.join(map(repr, missing))}; there are: "
                                f"{', '.join(known.values()) or 'none'}")
        chosen_configs = {known[c.casefold()] for c in wanted}
        results = [r for r in results if r.configuration in chosen_configs]
    if only_cases is not None:
        chosen = {case_number(c) or c for c in only_cases}
        kept = [r for r in results if r.case in chosen]
        if results and not kept:
            have = sorted({r.case for r in results}, key=lambda c: (len(c), c))
            raise NotFoundError(f"no verdicts on case {', '.join(sorted(chosen))}; cases with verdicts: "
                                f"{', '.join(have)}")
        results = kept
    latest: dict[tuple[str, str], CaseResult] = {}
    order: dict[str, Configuration] = {}
    for r in results:
        latest[(r.configuration, r.case)] = r
        order.setdefault(r.configuration, Configuration(r.configuration, r.model, r.regime))
    rows = list(latest.values())
    numbers = sorted({r.case for r in rows}, key=lambda c: (len(c), c))
    evaluated = {c: {r.configuration for r in rows if r.case == c} for c in numbers}
    suite = list(numbers) if all_cases else [c for c in numbers if len(evaluated[c]) == len(order)]
    in_suite = set(suite)
    left_out = {c: len(evaluated[c]) for c in numbers if c not in in_suite}
    suite_rows = [r for r in rows if r.case in in_suite]

    config_rows = tuple(
        ConfigurationRow(c.name, c.model, c.regime, _tally(r for r in suite_rows if r.configuration == c.name),
                         _tally(r for r in rows if r.configuration == c.name))
        for c in order.values())
    regimes = {**_by_regime(suite_rows), "all": _tally(suite_rows)}

    rank = {name: i for i, name in enumerate(order)}
    case_rows = []
    for c in numbers:
        mine = [r for r in rows if r.case == c]
        tally = _tally(mine)
        passing, failing = (tuple(sorted((r.configuration for r in mine if r.outcome == o), key=rank.__getitem__))
                            for o in OUTCOMES)
        case_rows.append(CaseRow(infos.get(c, CaseInfo(c)), tally, _by_regime(mine), passing,
                                 tally.total > 0 and tally.passes == tally.total, tally.passes == 0, c in in_suite,
                                 failing))

    def group(key: str, label: str, members: list[str]) -> GroupRow:
        picked = [r for r in suite_rows if r.case in members]
        return GroupRow(key, label, tuple(members), _tally(picked), _by_regime(picked))

    granularity = tuple(
        group(g, g, members) for g in GRANULARITIES
        if (members := [c for c in suite if infos.get(c) and infos[c].granularity == g]))
    dimensions = tuple(
        group(code, name, members) for code, name in DIMENSIONS.items()
        if (members := [c for c in suite if infos.get(c) and infos[c].primary_dimension == code]))
    unknown = tuple(c for c in suite if not infos.get(c) or not infos[c].granularity or not infos[c].primary_dimension)
    notes = list(notes)
    if left_out:
        fewest = min(config_rows, key=lambda c: c.evaluated.total)
        notes.append(f"{len(left_out)} case(s) left out of the aggregates because not every configuration was "
                     f"evaluated on them ({', '.join(left_out)}; {fewest.configuration} has verdicts on "
                     f"{fewest.evaluated.total}); count them with --all-cases, or choose with --config / --cases")
    if unknown:
        notes.append(f"dimension or granularity unknown for case(s) {', '.join(unknown)}: left out of the micro / "
                     "multi-step and dimension tables; import the NITR checkout's cases or its docs/design_matrix.md")
    return ResultsReport(tuple(suite), left_out, config_rows, regimes, tuple(case_rows), granularity, dimensions,
                         unknown, tuple(notes))


def read_case_docs(docs_dir: str | Path) -> dict[str, CaseInfo]:
    """The cases a NITR checkout's ``docs/`` folder describes: dimension and granularity from
    ``design_matrix.md`` (:func:`read_design_matrix`) with each case's full id from ``cases.md``
    (:func:`read_case_list`). A folder with neither file gives ``{}``; a case listed only in ``cases.md``
    has its id and no dimension.

    Raises:
        InputFileError: either file exists and cannot be read (see the two readers).
    """
    folder = Path(docs_dir)
    matrix, listing = folder / "design_matrix.md", folder / "cases.md"
    infos = read_design_matrix(matrix) if matrix.is_file() else {}
    ids = read_case_list(listing) if listing.is_file() else {}
    for number, case_id in ids.items():
        info = infos.get(number, CaseInfo(number, source=listing.name))
        infos[number] = CaseInfo(number, case_id, info.primary_dimension, info.granularity, info.source)
    return dict(sorted(infos.items()))


def merge_case_infos(documented: Mapping[str, CaseInfo], probes: Iterable[CaseInfo]) -> tuple[dict[str, CaseInfo],
                                                                                              list[str]]:
    """Case descriptions for :func:`results_report` from two sources: the checkout's documentation
    (``documented``, see :func:`read_case_docs`) and the probes imported into the project (their SPEC.md and
    task files). The documented dimension and granularity win (the design matrix is NITR's own assignment,
    the one Table 3 is computed from); a probe fills what the documentation lacks. Returns the merged
    ``{case number: CaseInfo}`` and one sentence per case on which the two disagree."""
    merged = dict(documented)
    notes: list[str] = []
    for p in probes:
        doc = merged.get(p.case)
        if doc is None:
            merged[p.case] = p
            continue
        for what, a, b in (("dimension", doc.primary_dimension, p.primary_dimension),
                           ("granularity", doc.granularity, p.granularity)):
            if a and b and a != b:
                notes.append(f"case {p.case}: {what} {a} ({doc.source}) but {b} ({p.source}); {a} is used")
        merged[p.case] = CaseInfo(p.case, doc.case_id or p.case_id, doc.primary_dimension or p.primary_dimension,
                                  doc.granularity or p.granularity, doc.source or p.source)
    return dict(sorted(merged.items())), notes


@dataclass
class ResultsImport:
    """What an import of model results did.

    Attributes:
        file: the imported file, as given.
        read: verdicts read (``pass`` and ``fail`` cells).
        added: verdicts recorded that the project did not have.
        already_present: verdicts the project already had (so importing a file again adds nothing).
        changed: verdicts that differ from the project's current one for that configuration and case, as
            ``line N: CONFIGURATION, case 021: fail -> pass``; recorded only with ``update``.
        updated: how many of ``changed`` were recorded.
        cases: case descriptions (dimension, granularity) recorded or changed.
        configurations: configurations read.
        batch_id: the ``import_batches`` row, or None when nothing was recorded.
    """

    file: str
    read: int = 0
    added: int = 0
    already_present: int = 0
    changed: list[str] = field(default_factory=list)
    updated: int = 0
    cases: int = 0
    configurations: int = 0
    batch_id: int | None = None
