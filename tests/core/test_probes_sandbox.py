"""A probe's commands cannot write outside their workspace (bubblewrap), and say so when they are not confined."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchwright.core.errors import BenchwrightError
from benchwright.core.probes import sandbox as sandbox_module
from benchwright.core.probes.model import Probe
from benchwright.core.probes.pipeline import pipeline_from_dict
from benchwright.core.probes.runner import run_probe
from benchwright.core.probes.sandbox import SANDBOXED, UNAVAILABLE, bubblewrap, sandbox_mode

needs_bwrap = pytest.mark.skipif(bubblewrap() is None, reason="bubblewrap (bwrap) is missing or does not work here")


def _probe(tmp_path: Path, script: str) -> Probe:
    case, evaluator = tmp_path / "probe" / "case", tmp_path / "probe" / "evaluator"
    case.mkdir(parents=True)
    evaluator.mkdir(parents=True)
    (case / "main.py").write_text("print('hi')\n", encoding="utf-8")
    modules = [
        {"module_name": "customized_check", "name": "escape", "command": ["sh", "-c", script]},
        {"module_name": "customized_check", "name": "inside", "command": ["sh", "-c", "echo ok > {case_root}/ok.txt"
                                                                           " && echo t > $TMPDIR/t && cat {case_root}/ok.txt"]},
    ]
    return Probe(id="escape", title="escape", primary_dimension="D1", granularity="micro", steps=["Do it."],
                 case_dir=str(case), evaluator_dir=str(evaluator), pipeline=pipeline_from_dict({"modules": modules}))


@pytest.fixture
def no_bwrap(monkeypatch, tmp_path):
    """A PATH holding sh and the usual tools but no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "cat", "echo", "true", "mkdir"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert shutil.which("bwrap") is None
    return bin_dir


@needs_bwrap
@pytest.mark.parametrize("mode", ["auto", "required"])
def test_a_check_cannot_write_outside_its_workspace(tmp_path, monkeypatch, mode):
    monkeypatch.setenv("BENCHWRIGHT_PROBE_SANDBOX", mode)
    outside = tmp_path / "outside"
    outside.mkdir()
    probe = _probe(tmp_path, f"echo pwned > {outside}/pwned; echo also > {Path.cwd()}/pwned-{os.getpid()}")
    run = run_probe(probe, None)
    escape, inside = run.modules
    assert not (outside / "pwned").exists() and not (Path.cwd() / f"pwned-{os.getpid()}").exists()
    assert not escape.passed and "Read-only file system" in escape.log
    assert inside.passed and "ok" in inside.log, inside.reason
    assert run.sandbox == SANDBOXED


@needs_bwrap
def test_tmp_is_private_to_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_PROBE_SANDBOX", "auto")
    marker = Path("/tmp") / f"benchwright-sandbox-test-{os.getpid()}"
    try:
        probe = _probe(tmp_path, f"echo x > {marker} && ls /tmp")
        run = run_probe(probe, None)
        assert run.modules[0].passed, run.modules[0].log  # /tmp is writable, but a private tmpfs
        assert not marker.exists()
    finally:
        marker.unlink(missing_ok=True)


def test_without_bubblewrap_auto_runs_and_says_it_is_not_sandboxed(tmp_path, monkeypatch, no_bwrap):
    monkeypatch.setenv("BENCHWRIGHT_PROBE_SANDBOX", "auto")
    messages: list[str] = []
    run = run_probe(_probe(tmp_path, "true"), None, progress=messages.append)
    assert run.outcome == "pass", run.summary()
    assert run.sandbox == UNAVAILABLE == "not sandboxed (bubblewrap unavailable)"
    assert UNAVAILABLE in messages


def test_without_bubblewrap_required_cannot_run_here(tmp_path, monkeypatch, no_bwrap):
    monkeypatch.setenv("BENCHWRIGHT_PROBE_SANDBOX", "required")
    outside = tmp_path / "outside"
    outside.mkdir()
    run = run_probe(_probe(tmp_path, f"echo pwned > {outside}/pwned"), None)
    assert run.outcome == "error" and run.error == "cannot run here: missing bubblewrap"
    assert run.modules == [] and not (outside / "pwned").exists()


def test_off_runs_unconfined_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_PROBE_SANDBOX", "off")
    run = run_probe(_probe(tmp_path, "true"), None)
    assert run.outcome == "pass" and run.sandbox.startswith("not sandboxed")


def test_the_mode_comes_from_the_user_configuration_and_a_wrong_one_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHWRIGHT_PROBE_SANDBOX", raising=False)
    config = tmp_path / "config.toml"
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(config))
    assert sandbox_mode() == "auto"
    config.write_text('[probes]\nsandbox = "required"\n', encoding="utf-8")
    assert sandbox_mode() == "required"
    config.write_text('[probes]\nsandbox = "maybe"\n', encoding="utf-8")
    with pytest.raises(BenchwrightError, match=r"\[probes\] sandbox.*'maybe'.*auto, required, off"):
        sandbox_mode()
    assert sandbox_module.sandbox_for(tmp_path, "off").prefix == ()


def test_a_python_under_tmp_stays_readable_in_the_sandbox(monkeypatch, tmp_path):
    """A virtual environment in a checkout under /tmp (a fresh CI clone) is bound back read-only after /tmp is
    made private: without it every Python check of a sandboxed run failed to start."""
    import sys

    from benchwright.core.probes import sandbox

    venv = tmp_path / "clone" / ".venv"
    venv.mkdir(parents=True)
    monkeypatch.setattr(sys, "prefix", str(venv))
    options = sandbox._options(tmp_path / "ws")
    kept = options.index("--ro-bind", options.index("/var/tmp"))
    assert options[kept + 1:kept + 3] == [str(venv.resolve()), str(venv.resolve())]
    assert options.index(str(venv.resolve())) < options.index(str(tmp_path / "ws"))
