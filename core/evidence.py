"""Evidence: the file paths and line references a reference answer cites, resolved in the repository.

Recognized forms (as SWE-QA and SWE-QA-Pro answers write them): ``src/flask/app.py``, ``app.py:42``,
``app.py:42-50``, ``src/flask/app.py (lines 144-148)``, ``base.py: line 107-115``,
``tests/test_helpers.py at line 102``, ``lines 120-140 of src/flask/app.py``, ``line 227 in base.py``.
A path with a known code extension is a citation on its own; given the repository's files, any other path
that names a file of the repository is one too (``include/foo.tpp:12``, ``scripts/run:3``, ``Makefile``).

Also the rules of the evidence viewer: which lexer highlights a file (:func:`choose_lexer`) and how much of
a file it reads, paints first and highlights (:class:`ViewerLimits`, set in the user configuration).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path

from .errors import BenchwrightError, UnsafePathError
from .repository import resolve_in_repository
from .text import printable

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
_ANY_PATH_RE = re.compile(
    r"(?<![A-Za-z0-9_./\-:])(?P<path>(?:\./)*(?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_\-.]*[A-Za-z0-9_\-])"
    r"(?![A-Za-z0-9_/\-]|\.[A-Za-z0-9_]|\()"
)
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


def extract_citations(text: str | None, files: RepositoryFiles | None = None) -> list[Citation]:
    """Citations in ``text``, in order of first appearance, without repeats.

    Paths with a known code extension are citations on their own. With ``files`` (the repository's files),
    any other path-like word is a citation when it names a file of the repository: one with a ``/`` or a
    dot-extension that is a file or the end of one (``include/foo.tpp``, ``scripts/run``, ``foo.ipp``), or a
    bare word that is exactly a file at the top of the repository (``Makefile``); other words never are.
    Dotted identifiers such as ``app.json.provider`` or ``flask.Flask`` are not paths; URLs are skipped.
    """
    if not text:
        return []
    spans: list[tuple[int, int, str]] = []
    for m in _PATH_RE.finditer(text):
        path = m.group("path")
        ext = path.rsplit(".", 1)[1].lower()
        if "/" not in path and ext in _BARE_EXCLUDED and not (files is not None and files.has(_clean(path))):
            continue
        spans.append((m.start(), m.end(), path))
    if files is not None:
        # the spans taken so far are in order and do not overlap, so their ends are in order too: a match overlaps
        # one of them exactly when it overlaps the last one starting before the match ends
        starts, ends = [a for a, _, _ in spans], [b for _, b, _ in spans]
        for m in _ANY_PATH_RE.finditer(text):
            m_start, m_end = m.span()
            i = bisect_left(starts, m_end) - 1
            if i >= 0 and ends[i] > m_start:
                continue
            path = _clean(m.group("path"))
            if "/" in path or "." in path.rsplit("/", 1)[-1].lstrip("."):
                ok = files.has(path) or files.has_suffix(path)
            else:
                ok = files.has(path)
            if ok:
                spans.append((m.start(), m.end(), m.group("path")))
        spans.sort()
    found: list[Citation] = []
    seen: set[Citation] = set()
    for m_start, m_end, path in spans:
        line_start = text.rfind("\n", 0, m_start) + 1
        prefix = text[line_start:m_start]
        if re.search(r"https?://\S*$|www\.\S*$", prefix) or path.lower().startswith("www."):
            continue
        start = end = None
        after = _AFTER.match(text[m_end : m_end + 40])
        before = _BEFORE.search(text[max(0, m_start - 40) : m_start])
        if after and after.group("colon"):
            start, end = int(after.group("colon")), after.group("colon_end")
        elif after and after.group("start"):
            start, end = int(after.group("start")), after.group("end")
        elif before:
            start, end = int(before.group("start")), before.group("end")
        end = int(end) if end else start
        if start is not None and end is not None and end < start:
            start, end = end, start
        c = Citation(_clean(path), start, end)
        if c not in seen:
            seen.add(c)
            found.append(c)
    return found


def _clean(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]  # not lstrip("./"), which would also eat the dot of ./.github/...
    return path


class RepositoryFiles:
    """The files of a repository checkout, as :func:`extract_citations` asks about them: :meth:`has` looks
    at one path (a file inside the root, not a symlink out); :meth:`has_suffix` walks the tree once per root
    (cached, skipping ``.git``, ``node_modules`` and the like)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._real = str(self.root.resolve())

    def has(self, path: str) -> bool:
        """True when ``path`` (repository-relative) is a file of the repository."""
        if "/" not in path and path not in _top_level(self._real):
            return False  # a bare word: one listing of the root answers, without a lookup per word
        return _openable(self.root, path)

    def has_suffix(self, path: str) -> bool:
        """True when some file's repository-relative path ends with ``path`` at a ``/`` boundary."""
        return path in _suffixes(self._real)


def list_repository_files(root: str | Path) -> tuple[str, ...]:
    """The files under ``root`` (repository-relative, ``/``-separated, sorted), read now (not cached), links not
    followed, ``.git``, ``node_modules`` and the like skipped."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        rel = os.path.relpath(dirpath, root)
        for f in filenames:
            out.append(f if rel == "." else f"{rel}/{f}".replace(os.sep, "/"))
    return tuple(sorted(out))


_file_index = lru_cache(maxsize=16)(list_repository_files)


@lru_cache(maxsize=16)
def _top_level(root: str) -> frozenset[str]:
    try:
        return frozenset(os.listdir(root))
    except OSError:
        return frozenset()


@lru_cache(maxsize=16)
def _suffixes(root: str) -> frozenset[str]:
    out: set[str] = set()
    for p in _file_index(root):
        parts = p.split("/")
        out.update("/".join(parts[k:]) for k in range(len(parts)))
    return frozenset(out)


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
    """:func:`extract_citations` of ``text`` (with the files of the checkout at ``root``, when there is one),
    each resolved by :func:`resolve_citation` (each cited file is line-counted once)."""
    counts: dict[str, int | None] = {}
    files = RepositoryFiles(root) if root is not None and Path(root).is_dir() else None
    return [resolve_citation(root, c, line_counts=counts) for c in extract_citations(text, files)]


# ------------------------------------------------------------------------------------------ the viewer
@dataclass(frozen=True)
class ViewerLimits:
    """How much of a cited file the evidence viewer reads, paints first and highlights.

    Set in the ``[evidence]`` table of the user configuration file (``config.toml``, see
    :mod:`benchwright.core.config`); :func:`viewer_limits` reads it.

    Attributes:
        window_lines: lines above and below the cited line that are prepared and painted first (plain,
            then highlighted), before the rest of the file.
        max_line_chars: characters of a line that are shown; the rest is cut and the cut marked
            (:func:`display_line`).
        highlight_max_bytes: files larger than this are shown without highlighting, and the viewer says so.
            (Smaller files are highlighted in blocks of lines as they come into view, never all at once.)
        max_file_bytes: files larger than this are not opened.
    """

    window_lines: int = 200
    max_line_chars: int = 2_000
    highlight_max_bytes: int = 2_000_000
    max_file_bytes: int = 10_000_000


def viewer_limits(table: object, *, origin: str = "[evidence]") -> ViewerLimits:
    """The :class:`ViewerLimits` of an ``[evidence]`` configuration table (None or {} gives the defaults).

    Raises:
        BenchwrightError: ``table`` is not a table, names an unknown setting, or a value is not a positive
            integer (the message names ``origin`` and the setting).
    """
    if table is None:
        return ViewerLimits()
    if not isinstance(table, dict):
        raise BenchwrightError(f"{origin}: must be a table of settings")
    known = tuple(f.name for f in fields(ViewerLimits))
    values: dict[str, int] = {}
    for key, value in table.items():
        if key not in known:
            raise BenchwrightError(f"{origin}: unknown setting {key!r} (known: {', '.join(known)})")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BenchwrightError(f"{origin} {key}: must be a positive integer, not {value!r}")
        values[key] = value
    return ViewerLimits(**values)


def load_viewer_limits() -> ViewerLimits:
    """The evidence viewer's limits from the ``[evidence]`` table of the user configuration file.

    Raises:
        BenchwrightError: the file is not valid TOML, or the table is invalid (see :func:`viewer_limits`).
    """
    from .config import config_path, load_user_config

    return viewer_limits(load_user_config().get("evidence"), origin=f"{config_path()} [evidence]")


CUT_MARK = " … [line cut: {n:,} more characters]"
"""Appended (styled apart) to a line the viewer cuts; ``{n}`` is the number of characters not shown."""


def display_line(line: str, max_chars: int) -> tuple[str, int]:
    """(the part of ``line`` the viewer shows, the number of characters cut off its end).

    Control characters are made visible (:func:`benchwright.core.text.printable`) and tabs expanded to 4
    columns after the cut, so a line of ``max_chars`` characters or fewer is shown whole."""
    cut = max(0, len(line) - max_chars)
    shown = line[:max_chars] if cut else line
    return printable(shown).expandtabs(4), cut


def file_lines(text: str) -> list[str]:
    """The lines of ``text`` as the viewer numbers them: split at ``\n`` only (a ``\r`` stays, shown as
    ``␍``), a final newline ending the last line rather than starting an empty one."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def display_lines(lines: list[str], max_chars: int) -> tuple[list[str], dict[int, int]]:
    """(``lines`` as shown by :func:`display_line`, {index: characters cut} for the lines cut). Lines
    that need nothing (printable, short) are kept as they are, so this is one cheap pass."""
    out: list[str] = []
    cut: dict[int, int] = {}
    for i, line in enumerate(lines):
        if len(line) > max_chars or not line.isprintable():
            line, n = display_line(line, max_chars)
            if n:
                cut[i] = n
        out.append(line)
    return out, cut


def cited_window(start: int | None, end: int | None, line_count: int, window: int) -> tuple[int, int]:
    """0-based half-open range ``[first, stop)`` of the lines painted first: ``window`` lines either side
    of the cited lines ``start``-``end`` (1-based; the top of the file without a citation), within
    ``0..line_count``."""
    if not start or start < 1:
        return 0, min(line_count, 2 * window + 1)
    first = max(0, min(start, line_count) - 1 - window)
    stop = min(line_count, max(end or start, start) + window)
    return first, max(first, stop)


_SHARED_NAMES = {"*.h": ("c", "cpp", "objective-c", "objective-c++", "cuda"), "*.inl": ("cpp", "c")}
"""File names pygments gives to fewer languages than use them (C++ headers are ``.h`` too)."""
_TEXT_ALIASES = {"text"}
_CONTENT_MIN_SCORE = 0.5
"""A content guess is taken only when this sure (pygments ``analyse_text``: shebangs and modelines give 1.0)."""


@lru_cache(maxsize=1)
def _lexer_table() -> tuple[tuple[str, tuple[str, ...], str], ...]:
    from pygments.lexers import get_all_lexers

    # (first alias, all aliases lowercased, name lowercased) in pygments' order, without importing lexers;
    # plugins left out: looking for them scans every installed distribution (half a second)
    return tuple(
        (aliases[0], tuple(a.lower() for a in aliases), name.lower())
        for name, aliases, _patterns, _mimetypes in get_all_lexers(plugins=False)
        if aliases
    )


@lru_cache(maxsize=1)
def _pattern_index() -> tuple[dict[str, list[int]], dict[str, list[int]], list[tuple[str, int]]]:
    """pygments' file name patterns by kind: exact names, ``*.ext`` endings, and the few others (globs)."""
    from pygments.lexers import get_all_lexers

    exact: dict[str, list[int]] = {}
    endings: dict[str, list[int]] = {}
    others: list[tuple[str, int]] = []
    rank = 0
    for _name, aliases, patterns, _mimetypes in get_all_lexers(plugins=False):
        if not aliases:
            continue
        for p in patterns:
            if not any(ch in p for ch in "*?["):
                exact.setdefault(p, []).append(rank)
            elif p.startswith("*.") and not any(ch in p[1:] for ch in "*?["):
                endings.setdefault(p[1:], []).append(rank)
            else:
                others.append((p, rank))
        rank += 1
    return exact, endings, others


def _name_candidates(name: str) -> list[str]:
    """First aliases of the lexers whose file name patterns match ``name``, in pygments' order."""
    import fnmatch

    exact, endings, others = _pattern_index()
    ranks = set(exact.get(name, ()))
    for k, ch in enumerate(name):
        if ch == "." and k:
            ranks.update(endings.get(name[k:], ()))
    ranks.update(r for p, r in others if fnmatch.fnmatchcase(name, p))
    table = _lexer_table()
    return [table[r][0] for r in sorted(ranks)]


def _language_alias(language: str | None) -> str | None:
    if not language or not language.strip():
        return None
    want = language.strip().lower()
    for alias, aliases, name in _lexer_table():
        if want in aliases or want == name:
            return alias
    return None


def _shebang_alias(text: str) -> str | None:
    """The lexer of a ``#!`` line's interpreter when a lexer has its name as an alias (``python3``, ``bash``,
    ``node``), without pygments' full content guess (which imports every lexer)."""
    if not text.startswith("#!"):
        return None
    words = text[2:].split("\n", 1)[0].split()
    words = [w.rsplit("/", 1)[-1] for w in words if not w.startswith("-")]
    if words and words[0] == "env":
        words = words[1:]
    if not words:
        return None
    name = words[0]
    for candidate in (name, name.rstrip("0123456789."), {"node": "javascript", "nodejs": "javascript"}.get(name, "")):
        alias = _language_alias(candidate) if candidate else None
        if alias:
            return alias
    return None


def _modeline_alias(text: str) -> str | None:
    """The lexer a vim modeline (``# vim: ft=python``) in the first or last lines of ``text`` names."""
    from pygments.modeline import get_filetype_from_buffer

    filetype = get_filetype_from_buffer(text)
    return _language_alias(filetype) if filetype else None


def choose_lexer(path: str, *, language: str | None = None, text: str = "") -> str | None:
    """The pygments lexer (its first alias, e.g. ``"cpp"``) that highlights the file ``path``, or None for
    plain text.

    The rule, in order: (1) the file name: the lexers whose file patterns match it (plus the C-family
    languages for ``.h`` and ``.inl``); (2) the repository's ``language`` (``"C++"``, ``"Python"``; a
    pygments alias or name) when it is one of them, else the only one, else pygments picks among them by
    content (``guess_lexer_for_filename``); (3) for a name no lexer claims (``scripts/run``, ``LICENSE``),
    the content: the interpreter of a ``#!`` line, a vim modeline, else pygments' guess from ``text`` (a
    prefix of the file, e.g. its first 4 KB) when it is sure (``analyse_text`` at least 0.5), else plain text.
    """
    import fnmatch

    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    candidates = list(dict.fromkeys(_name_candidates(name)))
    for pattern, aliases in _SHARED_NAMES.items():
        if fnmatch.fnmatchcase(name, pattern):
            candidates += [a for a in aliases if a not in candidates]
    if len(candidates) > 1:
        candidates = [a for a in candidates if a not in _TEXT_ALIASES]  # CMakeLists.txt is CMake
    chosen: str | None = None
    preferred = _language_alias(language)
    if preferred and preferred in candidates:
        chosen = preferred
    elif len(candidates) == 1:
        chosen = candidates[0]
    elif candidates:
        from pygments.lexers import guess_lexer_for_filename
        from pygments.util import ClassNotFound

        try:
            chosen = guess_lexer_for_filename(name, text).aliases[0]
        except ClassNotFound:
            chosen = None
        if chosen not in candidates:
            chosen = candidates[0]
    elif _shebang_alias(text) or _modeline_alias(text):
        chosen = _shebang_alias(text) or _modeline_alias(text)
    elif text.strip():
        from pygments.lexers import guess_lexer
        from pygments.util import ClassNotFound

        try:
            lexer = guess_lexer(text)
        except ClassNotFound:
            lexer = None
        if lexer is not None and lexer.aliases and type(lexer).analyse_text(text) >= _CONTENT_MIN_SCORE:
            chosen = lexer.aliases[0]
    return None if chosen in _TEXT_ALIASES else chosen
