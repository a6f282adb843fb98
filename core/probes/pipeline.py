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
(a string is split with :func:`shlex.split`) and may use the placeholders :data:`PLACEHOLDERS` and the
pipeline's ``variables``; ``{{`` and ``}}`` are literal braces. Regular expressions are not formatted.

Every module type and key NITR's own evaluator reads is read here with NITR's meaning (``baseline_diff``,
``frozen_paths``, ``enabled_if``, ``configure_args``, rule conditions :class:`Condition` with ``all_of``,
``any_of``, ``not``, substrings, patterns under ``re.MULTILINE`` and hit thresholds, ``normalize``,
``stop_on_first_match``, ``global_rules``), and NITR's top-level paths (``"case_root":
"../../.submit-output/..."``) are read as a NITR layout (:class:`Pipeline`). Everything is validated when
parsed and nothing is ignored: :func:`parse_pipeline` raises :class:`~benchwright.core.errors.InputFileError`
naming the file and, for a module problem, the JSON path (``modules[2].rules[0].all_of[1]``), the module's
name and type, and the value.
"""

from __future__ import annotations

import json
import re
import shlex
import string
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from ..errors import InputFileError, InputProblem

PLACEHOLDERS = ("build_dir", "case_root", "baseline_case_root", "evaluator_root", "repo_root", "python")
"""Placeholders allowed in commands, ``cwd``, ``env`` values, ``configure_args``, ``root`` and the pipeline
paths; the names of the pipeline's ``variables`` are allowed too (NITR fills both in the same way)."""

ROOT_KEYS = ("case_root", "baseline_case_root", "evaluator_root", "repo_root", "build_dir")
"""Bare names accepted as a module ``root`` (NITR style: ``"root": "case_root"``)."""

MESSAGE_FIELDS = ("rule_id", "relative_path", "filename", "line", "line_no", "location", "path")
"""Placeholders filled in a source rule's ``message`` (``line`` and ``line_no`` are the same number,
``location`` is ``relative_path:line_no``, or the path alone when the rule matched without a line)."""

GLOBAL_MESSAGE_FIELDS = ("rule_id", "matching_file_count", "matching_files")
"""Placeholders filled in a global rule's ``message`` (``matching_files``: relative paths joined by ``, ``)."""

DEFAULT_SUFFIXES = (".h", ".hpp", ".cc", ".cpp")
"""Suffixes scanned by ``source_analysis`` when the module gives none (the NITR default)."""

NORMALIZE_MODES = ("none", "strip_comments", "strip_comments_and_strings")
"""``source_analysis`` ``normalize`` values: text as is, C/C++ comments removed, or comments and string and
character literals removed (literals become ``""`` / ``''``) before the rules look at it."""

REGEX_FLAGS = {
    "IGNORECASE": re.IGNORECASE, "I": re.IGNORECASE, "MULTILINE": re.MULTILINE, "M": re.MULTILINE,
    "DOTALL": re.DOTALL, "S": re.DOTALL, "VERBOSE": re.VERBOSE, "X": re.VERBOSE, "ASCII": re.ASCII, "A": re.ASCII,
}
"""Flag names accepted in a ``pattern_hit_thresholds`` entry's ``flags`` (the ``re`` names NITR reads)."""

NITR_PATH_KEYS = ("case_root", "baseline_case_root", "build_dir")
"""Top-level keys that, pointing outside the evaluator folder (``../../cases/<id>``), say a NITR layout: the
submission, the pristine starter and the build folder, mapped into benchwright's workspace (see
:class:`Pipeline`)."""

TOP_LEVEL_KEYS = ("case_root", "baseline_case_root", "build_dir", "evaluator_root", "variables", "env", "modules")
"""Every top-level key of ``pipeline.json``; any other is refused."""


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


def check_placeholders(text: str, allowed: tuple[str, ...] | None = PLACEHOLDERS) -> str:
    """``text`` unchanged if its placeholders are all in ``allowed`` (``None``: any name; only the braces
    are checked, the pipeline then checks the names against :data:`PLACEHOLDERS` and its ``variables``).

    Raises:
        ValueError: an unknown placeholder (the message lists the allowed ones) or malformed braces.
    """
    try:
        names = placeholder_names(text)
    except ValueError as error:
        raise ValueError(f"malformed placeholder in {text!r}: {error}") from None
    for name in names:
        if allowed is not None and name not in allowed:
            known = ", ".join("{" + a + "}" for a in allowed)
            raise ValueError(f"unknown placeholder {{{name}}} in {text!r}; known placeholders: {known}")
    return text


_MESSAGE_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def check_message(text: str, allowed: tuple[str, ...]) -> str:
    """``text`` unchanged if every ``{name}`` in it is one of ``allowed``; any other brace (a stray ``{``,
    ``{}``, ``{ x }``) is text, as :func:`render_message` shows it.

    Raises:
        ValueError: a ``{name}`` that is not a known placeholder (the known ones are listed).
    """
    for match in _MESSAGE_FIELD.finditer(text):
        name = match.group(1)
        if name is not None and name not in allowed:
            known = ", ".join("{" + a + "}" for a in allowed)
            raise ValueError(f"unknown placeholder {{{name}}} in message {text!r}; known placeholders: {known}")
    return text


def render_message(text: str, values: dict[str, str]) -> str:
    """``text`` with ``{name}`` replaced from ``values``, ``{{``/``}}`` as single braces, and every other
    brace kept as text (a message never fails to render)."""

    def replace(match: re.Match[str]) -> str:
        token, name = match.group(0), match.group(1)
        if name is None:
            return token[0]
        return values.get(name, token)

    return _MESSAGE_FIELD.sub(replace, text)


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
    enabled_if: str | bool | None = None

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
            check_placeholders(part, None)
        return value

    @field_validator("cwd")
    @classmethod
    def _check_cwd(cls, value: str | None) -> str | None:
        return None if value is None else check_placeholders(value, None)

    @field_validator("env")
    @classmethod
    def _check_env(cls, value: dict[str, str]) -> dict[str, str]:
        for key, item in value.items():
            if not key or "=" in key:
                raise ValueError(f"environment variable name {key!r} is not valid")
            check_placeholders(item, None)
        return value


class BuildModule(_CommandModule):
    """``build``: runs a build command (configure or compile); passes when it exits with 0.

    Configure and compile are usually two build modules in order, e.g.
    ``["cmake", "-S", "{evaluator_root}", "-B", "{build_dir}", "-DCASE_ROOT={case_root}"]`` then
    ``["cmake", "--build", "{build_dir}"]``. See :class:`_CommandModule` for the fields.

    In a NITR layout (:attr:`Pipeline.layout`), as NITR does, a build module first configures when the build
    folder has no ``CMakeCache.txt``: ``cmake -S {repo_root} -B {build_dir} <configure_args>``, with
    ``configure_args`` defaulting to ``["-DNITR_BUILD_EVALUATOR=ON"]`` (placeholders and variables allowed);
    a failing configure fails the module.
    """

    module_name: Literal["build"] = "build"
    configure_args: list[str] | None = None

    @field_validator("configure_args")
    @classmethod
    def _check_configure_args(cls, value: list[str] | None) -> list[str] | None:
        for part in value or []:
            check_placeholders(part, None)
        return value


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


CONDITION_KEYS = (
    "all_of", "any_of", "not", "any_substrings", "all_substrings", "any_patterns", "all_patterns",
    "substring_hit_thresholds", "pattern_hit_thresholds",
)
"""A rule's condition keys, in the order NITR evaluates them (see :class:`Condition`)."""

_DECIDING_KEYS = ("all_of", "any_of", "any_substrings", "all_substrings", "any_patterns", "all_patterns")
"""Keys whose result is the condition's result: NITR looks at no key after the first of these that is set."""


def _compile_pattern(pattern: str, index: int, flags: int = re.MULTILINE) -> str:
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"pattern {index} is empty (it would match every file)")
    try:
        re.compile(pattern, flags)
    except re.error as error:
        raise ValueError(f"bad regular expression {pattern!r} (pattern {index}): {error}") from None
    return pattern


def _non_empty_strings(value: list[str], what: str) -> list[str]:
    for index, item in enumerate(value):
        if not item:
            raise ValueError(f"{what} {index} is empty (it would be found in every file)")
    return value


Strings = Annotated[list[str], Field(default_factory=list)]
"""A list of strings that defaults to empty (the many optional list keys of NITR modules and rules)."""


class SubstringThreshold(BaseModel):
    """``substring_hit_thresholds`` entry: at least ``at_least`` of the distinct ``needles`` occur in the file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    needles: list[str] = Field(min_length=1)
    at_least: int = Field(default=1, ge=1)

    @field_validator("needles")
    @classmethod
    def _needles(cls, value: list[str]) -> list[str]:
        return _non_empty_strings(value, "needle")


class PatternThreshold(BaseModel):
    """``pattern_hit_thresholds`` entry: at least ``at_least`` of ``patterns`` match the file.

    As in NITR, these patterns are compiled with ``flags`` only (names from :data:`REGEX_FLAGS`, e.g.
    ``["MULTILINE"]``), not with the ``re.MULTILINE`` that every other pattern of a rule gets.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    patterns: list[str] = Field(min_length=1)
    at_least: int = Field(default=1, ge=1)
    flags: list[str] = Field(default_factory=list)

    @field_validator("flags")
    @classmethod
    def _flags(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in REGEX_FLAGS:
                raise ValueError(f"unknown regex flag {name!r}; known flags: {', '.join(REGEX_FLAGS)}")
        return value

    @model_validator(mode="after")
    def _compile(self) -> PatternThreshold:
        for index, pattern in enumerate(self.patterns):
            _compile_pattern(pattern, index, self.flag_bits())
        return self

    def flag_bits(self) -> int:
        """The ``re`` flags of :attr:`flags`, or-ed."""
        bits = 0
        for name in self.flags:
            bits |= REGEX_FLAGS[name]
        return bits


class Condition(BaseModel):
    """A source-analysis condition over one file's text, with NITR's semantics.

    Keys (each optional; an empty list is refused, since NITR would skip it silently):
        any_substrings / all_substrings: literal text, one / every one of them found.
        any_patterns / all_patterns: Python regular expressions searched with ``re.MULTILINE`` (``^`` and
            ``$`` match at every line), one / every one of them found.
        not: a condition that must *not* hold.
        all_of / any_of: sub-conditions, every one / at least one of them holding.
        substring_hit_thresholds / pattern_hit_thresholds: lists of :class:`SubstringThreshold` /
            :class:`PatternThreshold`, every one met.

    Evaluated as NITR does (:func:`benchwright.core.probes.rules.condition_match`): ``all_of`` if set decides,
    else ``any_of``; else ``not`` must not hold and then the first of ``any_substrings``, ``all_substrings``,
    ``any_patterns``, ``all_patterns`` that is set decides; else every threshold must be met; a condition
    with only ``not`` holds when its inner condition does not. Because NITR never looks at a key after the
    deciding one, a condition that combines keys NITR would ignore (``all_of`` with ``any_substrings``,
    ``any_patterns`` with a threshold ...) is refused, naming the ignored key; so is an empty condition.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    all_of: list[Condition] = Field(default_factory=list)
    any_of: list[Condition] = Field(default_factory=list)
    not_: Condition | None = Field(default=None, alias="not")
    any_substrings: Strings
    all_substrings: Strings
    any_patterns: Strings
    all_patterns: Strings
    substring_hit_thresholds: list[SubstringThreshold] = Field(default_factory=list)
    pattern_hit_thresholds: list[PatternThreshold] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _no_empty_lists(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in CONDITION_KEYS:
                if key != "not" and key in data and isinstance(data[key], list) and not data[key]:
                    raise ValueError(f"{key} is empty; give at least one entry or leave the key out")
        return data

    @field_validator("any_substrings", "all_substrings")
    @classmethod
    def _substrings(cls, value: list[str]) -> list[str]:
        return _non_empty_strings(value, "substring")

    @field_validator("any_patterns", "all_patterns")
    @classmethod
    def _compile(cls, value: list[str]) -> list[str]:
        for index, pattern in enumerate(value):
            _compile_pattern(pattern, index)
        return value

    def condition_keys(self) -> list[str]:
        """The condition keys that are set, in :data:`CONDITION_KEYS` order."""
        return [k for k in CONDITION_KEYS if getattr(self, "not_" if k == "not" else k) not in (None, [])]

    @model_validator(mode="after")
    def _nothing_ignored(self) -> Condition:
        keys = self.condition_keys()
        if not keys:
            raise ValueError("a rule needs a condition: any_substrings, any_patterns, not, all_of ... "
                             f"(one of {', '.join(CONDITION_KEYS)})")
        deciding = [k for k in keys if k in _DECIDING_KEYS]
        if deciding:
            first = deciding[0]
            ignored = [k for k in keys if CONDITION_KEYS.index(k) > CONDITION_KEYS.index(first)]
            if first in ("all_of", "any_of"):
                ignored = [k for k in keys if k != first]
            if ignored:
                raise ValueError(f"{ignored[0]!r} next to {first!r} would be ignored (NITR decides on {first!r} "
                                 "alone); put the conditions under all_of")
        return self

    def condition_json(self) -> dict[str, Any]:
        """The condition in ``pipeline.json`` shape (set keys only)."""
        data: dict[str, Any] = {}
        for key in CONDITION_KEYS:
            value = getattr(self, "not_" if key == "not" else key)
            if value in (None, []):
                continue
            if key == "not":
                data[key] = value.condition_json()
            elif key in ("all_of", "any_of"):
                data[key] = [item.condition_json() for item in value]
            elif key.endswith("thresholds"):
                data[key] = [item.model_dump(exclude_defaults=False) for item in value]
                if key == "pattern_hit_thresholds":
                    data[key] = [{k: v for k, v in item.items() if k != "flags" or v} for item in data[key]]
            else:
                data[key] = list(value)
        return data

    @model_serializer(mode="plain")
    def _serialize(self) -> dict[str, Any]:
        """``model_dump`` gives the ``pipeline.json`` shape (what a stored probe holds and reads back)."""
        to_json = getattr(self, "to_json", None)
        return to_json() if to_json is not None else self.condition_json()

    def compiled(self) -> list[re.Pattern[str]]:
        """The compiled ``any_patterns`` and ``all_patterns`` (``re.MULTILINE``; ``re`` caches them)."""
        return [re.compile(p, re.MULTILINE) for p in [*self.any_patterns, *self.all_patterns]]


class SourceRule(Condition):
    """One file-level source-analysis rule (NITR ``source_analysis`` ``rules``): a :class:`Condition` that,
    where it holds in a scanned file, is a finding (the module fails).

    JSON: ``{"id": ..., "message": ..., <condition keys>}``, e.g. ``{"id": "no-stoi", "any_substrings":
    ["std::stoi"]}`` or ``{"id": "uses-seam", "not": {"any_patterns": ["Validate\\\\("]}}``.

    Attributes:
        id: the rule's id, named in results.
        message: shown for each finding; placeholders :data:`MESSAGE_FIELDS`; any other brace is text.
        negate: True for a rule that is only ``not: {...}`` (kept for the rules editor: it then holds the
            inner condition's keys itself, and ``negate=True`` with ``any_patterns`` builds such a rule).

    Raises (on construction):
        pydantic.ValidationError: empty id, a pattern that does not compile (the pattern and the ``re``
            error are named), an unknown message placeholder or key, a key NITR would ignore.
    """

    id: str = Field(min_length=1)
    message: str = ""
    negate: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_json_shape(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if "negate" in data:
            return data
        inner = data.get("not")
        others = [k for k in data if k in CONDITION_KEYS and k != "not"]
        if isinstance(inner, dict) and not others:
            rest = {k: v for k, v in data.items() if k != "not"}
            return {**rest, **inner, "negate": True}
        return data

    @field_validator("message")
    @classmethod
    def _check_message(cls, value: str) -> str:
        return check_message(value, MESSAGE_FIELDS)

    def to_json(self) -> dict[str, Any]:
        """The rule in ``pipeline.json`` shape (``not: {...}`` for a negated rule)."""
        data: dict[str, Any] = {"id": self.id}
        condition = self.condition_json()
        data.update({"not": condition} if self.negate else condition)
        if self.message:
            data["message"] = self.message
        return data


class GlobalRule(SourceRule):
    """An aggregate rule (NITR ``source_analysis`` ``global_rules``): its condition is checked in every scanned
    file, and the module fails when fewer than ``min_matching_files`` or more than ``max_matching_files``
    files meet it (a finding for each bound crossed). ``message`` placeholders: :data:`GLOBAL_MESSAGE_FIELDS`.
    """

    min_matching_files: int | None = Field(default=None, ge=0)
    max_matching_files: int | None = Field(default=None, ge=0)

    @field_validator("message")
    @classmethod
    def _check_message(cls, value: str) -> str:
        return check_message(value, GLOBAL_MESSAGE_FIELDS)

    @model_validator(mode="after")
    def _bounded(self) -> GlobalRule:
        if self.min_matching_files is None and self.max_matching_files is None:
            raise ValueError("a global rule needs min_matching_files or max_matching_files (else it never fails)")
        return self

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        for key in ("min_matching_files", "max_matching_files"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return data


class SourceAnalysisModule(_Module):
    """``source_analysis``: rules over the source files of ``scan_roots`` (a structural oracle, NITR semantics).

    Attributes:
        root: as for :class:`RequiredPathsModule`; default ``case_root``.
        scan_roots: folders or files relative to ``root`` (default ``["src"]``, as in NITR); missing ones
            are skipped.
        suffixes: file-name endings scanned (default ``.h .hpp .cc .cpp``); an empty list scans every file.
        exclude_files: file names (``legacy.cpp``) or relative paths (``src/legacy.cpp``) left out.
        exclude_globs: glob patterns matched against the relative path (right-anchored, as
            :meth:`pathlib.PurePath.match`, and as :func:`fnmatch.fnmatch`) and the file name.
        normalize: one of :data:`NORMALIZE_MODES`; applied to each file before the rules see it.
        stop_on_first_match: stop at the first finding (the verdict is the same; fewer findings).
        rules: :class:`SourceRule` list; ids are unique within the module.
        global_rules: :class:`GlobalRule` list; at least one rule or global rule.
        enabled_if: a pipeline variable's name (the module runs when its value is true: not ``""``, ``0``,
            ``false``, ``off`` or ``no``), or a boolean; ``None`` (default): always runs.

    The module fails when any rule reports a finding (see :func:`benchwright.core.probes.rules.scan_sources`).
    """

    module_name: Literal["source_analysis"] = "source_analysis"
    root: str = "case_root"
    scan_roots: list[str] = Field(default_factory=lambda: ["src"], min_length=1)
    suffixes: list[str] = Field(default_factory=lambda: list(DEFAULT_SUFFIXES))
    exclude_files: Strings
    exclude_globs: Strings
    normalize: Literal["none", "strip_comments", "strip_comments_and_strings"] = "none"
    stop_on_first_match: bool = False
    rules: list[SourceRule] = Field(default_factory=list)
    global_rules: list[GlobalRule] = Field(default_factory=list)

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

    @model_validator(mode="after")
    def _unique_ids(self) -> SourceAnalysisModule:
        if not self.rules and not self.global_rules:
            raise ValueError("a source_analysis module needs at least one rule in rules or global_rules")
        seen: set[str] = set()
        for rule in [*self.rules, *self.global_rules]:
            if rule.id in seen:
                raise ValueError(f"rule id {rule.id!r} is used twice")
            seen.add(rule.id)
        return self

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data["rules"] = [rule.to_json() for rule in self.rules]
        if self.global_rules:
            data["global_rules"] = [rule.to_json() for rule in self.global_rules]
        else:
            data.pop("global_rules", None)
        for key, default in (("normalize", "none"), ("stop_on_first_match", False)):
            if data.get(key) == default:
                data.pop(key)
        return data


def _check_paths(value: list[str], what: str) -> list[str]:
    for item in value:
        _safe_relative(item, what)
    return value


class BaselineDiffModule(_Module):
    """``baseline_diff``: the submission (``case_root``) compared with the pristine starter
    (``baseline_case_root``), file by file; any change not allowed is a finding (NITR semantics).

    Attributes:
        paths: the relative paths compared; when empty, the files matched by ``include_globs`` in either tree.
        include_globs: ``pathlib`` glob patterns (``src/**/*``); default ``src/**/*`` and ``app/**/*``.
        exclude_globs: left out (right-anchored match against the relative path).
        allow_created, allow_deleted, allow_modified: paths that may be added, removed or changed.
        allow_missing_in_root, allow_missing_in_baseline: named paths that may be absent from one side.
        allowed_created_top_levels: top-level folders under which new files are allowed.

    Files are compared as text with universal newlines (CRLF and LF are the same), as NITR reads them.
    """

    module_name: Literal["baseline_diff"] = "baseline_diff"
    paths: Strings
    include_globs: list[str] = Field(default_factory=lambda: ["src/**/*", "app/**/*"])
    exclude_globs: Strings
    allow_created: Strings
    allow_deleted: Strings
    allow_modified: Strings
    allow_missing_in_root: Strings
    allow_missing_in_baseline: Strings
    allowed_created_top_levels: Strings

    @field_validator("paths")
    @classmethod
    def _paths(cls, value: list[str]) -> list[str]:
        return _check_paths(value, "path")

    @field_validator("include_globs")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        return _check_paths(value, "include glob")


class FrozenPathsModule(_Module):
    """``frozen_paths``: every path of ``paths`` exists in both the submission and the starter, with the same
    text (universal newlines); anything missing, created, deleted or modified is a finding."""

    module_name: Literal["frozen_paths"] = "frozen_paths"
    paths: list[str] = Field(min_length=1)

    @field_validator("paths")
    @classmethod
    def _paths(cls, value: list[str]) -> list[str]:
        return _check_paths(value, "frozen path")


PipelineModule = Annotated[
    BuildModule | UnitTestModule | RequiredPathsModule | SourceAnalysisModule | CustomizedCheckModule
    | BaselineDiffModule | FrozenPathsModule,
    Field(discriminator="module_name"),
]
"""Any module of a pipeline, told apart by ``module_name``."""

MODULE_TYPES: dict[str, type[_Module]] = {
    "build": BuildModule,
    "unit_test": UnitTestModule,
    "required_paths": RequiredPathsModule,
    "source_analysis": SourceAnalysisModule,
    "customized_check": CustomizedCheckModule,
    "baseline_diff": BaselineDiffModule,
    "frozen_paths": FrozenPathsModule,
}
"""``module_name`` -> module class."""


def _leaves_folder(value: str) -> bool:
    path = PurePosixPath(value.replace("\\", "/"))
    return path.is_absolute() or ".." in path.parts or bool(re.match(r"^[A-Za-z]:", value))


def is_enabled(flag: Any) -> bool:
    """NITR's reading of an ``enabled_if`` value: a boolean as is; a string is false when it is ``""``,
    ``0``, ``false``, ``off`` or ``no`` (any case, spaces ignored); anything else by its truth."""
    if isinstance(flag, bool):
        return flag
    if isinstance(flag, str):
        return flag.strip().lower() not in {"", "0", "false", "off", "no"}
    return bool(flag)


class Pipeline(BaseModel):
    """An evaluator pipeline: modules run in order; the probe passes only when every module passes.

    Two layouts:

    * ``benchwright`` (a probe folder): ``case_root`` and ``build_dir`` are relative to the workspace repo
      root (defaults ``case`` and ``build``; ``.`` puts the case at the repo root); no ``..``, not absolute.
    * ``nitr`` (a NITR checkout, :data:`NITR_PATH_KEYS` pointing outside the evaluator folder, such as
      ``"case_root": "../../.submit-output/<config>/cases/<id>"``): the paths are read as what they mean in
      NITR's layout and mapped into the workspace (``repo/cases/<id>`` the submission, ``baseline/<id>`` the
      pristine starter, ``repo/build``); the values given are kept in :attr:`nitr_paths`, never used as
      paths, so nothing runs outside the workspace.

    Attributes:
        case_root, build_dir: see above (for a NITR layout the benchwright defaults, unused).
        layout: ``benchwright`` or ``nitr``.
        nitr_paths: the NITR top-level paths as written (``case_root``, ``baseline_case_root``,
            ``build_dir``, ``evaluator_root``).
        variables: NITR ``variables`` (placeholders in commands, ``enabled_if`` switches).
        env: variables set for every command (NITR's top-level ``env``), placeholders allowed.
        modules: at least one module.
    """

    model_config = ConfigDict(frozen=True)

    case_root: str = "case"
    build_dir: str = "build"
    layout: Literal["benchwright", "nitr"] = "benchwright"
    nitr_paths: dict[str, str] = Field(default_factory=dict)
    variables: dict[str, str | bool | int | float] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    modules: list[PipelineModule] = Field(min_length=1)

    @field_validator("case_root")
    @classmethod
    def _check_case_root(cls, value: str) -> str:
        return _safe_relative(value, "case_root")

    @field_validator("build_dir")
    @classmethod
    def _check_build_dir(cls, value: str) -> str:
        return _safe_relative(value, "build_dir", allow_dot=False)

    @field_validator("variables")
    @classmethod
    def _check_variables(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in PLACEHOLDERS:
                raise ValueError(f"variable name {name!r} must be an identifier other than {', '.join(PLACEHOLDERS)}")
        return value

    @model_validator(mode="after")
    def _distinct(self) -> Pipeline:
        if PurePosixPath(self.case_root) == PurePosixPath(self.build_dir):
            raise ValueError("case_root and build_dir must differ")
        return self

    def placeholder_problems(self) -> list[tuple[str, str]]:
        """``(field, message)`` for each placeholder that is neither in :data:`PLACEHOLDERS` nor a variable."""
        allowed = (*PLACEHOLDERS, *self.variables)
        problems: list[tuple[str, str]] = []

        def check(where: str, text: str | None) -> None:
            if text is None:
                return
            try:
                check_placeholders(text, allowed)
            except ValueError as error:
                problems.append((where, str(error)))

        for key, text in self.env.items():
            check(f"env.{key}", text)
        for index, module in enumerate(self.modules):
            where = f"modules[{index}]"
            if isinstance(module, _CommandModule):
                for part in module.command:
                    check(f"{where}.command", part)
                check(f"{where}.cwd", module.cwd)
                for key, text in module.env.items():
                    check(f"{where}.env.{key}", text)
                for part in getattr(module, "configure_args", None) or []:
                    check(f"{where}.configure_args", part)
            if isinstance(module.enabled_if, str) and module.enabled_if not in self.variables:
                problems.append((f"{where}.enabled_if", f"enabled_if names {module.enabled_if!r}, which is not one of "
                                 f"the pipeline's variables ({', '.join(self.variables) or 'none'})"))
        return problems

    @model_validator(mode="after")
    def _known_placeholders(self) -> Pipeline:
        problems = self.placeholder_problems()
        if problems:
            raise ValueError(f"{problems[0][0]}: {problems[0][1]}")
        return self

    def with_variables(self, settings: dict[str, str]) -> Pipeline:
        """A copy with some ``variables`` set (NITR's ``--set KEY=VALUE``): ``true`` / ``false`` (any case) become
        booleans, as NITR reads them; other values stay text.

        Raises:
            ValueError: a name that is not one of the pipeline's variables (the known ones are listed).
        """
        unknown = [name for name in settings if name not in self.variables]
        if unknown:
            raise ValueError(f"no variable {', '.join(repr(u) for u in unknown)} in this pipeline; its variables: "
                             f"{', '.join(self.variables) or 'none'}")
        coerced = {k: {"true": True, "false": False}.get(v.strip().lower(), v.strip()) for k, v in settings.items()}
        return self.model_copy(update={"variables": {**self.variables, **coerced}})

    def enabled_modules(self) -> list[PipelineModule]:
        """The modules that run: those without ``enabled_if`` or whose switch is on (:func:`is_enabled`)."""
        out = []
        for module in self.modules:
            flag = module.enabled_if
            if flag is None or is_enabled(self.variables.get(flag) if isinstance(flag, str) else flag):
                out.append(module)
        return out

    def source_modules(self) -> list[SourceAnalysisModule]:
        """The ``source_analysis`` modules, in order (for a rules editor)."""
        return [m for m in self.modules if isinstance(m, SourceAnalysisModule)]

    def to_json(self) -> dict[str, Any]:
        """The pipeline in ``pipeline.json`` shape; :func:`pipeline_from_dict` reads it back unchanged."""
        if self.layout == "nitr":
            data: dict[str, Any] = dict(self.nitr_paths)
        else:
            data = {"case_root": self.case_root, "build_dir": self.build_dir}
        if self.variables:
            data["variables"] = dict(self.variables)
        if self.env:
            data["env"] = dict(self.env)
        data["modules"] = [module.to_json() for module in self.modules]
        return data


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, str) and part.startswith(("function-after", "function-before", "function-wrap")):
            continue
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out.replace(".not_", ".not")


def _problem_text(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    if kind == "missing":
        return "missing field"
    if kind == "extra_forbidden":
        return "unknown field"
    message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    value = error.get("input")
    if isinstance(value, str | int | float | bool) and repr(value) not in message:
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        message += f" (got {shown})"
    return message


def _top_level(data: dict[str, Any], file: str, problems: list[InputProblem]) -> dict[str, Any]:
    """The top-level fields of ``data`` for :class:`Pipeline` (layout read from the path keys)."""
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            problems.append(InputProblem(file, None, key, f"unknown top-level key; known keys: {', '.join(TOP_LEVEL_KEYS)}"))
    paths = {k: data[k] for k in (*NITR_PATH_KEYS, "evaluator_root") if k in data}
    for key, value in paths.items():
        if not isinstance(value, str) or not value.strip():
            problems.append(InputProblem(file, None, key, "must be a string (a path)"))
    paths = {k: v for k, v in paths.items() if isinstance(v, str) and v.strip()}
    top: dict[str, Any] = {}
    if "baseline_case_root" in paths or "evaluator_root" in paths or any(_leaves_folder(v) for v in paths.values()):
        top.update(layout="nitr", nitr_paths=paths)
    else:
        top.update({k: v for k, v in paths.items() if k in ("case_root", "build_dir")})
    for key in ("variables", "env"):
        if key in data:
            value = data[key]
            if not isinstance(value, dict):
                problems.append(InputProblem(file, None, key, "must be a JSON object"))
            elif key == "env" and not all(isinstance(v, str | int | float | bool) for v in value.values()):
                problems.append(InputProblem(file, None, key, "values must be strings"))
            else:
                top[key] = {k: str(v) for k, v in value.items()} if key == "env" else value
    return top


def pipeline_from_dict(data: Any, source: str | Path = "pipeline.json") -> Pipeline:
    """Validate a decoded ``pipeline.json`` object; ``source`` names the file in errors.

    Every key is checked: an unknown top-level key (:data:`TOP_LEVEL_KEYS`), module type, module key or rule
    key is refused, never ignored.

    Raises:
        InputFileError: every problem found, each naming ``source`` and a field such as
            ``modules[2].rules[0].any_patterns`` with the module's name and type in the message:
            unknown key or module type, missing field, bad regular expression, unknown placeholder,
            unsafe path, a rule key NITR would ignore.
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
    top = _top_level(data, file, problems)
    if problems:
        raise InputFileError(problems)
    try:
        pipeline = Pipeline.model_construct(**top, modules=modules)
        names = pipeline.placeholder_problems() if all(isinstance(v, dict) for v in (top.get("variables", {}), top.get("env", {}))) else []
        if names:
            raise InputFileError([InputProblem(file, None, where, message) for where, message in names])
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
