"""Documentation chunks of a repository, scored for answer-first generation (Code-QA-Bench "Methodology" 3,
"Chunk Selection").

A repository's documentation is split into chunks: Markdown sections (ATX headings ``#`` .. ``######``, outside
fenced code blocks), reStructuredText sections (a title line underlined, and optionally overlined, with one
punctuation character repeated at least as long as the title), and the docstrings of Python modules, classes and
functions (:mod:`ast`). Each chunk gets features in [0, 1] and a score, their weighted mean. The paper names the
three signals (content quality, code references, structural signals); the features and weights are ours:

========================  ====================================================================================
feature                   what it measures
========================  ====================================================================================
``length``                words of prose against a target (:attr:`ChunkSettings.target_words`): 1 from the
                          target up to :attr:`ChunkSettings.max_words`, falling to 0.5 at twice that
``prose``                 share of the chunk's non-blank lines that are prose (not in a code block, a literal
                          block, a doctest or a table)
``references``            code references that resolve in the repository, against a target
                          (:attr:`ChunkSettings.target_references`); a reference is a backticked span, a dotted
                          name, a call ``name()`` or a path, and it resolves when its last name is a module,
                          class, function or method defined in the repository's Python code, or it is a file
                          of the repository
``reference_precision``   resolving references over all references found (0 when none)
``structure``             the mean of four signs: a heading, a list, a code block, two paragraphs or more
========================  ====================================================================================

Deterministic: the same repository and settings give the same chunks, features and scores (sorted paths, no
randomness). Pure: no store, no Textual.
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import BenchwrightError

FEATURES = ("length", "prose", "references", "reference_precision", "structure")
"""The features every chunk is scored on, in the order they are shown."""

DEFAULT_WEIGHTS: dict[str, float] = {"length": 0.2, "prose": 0.15, "references": 0.3, "reference_precision": 0.15,
                                     "structure": 0.2}
"""The default weight of each feature (ours; they sum to 1). ``[generation.weights]`` in benchwright.toml or
``--weight NAME=VALUE`` changes them."""

CHUNK_KINDS = ("markdown", "rst", "docstring")
"""What a chunk was cut from: a Markdown section, a reStructuredText section, a Python docstring."""

MARKDOWN_SUFFIXES = (".md", ".markdown")
RST_SUFFIXES = (".rst",)
DEFAULT_EXCLUDE = ("changes*", "changelog*", "history*", "news*", "license*", "licence*", "authors*")
"""File names not read by default (:attr:`ChunkSettings.exclude`)."""
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules", "__pycache__",
                          "build", "dist", ".mypy_cache", ".pytest_cache", "site-packages"})
"""Folders never read (version control, environments, build output)."""


class ChunkSettingsError(BenchwrightError):
    """A weight or a chunking setting is not usable (unknown feature, negative, all zero)."""


@dataclass(frozen=True)
class ChunkSettings:
    """How chunks are cut and scored.

    Attributes:
        weights: feature -> weight (>= 0, at least one > 0); features not given keep their default weight.
        min_words: a chunk with fewer words (prose and code) is not kept (a heading alone, a one-line docstring).
        target_words: prose words for a full ``length`` score.
        max_words: above this many prose words ``length`` falls (a long chunk is harder to answer from).
        target_references: resolving references for a full ``references`` score.
        max_file_bytes: larger files are not read.
        exclude: file-name patterns (:func:`fnmatch.fnmatch`, case-insensitive) of files never read: change logs
            and licences by default (their sections are release notes, not descriptions of the code).
    """

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    min_words: int = 20
    target_words: int = 120
    max_words: int = 600
    target_references: int = 4
    max_file_bytes: int = 2_000_000
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE

    @classmethod
    def from_weights(cls, weights: Mapping[str, float] | None = None, **kwargs) -> ChunkSettings:
        """Settings with ``weights`` over :data:`DEFAULT_WEIGHTS`.

        Raises:
            ChunkSettingsError: an unknown feature, a negative weight, or every weight zero.
        """
        merged = dict(DEFAULT_WEIGHTS)
        for name, value in (weights or {}).items():
            if name not in FEATURES:
                raise ChunkSettingsError(f"unknown chunk feature {name!r}; features are {', '.join(FEATURES)}")
            if not isinstance(value, int | float) or isinstance(value, bool) or value < 0 or value != value:
                raise ChunkSettingsError(f"weight of {name} must be a number >= 0, not {value!r}")
            merged[name] = float(value)
        if not any(merged.values()):
            raise ChunkSettingsError("every chunk feature weight is 0: give at least one a positive weight")
        return cls(weights=merged, **kwargs)


@dataclass(frozen=True)
class DocChunk:
    """One documentation chunk and its score.

    Attributes:
        id: ``dc_`` + 16 hex digits of a SHA-256 of repository, path, kind, title and text (stable: the same
            text at another line keeps its id).
        repository: the registered repository's name.
        path: the file, relative to the repository root, with ``/``.
        start_line, end_line: 1-based, inclusive.
        kind: one of :data:`CHUNK_KINDS`.
        title: the section heading, or the docstring's qualified name (``module``, ``Class.method``).
        text: the chunk as written (a docstring cleaned by :func:`inspect.cleandoc`).
        features: feature -> value in [0, 1].
        references: the references found, each ``(text, resolves)``.
        score: the weighted mean of the features, in [0, 1].
    """

    id: str
    repository: str
    path: str
    start_line: int
    end_line: int
    kind: str
    title: str
    text: str
    features: dict[str, float]
    references: tuple[tuple[str, bool], ...]
    score: float


def chunk_id(repository: str, path: str, kind: str, title: str, text: str) -> str:
    """The id of a chunk (see :attr:`DocChunk.id`)."""
    h = hashlib.sha256()
    for part in (repository, path, kind, title, text):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return "dc_" + h.hexdigest()[:16]


# -------------------------------------------------------------------------------------------- the repository
def _files(root: Path) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                continue
            out.append(p.relative_to(root).as_posix())
    return sorted(out)


@dataclass(frozen=True)
class CodeIndex:
    """What a reference may resolve to: the repository's files, and the names its Python code defines (modules,
    classes, functions, methods)."""

    files: frozenset[str]
    names: frozenset[str]

    def resolves(self, ref: str) -> bool:
        """True when ``ref`` is a file of the repository (or a path ending in one) or its last dotted name is
        defined in the code."""
        r = ref.strip().strip("`").rstrip("()").strip()
        if not r:
            return False
        if "/" in r:
            r = r.lstrip("./")
            return r in self.files or any(f.endswith("/" + r) for f in self.files)
        last = re.split(r"[.:]", r)[-1]
        return last in self.names or r in self.files


def code_index(root: Path, files: Iterable[str], *, max_file_bytes: int = 2_000_000) -> CodeIndex:
    """The :class:`CodeIndex` of ``root`` from its ``files`` (relative paths); a Python file that does not parse
    gives its module name only."""
    files = list(files)
    names: set[str] = set()
    for rel in files:
        if not rel.endswith(".py"):
            continue
        stem = Path(rel).stem
        names.add(Path(rel).parent.name if stem == "__init__" else stem)
        tree = _parse_python(root / rel, max_file_bytes)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
    names.discard("")
    return CodeIndex(frozenset(files), frozenset(names))


def _read_text(path: Path, max_file_bytes: int) -> str | None:
    try:
        if path.stat().st_size > max_file_bytes:
            return None
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None


def _parse_python(path: Path, max_file_bytes: int) -> ast.Module | None:
    text = _read_text(path, max_file_bytes)
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


# --------------------------------------------------------------------------------------------------- cutting
@dataclass(frozen=True)
class _Raw:
    path: str
    start: int
    end: int
    kind: str
    title: str
    text: str


_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:._!$%&,;<>?@\\|/])\1{2,}\s*$")


def split_markdown(path: str, text: str) -> list[_Raw]:
    """Markdown sections: each ATX heading outside a fenced code block starts one; text before the first heading
    is a section titled with the file name."""
    lines = text.splitlines()
    starts: list[tuple[int, str]] = []
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _ATX.match(line)
        if m:
            starts.append((i, m.group(2)))
    return _sections(path, lines, starts, "markdown")


def split_rst(path: str, text: str) -> list[_Raw]:
    """reStructuredText sections: a title line followed by an underline (one punctuation character repeated, at
    least as long as the title); an overline above it belongs to the section."""
    lines = text.splitlines()
    starts: list[tuple[int, str]] = []
    for i in range(len(lines) - 1):
        title, under = lines[i], lines[i + 1]
        if not title.strip() or title.startswith((" ", "\t")) or _RST_UNDERLINE.match(title):
            continue
        if _RST_UNDERLINE.match(under) and len(under.rstrip()) >= len(title.rstrip()):
            has_over = i > 0 and _RST_UNDERLINE.match(lines[i - 1]) and lines[i - 1].strip() == under.strip()
            starts.append((i - 1 if has_over else i, title.strip()))
    return _sections(path, lines, starts, "rst")


def _sections(path: str, lines: list[str], starts: list[tuple[int, str]], kind: str) -> list[_Raw]:
    out: list[_Raw] = []
    bounds = [(0, Path(path).name)] if not starts or starts[0][0] > 0 else []
    bounds += starts
    for n, (start, title) in enumerate(bounds):
        end = bounds[n + 1][0] if n + 1 < len(bounds) else len(lines)
        body = "\n".join(lines[start:end]).strip("\n")
        if body.strip():
            first = start + next(i for i, line in enumerate(lines[start:end]) if line.strip())
            last = start + max(i for i, line in enumerate(lines[start:end]) if line.strip())
            out.append(_Raw(path, first + 1, last + 1, kind, title, body))
    return out


def split_docstrings(path: str, tree: ast.Module) -> list[_Raw]:
    """The docstrings of the module, its classes and functions (nested ones too), titled by qualified name
    (``module`` for the module's own)."""
    out: list[_Raw] = []

    def take(node, title: str) -> None:
        doc = ast.get_docstring(node, clean=True)
        body = getattr(node, "body", None)
        if not doc or not body or not isinstance(body[0], ast.Expr):
            return
        expr = body[0]
        out.append(_Raw(path, expr.lineno, expr.end_lineno or expr.lineno, "docstring", title, doc))

    def walk(node, prefix: str) -> None:
        for child in getattr(node, "body", []):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                take(child, name)
                walk(child, name + ".")

    take(tree, "module")
    walk(tree, "")
    return out


# --------------------------------------------------------------------------------------------------- scoring
_REF = re.compile(
    r"``([^`\n]+)``|`([^`\n]+)`"                                # backticked spans (Markdown, RST literals)
    r"|\b((?:[A-Za-z_][\w-]*/)+[\w.-]+\.[A-Za-z]{1,5})\b"       # paths with a folder and an extension
    r"|\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?"            # dotted names
    r"|\b([A-Za-z_]\w*\(\))"                                    # calls
)
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.I)
_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj):`~?([^`<]+?)(?:\s*<([^>]+)>)?`")


def references(text: str) -> list[str]:
    """The code references in ``text``, in first-seen order without repeats (see the module docstring); Sphinx
    roles (``:func:`name```) count as one reference to their target."""
    seen: dict[str, None] = {}
    for m in _ROLE.finditer(text):
        seen.setdefault((m.group(2) or m.group(1)).strip(), None)
    rest = _URL.sub(" ", _ROLE.sub(" ", text))
    for m in _REF.finditer(rest):
        ref = next(g for g in m.groups() if g)
        ref = ref.strip()
        if ref and len(ref) <= 200:
            seen.setdefault(ref, None)
    return list(seen)


_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#\.)\s+\S")
_TABLE = re.compile(r"^\s*(\|.*\||[+=\-]{3,}[+=\- ]*)\s*$")


def _code_lines(kind: str, lines: list[str]) -> list[bool]:
    """For each line, True when it is code: in a fenced block, an RST literal block (after ``::``), an indented
    block in Markdown, a doctest, or a table."""
    flags: list[bool] = []
    fenced = False
    literal_indent: int | None = None
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if _FENCE.match(line):
            fenced = not fenced
            flags.append(True)
            continue
        if fenced:
            flags.append(True)
            continue
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                flags.append(bool(stripped))
                continue
            literal_indent = None
        markdown_indented = kind == "markdown" and indent >= 4 and bool(stripped)
        flags.append(bool(stripped.startswith((">>>", "...", ".. code")) or _TABLE.match(line) or markdown_indented))
        if stripped.endswith("::") or stripped.startswith(".. code"):
            literal_indent = indent
    return flags


def score_chunk(raw_kind: str, text: str, index: CodeIndex, settings: ChunkSettings) -> tuple[
        dict[str, float], list[tuple[str, bool]], float, int]:
    """The features of one chunk, its references (each with whether it resolves), its score and its word count.

    Returns:
        ``(features, references, score, words)``: features in [0, 1] (see the module docstring), the score their
        mean weighted by ``settings.weights``, ``words`` all the chunk's words (prose and code).
    """
    lines = text.splitlines()
    code = _code_lines(raw_kind, lines)
    nonblank = [(line, c) for line, c in zip(lines, code, strict=True) if line.strip()]
    prose_lines = [line for line, c in nonblank if not c]
    prose_words = sum(len(line.split()) for line in prose_lines)
    words = len(text.split())
    if prose_words <= settings.max_words:
        length = min(1.0, prose_words / settings.target_words) if settings.target_words else 1.0
    else:
        length = max(0.5, 1.0 - 0.5 * (prose_words - settings.max_words) / settings.max_words)
    prose = len(prose_lines) / len(nonblank) if nonblank else 0.0
    refs = [(r, index.resolves(r)) for r in references(text)]
    resolving = sum(ok for _, ok in refs)
    ref_score = min(1.0, resolving / settings.target_references) if settings.target_references else 0.0
    precision = resolving / len(refs) if refs else 0.0
    heading = raw_kind in ("markdown", "rst") and bool(lines) and (
        bool(_ATX.match(lines[0])) or (len(lines) > 1 and bool(_RST_UNDERLINE.match(lines[1])))
        or (len(lines) > 2 and bool(_RST_UNDERLINE.match(lines[0]))))
    paragraphs = len([p for p in re.split(r"\n\s*\n", text) if p.strip()])
    signs = [heading, any(_LIST.match(line) for line in lines), any(code), paragraphs >= 2]
    structure = sum(signs) / len(signs)
    features = {"length": length, "prose": prose, "references": ref_score, "reference_precision": precision,
                "structure": structure}
    features = {k: round(v, 4) for k, v in features.items()}
    total = sum(settings.weights.get(k, 0.0) for k in FEATURES)
    score = round(sum(features[k] * settings.weights.get(k, 0.0) for k in FEATURES) / total, 4)
    return features, refs, score, words


def doc_chunks(root: str | Path, repository: str, settings: ChunkSettings | None = None,
               top: int | None = None) -> list[DocChunk]:
    """Every documentation chunk of the repository at ``root`` with at least ``settings.min_words`` words,
    scored, best first (ties by path and line); ``top`` keeps the best ``top``.

    Markdown files (``.md``, ``.markdown``), reStructuredText files (``.rst``) and the docstrings of Python files
    are read; folders in :data:`SKIPPED_DIRS`, hidden folders, symlinks and files matching
    ``settings.exclude`` are not. Code-QA-Bench "Methodology"
    3 (chunk selection); the features and weights are ours (module docstring).

    Raises:
        BenchwrightError: ``root`` is not a folder.
    """
    settings = settings or ChunkSettings()
    root = Path(root)
    if not root.is_dir():
        raise BenchwrightError(f"{root} is not a folder: the repository's checkout is needed to cut its documentation")
    files = _files(root)
    index = code_index(root, files, max_file_bytes=settings.max_file_bytes)
    raws: list[_Raw] = []
    for rel in files:
        lower = rel.lower()
        if any(fnmatch.fnmatch(lower.rsplit("/", 1)[-1], pattern.lower()) for pattern in settings.exclude):
            continue
        if lower.endswith(MARKDOWN_SUFFIXES + RST_SUFFIXES):
            text = _read_text(root / rel, settings.max_file_bytes)
            if text is None:
                continue
            raws += split_markdown(rel, text) if lower.endswith(MARKDOWN_SUFFIXES) else split_rst(rel, text)
        elif lower.endswith(".py"):
            tree = _parse_python(root / rel, settings.max_file_bytes)
            if tree is not None:
                raws += split_docstrings(rel, tree)
    chunks: dict[str, DocChunk] = {}
    for raw in raws:
        features, refs, score, words = score_chunk(raw.kind, raw.text, index, settings)
        if words < settings.min_words:
            continue
        cid = chunk_id(repository, raw.path, raw.kind, raw.title, raw.text)
        chunks.setdefault(cid, DocChunk(cid, repository, raw.path, raw.start, raw.end, raw.kind, raw.title,
                                        raw.text, features, tuple(refs), score))
    ranked = sorted(chunks.values(), key=lambda c: (-c.score, c.path, c.start_line))
    return ranked[:top] if top else ranked


__all__ = ["CHUNK_KINDS", "DEFAULT_WEIGHTS", "FEATURES", "ChunkSettings", "ChunkSettingsError", "CodeIndex",
           "DocChunk", "chunk_id", "code_index", "doc_chunks", "references", "score_chunk", "split_docstrings",
           "split_markdown", "split_rst"]
