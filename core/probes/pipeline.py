"""The evaluator pipeline of a probe: ``pipeline.json`` and its module types.

NITR (oracle design, "Each probe is paired with two hidden evaluators: functional tests ... and
structural oracles"; harness: "configures and builds the project with CMake, runs the hidden functional
tests, and then executes the structural oracles") describes the evaluator as an ordered list of modules.
The JSON shape follows the NITR artifact::

    {
      "case_root": "case",          # where the case is placed, relative to the workspace repo root
      "build_dir": "build",         # the build directory, relative to the workspace repo root
      "modules": [
        {"module_name": "build", "name": "configure", "command": ["cmake", "-S", "{evaluator_root}", ...]},
        {"module_name": "unit_test", "name": "functional", "command": ["ctest", "--test-dir", "{build_dir}"]},
        {"module_name": "required_paths", "name": "layout", "root": "case_root", "paths": ["src/x.cpp"]},
        {"module_name": "source_analysis", "name": "structure", "root": "case_root", "scan_roots": ["src"],
         "suffixes": [".cpp", ".h"], "exclude_files": ["legacy.cpp"],
         "rules": [{"id": "no-stoi", "any_patterns": ["std::stoi"], "message": "{relative_path} parses ints"},
                   {"id": "uses-seam", "not": {"any_patterns": ["Validate\\\\("]}, "message": "..."}]},
        {"module_name": "customized_check", "name": "custom", "command": ["{python}", "{evaluator_root}/c.py"],
         "env": {"MODE": "strict"}}
      ]
    }

``module_name`` is the module's type and ``name`` the instance's label in reports. Commands are argv lists
(a string is split with :func:`shlex.split`) and may use the placeholders ``{build_dir}``, ``{case_root}``,
``{evaluator_root}``, ``{repo_root}`` and ``{python}`` (the interpreter running benchwright); ``{{`` and
``}}`` are literal braces. Regular expressions are not formatted. Everything is validated when parsed:
:func:`parse_pipeline` raises :class:`~benchwright.core.errors.InputFileError` naming the file and, for a
module problem, the module's index (``modules[2]``) and name.
"""

from __future__ import annotations

import json
import re
import shlex
import string
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import InputFileError, InputProblem

PLACEHOLDERS = ("build_dir", "case_root", "evaluator_root", "repo_root", "python")
"""Placeholders allowed in commands, ``cwd``, ``env`` values, ``root`` and the pipeline paths."""

ROOT_KEYS = ("case_root", "evaluator_root", "repo_root", "build_dir")
"""Bare names accepted as a module ``root`` (NITR style: ``"root": "case_root"``)."""

MESSAGE_FIELDS = ("rule_id", "relative_path", "filename", "line", "path")
"""Placeholders allowed in a source rule's ``message``."""

DEFAULT_SUFFIXES = (".h", ".hpp", ".cc", ".cpp")
"""Suffixes scanned by ``source_analysis`` when the module gives none (the NITR default)."""

UNSUPPORTED_RULE_KEYS = (
    "all_of", "any_of", "all_substrings", "all_patterns", "substring_hit_thresholds",
    "pattern_hit_thresholds",
)
"""NITR rule keys benchwright does not evaluate; a rule using one is refused rather than half-checked."""


def placeholder_names(text: str) -> list[str]:
    """The ``{name}`` fields of ``text`` in order (``{{`` and ``}}`` are literal braces).

    Raises:
        ValueError: unbalanced braces, or a field with a conversion or format spec (``{x!r}``, ``{x:>3}``).
    """
    names: list[str] = []
    for _literal, name, spec, conversion in string.Formatter().parse(text):
        if name is None:
            continue
        if spec or conversion:
            raise ValueError(f"placeholder {{{name}}} in {text!r} may not have a format spec or conversion")
        names.append(name)
    return names


def check_placeholders(text: str, allowed: tuple[str, ...] = PLACEHOLDERS) -> str:
    """``text`` unchanged if its placeholders are all in ``allowed``.

    Raises:
        ValueError: an unknown placeholder (the message lists the allowed ones) or malformed braces.
    """
    try:
        names = placeholder_names(text)
    except ValueError as error:
        raise ValueError(f"malformed placeholder in {text!r}: {error}") from None
    for name in names:
        if name not in allowed:
            known = ", ".join("{" + a + "}" for a in allowed)
            raise ValueError(f"unknown placeholder {{{name}}} in {text!r}; known placeholders: {known}")
    return text


def expand(text: str, values: dict[str, str]) -> str:
    """``text`` with its placeholders replaced from ``values`` (every placeholder must be present)."""
    return text.format_map(values)


def _safe_relative(value: str, what: str, *, allow_dot: bool = True) -> str:
    path = PurePosixPath(value.replace("\\", "/"))
    if not value.strip():
        raise ValueError(f"{what} is empty")
    if path.is_absolute() or re.match(r"^[A-Za-z]:", value):
        raise ValueError(f"{what} {value!r} must be relative, not absolute")
    if ".." in path.parts:
        raise ValueError(f"{what} {value!r} may not contain '..'")
    if not allow_dot and str(path) == ".":
        raise ValueError(f"{what} may not be '.'")
    return value


class _Module(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        """The module as it is written in ``pipeline.json`` (``module_name`` first, defaults included)."""
        data = self.model_dump(exclude_none=True)
        if not data.get("description"):
            data.pop("description", None)
        return {"module_name": data.pop("module_name"), **data}


class _CommandModule(_Module):
    """Fields shared by the modules that run a command.

    Attributes:
        name: the instance's label in reports (``"compile"``, ``"functional tests"``).
        command: argv list with placeholders; a string is split with :func:`shlex.split`.
        cwd: working directory (placeholders allowed; relative to the workspace repo root); default the
            repo root. It must stay inside the workspace (checked when run).
        env: variables added to the (key-stripped) environment; values may use placeholders.
        timeout_s: this module's timeout in seconds; default the runner's ``timeout_s``.
        description: free text for reviewers.
    """

    command: list[str]
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float | None = Field(default=None, gt=0)

    @field_validator("command", mode="before")
    @classmethod
    def _split_command(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return shlex.split(value)
            except ValueError as error:
                raise ValueError(f"command {value!r} cannot be split: {error}") from None
        return value

    @field_validator("command")
    @classmethod
    def _check_command(cls, value: list[str]) -> list[str]:
        if not value or not value[0].strip():
            raise ValueError("command is empty; give an argv list such as [\"cmake\", \"--build\", \"{build_dir}\"]")
        for part in value:
            check_placeholders(part)
        return value

    @field_validator("cwd")
    @classmethod
    def _check_cwd(cls, value: str | None) -> str | None:
        return None if value is None else check_placeholders(value)

    @field_validator("env")
    @classmethod
    def _check_env(cls, value: dict[str, str]) -> dict[str, str]:
        for key, item in value.items():
            if not key or "=" in key:
                raise ValueError(f"environment variable name {key!r} is not valid")
            check_placeholders(item)
        return value


class BuildModule(_CommandModule):
    """``build``: runs a build command (configure or compile); passes when it exits with 0.

    Configure and compile are usually two build modules in order, e.g.
    ``["cmake", "-S", "{evaluator_root}", "-B", "{build_dir}", "-DCASE_ROOT={case_root}"]`` then
    ``["cmake", "--build", "{build_dir}"]``. See :class:`_CommandModule` for the fields.
    """

    module_name: Literal["build"] = "build"


class UnitTestModule(_CommandModule):
    """``unit_test``: runs the hidden functional tests, e.g. ``ctest --test-dir {build_dir} -R ^name$``.

    Passes when the command exits with 0 *and* its output has a test summary (CTest, GoogleTest, pytest or
    unittest; :mod:`benchwright.core.probes.counts`) saying that at least ``min_expected_tests`` tests ran and
    passed and none failed. Zero tests is never a pass: ctest exits with 0 when a ``-R`` filter matches
    nothing, and a suite whose only test is skipped exits with 0 too.

    Attributes:
        min_expected_tests: how many tests must run and pass (NITR's field of that name); default 1.
    """

    module_name: Literal["unit_test"] = "unit_test"
    min_expected_tests: int | None = Field(default=None, ge=1)


class CustomizedCheckModule(_CommandModule):
    """``customized_check``: a case-specific check command (NITR's escape hatch); passes on exit code 0."""

    module_name: Literal["customized_check"] = "customized_check"


def _check_root(value: str) -> str:
    if value in ROOT_KEYS:
        return value
    check_placeholders(value)
    if not placeholder_names(value):
        _safe_relative(value, "root")
    return value


class RequiredPathsModule(_Module):
    """``required_paths``: every path in ``paths`` must exist under ``root``.

    Attributes:
        root: ``case_root`` (default), ``evaluator_root``, ``repo_root``, ``build_dir``, or a path with
            placeholders (a plain relative path is relative to the workspace repo root).
        paths: relative paths (no ``..``, not absolute); files or folders.
    """

    module_name: Literal["required_paths"] = "required_paths"
    root: str = "case_root"
    paths: list[str] = Field(min_length=1)

    @field_validator("root")
    @classmethod
    def _valid_root(cls, value: str) -> str:
        return _check_root(value)

    @field_validator("paths")
    @classmethod
    def _check_paths(cls, value: list[str]) -> list[str]:
        for item in value:
            _safe_relative(item, "required path")
        return value


def _substrings_as_patterns(data: dict) -> dict:
    """NITR's ``any_substrings`` (literal text) as escaped ``any_patterns``."""
    if "any_substrings" not in data:
        return data
    subs = data["any_substrings"]
    if not isinstance(subs, list) or not all(isinstance(x, str) and x for x in subs):
        raise ValueError("any_substrings must be a list of non-empty strings")
    rest = {k: v for k, v in data.items() if k != "any_substrings"}
    return {**rest, "any_patterns": [*rest.get("any_patterns", []), *(re.escape(x) for x in subs)]}


class SourceRule(BaseModel):
    """One source-analysis rule, checked file by file (NITR ``source_analysis``).

    JSON: ``{"id": ..., "any_patterns": [...], "message": ...}`` (a violation wherever a pattern matches)
    or ``{"id": ..., "not": {"any_patterns": [...]}, "message": ...}`` (``negate``: every scanned file must
    match one of the patterns; a file that matches none is reported as ``missing``).

    Attributes:
        id: the rule's id, named in results.
        any_patterns: Python regular expressions searched in the whole file text (no flags; use inline
            flags such as ``(?m)``, ``(?s)`` or ``(?i)``).
        negate: True for a ``not`` rule (the pattern must be found).
        message: shown for each match; placeholders ``{rule_id}``, ``{relative_path}``, ``{filename}``,
            ``{line}``, ``{path}``.

    Raises (on construction):
        pydantic.ValidationError: empty id or patterns, a pattern that does not compile (the pattern and
            the ``re`` error are named), unknown message placeholders, both ``any_patterns`` and ``not``,
            or a NITR rule key benchwright does not evaluate (``all_of``, ``any_substrings`` ...).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    any_patterns: list[str] = Field(min_length=1)
    negate: bool = False
    message: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_json_shape(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = _substrings_as_patterns(data)
        if isinstance(data.get("not"), dict):
            data = {**data, "not": _substrings_as_patterns(data["not"])}
        unsupported = [key for key in data if key in UNSUPPORTED_RULE_KEYS]
        if unsupported:
            raise ValueError(
                f"rule key {unsupported[0]!r} is not supported; use any_patterns, or not: {{any_patterns}}"
            )
        if "not" in data:
            inner = data["not"]
            if "any_patterns" in data:
                raise ValueError("a rule has either any_patterns or not: {any_patterns}, not both")
            if not isinstance(inner, dict) or set(inner) != {"any_patterns"}:
                raise ValueError("'not' must be an object with exactly one key, any_patterns")
            rest = {k: v for k, v in data.items() if k != "not"}
            return {**rest, "any_patterns": inner["any_patterns"], "negate": True}
        return data

    @field_validator("any_patterns")
    @classmethod
    def _compile(cls, value: list[str]) -> list[str]:
        for index, pattern in enumerate(value):
            if not pattern:
                raise ValueError(f"pattern {index} is empty (it would match every file)")
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"bad regular expression {pattern!r} (pattern {index}): {error}") from None
        return value

    @field_validator("message")
    @classmethod
    def _check_message(cls, value: str) -> str:
        return check_placeholders(value, MESSAGE_FIELDS)

    def compiled(self) -> list[re.Pattern[str]]:
        """The compiled patterns (``re`` caches them)."""
        return [re.compile(p) for p in self.any_patterns]

    def to_json(self) -> dict[str, Any]:
        """The rule in ``pipeline.json`` shape (``not: {any_patterns}`` for a negated rule)."""
        data: dict[str, Any] = {"id": self.id}
        if self.negate:
            data["not"] = {"any_patterns": list(self.any_patterns)}
        else:
            data["any_patterns"] = list(self.any_patterns)
        if self.message:
            data["message"] = self.message
        return data


class SourceAnalysisModule(_Module):
    """``source_analysis``: regex rules over the source files of ``scan_roots`` (a structural oracle).

    Attributes:
        root: as for :class:`RequiredPathsModule`; default ``case_root``.
        scan_roots: folders or files relative to ``root`` (default ``["src"]``, as in NITR); missing ones
            are skipped.
        suffixes: file-name endings scanned (default ``.h .hpp .cc .cpp``); an empty list scans every file.
        exclude_files: file names (``legacy.cpp``) or relative paths (``src/legacy.cpp``) left out.
        exclude_globs: glob patterns matched against the relative path and the file name.
        rules: at least one :class:`SourceRule`; ids are unique within the module.

    The module fails when any rule reports a match (see :func:`benchwright.core.probes.rules.scan_sources`).
    """

    module_name: Literal["source_analysis"] = "source_analysis"
    root: str = "case_root"
    scan_roots: list[str] = Field(default_factory=lambda: ["src"], min_length=1)
    suffixes: list[str] = Field(default_factory=lambda: list(DEFAULT_SUFFIXES))
    exclude_files: list[str] = Field(default_factory=list)
    exclude_globs: list[str] = Field(default_factory=list)
    rules: list[SourceRule] = Field(min_length=1)

    @field_validator("root")
    @classmethod
    def _valid_root(cls, value: str) -> str:
        return _check_root(value)

    @field_validator("scan_roots")
    @classmethod
    def _check_scan_roots(cls, value: list[str]) -> list[str]:
        for item in value:
            _safe_relative(item, "scan root")
        return value

    @field_validator("rules")
    @classmethod
    def _unique_ids(cls, value: list[SourceRule]) -> list[SourceRule]:
        seen: set[str] = set()
        for rule in value:
            if rule.id in seen:
                raise ValueError(f"rule id {rule.id!r} is used twice")
            seen.add(rule.id)
        return value

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data["rules"] = [rule.to_json() for rule in self.rules]
        return data


PipelineModule = Annotated[
    BuildModule | UnitTestModule | RequiredPathsModule | SourceAnalysisModule | CustomizedCheckModule,
    Field(discriminator="module_name"),
]
"""Any module of a pipeline, told apart by ``module_name``."""

MODULE_TYPES: dict[str, type[_Module]] = {
    "build": BuildModule,
    "unit_test": UnitTestModule,
    "required_paths": RequiredPathsModule,
    "source_analysis": SourceAnalysisModule,
    "customized_check": CustomizedCheckModule,
}
"""``module_name`` -> module class."""


class Pipeline(BaseModel):
    """An evaluator pipeline: modules run in order; the probe passes only when every module passes.

    Attributes:
        case_root: where the runner places the case, relative to the workspace repo root (default
            ``case``; ``.`` puts the case at the repo root). No ``..``, not absolute.
        build_dir: the build directory relative to the workspace repo root (default ``build``).
        modules: at least one module.
    """

    model_config = ConfigDict(frozen=True)

    case_root: str = "case"
    build_dir: str = "build"
    modules: list[PipelineModule] = Field(min_length=1)

    @field_validator("case_root")
    @classmethod
    def _check_case_root(cls, value: str) -> str:
        return _safe_relative(value, "case_root")

    @field_validator("build_dir")
    @classmethod
    def _check_build_dir(cls, value: str) -> str:
        return _safe_relative(value, "build_dir", allow_dot=False)

    @model_validator(mode="after")
    def _distinct(self) -> Pipeline:
        if PurePosixPath(self.case_root) == PurePosixPath(self.build_dir):
            raise ValueError("case_root and build_dir must differ")
        return self

    def source_modules(self) -> list[SourceAnalysisModule]:
        """The ``source_analysis`` modules, in order (for a rules editor)."""
        return [m for m in self.modules if isinstance(m, SourceAnalysisModule)]

    def to_json(self) -> dict[str, Any]:
        """The pipeline in ``pipeline.json`` shape; :func:`pipeline_from_dict` reads it back unchanged."""
        return {
            "case_root": self.case_root, "build_dir": self.build_dir,
            "modules": [module.to_json() for module in self.modules],
        }


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _problem_text(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    if kind == "missing":
        return "missing field"
    if kind == "extra_forbidden":
        return "unknown field"
    message = str(error.get("msg", "invalid value"))
    return message.removeprefix("Value error, ")


def pipeline_from_dict(data: Any, source: str | Path = "pipeline.json") -> Pipeline:
    """Validate a decoded ``pipeline.json`` object; ``source`` names the file in errors.

    Unknown top-level keys are ignored (NITR files carry extra metadata); unknown module keys are not.

    Raises:
        InputFileError: every problem found, each naming ``source`` and a field such as
            ``modules[2].rules[0].any_patterns`` with the module's name and type in the message:
            unknown module type, missing or unknown field, bad regular expression, unknown placeholder,
            unsafe path.
    """
    file = str(source)
    if not isinstance(data, dict):
        raise InputFileError.single(file, "a pipeline is a JSON object with case_root, build_dir and modules")
    problems: list[InputProblem] = []
    raw_modules = data.get("modules")
    modules: list[Any] = []
    if not isinstance(raw_modules, list) or not raw_modules:
        problems.append(InputProblem(file, None, "modules", "give a non-empty list of modules"))
        raw_modules = []
    for index, raw in enumerate(raw_modules):
        where = f"modules[{index}]"
        if not isinstance(raw, dict):
            problems.append(InputProblem(file, None, where, "a module is a JSON object"))
            continue
        label = raw.get("name") if isinstance(raw.get("name"), str) and raw.get("name") else "(unnamed)"
        kind = raw.get("module_name")
        known = ", ".join(MODULE_TYPES)
        if kind is None:
            problems.append(InputProblem(
                file, None, f"{where}.module_name", f"module {label!r}: missing field module_name (one of {known})"
            ))
            continue
        if kind not in MODULE_TYPES:
            problems.append(InputProblem(
                file, None, f"{where}.module_name", f"module {label!r}: unknown module type {kind!r}; expected one of {known}"
            ))
            continue
        try:
            modules.append(MODULE_TYPES[kind].model_validate(raw))
        except ValidationError as error:
            for item in error.errors():
                problems.append(InputProblem(
                    file, None, where + _loc(tuple(item["loc"])), f"module {label!r} ({kind}): {_problem_text(item)}"
                ))
    top = {k: data[k] for k in ("case_root", "build_dir") if k in data}
    for key, value in top.items():
        if not isinstance(value, str):
            problems.append(InputProblem(file, None, key, "must be a string (a relative path)"))
    if problems:
        raise InputFileError(problems)
    try:
        return Pipeline(**top, modules=modules)
    except ValidationError as error:
        raise InputFileError([
            InputProblem(file, None, _loc(tuple(item["loc"])).lstrip(".") or None, _problem_text(item))
            for item in error.errors()
        ]) from None


def parse_pipeline(path: str | Path) -> Pipeline:
    """Read and validate an evaluator's ``pipeline.json``.

    Raises:
        InputFileError: the file is missing or not JSON (with the line), or any problem listed in
            :func:`pipeline_from_dict`; each problem names the file, and module problems the module's
            index and name.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError.single(path, "no such file; an evaluator folder needs a pipeline.json") from None
    except UnicodeDecodeError:
        raise InputFileError.single(path, "not UTF-8 text") from None
    except OSError as error:
        raise InputFileError.single(path, f"cannot be read: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputFileError.single(path, f"not valid JSON: {error.msg}", line=error.lineno) from None
    return pipeline_from_dict(data, source=path)
