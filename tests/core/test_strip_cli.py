"""``benchwright repos strip`` and ``repos manifest``: exit codes and messages, the registered copy, all or
nothing on failure, refusals; and the real flask 3.1.1 source stripped with every file still compiling."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask_source import DATA, flask_tree_or_skip

from benchwright.core.evidence import gather_evidence
from benchwright.core.strip import check_compiles, strip_tree
from benchwright.db import Store
from benchwright.tui.cli import main
from benchwright.tui.services.strip import strip_repository

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "strip_fixture"


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def project(tmp_path) -> str:
    db = str(tmp_path / "p.db")
    assert run("--db", db, "init").exit_code == 0
    assert run("--db", db, "repos", "add", "fix", str(FIXTURE), "--version", "1.0").exit_code == 0
    return db


def test_strip_makes_and_registers_the_copy(project, tmp_path):
    r = run("--db", project, "repos", "strip", "fix")
    assert r.exit_code == 0, r.output
    copy = tmp_path / "repos" / "fix-code-only"
    assert r.output.startswith(f"made fix-code-only from fix@1.0 at {copy} in ")
    assert "python files: 6 (5 stripped); docstrings removed: 12; comments removed: 9 (type comments kept: 2)" \
        in r.output
    assert "files deleted (documentation): 6; files copied: 8" in r.output
    assert "copied unchanged (does not parse): pkg/broken.py: line 3: invalid syntax" in r.output
    assert (copy / "pkg" / "core.py").is_file() and not (copy / "README.md").exists()
    with Store.open(project) as store:
        saved = store.derived_repository("fix")
    assert (saved.name, saved.derived_from, saved.derivation, saved.version_label, saved.local_path) == (
        "fix-code-only", "fix", "code-only", "1.0", str(copy))
    assert saved.manifest["totals"]["docstrings"] == 12
    listed = run("--db", project, "repos", "list").output
    assert f"fix-code-only@1.0\t{copy}\t\t(code-only copy of fix)" in listed
    manifest = run("--db", project, "repos", "manifest", "fix-code-only")
    assert manifest.exit_code == 0 and json.loads(manifest.output) == saved.manifest
    # Nothing of the copy's manifest is written into the copy itself.
    assert sorted(p.name for p in copy.iterdir()) == ["pkg", "setup.cfg"]


def test_strip_again_says_it_exists_and_force_rebuilds(project, tmp_path):
    assert run("--db", project, "repos", "strip", "fix").exit_code == 0
    again = run("--db", project, "repo", "strip", "fix")  # the singular spelling the issue uses
    assert again.exit_code == 0
    assert "fix-code-only, the code-only copy of fix@1.0, already exists at" in again.output
    assert "(made without --keep-lines); --force rebuilds it" in again.output
    copy = tmp_path / "repos" / "fix-code-only"
    (copy / "stray.txt").write_text("left by hand\n")
    r = run("--db", project, "repos", "strip", "fix", "--force", "--keep-lines")
    assert r.exit_code == 0 and r.output.startswith("rebuilt fix-code-only") and "line numbers kept" in r.output
    assert not (copy / "stray.txt").exists()
    assert sorted(p.name for p in copy.parent.iterdir()) == ["fix-code-only"]  # no temporary folder left
    with Store.open(project) as store:
        assert store.get_repository("fix-code-only").manifest["keep_lines"] is True


def test_a_copy_whose_folder_went_missing_is_rebuilt_with_force(project, tmp_path):
    from benchwright.tui.services.agent_runs import repository_for_condition

    assert run("--db", project, "repos", "strip", "fix").exit_code == 0
    copy = tmp_path / "repos" / "fix-code-only"
    with Store.open(project) as store:  # the code-only condition reads the copy
        assert repository_for_condition(store, "fix", "code-only") == (str(copy), "fix-code-only")
    shutil.rmtree(copy)
    r = run("--db", project, "repos", "strip", "fix")
    assert r.exit_code == 1 and "but that folder is missing; --force rebuilds it" in r.output
    assert run("--db", project, "repos", "strip", "fix", "--force").exit_code == 0
    assert (copy / "pkg" / "core.py").is_file()


def test_a_copy_name_is_never_a_path(project, tmp_path):
    for name, folder in (("../../escape", "_._.._escape"), ("acme/widget", "acme_widget"), (".hidden", "_hidden")):
        r = run("--db", project, "repos", "strip", "fix", "--as", name)
        assert r.exit_code == 0, r.output
        assert (tmp_path / "repos" / folder / "pkg" / "core.py").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.db", "repos"]


def test_a_copy_name_too_long_for_a_folder_name_is_cut_and_a_too_long_to_is_refused(project, tmp_path):
    long = "N" * 300
    r = run("--db", project, "repos", "strip", "fix", "--as", long)
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    (folder,) = [p for p in (tmp_path / "repos").iterdir()]
    assert len(folder.name) == 200 and folder.name.startswith("N" * 191 + "-") and (folder / "pkg").is_dir()
    r = run("--db", project, "repos", "strip", "fix", "--as", "other", "--to", str(tmp_path / ("T" * 300)))
    assert r.exit_code == 1 and "cannot be used for the copy (File name too long)" in r.output, r.output


def test_refusals_exit_1_with_the_reason(project, tmp_path):
    cases = {
        ("nope",): "error: repository 'nope' is not registered",
        ("fix", "--as", "fix"): "error: the name 'fix' is already used by the repository fix@1.0; choose another "
                                "with --as",
        ("fix", "--to", str(FIXTURE / "pkg" / "copy")): "the copy cannot be written inside fix",
        ("fix", "--to", str(FIXTURE.parent)): "the copy cannot be written inside fix",
    }
    (tmp_path / "taken").mkdir()
    cases[("fix", "--to", str(tmp_path / "taken"))] = "taken already exists; choose another place with --to"
    for args, message in cases.items():
        r = run("--db", project, "repos", "strip", *args)
        assert r.exit_code == 1 and message in r.output, (args, r.output)
        assert "Traceback" not in r.output
    assert run("--db", project, "repos", "strip", "fix").exit_code == 0
    r = run("--db", project, "repos", "strip", "fix-code-only")
    assert r.exit_code == 1 and "'fix-code-only' is the code-only copy of 'fix'; strip 'fix' instead" in r.output
    r = run("--db", project, "repos", "manifest", "fix")
    assert r.exit_code == 1 and "has no manifest" in r.output
    assert not (FIXTURE / "pkg" / "copy").exists()


def test_a_failure_leaves_no_copy_and_no_registration(project, tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise KeyboardInterrupt

    with Store.open(project) as store:
        monkeypatch.setattr(store, "add_derived_repository", fail)
        with pytest.raises(KeyboardInterrupt):
            strip_repository(store, "fix", annotator="ada")
        assert store.get_repository("fix-code-only", missing_ok=True) is None
    assert list((tmp_path / "repos").iterdir()) == []


def test_a_failed_rebuild_puts_the_old_copy_back(project, tmp_path, monkeypatch):
    assert run("--db", project, "repos", "strip", "fix").exit_code == 0
    copy = tmp_path / "repos" / "fix-code-only"
    before = sorted(str(p.relative_to(copy)) for p in copy.rglob("*"))

    def fail(*args, **kwargs):
        raise RuntimeError("disk full")

    with Store.open(project) as store:
        monkeypatch.setattr("benchwright.tui.services.strip.strip_tree", fail)
        with pytest.raises(RuntimeError):
            strip_repository(store, "fix", annotator="ada", force=True)
        assert store.get_repository("fix-code-only").manifest["keep_lines"] is False
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == before
    assert sorted(p.name for p in copy.parent.iterdir()) == ["fix-code-only"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_checkout_moved_off_its_commit_is_refused(tmp_path):
    code = tmp_path / "code"
    shutil.copytree(FIXTURE, code)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "c"]):
        subprocess.run(["git", "-C", str(code), *cmd], check=True, env=env)
    db = str(tmp_path / "p.db")
    assert run("--db", db, "init").exit_code == 0
    assert run("--db", db, "repos", "add", "code", str(code)).exit_code == 0
    r = run("--db", db, "repos", "strip", "code")
    assert r.exit_code == 0
    with Store.open(db) as store:
        original, copy = store.get_repository("code"), store.derived_repository("code")
    assert copy.commit == original.commit and copy.commit_verified
    assert not (Path(copy.local_path) / ".git").exists()
    # same commit, a tracked file edited: refused (the copy would not be the commit's code); untracked is fine
    edited = sorted(code.rglob("*.py"))[0]
    kept = edited.read_bytes()
    edited.write_text("x = 1\n")
    r = run("--db", db, "repos", "strip", "code", "--as", "other")
    assert r.exit_code == 1 and "has uncommitted changes to 1 tracked file" in r.output, r.output
    edited.write_bytes(kept)
    subprocess.run(["git", "-C", str(code), "commit", "-qm", "again", "--allow-empty"], check=True, env=env)
    r = run("--db", db, "repos", "strip", "code", "--as", "other")
    assert r.exit_code == 1 and f"but 'code' is registered at {original.commit[:12]}" in r.output


@pytest.fixture(scope="module")
def flask_tree() -> Path:
    return flask_tree_or_skip()


@pytest.mark.slow
def test_the_real_flask_source_strips_and_every_file_compiles(flask_tree, tmp_path):
    started = time.perf_counter()
    manifest = strip_tree(flask_tree, tmp_path / "copy")
    seconds = time.perf_counter() - started
    totals = manifest["totals"]
    print(f"flask 3.1.1: {json.dumps(totals)} in {seconds:.1f} s")
    assert manifest["unchanged"] == [] and totals["python_files"] > 50 and totals["docstrings"] > 200
    assert totals["comments"] > 500
    copy = tmp_path / "copy"
    for path in copy.rglob("*.py"):
        check_compiles(path.read_text(encoding="utf-8"), str(path))
    assert not (copy / "docs").exists() and not list(copy.rglob("*.rst")) and not list(copy.rglob("*.md"))
    assert not list(copy.rglob("README*"))
    app = (copy / "src" / "flask" / "app.py").read_text()
    assert '"""' not in app.split("\n", 30)[0] and "class Flask(App):" in app
    # Idempotent on real code.
    again = strip_tree(copy, tmp_path / "again")
    assert again["files"] == {} and again["deleted"] == []
    # --keep-lines: every non-blank line of the copy is its original line, less a comment, or a pass.
    strip_tree(flask_tree, tmp_path / "kept", keep_lines=True)
    for rel in manifest["files"]:
        before = (flask_tree / rel).read_text(encoding="utf-8").splitlines()
        after = (tmp_path / "kept" / rel).read_text(encoding="utf-8").splitlines()
        assert len(after) == len(before), rel
        for n, line in enumerate(after, 1):
            assert line == "" or line == before[n - 1] or before[n - 1].startswith(line) \
                or line.strip() == "pass", (rel, n, line)
    # The SWE-QA flask answers' citations of Python code resolve in the --keep-lines copy as in the original:
    # the same file, the same line count, so the same lines.
    answers = DATA / "swe-qa" / "Benchmark__flask.jsonl"
    if answers.is_file():
        texts = [json.loads(line)["answer"] for line in answers.read_text(encoding="utf-8").splitlines() if line]
        same = 0
        for text in texts:
            for full, code in zip(gather_evidence(flask_tree, text), gather_evidence(tmp_path / "kept", text),
                                  strict=True):
                if full.path and full.path.endswith(".py"):
                    assert (code.status, code.path, code.line_count) == (full.status, full.path, full.line_count)
                    same += 1
        assert same > 100
        print(f"{same} citations of Python files resolve alike in the --keep-lines copy")


@pytest.mark.slow
def test_sigterm_while_stripping_leaves_nothing_behind(flask_tree, tmp_path):
    import signal
    import sys

    db = str(tmp_path / "p.db")
    assert run("--db", db, "init").exit_code == 0
    assert run("--db", db, "repos", "add", "flask", str(flask_tree), "--version", "3.1.1").exit_code == 0
    benchwright = Path(sys.executable).parent / "benchwright"
    proc = subprocess.Popen([str(benchwright), "--db", db, "repos", "strip", "flask"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    place = tmp_path / "repos"
    deadline = time.monotonic() + 60
    while not (place.is_dir() and any(place.glob(".flask-code-only.strip-*/src"))):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the copy never started"
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert list(place.iterdir()) == []
    with Store.open(db) as store:
        assert store.get_repository("flask-code-only", missing_ok=True) is None


def test_work_folders_left_by_a_killed_strip_are_swept_by_the_next_one(project, tmp_path):
    """A strip killed with SIGKILL leaves its hidden work folder beside the copy; the next strip removes it when its
    process is gone (or it is older than a day), and keeps one of a strip still running."""
    import os
    import socket

    from benchwright.tui.services.strip import _HOST

    repos = tmp_path / "repos"
    repos.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = repos / f".fix-code-only.strip-{_HOST}~{dead.pid}~0123abcd"
    (left / "pkg").mkdir(parents=True)
    running = repos / f".fix-code-only.strip-{_HOST}~{os.getpid()}~89abcdef"
    running.mkdir()
    other_copy = repos / f".other.strip-{_HOST}~{dead.pid}~0123abcd"
    other_copy.mkdir()
    assert socket.gethostname()
    r = run("--db", project, "repos", "strip", "fix")
    assert r.exit_code == 0, r.output
    assert not left.exists() and running.is_dir() and other_copy.is_dir()
    assert (repos / "fix-code-only" / "pkg").is_dir()
