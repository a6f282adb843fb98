"""Source-analysis rules (NITR structural oracles) and applying a variant to a folder.

NITR (oracle design): the structural checks "are lightweight and targeted rather than full semantic
program analyses", e.g. flagging ``std::stoi`` outside the designated validation path. Here a rule is a
condition (:class:`~benchwright.core.probes.pipeline.Condition`: substrings, regular expressions matched
with ``re.MULTILINE``, ``not``, ``all_of``/``any_of``, hit thresholds) checked in the text of each scanned
file, with NITR's semantics (:func:`condition_match`):

* a rule that holds in a file is one finding there, at the first location found (``violation``);
* a ``not`` rule holds where its inner condition does not (``missing``: the required text is absent);
* a global rule counts the files where it holds against ``min_matching_files`` / ``max_matching_files``.

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
from .pipeline import (
    BaselineDiffModule,
    Condition,
    FrozenPathsModule,
    GlobalRule,
    SourceAnalysisModule,
    SourceRule,
    render_message,
)

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
    pure = PurePosixPath(relative)
    return any(fnmatch.fnmatch(relative, g) or fnmatch.fnmatch(name, g) or pure.match(g) for g in module.exclude_globs)


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
        else "rule {rule_id} matched in {location}"
    )
    values = {
        "rule_id": rule.id, "relative_path": relative, "filename": path.name,
        "line": "" if line is None else str(line), "line_no": "" if line is None else str(line),
        "location": relative if line is None else f"{relative}:{line}", "path": path.as_posix(),
    }
    return render_message(rule.message or default, values)


_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"//[^\n]*")
_STRING_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"')
_CHAR_LITERAL = re.compile(r"'(?:\\.|[^'\\])+'")


def normalize_source(text: str, mode: str) -> str:
    """``text`` as a ``source_analysis`` module with ``normalize`` = ``mode`` sees it (NITR's reading):

    * ``none``: unchanged;
    * ``strip_comments``: ``/* ... */`` blocks (across lines) removed, then ``//`` to the end of each line;
    * ``strip_comments_and_strings``: first every double-quoted literal becomes ``""`` and every
      single-quoted one ``''`` (backslash escapes honoured), then comments are removed as above.

    The removal is textual, as in NITR: a ``//`` inside a string literal is taken for a comment unless the
    strings are removed first. Raises ``ValueError`` for an unknown mode.
    """
    if mode == "none":
        return text
    if mode == "strip_comments_and_strings":
        text = _CHAR_LITERAL.sub("''", _STRING_LITERAL.sub('""', text))
    elif mode != "strip_comments":
        raise ValueError(f"unknown normalize mode {mode!r}")
    return _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", text))


def _line_at(content: str, index: int) -> int:
    return content.count("\n", 0, index) + 1


def _earliest(indexes: list[int | None]) -> int | None:
    found = [i for i in indexes if i is not None]
    return min(found) if found else None


def _substring_index(needle: str, content: str) -> int | None:
    index = content.find(needle)
    return None if index < 0 else index


def _pattern_index(pattern: str, content: str) -> int | None:
    match = re.compile(pattern, re.MULTILINE).search(content)
    return None if match is None else match.start()


NO_LINE = 0
"""What :func:`condition_match` returns for a condition that holds without pointing at a line (``not``,
thresholds)."""


def _all_lines(results: list[int | None]) -> int | None:
    if any(r is None for r in results):
        return None
    lines = [r for r in results if r]
    return min(lines) if lines else NO_LINE


def condition_match(condition: Condition, content: str) -> int | None:
    """Whether ``condition`` holds in ``content`` (one file's text), with NITR's semantics.

    Returns ``None`` when it does not hold; else the 1-based line of the first location found (the earliest
    line among the keys that point at one), or :data:`NO_LINE` (0) when it holds without a line. Order of
    evaluation: ``all_of`` (every sub-condition), ``any_of`` (the first that holds), then ``not`` (its inner
    condition must not hold), then the first set of ``any_substrings`` (earliest needle found),
    ``all_substrings``, ``any_patterns``, ``all_patterns`` (``re.MULTILINE``), then the thresholds (every
    one met: distinct needles found, or patterns matching with the threshold's own flags).
    """
    if condition.all_of:
        return _all_lines([condition_match(child, content) for child in condition.all_of])
    if condition.any_of:
        for child in condition.any_of:
            hit = condition_match(child, content)
            if hit is not None:
                return hit
        return None
    if condition.not_ is not None and condition_match(condition.not_, content) is not None:
        return None
    for key, find, every in (
        ("any_substrings", _substring_index, False), ("all_substrings", _substring_index, True),
        ("any_patterns", _pattern_index, False), ("all_patterns", _pattern_index, True),
    ):
        items = getattr(condition, key)
        if not items:
            continue
        indexes = [find(item, content) for item in items]
        if every and any(i is None for i in indexes):
            return None
        first = _earliest(indexes)
        return None if first is None else _line_at(content, first)
    for threshold in condition.substring_hit_thresholds:
        if sum(1 for needle in dict.fromkeys(threshold.needles) if needle in content) < threshold.at_least:
            return None
    for pattern_threshold in condition.pattern_hit_thresholds:
        bits = pattern_threshold.flag_bits()
        hits = sum(1 for p in pattern_threshold.patterns if re.compile(p, bits).search(content))
        if hits < pattern_threshold.at_least:
            return None
    return NO_LINE


def rule_holds(rule: SourceRule, content: str) -> int | None:
    """:func:`condition_match` for a rule, a negated rule (``not: {...}``) holding where its condition does not."""
    hit = condition_match(rule, content)
    if rule.negate:
        return NO_LINE if hit is None else None
    return hit


def _line_text(content: str, line: int) -> str:
    lines = content.split("\n")
    return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""


def match_rule(rule: SourceRule, relative: str, path: Path, content: str) -> list[RuleMatch]:
    """The finding of one rule in one file's ``content`` (already normalized), as a one-item list, or ``[]``.

    NITR reports a rule once per file, at the first location it found: ``kind`` ``violation`` with that
    ``line`` (and its text), or, for a rule that holds without a line (a ``not`` rule: the required text is
    absent), ``missing`` with no line.
    """
    hit = rule_holds(rule, content)
    if hit is None:
        return []
    line = hit or None
    return [RuleMatch(
        rule_id=rule.id, relative_path=relative, line=line, text=_line_text(content, line) if line else "",
        message=_render(rule, relative, path, line), kind="violation" if line or not rule.negate else "missing",
    )]


def _global_findings(rule: GlobalRule, scanned: list[tuple[str, Path, str]], where: str) -> list[RuleMatch]:
    matching = [relative for relative, _path, content in scanned if rule_holds(rule, content) is not None]
    values = {"rule_id": rule.id, "matching_file_count": str(len(matching)), "matching_files": ", ".join(matching)}
    out: list[RuleMatch] = []
    for bound, crossed, wording in (
        (rule.min_matching_files, lambda b: len(matching) < b, "at least"),
        (rule.max_matching_files, lambda b: len(matching) > b, "at most"),
    ):
        if bound is None or not crossed(bound):
            continue
        default = f"global rule {{rule_id}}: {{matching_file_count}} matching files, {wording} {bound} expected"
        if matching:
            default += " ({matching_files})"
        out.append(RuleMatch(
            rule_id=rule.id, relative_path=", ".join(matching) or where, line=None, text="",
            message=render_message(rule.message or default, values),
            kind="missing" if wording == "at least" else "violation",
        ))
    return out


def scan_sources(module: SourceAnalysisModule, root: Path) -> list[RuleMatch]:
    """Every finding of ``module``'s rules and global rules in the files it scans under ``root`` (NITR semantics).

    ``root`` is the folder the module's ``root`` names, already resolved (the runner passes the
    workspace's case root; a preview passes a copy of the case with the variant applied). Each file is read
    as UTF-8 (undecodable bytes replaced), normalized (:func:`normalize_source`) and checked rule by rule
    (:func:`match_rule`); findings come file by file (sorted by path), rule by rule. Then each global rule
    counts the files where its condition holds against its bounds. With ``stop_on_first_match`` the scan
    stops at the first finding. An empty list means the module passes; no file to scan is a pass unless a
    global rule wants matching files. Never raises for unreadable files (they are skipped).
    """
    root = Path(root)
    matches: list[RuleMatch] = []
    scanned: list[tuple[str, Path, str]] = []
    for relative, path in source_files(module, root):
        try:
            content = normalize_source(path.read_text(encoding="utf-8", errors="replace"), module.normalize)
        except OSError:
            continue
        scanned.append((relative, path, content))
        for rule in module.rules:
            matches.extend(match_rule(rule, relative, path, content))
            if matches and module.stop_on_first_match:
                return matches
    where = ", ".join(module.scan_roots)
    for global_rule in module.global_rules:
        matches.extend(_global_findings(global_rule, scanned, where))
        if matches and module.stop_on_first_match:
            return matches
    return matches


# ---------------------------------------------------------------------------------------------------------
# Comparing the submission with the pristine starter (baseline_diff, frozen_paths)


def _read_for_compare(path: Path) -> str:
    """A file's text as NITR compares it: UTF-8 with universal newlines (``\\r\\n`` reads as ``\\n``)."""
    with open(path, encoding="utf-8", errors="replace", newline=None) as handle:
        return handle.read()


def _glob_excluded(relative: str, candidate: Path, globs: Sequence[str]) -> bool:
    return any(candidate.match(g) or PurePosixPath(relative).match(g) for g in globs)


def baseline_paths(module: BaselineDiffModule, case_root: Path, baseline_root: Path) -> list[str]:
    """The relative paths a ``baseline_diff`` module compares: its ``paths``, or else every file its
    ``include_globs`` find in either tree, less ``exclude_globs``; sorted."""
    if module.paths:
        return list(module.paths)
    found: set[str] = set()
    for base in (case_root, baseline_root):
        for pattern in module.include_globs:
            for candidate in base.glob(pattern):
                if not candidate.is_file() or not _inside(candidate, base):
                    continue
                relative = candidate.relative_to(base).as_posix()
                if not _glob_excluded(relative, candidate, module.exclude_globs):
                    found.add(relative)
    return sorted(found)


def classify_against_baseline(case_root: Path, baseline_root: Path, paths: Sequence[str]) -> dict[str, list[str]]:
    """Each path of ``paths`` sorted into ``missing_in_root``, ``missing_in_baseline``, ``created``, ``deleted``
    and ``modified`` (present in both with different text, :func:`_read_for_compare`), NITR's categories.
    A path whose symlink leads outside its tree counts as absent there."""
    def present(base: Path, relative: str) -> bool:
        path = base / relative
        return path.exists() and _inside(path, base)

    out: dict[str, list[str]] = {k: [] for k in ("missing_in_root", "missing_in_baseline", "created", "deleted", "modified")}
    for relative in paths:
        here, there = present(case_root, relative), present(baseline_root, relative)
        if not here:
            out["missing_in_root"].append(relative)
        if not there:
            out["missing_in_baseline"].append(relative)
        if here and not there:
            out["created"].append(relative)
        if there and not here:
            out["deleted"].append(relative)
        if here and there:
            a, b = case_root / relative, baseline_root / relative
            if a.is_dir() or b.is_dir():
                if a.is_dir() != b.is_dir():
                    out["modified"].append(relative)
            elif _read_for_compare(a) != _read_for_compare(b):
                out["modified"].append(relative)
    return out


def _path_finding(rule_id: str, relative: str, message: str, kind: Literal["violation", "missing"] = "violation") -> RuleMatch:
    return RuleMatch(rule_id=rule_id, relative_path=relative, line=None, text="", message=message, kind=kind)


def baseline_findings(module: BaselineDiffModule | FrozenPathsModule, case_root: Path, baseline_root: Path) -> list[RuleMatch]:
    """The findings of a ``baseline_diff`` or ``frozen_paths`` module (NITR semantics; an empty list passes).

    ``frozen_paths``: every missing, created, deleted or modified path is a finding. ``baseline_diff``: a
    created path unless in ``allow_created`` or under one of ``allowed_created_top_levels``, a deleted path
    unless in ``allow_deleted``, a modified one unless in ``allow_modified``, and a path absent from both
    trees unless in ``allow_missing_in_root`` / ``allow_missing_in_baseline``.
    """
    case_root, baseline_root = Path(case_root), Path(baseline_root)
    if isinstance(module, FrozenPathsModule):
        status = classify_against_baseline(case_root, baseline_root, module.paths)
        words = {"missing_in_root": "missing from the submission", "missing_in_baseline": "missing from the starter",
                 "created": "created", "deleted": "deleted", "modified": "modified"}
        return [
            _path_finding("frozen_path", relative, f"frozen path {relative}: {words[key]}",
                          "missing" if key.startswith("missing") or key == "deleted" else "violation")
            for key in words for relative in status[key]
        ]
    status = classify_against_baseline(case_root, baseline_root, baseline_paths(module, case_root, baseline_root))
    found: list[RuleMatch] = []
    for relative in status["missing_in_root"]:
        if relative not in status["deleted"] and relative not in module.allow_missing_in_root:
            found.append(_path_finding("baseline_diff", relative, f"{relative} is missing from the submission", "missing"))
    for relative in status["missing_in_baseline"]:
        if relative not in status["created"] and relative not in module.allow_missing_in_baseline:
            found.append(_path_finding("baseline_diff", relative, f"{relative} is missing from the starter", "missing"))
    for relative in status["created"]:
        top = PurePosixPath(relative).parts[0] if PurePosixPath(relative).parts else ""
        if relative not in module.allow_created and top not in module.allowed_created_top_levels:
            found.append(_path_finding("baseline_diff", relative, f"unexpected new file {relative}"))
    for relative in status["deleted"]:
        if relative not in module.allow_deleted:
            found.append(_path_finding("baseline_diff", relative, f"unexpected deletion of {relative}", "missing"))
    for relative in status["modified"]:
        if relative not in module.allow_modified:
            found.append(_path_finding("baseline_diff", relative, f"unexpected change to {relative}"))
    return found


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


def put_submission(dest: Path, submission: Path) -> list[str]:
    """Make ``dest`` (a workspace's case root) hold exactly the files of ``submission``: its contents are
    removed, then the submission is copied in with :func:`apply_tree`'s checks. Returns the paths written.

    Raises:
        VariantApplyError: ``submission`` is not a folder, or holds a symlink leading outside it.
    """
    if not submission.is_dir():
        raise VariantApplyError(f"the submission {submission} is not a folder")
    for dirpath, dirnames, filenames in os.walk(submission, followlinks=False):
        for name in [*dirnames, *filenames]:
            entry = Path(dirpath) / name
            if entry.is_symlink() and not _inside(entry, submission.resolve()):
                raise VariantApplyError(f"the submission entry {entry.relative_to(submission).as_posix()!r} is a "
                                        "symlink leading outside the submission; refused")
    for child in list(dest.iterdir()):
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    return apply_tree(dest, submission)


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
    workspace = Workspace.create(probe.case_dir, probe.evaluator_dir, probe.pipeline, checkout=probe.checkout_root)
    try:
        for item in [*before, variant]:
            if item is not None:
                apply_variant_to(workspace.case_root, item)
        return scan_sources(module, workspace.resolve(module.root))
    finally:
        workspace.remove()
