"""A model's attempt at a probe: its tasks handed over in order, every intermediate tree kept, the final tree
turned into the patch the oracle is run on.

NITR, Step 4 ("Micro versus Multi-Step Probes"): "In a multi-step probe, the model receives a sequence of task
files, each applied to the code produced at the previous step"; and the harness "applies the model-generated
file edits, configures and builds the project ..., runs the hidden functional tests, and then executes the
structural oracles". :func:`make_attempt` does the first part in a folder that is kept::

    FOLDER/starter/        the case as the agent gets it (SPEC.md left out)
    FOLDER/tasks/          copies of TASK.md or TASK1.md ... TASKn.md
    FOLDER/step-1/ ...     the tree after each step (step k starts as a copy of step k-1)
    FOLDER/step-K.log      what the agent command printed at step k
    FOLDER/final.diff      starter -> last tree (``git diff --binary``; deletions and renames included)
    FOLDER/attempt.json    what was run: configuration, commands, exit codes, times

:func:`attempt_variant` makes that diff a variant, so the oracle runs on it exactly as on a probe's own
variants (the pristine starter stays the baseline).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..errors import BenchwrightError
from ._workspace import HIDDEN_CASE_FILES
from .model import Probe, Variant
from .results import Regime, configuration_name

ATTEMPT_PLACEHOLDERS = ("task", "tree", "step", "steps")
"""Placeholders of an agent command: ``{task}`` (the task file), ``{tree}`` (the folder to edit), ``{step}``
(1-based) and ``{steps}`` (how many). Without ``{task}`` and ``{tree}`` both paths are appended as arguments."""

ATTEMPT_VARIANT_PREFIX = "attempt: "
"""Oracle runs of attempts are stored under the variant name ``attempt: CONFIGURATION``."""


class AttemptError(BenchwrightError):
    """An attempt could not be made: no git to diff the trees, a submission folder that is not one, a task
    file missing, an agent command that does not parse."""


@dataclass(frozen=True)
class AttemptStep:
    """One task handed to the agent: ``step`` (1-based), ``task`` (the task file's name), ``tree`` (the folder
    after the step), ``command`` (argv as run; empty for a submission), ``returncode`` (None when it timed out,
    was cancelled or did not start), ``duration_s``, ``timed_out``, ``cancelled``, ``log`` (the log file)."""

    step: int
    task: str
    tree: str
    command: list[str]
    returncode: int | None
    duration_s: float
    timed_out: bool = False
    cancelled: bool = False
    log: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0


@dataclass
class Attempt:
    """A model's attempt at a probe.

    Attributes:
        probe_id, configuration, model, regime: whose attempt at what (``configuration`` as NITR names it:
            ``GPT-5.4 (API)``).
        folder: where everything is kept (see the module's docstring).
        steps: one per task handed over, in order; a failed step ends the attempt.
        patch: ``final.diff`` (starter -> last tree), or None when the attempt stopped early.
        error: why the attempt stopped (``step 2: exit code 1``), or None.
        started_at: UTC ISO time.
        verdict: the oracle's outcome on the final tree (``pass``, ``fail``, ``error``) once evaluated.
        oracle_run_id: the stored oracle run, once recorded.
    """

    probe_id: str
    configuration: str
    model: str
    regime: Regime
    folder: str
    steps: list[AttemptStep] = field(default_factory=list)
    patch: str | None = None
    error: str | None = None
    started_at: str = ""
    verdict: str | None = None
    oracle_run_id: int | None = None

    @property
    def cancelled(self) -> bool:
        return any(s.cancelled for s in self.steps)

    def to_dict(self) -> dict:
        return asdict(self)

    def save(self) -> Path:
        """Write ``attempt.json`` in the attempt's folder (again after the verdict is known); returns its path."""
        path = Path(self.folder) / "attempt.json"
        path.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return path


def agent_argv(command: str | Sequence[str], *, task: Path, tree: Path, step: int, steps: int) -> list[str]:
    """The argv of an agent command for one step (see :data:`ATTEMPT_PLACEHOLDERS`; ``{{``/``}}`` are braces).

    Raises:
        AttemptError: the command is empty, does not split like a shell line, or names an unknown placeholder.
    """
    try:
        parts = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError as error:
        raise AttemptError(f"agent command {command!r} does not parse: {error}") from None
    if not parts:
        raise AttemptError("the agent command is empty")
    values = {"task": str(task), "tree": str(tree), "step": str(step), "steps": str(steps)}
    used = set()
    out = []
    for part in parts:
        names = re.findall(r"(?<!\{)\{([^{}]*)\}(?!\})", part)
        unknown = [n for n in names if n not in values]
        if unknown:
            raise AttemptError(f"agent command: unknown placeholder {{{unknown[0]}}}; use "
                               f"{', '.join('{' + p + '}' for p in ATTEMPT_PLACEHOLDERS)}")
        used.update(names)
        out.append(re.sub(r"(?<!\{)\{(\w+)\}(?!\})", lambda m: values[m.group(1)], part)
                   .replace("{{", "{").replace("}}", "}"))
    if not {"task", "tree"} & used:
        out += [str(task), str(tree)]
    return out


def task_files(probe: Probe) -> list[Path]:
    """The probe's task files in order: ``TASK.md``, or ``TASK1.md`` ... ``TASKn.md``.

    Raises:
        AttemptError: a task file is missing from the case folder.
    """
    case = Path(probe.case_dir)
    names = ["TASK.md"] if probe.granularity == "micro" else [f"TASK{k}.md" for k in range(1, len(probe.steps) + 1)]
    missing = [n for n in names if not (case / n).is_file()]
    if missing:
        raise AttemptError(f"probe {probe.id}: {', '.join(missing)} missing from {case}")
    return [case / n for n in names]


def _copy_tree(src: Path, dest: Path, *, hide: bool = False) -> None:
    top = src.resolve()

    def ignore(directory: str, names: list[str]) -> list[str]:
        if hide and Path(directory).resolve() == top:
            return [n for n in names if n in HIDDEN_CASE_FILES]
        return [n for n in names if n in (".git", "__pycache__")]

    shutil.copytree(src, dest, symlinks=True, ignore=ignore)


def tree_diff(folder: Path, starter: str, final: str, out: Path) -> Path:
    """Write ``out``: a ``git diff --binary`` of the trees ``folder/starter`` -> ``folder/final`` (two names of
    sub-folders), which applied with ``-p1`` at a copy of the starter gives the final tree: additions, edits,
    deletions, binaries.

    Raises:
        AttemptError: git is missing or fails.
    """
    git = shutil.which("git")
    if git is None:
        raise AttemptError("cannot run here: missing git (needed to turn the final tree into a patch)")
    proc = subprocess.run(
        [git, "-c", "core.quotePath=false", "diff", "--no-index", "--binary", "--no-color", "--no-ext-diff",
         "--no-prefix", starter, final],
        cwd=folder, capture_output=True, timeout=300)
    if proc.returncode not in (0, 1):
        raise AttemptError(f"git diff failed: {proc.stderr.decode(errors='replace').strip()}")
    out.write_bytes(proc.stdout)
    return out


def make_attempt(
    probe: Probe,
    *,
    model: str,
    regime: Regime,
    folder: str | Path,
    agent_command: str | Sequence[str] | None = None,
    submission: str | Path | None = None,
    timeout_s: float = 3600.0,
    cancel: threading.Event | None = None,
    progress: Callable[[str], None] | None = None,
    environment: dict[str, str] | None = None,
) -> Attempt:
    """Hand the probe's tasks to an agent one after another (``agent_command``), or take a finished tree
    (``submission``), keeping every tree in ``folder`` (which must not exist yet), and write the final patch.

    The agent command runs once per task with its working directory the step's tree (a copy of the previous
    step's), the task file and the tree as arguments (or where ``{task}`` and ``{tree}`` say), and
    ``BENCHWRIGHT_TASK``, ``BENCHWRIGHT_TREE``, ``BENCHWRIGHT_STEP``, ``BENCHWRIGHT_STEPS`` set; it inherits
    ``environment`` (default: this process's, API keys included: an agent needs them). Every process it starts
    is stopped when it ends, times out or is cancelled. A step that exits non-zero, times out or is cancelled
    ends the attempt with ``error`` and no patch (the trees so far are kept).

    A ``submission`` is the final tree (NITR's ``.submit-output/<config>/cases/<id>/``); when it holds
    ``step-1`` ... ``step-n`` folders those are the intermediate trees.

    Raises:
        AttemptError: neither or both of ``agent_command`` and ``submission``; ``folder`` exists; the submission
            is not a folder; a task file is missing; the agent command does not parse; git is missing.
    """
    import os

    from .runner import _run_command

    if (agent_command is None) == (submission is None):
        raise AttemptError("give either an agent command or a submission folder")
    out = Path(folder)
    if out.exists():
        raise AttemptError(f"{out}: already exists; an attempt keeps its trees in a new folder")
    tasks = task_files(probe)
    say = progress or (lambda _m: None)
    attempt = Attempt(probe.id, configuration_name(model, regime), " ".join(model.split()), regime, str(out),
                      started_at=datetime.now(UTC).isoformat(timespec="seconds"))
    if submission is not None:
        sub = Path(submission)
        if not sub.is_dir():
            raise AttemptError(f"{sub}: not a folder (give the tree the model produced)")
    else:
        for k, task in enumerate(tasks, 1):  # check the command before anything is written
            agent_argv(agent_command, task=task, tree=out, step=k, steps=len(tasks))
    out.mkdir(parents=True)
    starter = out / "starter"
    _copy_tree(Path(probe.case_dir), starter, hide=True)
    (out / "tasks").mkdir()
    for task in tasks:
        shutil.copy2(task, out / "tasks" / task.name)
    previous = starter
    n = len(tasks)
    for k, task in enumerate(tasks, 1):
        tree = out / f"step-{k}"
        task_copy = out / "tasks" / task.name
        if submission is not None:
            src = Path(submission) / f"step-{k}" if (Path(submission) / f"step-{n}").is_dir() else None
            if src is None and k < n:
                continue  # only the final tree was submitted
            _copy_tree(src or Path(submission), tree)
            attempt.steps.append(AttemptStep(k, task.name, str(tree), [], 0, 0.0))
            previous = tree
            continue
        _copy_tree(previous, tree)
        argv = agent_argv(agent_command, task=task_copy, tree=tree, step=k, steps=n)
        env = dict(os.environ if environment is None else environment)
        env.update(BENCHWRIGHT_TASK=str(task_copy), BENCHWRIGHT_TREE=str(tree), BENCHWRIGHT_STEP=str(k),
                   BENCHWRIGHT_STEPS=str(n))
        say(f"[{k}/{n}] {task.name}: {' '.join(argv)}")
        started = time.monotonic()
        try:
            code, log, timed_out, cancelled = _run_command(argv, cwd=tree, env=env, timeout_s=timeout_s,
                                                           cancel=cancel)
        except BaseException:  # Ctrl+C, SIGTERM: the step's processes are gone; say so in attempt.json, go on
            attempt.error = f"step {k} ({task.name}): interrupted"
            attempt.save()
            raise
        log_file = out / f"step-{k}.log"
        log_file.write_text(log, encoding="utf-8", errors="replace")
        attempt.steps.append(AttemptStep(k, task.name, str(tree), argv, code, round(time.monotonic() - started, 3),
                                         timed_out, cancelled, str(log_file)))
        if code != 0:
            why = ("cancelled" if cancelled else f"timeout after {timeout_s:g} s" if timed_out
                   else f"exit code {code}" if code is not None else log.strip().splitlines()[-1] if log.strip()
                   else "did not start")
            attempt.error = f"step {k} ({task.name}): the agent command failed: {why}; see {log_file}"
            break
        previous = tree
    if attempt.error is None:
        attempt.patch = str(tree_diff(out, starter.name, previous.name, out / "final.diff"))
    attempt.save()
    return attempt


def attempt_variant(attempt: Attempt) -> Variant:
    """The attempt's final patch as a variant the runner applies to the starter (name ``attempt:
    CONFIGURATION``; ``expected`` says nothing here: the oracle's outcome is the attempt's verdict).

    Raises:
        AttemptError: the attempt stopped before its final tree.
    """
    if attempt.patch is None:
        raise AttemptError(f"the attempt stopped early ({attempt.error}); there is nothing to evaluate")
    patch = attempt.patch if Path(attempt.patch).stat().st_size else None  # no edit: the starter as it is
    return Variant(name=ATTEMPT_VARIANT_PREFIX + attempt.configuration, kind="intended", expected="pass",
                   patch=patch, description=f"{attempt.configuration}'s attempt, kept in {attempt.folder}")
