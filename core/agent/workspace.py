"""The repository as a read-only workspace for the agent (SWE-QA-Pro §3.1: the agent reads the pinned repository
and nothing else).

A path the model gives is resolved inside the root only (:func:`benchwright.core.repository.resolve_in_repository`):
absolute paths, ``..`` segments and symlinks that lead out are refused with :class:`UnsafePathError`, whose message
says why. The workspace never writes: it only lists and reads. Listings are sorted and the file index is built once
per workspace, so the same repository gives the same tool outputs on every run (a resumed run replays its turns from
the ledger only if its conversation is the same).
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

from ..errors import RepositoryError, UnsafePathError
from ..repository import resolve_in_repository

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache"})
"""Folders the file index (and so Search) skips; View and CommandLine can still look inside them, except
:data:`GIT_DIR`, which no tool shows."""
GIT_DIR = ".git"
"""git's metadata (its config may hold a remote URL with a token): not part of the repository the agent reads. No
tool opens, lists or names anything in it (:func:`git_path_problem`; CommandLine: ``tools.hide_git``)."""
MAX_TEXT_BYTES = 2_000_000
"""Files larger than this are not searched and not viewed (the tool says so)."""
BINARY_SNIFF_BYTES = 8192
"""A file with a NUL byte in its first this-many bytes is binary (not searched, not viewed)."""
TEXT_CACHE_CHARS = 64_000_000
"""Search keeps the texts it read in memory up to this many characters in all (the workspace does not change
during a run), so a second search does not read every file again."""


class Workspace:
    """A repository checkout the agent may read.

    Args:
        root: the repository's folder.
        scope: what the runs in it belong to, for the ledger's cache key (``LLMRequest.cache_scope``): the
            condition and repository (``code-only:flask-code-only``), so runs under two conditions never share a
            cached turn. None: no scope.

    Raises:
        RepositoryError: ``root`` does not exist or is not a folder.
    """

    def __init__(self, root: str | Path, *, scope: str | None = None):
        path = Path(root).expanduser()
        if not path.exists():
            raise RepositoryError(f"{root}: no such directory (the agent's workspace)")
        if not path.is_dir():
            raise RepositoryError(f"{root}: not a directory (the agent's workspace)")
        self.root = path.resolve()
        self.name = self.root.name
        self.scope = scope
        self._texts: dict[str, str | None] = {}
        self._cached_chars = 0

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # ------------------------------------------------------------------ paths
    def resolve(self, relative: str | None) -> Path:
        """The real path of ``relative`` (a workspace-relative path; ``""`` or ``.`` is the root; a leading
        ``./`` is dropped).

        Raises:
            UnsafePathError: ``relative`` is absolute, holds ``..`` or a NUL, or resolves (through a symlink) to a
                place outside the workspace. The message says which.
        """
        text = clean_path(relative)
        if text.startswith("/") or text.startswith("~"):
            raise UnsafePathError(f"{relative}: absolute paths are not allowed; give a path relative to the "
                                  "repository root (e.g. src/app.py)")
        problem = git_path_problem(text)
        if problem:
            raise UnsafePathError(f"{relative}: {problem}")
        target = resolve_in_repository(self.root, text)
        if target != self.root and git_path_problem(self.relative(target)):  # a symlink into .git
            raise UnsafePathError(f"{relative}: leads into {GIT_DIR}, {_GIT_HIDDEN}")
        return target

    def relative(self, path: Path) -> str:
        """``path`` (inside the root) as a workspace-relative POSIX path (``.`` for the root)."""
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        return "." if rel in ("", ".") else rel

    def is_inside(self, relative: str) -> bool:
        """True when ``relative`` resolves inside the workspace (see :meth:`resolve`)."""
        try:
            self.resolve(relative)
        except UnsafePathError:
            return False
        return True

    # ------------------------------------------------------------------ listing
    @cached_property
    def files(self) -> tuple[str, ...]:
        """Every regular file of the workspace, workspace-relative, sorted; ``SKIP_DIRS`` are not entered,
        symlinked folders are not followed, and a symlinked file is listed only when it resolves inside."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            rel = os.path.relpath(dirpath, self.root)
            for f in filenames:
                p = f if rel == "." else f"{rel}/{f}".replace(os.sep, "/")
                full = Path(dirpath) / f
                if full.is_symlink() and not self.is_inside(p):
                    continue
                if full.is_file():
                    out.append(p)
        return tuple(sorted(out))

    def files_under(self, relative: str | None) -> list[str]:
        """The files of :attr:`files` at or under ``relative`` (a file or a folder; None or ``.``: all).

        Raises:
            UnsafePathError: ``relative`` leads outside (see :meth:`resolve`).
            RepositoryError: nothing is there.
        """
        text = clean_path(relative)
        target = self.resolve(text)
        if not target.exists():
            raise RepositoryError(f"{relative}: no such file or folder in the repository")
        if target == self.root:
            return list(self.files)
        rel = self.relative(target)
        if target.is_file():
            return [rel]
        prefix = rel + "/"
        return [f for f in self.files if f.startswith(prefix)]

    def list_dir(self, relative: str | None) -> list[tuple[str, str]]:
        """``(name, kind)`` of every entry of the folder ``relative``, sorted by name; ``kind`` is ``dir``,
        ``file``, ``link`` (a symlink inside the workspace), ``link-out`` (a symlink leading outside: shown,
        never followed) or ``other``.

        Raises:
            UnsafePathError: see :meth:`resolve`. RepositoryError: not a folder.
        """
        target = self.resolve(relative)
        if not target.is_dir():
            raise RepositoryError(f"{relative}: not a folder")
        out = []
        for entry in sorted(os.scandir(target), key=lambda e: e.name):
            if entry.name == GIT_DIR:
                continue
            rel = self.relative(target / entry.name)
            if entry.is_symlink():
                kind = "link" if self.is_inside(rel) else "link-out"
            elif entry.is_dir():
                kind = "dir"
            elif entry.is_file():
                kind = "file"
            else:
                kind = "other"
            out.append((entry.name, kind))
        return out

    # ------------------------------------------------------------------ reading
    def read_text(self, relative: str) -> str:
        """The text of the file ``relative`` (invalid UTF-8 replaced, ``\\r\\n`` kept as read).

        Raises:
            UnsafePathError: see :meth:`resolve`.
            RepositoryError: no such file, a folder, binary, larger than :data:`MAX_TEXT_BYTES`, unreadable.
        """
        target = self.resolve(relative)
        if not target.exists():
            raise RepositoryError(f"{relative}: no such file in the repository")
        if target.is_dir():
            raise RepositoryError(f"{relative}: is a folder (view it without a line range to list it)")
        if not target.is_file():
            raise RepositoryError(f"{relative}: not a regular file")
        try:
            size = target.stat().st_size
            if size > MAX_TEXT_BYTES:
                raise RepositoryError(f"{relative}: {size:,} bytes, larger than {MAX_TEXT_BYTES:,}; use "
                                      "command_line (head, sed -n) to read parts of it")
            data = target.read_bytes()
        except OSError as e:
            raise RepositoryError(f"{relative}: cannot be read ({e.strerror or e})") from None
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            raise RepositoryError(f"{relative}: a binary file")
        return data.decode("utf-8", errors="replace")

    def text_of(self, relative: str) -> str | None:
        """:meth:`read_text`, or None for a file that cannot be read as text (Search skips those); kept in memory
        up to :data:`TEXT_CACHE_CHARS` in all."""
        if relative in self._texts:
            return self._texts[relative]
        try:
            text: str | None = self.read_text(relative)
        except RepositoryError:
            text = None
        if self._cached_chars + len(text or "") <= TEXT_CACHE_CHARS:
            self._texts[relative] = text
            self._cached_chars += len(text or "")
        return text


_GIT_HIDDEN = "git's metadata, which is not part of the repository the agent reads"


def git_path_problem(relative: str) -> str | None:
    """Why the workspace-relative path ``relative`` is hidden (a ``.git`` component: git's metadata), else None."""
    if GIT_DIR in relative.replace("\\", "/").split("/"):
        return f"{GIT_DIR} is {_GIT_HIDDEN}"
    return None


def clean_path(relative: str | None) -> str:
    """``relative`` stripped of white space and of leading ``./`` (``""`` for None)."""
    text = (relative or "").strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return "" if text == "." else text.rstrip("/") if text != "/" else text
