"""The throw-away workspace a probe is evaluated in (shared by the runner and the rules preview).

Layout of a benchwright probe (``root`` from :func:`tempfile.mkdtemp`)::

    root/repo/                  {repo_root}
    root/repo/<case_root>/      {case_root}   a copy of the case folder, without SPEC.md (the submission)
    root/repo/<build_dir>/      {build_dir}
    root/evaluator/             {evaluator_root}   a copy of the evaluator folder
    root/baseline/<case>/       {baseline_case_root}   the pristine starter (a second copy of the case)
    root/home/, root/tmp/       HOME and TMPDIR of every command
    root/.owner                 the pid and start time of the process that made it

A probe imported from a NITR checkout (its pipeline's layout is ``nitr``) gets NITR's own layout, so its
CMake files, check scripts and ``evaluator/shared`` imports work unchanged::

    root/repo/                  {repo_root}   a copy of the checkout: top-level files, cmake files, tools/,
                                third_party/, cases/CMakeLists.txt, evaluator/{CMakeLists.txt, cmake,
                                shared, *.py} (no other case, no docs/, no build or submission folders)
    root/repo/cases/<id>/       {case_root}   the submission
    root/repo/evaluator/<id>/   {evaluator_root}
    root/repo/build/            {build_dir}
    root/baseline/<id>/         {baseline_case_root}   the pristine starter

The checkout is only read.

A workspace whose owner is gone (a ``probe run`` killed with ``kill -9``, which no handler sees) is swept away by
the next workspace made in the same temp folder (:func:`sweep_orphaned_workspaces`).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .pipeline import ROOT_KEYS, Pipeline, expand, placeholder_names

HIDDEN_CASE_FILES = ("SPEC.md",)
"""Files of the case folder's top level that are hidden from the agent and left out of the workspace."""

# One rule for which variables hold credentials: not passed to commands here, scrubbed from stored LLM text there.
from ..llm.scrub import SECRET_MARKERS, SECRET_PREFIXES, is_secret_name  # noqa: E402, F401


def scrubbed_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default ``os.environ``) without the variables :func:`is_secret_name` flags."""
    source = os.environ if base is None else base
    return {name: value for name, value in source.items() if not is_secret_name(name)}


def _ignore_hidden(top: Path):
    def ignore(directory: str, names: list[str]) -> list[str]:
        if Path(directory).resolve() == top:
            return [n for n in names if n in HIDDEN_CASE_FILES]
        return []

    return ignore


CHECKOUT_LEFT_OUT = (".git", "build", "bin", "obj", ".submit-output", "submit-output", "docs", "__pycache__",
                     ".DS_Store")
"""Names of a NITR checkout never copied into a workspace (build and submission output, the hidden specs)."""

CHECKOUT_KEPT_EVALUATOR_FOLDERS = ("shared", "cmake")
"""Folders of a checkout's ``evaluator/`` copied into every workspace (the case's own folder comes separately)."""


def _checkout_run_time_files(top: Path):
    top = top.resolve()

    def ignore(directory: str, names: list[str]) -> list[str]:
        here = Path(directory).resolve()
        left_out = [n for n in names if n in CHECKOUT_LEFT_OUT or n.endswith(".pyc")]
        if here == top / "cases":
            left_out += [n for n in names if (here / n).is_dir()]
        elif here == top / "evaluator":
            left_out += [n for n in names if (here / n).is_dir() and n not in CHECKOUT_KEPT_EVALUATOR_FOLDERS]
        return left_out

    return ignore


WORKSPACE_PREFIX = "benchwright-probe-"
OWNER_FILE = ".owner"


def _process_identity(pid: int) -> str | None:
    """``"PID START"`` (START: the process's start time in clock ticks since boot, from ``/proc``), so a pid
    reused by another process is not taken for the owner; None when the process does not exist. Without
    ``/proc`` (macOS), ``"PID"`` for a live process."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None  # /proc works and has no such process
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return str(pid)
    except OSError:
        return str(pid)
    fields = stat_line.rsplit(")", 1)[-1].split()
    return f"{pid} {fields[19]}" if len(fields) > 19 else str(pid)


def sweep_orphaned_workspaces(temp_dir: str | Path | None = None) -> list[Path]:
    """Remove probe workspaces in ``temp_dir`` (default: :func:`tempfile.gettempdir`) whose owner process is gone
    (``.owner`` names a pid that no longer runs, or runs as another process); returns the folders removed.
    Workspaces without an owner file, or whose owner still runs, are left alone. Never raises."""
    removed = []
    try:
        candidates = list(Path(temp_dir or tempfile.gettempdir()).glob(WORKSPACE_PREFIX + "*"))
    except OSError:
        return removed
    for folder in candidates:
        try:
            owner = (folder / OWNER_FILE).read_text(encoding="utf-8").split()
            pid = int(owner[0])
        except (OSError, ValueError, IndexError):
            continue
        if pid == os.getpid():
            continue
        now = _process_identity(pid)
        if now is None or (len(owner) > 1 and now.split()[1:] != owner[1:]):
            remove_tree(folder)
            removed.append(folder)
    return removed


def remove_tree(path: Path) -> None:
    """Delete ``path`` recursively, making read-only entries writable first; never raises."""

    def on_error(func, target, _exc_info):
        try:
            os.chmod(target, stat.S_IRWXU)
            parent = os.path.dirname(target)
            os.chmod(parent, stat.S_IRWXU)
            func(target)
        except OSError:
            pass

    shutil.rmtree(path, onerror=on_error)


@dataclass
class Workspace:
    """Paths of one evaluation workspace; see the module docstring for the layout."""

    root: Path
    repo_root: Path
    case_root: Path
    evaluator_root: Path
    build_dir: Path
    home: Path
    tmp: Path

    baseline_case_root: Path | None = None
    variables: dict[str, str] = field(default_factory=dict)
    sandbox: tuple[str, ...] = ()
    """The argv put before each command of the run (:func:`benchwright.core.probes.sandbox.sandbox_for`)."""
    sandbox_note: str = ""

    @classmethod
    def create(
        cls, case_dir: str | Path, evaluator_dir: str | Path | None, pipeline: Pipeline,
        *, checkout: str | Path | None = None,
    ) -> Workspace:
        """A fresh workspace holding copies of the case (without ``SPEC.md``, twice: the submission and the
        pristine baseline) and the evaluator; for a NITR pipeline with ``checkout`` (the NITR checkout the
        probe was imported from), the checkout's run-time files too, in NITR's layout (module docstring).

        Raises:
            OSError: a folder cannot be copied (the partial workspace is removed).
        """
        sweep_orphaned_workspaces()
        root = Path(tempfile.mkdtemp(prefix=WORKSPACE_PREFIX)).resolve()
        try:
            (root / OWNER_FILE).write_text(_process_identity(os.getpid()) or str(os.getpid()), encoding="utf-8")
            repo = root / "repo"
            source = Path(case_dir).resolve()
            nitr = pipeline.layout == "nitr" and checkout is not None
            slug = Path(evaluator_dir).resolve().name if nitr and evaluator_dir is not None else source.name
            if nitr:
                case_root, build_dir = repo / "cases" / slug, repo / "build"
                evaluator_root = repo / "evaluator" / slug
            else:
                case_root = (repo / pipeline.case_root).resolve()
                build_dir = (repo / pipeline.build_dir).resolve()
                evaluator_root = root / "evaluator"
            workspace = cls(
                root=root, repo_root=repo, case_root=case_root, evaluator_root=evaluator_root,
                build_dir=build_dir, home=root / "home", tmp=root / "tmp",
                baseline_case_root=root / "baseline" / slug,
                variables={k: str(v) for k, v in pipeline.variables.items()},
            )
            if nitr:
                shutil.copytree(Path(checkout), repo, symlinks=True, ignore=_checkout_run_time_files(Path(checkout)))
            repo.mkdir(exist_ok=True)
            shutil.copytree(source, case_root, symlinks=True, ignore=_ignore_hidden(source), dirs_exist_ok=True)
            shutil.copytree(source, workspace.baseline_case_root, symlinks=True, ignore=_ignore_hidden(source))
            if evaluator_dir is not None:
                shutil.copytree(Path(evaluator_dir), evaluator_root, symlinks=True, dirs_exist_ok=True)
            else:
                evaluator_root.mkdir(parents=True, exist_ok=True)
            for folder in (build_dir, workspace.home, workspace.tmp):
                folder.mkdir(parents=True, exist_ok=True)
            return workspace
        except BaseException:
            remove_tree(root)
            raise

    def values(self) -> dict[str, str]:
        """Placeholder values: the pipeline's variables (as NITR writes them: ``str(value)``, so ``False``),
        the workspace paths and ``python`` (the running interpreter)."""
        return {
            **self.variables,
            "build_dir": str(self.build_dir), "case_root": str(self.case_root),
            "baseline_case_root": str(self.baseline_case_root or ""),
            "evaluator_root": str(self.evaluator_root), "repo_root": str(self.repo_root),
            "python": sys.executable,
        }

    def resolve(self, value: str) -> Path:
        """A module's ``root`` or ``cwd`` as a path inside the workspace.

        ``value`` is a root key (``case_root``), a path with placeholders, or a path relative to the repo root.

        Raises:
            ValueError: the path lies outside the workspace.
        """
        values = self.values()
        if value in ROOT_KEYS:
            path = Path(values[value])
        else:
            text = expand(value, values) if placeholder_names(value) else value
            path = Path(text) if Path(text).is_absolute() else self.repo_root / text
        resolved = path.resolve()
        if not resolved.is_relative_to(self.root):
            raise ValueError(f"{value!r} resolves to {resolved}, outside the workspace")
        return resolved

    def remove(self) -> None:
        """Delete the workspace."""
        remove_tree(self.root)
