"""Local repositories: registering a checkout, and reading its files safely.

A cited path is resolved inside the repository root only: absolute paths, ``..`` segments and symlinks
that lead out of the root are refused (:class:`UnsafePathError`).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path, PurePosixPath

from .errors import Remedy, RepositoryError, UnsafePathError, with_remedy
from .models import Repository

MAX_FILE_BYTES = 2_000_000
"""Largest file the evidence view opens (bytes)."""


def git_head(path: Path) -> str | None:
    """The commit SHA checked out at ``path`` if it is the top of a git work tree, else None."""
    if not (path / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and sha else None


def git_changed_files(path: Path) -> list[str] | None:
    """The tracked files of the git work tree at ``path`` that differ from its checked-out commit (modified, staged,
    deleted, renamed; ``git status --porcelain --untracked-files=no``, run without taking git's optional locks),
    in git's order; None when ``path`` is not the top of a git work tree or git fails. Untracked files are not
    listed: they are allowed (the pinned commit's files are all there, unchanged)."""
    if not (path / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(path), "-c", "core.quotepath=off", "status", "--porcelain",
             "--untracked-files=no"], capture_output=True, text=True, timeout=60, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return [line[3:] for line in out.stdout.splitlines() if len(line) > 3]


def _git_out(path: Path, *args: str, timeout: float = 60) -> bytes | None:
    """Standard output of ``git -C path ARGS`` (no shell, no optional locks, no API key or other secret in its
    environment), or None when git fails or times out."""
    from .llm.scrub import is_secret_name

    env = {name: value for name, value in os.environ.items() if not is_secret_name(name)}
    try:
        out = subprocess.run(["git", "--no-optional-locks", "-C", str(path), *args], capture_output=True,
                             timeout=timeout, check=False, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def git_commit_sha(path: Path, commit: str) -> str | None:
    """The full SHA of ``commit`` (a SHA or a prefix of one) in the git repository of ``path``, or None when that
    repository does not hold it (or ``path`` is no git work tree)."""
    if not commit or commit.startswith("-") or not (path / ".git").exists():
        return None
    out = _git_out(path, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", timeout=30)
    sha = out.decode("ascii", "replace").strip() if out is not None else ""
    return sha or None


def git_commit_files(path: Path, commit: str) -> dict[str, int] | None:
    """``{file: size in bytes}`` of ``commit`` in the git repository of ``path`` (repository-relative,
    ``/``-separated, sorted; ``git ls-tree -r -l -z``; links and submodules left out), or None when git cannot list
    them."""
    out = _git_out(path, "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
    if out is None:
        return None
    files: dict[str, int] = {}
    for entry in out.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        fields = meta.split()
        if name and meta.startswith(b"100") and len(fields) == 4 and fields[3].isdigit():  # 100644 / 100755
            files[name.decode("utf-8", "surrogateescape")] = int(fields[3])
    return dict(sorted(files.items()))


def git_file_bytes(path: Path, commit: str, relative: str, *, max_bytes: int = MAX_FILE_BYTES,
                   size: int | None = None) -> bytes | None:
    """The bytes of the file ``relative`` at ``commit`` in the git repository of ``path`` (``git cat-file blob``),
    or None when it is not there, is larger than ``max_bytes`` or git fails. ``size``: the file's size when known
    (:func:`git_commit_files`), which saves asking git for it."""
    spec = f"{commit}:{relative}"
    if size is None:
        out = _git_out(path, "cat-file", "-s", spec, timeout=30)
        if out is None or not out.strip().isdigit():
            return None
        size = int(out)
    if size > max_bytes:
        return None
    return _git_out(path, "cat-file", "blob", spec)


def git_renames(path: Path, old: str, new: str) -> dict[str, str]:
    """``{old path: new path}`` for the files git sees as renamed between commits ``old`` and ``new``
    (``git diff --name-status -M -z``); empty when git cannot tell."""
    out = _git_out(path, "diff", "--name-status", "-M", "-z", old, new, "--")
    if out is None:
        return {}
    parts = out.decode("utf-8", "surrogateescape").split("\0")
    renames: dict[str, str] = {}
    i = 0
    while i < len(parts) and parts[i]:
        status = parts[i]
        if status.startswith(("R", "C")) and i + 2 < len(parts):
            if status.startswith("R"):
                renames[parts[i + 1]] = parts[i + 2]
            i += 3
        else:
            i += 2
    return renames


def changed_checkout_problem(name: str, path: str | Path, commit: str | None, changed: list[str]) -> str:
    """Why a checkout with uncommitted changes to tracked files is refused as the repository at its pinned commit,
    naming up to five of the files, with the remedy (commit or stash them, or register a clean worktree)."""
    shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    at = (commit or "HEAD")[:12]
    return (f"the checkout of {name} at {path} has uncommitted changes to {len(changed)} tracked "
            f"file{'s' if len(changed) != 1 else ''} ({shown}), so it is not the pinned commit {at}: commit or stash "
            f"them, or make a clean worktree (git -C {path} worktree add DIR {at}) and pin {name} to it "
            f"(benchwright repos move {name} DIR); untracked files are allowed")


def describe_local_repository(
    name: str, path: str | Path, *, commit: str | None = None, version: str | None = None, url: str | None = None,
    language: str | None = None, theme: str | None = None,
) -> Repository:
    """Build the :class:`Repository` for a local code base at ``path``.

    A git checkout's commit is read from git; a given ``commit`` must match it (a prefix is enough).
    A plain directory needs ``version`` (a label such as ``3.1.1``) or a declared ``commit``
    (recorded as unverified).

    Raises:
        RepositoryError: the path is missing or not a directory, both or neither of commit and version
            are given for a plain directory, or the given commit differs from the checkout's.
    """
    root = Path(path).expanduser()
    if not root.exists():
        raise RepositoryError(f"{path}: no such directory")
    if not root.is_dir():
        raise RepositoryError(f"{path}: not a directory")
    if commit and version:
        raise RepositoryError("give a commit or a version label, not both")
    head = git_head(root)
    verified = False
    if head:
        if commit and not head.lower().startswith(commit.lower()):
            raise RepositoryError(
                f"{path} is checked out at commit {head[:12]}, not {commit}; check out {commit}, or give no commit "
                "(the checkout's is read from git)"
            )
        if not version:
            commit, verified = head, True
    elif not commit and not version:
        raise with_remedy(RepositoryError(f"{path} is not a git checkout, so its commit cannot be read"),
                          Remedy.GIVE_VERSION_OR_COMMIT)
    return Repository(
        name=name, url=url, commit=commit, version_label=version, local_path=str(root.resolve()),
        language=language, theme=theme, commit_verified=verified,
    )


def resolve_in_repository(root: str | Path, relative: str) -> Path:
    """The real path of ``relative`` inside ``root``.

    Raises:
        UnsafePathError: ``relative`` is absolute, contains ``..`` or a NUL character, resolves (through
            symlinks) to a place outside ``root``, or cannot be resolved (a symlink loop).
    """
    text = relative.replace("\\", "/").strip()
    if "\x00" in text:
        raise UnsafePathError(f"{relative!r}: a path cannot contain a NUL character")
    pure = PurePosixPath(text)
    if pure.is_absolute() or text.startswith("~") or (len(text) > 1 and text[1] == ":"):
        raise UnsafePathError(f"{relative}: absolute paths are not allowed; cite paths relative to the repository")
    if ".." in pure.parts:
        raise UnsafePathError(f"{relative}: '..' would leave the repository")
    base = Path(root).resolve()
    try:
        target = (base / Path(*pure.parts)).resolve() if pure.parts else base
    except (OSError, RuntimeError) as e:  # a symlink loop: RuntimeError up to Python 3.12, OSError after
        raise UnsafePathError(f"{relative}: cannot be resolved ({e})") from None
    if target != base and base not in target.parents:
        raise UnsafePathError(f"{relative}: resolves to a place outside the repository (a symlink out)")
    return target


def read_repository_file(root: str | Path, relative: str, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Text of the file ``relative`` inside ``root`` (invalid UTF-8 bytes replaced).

    Raises:
        UnsafePathError: see :func:`resolve_in_repository`.
        RepositoryError: the file does not exist, is a directory, is larger than ``max_bytes`` (by default
            :data:`MAX_FILE_BYTES`), or cannot be read.
    """
    target = resolve_in_repository(root, relative)
    if not target.exists():
        raise RepositoryError(f"{relative}: not in the repository")
    if not target.is_file():
        raise RepositoryError(f"{relative}: not a file")
    try:
        if target.stat().st_size > max_bytes:
            raise RepositoryError(f"{relative}: larger than {_megabytes(max_bytes)}; open it in an editor")
        data = target.read_bytes()
    except OSError as e:  # unreadable (permissions), or removed since the checks above
        raise RepositoryError(f"{relative}: cannot be read ({e.strerror or e})") from None
    return data.decode("utf-8", errors="replace")


def _megabytes(n: int) -> str:
    return f"{n // 1_000_000} MB" if n % 1_000_000 == 0 else f"{n:,} bytes"
