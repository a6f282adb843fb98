"""The oracle runner: the demo probes' matrix, timeouts, cancellation, refused variants, secrets,
multi-step probes, separation."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from benchwright.core.probes import (
    OracleRun,
    Probe,
    Variant,
    chain_for,
    probe_fingerprint,
    read_probe_folder,
    read_variants,
    run_all,
    run_probe,
    sample_probe_dirs,
    scaffold_probe,
    separation,
)
from benchwright.core.probes.importer import unified_diff
from benchwright.core.probes.pipeline import pipeline_from_dict
from benchwright.core.probes.runner import (
    LOG_HEAD_BYTES,
    LOG_TAIL_BYTES,
    ModuleResult,
    final_variants,
    supervision_available,
)

HAS_CXX = shutil.which("cmake") is not None and any(shutil.which(c) for c in ("c++", "g++", "clang++"))
needs_cxx = pytest.mark.skipif(not HAS_CXX, reason="cmake and a C++ compiler are needed to build the C++ probes")
needs_patch_tool = pytest.mark.skipif(
    shutil.which("git") is None and shutil.which("patch") is None, reason="neither git nor patch is installed"
)


def _sample(name: str):
    return read_probe_folder(next(d for d in sample_probe_dirs() if d.name == name))


def _probe(tmp_path: Path, modules: list[dict], files: dict[str, str] | None = None, tasks: list[str] | None = None) -> Probe:
    case = tmp_path / "probe" / "case"
    evaluator = tmp_path / "probe" / "evaluator"
    evaluator.mkdir(parents=True)
    case.mkdir(parents=True)
    for relative, text in (files or {"main.py": "print('hi')\n"}).items():
        (case / relative).parent.mkdir(parents=True, exist_ok=True)
        (case / relative).write_text(text, encoding="utf-8")
    tasks = tasks or ["Do the thing."]
    return Probe(
        id="crafted", title="crafted", primary_dimension="D1", granularity="micro" if len(tasks) == 1 else "multi-step",
        steps=tasks, case_dir=str(case), evaluator_dir=str(evaluator), pipeline=pipeline_from_dict({"modules": modules}),
    )


def _check(name: str, *command: str, **fields) -> dict:
    return {"module_name": "customized_check", "name": name, "command": list(command), **fields}


def _matrix(runs: list[OracleRun]) -> dict[str, tuple[str, bool | None]]:
    return {r.variant.name: (r.outcome, r.matches_expectation) for r in runs}


# -------------------------------------------------------------------------------------------------------------
# the demo probes, for real


@needs_cxx
@needs_patch_tool
@pytest.mark.slow
def test_cpp_demo_probe_separates_its_variants():
    probe, variants = _sample("pricing_strategy")
    before = probe_fingerprint(probe, variants)
    runs = run_all(probe, variants)
    assert _matrix(runs) == {"intended": ("pass", True), "intended-local-rule": ("pass", True),
                             "near-miss": ("fail", True), "shortcut": ("fail", True), "shortcut-ternary": ("fail", True)}
    by_name = {r.variant.name: r for r in runs}

    shortcut = by_name["shortcut"]
    functional = next(m for m in shortcut.modules if m.module_name == "unit_test")
    assert functional.passed, "the shortcut passes the functional tests"
    structure = next(m for m in shortcut.modules if m.name == "calculate() stays generic")
    assert not structure.passed
    assert [(m.rule_id, m.relative_path, m.line) for m in structure.matches] == [
        ("no-special-case-in-calculate", "src/calculator.cpp", 16)
    ]
    assert structure.reason == "rule no-special-case-in-calculate matched in src/calculator.cpp:16"

    near_miss = by_name["near-miss"]
    assert [m.name for m in near_miss.failed_modules] == ["existing rules unchanged", "new rule registered"]
    assert near_miss.rule_matches[0].relative_path == "src/rules/member_discount.cpp"

    verdict = separation(runs)  # two intended and two shortcut variants: stably separating by default
    assert verdict.separating and not verdict.errors
    assert verdict.near_miss_notes == [
        "near-miss: failed as expected (existing rules unchanged: rule member-discount-only matched in "
        "src/rules/member_discount.cpp:8)"
    ]
    assert probe_fingerprint(probe, variants) == before, "the run never writes into the probe folder"


@needs_cxx
@pytest.mark.slow
def test_cpp_demo_starter_builds_and_fails_the_functional_test():
    probe, _variants = _sample("pricing_strategy")
    run = run_probe(probe, None)
    assert run.outcome == "fail" and run.expected is None and run.matches_expectation is None
    functional = next(m for m in run.modules if m.module_name == "unit_test")
    assert "FAIL bulk order: expected 90.0000, got 100.0000" in functional.reason
    assert [m.passed for m in run.modules[:2]] == [True, True]  # configure and compile


@needs_patch_tool
def test_python_demo_probe_separates_its_variants():
    probe, variants = _sample("token_clock")
    runs = run_all(probe, variants)
    assert _matrix(runs) == {"intended": ("pass", True), "intended-now-param": ("pass", True),
                             "near-miss": ("fail", True), "shortcut": ("fail", True), "shortcut-datetime": ("fail", True)}
    shortcut = next(r for r in runs if r.variant.name == "shortcut")
    found = [(m.rule_id, m.relative_path, m.line) for m in shortcut.rule_matches if m.kind == "violation"]
    assert found == [("no-wall-clock-call", "tokens/issuer.py", 33)]
    near_miss = next(r for r in runs if r.variant.name == "near-miss")
    assert [(m.rule_id, m.kind) for m in near_miss.rule_matches] == [("uses-injected-clock", "missing")]
    assert separation(runs).separating  # two per family: the demo stays validated under the default


@needs_cxx
@needs_patch_tool
@pytest.mark.slow
def test_scaffolded_probe_intended_variant_passes(tmp_path):
    folder = scaffold_probe(tmp_path / "new-probe", "hello-probe")
    probe, variants = read_probe_folder(folder)
    assert probe.id == "hello-probe" and probe.primary_dimension == "D9" and probe.granularity == "micro"
    runs = run_all(probe, variants)
    assert _matrix(runs) == {"intended": ("pass", True), "intended-ternary": ("pass", True),
                             "shortcut": ("fail", True), "shortcut-puts": ("fail", True)}
    assert separation(runs).separating  # two per family, the default


# -------------------------------------------------------------------------------------------------------------
# safety


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    if not Path("/proc").is_dir():
        return True
    for entry in Path("/proc").iterdir():  # members that are only zombies waiting for init are dead
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                return True
    return False


def _wait_dead(check, *args, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not check(*args):
            return True
        time.sleep(0.05)
    return False


def test_timeout_kills_the_process_group(tmp_path):
    probe = _probe(tmp_path, [
        _check("slow", "sh", "-c", "echo PGID=$$; sleep 30 & echo CHILD=$!; wait"),
        _check("after", "true"),
    ])
    started = time.monotonic()
    run = run_probe(probe, None, timeout_s=1)
    assert time.monotonic() - started < 10
    slow, after = run.modules
    assert run.outcome == "fail" and not slow.passed and slow.timed_out and slow.returncode is None
    assert slow.reason.startswith("timeout")
    assert after.passed, "later modules still run after a timeout"
    pgid = int(re.search(r"PGID=(\d+)", slow.log).group(1))
    child = int(re.search(r"CHILD=(\d+)", slow.log).group(1))
    assert _wait_dead(_alive, child), "the background child was killed with its group"
    assert _wait_dead(_group_alive, pgid), "nothing of the process group is left"


@pytest.mark.skipif(not supervision_available(), reason="descendants are only tracked on Linux with /proc")
def test_a_detached_grandchild_dies_with_the_step_that_started_it(tmp_path):
    """setsid leaves the process group; the supervisor (a child subreaper) still kills it."""
    code = ("import subprocess, sys; p = subprocess.Popen(['setsid', 'sleep', '300']); print('CHILD=%d' % p.pid)")
    probe = _probe(tmp_path, [_check("detach", "{python}", "-c", code),
                              _check("detach and hang", "sh", "-c", "setsid sleep 300 & echo CHILD=$!; sleep 300",
                                     timeout_s=1)])
    run = run_probe(probe, None, timeout_s=30)
    finished, hung = run.modules
    assert finished.passed and hung.timed_out
    for module in (finished, hung):
        child = int(re.search(r"CHILD=(\d+)", module.log).group(1))
        assert _wait_dead(_alive, child), f"{module.name}: the setsid grandchild outlived its step"


def test_module_timeout_overrides_the_runner_default(tmp_path):
    probe = _probe(tmp_path, [_check("slow", "sleep", "30", timeout_s=0.5)])
    run = run_probe(probe, None, timeout_s=60)
    assert run.modules[0].timed_out and run.duration_s < 10


def test_api_keys_are_removed_and_home_points_into_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://example.invalid")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-test")
    monkeypatch.setenv("db_password", "hunter2")
    monkeypatch.setenv("MY_SECRET_THING", "x")
    monkeypatch.setenv("KEEP_ME", "kept")
    code = "import os, json; print(json.dumps(dict(os.environ)))"
    probe = _probe(tmp_path, [_check("env", "{python}", "-c", code, env={"OPENAI_API_KEY": "again", "MODE": "{case_root}"})])
    run = run_probe(probe, None)
    assert run.outcome == "pass", run.summary()
    import json

    env = json.loads(run.modules[0].log.split("\n", 1)[1])
    for name in ("OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "GITHUB_TOKEN", "db_password", "MY_SECRET_THING"):
        assert name not in env
    assert "sk-test" not in run.modules[0].log and "hunter2" not in run.modules[0].log
    assert env["KEEP_ME"] == "kept" and env["PATH"] == os.environ["PATH"]
    workspace = Path(env["MODE"]).parent.parent
    assert workspace.name.startswith("benchwright-probe-")
    assert Path(env["HOME"]).is_relative_to(workspace) and Path(env["TMPDIR"]).is_relative_to(workspace)
    assert not workspace.exists(), "the workspace is removed after the run"


def test_workspace_is_removed_even_when_a_module_fails_and_kept_on_request(tmp_path):
    probe = _probe(tmp_path, [_check("where", "sh", "-c", "pwd; exit 3")])
    run = run_probe(probe, None)
    assert run.modules[0].reason == f"exit code 3: {run.modules[0].log.splitlines()[1]}"
    assert not Path(run.modules[0].log.splitlines()[1]).exists()
    kept = run_probe(probe, None, keep_workspace=True)
    try:
        assert kept.workspace and Path(kept.workspace, "repo", "case", "main.py").exists()
    finally:
        shutil.rmtree(kept.workspace)


def test_spec_is_not_copied_into_the_workspace(tmp_path):
    probe = _probe(tmp_path, [_check("no spec", "test", "!", "-e", "{case_root}/SPEC.md")],
                   files={"SPEC.md": "Primary dimension: D1\n", "a.py": "x = 1\n"})
    assert run_probe(probe, None).outcome == "pass"


def test_cancellation_kills_the_running_command(tmp_path):
    probe = _probe(tmp_path, [_check("slow", "sleep", "30"), _check("never", "true")])
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    messages: list[str] = []
    run = run_probe(probe, Variant(name="v", kind="intended", expected="pass"), timeout_s=60, cancel=cancel,
                    progress=messages.append)
    assert run.cancelled and run.outcome == "error" and run.matches_expectation is False
    assert [m.name for m in run.modules] == ["slow"] and run.modules[0].reason == "cancelled"
    assert run.duration_s < 10
    assert "[1/2] customized_check slow" in messages
    already = run_probe(probe, None, cancel=cancel)
    assert already.cancelled and already.modules == []


def test_patch_that_does_not_apply_is_an_error_outcome(tmp_path):
    probe = _probe(tmp_path, [_check("ok", "true")])
    patch = tmp_path / "stale.diff"
    patch.write_text(unified_diff("main.py", "print('something else')\n", "print('x')\n"), encoding="utf-8")
    run = run_probe(probe, Variant(name="stale", kind="intended", expected="pass", patch=str(patch)))
    assert run.outcome == "error" and run.modules == [] and run.matches_expectation is False
    assert run.apply_error.startswith("variant stale: the patch does not apply")
    assert not separation([run], min_per_family=1).separating


@pytest.mark.parametrize("how", ["patch", "overlay-link", "case-link"])
def test_variant_targeting_outside_is_refused_and_writes_nothing(tmp_path, how):
    sentinel = tmp_path / "outside" / "sentinel.txt"
    sentinel.parent.mkdir()
    files = {"main.py": "x = 1\n"}
    probe = _probe(tmp_path, [_check("ok", "true")], files=files)
    variant_dir = tmp_path / "variant"
    variant_dir.mkdir()
    if how == "patch":
        (variant_dir / "patch.diff").write_text(unified_diff("../" * 40 + str(sentinel).lstrip("/"), None, "pwned\n"))
        variant = Variant(name="evil", kind="shortcut", expected="fail", patch=str(variant_dir / "patch.diff"))
    elif how == "overlay-link":
        (variant_dir / "tree").mkdir()
        (variant_dir / "tree" / "escape").symlink_to(sentinel.parent, target_is_directory=True)
        variant = Variant(name="evil", kind="shortcut", expected="fail", tree=str(variant_dir / "tree"))
    else:
        Path(probe.case_dir, "out").symlink_to(sentinel.parent, target_is_directory=True)
        (variant_dir / "tree" / "out").mkdir(parents=True)
        (variant_dir / "tree" / "out" / "sentinel.txt").write_text("pwned\n")
        variant = Variant(name="evil", kind="shortcut", expected="fail", tree=str(variant_dir / "tree"))
    run = run_probe(probe, variant)
    assert run.outcome == "error" and "refused" in run.apply_error
    assert not sentinel.exists()
    assert list(sentinel.parent.iterdir()) == []


def test_command_problems_are_failures_not_crashes(tmp_path):
    probe = _probe(tmp_path, [
        _check("missing tool", "no-such-tool-benchwright"),
        _check("escaping cwd", "true", cwd="{repo_root}/../.."),
        {"module_name": "unit_test", "name": "empty filter", "command": ["{python}", "-c", "print('No tests were found!!!')"]},
        _check("chatty", "{python}", "-c", "import sys; sys.stdout.write('x' * 500000); print('END')"),
    ])
    run = run_probe(probe, None)
    missing, cwd, empty, chatty = run.modules
    assert missing.reason == "cannot run here: missing no-such-tool-benchwright" and not missing.passed
    assert run.outcome == "error" and run.error == "cannot run here: missing no-such-tool-benchwright"
    assert cwd.reason.startswith("bad working directory") and "outside the workspace" in cwd.reason
    assert not empty.passed and empty.reason.startswith("no tests were run")
    assert chatty.passed and len(chatty.log) < LOG_HEAD_BYTES + LOG_TAIL_BYTES + 1000
    assert "bytes of output left out" in chatty.log and chatty.log.rstrip().endswith("END")


# -------------------------------------------------------------------------------------------------------------
# multi-step probes


CALC = "def add(a, b):\n    return a + b\n"
CALC_SUB = CALC + "\n\ndef sub(a, b):\n    return a - b\n"
CALC_MUL = CALC_SUB + "\n\ndef mul(a, b):\n    return a * b\n"
CALC_EVAL = CALC_SUB + "\n\ndef mul(a, b):\n    return eval(f'{a} * {b}')\n"


@pytest.fixture
def multi_step(tmp_path) -> tuple[Probe, list[Variant]]:
    root = tmp_path / "calc"
    files = {
        "case/calc.py": CALC, "case/TASK1.md": "Add sub(a, b).\n", "case/TASK2.md": "Add mul(a, b).\n",
        "case/SPEC.md": "# Calculator grows\nPrimary dimension: D1\n",
        "evaluator/pipeline.json": """{"modules": [
          {"module_name": "customized_check", "name": "functional", "command": ["{python}", "-c",
           "import sys; sys.path.insert(0, sys.argv[1]); import calc; assert calc.sub(5, 2) == 3 and calc.mul(2, 3) == 6",
           "{case_root}"]},
          {"module_name": "source_analysis", "name": "no eval", "scan_roots": ["."], "suffixes": [".py"],
           "rules": [{"id": "no-eval", "any_patterns": ["\\\\beval\\\\("]}]}]}""",
        "variants/step1/variant.json": '{"kind": "intended", "expected": "fail", "step": 1}',
        "variants/step1/patch.diff": unified_diff("calc.py", CALC, CALC_SUB),
        "variants/step2/variant.json": '{"kind": "intended", "expected": "pass", "step": 2}',
        "variants/step2/patch.diff": unified_diff("calc.py", CALC_SUB, CALC_MUL),
        "variants/step2-eval/variant.json": '{"kind": "shortcut", "step": 2, "after": ["step1"]}',
        "variants/step2-eval/patch.diff": unified_diff("calc.py", CALC_SUB, CALC_EVAL),
        "variants/whole/variant.json": '{"kind": "intended"}',
        "variants/whole/tree/calc.py": CALC_MUL,
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return read_probe_folder(root)


@needs_patch_tool
def test_multi_step_variants_are_applied_in_order(multi_step):
    probe, variants = multi_step
    assert probe.granularity == "multi-step" and probe.steps == ["Add sub(a, b).\n", "Add mul(a, b).\n"]
    by_name = {v.name: v for v in variants}
    assert [v.name for v in final_variants(probe, variants)] == ["step2", "step2-eval", "whole"]
    assert [v.name for v in chain_for(by_name["step2"], variants)] == ["step1"]
    assert chain_for(by_name["whole"], variants) == []

    messages: list[str] = []
    runs = run_all(probe, variants, progress=messages.append)
    assert _matrix(runs) == {"step2": ("pass", True), "step2-eval": ("fail", True), "whole": ("pass", True)}
    step2 = next(r for r in runs if r.variant.name == "step2")
    assert step2.chain == ["step1"]
    assert messages.index("applying step1") < messages.index("applying step2")
    shortcut = next(r for r in runs if r.variant.name == "step2-eval")
    assert [(m.rule_id, m.relative_path, m.line) for m in shortcut.rule_matches] == [("no-eval", "calc.py", 10)]
    assert separation(runs, min_per_family=1).separating

    alone = run_probe(probe, by_name["step2"])
    assert alone.outcome == "error" and "does not apply" in alone.apply_error, "step 2 needs step 1 first"
    first_only = run_probe(probe, by_name["step1"])
    assert first_only.outcome == "fail" and first_only.matches_expectation


def test_chain_errors_are_error_runs(multi_step):
    probe, variants = multi_step
    extra = Variant(name="second-intended-1", kind="intended", expected="pass", step=1)
    orphan = Variant(name="orphan", kind="shortcut", expected="fail", step=2)
    step1 = next(v for v in variants if v.name == "step1")
    runs = run_all(probe, [step1, extra, orphan])
    assert [r.variant.name for r in runs] == ["orphan"]
    assert runs[0].outcome == "error" and "there are 2" in runs[0].apply_error and runs[0].modules == []
    unknown = Variant(name="u", kind="shortcut", expected="fail", step=2, after=["nope"])
    assert "unknown variants: nope" in run_all(probe, [unknown])[0].apply_error


# -------------------------------------------------------------------------------------------------------------
# separation verdicts


def _run(name: str, kind: str, expected: str, outcome: str, reason: str = "rule r matched in a.cpp:1") -> OracleRun:
    variant = Variant(name=name, kind=kind, expected=expected)
    modules = [] if outcome != "fail" else [ModuleResult(name="structure", module_name="source_analysis", passed=False, reason=reason)]
    return OracleRun(
        probe_id="p", variant=variant, outcome=outcome, expected=expected,
        matches_expectation=outcome == expected, modules=modules,
        apply_error="the patch does not apply" if outcome == "error" else None,
    )


def test_separation_verdicts():
    good = [_run("i", "intended", "pass", "pass"), _run("s", "shortcut", "fail", "fail")]
    assert separation(good, min_per_family=1).separating
    leaky = separation([*good, _run("s2", "shortcut", "fail", "pass")], min_per_family=1)
    assert not leaky.separating and leaky.shortcuts_passing == ["s2"]
    strict = separation([*good, _run("i2", "intended", "pass", "fail")], min_per_family=1)
    assert not strict.separating and strict.intended_failing == ["i2"]
    loose = separation([*good, _run("n", "near-miss", "fail", "pass")], min_per_family=1)
    assert loose.separating and loose.near_miss_notes == ["n: expected to fail but passed; the oracle may be too loose"]
    too_strict = separation([*good, _run("n", "near-miss", "pass", "fail")], min_per_family=1)
    assert too_strict.near_miss_notes == [
        "n: expected to pass but failed (structure: rule r matched in a.cpp:1); the oracle may be too strict"
    ]
    broken = separation([good[0], _run("s", "shortcut", "fail", "error")], min_per_family=1)
    assert not broken.separating and broken.errors == ["s: the patch does not apply"]
    only_intended = separation([good[0]], min_per_family=1)
    assert not only_intended.separating and only_intended.notes == ["no shortcut variant was run, so separation cannot be shown"]
    starter = OracleRun(probe_id="p", variant=None, outcome="fail", expected=None, matches_expectation=None)
    assert separation([*good, starter], min_per_family=1).separating


def test_repeats_that_differ_make_the_oracle_flaky_and_two_variants_per_family_by_default():
    good = [_run("i", "intended", "pass", "pass"), _run("s", "shortcut", "fail", "fail")]
    one_each = separation(good)  # NITR: "stably separated the intended solution family"
    assert not one_each.separating and one_each.notes == [
        "only 1 intended variant was run; stable separation needs 2 per family (add variants, or lower the minimum)",
        "only 1 shortcut variant was run; stable separation needs 2 per family (add variants, or lower the minimum)",
    ]
    family = [*good, _run("i2", "intended", "pass", "pass"), _run("s2", "shortcut", "fail", "fail")]
    assert separation(family).separating
    repeated = [*family, *family]  # the same verdicts again: stable
    assert separation(repeated).separating and separation(repeated).flaky == []
    flaky = separation([*family, _run("s2", "shortcut", "fail", "pass"), _run("s2", "shortcut", "fail", "fail")])
    assert not flaky.separating and flaky.flaky == ["s2"]
    assert flaky.notes == ["s2: flaky: 3 runs gave fail x2, pass x1; the oracle is not stable on it"]
    with pytest.raises(ValueError):
        separation(good, min_per_family=0)


def test_sample_variants_read_back():
    for folder in sample_probe_dirs():
        kinds = sorted(v.kind for v in read_variants(folder))
        assert kinds == ["intended", "intended", "near-miss", "shortcut", "shortcut"]  # two per family


def test_run_uses_a_fresh_temporary_workspace(tmp_path):
    probe = _probe(tmp_path, [_check("where", "{python}", "-c", "import os; print(os.getcwd())")])
    first, second = run_probe(probe, None), run_probe(probe, None)
    cwd1, cwd2 = (Path(r.modules[0].log.splitlines()[1]) for r in (first, second))
    assert cwd1 != cwd2 and cwd1.name == "repo"
    assert cwd1.is_relative_to(Path(tempfile.gettempdir()).resolve())
    assert sys.executable in first.modules[0].command


def test_workspaces_of_a_process_that_died_are_swept_by_the_next_one(tmp_path):
    """A ``probe run`` killed with kill -9 leaves its workspace (no handler runs); the next workspace made in the
    same temp folder removes it. A live owner's workspace, and one without an owner file, are kept."""
    import subprocess
    import sys

    from benchwright.core.probes._workspace import (
        OWNER_FILE,
        WORKSPACE_PREFIX,
        _process_identity,
        sweep_orphaned_workspaces,
    )

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        folders = {}
        for name, owner in (("dead", str(dead.pid)), ("live", _process_identity(live.pid)),
                            ("reused", f"{live.pid} 1"), ("unowned", None)):
            folders[name] = tmp_path / f"{WORKSPACE_PREFIX}{name}"
            (folders[name] / "repo").mkdir(parents=True)
            if owner is not None:
                (folders[name] / OWNER_FILE).write_text(owner, encoding="utf-8")
        (tmp_path / "someone-else").mkdir()
        removed = sweep_orphaned_workspaces(tmp_path)
        assert sorted(p.name for p in removed) == sorted(folders[n].name for n in ("dead", "reused"))
        assert folders["live"].exists() and folders["unowned"].exists() and (tmp_path / "someone-else").exists()
        assert not folders["dead"].exists() and not folders["reused"].exists()
    finally:
        live.kill()
        live.wait()
