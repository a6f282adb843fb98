"""Stale evidence (issue 16 item 7): a citation compared between two pins, as pure functions of file texts, and the
git readers of the old pin."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchwright.core.evidence import Citation
from benchwright.core.evidence_drift import (
    CHANGED,
    DELETED,
    EVIDENCE_OK,
    EVIDENCE_STALE,
    EVIDENCE_UNKNOWN,
    MOVED,
    RENAMED,
    UNCHANGED,
    UNKNOWN,
    CitationChange,
    DirectoryFiles,
    GitCommitFiles,
    Unreadable,
    check_text,
    compare_citation,
    diff_excerpt,
    find_block,
    old_files,
    pair_status,
    recheck_status,
)
from benchwright.core.models import Repository
from benchwright.core.repository import git_commit_sha, git_renames

OLD = "import os\n\n\ndef f(x):\n    return x + 1\n\n\nVALUE = 2\n"
NEW = "import os\n\nVALUE = 2\n\nOTHER = 3\n\n\ndef f(x):\n    return x + 1\n"


def test_unchanged_lines_are_unchanged():
    c = compare_citation(Citation("a.py", 1, 1), "a.py", OLD, NEW)
    assert c.status == UNCHANGED and not c.stale and c.old_range == (1, 1)


def test_lines_found_elsewhere_are_moved_with_the_new_range():
    c = compare_citation(Citation("a.py", 4, 5), "a.py", OLD, NEW)
    assert c.status == MOVED and c.stale
    assert c.new_range == (8, 9)
    assert c.describe() == "a.py:4-5 moved: now lines 8-9"


def test_changed_lines_carry_a_unified_diff_of_the_cited_lines_numbered_in_the_file():
    new = OLD.replace("return x + 1", "return x + 2")
    c = compare_citation(Citation("a.py", 4, 5), "a.py", OLD, new)
    assert c.status == CHANGED and c.stale
    assert c.diff.splitlines() == [
        "--- a/a.py", "+++ b/a.py", "@@ -5 +5 @@", "-    return x + 1", "+    return x + 2"]


def test_cited_lines_cut_off_by_a_shorter_file_diff_against_nothing():
    c = compare_citation(Citation("a.py", 7, 8), "a.py", OLD, "import os\n")
    assert c.status == CHANGED
    assert "@@ -7,2 +6,0 @@" in c.diff and "-VALUE = 2" in c.diff


def test_a_file_gone_is_deleted_and_a_whole_file_citation_of_a_kept_file_unchanged():
    assert compare_citation(Citation("b.py", 1, 2), "b.py", OLD, None).status == DELETED
    assert compare_citation(Citation("b.py"), "b.py", OLD, None).status == DELETED
    assert compare_citation(Citation("c.py"), "c.py", OLD, OLD + "more\n").status == UNCHANGED


def test_renamed_file_reports_the_new_path_and_range():
    c = compare_citation(Citation("a.py", 4, 5), "a.py", OLD, NEW, new_path="pkg/a.py")
    assert (c.status, c.new_path, c.new_range) == (RENAMED, "pkg/a.py", (8, 9)) and c.stale


def test_unreadable_old_text_is_unknown_not_stale():
    c = compare_citation(Citation("a.py", 1, 2), "a.py", Unreadable("the old checkout is gone"), NEW)
    assert c.status == UNKNOWN and not c.stale and c.note == "the old checkout is gone"
    past = compare_citation(Citation("a.py", 50, 60), "a.py", OLD, NEW)
    assert past.status == UNKNOWN and "past the end" in past.note


def test_pair_status_stale_beats_unknown_beats_ok():
    ok = CitationChange("c.py", UNCHANGED)
    unknown = CitationChange("x.py", UNKNOWN)
    stale = CitationChange("b.py", DELETED)
    assert pair_status([]) == EVIDENCE_OK
    assert pair_status([ok]) == EVIDENCE_OK
    assert pair_status([ok, unknown]) == EVIDENCE_UNKNOWN
    assert pair_status([unknown, stale, ok]) == EVIDENCE_STALE


def test_find_block_takes_the_occurrence_nearest_the_old_place():
    lines = ["a", "b", "x", "a", "b"]
    assert find_block(lines, ["a", "b"], 3) == 3
    assert find_block(lines, ["a", "b"], 0) == 0
    assert find_block(lines, ["z"], 0) is None
    assert find_block(lines, [], 0) is None


def test_change_survives_its_json_form():
    c = compare_citation(Citation("a.py", 4, 5), "a.py", OLD, OLD.replace("x + 1", "[bold]x[/] \x1b[31m"))
    assert CitationChange.from_json(c.to_json()) == c


def test_diff_excerpt_cuts_long_lines_and_counts_the_rest():
    diff = "\n".join(["-" + "x" * 1000] + [f"+{i}" for i in range(50)])
    shown, more = diff_excerpt(diff, max_lines=10, max_chars=20)
    assert len(shown) == 10 and more == 41
    assert shown[0].startswith("-" + "x" * 19) and shown[0].endswith("[981 more characters]")


# ------------------------------------------------------------------------------------------- with files
def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_check_text_over_two_folders(tmp_path):
    old = _tree(tmp_path / "old", {"src/a.py": OLD, "b.py": "def g():\n    pass\n", "c.py": "def h():\n    return 3\n"})
    new = _tree(tmp_path / "new", {"src/a.py": NEW, "c.py": "def h():\n    return 3\n"})
    text = "f is in a.py:4-5 (by suffix); g is b.py lines 1-2; h is c.py:1-2; see also x.py:3."
    changes = check_text(text, DirectoryFiles(old), DirectoryFiles(new))
    by = {c.citation: c for c in changes}
    assert by["a.py:4-5"].status == MOVED and by["a.py:4-5"].path == "src/a.py"
    assert by["b.py:1-2"].status == DELETED
    assert by["c.py:1-2"].status == UNCHANGED
    assert by["x.py:3"].status == UNKNOWN  # not a file at the old pin: listed, not stale
    assert pair_status(changes) == EVIDENCE_STALE


def test_check_text_without_the_old_pin_is_unknown_for_every_citation(tmp_path):
    new = _tree(tmp_path / "new", {"a.py": NEW})
    changes = check_text("a.py:1-2", None, DirectoryFiles(new), old_unreadable="gone")
    assert [(c.status, c.note) for c in changes] == [(UNKNOWN, "gone")]
    assert pair_status(changes) == EVIDENCE_UNKNOWN


# ------------------------------------------------------------------------------------------------- git
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


@needs_git
def test_old_pin_read_from_git_when_the_checkout_moved_in_place(tmp_path):
    root = _tree(tmp_path / "r", {"a.py": OLD, "b.py": "x\n"})
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "one")
    one = _git(root, "rev-parse", "HEAD")
    (root / "a.py").write_text(NEW)
    _git(root, "mv", "b.py", "renamed.py")
    _git(root, "commit", "-q", "-am", "two")
    two = _git(root, "rev-parse", "HEAD")
    assert git_commit_sha(root, one[:8]) == one
    assert git_commit_sha(root, "0" * 40) is None
    assert git_renames(root, one, two) == {"b.py": "renamed.py"}
    before = Repository(name="r", commit=one, local_path=str(root), commit_verified=True)
    source, how = old_files(before, root)  # the same folder, now at commit two: read commit one from git
    assert isinstance(source, GitCommitFiles) and how.startswith("git: commit")
    assert source.files() == ("a.py", "b.py") and source.read("a.py") == OLD
    changes = check_text("a.py:4-5 and b.py:1", source, DirectoryFiles(root), renames=git_renames(root, one, two))
    assert [(c.status, c.new_range, c.new_path) for c in changes] == [
        (MOVED, (8, 9), None), (RENAMED, (1, 1), "renamed.py")]
    gone = Repository(name="r", commit="f" * 40, local_path=str(tmp_path / "gone"), commit_verified=True)
    none, why = old_files(gone, root)
    assert none is None and "not in the git repository" in why and "is gone" in why


def test_a_path_several_files_end_with_resolves_to_one_long_enough_for_the_cited_lines(tmp_path):
    short, long = "x = 1\n", "".join(f"y{i} = {i}\n" for i in range(1, 301))
    old = _tree(tmp_path / "old", {"src/blueprints.py": short, "src/sansio/blueprints.py": long})
    new = _tree(tmp_path / "new", {"src/blueprints.py": short, "src/sansio/blueprints.py": "z = 0\n" + long})
    (change,) = check_text("blueprints.py:213-221", DirectoryFiles(old), DirectoryFiles(new))
    assert (change.status, change.path, change.new_range) == (MOVED, "src/sansio/blueprints.py", (214, 222))
    assert change.note == "2 files end with blueprints.py; compared src/sansio/blueprints.py"
    assert change.describe().startswith("blueprints.py:213-221 moved: now lines 214-222 (2 files")
    (one,) = check_text("src/blueprints.py:1", DirectoryFiles(old), DirectoryFiles(new))
    assert one.status == UNCHANGED
    assert CitationChange("a.py:3", MOVED, "a.py", (3, 3), (4, 4)).describe() == "a.py:3 moved: now line 4"


def test_git_runs_without_api_keys_in_its_environment(monkeypatch, tmp_path):
    from benchwright.core import repository

    seen = {}

    def fake_run(argv, **kw):
        seen.update(kw["env"])
        return subprocess.CompletedProcess(argv, 0, b"", b"")

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("BENCHWRIGHT_KEEP_ME", "1")
    monkeypatch.setattr(repository.subprocess, "run", fake_run)
    assert repository.git_renames(tmp_path, "a", "b") == {}
    assert "OPENAI_API_KEY" not in seen and seen["BENCHWRIGHT_KEEP_ME"] == "1"


def test_a_recheck_at_one_pin_keeps_a_citation_of_a_missing_file_stale(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    here = DirectoryFiles(tmp_path)
    fixed = check_text("a.py lines 1-2", here, here)
    assert recheck_status(fixed) == EVIDENCE_OK and pair_status(fixed) == EVIDENCE_OK
    gone = check_text("a.py lines 1-2 and gone.py:3", here, here)
    assert pair_status(gone) == EVIDENCE_UNKNOWN  # between two pins this could not be compared
    assert recheck_status(gone) == EVIDENCE_STALE  # at one pin the file is simply not there
