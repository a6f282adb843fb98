"""core.code_stats: files and lines of code of a checkout (RepoProbe Table 2), and the statistics dict."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from benchwright.core.code_stats import CodeSize, code_size, repository_statistics


def test_a_plain_folder_counts_its_text_files(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    (tmp_path / "b.txt").write_bytes(b"no newline at the end")
    (tmp_path / "c.bin").write_bytes(b"\0\1\2\n\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")  # not a git checkout (git fails), and .git is skipped
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    assert code_size(tmp_path) == CodeSize(files=2, lines=3)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_git_checkout_counts_the_tracked_files(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("def f():\n    return 1\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\0\0")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "c"]):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, env=env)
    (tmp_path / "untracked.py").write_text("a\nb\nc\n")
    assert code_size(tmp_path) == CodeSize(files=1, lines=2)


def test_statistics_leave_unreadable_checkouts_out_of_the_means():
    st = repository_statistics({"a": 3, "b": 1}, {"a": CodeSize(10, 100), "b": None}, {"a": "Python", "b": None}, 2)
    assert st["files_per_repository"] == 10.0 and st["lines_per_repository"] == 100.0
    assert st["not_counted"] == ["b"] and st["languages"] == ["Python"] and st["merged_context_share"] == 0.5
    assert st["per_repository"]["b"] == {"pairs": 1, "files": None, "lines": None}
