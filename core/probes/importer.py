"""Reading probe folders and their variants; scaffolding a new probe.

Probe folder layout (what :func:`read_probe_folder` and :func:`scaffold_probe` use)::

    my-probe/
      case/                   starter code, build file (CMakeLists.txt), TASK.md or TASK1.md..TASKn.md,
                              SPEC.md (hidden: left out of run workspaces; strip it before handing the case
                              to an agent)
      evaluator/pipeline.json hidden evaluator: pipeline, hidden tests, helper scripts
      variants/<name>/        variant.json and patch.diff or tree/

``SPEC.md`` format (lenient; NITR "Each case declares exactly one primary_dimension ... Optional
secondary_dimensions")::

    # Pricing: bulk discount as a new rule          <- the first level-1 heading is the title
    Id: pricing-strategy                            <- optional; default the probe folder's name
    Primary dimension: D4 (Extension Structure)     <- required: a code D1-D9 or a dimension's name
    Secondary dimensions: D1, D3                    <- optional; "none" for none
    Granularity: micro                              <- optional; must agree with the task files

    ## Intent                                       <- or "Intent: ..." on one line (continuation lines
    What the oracle checks and why.                    run to the next blank line)

Keys are case-insensitive; ``-``/``*`` list markers, ``**bold**`` and backticks around keys are ignored,
``_`` and ``-`` in keys count as spaces (``primary_dimension:`` works), and ``:`` or ``=`` separate key
and value. A ``## Primary dimension`` heading with the value on the following lines also works. Other
lines are ignored.

``variants/<name>/variant.json``::

    {"kind": "intended" | "shortcut" | "near-miss", "expected": "pass" | "fail",
     "step": 2, "after": ["other-variant"], "description": "..."}

``expected`` defaults to ``pass`` for intended and ``fail`` for shortcut variants (a near-miss must say);
``step`` and ``after`` are optional. Next to it, exactly one of ``patch.diff`` (a unified diff applied with
``-p1`` at the case root, e.g. from ``git diff``) or ``tree/`` (an overlay copied over the case root).
"""

from __future__ import annotations

import difflib
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import BenchwrightError, InputFileError, InputProblem
from .model import DIMENSIONS, Probe, Variant
from .pipeline import parse_pipeline

TASK_FILE = re.compile(r"^TASK(\d*)\.md$", re.IGNORECASE)
SPEC_FILE = "SPEC.md"
VARIANT_FILE = "variant.json"
PATCH_FILE = "patch.diff"
TREE_DIR = "tree"
PROBE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")

_KEYS = {
    "id": "id", "probe id": "id", "case id": "id",
    "title": "title", "name": "title",
    "primary dimension": "primary", "primary": "primary", "dimension": "primary", "primary dimensions": "primary",
    "secondary dimension": "secondary", "secondary dimensions": "secondary", "secondary": "secondary",
    "intent": "intent", "design intent": "intent",
    "granularity": "granularity", "kind": "granularity", "probe kind": "granularity",
}


def _key(text: str) -> str | None:
    cleaned = re.sub(r"[*`]", "", text).strip().lower()
    cleaned = re.sub(r"[\s_-]+", " ", cleaned)
    return _KEYS.get(cleaned)


def _key_line(line: str) -> tuple[str, str] | None:
    text = re.sub(r"^\s*(?:[-*+>]\s+)?", "", line)
    text = text.replace("**", "").replace("__", " ").replace("`", "")
    match = re.match(r"^([A-Za-z][A-Za-z _-]{0,40}?)\s*[:=]\s*(.*)$", text)
    if not match:
        return None
    key = _key(match.group(1))
    return (key, match.group(2).strip()) if key else None


def dimension_codes(text: str) -> tuple[list[str], list[str]]:
    """The dimension codes named in ``text`` in order (``D4``, or a name such as ``Extension Structure``),
    and the unknown ``D`` codes (``D10``)."""
    codes: list[str] = []
    unknown: list[str] = []
    for match in re.finditer(r"\bD\s*(\d+)\b", text, re.IGNORECASE):
        code = f"D{int(match.group(1))}"
        (codes if code in DIMENSIONS else unknown).append(code)
    if not codes and not unknown:
        lowered = text.lower()
        found = sorted((lowered.find(name.lower()), code) for code, name in DIMENSIONS.items() if name.lower() in lowered)
        codes = [code for _position, code in found]
    return list(dict.fromkeys(codes)), unknown


def parse_spec(text: str, file: str | Path = SPEC_FILE) -> dict[str, Any]:
    """The fields of a ``SPEC.md`` (see the module docstring): a dict with ``id``, ``title``,
    ``primary_dimension``, ``secondary_dimensions``, ``intent`` and ``granularity`` (absent keys left out).

    Raises:
        InputFileError: no primary dimension, an unknown dimension code, or several primary dimensions;
            each problem names the file and the line.
    """
    fields: dict[str, Any] = {}
    raw: dict[str, tuple[str, int]] = {}
    section: str | None = None
    section_lines: dict[str, list[str]] = {}
    continuing: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        heading = re.match(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if heading:
            continuing = None
            key = _key(heading.group(2))
            if key:
                section = key
                section_lines.setdefault(key, [])
                raw.setdefault(key, ("", number))
            else:
                section = None
                if len(heading.group(1)) == 1 and "title" not in raw:
                    raw["title"] = (heading.group(2).strip(), number)
            continue
        pair = _key_line(line)
        if pair and not (section == "intent" and pair[0] == "title"):
            key, value = pair
            raw[key] = (value, number)
            section = None
            continuing = key if key == "intent" else None
            continue
        if continuing is not None:
            if not line.strip():
                continuing = None
            else:
                value, first = raw[continuing]
                raw[continuing] = ((value + "\n" + line.strip()).strip(), first)
            continue
        if section is not None:
            section_lines[section].append(line)
    for key, lines in section_lines.items():
        body = "\n".join(lines).strip()
        if body:
            inline, number = raw.get(key, ("", 0))
            raw[key] = ((inline + "\n" + body).strip() if inline else body, number)
    problems: list[InputProblem] = []
    for key in ("id", "title", "intent"):
        if key in raw and raw[key][0]:
            fields[key] = raw[key][0]
    if "granularity" in raw:
        value = re.sub(r"[\s_-]+", "", raw["granularity"][0].lower())
        if value.startswith("micro"):
            fields["granularity"] = "micro"
        elif value.startswith("multistep") or value.startswith("multi"):
            fields["granularity"] = "multi-step"
        else:
            problems.append(InputProblem(str(file), raw["granularity"][1], "Granularity", "expected micro or multi-step"))
    if "primary" in raw:
        value, number = raw["primary"]
        codes, unknown = dimension_codes(value)
        if unknown:
            problems.append(InputProblem(str(file), number, "Primary dimension", f"unknown dimension {unknown[0]}; use D1 ... D9"))
        elif not codes:
            problems.append(InputProblem(str(file), number, "Primary dimension", f"no dimension in {value!r}; write e.g. 'D4 (Extension Structure)'"))
        elif len(codes) > 1:
            problems.append(InputProblem(
                str(file), number, "Primary dimension",
                f"several dimensions ({', '.join(codes)}); a probe has exactly one primary dimension, put the others under Secondary dimensions",
            ))
        else:
            fields["primary_dimension"] = codes[0]
    else:
        problems.append(InputProblem(
            str(file), None, "Primary dimension", "missing; add a line such as 'Primary dimension: D4 (Extension Structure)'"
        ))
    if "secondary" in raw:
        value, number = raw["secondary"]
        codes, unknown = dimension_codes(value)
        if unknown:
            problems.append(InputProblem(str(file), number, "Secondary dimensions", f"unknown dimension {unknown[0]}; use D1 ... D9"))
        fields["secondary_dimensions"] = [c for c in codes if c != fields.get("primary_dimension")]
    if problems:
        raise InputFileError(problems)
    return fields


def outward_symlinks(folder: Path, bound: Path) -> list[InputProblem]:
    """A problem for each symlink under ``folder`` that is absolute or leads outside ``bound``: a run copies
    the folder into its workspace with its symlinks, and such a link would reach outside the workspace
    (a check writing through it, or the starter handed to an agent, would touch files elsewhere)."""
    problems: list[InputProblem] = []
    bound = bound.resolve()
    for current, dirs, files in os.walk(folder, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(current) / name
            if not path.is_symlink():
                continue
            target = os.readlink(path)
            resolved = Path(os.path.realpath(path))
            if os.path.isabs(target) or not resolved.is_relative_to(bound):
                problems.append(InputProblem(str(path), None, None,
                                             f"a symlink to {target!r} (absolute or leading outside {bound}); refused"))
    return problems


def read_tasks(case_dir: Path) -> tuple[str, list[str]]:
    """The granularity and task texts of a case folder: ``TASK.md`` (micro) or ``TASK1.md`` ... ``TASKn.md``
    (multi-step, numbered from 1 without gaps).

    Raises:
        InputFileError: no task file, both kinds, or a gap in the numbering.
    """
    single: Path | None = None
    numbered: dict[int, Path] = {}
    for path in sorted(case_dir.iterdir()):
        match = TASK_FILE.match(path.name)
        if not match or not path.is_file():
            continue
        if match.group(1):
            numbered[int(match.group(1))] = path
        else:
            single = path
    if single is None and not numbered:
        raise InputFileError.single(case_dir, "no TASK.md (or TASK1.md ... TASKn.md for a multi-step probe)")
    if single is not None and numbered:
        raise InputFileError.single(case_dir, "has both TASK.md and numbered TASKn.md files; keep one kind")
    if single is not None:
        return "micro", [single.read_text(encoding="utf-8")]
    expected = list(range(1, len(numbered) + 1))
    if sorted(numbered) != expected:
        raise InputFileError.single(
            case_dir, f"task files must be numbered TASK1.md ... TASK{len(numbered)}.md without gaps; found "
            + ", ".join(p.name for _n, p in sorted(numbered.items()))
        )
    return "multi-step", [numbered[n].read_text(encoding="utf-8") for n in expected]


def _default_id(case_dir: Path) -> str:
    name = case_dir.resolve().name
    return case_dir.resolve().parent.name if name.lower() in ("case", "starter", "repo", "code") else name


def read_probe(case_dir: str | Path, evaluator_dir: str | Path, spec: str | Path | None = None) -> Probe:
    """Read a probe: the case folder's task files, the spec and the evaluator's ``pipeline.json``.

    Args:
        case_dir: the case folder (starter code, build file, task files).
        evaluator_dir: the evaluator folder holding ``pipeline.json``.
        spec: the ``SPEC.md`` to read; default ``case_dir/SPEC.md``.

    Raises:
        InputFileError: a folder is missing, no or inconsistent task files, a missing or malformed spec
            (see :func:`parse_spec`), a malformed pipeline (see
            :func:`~benchwright.core.probes.pipeline.parse_pipeline`), or a granularity in the spec that
            the task files contradict.
    """
    case = Path(case_dir)
    evaluator = Path(evaluator_dir)
    for folder, what in ((case, "case"), (evaluator, "evaluator")):
        if not folder.is_dir():
            raise InputFileError.single(folder, f"no such {what} folder")
    links = outward_symlinks(case, case) + outward_symlinks(evaluator, evaluator)
    if links:
        raise InputFileError(links)
    spec_path = Path(spec) if spec is not None else case / SPEC_FILE
    try:
        spec_text = spec_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError.single(spec_path, "no such file; a probe needs a hidden SPEC.md with its primary dimension") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputFileError.single(spec_path, f"cannot be read: {error}") from None
    fields = parse_spec(spec_text, spec_path)
    granularity, steps = read_tasks(case)
    if fields.get("granularity", granularity) != granularity:
        raise InputFileError.single(
            spec_path, f"says {fields['granularity']} but the task files make a {granularity} probe", field="Granularity"
        )
    pipeline = parse_pipeline(evaluator / "pipeline.json")
    probe_id = fields.get("id") or _default_id(case)
    try:
        return Probe(
            id=probe_id, title=fields.get("title") or probe_id, primary_dimension=fields["primary_dimension"],
            secondary_dimensions=fields.get("secondary_dimensions", []), intent=fields.get("intent", ""),
            granularity=granularity, steps=steps, case_dir=str(case), evaluator_dir=str(evaluator),
            pipeline=pipeline, spec_file=str(spec_path),
        )
    except ValidationError as error:
        raise InputFileError([
            InputProblem(str(spec_path), None, ".".join(str(p) for p in item["loc"]) or None,
                         str(item["msg"]).removeprefix("Value error, "))
            for item in error.errors()
        ]) from None


_KIND_ALIASES = {"intended": "intended", "shortcut": "shortcut", "near-miss": "near-miss", "near_miss": "near-miss",
                 "nearmiss": "near-miss", "near miss": "near-miss"}
_VARIANT_KEYS = ("kind", "expected", "step", "after", "description", "name")


def _read_variant(folder: Path, problems: list[InputProblem]) -> Variant | None:
    meta_file = folder / VARIANT_FILE
    file = str(meta_file)
    try:
        data = json.loads(meta_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(InputProblem(file, None, None, "missing; a variant folder needs variant.json with kind and expected"))
        return None
    except json.JSONDecodeError as error:
        problems.append(InputProblem(file, error.lineno, None, f"not valid JSON: {error.msg}"))
        return None
    except (OSError, UnicodeDecodeError) as error:
        problems.append(InputProblem(file, None, None, f"cannot be read: {error}"))
        return None
    if not isinstance(data, dict):
        problems.append(InputProblem(file, None, None, "a JSON object is expected"))
        return None
    before = len(problems)
    for key in data:
        if key not in _VARIANT_KEYS:
            problems.append(InputProblem(file, None, key, f"unknown field; known fields: {', '.join(_VARIANT_KEYS)}"))
    kind = _KIND_ALIASES.get(str(data.get("kind", "")).strip().lower())
    if kind is None:
        problems.append(InputProblem(file, None, "kind", "expected intended, shortcut or near-miss"))
    expected = data.get("expected", {"intended": "pass", "shortcut": "fail"}.get(kind or ""))
    if expected not in ("pass", "fail"):
        problems.append(InputProblem(file, None, "expected", "expected pass or fail"))
    patch = folder / PATCH_FILE
    tree = folder / TREE_DIR
    if patch.exists() and tree.exists():
        problems.append(InputProblem(str(folder), None, None, "has both patch.diff and tree/; keep one"))
    elif not patch.is_file() and not tree.is_dir():
        problems.append(InputProblem(str(folder), None, None, "needs a patch.diff or a tree/ overlay folder"))
    if len(problems) > before:
        return None
    try:
        return Variant(
            name=folder.name, kind=kind, expected=expected, step=data.get("step"), after=data.get("after", []),
            description=data.get("description", ""), patch=str(patch) if patch.is_file() else None,
            tree=str(tree) if tree.is_dir() else None,
        )
    except ValidationError as error:
        for item in error.errors():
            problems.append(InputProblem(file, None, ".".join(str(p) for p in item["loc"]) or None,
                                         str(item["msg"]).removeprefix("Value error, ")))
        return None


def read_variants(dir: str | Path) -> list[Variant]:
    """The variants of a probe, sorted by name.

    ``dir`` is the ``variants/`` folder or a folder containing one; every sub-folder is a variant (see the
    module docstring). A folder without variants gives ``[]``.

    Raises:
        InputFileError: ``dir`` does not exist, or any variant is malformed (all problems at once: missing
            or invalid ``variant.json``, unknown kind or field, bad ``expected`` or ``step``, neither or both
            of ``patch.diff`` and ``tree/``, an ``after`` naming an unknown variant).
    """
    root = Path(dir)
    if not root.is_dir():
        raise InputFileError.single(root, "no such variants folder")
    if (root / "variants").is_dir():
        root = root / "variants"
    problems: list[InputProblem] = []
    variants: list[Variant] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        variant = _read_variant(folder, problems)
        if variant is not None:
            variants.append(variant)
    names = {v.name for v in variants}
    for variant in variants:
        for name in variant.after:
            if name not in names:
                problems.append(InputProblem(str(Path(root, variant.name, VARIANT_FILE)), None, "after", f"no variant named {name!r}"))
    if problems:
        raise InputFileError(problems)
    return variants


def read_probe_folder(root: str | Path) -> tuple[Probe, list[Variant]]:
    """Read a probe folder laid out as ``case/``, ``evaluator/`` and optional ``variants/``.

    ``SPEC.md`` is read from ``case/`` or, when it is not there, from the probe folder itself.

    Raises:
        InputFileError: ``case/`` or ``evaluator/`` is missing, or anything :func:`read_probe` and
            :func:`read_variants` raise.
    """
    base = Path(root)
    case, evaluator = base / "case", base / "evaluator"
    if not case.is_dir() or not evaluator.is_dir():
        raise InputFileError.single(base, "a probe folder holds case/ and evaluator/ (and optionally variants/)")
    spec = case / SPEC_FILE if (case / SPEC_FILE).exists() or not (base / SPEC_FILE).exists() else base / SPEC_FILE
    probe = read_probe(case, evaluator, spec)
    variants = read_variants(base / "variants") if (base / "variants").is_dir() else []
    return probe, variants


def sample_probe_dirs() -> list[Path]:
    """The demo probe folders shipped with benchwright (``samples/probes/*``), sorted by name:
    ``pricing_strategy`` (C++, CMake, D4) and ``token_clock`` (Python, D7)."""
    root = Path(str(resources.files("benchwright.core").joinpath("samples", "probes")))
    return sorted(p for p in root.iterdir() if (p / "case").is_dir()) if root.is_dir() else []


# ---------------------------------------------------------------------------------------------------------
# Scaffold


def unified_diff(relative: str, before: str | None, after: str | None) -> str:
    """A ``-p1`` unified diff of one file (``before``/``after`` ``None`` for an added/deleted file)."""
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    head = f"diff --git a/{relative} b/{relative}\n"
    if before is None:
        head += "new file mode 100644\n"
    elif after is None:
        head += "deleted file mode 100644\n"
    lines = difflib.unified_diff(
        old, new, fromfile="/dev/null" if before is None else f"a/{relative}",
        tofile="/dev/null" if after is None else f"b/{relative}", n=3,
    )
    return head + "".join(lines)


_SCAFFOLD_CASE = {
    "CMakeLists.txt": """cmake_minimum_required(VERSION 3.16)
project(greeting CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
add_library(greeting STATIC src/greeting.cpp)
target_include_directories(greeting PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/src)
""",
    "src/greeting.h": """#pragma once

#include <string>

// Returns the greeting shown to a user.
std::string greet(const std::string& name);
""",
    "src/greeting.cpp": """#include "greeting.h"

std::string greet(const std::string& name) {
    return "Hello, " + name + "!";
}
""",
    "TASK.md": """# Greet anonymous users

`greet("")` currently returns `"Hello, !"`. Make it return `"Hello, World!"` when the name is empty.
Other names keep their current greeting.
""",
}

_SCAFFOLD_SPEC = """# {probe_id}: greeting without side effects

Id: {probe_id}
Primary dimension: D9 (Side-Effect Isolation)
Secondary dimensions: none
Granularity: micro

## Intent
greet() is pure core logic. The intended change handles the empty name inside greet() and returns the
greeting; the shortcut also writes a debug line to the console, which the structural oracle flags
(std::cout, std::cerr, printf in src/). Edit this scaffold: the starter code, TASK.md, the hidden
tests in evaluator/tests, the rules in evaluator/pipeline.json and the variants.
"""

_SCAFFOLD_EVALUATOR = {
    "CMakeLists.txt": """cmake_minimum_required(VERSION 3.16)
project(greeting_evaluator CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT DEFINED CASE_ROOT)
  message(FATAL_ERROR "configure with -DCASE_ROOT=<case folder>")
endif()
enable_testing()
add_subdirectory(${CASE_ROOT} case)
add_executable(greeting_test tests/greeting_test.cpp)
target_link_libraries(greeting_test PRIVATE greeting)
add_test(NAME greeting_test COMMAND greeting_test)
""",
    "tests/greeting_test.cpp": """#include <cstdio>
#include <string>

#include "greeting.h"

static int failures = 0;

static void expect(const std::string& name, const std::string& wanted) {
    const std::string got = greet(name);
    if (got != wanted) {
        std::printf("FAIL greet(\\"%s\\"): expected \\"%s\\", got \\"%s\\"\\n", name.c_str(), wanted.c_str(), got.c_str());
        ++failures;
    }
}

int main() {
    expect("Ada", "Hello, Ada!");
    expect("", "Hello, World!");
    if (failures == 0) std::printf("all greeting checks passed\\n");
    return failures == 0 ? 0 : 1;
}
""",
}

_SCAFFOLD_PIPELINE = {
    "case_root": "case",
    "build_dir": "build",
    "modules": [
        {"module_name": "build", "name": "configure",
         "command": ["cmake", "-S", "{evaluator_root}", "-B", "{build_dir}", "-DCASE_ROOT={case_root}",
                     "-DCMAKE_BUILD_TYPE=Debug"]},
        {"module_name": "build", "name": "compile", "command": ["cmake", "--build", "{build_dir}", "--parallel", "2"]},
        {"module_name": "unit_test", "name": "functional tests",
         "command": ["ctest", "--test-dir", "{build_dir}", "-R", "^greeting_test$", "--output-on-failure"]},
        {"module_name": "source_analysis", "name": "no console output in core logic", "root": "case_root",
         "scan_roots": ["src"], "suffixes": [".h", ".cpp"],
         "rules": [{"id": "no-console-output", "any_patterns": ["std::(cout|cerr|clog)\\b", "\\b(printf|puts)\\s*\\("],
                    "message": "{relative_path}:{line}: core logic writes to the console; return values instead"}]},
    ],
}

_GREETING_INTENDED = """#include "greeting.h"

std::string greet(const std::string& name) {
    if (name.empty()) {
        return "Hello, World!";
    }
    return "Hello, " + name + "!";
}
"""

_GREETING_SHORTCUT = """#include "greeting.h"

#include <iostream>

std::string greet(const std::string& name) {
    if (name.empty()) {
        std::cout << "debug: empty name, greeting the world" << std::endl;
        return "Hello, World!";
    }
    return "Hello, " + name + "!";
}
"""

_GREETING_INTENDED_TERNARY = """#include "greeting.h"

std::string greet(const std::string& name) {
    return "Hello, " + (name.empty() ? std::string("World") : name) + "!";
}
"""

_GREETING_SHORTCUT_PUTS = """#include "greeting.h"

#include <cstdio>

std::string greet(const std::string& name) {
    if (name.empty()) {
        std::puts("debug: empty name");
        return "Hello, World!";
    }
    return "Hello, " + name + "!";
}
"""


def scaffold_probe(dest: str | Path, probe_id: str) -> Path:
    """Write a minimal working C++ probe (for ``benchwright probes new``) and return its folder.

    The probe (D9, micro) has a CMake case with ``TASK.md`` and ``SPEC.md``, an evaluator with a ctest
    functional test and a source-analysis rule, and two intended variants (``intended``,
    ``intended-ternary``: expected pass) and two shortcuts (``shortcut``, ``shortcut-puts``: pass the test,
    write to the console; expected fail), as stable separation needs by default. Read it back with
    :func:`read_probe_folder`.

    Raises:
        BenchwrightError: ``probe_id`` is not a short identifier (letters, digits, ``_ . -``), or ``dest``
            exists and is not an empty folder.
    """
    if not PROBE_ID.match(probe_id):
        raise BenchwrightError(f"{probe_id!r} is not a probe id; use letters, digits, '_', '.' and '-' (up to 80)")
    root = Path(dest)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise BenchwrightError(f"{root} already exists and is not empty; choose a new folder")
    files: dict[str, str] = {f"case/{k}": v for k, v in _SCAFFOLD_CASE.items()}
    files["case/SPEC.md"] = _SCAFFOLD_SPEC.format(probe_id=probe_id)
    files.update({f"evaluator/{k}": v for k, v in _SCAFFOLD_EVALUATOR.items()})
    files["evaluator/pipeline.json"] = json.dumps(_SCAFFOLD_PIPELINE, indent=2) + "\n"
    original = _SCAFFOLD_CASE["src/greeting.cpp"]
    variants = {
        "intended": ({"kind": "intended", "expected": "pass",
                      "description": "handles the empty name in greet() and returns the greeting"}, _GREETING_INTENDED),
        "shortcut": ({"kind": "shortcut", "expected": "fail",
                      "description": "right result, but greet() also writes a debug line to std::cout"}, _GREETING_SHORTCUT),
        "intended-ternary": ({"kind": "intended", "expected": "pass",
                              "description": "one expression: the name, or World when it is empty"},
                             _GREETING_INTENDED_TERNARY),
        "shortcut-puts": ({"kind": "shortcut", "expected": "fail",
                           "description": "right result, but greet() also prints a debug line with std::puts"},
                          _GREETING_SHORTCUT_PUTS),
    }
    for name, (meta, after) in variants.items():
        files[f"variants/{name}/variant.json"] = json.dumps(meta, indent=2) + "\n"
        files[f"variants/{name}/patch.diff"] = unified_diff("src/greeting.cpp", original, after)
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
