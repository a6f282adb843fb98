"""Source-analysis rules (NITR structural oracles) and applying a variant to a folder.

NITR (oracle design): the structural checks "are lightweight and targeted rather than full semantic
program analyses", e.g. flagging ``std::stoi`` outside the designated validation path. Here a rule is a
list of regular expressions searched in the text of each scanned file:

* a plain rule reports a ``violation`` for every line where one of its patterns matches;
* a ``not`` rule (``negate``) reports a file as ``missing`` when none of its patterns matches anywhere in
  it, and reports the scan roots as ``missing`` when no file was scanned at all (a required pattern
  cannot be found in nothing).

:func:`scan_sources` runs no subprocess, so a rules editor can preview matches on a variant's tree
(:func:`preview_matches`) without building anything.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import BenchwrightError
from ._workspace import Workspace, scrubbed_environment
from .pipeline import SourceAnalysisModule, SourceRule

MAX_SCAN_BYTES = 2_000_000
"""Files larger than this are not scanned (bytes)."""

MAX_MATCHES_PER_FILE = 50
"""At most this many matching lines are reported per rule and file."""

APPLY_TIMEOUT_S = 60.0
"""Timeout of ``git apply`` / ``patch`` (seconds)."""


class RuleMatch(BaseModel):
    """One finding of a rule (or of a ``required_paths`` module) in one file.

    Attributes:
        rule_id: the rule's id (``required_path`` for a missing required path).
        relative_path: the file, relative to the module's root, POSIX separators.
        line: 1-based line of a violation; ``None`` for ``missing``.
        text: the matching line, stripped and cut to 200 characters ("" for ``missing``).
        message: the rule's message with its placeholders filled in.
        kind: ``violation`` (a forbidden pattern was found) or ``missing`` (a required pattern or path
            was not found).
    """

    model_config = ConfigDict(frozen=True)

    rule_id: str
    relative_path: str
    line: int | None
    text: str
    message: str
    kind: Literal["violation", "missing"]

    def location(self) -> str:
        """``path:line`` (or just the path)."""
        return f"{self.relative_path}:{self.line}" if self.line is not None else self.relative_path


class VariantApplyError(BenchwrightError):
    """A variant cannot be applied: the patch does not apply, a path is unsafe, the overlay is broken."""


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def _excluded(module: SourceAnalysisModule, relative: str, name: str) -> bool:
    for item in module.exclude_files:
        if item in (name, relative):
            return True
    return any(fnmatch.fnmatch(relative, g) or fnmatch.fnmatch(name, g) for g in module.exclude_globs)


def source_files(module: SourceAnalysisModule, root: Path) -> list[tuple[str, Path]]:
    """The files ``module`` scans under ``root``: ``(relative_path, path)`` sorted by relative path.

    Folders of ``scan_roots`` are walked (symlinked folders are not followed) and filtered by
    ``suffixes``; a file named directly in ``scan_roots`` is scanned whatever its suffix. Excluded files,
    files larger than :data:`MAX_SCAN_BYTES` and symlinks leading outside ``root`` are left out; missing
    scan roots are skipped.
    """
    root = Path(root)
    found: dict[str, Path] = {}

    def consider(path: Path, *, named: bool) -> None:
        if not path.is_file() or not _inside(path, root):
            return
        relative = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        if not named and module.suffixes and not path.name.endswith(tuple(module.suffixes)):
            return
        if _excluded(module, relative, path.name):
            return
        try:
            if path.stat().st_size > MAX_SCAN_BYTES:
                return
        except OSError:
            return
        found.setdefault(relative, path)

    for scan_root in module.scan_roots:
        base = root / PurePosixPath(scan_root)
        if not base.exists() or not _inside(base, root):
            continue
        if base.is_file():
            consider(base, named=True)
            continue
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames.sort()
            for name in sorted(filenames):
                consider(Path(dirpath) / name, named=False)
    return sorted(found.items())


def _render(rule: SourceRule, relative: str, path: Path, line: int | None) -> str:
    default = (
        "required pattern of rule {rule_id} not found in {relative_path}" if rule.negate
        else "rule {rule_id} matched in {relative_path}:{line}"
    )
    values = {
        "rule_id": rule.id, "relative_path": relative, "filename": path.name,
        "line": "" if line is None else str(line), "path": str(path),
    }
    return (rule.message or default).format_map(values)


def match_rule(rule: SourceRule, relative: str, path: Path, content: str) -> list[RuleMatch]:
    """The findings of one rule in one file's ``content`` (see the module docstring)."""
    if rule.negate:
        if any(p.search(content) for p in rule.compiled()):
            return []
        return [RuleMatch(
            rule_id=rule.id, relative_path=relative, line=None, text="",
            message=_render(rule, relative, path, None), kind="missing",
        )]
    lines: dict[int, str] = {}
    for pattern in rule.compiled():
        for match in pattern.finditer(content):
            line = content.count("\n", 0, match.start()) + 1
            if line not in lines:
                start = content.rfind("\n", 0, match.start()) + 1
                end = content.find("\n", match.start())
                lines[line] = content[start: end if end >= 0 else len(content)].strip()[:200]
            if len(lines) >= MAX_MATCHES_PER_FILE:
                break
    return [
        RuleMatch(
            rule_id=rule.id, relative_path=relative, line=line, text=text,
            message=_render(rule, relative, path, line), kind="violation",
        )
        for line, text in sorted(lines.items())
    ]


def scan_sources(module: SourceAnalysisModule, root: Path) -> list[RuleMatch]:
    """Every finding of ``module``'s rules in the files it scans under ``root``.

    ``root`` is the folder the module's ``root`` names, already resolved (the runner passes the
    workspace's case root; a preview passes a copy of the case with the variant applied). Findings come
    file by file (sorted by path), rule by rule in the module's order, line by line. An empty list means
    the module passes. Files are read as UTF-8 with undecodable bytes replaced. Never raises for
    unreadable files (they are skipped).
    """
    root = Path(root)
    files = source_files(module, root)
    matches: list[RuleMatch] = []
    for relative, path in files:
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for rule in module.rules:
            matches.extend(match_rule(rule, relative, path, content))
    if not files:
        where = ", ".join(module.scan_roots)
        for rule in module.rules:
            if rule.negate:
                matches.append(RuleMatch(
                    rule_id=rule.id, relative_path=where, line=None, text="", kind="missing",
                    message=f"rule {rule.id}: no file to scan in {where}, so its required pattern is not found",
                ))
    return matches


# ---------------------------------------------------------------------------------------------------------
# Applying variants


def _unsafe(path: str) -> bool:
    pure = PurePosixPath(path.replace("\\", "/"))
    return pure.is_absolute() or ".." in pure.parts or bool(re.match(r"^[A-Za-z]:", path))


def _unquote(token: str) -> str:
    token = token.strip()
    if len(token) >= 2 and token[0] == token[-1] == '"':
        token = token[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return token


def patch_paths(text: str) -> list[str]:
    """The paths a unified diff names, as written (``a/src/x.cpp``), header by header."""
    paths: list[str] = []
    for line in text.splitlines():
        if line.startswith(("--- ", "+++ ")):
            token = _unquote(line[4:].split("\t", 1)[0])
            if token != "/dev/null":
                paths.append(token)
        elif line.startswith("diff --git "):
            paths.extend(_unquote(t) for t in line[len("diff --git "):].split(" ") if t)
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            paths.append("x/" + _unquote(line.split(" ", 2)[2]))
    return paths


def check_patch(text: str) -> None:
    """Refuse a patch that could write outside the folder it is applied to.

    Raises:
        VariantApplyError: a path is absolute or contains ``..`` (before or after stripping one
            component, as ``-p1`` does), the patch creates a symlink, or it names no file at all.
    """
    paths = patch_paths(text)
    if not paths:
        raise VariantApplyError("the patch names no file (is it a unified diff?)")
    for path in paths:
        stripped = path.split("/", 1)[1] if "/" in path else path
        if _unsafe(path) or _unsafe(stripped):
            raise VariantApplyError(f"the patch targets {path!r}, outside the case; refused")
    if re.search(r"^(new file mode|new mode|old mode) 120000", text, re.MULTILINE):
        raise VariantApplyError("the patch creates a symbolic link; refused")


def _git_env(dest: Path) -> dict[str, str]:
    env = scrubbed_environment()
    env.update({
        "GIT_CEILING_DIRECTORIES": str(dest.resolve().parent), "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C",
    })
    return env


def _run_apply(argv: list[str], dest: Path, timeout_s: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, cwd=dest, env=_git_env(dest), capture_output=True, text=True, timeout=timeout_s,
            check=False, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise VariantApplyError(f"{argv[0]} did not finish within {timeout_s:g} s") from None
    except OSError as error:
        raise VariantApplyError(f"{argv[0]} cannot be run: {error}") from None


def apply_patch(dest: Path, patch_file: Path, *, timeout_s: float = APPLY_TIMEOUT_S) -> None:
    """Apply a unified diff (``-p1``) inside ``dest``: ``git apply --check`` then ``git apply``, or GNU
    ``patch -p1 --dry-run`` then ``patch -p1`` when git is missing. Nothing is changed unless the check
    passes.

    Raises:
        VariantApplyError: unsafe paths (:func:`check_patch`), an unreadable patch file, the patch does not
            apply (the tool's message is included), or neither tool is installed.
    """
    try:
        text = patch_file.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise VariantApplyError(f"the patch {patch_file} cannot be read: {error.strerror or error}") from None
    check_patch(text)
    source = str(patch_file.resolve())
    if shutil.which("git"):
        steps = (
            ["git", "apply", "--check", "-p1", "--whitespace=nowarn", source],
            ["git", "apply", "-p1", "--whitespace=nowarn", source],
        )
    elif shutil.which("patch"):
        common = ["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-i", source]
        steps = ([*common, "--dry-run"], common)
    else:
        raise VariantApplyError("neither git nor patch is installed, so the patch cannot be applied")
    for argv in steps:
        done = _run_apply(argv, dest, timeout_s)
        if done.returncode != 0:
            detail = (done.stderr.strip() or done.stdout.strip() or f"exit code {done.returncode}")[-2000:]
            raise VariantApplyError(f"the patch does not apply: {detail}")


def apply_tree(dest: Path, tree: Path) -> list[str]:
    """Copy the overlay folder ``tree`` over ``dest`` (files are added or replaced; nothing is deleted).

    Everything is checked before anything is written. Returns the relative paths written.

    Raises:
        VariantApplyError: ``tree`` is not a folder, an entry is a symlink leading outside ``tree``, a
            destination lies (through a symlink of ``dest``) outside ``dest``, or a file would replace a
            folder.
    """
    if not tree.is_dir():
        raise VariantApplyError(f"the overlay {tree} is not a folder")
    tree_root = tree.resolve()
    dest_root = dest.resolve()
    plan: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(tree, followlinks=False):
        for name in [*dirnames, *filenames]:
            entry = Path(dirpath) / name
            relative = entry.relative_to(tree).as_posix()
            if entry.is_symlink() and not _inside(entry, tree_root):
                raise VariantApplyError(f"the overlay entry {relative!r} is a symlink leading outside the overlay; refused")
        for name in filenames:
            entry = Path(dirpath) / name
            plan.append((entry.relative_to(tree).as_posix(), entry))
    for relative, _entry in plan:
        target = dest_root / relative
        if not _inside(target.parent, dest_root) or (target.exists() and not target.is_symlink() and not _inside(target, dest_root)):
            raise VariantApplyError(f"the overlay entry {relative!r} would be written outside the case; refused")
        if target.is_dir() and not target.is_symlink():
            raise VariantApplyError(f"the overlay file {relative!r} would replace a folder")
    for relative, entry in sorted(plan):
        target = dest_root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        shutil.copyfile(entry, target)
        shutil.copymode(entry, target)
    return [relative for relative, _ in sorted(plan)]


def apply_variant_to(dir: str | Path, variant, *, timeout_s: float = APPLY_TIMEOUT_S) -> None:
    """Apply ``variant`` (a :class:`~benchwright.core.probes.model.Variant`) to the folder ``dir`` in place.

    ``dir`` plays the case root: a patch is applied with ``-p1`` there, an overlay is copied over it. A
    variant with neither changes nothing. Used by the runner on its workspace copy, and by a rules preview
    on a temporary copy of the case.

    Raises:
        VariantApplyError: see :func:`apply_patch` and :func:`apply_tree`; also a missing patch file.
    """
    dest = Path(dir)
    if variant.patch is not None:
        patch_file = Path(variant.patch)
        if not patch_file.is_file():
            raise VariantApplyError(f"variant {variant.name}: the patch {patch_file} does not exist")
        try:
            apply_patch(dest, patch_file, timeout_s=timeout_s)
        except VariantApplyError as error:
            raise VariantApplyError(f"variant {variant.name}: {error}") from None
    elif variant.tree is not None:
        try:
            apply_tree(dest, Path(variant.tree))
        except VariantApplyError as error:
            raise VariantApplyError(f"variant {variant.name}: {error}") from None


def preview_matches(probe, module: SourceAnalysisModule, variant=None, *, before: Sequence = ()) -> list[RuleMatch]:
    """What ``module``'s rules report on the case after applying ``before`` and ``variant`` in order,
    without building or running anything (for a rules editor).

    ``probe`` is a :class:`~benchwright.core.probes.model.Probe`; ``module`` need not be one of its
    pipeline's modules (an edited copy is fine). The case is copied to a temporary workspace, which is
    removed afterwards.

    Raises:
        VariantApplyError: a variant does not apply.
        ValueError: the module's ``root`` lies outside the workspace.
    """
    workspace = Workspace.create(probe.case_dir, probe.evaluator_dir, probe.pipeline)
    try:
        for item in [*before, variant]:
            if item is not None:
                apply_variant_to(workspace.case_root, item)
        return scan_sources(module, workspace.resolve(module.root))
    finally:
        workspace.remove()
