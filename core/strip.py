"""Documentation stripping: the code-only copy of a repository (Code-QA-Bench, "Methodology", 2. Documentation
Removal (Environment-Level Control)): docstrings found by the AST and removed, with ``pass`` inserted where a body
would be empty; comments removed; ``docs/``, ``doc/``, ``README*``, ``*.md`` and ``*.rst`` deleted.

The rules, exactly (docs/repositories.md repeats them for users):

- Python files (``*.py``, ``*.pyi``): the docstrings of the module, of every class, function and async function
  (the string-literal expression statements that open a body; several in a row are all removed, so stripping
  twice changes nothing) are removed. A body left empty gets ``pass`` in the docstring's place; a module may be
  empty. Comments are the tokenizer's ``COMMENT`` tokens, so a ``#`` inside a string or an f-string is kept.
  Kept on purpose: a shebang (``#!`` on line 1; the OS reads it), a PEP 263 encoding declaration (lines 1-2; the
  interpreter reads it) and ``# type:`` comments (PEP 484 type comments and ``# type: ignore``: type checkers
  read them, like the annotations that are kept; they are counted in the manifest). Everything else — code,
  imports, annotations, other string literals (including strings after the first statement) — is kept byte for
  byte, with the file's encoding and line endings.
- A Python file that does not compile before stripping (a syntax error, a newer Python's syntax, NUL bytes, an
  undecodable encoding) is copied unchanged and listed with the reason. Every stripped file is compiled again;
  should one not compile, it too is copied unchanged and listed (a safety net, not expected to happen).
- Without ``keep_lines`` a line that stripping left blank is dropped (blank lines of the original stay). With
  ``keep_lines`` it stays as an empty line, so every remaining line keeps its original number and evidence cited
  against the full tree still resolves.
- Files: ``docs/`` and ``doc/`` at the top of the tree are deleted; anywhere in the tree a file whose name before
  its first dot is ``README`` (any case; ``README``, ``readme.txt``) or ending in ``.md`` or ``.rst`` (any case)
  is deleted, Python files excepted. ``.git`` (anywhere) is not copied: the copy is a plain directory recorded at
  the original's commit. Other files, binary or not UTF-8 included, are copied unchanged.
- Symbolic links are never followed. A link that resolves to a file or directory inside the tree that the copy
  keeps is recreated as a relative link to the copy of that target; a link that leads outside the tree, dangles,
  or points at something deleted is not copied and is listed. Sockets, FIFOs and devices are not copied, listed.

The manifest (:func:`strip_tree`'s return value, stored in ``repositories.manifest_json``, not written into the
copy) records per Python file what was removed, with line spans of the original; the files deleted; the files
copied unchanged with the reason; the links; and totals.
"""

from __future__ import annotations

import ast
import io
import os
import re
import shutil
import stat
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .errors import RepositoryError

CODE_ONLY = "code-only"
"""The derivation ``repos strip`` makes (``repositories.derivation``), named as the condition it serves."""

STRIP_RULES_VERSION = 1
"""Version of the rules above, recorded in every manifest; bump it when a rule changes."""

PYTHON_SUFFIXES = (".py", ".pyi")
DOC_DIRECTORIES = ("docs", "doc")
"""Directories deleted when they are at the top of the tree."""
DOC_SUFFIXES = (".md", ".rst")
NOT_COPIED = ".git"

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_ENDING = re.compile(r"(\r\n|\r|\n)\Z")
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
_TYPE_COMMENT = re.compile(r"#\s*type:")
_SEMICOLON = re.compile(r"\s*;\s*")


@dataclass(frozen=True)
class StrippedSource:
    """One Python source after stripping.

    Attributes:
        text: the stripped source.
        docstrings: line spans ``(first, last)`` (1-based, inclusive, of the original) of the docstrings removed.
        comments: lines (1-based, of the original) whose comment was removed.
        type_comments: lines of the ``# type:`` comments kept.
    """

    text: str
    docstrings: tuple[tuple[int, int], ...] = ()
    comments: tuple[int, ...] = ()
    type_comments: tuple[int, ...] = ()

    @property
    def changed(self) -> bool:
        """True when something was removed."""
        return bool(self.docstrings or self.comments)


@dataclass
class _Line:
    content: str
    ending: str
    touched: bool = False


def check_compiles(text: str, filename: str = "<source>") -> None:
    """Compile ``text`` as Python (warnings silenced; nothing is run).

    Raises:
        SyntaxError: it does not compile (``lineno`` and ``msg`` name the place).
        ValueError: it contains NUL bytes.
    """
    _compiled(text, filename)


def _compiled(text: str, filename: str) -> ast.Module:
    """The AST of ``text``, after compiling it (once parsed, the tree itself is compiled)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(text, filename)
        compile(tree, filename, "exec", dont_inherit=True)
    return tree


def strip_python_source(text: str, *, keep_lines: bool = False, filename: str = "<source>") -> StrippedSource:
    """Remove the docstrings and comments of the Python source ``text`` (the rules in this module's docstring).

    Raises:
        SyntaxError: ``text`` does not compile.
        ValueError: ``text`` contains NUL bytes.
    """
    tree = _compiled(text, filename)
    lines = []
    for raw in _LINES.findall(text):
        m = _ENDING.search(raw)
        ending = m.group(1) if m else ""
        lines.append(_Line(raw[: len(raw) - len(ending)], ending))
    original = [line.content for line in lines]

    comments, kept = [], []
    for tok in tokenize.generate_tokens(iter(line.content + line.ending for line in lines).__next__):
        if tok.type != tokenize.COMMENT:
            continue
        row, col = tok.start
        if _kept_comment(tok.string, row, original):
            if _TYPE_COMMENT.match(tok.string):
                kept.append(row)
            continue
        line = lines[row - 1]
        line.content, line.touched = line.content[:col].rstrip(), True  # no string is open before a comment
        comments.append(row)

    spans = []
    for body, empty_after in _docstring_groups(tree):
        for i, node in enumerate(body):
            first = i == 0
            spans.append((node.lineno, _chars(original[node.lineno - 1], node.col_offset), node.end_lineno,
                          _chars(original[node.end_lineno - 1], node.end_col_offset),
                          "pass" if first and empty_after else ""))
    for first, c0, last, c1, replacement in sorted(spans, reverse=True):
        suffix = lines[last - 1].content[c1:]
        m = _SEMICOLON.match(suffix)
        if m:
            suffix = suffix[m.end():]
        head = lines[first - 1]
        prefix = head.content[:c0]
        if keep_lines and last > first and suffix.strip() and not prefix.strip():
            # Code after a multi-line docstring's closing quotes stays on its own line (at the docstring's
            # indentation), so --keep-lines keeps its number: `"""a\n   b"""; return 2` -> `\n   return 2`.
            head.content, head.touched = (prefix + replacement).rstrip(), True
            for line in lines[first:last - 1]:
                line.content, line.touched = "", True
            lines[last - 1].content, lines[last - 1].touched = prefix + suffix, True
            continue
        # The code after the docstring is kept as it is: its trailing blanks may be inside a string it opens.
        head.content = prefix + replacement + suffix if suffix.strip() else (prefix + replacement).rstrip()
        head.touched = True
        for line in lines[first:last]:
            line.content, line.touched = "", True

    out = []
    for line in lines:
        if line.touched and not line.content.strip() and not keep_lines:
            continue
        out.append(line.content + line.ending)
    docstrings = tuple(sorted((s[0], s[2]) for s in spans))
    return StrippedSource("".join(out), docstrings, tuple(comments), tuple(kept))


def _kept_comment(comment: str, row: int, original: list[str]) -> bool:
    if row == 1 and comment.startswith("#!"):
        return True
    if row <= 2 and original[row - 1].lstrip().startswith("#") and _CODING.match(original[row - 1]):
        return True
    return bool(_TYPE_COMMENT.match(comment))


def _docstring_groups(tree: ast.Module) -> list[tuple[list[ast.stmt], bool]]:
    """``(leading string statements, body left empty)`` of every body with a docstring."""
    groups = []
    todo: list[ast.AST] = [tree]
    while todo:  # statements only: a class or function is always a statement of some body
        node = todo.pop()
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo.extend(child for child in getattr(node, name, ()) if isinstance(child, ast.stmt | ast.excepthandler
                                                                                     | ast.match_case))
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        leading = []
        for stmt in node.body:
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)):
                break
            leading.append(stmt)
        if leading:
            groups.append((leading, len(leading) == len(node.body) and not isinstance(node, ast.Module)))
    return groups


def _chars(line: str, byte_offset: int) -> int:
    """The character offset of the AST's UTF-8 byte offset ``byte_offset`` in ``line``."""
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))


# ----------------------------------------------------------------------------------------------- the tree
@dataclass
class _Walk:
    source: Path
    dest: Path
    keep_lines: bool
    files: dict = field(default_factory=dict)
    python_files: int = 0
    type_comments: int = 0
    copied: int = 0
    deleted: list = field(default_factory=list)
    unchanged: list = field(default_factory=list)
    links_kept: list = field(default_factory=list)
    links_skipped: list = field(default_factory=list)
    skipped: list = field(default_factory=list)


def is_documentation(relative: PurePosixPath, *, is_dir: bool) -> bool:
    """True when the copy drops ``relative`` (a path inside the tree): a top-level ``docs/`` or ``doc/``, or a
    file named ``README*`` (any case) or ``*.md`` / ``*.rst`` anywhere, Python files excepted."""
    name = relative.name
    if is_dir:
        return len(relative.parts) == 1 and name in DOC_DIRECTORIES
    lower = name.lower()
    if lower.endswith(PYTHON_SUFFIXES):
        return False
    return lower.split(".", 1)[0] == "readme" or lower.endswith(DOC_SUFFIXES)


def strip_tree(source: str | Path, dest: str | Path, *, keep_lines: bool = False) -> dict:
    """Write the code-only copy of the tree at ``source`` into the new directory ``dest`` (Code-QA-Bench,
    "Methodology" 2; the rules in this module's docstring) and return its manifest.

    The manifest (JSON-ready, sorted; paths are POSIX paths relative to the tree)::

        {"derivation": "code-only", "rules": 1, "keep_lines": bool,
         "files": {path: {"docstrings": n, "docstring_lines": [[first, last], ...], "comments": n,
                          "comment_lines": [...], "type_comments_kept": n, "lines": [before, after]}},
         "deleted": [path, ...], "unchanged": [{"path", "reason"}, ...],
         "links": {"kept": [{"path", "target"}], "skipped": [{"path", "target", "reason"}]},
         "skipped": [{"path", "reason"}],
         "totals": {"python_files", "stripped_files", "docstrings", "comments", "type_comments_kept",
                    "lines_removed", "files_deleted", "files_copied", "unchanged", "links_kept",
                    "links_skipped", "skipped"}}

    ``files`` lists the Python files something was removed from; ``files_copied`` counts every file written.

    Raises:
        RepositoryError: ``source`` is not a directory, ``dest`` exists or lies inside ``source``, or a file
            cannot be read or written (the path is named). ``dest`` may then hold part of the copy: callers
            write into a temporary directory and remove it on error.
    """
    src, out = Path(source).resolve(), Path(dest).absolute()
    if not src.is_dir():
        raise RepositoryError(f"{source}: not a directory")
    if out.exists() or out.is_symlink():
        raise RepositoryError(f"{dest}: already exists")
    if out.resolve() == src or src in out.resolve().parents:
        raise RepositoryError(f"{dest}: the copy cannot be written inside the repository it is made from ({src})")
    walk = _Walk(src, out, keep_lines)
    try:
        out.mkdir(parents=True)
        _copy_directory(walk, PurePosixPath())
    except OSError as e:
        where = e.filename or dest
        raise RepositoryError(f"{where}: cannot be copied ({e.strerror or e})") from None
    return _manifest(walk)


def _copy_directory(walk: _Walk, relative: PurePosixPath) -> None:
    with os.scandir(walk.source / relative) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        rel = relative / entry.name
        if entry.name == NOT_COPIED:
            continue
        if entry.is_symlink():
            _copy_link(walk, rel)
        elif entry.is_dir(follow_symlinks=False):
            if is_documentation(rel, is_dir=True):
                walk.deleted.extend(_files_under(walk.source, rel))
            else:
                (walk.dest / rel).mkdir()
                _copy_directory(walk, rel)
        elif entry.is_file(follow_symlinks=False):
            if is_documentation(rel, is_dir=False):
                walk.deleted.append(str(rel))
            elif entry.name.lower().endswith(PYTHON_SUFFIXES):
                _copy_python(walk, rel)
            else:
                shutil.copy2(walk.source / rel, walk.dest / rel, follow_symlinks=False)
                walk.copied += 1
        else:
            walk.skipped.append({"path": str(rel), "reason": f"not a regular file ({_kind(entry)})"})


def _files_under(root: Path, relative: PurePosixPath) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root / relative):
        dirs[:] = sorted(d for d in dirs if d != NOT_COPIED)
        base = PurePosixPath(Path(folder).relative_to(root).as_posix())
        found.extend(str(base / f) for f in sorted(files))
    return found or [f"{relative}/"]


def _kind(entry: os.DirEntry) -> str:
    mode = entry.stat(follow_symlinks=False).st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _copy_link(walk: _Walk, rel: PurePosixPath) -> None:
    link = walk.source / rel
    target = os.readlink(link)
    if is_documentation(rel, is_dir=link.is_dir()):
        walk.deleted.append(str(rel))
        return
    resolved = Path(os.path.realpath(link))
    reason = None
    if resolved != walk.source and walk.source not in resolved.parents:
        reason = "leads outside the repository"
    elif not resolved.exists():
        reason = "dangles (its target does not exist)"
    else:
        inside = PurePosixPath(resolved.relative_to(walk.source).as_posix())
        parts = inside.parts
        if NOT_COPIED in parts or (parts and (is_documentation(PurePosixPath(parts[0]), is_dir=len(parts) > 1
                                                               or resolved.is_dir())
                                             or (resolved.is_file() and is_documentation(inside, is_dir=False)))):
            reason = "points at something the copy does not keep"
    if reason:
        walk.links_skipped.append({"path": str(rel), "target": target, "reason": reason})
        return
    copy_target = walk.dest / inside
    os.symlink(os.path.relpath(copy_target, (walk.dest / rel).parent), walk.dest / rel)
    walk.links_kept.append({"path": str(rel), "target": target})


def _copy_python(walk: _Walk, rel: PurePosixPath) -> None:
    walk.python_files += 1
    source, dest = walk.source / rel, walk.dest / rel
    data = source.read_bytes()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as e:
        return _unchanged(walk, rel, f"cannot be decoded ({e})")
    try:
        stripped = strip_python_source(text, keep_lines=walk.keep_lines, filename=str(rel))
    except SyntaxError as e:
        return _unchanged(walk, rel, f"line {e.lineno}: {e.msg}" if e.lineno else str(e.msg))
    except (ValueError, tokenize.TokenError) as e:
        return _unchanged(walk, rel, str(e))
    walk.type_comments += len(stripped.type_comments)
    if not stripped.changed:
        shutil.copy2(source, dest)
        walk.copied += 1
        return None
    try:
        check_compiles(stripped.text, str(rel))
    except (SyntaxError, ValueError) as e:
        return _unchanged(walk, rel, f"stripping it would not compile ({e}); copied as it is")
    dest.write_bytes(stripped.text.encode(encoding))
    shutil.copystat(source, dest)
    walk.copied += 1
    walk.files[str(rel)] = {
        "docstrings": len(stripped.docstrings), "docstring_lines": [list(s) for s in stripped.docstrings],
        "comments": len(stripped.comments), "comment_lines": list(stripped.comments),
        "type_comments_kept": len(stripped.type_comments),
        "lines": [len(_LINES.findall(text)), len(_LINES.findall(stripped.text))],
    }
    return None


def _unchanged(walk: _Walk, rel: PurePosixPath, reason: str) -> None:
    shutil.copy2(walk.source / rel, walk.dest / rel)
    walk.copied += 1
    walk.unchanged.append({"path": str(rel), "reason": reason})


def _manifest(walk: _Walk) -> dict:
    files = walk.files
    return {
        "derivation": CODE_ONLY, "rules": STRIP_RULES_VERSION, "keep_lines": walk.keep_lines,
        "files": files, "deleted": sorted(walk.deleted), "unchanged": walk.unchanged,
        "links": {"kept": walk.links_kept, "skipped": walk.links_skipped}, "skipped": walk.skipped,
        "totals": {
            "python_files": walk.python_files, "stripped_files": len(files),
            "docstrings": sum(f["docstrings"] for f in files.values()),
            "comments": sum(f["comments"] for f in files.values()),
            "type_comments_kept": walk.type_comments,
            "lines_removed": sum(f["lines"][0] - f["lines"][1] for f in files.values()),
            "files_deleted": len(walk.deleted), "files_copied": walk.copied, "unchanged": len(walk.unchanged),
            "links_kept": len(walk.links_kept), "links_skipped": len(walk.links_skipped),
            "skipped": len(walk.skipped),
        },
    }
