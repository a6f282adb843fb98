"""SIGTERM and SIGHUP act like Ctrl+C for every command (tui/signals.py), and a probe step leaves nothing behind:
``benchwright probes run`` as a user runs it (a subprocess), on a probe whose command detaches a grandchild with
``setsid``, interrupted by SIGTERM or SIGHUP, or stopped by its own timeout."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from benchwright.core.probes.runner import supervision_available
from benchwright.db import Store
from benchwright.tui.cli.root import _ProjectGroup
from benchwright.tui.services.probes import import_probe
from benchwright.tui.signals import interrupt_exit_code, received_signal, signals_as_interrupt

BENCHWRIGHT = Path(sys.executable).parent / "benchwright"

SPAWN = """\
import os, subprocess, sys, time
from pathlib import Path
grandchild = subprocess.Popen(["setsid", "sleep", "300"])  # its own session: outside the step's process group
Path(sys.argv[1]).write_text(json.dumps({"step": os.getpid(), "grandchild": grandchild.pid, "cwd": os.getcwd()}))
time.sleep(300)
""".replace("import os,", "import json, os,")


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("BENCHWRIGHT_DB",)}
    env.update({"BENCHWRIGHT_CONFIG": str(tmp_path / "none.toml"), "BENCHWRIGHT_ANNOTATOR": "tester",
                "TMPDIR": str(tmp_path / "tmp")})  # the probe workspace is made here, so it can be checked
    # the probe's step writes its pids to tmp_path, outside its workspace, which the sandbox forbids; a sandboxed
    # step's grandchildren die with it too (tests/core/test_probes_runner.py runs under the sandbox where it works)
    env["BENCHWRIGHT_PROBE_SANDBOX"] = "off"
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return env


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.fixture
def sleeping_probe(tmp_path):
    """A project with probe ``sleeper``: one customized_check step that detaches a grandchild and sleeps; the
    pids and the step's cwd land in ``pids.json``."""

    def make(timeout_s: float | None = None) -> tuple[Path, Path, dict]:
        case, evaluator = tmp_path / "probe" / "case", tmp_path / "probe" / "evaluator"
        case.mkdir(parents=True)
        evaluator.mkdir(parents=True)
        (case / "main.py").write_text("x = 1\n")
        (case / "TASK.md").write_text("Do nothing.\n")
        (case / "SPEC.md").write_text("# Sleeper\nId: sleeper\nPrimary dimension: D9\n")
        (evaluator / "spawn.py").write_text(SPAWN)
        pid_file = tmp_path / "pids.json"
        module = {"module_name": "customized_check", "name": "spawn",
                  "command": ["{python}", "{evaluator_root}/spawn.py", str(pid_file)]}
        if timeout_s is not None:
            module["timeout_s"] = timeout_s
        (evaluator / "pipeline.json").write_text(json.dumps({"modules": [module]}))
        db = tmp_path / "p.db"
        with Store.open(db, create=True) as store:
            import_probe(store, case, evaluator, by="setup")
        return db, pid_file, _env(tmp_path)

    return make


def _workspaces(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "tmp").glob("benchwright-probe-*"))


@pytest.mark.slow
@pytest.mark.skipif(not BENCHWRIGHT.exists(), reason="the benchwright script is not installed in this venv")
@pytest.mark.skipif(not supervision_available(), reason="descendants are only tracked on Linux with /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_probe_run_interrupted_by_a_signal_leaves_nothing_behind(sleeping_probe, tmp_path, signum):
    db, pid_file, env = sleeping_probe()
    proc = subprocess.Popen([str(BENCHWRIGHT), "--db", str(db), "probes", "run", "sleeper"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait(lambda: pid_file.exists() and pid_file.read_text().endswith("}"), 30), "the step never started"
        pids = json.loads(pid_file.read_text())
        assert _alive(pids["grandchild"]) and _workspaces(tmp_path)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, out + err
    assert f"interrupted ({signal.Signals(signum).name})" in err and "Traceback" not in err
    assert _wait(lambda: not _alive(pids["step"]) and not _alive(pids["grandchild"]), 5), \
        "a process of the probe outlived the run"
    assert not Path(pids["cwd"]).exists() and _workspaces(tmp_path) == [], "the workspace was left behind"
    with Store.open(db) as store:
        assert store.latest_runs("sleeper") == {}, "an interrupted run is not recorded (least of all as passed)"


@pytest.mark.slow
@pytest.mark.skipif(not BENCHWRIGHT.exists(), reason="the benchwright script is not installed in this venv")
@pytest.mark.skipif(not supervision_available(), reason="descendants are only tracked on Linux with /proc")
def test_probe_step_timeout_kills_a_detached_grandchild(sleeping_probe, tmp_path):
    db, pid_file, env = sleeping_probe(timeout_s=2)
    r = subprocess.run([str(BENCHWRIGHT), "--db", str(db), "probes", "run", "sleeper"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "timeout: still running after 2 s" in r.stdout
    pids = json.loads(pid_file.read_text())
    assert _wait(lambda: not _alive(pids["step"]) and not _alive(pids["grandchild"]), 5)
    assert not Path(pids["cwd"]).exists() and _workspaces(tmp_path) == []
    with Store.open(db) as store:
        run = store.latest_runs("sleeper")[None]
    assert run["outcome"] == "fail" and run["run"]["modules"][0]["timed_out"]


# ---------------------------------------------------------------------------------------------- the mechanism


def _group_with(command) -> click.Group:
    group = _ProjectGroup(name="benchwright")
    group.add_command(click.Command("long", callback=command))
    return group


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_every_command_of_the_group_exits_128_plus_the_signal_after_its_cleanup(signum):
    cleaned: list[str] = []

    def long() -> None:
        try:
            os.kill(os.getpid(), signum)
            time.sleep(10)
            cleaned.append("not interrupted")
        finally:
            cleaned.append("cleanup ran")

    started = time.monotonic()
    result = CliRunner().invoke(_group_with(long), ["long"])
    assert time.monotonic() - started < 5
    assert cleaned == ["cleanup ran"]
    assert result.exit_code == 128 + signum
    assert f"interrupted ({signal.Signals(signum).name})" in result.output
    assert signal.getsignal(signum) is signal.SIG_DFL, "the previous handler is back after the command"


def test_ctrl_c_exits_130_not_click_s_aborted_1():
    def long() -> None:
        raise KeyboardInterrupt

    result = CliRunner().invoke(_group_with(long), ["long"])
    assert result.exit_code == 130 and "interrupted (Ctrl+C)" in result.output and "Aborted" not in result.output


def test_inside_asyncio_run_a_sigterm_cancels_the_main_task_like_ctrl_c():
    steps: list[str] = []

    async def job() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            steps.append("cancelled")
            raise
        finally:
            await asyncio.sleep(0)  # awaiting in cleanup still works: the loop is alive
            steps.append("finally")

    with signals_as_interrupt(), pytest.raises(KeyboardInterrupt):
        asyncio.run(job())
    assert steps == ["cancelled", "finally"]
    assert received_signal() == signal.SIGTERM and interrupt_exit_code() == 143


def test_a_second_sigterm_does_not_break_the_cleanup_of_the_first():
    steps: list[str] = []
    with signals_as_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except KeyboardInterrupt:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)
            steps.append("cleanup finished")
    assert steps == ["cleanup finished"]


def test_a_sighup_ignored_at_start_stays_ignored():
    code = ("import os, signal, time\n"
            "from benchwright.tui.signals import signals_as_interrupt\n"
            "with signals_as_interrupt():\n"
            "    os.kill(os.getpid(), signal.SIGHUP); time.sleep(0.2)\n"
            "print('survived')\n")
    r = subprocess.run(["nohup", sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                       cwd=tempfile.gettempdir())
    assert r.returncode == 0 and "survived" in (r.stdout + r.stderr)


@pytest.mark.slow
def test_generate_stopped_by_sigterm_keeps_what_finished_and_exits_143(tmp_path):
    """The asyncio path end to end: SIGTERM cancels the job like Ctrl+C, finished pairs stay, the rerun continues."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from llm_server import LLMServer
    from test_generate_resume import done_pairs, env_for, make_project, write_config

    db = make_project(tmp_path, 8)
    env = env_for(tmp_path)
    with LLMServer(delay_s=0.4) as server:
        write_config(db, server, concurrency=1)
        proc = subprocess.Popen([str(BENCHWRIGHT), "--db", str(db), "curation", "run", "checklist"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert _wait(lambda: proc.poll() is not None or _done(done_pairs, db) >= 2, 60)
            assert proc.poll() is None, "the run ended before the signal"
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 143, out + err
        assert "cancelled" in out and "Traceback" not in err
        finished = done_pairs(db)
        assert 2 <= len(finished) < 8
        r = subprocess.run([str(BENCHWRIGHT), "--db", str(db), "curation", "run", "checklist"], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and f"checklist: {8 - len(finished)} ok" in r.stdout, r.stdout + r.stderr


def _done(done_pairs, db) -> int:
    try:
        return len(done_pairs(db))
    except Exception:  # the file is being set up
        return 0


def test_sigterm_with_sigint_ignored_never_interrupts_a_task_between_its_awaits():
    """A background job of a script starts with SIGINT ignored, so asyncio.run installs no Ctrl+C handler; a
    SIGTERM then must not raise inside a task's synchronous code (a reply that arrived would be lost unrecorded),
    only at its next await, like Ctrl+C."""
    steps: list[str] = []

    async def job() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)  # synchronous work after the signal (parsing and recording a reply)
            steps.append("recorded")
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            steps.append("cancelled")
            raise
        finally:
            steps.append("finally")

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with signals_as_interrupt(), pytest.raises(KeyboardInterrupt):
            asyncio.run(job())
    finally:
        signal.signal(signal.SIGINT, previous)
    assert steps == ["recorded", "cancelled", "finally"]
    assert received_signal() == signal.SIGTERM and interrupt_exit_code() == 143
