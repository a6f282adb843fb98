"""Evidence: the file paths and line references a reference answer cites, resolved in the repository.

Recognized forms (as SWE-QA and SWE-QA-Pro answers write them): ``src/flask/app.py``, ``app.py:42``,
``app.py:42-50``, ``src/flask/app.py (lines 144-148)``, ``base.py: line 107-115``,
``tests/test_helpers.py at line 102``, ``lines 120-140 of src/flask/app.py``, ``line 227 in base.py``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .errors import UnsafePathError
from .repository import resolve_in_repository

_CODE_EXT = (
    "py|pyi|pyx|js|jsx|ts|tsx|mjs|go|rs|java|kt|scala|c|h|cc|cpp|hpp|cs|rb|php|swift|m|sh|bash|sql|"
    "toml|cfg|ini|md|rst|txt|html|htm|css|yml|yaml|xml|proto|lua|r|jl|ex|exs|erl|hs|ml|vue|svelte|json|lock"
)
_BARE_EXCLUDED = {"json", "txt", "lock", "md", "r", "m", "html", "xml", "css"}
_PATH = rf"(?P<path>(?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_\-][A-Za-z0-9_.\-]*\.(?:{_CODE_EXT}))"
_RANGE = r"(?P<start>\d+)(?:\s*(?:-|–|—|to)\s*(?P<end>\d+))?"
_AFTER = re.compile(
    rf"^(?:(?::L?|#L)(?P<colon>\d+)(?:[-–—]L?(?P<colon_end>\d+))?|`?\s*(?:\(|:|,)?\s*(?:at\s+|on\s+)?lines?\s+{_RANGE})",
    re.IGNORECASE,
)
_BEFORE = re.compile(rf"lines?\s+{_RANGE}\s+(?:of|in)\s+`?$", re.IGNORECASE)
_PATH_RE = re.compile(rf"(?<![A-Za-z0-9_./\-:]){_PATH}(?![A-Za-z0-9_/\-]|\.[A-Za-z0-9_]|\()")
_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"}


@dataclass(frozen=True)
class Citation:
    """A cited path with an optional 1-based line range (``end`` >= ``start``; both None for no lines)."""

    path: str
    start: int | None = None
    end: int | None = None

    def __str__(self) -> str:
        if self.start is None:
            return self.path
        if self.end and self.end != self.start:
            return f"{self.path}:{self.start}-{self.end}"
        return f"{self.path}:{self.start}"


@dataclass(frozen=True)
class Evidence:
    """A citation resolved against a repository.

    Attributes:
        citation: what the answer cited.
        status: ``found`` (the path exists as cited), ``found-by-suffix`` (one file ends with it),
            ``ambiguous`` (several do; ``candidates`` lists them), ``missing`` (none does),
            ``unsafe`` (it leads out of the repository, or the only files ending with it are symlinks out), or
            ``no-repository`` (no local checkout, or its folder is gone).
        path: the repository-relative path to open, when there is one.
        candidates: repository-relative matches, sorted, for ``ambiguous``.
        line_count: lines in the file at ``path`` (None when nothing was opened).
    """

    citation: Citation
    status: str
    path: str | None = None
    candidates: tuple[str, ...] = field(default_factory=tuple)
    line_count: int | None = None

    @property
    def beyond_end(self) -> bool:
        """True when the cited lines start or end past the file's last line (or at line 0)."""
        if self.citation.start is None or self.line_count is None:
            return False
        end = self.citation.end or self.citation.start
        return self.citation.start < 1 or end > self.line_count

    @property
    def openable(self) -> bool:
        """True when there is a file to open."""
        return self.path is not None


def extract_citations(text: str | None) -> list[Citation]:
    """Citations in ``text``, in order of first appearance, without repeats.

    Dotted identifiers such as ``app.json.provider`` or ``flask.Flask`` are not paths; URLs are skipped.
    """
    if not text:
        return []
    found: list[Citation] = []
    seen: set[Citation] = set()
    for m in _PATH_RE.finditer(text):
        path = m.group("path")
        ext = path.rsplit(".", 1)[1].lower()
        if "/" not in path and ext in _BARE_EXCLUDED:
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        prefix = text[line_start : m.start()]
        if re.search(r"https?://\S*$|www\.\S*$", prefix) or path.lower().startswith("www."):
            continue
        start = end = None
        after = _AFTER.match(text[m.end() : m.end() + 40])
        before = _BEFORE.search(text[max(0, m.start() - 40) : m.start()])
        if after and after.group("colon"):
            start, end = int(after.group("colon")), after.group("colon_end")
        elif after and after.group("start"):
            start, end = int(after.group("start")), after.group("end")
        elif before:
            start, end = int(before.group("start")), before.group("end")
        end = int(end) if end else start
        if start is not None and end is not None and end < start:
            start, end = end, start
        while path.startswith("./"):
            path = path[2:]  # not lstrip("./"), which would also eat the dot of ./.github/...
        c = Citation(path, start, end)
        if c not in seen:
            seen.add(c)
            found.append(c)
    return found


@lru_cache(maxsize=16)
def _file_index(root: str) -> tuple[str, ...]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        rel = os.path.relpath(dirpath, root)
        for f in filenames:
            out.append(f if rel == "." else f"{rel}/{f}".replace(os.sep, "/"))
    return tuple(sorted(out))


def _safe(root: str | Path, relative: str) -> bool:
    try:
        resolve_in_repository(root, relative)
    except UnsafePathError:
        return False
    return True


def _openable(root: str | Path, relative: str) -> bool:
    """True when ``relative`` is a file inside ``root`` (not a symlink out, not a broken link)."""
    try:
        return resolve_in_repository(root, relative).is_file()
    except UnsafePathError:
        return False


def _count_lines(root: str | Path, relative: str) -> int | None:
    try:
        with (Path(root) / relative).open("rb") as fh:
            data = fh.read(MAX_COUNT_BYTES)
    except OSError:
        return None
    return len(data.splitlines())


MAX_COUNT_BYTES = 2_000_000
"""Files larger than this are not line-counted for the out-of-range check."""


def resolve_citation(
    root: str | Path | None, citation: Citation, *, line_counts: dict[str, int | None] | None = None
) -> Evidence:
    """Resolve ``citation`` inside the repository at ``root`` (see :class:`Evidence` for the outcomes);
    for a cited line range, the file's line count is read so a range past its end can be flagged.
    ``line_counts`` caches counts by path across citations of one text (an answer often cites one file
    many times)."""
    ev = _resolve(root, citation)
    if not ev.path or citation.start is None:
        return ev
    cache = line_counts if line_counts is not None else {}

    def count(path: str) -> int | None:
        if path not in cache:
            cache[path] = _count_lines(root, path)
        return cache[path]

    candidates = ev.candidates
    if ev.status == "ambiguous":
        # files long enough to hold the cited lines first: the citation most likely means one of them
        end = citation.end or citation.start
        fits = tuple(p for p in candidates if (count(p) or 0) >= end)
        candidates = fits + tuple(p for p in candidates if p not in fits)
    path = candidates[0] if candidates else ev.path
    return Evidence(ev.citation, ev.status, path, candidates, count(path))


def _resolve(root: str | Path | None, citation: Citation) -> Evidence:
    if root is None or not Path(root).is_dir():
        return Evidence(citation, "no-repository")
    try:
        target = resolve_in_repository(root, citation.path)
    except UnsafePathError:
        return Evidence(citation, "unsafe")
    if target.is_file():
        return Evidence(citation, "found", citation.path)
    suffix = "/" + citation.path.lstrip("/")
    named = [p for p in _file_index(str(Path(root).resolve())) if ("/" + p).endswith(suffix)]
    matches = tuple(p for p in named if _openable(root, p))
    if named and not matches and any(not _safe(root, p) for p in named):
        return Evidence(citation, "unsafe")
    if len(matches) == 1:
        return Evidence(citation, "found-by-suffix", matches[0])
    if matches:
        return Evidence(citation, "ambiguous", matches[0], matches)
    return Evidence(citation, "missing")


def gather_evidence(root: str | Path | None, text: str | None) -> list[Evidence]:
    """:func:`extract_citations` of ``text``, each resolved by :func:`resolve_citation` (each cited file is
    line-counted once)."""
    counts: dict[str, int | None] = {}
    return [resolve_citation(root, c, line_counts=counts) for c in extract_citations(text)]
