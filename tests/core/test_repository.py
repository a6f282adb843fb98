"""Registering a local checkout (git or plain folder) and reading its files without leaving the root."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import benchwright.core.repository as repository_module
from benchwright.core.errors import Remedy, RepositoryError, UnsafePathError
from benchwright.core.repository import (
    MAX_FILE_BYTES,
    describe_local_repository,
    git_head,
    read_repository_file,
    resolve_in_repository,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    }
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture
def checkout(tmp_path) -> tuple[Path, str]:
    """A git work tree with one commit; returns (path, full SHA)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "widget"
    (root / "src").mkdir(parents=True)
    (root / "src" / "widget.py").write_text("def widget():\n    return 42\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "first")
    return root, _git(root, "rev-parse", "HEAD")


# -------------------------------------------------------------------------------- describe_local_repository
@needs_git
def test_a_git_checkouts_commit_is_read_from_git_and_verified(checkout):
    root, sha = checkout
    assert git_head(root) == sha
    repo = describe_local_repository("widget", root, url="https://example.com/widget", language="Python")
    assert (repo.name, repo.commit, repo.commit_verified) == ("widget", sha, True)
    assert repo.local_path == str(root.resolve())
    assert (repo.url, repo.language, repo.version_label) == ("https://example.com/widget", "Python", None)


@needs_git
def test_the_head_commit_follows_new_commits(checkout):
    root, sha = checkout
    (root / "README.md").write_text("hello\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "second")
    head = describe_local_repository("widget", root).commit
    assert head != sha and head == _git(root, "rev-parse", "HEAD")


@needs_git
@pytest.mark.parametrize("given", [lambda s: s, lambda s: s[:7], lambda s: s[:12].upper()])
def test_a_given_commit_matching_the_checkout_by_prefix_is_accepted(checkout, given):
    root, sha = checkout
    repo = describe_local_repository("widget", root, commit=given(sha))
    assert repo.commit == sha  # the full SHA from git is recorded
    assert repo.commit_verified is True


@needs_git
def test_a_given_commit_that_differs_from_the_checkout_is_refused_naming_both(checkout):
    root, sha = checkout
    wrong = "0123456789abcdef0123456789abcdef01234567" if not sha.startswith("0123") else "f" * 40
    with pytest.raises(RepositoryError) as info:
        describe_local_repository("widget", root, commit=wrong[:10])
    message = str(info.value)
    assert sha[:12] in message and wrong[:10] in message


@needs_git
def test_a_git_folder_without_commits_is_treated_as_a_plain_folder(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    _git(root, "init", "-q")
    assert git_head(root) is None
    with pytest.raises(RepositoryError, match="not a git checkout") as info:
        describe_local_repository("empty", root)
    assert info.value.remedy is Remedy.GIVE_VERSION_OR_COMMIT  # worded by the CLI: --version LABEL or --commit SHA


def test_a_plain_folder_needs_a_version_or_a_commit(tmp_path):
    with pytest.raises(RepositoryError, match="not a git checkout") as info:
        describe_local_repository("plain", tmp_path)
    assert info.value.remedy is Remedy.GIVE_VERSION_OR_COMMIT and "--" not in str(info.value)  # the CLI words it
    labelled = describe_local_repository("plain", tmp_path, version="3.1.1")
    assert (labelled.version_label, labelled.commit, labelled.commit_verified) == ("3.1.1", None, False)
    assert labelled.pin == "plain@3.1.1"
    declared = describe_local_repository("plain", tmp_path, commit="abc1234")
    assert (declared.commit, declared.commit_verified) == ("abc1234", False)  # declared, not verified


def test_commit_and_version_together_are_refused(tmp_path):
    with pytest.raises(RepositoryError, match="not both"):
        describe_local_repository("plain", tmp_path, commit="abc", version="1.0")


def test_a_missing_path_or_a_file_is_refused(tmp_path):
    with pytest.raises(RepositoryError, match="no such directory"):
        describe_local_repository("x", tmp_path / "missing", version="1")
    f = tmp_path / "file.py"
    f.write_text("x = 1\n")
    with pytest.raises(RepositoryError, match="not a directory"):
        describe_local_repository("x", f, version="1")


def test_a_home_relative_path_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "code").mkdir()
    repo = describe_local_repository("code", "~/code", version="1")
    assert repo.local_path == str((tmp_path / "code").resolve())


# ---------------------------------------------------------------------------------- resolve_in_repository
@pytest.fixture
def tree(tmp_path) -> Path:
    """repo/src/pkg/mod.py, an in-repo symlink, and links pointing out to ../outside."""
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("print('hi')\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 'do not show'\n")
    (root / "alias.py").symlink_to(root / "src" / "pkg" / "mod.py")
    (root / "leak.py").symlink_to(outside / "secret.py")
    (root / "src" / "escape").symlink_to(outside, target_is_directory=True)
    (root / "src" / "relative_leak.py").symlink_to(Path("..") / ".." / "outside" / "secret.py")
    return root


def test_normal_files_resolve_inside_the_root(tree):
    real = (tree / "src" / "pkg" / "mod.py").resolve()
    assert resolve_in_repository(tree, "src/pkg/mod.py") == real
    assert resolve_in_repository(tree, "./src/pkg/mod.py") == real
    assert resolve_in_repository(tree, "src\\pkg\\mod.py") == real  # Windows separators
    assert resolve_in_repository(str(tree), "  src/pkg/mod.py ") == real
    assert resolve_in_repository(tree, "src/pkg/not_yet.py") == (tree / "src/pkg/not_yet.py").resolve()
    assert resolve_in_repository(tree, "") == tree.resolve()


def test_a_symlink_that_stays_inside_is_allowed(tree):
    assert resolve_in_repository(tree, "alias.py") == (tree / "src" / "pkg" / "mod.py").resolve()


@pytest.mark.parametrize(
    "relative",
    ["/etc/passwd", "~/.ssh/id_rsa", "~", "C:\\Windows\\system.ini", "C:/x.py", "\\\\server\\share\\x.py"],
)
def test_absolute_paths_are_refused(tree, relative):
    with pytest.raises(UnsafePathError, match="absolute paths are not allowed"):
        resolve_in_repository(tree, relative)


@pytest.mark.parametrize("relative", ["..", "../outside/secret.py", "src/../../outside/secret.py", "src\\..\\..\\x"])
def test_dot_dot_is_refused(tree, relative):
    with pytest.raises(UnsafePathError, match=r"'\.\.' would leave the repository"):
        resolve_in_repository(tree, relative)


@pytest.mark.parametrize("relative", ["leak.py", "src/escape/secret.py", "src/escape", "src/relative_leak.py"])
def test_symlinks_leading_out_of_the_root_are_refused(tree, relative):
    with pytest.raises(UnsafePathError, match="outside the repository"):
        resolve_in_repository(tree, relative)


def test_the_root_may_itself_be_reached_through_a_symlink(tree, tmp_path):
    link = tmp_path / "repo-link"
    link.symlink_to(tree, target_is_directory=True)
    assert resolve_in_repository(link, "src/pkg/mod.py") == (tree / "src/pkg/mod.py").resolve()
    with pytest.raises(UnsafePathError):
        resolve_in_repository(link, "leak.py")


def test_a_symlink_loop_is_refused_not_a_crash(tree):
    (tree / "loop_a").symlink_to(tree / "loop_b")
    (tree / "loop_b").symlink_to(tree / "loop_a")
    with pytest.raises(UnsafePathError):
        resolve_in_repository(tree, "loop_a/x.py")
    with pytest.raises(UnsafePathError):
        read_repository_file(tree, "loop_a")


def test_a_nul_character_is_refused(tree):
    with pytest.raises(UnsafePathError):
        resolve_in_repository(tree, "src/pkg/mod.py\x00.txt")


# ----------------------------------------------------------------------------------- read_repository_file
def test_read_returns_the_text_and_replaces_invalid_utf8(tree):
    assert read_repository_file(tree, "src/pkg/mod.py") == "print('hi')\n"
    (tree / "latin1.py").write_bytes(b"name = 'caf\xe9'\n")
    assert read_repository_file(tree, "latin1.py") == "name = 'caf\ufffd'\n"


def test_read_of_a_missing_file_names_it(tree):
    with pytest.raises(RepositoryError, match=r"nope\.py: not in the repository") as info:
        read_repository_file(tree, "src/nope.py")
    assert not isinstance(info.value, UnsafePathError)


def test_read_of_a_directory_is_refused(tree):
    with pytest.raises(RepositoryError, match="src/pkg: not a file"):
        read_repository_file(tree, "src/pkg")


def test_read_of_a_too_large_file_is_refused(tree):
    big = tree / "big.py"
    with big.open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no 2 MB written
    with pytest.raises(RepositoryError, match="larger than 2 MB"):
        read_repository_file(tree, "big.py")
    with big.open("r+b") as f:
        f.truncate(MAX_FILE_BYTES)
    assert len(read_repository_file(tree, "big.py")) == MAX_FILE_BYTES


def test_read_outside_the_root_is_refused(tree):
    with pytest.raises(UnsafePathError):
        read_repository_file(tree, "leak.py")
    with pytest.raises(UnsafePathError):
        read_repository_file(tree, "../outside/secret.py")


def test_an_unreadable_file_raises_repository_error(tree, monkeypatch):
    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(repository_module.Path, "read_bytes", denied)
    with pytest.raises(RepositoryError, match=r"cannot be read .*Permission denied"):
        read_repository_file(tree, "src/pkg/mod.py")
