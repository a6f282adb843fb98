"""Model attempts (core/probes/attempt.py): tasks handed over in order, each step on the tree the previous one
produced, every tree kept, the final tree a patch the oracle runs on (NITR, Step 4)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.core.probes import read_probe, read_probe_folder, run_probe, sample_probe_dirs
from benchwright.core.probes.attempt import AttemptError, agent_argv, attempt_variant, make_attempt

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to diff the trees")

PIPELINE = {"case_root": "case", "build_dir": "build", "modules": [
    {"module_name": "required_paths", "name": "layout", "root": "case_root", "paths": ["app/notes.txt"]}]}

# An agent that records what it found (so each step proves it got the previous step's tree), appends the task's
# first line to app/notes.txt, and at step 2 deletes app/old.txt.
AGENT = """import os, sys
task, tree = sys.argv[1], sys.argv[2]
notes = os.path.join(tree, "app", "notes.txt")
seen = open(notes).read().count("\\n")
with open(notes, "a") as f:
    f.write(open(task).read().splitlines()[0] + f" (saw {seen} lines, step {os.environ['BENCHWRIGHT_STEP']})\\n")
if os.environ["BENCHWRIGHT_STEP"] == "2":
    os.remove(os.path.join(tree, "app", "old.txt"))
if os.path.exists(os.path.join(tree, "FAIL_AT_" + os.environ["BENCHWRIGHT_STEP"])):
    sys.exit(3)
"""


def _multi_step_probe(tmp_path: Path, steps: int = 3):
    case = tmp_path / "probe" / "case"
    (case / "app").mkdir(parents=True)
    (case / "app" / "notes.txt").write_text("starter\n")
    (case / "app" / "old.txt").write_text("to be removed\n")
    (case / "SPEC.md").write_text("# Notes\nPrimary dimension: D1\n")
    for k in range(1, steps + 1):
        (case / f"TASK{k}.md").write_text(f"task {k}\nDo step {k}.\n")
    evaluator = tmp_path / "probe" / "evaluator"
    evaluator.mkdir()
    (evaluator / "pipeline.json").write_text(json.dumps(PIPELINE))
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    return read_probe(case, evaluator), f"{sys.executable} {agent}"


def test_each_step_gets_the_tree_the_previous_one_produced_and_every_tree_is_kept(tmp_path):
    probe, agent = _multi_step_probe(tmp_path)
    assert probe.granularity == "multi-step"
    attempt = make_attempt(probe, model="Fake  Model", regime="agent", folder=tmp_path / "a", agent_command=agent)
    assert attempt.error is None and attempt.configuration == "Fake Model (Agt)"
    assert [(s.step, s.task, s.returncode) for s in attempt.steps] == [(1, "TASK1.md", 0), (2, "TASK2.md", 0),
                                                                       (3, "TASK3.md", 0)]
    folder = tmp_path / "a"
    lines = [(folder / f"step-{k}" / "app" / "notes.txt").read_text().splitlines() for k in (1, 2, 3)]
    assert lines[0] == ["starter", "task 1 (saw 1 lines, step 1)"]
    assert lines[2] == ["starter", "task 1 (saw 1 lines, step 1)", "task 2 (saw 2 lines, step 2)",
                        "task 3 (saw 3 lines, step 3)"]
    assert (folder / "step-1" / "app" / "old.txt").exists() and not (folder / "step-2" / "app" / "old.txt").exists()
    assert not (folder / "starter" / "SPEC.md").exists() and (folder / "tasks" / "TASK3.md").is_file()
    # the final patch turns a copy of the starter into the last tree, deletion included
    check = tmp_path / "check"
    shutil.copytree(probe.case_dir, check)
    subprocess.run(["git", "apply", "-p1", str(folder / "final.diff")], cwd=check, check=True)
    assert (check / "app" / "notes.txt").read_text() == (folder / "step-3" / "app" / "notes.txt").read_text()
    assert not (check / "app" / "old.txt").exists()
    saved = json.loads((folder / "attempt.json").read_text())
    assert saved["configuration"] == "Fake Model (Agt)" and len(saved["steps"]) == 3
    run = run_probe(probe, attempt_variant(attempt))
    assert run.outcome == "pass" and run.variant.name == "attempt: Fake Model (Agt)"


def test_a_failing_step_ends_the_attempt_and_keeps_the_trees(tmp_path):
    probe, agent = _multi_step_probe(tmp_path)
    (Path(probe.case_dir) / "FAIL_AT_2").write_text("")
    attempt = make_attempt(probe, model="M", regime="api", folder=tmp_path / "a", agent_command=agent)
    assert [s.returncode for s in attempt.steps] == [0, 3]
    assert attempt.patch is None and "step 2 (TASK2.md): the agent command failed: exit code 3" in attempt.error
    assert (tmp_path / "a" / "step-2").is_dir() and not (tmp_path / "a" / "step-3").exists()
    with pytest.raises(AttemptError, match="stopped early"):
        attempt_variant(attempt)


def test_a_submission_is_the_final_tree(tmp_path):
    probe, _ = _multi_step_probe(tmp_path)
    sub = tmp_path / "submitted"
    shutil.copytree(probe.case_dir, sub)
    (sub / "app" / "notes.txt").write_text("done\n")
    attempt = make_attempt(probe, model="M", regime="api", folder=tmp_path / "a", submission=sub)
    assert [s.step for s in attempt.steps] == [3] and attempt.error is None
    assert "+done" in (tmp_path / "a" / "final.diff").read_text()


def test_an_attempt_on_the_demo_probe_is_judged_by_its_oracle(tmp_path):
    folder = sample_probe_dirs()[1]  # token_clock (Python): the intended patch passes, the shortcut fails
    probe, _ = read_probe_folder(folder)
    apply = tmp_path / "apply.py"  # an "agent" that writes a known variant's edit into the tree
    apply.write_text("import subprocess, sys\nsubprocess.run(['git', 'apply', sys.argv[1]], cwd=sys.argv[3], check=True)\n")
    outcomes = {}
    for kind in ("intended", "shortcut"):
        agent = f"{sys.executable} {apply} {folder / 'variants' / kind / 'patch.diff'} {{task}} {{tree}}"
        attempt = make_attempt(probe, model=kind, regime="api", folder=tmp_path / kind, agent_command=agent)
        assert attempt.error is None, attempt.error
        outcomes[kind] = run_probe(probe, attempt_variant(attempt), timeout_s=120).outcome
    assert outcomes == {"intended": "pass", "shortcut": "fail"}


def test_an_attempt_that_changes_nothing_is_the_starter(tmp_path):
    probe, _ = _multi_step_probe(tmp_path, steps=2)
    attempt = make_attempt(probe, model="M", regime="api", folder=tmp_path / "a", agent_command="true")
    assert attempt.error is None and attempt_variant(attempt).patch is None


def test_agent_command_placeholders(tmp_path):
    task, tree = tmp_path / "TASK1.md", tmp_path / "t"
    assert agent_argv("agent --task {task} --in {tree} -n {step}/{steps}", task=task, tree=tree, step=1, steps=3) == [
        "agent", "--task", str(task), "--in", str(tree), "-n", "1/3"]
    assert agent_argv("agent '{{x}}'", task=task, tree=tree, step=1, steps=1) == ["agent", "{x}", str(task), str(tree)]
    with pytest.raises(AttemptError, match=r"unknown placeholder \{model\}"):
        agent_argv("agent {model}", task=task, tree=tree, step=1, steps=1)
    with pytest.raises(AttemptError, match="does not parse"):
        agent_argv("agent 'open", task=task, tree=tree, step=1, steps=1)


def test_bad_requests_are_refused_before_anything_is_written(tmp_path):
    probe, agent = _multi_step_probe(tmp_path)
    with pytest.raises(AttemptError, match="either an agent command or a submission"):
        make_attempt(probe, model="M", regime="api", folder=tmp_path / "a")
    with pytest.raises(AttemptError, match="unknown placeholder"):
        make_attempt(probe, model="M", regime="api", folder=tmp_path / "a", agent_command="x {nope}")
    assert not (tmp_path / "a").exists()
    (tmp_path / "a").mkdir()
    with pytest.raises(AttemptError, match="already exists"):
        make_attempt(probe, model="M", regime="api", folder=tmp_path / "a", agent_command=agent)
    (Path(probe.case_dir) / "TASK2.md").unlink()
    with pytest.raises(AttemptError, match=r"TASK2\.md missing"):
        make_attempt(probe, model="M", regime="api", folder=tmp_path / "b", agent_command=agent)


def test_an_interrupted_step_is_said_in_attempt_json(tmp_path, monkeypatch):
    from benchwright.core.probes import runner

    probe, agent = _multi_step_probe(tmp_path)

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_run_command", interrupted)
    with pytest.raises(KeyboardInterrupt):
        make_attempt(probe, model="M", regime="api", folder=tmp_path / "a", agent_command=agent)
    saved = json.loads((tmp_path / "a" / "attempt.json").read_text())
    assert saved["error"] == "step 1 (TASK1.md): interrupted" and (tmp_path / "a" / "step-1").is_dir()
