"""Running a probe's oracle on a variant, and judging whether the oracle separates its variants.

NITR (harness): "For each probe, the harness creates a temporary workspace, applies the model-generated
file edits, configures and builds the project with CMake, runs the hidden functional tests, and then
executes the structural oracles. A probe is marked pass only if both the functional and structural
evaluations succeed." NITR (oracle validation): each oracle is validated "against intended maintainable
solutions, representative shortcut solutions, and near-miss variants" until it "stably separated the
intended solution family from targeted shortcuts"; :func:`separation` makes that check explicit.

Safety of a run (:func:`run_probe`):

* a fresh workspace from :func:`tempfile.mkdtemp` per run, removed at the end, also on errors and
  cancellation (unless ``keep_workspace``);
* the case and evaluator are copied in; the originals are never written;
* patches and overlays whose paths are absolute, contain ``..`` or lead out through symlinks are refused
  (an ``apply_error`` outcome, not an exception);
* commands run with ``cwd`` inside the workspace, ``HOME``/``TMPDIR``/``XDG_*`` pointing into it, and
  every variable whose name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL, or starts with
  ANTHROPIC_ or OPENAI_, removed;
* each command runs in a new session (its own process group); on Linux under :data:`SUPERVISOR`, a child
  subreaper that kills every descendant of the command (also those that left with ``setsid`` or a double
  fork) when it ends, times out, is cancelled, or benchwright dies; elsewhere the process group is killed
  with SIGKILL on timeout or cancellation and after the command ends (docs/probes.md, *Processes*).

* each command runs under bubblewrap where it works (:mod:`benchwright.core.probes.sandbox`): the filesystem
  read-only except the workspace, ``/tmp`` private; the ``sandbox`` setting (``auto``, ``required``, ``off``)
  decides what happens without it, and :attr:`OracleRun.sandbox` says how the run was confined.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import BenchwrightError
from ._workspace import Workspace, scrubbed_environment
from .counts import TestCounts, read_test_counts
from .model import Expectation, Probe, Variant
from .pipeline import (
    BaselineDiffModule,
    BuildModule,
    FrozenPathsModule,
    RequiredPathsModule,
    SourceAnalysisModule,
    UnitTestModule,
    _CommandModule,
    expand,
)
from .rules import (
    RuleMatch,
    VariantApplyError,
    apply_variant_to,
    baseline_findings,
    put_submission,
    scan_sources,
)
from .sandbox import sandbox_for

LOG_HEAD_BYTES = 16_000
LOG_TAIL_BYTES = 48_000
"""A module's captured output keeps its first and last bytes; the middle of a longer log is left out."""

Outcome = Literal["pass", "fail", "error"]

FAILED_TO_BUILD = "failed to build"
"""What a run whose ``build`` module failed is shown as (:attr:`OracleRun.verdict`): the compiler, not the
oracle, rejected the variant."""

CaughtBy = Literal["build", "oracle"]


class ExpectationCheck(StrEnum):
    """How a variant's run compares with the variant's expectation (:attr:`OracleRun.expectation_check`)."""

    AS_EXPECTED = "as expected"
    MISMATCH = "mismatch"
    COMPILER_CAUGHT = "compiler caught"
    """A shortcut that failed to build: it was expected to fail and did, but the compiler, not the oracle, caught
    it, so it shows nothing about the oracle (NITR: the oracle must catch the shortcut)."""


class ModuleResult(BaseModel):
    """The result of one pipeline module.

    Attributes:
        name: the module's ``name``.
        module_name: its type (``build``, ``unit_test``, ``required_paths``, ``source_analysis``,
            ``customized_check``).
        passed: True when the module passed.
        reason: one line saying why, e.g. ``exit code 0``, ``exit code 2: <last output line>``,
            ``timeout: still running after 1 s; process group killed``, ``cancelled``,
            ``rule no-if matched in src/calc.cpp:14 (+1 more)``, ``missing: src/x.h``.
        matches: rule findings (``source_analysis``) or missing paths (``required_paths``).
        log: the command line and its captured stdout+stderr (interleaved), at most
            :data:`LOG_HEAD_BYTES` + :data:`LOG_TAIL_BYTES` bytes with the middle left out; for source
            analysis one line per finding.
        duration_s: wall time.
        command: the argv run, placeholders filled in (empty for modules that run nothing).
        returncode: the exit code, or ``None`` when the command did not finish or did not start.
        timed_out: True when the command was killed for the timeout.
        tests: for a ``unit_test`` module, the counts read from the test tool's summary
            (:func:`~benchwright.core.probes.counts.read_test_counts`; the outermost tool's), or ``None`` when
            no summary was found or nothing ran.
        missing: what this machine lacks to run the module (``cmake``, ``a C++ compiler``, ``python module
            numpy``; :func:`missing_toolchain`), or ``None``: the run then says "cannot run here", not a verdict.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    module_name: str
    passed: bool
    reason: str
    matches: list[RuleMatch] = Field(default_factory=list)
    log: str = ""
    duration_s: float = 0.0
    command: list[str] = Field(default_factory=list)
    returncode: int | None = None
    timed_out: bool = False
    tests: TestCounts | None = None
    missing: str | None = None


class OracleRun(BaseModel):
    """One evaluation of a probe on a variant (or on the starter code).

    Attributes:
        probe_id: the probe's id.
        variant: the variant evaluated, or ``None`` for the starter code.
        outcome: ``pass`` (every module passed), ``fail`` (some module failed) or ``error`` (the variant
            could not be applied, the workspace could not be set up, or the run was cancelled).
        expected: the variant's expectation, or ``None`` for the starter code.
        matches_expectation: ``outcome == expected``; False for an ``error``; ``None`` without a variant.
        modules: the module results in pipeline order (fewer than the pipeline's modules when cancelled or
            when the variant did not apply).
        apply_error: why a variant (of ``chain`` or the variant itself) did not apply, or ``None``.
        duration_s: wall time of the whole run.
        chain: names of the variants applied before ``variant`` (multi-step probes).
        cancelled: True when ``cancel`` was set during the run.
        error: any other reason for an ``error`` outcome (workspace setup, cancellation), or ``None``.
        started_at: ISO 8601 UTC time the run started.
        workspace: the workspace path when it was kept (``keep_workspace=True``), else ``None``.
        submission: the submission folder evaluated (``run_probe(..., submission=DIR)``), else ``None``.
        prepare_log: for a case imported from a NITR checkout, the command configuring the workspace with this
            one case enabled and its output (:func:`configure_nitr_case`), else "".
        sandbox: how the commands were confined (:data:`~benchwright.core.probes.sandbox.SANDBOXED`, ``not
            sandboxed (bubblewrap unavailable)``, ``not sandboxed (probes sandbox = "off")``), "" before any ran.
    """

    model_config = ConfigDict(frozen=True)

    probe_id: str
    variant: Variant | None
    outcome: Outcome
    expected: Expectation | None
    matches_expectation: bool | None
    modules: list[ModuleResult] = Field(default_factory=list)
    apply_error: str | None = None
    duration_s: float = 0.0
    chain: list[str] = Field(default_factory=list)
    cancelled: bool = False
    error: str | None = None
    started_at: str = ""
    workspace: str | None = None
    submission: str | None = None
    prepare_log: str = ""
    sandbox: str = ""

    @property
    def failed_modules(self) -> list[ModuleResult]:
        """The modules that did not pass."""
        return [m for m in self.modules if not m.passed]

    @property
    def rule_matches(self) -> list[RuleMatch]:
        """Every finding of every module."""
        return [match for module in self.modules for match in module.matches]

    @property
    def failed_to_build(self) -> bool:
        """True when a ``build`` module failed: the variant did not compile (or configure), so its other
        results say nothing about the oracle."""
        return any(m.module_name == "build" and not m.passed for m in self.modules)

    @property
    def caught_by(self) -> CaughtBy | None:
        """What rejected a failing run: ``build`` (it failed to build) or ``oracle`` (it built, and a test or
        structural module failed); ``None`` for a pass or an error."""
        if self.outcome != "fail":
            return None
        return "build" if self.failed_to_build else "oracle"

    @property
    def shortcut_failed_to_build(self) -> bool:
        """True for a run of a ``shortcut`` variant that failed to build: the compiler caught it, not the
        oracle (the rule behind :data:`ExpectationCheck.COMPILER_CAUGHT`; such a shortcut does not separate)."""
        return self.variant is not None and self.variant.kind == "shortcut" and self.caught_by == "build"

    @property
    def expectation_check(self) -> ExpectationCheck | None:
        """The run against its variant's expectation: :data:`ExpectationCheck.COMPILER_CAUGHT` for a shortcut
        that failed to build, else as expected or a mismatch (an ``error`` is a mismatch); None for the starter
        code."""
        if self.variant is None or self.matches_expectation is None:
            return None
        if self.shortcut_failed_to_build:
            return ExpectationCheck.COMPILER_CAUGHT
        return ExpectationCheck.AS_EXPECTED if self.matches_expectation else ExpectationCheck.MISMATCH

    @property
    def verdict(self) -> str:
        """The outcome as shown: ``pass``, ``fail`` (caught by the oracle), :data:`FAILED_TO_BUILD`, ``error``."""
        return FAILED_TO_BUILD if self.caught_by == "build" else self.outcome

    def first_failure(self, *, build: bool | None = None) -> ModuleResult | None:
        """The first module that did not pass (only ``build`` modules with ``build=True``, only the others
        with ``build=False``), or None."""
        for module in self.failed_modules:
            if build is None or (module.module_name == "build") == build:
                return module
        return None

    def summary(self) -> str:
        """One line: variant, outcome, expectation and the first reason of failure."""
        name = self.variant.name if self.variant else "starter"
        text = f"{name}: {self.verdict}"
        if self.expected is not None:
            text += f" (expected {self.expected}{'' if self.matches_expectation else ', MISMATCH'})"
        if self.apply_error:
            text += f": {self.apply_error}"
        elif self.error:
            text += f": {self.error}"
        elif self.failed_modules:
            first = self.failed_modules[0]
            text += f": {first.name}: {first.reason}"
        return text


class Separation(BaseModel):
    """Whether an oracle separates a probe's variants (NITR, oracle validation).

    Attributes:
        separating: every intended variant passes, every shortcut is caught by the oracle (it builds and a
            test or structural module fails it), there is at least one of each, and none of them ended in an
            error.
        intended_failing: names of intended variants that did not pass.
        shortcuts_passing: names of shortcut variants that passed.
        shortcuts_failing_to_build: names of shortcut variants that failed to build: the compiler, not the
            oracle, rejected them, so they do not show that the oracle catches the shortcut.
        caught_by: for every shortcut that failed, ``oracle`` or ``build``.
        shortcut_notes: one sentence per shortcut: who caught it and how, or that it passed.
        near_miss_notes: one sentence per near-miss: as expected, or "may be too loose" (expected fail,
            passed) / "may be too strict" (expected pass, failed).
        errors: ``name: reason`` of runs that ended in an error.
        flaky: names of variants whose repeated runs (``probe run --repeat N``) did not all give the same
            verdict: the oracle is flaky on them, so it is not separating.
        notes: anything else worth saying (fewer intended or shortcut variants than the family minimum, a
            flaky variant's verdicts).
    """

    model_config = ConfigDict(frozen=True)

    separating: bool
    flaky: list[str] = Field(default_factory=list)
    intended_failing: list[str] = Field(default_factory=list)
    shortcuts_passing: list[str] = Field(default_factory=list)
    shortcuts_failing_to_build: list[str] = Field(default_factory=list)
    caught_by: dict[str, CaughtBy] = Field(default_factory=dict)
    shortcut_notes: list[str] = Field(default_factory=list)
    near_miss_notes: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------------------------
# Processes


class _BoundedReader(threading.Thread):
    """Reads a pipe to its end, keeping the first and last bytes."""

    def __init__(self, stream) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def run(self) -> None:
        try:
            while True:
                chunk = self.stream.read1(65536) if hasattr(self.stream, "read1") else self.stream.read(65536)
                if not chunk:
                    break
                self.total += len(chunk)
                room = LOG_HEAD_BYTES - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail.append(chunk)
                    self.tail_size += len(chunk)
                    while self.tail_size - len(self.tail[0]) >= LOG_TAIL_BYTES:
                        self.tail_size -= len(self.tail.popleft())
        except (OSError, ValueError):
            pass

    def text(self) -> str:
        tail = b"".join(self.tail)
        if len(tail) > LOG_TAIL_BYTES:
            tail = tail[-LOG_TAIL_BYTES:]
        left_out = self.total - len(self.head) - len(tail)
        out = bytes(self.head).decode("utf-8", errors="replace")
        if left_out > 0:
            out += f"\n[... {left_out} bytes of output left out ...]\n"
        return out + tail.decode("utf-8", errors="replace")


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


SUPERVISOR = Path(__file__).with_name("_supervise.py")
"""The script each command runs under on Linux (see :mod:`benchwright.core.probes._supervise`)."""

STOP_GRACE_S = 5.0
"""How long a supervised command gets to kill its descendants after SIGTERM before its group gets SIGKILL."""


def supervision_available() -> bool:
    """True where commands run under :data:`SUPERVISOR`: Linux with ``/proc`` (every descendant of a command
    is killed when it ends). Elsewhere only the command's process group is killed."""
    return sys.platform.startswith("linux") and os.path.exists("/proc/self/stat") and SUPERVISOR.is_file()


def _executable_problem(argv0: str, cwd: Path, env: dict[str, str]) -> str | None:
    """Why ``argv0`` cannot be run (as ``Popen`` would say it), or None."""
    if os.sep in argv0:
        path = Path(argv0) if os.path.isabs(argv0) else cwd / argv0
        if not path.exists():
            return f"command not found: {argv0}"
        if path.is_dir() or not os.access(path, os.X_OK):
            return f"cannot run {argv0}: Permission denied"
        return None
    if shutil.which(argv0, path=env.get("PATH", os.defpath)) is None:
        return f"command not found: {argv0}"
    return None


def _stop(process: subprocess.Popen, supervised: bool) -> None:
    """Stop a command and everything it started: SIGTERM to the supervisor (it kills every descendant),
    then SIGKILL to the command's process group, then to the command itself."""
    if supervised and process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=STOP_GRACE_S)
    _kill_group(process.pid)  # stragglers of the group (background children) die with the command
    if process.poll() is None:
        process.kill()
        process.wait()


def _run_command(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float, cancel: threading.Event | None,
    sandbox: Sequence[str] = (),
) -> tuple[int | None, str, bool, bool]:
    """Run ``argv`` in its own session (under :data:`SUPERVISOR` where :func:`supervision_available`), inside
    ``sandbox`` (an argv prefix such as bwrap's, run by the supervisor; empty: unconfined); returns (returncode,
    output, timed_out, cancelled). Every process the command started is gone when this returns, also when it
    raises (``KeyboardInterrupt``)."""
    problem = _executable_problem(argv[0], cwd, env)
    if problem:
        return None, problem, False, False
    supervised = supervision_available()
    confined = [*sandbox, *argv]
    run_argv = [sys.executable, "-I", "-S", str(SUPERVISOR), str(os.getpid()), "--", *confined] if supervised else confined
    try:
        process = subprocess.Popen(
            run_argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except FileNotFoundError:
        return None, f"command not found: {argv[0]}", False, False
    except OSError as error:
        return None, f"cannot run {argv[0]}: {error.strerror or error}", False, False
    reader = _BoundedReader(process.stdout)
    reader.start()
    deadline = time.monotonic() + timeout_s
    timed_out = cancelled = False
    try:
        while True:
            try:
                process.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel.is_set():
                    cancelled = True
                elif time.monotonic() >= deadline:
                    timed_out = True
                if timed_out or cancelled:
                    break
    finally:
        _stop(process, supervised)
        reader.join(timeout=5)
        if process.stdout is not None and not reader.is_alive():
            process.stdout.close()
    return (None if timed_out or cancelled else process.returncode), reader.text(), timed_out, cancelled


def _environment(workspace: Workspace, extra: dict[str, str], pipeline_env: dict[str, str] | None = None) -> dict[str, str]:
    env = scrubbed_environment()
    env.update({
        "HOME": str(workspace.home), "TMPDIR": str(workspace.tmp), "TMP": str(workspace.tmp),
        "TEMP": str(workspace.tmp), "XDG_CACHE_HOME": str(workspace.home / ".cache"),
        "XDG_CONFIG_HOME": str(workspace.home / ".config"), "XDG_DATA_HOME": str(workspace.home / ".local/share"),
    })
    values = workspace.values()
    env.update({key: expand(value, values) for key, value in (pipeline_env or {}).items()})
    env.update({key: expand(value, values) for key, value in extra.items()})
    return scrubbed_environment(env)


_FAILURE_LINE = re.compile(r"\b(FAIL|FAILED|ERROR|Error|error|Traceback|Assertion)\b")
_NOISE = ("Errors while running CTest", "The following tests FAILED", "Output from these tests are in",
          "Use \"--rerun-failed", "tests passed,", "Total Test time")


def _telling_line(text: str) -> str:
    """The first line that looks like a failure message, else the last non-empty line (for reasons)."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("$ ")]
    for line in lines:
        if _FAILURE_LINE.search(line) and not any(noise in line for noise in _NOISE) and not line.startswith(
            ("Test #", "Start ", "1/", "0% tests")
        ) and "***Failed" not in line:
            return line[:200]
    return lines[-1][:200] if lines else ""


_MISSING_PYTHON_MODULE = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'")
_NO_COMPILER = re.compile(r"No CMAKE_(CXX|C)_COMPILER could be found|CMAKE_(CXX|C)_COMPILER not set|"
                          r"is not a full path to an existing compiler tool", re.IGNORECASE)


def missing_toolchain(argv: Sequence[str], output: str, workspace: Workspace) -> str | None:
    """What this machine lacks, when a failed command's failure says so, else ``None``:

    * the program itself (``command not found: cmake``): its name;
    * CMake finding no C or C++ compiler: ``a C++ compiler`` / ``a C compiler``;
    * ``ModuleNotFoundError: No module named 'x'`` for a module that is neither importable here nor a file or
      folder of the workspace (a submission importing a module it lacks is the submission's failure):
      ``python module x``.
    """
    if output.startswith("command not found: "):
        return output.removeprefix("command not found: ").strip() or (argv[0] if argv else None)
    compiler = _NO_COMPILER.search(output)
    if compiler:
        return "a C compiler" if (compiler.group(1) or compiler.group(2) or "").upper() == "C" else "a C++ compiler"
    for match in _MISSING_PYTHON_MODULE.finditer(output):
        top = match.group(1).split(".")[0]
        if importlib.util.find_spec(top) is not None:
            continue
        local = any(next(base.rglob(f"{top}.py"), None) or next((d for d in base.rglob(top) if d.is_dir()), None)
                    for base in (workspace.repo_root, workspace.evaluator_root) if base.is_dir())
        if not local:
            return f"python module {top}"
    return None


NITR_DEFAULT_CONFIGURE_ARGS = ("-DNITR_BUILD_EVALUATOR=ON",)
"""What a NITR ``build`` module configures with when it gives no ``configure_args``."""


def _nitr_configure(
    module: BuildModule, workspace: Workspace, env: dict[str, str], cwd: Path, timeout_s: float,
    cancel: threading.Event | None,
) -> tuple[list[str], int | None, str, bool, bool] | None:
    """NITR's lazy configure: when the build folder has no ``CMakeCache.txt``, ``cmake -S {repo_root} -B
    {build_dir} <configure_args>`` runs before the build command; None when the cache exists."""
    if (workspace.build_dir / "CMakeCache.txt").exists():
        return None
    values = workspace.values()
    args = module.configure_args if module.configure_args is not None else list(NITR_DEFAULT_CONFIGURE_ARGS)
    argv = ["cmake", "-S", str(workspace.repo_root), "-B", str(workspace.build_dir), *(expand(a, values) for a in args)]
    returncode, output, timed_out, cancelled = _run_command(argv, cwd=cwd, env=env, timeout_s=timeout_s, cancel=cancel,
                                                            sandbox=workspace.sandbox)
    return argv, returncode, output, timed_out, cancelled


def configure_nitr_case(
    probe: Probe, workspace: Workspace, timeout_s: float, cancel: threading.Event | None,
    say: Callable[[str], None] = lambda _m: None,
) -> ModuleResult | None:
    """Configure a NITR workspace with its one case enabled, as NITR's README does before evaluating
    (``cmake -S {repo_root} -B {build_dir} -DNITR_BUILD_ALL_CASES=OFF -DNITR_CASE=<id>`` and the first ``build``
    module's ``configure_args``, default ``-DNITR_BUILD_EVALUATOR=ON``), so cases whose pipeline has no
    ``build`` module (NITR's Python cases) have their tests registered. Returns the step as a
    :class:`ModuleResult` (not one of the pipeline's modules), or ``None`` when there is nothing to configure
    (not a NITR case, no top-level ``CMakeLists.txt``, the build folder already configured). A failed
    configure is not an outcome by itself: the modules then fail as they would (a ``build`` module configures
    again, as NITR does); only a missing ``cmake`` (``missing`` set) stops the run as "cannot run here"."""
    if probe.pipeline.layout != "nitr" or not probe.checkout_root:
        return None
    if not (workspace.repo_root / "CMakeLists.txt").is_file() or (workspace.build_dir / "CMakeCache.txt").exists():
        return None
    values = workspace.values()
    build = next((m for m in probe.pipeline.enabled_modules() if isinstance(m, BuildModule)), None)
    args = build.configure_args if build is not None and build.configure_args is not None else list(NITR_DEFAULT_CONFIGURE_ARGS)
    argv = ["cmake", "-S", str(workspace.repo_root), "-B", str(workspace.build_dir), "-DNITR_BUILD_ALL_CASES=OFF",
            f"-DNITR_CASE={workspace.case_root.name}", *(expand(a, values) for a in args)]
    say(f"configuring the workspace with {workspace.case_root.name} enabled")
    started = time.monotonic()
    env = _environment(workspace, build.env if build is not None else {}, probe.pipeline.env)
    returncode, output, timed_out, _cancelled = _run_command(
        argv, cwd=workspace.repo_root, env=env, timeout_s=timeout_s, cancel=cancel, sandbox=workspace.sandbox)
    lacking = missing_toolchain(argv, output, workspace) if returncode != 0 and not timed_out else None
    reason = "exit code 0" if returncode == 0 else (f"cannot run here: missing {lacking}" if lacking else
                                                   f"configure failed: exit code {returncode}: {_telling_line(output)}")
    return ModuleResult(
        name="configure one case", module_name="build", passed=returncode == 0, reason=reason,
        log="$ " + shlex.join(argv) + "\n" + output, duration_s=time.monotonic() - started, command=argv,
        returncode=returncode, timed_out=timed_out, missing=lacking,
    )


def _command_module(
    module: _CommandModule, workspace: Workspace, timeout_s: float, cancel: threading.Event | None,
    *, nitr: bool = False, pipeline_env: dict[str, str] | None = None,
) -> ModuleResult:
    started = time.monotonic()
    values = workspace.values()
    argv = [expand(part, values) for part in module.command]
    base = {"name": module.name, "module_name": module.module_name, "command": argv}
    try:
        cwd = workspace.resolve(module.cwd or "repo_root")
    except ValueError as error:
        return ModuleResult(**base, passed=False, reason=f"bad working directory: {error}")
    if not cwd.is_dir():
        return ModuleResult(**base, passed=False, reason=f"working directory {module.cwd} does not exist")
    limit = module.timeout_s or timeout_s
    env = _environment(workspace, module.env, pipeline_env)
    configure_log = ""
    if nitr and isinstance(module, BuildModule):
        configured = _nitr_configure(module, workspace, env, cwd, limit, cancel)
        if configured is not None:
            conf_argv, returncode, output, timed_out, cancelled = configured
            configure_log = "$ " + shlex.join(conf_argv) + "\n" + output + "\n"
            if timed_out or cancelled or returncode != 0:
                if timed_out:
                    reason = f"configure: timeout: still running after {limit:g} s; process group killed"
                elif cancelled:
                    reason = "cancelled"
                elif returncode is None:
                    reason = f"configure: {output}"
                else:
                    last = _telling_line(output)
                    reason = f"configure: exit code {returncode}" + (f": {last}" if last else "")
                lacking = None if timed_out or cancelled else missing_toolchain(conf_argv, output, workspace)
                return ModuleResult(
                    **{**base, "command": conf_argv}, passed=False,
                    reason=f"cannot run here: missing {lacking}" if lacking else reason, log=configure_log,
                    duration_s=time.monotonic() - started, returncode=returncode, timed_out=timed_out,
                    missing=lacking,
                )
    returncode, output, timed_out, cancelled = _run_command(
        argv, cwd=cwd, env=env, timeout_s=limit, cancel=cancel, sandbox=workspace.sandbox
    )
    log = configure_log + "$ " + shlex.join(argv) + "\n" + output
    duration = time.monotonic() - started
    counts = read_test_counts(output) if isinstance(module, UnitTestModule) and returncode is not None else []
    if timed_out:
        reason, passed = f"timeout: still running after {limit:g} s; process group killed", False
    elif cancelled:
        reason, passed = "cancelled", False
    elif returncode is None:
        reason, passed = output, False
    elif returncode != 0:
        last = _telling_line(output)
        reason, passed = f"exit code {returncode}" + (f": {last}" if last else ""), False
    elif isinstance(module, UnitTestModule):
        passed, reason = _unit_test_verdict(module, counts)
    else:
        reason, passed = "exit code 0", True
    if counts and returncode not in (None, 0):
        reason += f" ({counts[0].text()})"
    lacking = None if passed or timed_out or cancelled else missing_toolchain(argv, configure_log + output, workspace)
    if lacking:
        reason = f"cannot run here: missing {lacking}"
    return ModuleResult(
        **base, passed=passed, reason=reason, log=log, duration_s=duration, returncode=returncode,
        timed_out=timed_out, tests=counts[0] if counts else None, missing=lacking,
    )


def _unit_test_verdict(module: UnitTestModule, counts: list[TestCounts]) -> tuple[bool, str]:
    """Whether a ``unit_test`` command that exited with 0 passes: at least ``min_expected_tests`` (default 1)
    tests ran and passed, none failed, and no summary of a tool run inside it says otherwise."""
    need = module.min_expected_tests or 1
    if not counts:
        return False, ("exit code 0, but the output has no test summary (CTest, GoogleTest, pytest or unittest), "
                       "so it cannot tell that any test ran; print the tool's summary (no -Q / --quiet)")
    main = counts[0]
    if main.failed:
        return False, f"exit code 0, but {main.text()}"
    if main.passed < need:
        if main.run == 0 and main.skipped == 0:
            return False, f"no tests were run (the test filter matched nothing): {main.text()}"
        if main.passed == 0:
            return False, f"no test passed; every test was skipped: {main.text()}"
        return False, f"only {main.passed} tests passed, at least {need} expected: {main.text()}"
    for inner in counts[1:]:
        if inner.failed or inner.passed == 0:
            return False, f"{main.text()}, but the {inner.tool} run inside it reports {inner.text()}"
    return True, f"exit code 0; {main.text()}"


def _required_paths(module: RequiredPathsModule, workspace: Workspace) -> ModuleResult:
    started = time.monotonic()
    base = {"name": module.name, "module_name": module.module_name}
    try:
        root = workspace.resolve(module.root)
    except ValueError as error:
        return ModuleResult(**base, passed=False, reason=f"bad root: {error}")
    missing = [p for p in module.paths if not (root / p).exists()]
    matches = [
        RuleMatch(rule_id="required_path", relative_path=p, line=None, text="", kind="missing",
                  message=f"required path {p} is missing")
        for p in missing
    ]
    reason = f"missing: {', '.join(missing)}" if missing else f"all {len(module.paths)} required paths exist"
    return ModuleResult(
        **base, passed=not missing, reason=reason, matches=matches,
        log="\n".join(m.message for m in matches), duration_s=time.monotonic() - started,
    )


def _source_analysis(module: SourceAnalysisModule, workspace: Workspace) -> ModuleResult:
    started = time.monotonic()
    base = {"name": module.name, "module_name": module.module_name}
    try:
        root = workspace.resolve(module.root)
    except ValueError as error:
        return ModuleResult(**base, passed=False, reason=f"bad root: {error}")
    matches = scan_sources(module, root)
    if matches:
        first = matches[0]
        verb = "matched in" if first.kind == "violation" else "required pattern not found in"
        reason = f"rule {first.rule_id} {verb} {first.location()}"
        if len(matches) > 1:
            reason += f" (+{len(matches) - 1} more)"
    else:
        reason = f"no rule matched ({len(module.rules)} rules)"
    log = "\n".join(f"{m.location()}: [{m.rule_id}] {m.message}" + (f"\n    {m.text}" if m.text else "") for m in matches)
    return ModuleResult(
        **base, passed=not matches, reason=reason, matches=matches, log=log, duration_s=time.monotonic() - started
    )


def _baseline_module(module: BaselineDiffModule | FrozenPathsModule, workspace: Workspace) -> ModuleResult:
    started = time.monotonic()
    base = {"name": module.name, "module_name": module.module_name}
    matches = baseline_findings(module, workspace.case_root, workspace.baseline_case_root)
    if matches:
        reason = matches[0].message + (f" (+{len(matches) - 1} more)" if len(matches) > 1 else "")
    else:
        reason = "no change outside what is allowed" if isinstance(module, BaselineDiffModule) else (
            f"all {len(module.paths)} frozen paths unchanged")
    return ModuleResult(
        **base, passed=not matches, reason=reason, matches=matches, log="\n".join(m.message for m in matches),
        duration_s=time.monotonic() - started,
    )


def _run_module(
    module, workspace: Workspace, timeout_s: float, cancel: threading.Event | None, pipeline=None
) -> ModuleResult:
    if isinstance(module, _CommandModule):
        nitr = pipeline is not None and pipeline.layout == "nitr"
        return _command_module(module, workspace, timeout_s, cancel, nitr=nitr,
                               pipeline_env=pipeline.env if pipeline is not None else None)
    if isinstance(module, RequiredPathsModule):
        return _required_paths(module, workspace)
    if isinstance(module, BaselineDiffModule | FrozenPathsModule):
        return _baseline_module(module, workspace)
    return _source_analysis(module, workspace)


# ---------------------------------------------------------------------------------------------------------
# Runs


def run_probe(
    probe: Probe,
    variant: Variant | None,
    *,
    before: Sequence[Variant] = (),
    timeout_s: float = 120.0,
    cancel: threading.Event | None = None,
    progress: Callable[[str], None] | None = None,
    keep_workspace: bool = False,
    submission: str | Path | None = None,
) -> OracleRun:
    """Evaluate ``probe``'s pipeline on the starter code with ``before`` and then ``variant`` applied, or on
    a submission.

    Args:
        probe: the probe.
        variant: the variant to evaluate, or ``None`` for the starter code (``before`` still applies).
        before: variants applied first, in order (the earlier steps of a multi-step probe; see
            :func:`chain_for`).
        timeout_s: timeout of each command module (a module's own ``timeout_s`` wins).
        cancel: when set, the running command's process group is killed and no further module runs; the
            outcome is ``error`` with ``cancelled=True``.
        progress: called with short messages (``applying intended``, ``[3/6] unit_test functional``, ...).
        keep_workspace: keep the workspace for inspection (its path is in ``OracleRun.workspace``).
        submission: a folder holding a whole case tree (a model's or a person's solution, as NITR puts one at
            ``.submit-output/<config>/cases/<id>/``): it takes the starter's place as the case root (files
            it lacks are absent, not left from the starter); the starter stays the baseline. Recorded in
            ``OracleRun.submission``; give no ``variant`` with it.

    Returns:
        An :class:`OracleRun`. Never raises for a broken variant, a failing command or a timeout; those
        are outcomes.
    """
    say = progress or (lambda _message: None)
    started = time.monotonic()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    chain = [v.name for v in before]
    expected = variant.expected if variant is not None else None
    confined_note = [""]

    def finish(outcome: Outcome, modules: list[ModuleResult], **extra) -> OracleRun:
        matches = None if variant is None else (outcome != "error" and outcome == expected)
        return OracleRun(
            probe_id=probe.id, variant=variant, outcome=outcome, expected=expected, matches_expectation=matches,
            modules=modules, duration_s=time.monotonic() - started, chain=chain, started_at=started_at,
            submission=str(submission) if submission is not None else None,
            **{"sandbox": confined_note[0], **extra},
        )

    if submission is not None and (variant is not None or before):
        raise ValueError("a run evaluates a submission or a variant, not both")

    if cancel is not None and cancel.is_set():
        return finish("error", [], cancelled=True, error="cancelled before the run started")
    say("preparing the workspace")
    try:
        workspace = Workspace.create(probe.case_dir, probe.evaluator_dir, probe.pipeline, checkout=probe.checkout_root)
    except OSError as error:
        return finish("error", [], error=f"the workspace cannot be prepared: {error}")
    kept = str(workspace.root) if keep_workspace else None
    try:
        confinement = sandbox_for(workspace.root)
        workspace.sandbox, workspace.sandbox_note = confinement.prefix, confinement.note
        confined_note[0] = confinement.note
        if confinement.missing:
            say(f"cannot run here: missing {confinement.missing} (probes sandbox = \"required\")")
            return finish("error", [], error=f"cannot run here: missing {confinement.missing}", workspace=kept)
        if not confinement.prefix:
            say(confinement.note)
        if submission is not None:
            say("putting the submission in place of the case")
            try:
                put_submission(workspace.case_root, Path(submission))
            except VariantApplyError as error:
                return finish("error", [], apply_error=str(error), workspace=kept)
        for item in [*before, variant]:
            if item is None:
                continue
            say(f"applying {item.name}")
            try:
                apply_variant_to(workspace.case_root, item)
            except VariantApplyError as error:
                return finish("error", [], apply_error=str(error), workspace=kept)
        prepared = configure_nitr_case(probe, workspace, timeout_s, cancel, say)
        if prepared is not None and prepared.missing:
            return finish("error", [prepared], error=prepared.reason, workspace=kept, prepare_log=prepared.log)
        prepare_log = prepared.log if prepared is not None else ""
        results: list[ModuleResult] = []
        modules = probe.pipeline.enabled_modules()
        total = len(modules)
        for index, module in enumerate(modules, start=1):
            if cancel is not None and cancel.is_set():
                return finish("error", results, cancelled=True, error="cancelled", workspace=kept)
            say(f"[{index}/{total}] {module.module_name} {module.name}")
            result = _run_module(module, workspace, timeout_s, cancel, probe.pipeline)
            results.append(result)
            say(f"[{index}/{total}] {module.name}: {'passed' if result.passed else 'failed'} ({result.reason})")
            if result.reason == "cancelled":
                return finish("error", results, cancelled=True, error="cancelled", workspace=kept)
        lacking = list(dict.fromkeys(r.missing for r in results if r.missing))
        if lacking:
            return finish("error", results, error=f"cannot run here: missing {', '.join(lacking)}", workspace=kept,
                          prepare_log=prepare_log)
        outcome: Outcome = "pass" if all(r.passed for r in results) else "fail"
        return finish(outcome, results, workspace=kept, prepare_log=prepare_log)
    finally:
        if not keep_workspace:
            workspace.remove()


def chain_for(variant: Variant, variants: Sequence[Variant]) -> list[Variant]:
    """The variants to apply before ``variant``.

    ``variant.after`` names them explicitly; otherwise a step-``k`` variant builds on the intended variant
    of each step ``1 .. k-1`` (exactly one per step). Micro and whole-sequence variants need nothing.

    Raises:
        BenchwrightError: a name of ``after`` is unknown, or an earlier step has no or several intended
            variants.
    """
    by_name = {v.name: v for v in variants}
    if variant.after:
        unknown = [n for n in variant.after if n not in by_name]
        if unknown:
            raise BenchwrightError(f"variant {variant.name}: 'after' names unknown variants: {', '.join(unknown)}")
        return [by_name[n] for n in variant.after]
    chain: list[Variant] = []
    for step in range(1, (variant.step or 1)):
        intended = [v for v in variants if v.step == step and v.kind == "intended"]
        if len(intended) != 1:
            raise BenchwrightError(
                f"variant {variant.name} (step {variant.step}) builds on the intended variant of step {step}, "
                f"but there are {len(intended)}; name them in 'after'"
            )
        chain.append(intended[0])
    return chain


def final_variants(probe: Probe, variants: Sequence[Variant]) -> list[Variant]:
    """The variants that reach the end of the task sequence: micro and whole-sequence variants
    (``step`` ``None``) and those of the last step. Earlier step variants are building blocks of chains."""
    last = len(probe.steps)
    return [v for v in variants if v.step is None or v.step == last]


def run_all(
    probe: Probe,
    variants: Sequence[Variant],
    *,
    include_starter: bool = False,
    timeout_s: float = 120.0,
    cancel: threading.Event | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[OracleRun]:
    """Run every final variant (:func:`final_variants`) with its chain (:func:`chain_for`), in name order,
    and the starter code first when ``include_starter``. Stops early when ``cancel`` is set (the run in
    progress is returned as cancelled). A chain that cannot be built is an ``error`` run.
    """
    say = progress or (lambda _message: None)
    runs: list[OracleRun] = []
    todo: list[Variant | None] = ([None] if include_starter else []) + sorted(
        final_variants(probe, variants), key=lambda v: v.name
    )
    for item in todo:
        if cancel is not None and cancel.is_set():
            break
        say(f"variant {item.name if item else 'starter'}")
        try:
            chain = chain_for(item, variants) if item is not None else []
        except BenchwrightError as error:
            runs.append(OracleRun(
                probe_id=probe.id, variant=item, outcome="error", expected=item.expected if item else None,
                matches_expectation=False, apply_error=str(error),
            ))
            continue
        runs.append(run_probe(probe, item, before=chain, timeout_s=timeout_s, cancel=cancel, progress=progress))
    return runs


def _module_reason(module: ModuleResult | None) -> str:
    return f"{module.name}: {module.reason}" if module is not None else "every module passed"


def _shortcut_note(run: OracleRun) -> str:
    name = run.variant.name if run.variant else "starter"
    if run.outcome == "error":
        return f"{name}: could not be judged ({run.apply_error or run.error})"
    if run.caught_by == "build":
        return (f"{name}: {FAILED_TO_BUILD} ({_module_reason(run.first_failure(build=True))}); the compiler caught "
                "it, not the oracle: make the shortcut build so it tests the oracle")
    if run.caught_by == "oracle":
        return f"{name}: caught by the oracle ({_module_reason(run.first_failure(build=False))})"
    return f"{name}: passed; the oracle does not catch this shortcut"


def _near_miss_note(run: OracleRun) -> str:
    name = run.variant.name if run.variant else "starter"
    reason = _module_reason(run.first_failure())
    if run.outcome == "error":
        return f"{name}: could not be judged ({run.apply_error or run.error})"
    if run.caught_by == "build":
        return f"{name}: {FAILED_TO_BUILD} ({_module_reason(run.first_failure(build=True))}); it does not test the oracle"
    if run.outcome == run.expected:
        return f"{name}: {'passed' if run.outcome == 'pass' else 'failed'} as expected ({reason})"
    if run.expected == "fail":
        return f"{name}: expected to fail but passed; the oracle may be too loose"
    return f"{name}: expected to pass but failed ({reason}); the oracle may be too strict"


DEFAULT_MIN_VARIANTS_PER_FAMILY = 2
"""How many intended and how many shortcut variants :func:`separation` needs by default: NITR validates each
oracle until it "stably separated the intended solution family from targeted shortcuts", a family being more
than one solution."""


def separation(runs: Sequence[OracleRun], *, min_per_family: int = DEFAULT_MIN_VARIANTS_PER_FAMILY) -> Separation:
    """Judge whether the oracle *stably* separates the variants of ``runs`` (runs of the starter code are ignored).

    Separating means: at least ``min_per_family`` intended and as many shortcut variants were run, every
    intended variant passed, every shortcut was caught by the oracle (a shortcut that *failed to build* was
    caught by the compiler and does not count), none of them ended in an error, and a variant run several
    times (``runs`` may hold repeats of a variant) got the same verdict every time; a variant whose repeats
    differ is *flaky* and the oracle is not separating. Near-misses do not decide separation; each gets a
    note saying whether it came out as expected and, if not, whether the oracle looks too loose or too strict.

    Raises:
        ValueError: ``min_per_family`` below 1.
    """
    if min_per_family < 1:
        raise ValueError("min_per_family must be at least 1")
    groups: dict[str, list[OracleRun]] = {}
    for run in runs:
        if run.variant is not None:
            groups.setdefault(run.variant.name, []).append(run)
    flaky = [name for name, group in groups.items() if len({r.verdict for r in group}) > 1]
    runs = [group[0] for name, group in groups.items() if name not in flaky] + [
        group[0] for name, group in groups.items() if name in flaky]
    intended_failing: list[str] = []
    shortcuts_passing: list[str] = []
    failing_to_build: list[str] = []
    caught_by: dict[str, CaughtBy] = {}
    shortcut_notes: list[str] = []
    near_miss_notes: list[str] = []
    errors: list[str] = []
    notes: list[str] = []
    kinds: set[str] = set()
    blocked = False
    for run in runs:
        if run.variant is None:
            continue
        name, kind = run.variant.name, run.variant.kind
        kinds.add(kind)
        if run.outcome == "error":
            errors.append(f"{name}: {run.apply_error or run.error or 'error'}")
            blocked = blocked or kind in ("intended", "shortcut")
        if kind == "intended" and run.outcome != "pass":
            intended_failing.append(name)
        elif kind == "shortcut":
            shortcut_notes.append(_shortcut_note(run))
            if run.outcome == "pass":
                shortcuts_passing.append(name)
            if run.caught_by is not None:
                caught_by[name] = run.caught_by
            if run.caught_by == "build":
                failing_to_build.append(name)
        elif kind == "near-miss":
            near_miss_notes.append(_near_miss_note(run))
    for kind in ("intended", "shortcut"):
        count = sum(1 for group in groups.values() if group[0].variant.kind == kind)
        if kind not in kinds:
            notes.append(f"no {kind} variant was run, so separation cannot be shown")
        elif count < min_per_family:
            notes.append(f"only {count} {kind} variant{'s' if count != 1 else ''} was run; stable separation needs "
                         f"{min_per_family} per family (add variants, or lower the minimum)")
    for name in flaky:
        tally: dict[str, int] = {}
        for run in groups[name]:
            tally[run.verdict] = tally.get(run.verdict, 0) + 1
        said = ", ".join(f"{verdict} x{count}" for verdict, count in tally.items())
        notes.append(f"{name}: flaky: {len(groups[name])} runs gave {said}; the oracle is not stable on it")
    separating = (not intended_failing and not shortcuts_passing and not failing_to_build and not blocked
                  and not notes)
    return Separation(
        separating=separating, intended_failing=intended_failing, shortcuts_passing=shortcuts_passing,
        shortcuts_failing_to_build=failing_to_build, caught_by=caught_by, shortcut_notes=shortcut_notes,
        near_miss_notes=near_miss_notes, errors=errors, flaky=flaky, notes=notes,
    )
