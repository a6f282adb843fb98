"""Stale evidence: a pair's citations re-resolved when its repository is re-pinned (``benchwright repos move``).

A reference answer cites files and lines of the repository at the commit (or version) it was written against.
When the repository is re-pinned to another checkout, each citation is compared between the two pins
(:func:`compare_citation`, a pure function of the two file texts):

- ``unchanged``: the cited lines (or, for a citation without lines, the file) are there as before.
- ``moved``: the cited lines' text is found, identical, at other line numbers of the same file; the citation's
  numbers are now wrong, so it is stale, and the new range is reported (``new_range``).
- ``changed``: the lines at the cited numbers differ and the old lines are found nowhere in the file; ``diff``
  is the unified diff (:mod:`difflib`, no context lines) of the cited lines, old against new.
- ``renamed``: git records the file as renamed (``new_path``); the cited lines are looked for there.
- ``deleted``: the file is not at the new pin.
- ``unknown``: the old text cannot be read (the old checkout is gone and git does not hold the old commit, the
  file is too large, the cited lines were past the old file's end): listed, never stale.

A pair is ``stale`` when one of its citations is moved, changed, renamed or deleted; else ``unknown`` when one
is unknown; else ``ok`` (:func:`pair_status`). Where the old text comes from (:func:`old_files`): the old
checkout when it is still there at the old pin, else ``git cat-file`` of the old commit in the new checkout's
repository.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .errors import BenchwrightError
from .evidence import Citation, extract_citations, file_lines, list_repository_files
from .models import Repository
from .repository import (
    MAX_FILE_BYTES,
    git_changed_files,
    git_commit_files,
    git_commit_sha,
    git_file_bytes,
    git_head,
    read_repository_file,
)

UNCHANGED, MOVED, CHANGED, RENAMED, DELETED, UNKNOWN = "unchanged", "moved", "changed", "renamed", "deleted", "unknown"
CITATION_STATUSES = (UNCHANGED, MOVED, CHANGED, RENAMED, DELETED, UNKNOWN)
"""What became of one citation at the new pin (see the module docstring)."""
STALE_CITATION_STATUSES = frozenset({MOVED, CHANGED, RENAMED, DELETED})
"""Citation statuses that make the pair's evidence stale."""

EVIDENCE_OK, EVIDENCE_STALE, EVIDENCE_UNKNOWN = "ok", "stale", "unknown"
EVIDENCE_STATUSES = (EVIDENCE_OK, EVIDENCE_STALE, EVIDENCE_UNKNOWN)
"""``evidence_checks.status``: a pair's citations after a re-pin (:func:`pair_status`)."""
EVIDENCE_UNCHECKED = "unchecked"
EVIDENCE_FILTERS = (EVIDENCE_STALE, EVIDENCE_OK, EVIDENCE_UNKNOWN, EVIDENCE_UNCHECKED)
"""Values of the queue filter ``evidence=``: a pair's latest check, or ``unchecked`` (never re-pinned)."""


@dataclass(frozen=True)
class Unreadable:
    """A file text that cannot be read at a pin, and why (``reason``)."""

    reason: str


FileText = str | None | Unreadable
"""A file's text at a pin: the text, None when the file is not there, or :class:`Unreadable`."""


@dataclass(frozen=True)
class CitationChange:
    """What became of one citation at the new pin.

    Attributes:
        citation: the citation as written (``a.py:3-5``).
        status: one of :data:`CITATION_STATUSES`.
        path: the repository-relative file it resolved to at the old pin (None when it resolved to none).
        old_range: the cited lines ``(start, end)``, 1-based inclusive; None for a citation without lines.
        new_range: ``moved`` / ``renamed``: where the cited lines are at the new pin; else None.
        new_path: ``renamed``: the file's path at the new pin; else None.
        diff: ``changed``: the unified diff of the cited lines (old ``a/PATH``, new ``b/PATH``); else ``""``.
        note: why an ``unknown`` is unknown, or a remark (several files match); ``""`` otherwise.
    """

    citation: str
    status: str
    path: str | None = None
    old_range: tuple[int, int] | None = None
    new_range: tuple[int, int] | None = None
    new_path: str | None = None
    diff: str = ""
    note: str = ""

    @property
    def stale(self) -> bool:
        """True when this citation makes the pair's evidence stale."""
        return self.status in STALE_CITATION_STATUSES

    def describe(self) -> str:
        """One line: ``a.py:3-5 moved: now lines 9-11``, ``b.py deleted``, ``c.py:4 changed``."""
        where = ""
        if self.new_range:
            where = f": now {_range_text(self.new_range)}"
        if self.status == RENAMED:
            where = f": now {self.new_path}" + (f" {_range_text(self.new_range)}" if self.new_range else "")
        note = f" ({self.note})" if self.note else ""
        return f"{self.citation} {self.status}{where}{note}"

    def to_json(self) -> dict:
        """The JSON object stored in ``evidence_checks.changes_json`` (a list of these)."""
        return {"citation": self.citation, "status": self.status, "path": self.path,
                "old_range": list(self.old_range) if self.old_range else None,
                "new_range": list(self.new_range) if self.new_range else None,
                "new_path": self.new_path, "diff": self.diff, "note": self.note}

    @classmethod
    def from_json(cls, data: dict) -> CitationChange:
        """The change :meth:`to_json` stored (unknown keys ignored)."""
        def rng(v):
            return (int(v[0]), int(v[1])) if isinstance(v, list | tuple) and len(v) == 2 else None

        return cls(citation=str(data.get("citation", "")), status=str(data.get("status", UNKNOWN)),
                   path=data.get("path"), old_range=rng(data.get("old_range")), new_range=rng(data.get("new_range")),
                   new_path=data.get("new_path"), diff=str(data.get("diff") or ""), note=str(data.get("note") or ""))


def _range_text(r: tuple[int, int]) -> str:
    return f"line {r[0]}" if r[0] == r[1] else f"lines {r[0]}-{r[1]}"


def pair_status(changes: list[CitationChange] | tuple[CitationChange, ...]) -> str:
    """A pair's evidence status from its citations' changes: ``stale`` when one is stale, else ``unknown`` when one
    is unknown, else ``ok`` (also for a pair that cites nothing)."""
    if any(c.stale for c in changes):
        return EVIDENCE_STALE
    if any(c.status == UNKNOWN for c in changes):
        return EVIDENCE_UNKNOWN
    return EVIDENCE_OK


def recheck_status(changes: list[CitationChange] | tuple[CitationChange, ...]) -> str:
    """The evidence status of a pair re-checked at one pin after an annotator edited its text (old and new files the
    same): like :func:`pair_status`, except that a citation naming no file of the repository keeps the pair
    ``stale`` (at one pin it cannot be "unknown": the file is simply not there)."""
    if any(c.status == UNKNOWN and c.path is None for c in changes):
        return EVIDENCE_STALE
    return pair_status(changes)


def find_block(lines: list[str], block: list[str], near: int) -> int | None:
    """The 0-based index where ``block`` occurs as consecutive whole lines of ``lines`` (the occurrence nearest to
    ``near``), or None. An empty block is never found. Line ends (``\\r``) and trailing blanks are compared as
    they are: a citation points at exact text."""
    n = len(block)
    if not n or n > len(lines):
        return None
    first = block[0]
    hits = [i for i, line in enumerate(lines[: len(lines) - n + 1]) if line == first and lines[i : i + n] == block]
    return min(hits, key=lambda i: (abs(i - near), i)) if hits else None


def lines_diff(old: list[str], new: list[str], path: str, old_start: int, new_path: str | None = None) -> str:
    """The unified diff (no context lines) of the cited ``old`` lines against the ``new`` lines at the same numbers,
    headed ``--- a/PATH`` / ``+++ b/PATH``, its hunk numbered from ``old_start`` (1-based) in both files."""
    out = difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{new_path or path}", n=0, lineterm="")
    lines = []
    for line in out:
        if line.startswith("@@"):
            line = _renumber(line, old_start)
        lines.append(line)
    return "\n".join(lines)


def _renumber(hunk: str, offset: int) -> str:
    """A ``@@ -a,b +c,d @@`` header of a diff of a slice renumbered to the file's lines (the slice starts at line
    ``offset``)."""
    def shift(m: re.Match) -> str:  # an empty side (",0") names the line before it, shifted the same
        return f"{m.group(1)}{int(m.group(2)) + offset - 1}{m.group(3) or ''}"

    return re.sub(r"([-+])(\d+)(,\d+)?", shift, hunk, count=2)


def compare_citation(citation: Citation, path: str | None, old: FileText, new: FileText, *,
                     new_path: str | None = None, note: str = "") -> CitationChange:
    """What became of ``citation`` (resolved to ``path`` at the old pin) between the file's ``old`` and ``new`` texts
    (see :data:`FileText`). ``new_path``: the file's path at the new pin when git records it renamed (``new`` is
    then that file's text). Pure: nothing is read here.

    Returns:
        A :class:`CitationChange`, its status one of :data:`CITATION_STATUSES` (rules in the module docstring).
    """
    cited = str(citation)
    rng = (citation.start, citation.end or citation.start) if citation.start is not None else None
    base = {"citation": cited, "path": path, "old_range": rng, "note": note}
    if path is None:
        return CitationChange(status=UNKNOWN, **{**base, "note": "not a file of the repository at the old pin"})
    if isinstance(old, Unreadable):
        return CitationChange(status=UNKNOWN, **{**base, "note": old.reason})
    if old is None:
        return CitationChange(status=UNKNOWN, **{**base, "note": "not a file of the repository at the old pin"})
    if new is None:
        return CitationChange(status=DELETED, **base)
    if isinstance(new, Unreadable):
        return CitationChange(status=UNKNOWN, **{**base, "note": new.reason})
    renamed = new_path is not None and new_path != path
    if rng is None:
        return CitationChange(status=RENAMED, new_path=new_path, **base) if renamed else \
            CitationChange(status=UNCHANGED, **base)
    start, end = rng
    old_lines, new_lines = file_lines(old), file_lines(new)
    if start < 1 or end > len(old_lines):
        return CitationChange(status=UNKNOWN, **{**base, "note": f"the cited lines were past the end of the file "
                                                                 f"at the old pin ({len(old_lines)} lines)"})
    block = old_lines[start - 1 : end]
    if new_lines[start - 1 : end] == block:
        return CitationChange(status=RENAMED, new_path=new_path, new_range=rng, **base) if renamed else \
            CitationChange(status=UNCHANGED, **base)
    at = find_block(new_lines, block, start - 1)
    if at is not None:
        moved = (at + 1, at + len(block))
        return CitationChange(status=RENAMED if renamed else MOVED, new_range=moved,
                              new_path=new_path if renamed else None, **base)
    diff = lines_diff(block, new_lines[start - 1 : end], path, start, new_path if renamed else None)
    return CitationChange(status=CHANGED, diff=diff, new_path=new_path if renamed else None, **base)


DIFF_LINES_SHOWN = 40
"""Lines of a citation's diff the command line and the app show before saying how many more there are."""
DIFF_LINE_CHARS = 400
"""Characters of a diff line shown; the rest is cut and the cut said."""


def diff_excerpt(diff: str, *, max_lines: int = DIFF_LINES_SHOWN,
                 max_chars: int = DIFF_LINE_CHARS) -> tuple[list[str], int]:
    """``(lines shown, lines not shown)`` of ``diff``: its first ``max_lines`` lines, each cut to ``max_chars``
    characters (a cut line ends in ``… [N more characters]``). Control characters are left as they are: the
    front end shows the lines literally (:func:`benchwright.core.text.printable`)."""
    lines = diff.split("\n") if diff else []
    shown = [line if len(line) <= max_chars else f"{line[:max_chars]}… [{len(line) - max_chars:,} more characters]"
             for line in lines[:max_lines]]
    return shown, max(0, len(lines) - max_lines)


# --------------------------------------------------------------------------------------- reading the two pins
class PinFiles(Protocol):
    """The files of a repository at one pin, as :func:`check_text` reads them."""

    def files(self) -> tuple[str, ...]:
        """Every file (repository-relative, ``/``-separated, sorted)."""

    def read(self, path: str) -> FileText:
        """The text of ``path`` (see :data:`FileText`)."""


class _CachedFiles:
    """Reads each file once; :meth:`has` / :meth:`has_suffix` let :func:`extract_citations` ask about files."""

    def __init__(self) -> None:
        self._texts: dict[str, FileText] = {}
        self._files: tuple[str, ...] | None = None
        self._set: frozenset[str] = frozenset()
        self._suffixes: frozenset[str] | None = None

    def _list(self) -> tuple[str, ...]:
        raise NotImplementedError

    def _read(self, path: str) -> FileText:
        raise NotImplementedError

    def files(self) -> tuple[str, ...]:
        """Every file (repository-relative, sorted), listed once."""
        if self._files is None:
            self._files = self._list()
            self._set = frozenset(self._files)
        return self._files

    def read(self, path: str) -> FileText:
        """The text of ``path`` (read once; invalid UTF-8 replaced), None when it is not a file here."""
        if path not in self._texts:
            self.files()
            self._texts[path] = self._read(path) if path in self._set else None
        return self._texts[path]

    def has(self, path: str) -> bool:
        """True when ``path`` is a file here."""
        self.files()
        return path in self._set

    def has_suffix(self, path: str) -> bool:
        """True when some file's path ends with ``path`` at a ``/`` boundary."""
        if self._suffixes is None:
            out: set[str] = set()
            for p in self.files():
                parts = p.split("/")
                out.update("/".join(parts[k:]) for k in range(len(parts)))
            self._suffixes = frozenset(out)
        return path in self._suffixes


class DirectoryFiles(_CachedFiles):
    """The files of a checkout folder ``root`` (read through :func:`~benchwright.core.repository.read_repository_file`:
    never outside the root)."""

    def __init__(self, root: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> None:
        super().__init__()
        self.root, self.max_bytes = Path(root), max_bytes

    def _list(self) -> tuple[str, ...]:
        return list_repository_files(self.root)

    def _read(self, path: str) -> FileText:
        try:
            return read_repository_file(self.root, path, max_bytes=self.max_bytes)
        except BenchwrightError as e:
            return Unreadable(str(e))


class GitCommitFiles(_CachedFiles):
    """The files of ``commit`` in the git repository of the work tree ``repo`` (``git ls-tree`` / ``git cat-file``)."""

    def __init__(self, repo: str | Path, commit: str, *, max_bytes: int = MAX_FILE_BYTES) -> None:
        super().__init__()
        self.repo, self.commit, self.max_bytes = Path(repo), commit, max_bytes
        self._sizes: dict[str, int] = {}

    def _list(self) -> tuple[str, ...]:
        self._sizes = git_commit_files(self.repo, self.commit) or {}
        return tuple(self._sizes)

    def _read(self, path: str) -> FileText:
        data = git_file_bytes(self.repo, self.commit, path, max_bytes=self.max_bytes, size=self._sizes.get(path))
        if data is None:
            return Unreadable(f"{path}: git could not read it at {self.commit[:12]} (or it is over "
                              f"{self.max_bytes:,} bytes)")
        return data.decode("utf-8", errors="replace")


def old_files(old: Repository, new_root: str | Path) -> tuple[PinFiles | None, str]:
    """Where the texts of ``old`` (the repository as registered before the move) are read, and how, in words:

    1. its checkout folder, when it is still there, is not ``new_root``, and (for a git checkout with a known
       commit) is still checked out, unchanged, at that commit;
    2. else its commit in the git repository of ``new_root`` (``git cat-file``), when that repository has it;
    3. else nowhere: ``(None, why)``; every citation is then ``unknown``.
    """
    new_root = Path(new_root).resolve()
    where = Path(old.local_path) if old.local_path else None
    if where is not None and where.is_dir() and where.resolve() != new_root:
        head = git_head(where)
        if head is None and not old.commit_verified:
            return DirectoryFiles(where), f"the old checkout {where}"
        if head is not None and old.commit and head.lower().startswith(old.commit.lower()) \
                and not git_changed_files(where):
            return DirectoryFiles(where), f"the old checkout {where} (at {head[:12]})"
    if old.commit:
        sha = git_commit_sha(new_root, old.commit)
        if sha:
            return GitCommitFiles(new_root, sha), f"git: commit {sha[:12]} in {new_root}"
        why = f"the old commit {old.commit[:12]} is not in the git repository of {new_root}"
    else:
        why = f"the old version {old.version_label or '(none)'} has no commit git could read"
    gone = "is gone" if where is None or not where.is_dir() else (
        "is the new checkout" if where.resolve() == new_root else "is no longer at the old pin")
    return None, f"{why}, and the old checkout {where or '(none)'} {gone}"


def resolve_path(cited: str, files: PinFiles, *, end: int | None = None) -> tuple[str | None, str]:
    """The repository-relative file ``cited`` names among ``files``: itself, else the one file ending with it; when
    several do, the first (in path order) long enough to hold line ``end``, else the first, with a note saying so
    (the rule of :func:`benchwright.core.evidence.resolve_citation`); ``(None, "")`` when none does."""
    if files.has(cited):
        return cited, ""
    suffix = "/" + cited.lstrip("/")
    matches = [p for p in files.files() if ("/" + p).endswith(suffix)]
    if len(matches) < 2:
        return (matches[0] if matches else None), ""
    chosen = matches[0]
    if end:
        fits = (p for p in matches if isinstance(t := files.read(p), str) and len(file_lines(t)) >= end)
        chosen = next(fits, chosen)
    return chosen, f"{len(matches)} files end with {cited}; compared {chosen}"


def check_text(text: str, old: PinFiles | None, new: PinFiles, *, renames: dict[str, str] | None = None,
               old_unreadable: str = "") -> list[CitationChange]:
    """Each citation of ``text`` (a pair's current question and reference answer) compared between the ``old`` pin's
    files and the ``new`` pin's (:func:`compare_citation`). Citations are found with the old pin's files (the pin
    they were written against; the new pin's when the old cannot be read). ``renames``: ``{old path: new path}``
    git reports. ``old`` None: every citation is ``unknown`` with ``old_unreadable`` as the note."""
    found = extract_citations(text, old if old is not None else new)
    out: list[CitationChange] = []
    for c in found:
        if old is None:
            out.append(compare_citation(c, c.path, Unreadable(old_unreadable or "the old pin cannot be read"), None))
            continue
        path, note = resolve_path(c.path, old, end=c.end or c.start)
        if path is None:
            out.append(compare_citation(c, None, None, None))
            continue
        new_text = new.read(path) if new.has(path) else None
        new_path = None
        if new_text is None and renames and path in renames and new.has(renames[path]):
            new_path = renames[path]
            new_text = new.read(new_path)
        out.append(compare_citation(c, path, old.read(path), new_text, new_path=new_path, note=note))
    return out
