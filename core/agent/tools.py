"""The agent's read-only tools (SWE-QA-Pro §3.1): Search, View, CommandLine and Finish.

Each tool is offered to the model as a :class:`~benchwright.core.llm.base.ToolSpec` (:data:`TOOLS`) whose JSON
Schema fits both OpenAI's strict function calling (every property required, optional ones nullable,
``additionalProperties: false``) and Anthropic's ``input_schema``. :func:`execute` runs one call and returns a
:class:`ToolResult`; a call that cannot run (an unknown tool, bad arguments, a path outside the workspace, a
command that is not allowed, a timeout) comes back with ``ok`` False and an output that says why, and the run goes
on. No tool writes anything.

- **search**: a plain substring match over the workspace's text files (optionally under a path or matching a glob):
  the match count per file, then up to ``search_max_hits`` matching lines as ``path:line: text``.
- **view**: a file's lines, numbered (a range with ``start_line`` / ``end_line``), a folder's entries, or with
  ``outline`` a Python file's classes and functions with their line ranges (from :mod:`ast`).
- **command_line**: one allowlisted inspection command (:data:`ALLOWED_COMMANDS`), split with :mod:`shlex` and run
  as an argument vector without a shell, in the workspace, under a timeout, with a minimal environment
  (:func:`command_environment`: no API keys), output capped. :func:`check_command` holds the rules.
- **finish**: the final answer; the loop (:mod:`.loop`) handles it, :func:`execute` never runs it.
"""

from __future__ import annotations

import ast
import fnmatch
import glob
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import RepositoryError, UnsafePathError
from ..llm.base import ToolSpec
from ..sandbox import Sandbox
from ..text import repair_text
from .sandbox import REQUIRED_MISSING, agent_sandbox
from .workspace import GIT_DIR, Workspace, clean_path, git_path_problem

# ------------------------------------------------------------------------------------------------ the specs
SEARCH = "search"
VIEW = "view"
COMMAND_LINE = "command_line"
FINISH = "finish"


def _arg(kind: str, description: str, *, optional: bool = False) -> dict:
    """A parameter's schema; an optional one may be null (OpenAI strict mode requires every property)."""
    return {"type": [kind, "null"] if optional else kind, "description": description}


def _args(**properties: dict) -> dict:
    """An object schema in OpenAI's strict subset (every property required, no others), which Anthropic's
    ``input_schema`` takes as it is."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


SEARCH_SPEC = ToolSpec(
    name=SEARCH,
    description=(
        "Find a plain substring (case-sensitive, not a regular expression) in the repository's text files. Returns "
        "how many lines match in each file, then the matching lines as 'path:line: text'. Give 'path' to search "
        "one file or folder only, or a glob such as '*.py' or 'src/*/views.py' (null: the whole repository)."),
    parameters=_args(
        query=_arg("string", "The text to find (at least one character)."),
        path=_arg("string", "A file, a folder or a glob, relative to the repository root; null for all.",
                  optional=True)),
)
VIEW_SPEC = ToolSpec(
    name=VIEW,
    description=(
        "Read a file with numbered lines (optionally only lines start_line to end_line, 1-based, inclusive; "
        "end_line -1 means the last line), or list a folder's entries. With outline true, a Python file is shown "
        "as its classes and functions with their line ranges instead of its text."),
    parameters=_args(
        path=_arg("string", "A file or folder relative to the repository root ('.' is the root)."),
        start_line=_arg("integer", "First line to show (1-based); null: 1.", optional=True),
        end_line=_arg("integer", "Last line to show; null or -1: the end.", optional=True),
        outline=_arg("boolean", "True: the outline of a Python file (classes, functions, line ranges).",
                     optional=True)),
)
COMMAND_LINE_SPEC = ToolSpec(
    name=COMMAND_LINE,
    description=(
        "Run ONE read-only inspection command in the repository root: ls, find, grep, rg, head, tail, sed -n, wc, "
        "sort, uniq, stat, file or du. There is no shell: no pipes, redirections, ';', '&', '$(...)' or "
        "backquotes. Paths must stay inside the repository (relative, no '..'). Nothing can be written."),
    parameters=_args(command=_arg("string", "The command line, e.g. grep -rn \"def route\" src")),
)
FINISH_SPEC = ToolSpec(
    name=FINISH,
    description=(
        "End the investigation with the final answer to the question. Cite evidence as 'path: line a-b' with "
        "paths relative to the repository root."),
    parameters=_args(answer=_arg("string", "The complete final answer.")),
)
TOOLS: tuple[ToolSpec, ...] = (SEARCH_SPEC, VIEW_SPEC, COMMAND_LINE_SPEC, FINISH_SPEC)
"""The tools every agent turn offers, in this order (part of every turn's request hash)."""
TOOL_NAMES: tuple[str, ...] = tuple(t.name for t in TOOLS)

ALLOWED_COMMANDS: tuple[str, ...] = ("ls", "find", "grep", "rg", "head", "tail", "sed", "wc", "sort", "uniq", "stat",
                                     "file", "du")
"""The programs CommandLine runs (SWE-QA-Pro §3.1's inspection commands); any other is refused."""
COMMAND_PATH = "/usr/local/bin:/usr/bin:/bin"
"""``PATH`` of a CommandLine command (the only variables it gets are this, ``LANG`` and ``LC_ALL``)."""
MAX_COMMAND_CHARS = 2000
"""A longer command line is refused."""
LINE_CHARS = 300
"""Search and View show at most this many characters of one line (the rest is marked cut)."""
MAX_LISTING = 1000
"""View lists at most this many entries of one folder."""
MAX_GLOB_MATCHES = 1000
"""An unquoted pattern in a CommandLine command (``src/*.py``) may match at most this many paths."""


@dataclass
class ToolResult:
    """What one tool call gives back.

    Attributes:
        output: the text for the model (already capped).
        ok: False when the call was refused or could not run; ``output`` says why.
        truncated: the output was cut to fit a cap.
    """

    output: str
    ok: bool = True
    truncated: bool = False


def refused(reason: str) -> ToolResult:
    """A refusal: ``ok`` False, the output says it was refused and why."""
    return ToolResult(f"refused: {reason}", ok=False)


def cap(text: str, limit: int) -> tuple[str, bool]:
    """``(text, cut)``: ``text`` cut to ``limit`` characters, with a last line saying how much was cut."""
    if limit <= 0 or len(text) <= limit:
        return text, False
    return text[:limit] + f"\n[output cut at {limit:,} characters: {len(text) - limit:,} more not shown]", True


def _line(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= LINE_CHARS else text[:LINE_CHARS] + f" [... {len(text) - LINE_CHARS} more characters]"


# ------------------------------------------------------------------------------------------------ arguments
_PY_TYPES = {"string": (str,), "integer": (int,), "boolean": (bool,)}
_TYPE_NAMES = {"string": "a string", "integer": "an integer", "boolean": "true or false"}
_SPECS = {t.name: t for t in TOOLS}


def argument_problems(name: str, arguments: dict) -> list[str]:
    """Why ``arguments`` do not fit tool ``name``'s parameters (empty when they do), read from its spec's schema: a
    missing argument that may not be null, a wrong type, an argument the tool does not take. ``null`` counts as not
    given."""
    params = _SPECS[name].parameters["properties"]
    out = []
    for key in sorted(set(arguments) - set(params)):
        out.append(f"{name} takes no argument {key!r} (its arguments: {', '.join(params)})")
    for key, schema in params.items():
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        kind = kinds[0]
        value = arguments.get(key)
        if value is None:
            if "null" not in kinds:
                out.append(f"{name} needs the argument {key!r}")
            continue
        bad_bool = isinstance(value, bool) and kind != "boolean"
        if not isinstance(value, _PY_TYPES[kind]) or bad_bool:
            out.append(f"{name}: {key!r} must be {_TYPE_NAMES[kind]}, not {type(value).__name__}")
    return out


def execute(workspace: Workspace, name: str, arguments: dict, *, search_max_hits: int = 50,
            tool_output_chars: int = 8000, command_timeout_s: float = 10.0,
            arguments_raw: str | None = None, sandbox: Sandbox | None = None) -> ToolResult:
    """Run one tool call (not ``finish``, which the loop handles) and cap its output at ``tool_output_chars``;
    a command runs confined by ``sandbox`` (None: :func:`command_sandbox` of the workspace, decided now).

    Never raises for the model's mistakes: an unknown tool, arguments that are not a JSON object or do not fit,
    a path outside the workspace, a refused command, a timeout all come back as a result with ``ok`` False whose
    output says why (SWE-QA-Pro §3.1: the run goes on)."""
    if name not in _RUNNERS and name != FINISH:
        known = ", ".join(TOOL_NAMES)
        return ToolResult(f"unknown tool {name!r}; the tools are: {known}", ok=False)
    if arguments_raw is not None:
        return ToolResult(f"the arguments of {name} are not a JSON object: {arguments_raw[:200]!r}", ok=False)
    problems = argument_problems(name, arguments)
    if problems:
        return ToolResult("bad arguments: " + "; ".join(problems), ok=False)
    if name == FINISH:
        return ToolResult("finish ends the run; the agent loop takes its answer", ok=False)
    args = {k: v for k, v in arguments.items() if v is not None}
    try:
        result = _RUNNERS[name](workspace, args, search_max_hits=search_max_hits, max_chars=tool_output_chars,
                                timeout_s=command_timeout_s, sandbox=sandbox)
    except UnsafePathError as e:
        return refused(repair_text(str(e))[0])
    except RepositoryError as e:
        return ToolResult(repair_text(str(e))[0], ok=False)
    except (OSError, ValueError) as e:  # a name too long for the file system, and the like
        return ToolResult(f"{name} could not run: {getattr(e, 'strerror', None) or type(e).__name__}", ok=False)
    # A file name that is not UTF-8 comes from the OS with surrogate escapes, which no request can carry: U+FFFD.
    # A tool that cut its own output at this limit said how much it left out: cutting again would cut that note
    # off and say only how long the note was ("58 more not shown" of a 800,000-character grep).
    text, cut = repair_text(result.output)[0], False
    if not result.truncated:
        text, cut = cap(text, tool_output_chars)
    return ToolResult(text, result.ok, result.truncated or cut)


# ------------------------------------------------------------------------------------------------ search
def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def search(workspace: Workspace, query: str, path: str | None = None, *, max_hits: int = 50) -> ToolResult:
    """Lines of the workspace's text files that contain ``query`` (a plain, case-sensitive substring).

    ``path`` limits the search to a file or folder, or (with ``*``, ``?`` or ``[``) to the files whose
    workspace-relative path matches it as a glob (:func:`fnmatch.fnmatchcase`, where ``*`` also crosses ``/``).
    The output gives the total, the count per file (files in path order), then the first ``max_hits`` matching
    lines as ``path:line: text``. Binary files and files over :data:`~.workspace.MAX_TEXT_BYTES` are skipped.

    Raises:
        UnsafePathError: ``path`` leads outside. RepositoryError: ``query`` is empty, or ``path`` names nothing.
    """
    if not query:
        raise RepositoryError("search needs a non-empty query")
    if "\n" in query or "\r" in query:
        raise RepositoryError("search matches within one line: the query holds a line break; search for one line")
    text = clean_path(path)
    if text and _is_glob(text):
        if text.startswith("/") or ".." in text.split("/"):
            raise UnsafePathError(f"{path}: a glob must be relative to the repository root, without '..'")
        files = [f for f in workspace.files if fnmatch.fnmatchcase(f, text)
                 or ("/" not in text and fnmatch.fnmatchcase(f.rsplit("/", 1)[-1], text))]
    else:
        files = workspace.files_under(text)
    counts: list[tuple[str, int]] = []
    hits: list[str] = []
    total = 0
    for f in files:
        body = workspace.text_of(f)
        if body is None or query not in body:
            continue
        n = 0
        for i, line in enumerate(body.splitlines(), 1):
            if query in line:
                n += 1
                if len(hits) < max_hits:
                    hits.append(f"{f}:{i}: {_line(line)}")
        counts.append((f, n))
        total += n
    where = f" under {text}" if text else ""
    if not counts:
        return ToolResult(f"no matches of {query!r}{where} ({len(files)} files searched)")
    noun = "file" if len(counts) == 1 else "files"
    out = [f"{total} matching lines of {query!r}{where} in {len(counts)} {noun}:"]
    out += [f"  {f}: {n}" for f, n in counts[:200]]
    if len(counts) > 200:
        out.append(f"  [... {len(counts) - 200} more files]")
    out.append("")
    out.append(f"matching lines{' (the first ' + str(max_hits) + ')' if total > max_hits else ''}:")
    out += hits
    truncated = total > max_hits
    if truncated:
        out.append(f"[{total - max_hits} more matching lines not shown; narrow the search with 'path']")
    return ToolResult("\n".join(out), truncated=truncated)


# ------------------------------------------------------------------------------------------------ view
def view(workspace: Workspace, path: str, start_line: int | None = None, end_line: int | None = None,
         outline: bool = False, *, max_chars: int = 8000) -> ToolResult:
    """A file's lines numbered from 1 (``start_line`` to ``end_line`` inclusive; ``end_line`` -1 or None: to the
    end), a folder's sorted entries (folders end with ``/``; a symlink leading outside is shown, not followed), or
    with ``outline`` a Python file's outline (:func:`python_outline`). Whole lines are shown up to ``max_chars``;
    the rest is named by its line numbers so the model can ask for it.

    Raises:
        UnsafePathError: the path leads outside. RepositoryError: nothing there, binary, too large, a bad range,
            an outline of a file that is not Python or does not parse.
    """
    target = workspace.resolve(path)
    rel = workspace.relative(target)
    if target.is_dir():
        return _listing(workspace, path, rel)
    text = workspace.read_text(path)
    lines = text.splitlines()
    n = len(lines)
    if outline:
        if not rel.endswith((".py", ".pyi")):
            raise RepositoryError(f"{rel}: outline is for Python files; view it with a line range instead")
        return ToolResult(f"{rel}: outline ({n} lines)\n" + python_outline(text, rel))
    start = 1 if start_line is None else start_line
    end = n if end_line is None or end_line == -1 else end_line
    if start < 1:
        raise RepositoryError(f"{rel}: start_line must be 1 or more (got {start})")
    if n == 0:
        return ToolResult(f"{rel}: an empty file")
    if start > n:
        raise RepositoryError(f"{rel}: start_line {start} is past the end of the file ({n} lines)")
    if end < start:
        raise RepositoryError(f"{rel}: end_line {end} is before start_line {start}")
    end = min(end, n)
    out = [f"{rel}: lines {start}-{end} of {n}"]
    size = len(out[0])
    budget = max(200, max_chars - 200)
    for i in range(start, end + 1):
        row = f"{i:>6}  {_line(lines[i - 1])}"
        if size + len(row) + 1 > budget and i > start:
            out.append(f"[lines {i}-{end} not shown (output limit); view again with start_line {i}]")
            return ToolResult("\n".join(out), truncated=True)
        out.append(row)
        size += len(row) + 1
    return ToolResult("\n".join(out))


def _listing(workspace: Workspace, path: str, rel: str) -> ToolResult:
    entries = workspace.list_dir(path)
    shown = []
    for name, kind in entries[:MAX_LISTING]:
        if kind == "dir":
            shown.append(f"  {name}/")
        elif kind == "link-out":
            shown.append(f"  {name} -> (a symlink leading outside the repository; not followed)")
        elif kind == "link":
            shown.append(f"  {name}@")
        else:
            shown.append(f"  {name}")
    head = f"{rel}: a folder with {len(entries)} entries" if rel != "." else \
        f"the repository root: {len(entries)} entries"
    out = [head, *shown]
    if len(entries) > MAX_LISTING:
        out.append(f"[{len(entries) - MAX_LISTING} more entries not shown]")
    return ToolResult("\n".join(out), truncated=len(entries) > MAX_LISTING)


def python_outline(source: str, name: str = "<file>") -> str:
    """The outline of Python ``source``: its imports, classes and functions (nested ones indented), one a line as
    ``START-END  class Name(bases)`` / ``START-END  def name(args) -> returns``, from :mod:`ast`.

    Raises:
        RepositoryError: the source does not parse (names the line).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise RepositoryError(f"{name}: does not parse as Python (line {e.lineno}: {e.msg}); view it with a line "
                              "range instead") from None
    out: list[str] = []

    def walk(body: list[ast.stmt], depth: int) -> None:
        for node in body:
            pad = "  " * depth
            span = str(node.lineno) if node.end_lineno in (None, node.lineno) else f"{node.lineno}-{node.end_lineno}"
            if isinstance(node, ast.ClassDef):
                bases = ", ".join(ast.unparse(b) for b in node.bases + node.keywords)  # type: ignore[operator]
                out.append(f"{span:>11}  {pad}class {node.name}{f'({bases})' if bases else ''}")
                walk(node.body, depth + 1)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                kw = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
                ret = f" -> {ast.unparse(node.returns)}" if node.returns else ""
                out.append(_line(f"{span:>11}  {pad}{kw} {node.name}({ast.unparse(node.args)}){ret}"))
                walk(node.body, depth + 1)
            elif depth == 0 and isinstance(node, ast.Import | ast.ImportFrom):
                out.append(_line(f"{span:>11}  {ast.unparse(node)}"))
            elif isinstance(node, ast.If | ast.Try | ast.With):  # definitions under `if TYPE_CHECKING:` and such
                walk([n for n in ast.iter_child_nodes(node)
                      if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)], depth)
    walk(tree.body, 0)
    return "\n".join(out) if out else "(no imports, classes or functions)"


# ------------------------------------------------------------------------------------------------ command line
class CommandRefused(Exception):
    """A CommandLine command breaks a rule; the message says which."""


_SHELL = (("\n", "a line break (one command only)"), ("\r", "a line break (one command only)"),
          (";", "';' (a command separator)"), ("&", "'&' (a background job or '&&')"), ("|", "'|' (a pipe)"),
          (">", "'>' (a redirection)"), ("<", "'<' (a redirection)"), ("$(", "'$(' (command substitution)"),
          ("`", "a backquote (command substitution)"))
_NO_SHELL = ("commands run without a shell, one program at a time, so these characters are refused even inside "
             "quotes (for alternatives in grep, give -e PATTERN twice)")

# Per program: short options that take a value (attached, '-A3', or the next argument), long options that take
# the next argument as their value, and the options whose value is a pattern rather than a path.
_VALUE_SHORT = {"grep": "efmABCdD", "rg": "efgmABCtTMjrEd", "sort": "ktoTS", "uniq": "fsw", "head": "nc",
                "tail": "ncs", "sed": "el", "du": "dBtX", "file": "fmFPe", "stat": "c", "ls": "wIT", "wc": ""}
_VALUE_LONG = {"grep": {"--regexp", "--file", "--max-count", "--include", "--exclude", "--exclude-dir"},
               "rg": {"--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count"},
               "sed": {"--expression", "--line-length"}}
_PATTERN_OPTIONS = {"grep": {"-e", "--regexp"}, "rg": {"-e", "--regexp"}}
_FORBIDDEN = {
    "find": {"-exec": "runs a command", "-execdir": "runs a command", "-ok": "runs a command",
             "-okdir": "runs a command", "-delete": "deletes files", "-fprint": "writes a file",
             "-fprint0": "writes a file", "-fprintf": "writes a file", "-fls": "writes a file",
             "-L": "follows symlinks, which may lead outside the repository",
             "-follow": "follows symlinks, which may lead outside the repository",
             "-files0-from": "reads its starting points from a file"},
    "grep": {"-R": "follows every symlink, which may lead outside the repository (use -r)",
             "--dereference-recursive": "follows every symlink, which may lead outside the repository (use -r)"},
    "rg": {"-L": "follows symlinks, which may lead outside the repository",
           "--follow": "follows symlinks, which may lead outside the repository",
           "--pre": "runs a program on every file", "--pre-glob": "runs a program on files",
           "-z": "runs decompression programs", "--search-zip": "runs decompression programs",
           "--hostname-bin": "runs a program"},
    "ls": {"-L": "follows symlinks, which may lead outside the repository",
           "--dereference": "follows symlinks, which may lead outside the repository"},
    "du": {"-L": "follows symlinks, which may lead outside the repository",
           "--dereference": "follows symlinks, which may lead outside the repository",
           "--files0-from": "reads file names from a file"},
    "wc": {"--files0-from": "reads file names from a file"},
    "sort": {"-o": "writes a file", "--output": "writes a file", "-T": "writes temporary files",
             "--temporary-directory": "writes temporary files", "--compress-program": "runs a program",
             "--files0-from": "reads file names from a file"},
    "tail": {"-f": "waits for the file to grow and never ends", "-F": "waits for the file to grow and never ends",
             "--follow": "waits for the file to grow and never ends"},
    "file": {"-C": "writes a compiled magic file", "--compile": "writes a compiled magic file",
             "-f": "reads file names from a file", "--files-from": "reads file names from a file"},
    "sed": {"-i": "edits files in place, and nothing is writable", "--in-place": "edits files in place, and nothing is writable",
            "-f": "reads its script from a file (give the script inline)",
            "--file": "reads its script from a file (give the script inline)"},
}
_SED_OPTIONS = {"-n", "--quiet", "--silent", "-E", "-r", "--regexp-extended", "-s", "--separate", "-u",
                "--unbuffered", "-z", "--null-data", "--posix", "--debug", "--sandbox"}
_SED_ADDR = r"(?:\d+|\$|/(?:[^/\\]|\\.)*/)"


def command_environment() -> dict[str, str]:
    """The whole environment of a CommandLine command: ``PATH`` (:data:`COMMAND_PATH`), ``LANG`` and ``LC_ALL``
    (``C.UTF-8``, so sorting and messages are the same on every machine). Nothing of benchwright's own environment
    is passed on: no API keys, no tokens, no HOME."""
    return {"PATH": COMMAND_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def _path_problem(workspace: Workspace, arg: str) -> str | None:
    text = arg.replace("\\", "/")
    if text.startswith("/") and not arg.startswith("/"):
        return (f"{arg!r} starts with a backslash, which is taken as a path separator (so it would name an "
                f"absolute path); give paths relative to the repository root")
    if text.startswith("/") or text.startswith("~"):
        return f"{arg!r} is an absolute path; give paths relative to the repository root"
    if ".." in text.split("/"):
        return f"{arg!r}: '..' would leave the repository"
    if "\x00" in text:
        return f"{arg!r}: a NUL character"
    hidden = git_path_problem(text)
    if hidden:
        return f"{arg!r}: {hidden}"
    if os.path.lexists(workspace.root / text):
        try:
            workspace.resolve(text)
        except UnsafePathError as e:
            if GIT_DIR in str(e):
                return f"{arg!r} is a symlink leading into {GIT_DIR}, git's metadata (not part of the repository)"
            return f"{arg!r} is a symlink leading outside the repository"
    return None


_GIT_EXCLUDES = {"grep": ["--exclude-dir=.git"], "rg": ["--glob=!.git"], "du": ["--exclude=.git"]}
_GIT_ENTRY = re.compile(r"(?:^|[\s/])\.git(?:/|:?$)")


def hide_git(argv: list[str]) -> list[str]:
    """``argv`` with the options that keep a recursive walk out of ``.git`` (git's metadata; its config may hold a
    remote URL with a token): ``grep --exclude-dir=.git``, ``rg --glob=!.git``, ``du --exclude=.git``, put right
    after the program name (so a ``--`` later cannot turn them into file names). ``find`` and ``ls`` have no such
    option: their output goes through :func:`drop_git_lines`. The same in every sandbox mode, so a run's outputs do
    not depend on it."""
    return [argv[0], *_GIT_EXCLUDES.get(argv[0], []), *argv[1:]]


def drop_git_lines(program: str, text: str) -> str:
    """The output of ``find``, ``ls`` or ``du`` without what names ``.git`` or lies in it: each line naming a
    ``.git`` path component (``./.git/HEAD``, ``drwxr-xr-x ... .git``, ``4\t./.git``) and, for ``ls -R``, each
    section of a folder in ``.git`` (its header ``./.git/refs:`` and the entries up to the next blank line). Other
    programs' output is returned as it is (a grep hit whose text mentions ``.git`` is a line of a file)."""
    if program not in ("find", "ls", "du"):
        return text
    out: list[str | None] = []
    skipping = False
    total: int | None = None  # the section's 'total N' line of ls -l, which counts the dropped .git too
    for line in text.split("\n"):
        if skipping:
            skipping = line != ""  # the blank line after the section goes with it
            continue
        if program == "ls" and line.endswith(":") and _GIT_ENTRY.search(line):
            skipping = True
            continue
        if line == "" or line.endswith(":"):
            total = None
        if program == "ls" and line.startswith("total "):
            total = len(out)
        if _GIT_ENTRY.search(line):
            if total is not None:
                out[total] = None
            continue
        out.append(line)
    kept = [x for x in out if x is not None]
    while skipping and kept and kept[-1] == "":
        kept.pop()
    return "\n".join(kept)


def _split_options(program: str, argv: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """``(options, positionals)``: each option with its value (``""`` for none), and the other arguments."""
    value_short = _VALUE_SHORT.get(program, "")
    value_long = _VALUE_LONG.get(program, set())
    options: list[tuple[str, str]] = []
    positionals: list[str] = []
    i = 0
    only_positionals = False
    while i < len(argv):
        arg = argv[i]
        i += 1
        if only_positionals or arg == "-" or not arg.startswith("-"):
            positionals.append(arg)
            continue
        if arg == "--":
            only_positionals = True
            continue
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if not eq and name in value_long and i < len(argv):
                value, i = argv[i], i + 1
            options.append((name, value))
            continue
        if program == "find":  # find's single-dash words ('-name', '-type f'): the value is the next word
            takes = arg not in ("-print", "-print0", "-ls", "-prune", "-quit", "-empty", "-true", "-false",
                                "-not", "-a", "-o", "-and", "-or", "-depth", "-mount", "-xdev", "-daystart",
                                "-noleaf", "-P", "-H", "-L", "-follow", "-delete", "-readable", "-writable",
                                "-executable", "-nouser", "-nogroup")
            value = ""
            if takes and i < len(argv):
                value, i = argv[i], i + 1
            options.append((arg, value))
            continue
        for k, ch in enumerate(arg[1:], 1):
            if ch in value_short:
                value = arg[k + 1:]
                if not value and i < len(argv):
                    value, i = argv[i], i + 1
                options.append((f"-{ch}", value))
                break
            options.append((f"-{ch}", ""))
    return options, positionals


def check_command(workspace: Workspace, command: str) -> list[str]:
    """The argument vector of ``command`` when it may run; the rules of CommandLine (SWE-QA-Pro §3.1's read-only
    inspection commands, made strict here):

    - one program of :data:`ALLOWED_COMMANDS`, named without a path; no shell, so ``; | & > < $(``, backquotes and
      line breaks are refused wherever they appear;
    - unquoted glob arguments are expanded inside the workspace first (:func:`_expand_globs`);
    - no argument may be an absolute path, hold ``..``, or name a symlink leading outside the workspace (a grep or
      rg pattern is not a path; a sed script is checked as a script);
    - options that write, delete, run programs, follow symlinks out or never end are refused (``find -exec``,
      ``-delete``, ``-fprint``; ``sort -o``; ``sed -i``; ``grep -R``; ``tail -f``...; a second file argument to
      ``uniq``, which it would write);
    - ``sed`` only with ``-n`` and a print script (``A,Bp``, ``Np``, ``/re/p``, ``=``), never ``w``, ``e`` or ``r``.

    Raises:
        CommandRefused: a rule is broken; the message says which.
    """
    if len(command) > MAX_COMMAND_CHARS:
        raise CommandRefused(f"the command is {len(command):,} characters long (at most {MAX_COMMAND_CHARS:,})")
    for needle, what in _SHELL:
        if needle in command:
            raise CommandRefused(f"the command contains {what}; {_NO_SHELL}")
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise CommandRefused(f"the command cannot be parsed ({e})") from None
    if not argv:
        raise CommandRefused("the command is empty")
    program = argv[0]
    if "/" in program:
        raise CommandRefused(f"{program!r}: give the program by its name only (one of {', '.join(ALLOWED_COMMANDS)})")
    if program not in ALLOWED_COMMANDS:
        raise CommandRefused(f"{program!r} is not an allowed command; allowed (read-only inspection): "
                             f"{', '.join(ALLOWED_COMMANDS)}. Nothing in the repository can be written")
    argv = _expand_globs(workspace, command, argv)
    options, positionals = _split_options(program, argv[1:])
    forbidden = _FORBIDDEN.get(program, {})
    for name, _ in options:
        # a long option may be abbreviated (getopt_long takes '--out' for '--output'): a prefix counts too
        hit = name if name in forbidden else next(
            (f for f in forbidden if name.startswith("--") and len(name) > 3 and f.startswith(name)), None)
        if hit:
            raise CommandRefused(f"{program} {name} {forbidden[hit]}")
    if program == "uniq" and len(positionals) > 1:
        raise CommandRefused("uniq INPUT OUTPUT writes OUTPUT; give one file at most (nothing is writable)")
    # Every option value and every other argument is checked as a path, the pattern of grep and rg too (a pattern
    # given with -e is not: it cannot be a file); a sed script is checked as a script instead.
    values = [v for n, v in options if v and n not in _PATTERN_OPTIONS.get(program, set())]
    others = _check_sed(options, positionals) if program == "sed" else positionals
    for arg in values + others:
        problem = _path_problem(workspace, arg)
        if problem:
            hint = "; if it is the pattern, give it as -e PATTERN" if program in ("grep", "rg") else ""
            raise CommandRefused(problem + hint)
    return _ls_almost_all(argv) if program == "ls" else argv


def _expand_globs(workspace: Workspace, command: str, argv: list[str]) -> list[str]:
    """``argv`` with each unquoted argument holding ``*``, ``?`` or ``[`` replaced by the workspace paths it matches,
    sorted, as a shell would (no match: the argument stays as written; names starting with a dot only for a
    pattern that does). Unlike a shell: absolute patterns and patterns with ``..`` are never expanded (the path rules
    refuse them), matches that are symlinks leading outside are dropped, and a match starting with ``-`` is given
    as ``./-name`` so it cannot pose as an option. The rules of :func:`check_command` then apply to the result.

    Raises:
        CommandRefused: a pattern matches more than :data:`MAX_GLOB_MATCHES` paths.
    """
    try:
        raw = shlex.split(command, posix=False)  # keeps the quotes, to tell quoted arguments apart
    except ValueError:
        return argv
    if len(raw) != len(argv):
        return argv  # a form where the two splits differ (escapes): nothing is expanded
    out = [argv[0]]
    for arg, written in zip(argv[1:], raw[1:], strict=True):
        quoted = any(q in written for q in "'\\\"")
        if quoted or not any(c in arg for c in "*?[") or arg.startswith(("-", "/", "~")) or ".." in arg.split("/"):
            out.append(arg)
            continue
        matches = sorted(m for m in glob.glob(arg, root_dir=workspace.root) if _path_problem(workspace, m) is None)
        if len(matches) > MAX_GLOB_MATCHES:
            raise CommandRefused(f"{arg!r} matches {len(matches):,} paths (at most {MAX_GLOB_MATCHES:,}); narrow it")
        out += [f"./{m}" if m.startswith("-") else m for m in matches] or [arg]
    return out


def _ls_almost_all(argv: list[str]) -> list[str]:
    """``ls -a`` as ``ls -A`` (``--all`` as ``--almost-all``): the ``..`` entry is the folder above the
    repository, outside it, and its times change with whatever happens beside the repository (so a replayed run
    would see other output)."""
    out = [argv[0]]
    for k, arg in enumerate(argv[1:], 1):
        if arg == "--":
            return out + argv[k:]
        if arg == "--all":
            arg = "--almost-all"
        elif arg.startswith("-") and not arg.startswith("--"):
            cut = next((i for i, ch in enumerate(arg) if i and ch in _VALUE_SHORT["ls"]), len(arg))
            arg = arg[:cut].replace("a", "A") + arg[cut:]
        out.append(arg)
    return out


def _check_sed(options: list[tuple[str, str]], positionals: list[str]) -> list[str]:
    """The file arguments of a sed command whose options and script pass the sed rules of :func:`check_command`."""
    quiet = False
    scripts = []
    for name, value in options:
        if name in ("-e", "--expression"):
            scripts.append(value)
        elif name in ("-n", "--quiet", "--silent"):
            quiet = True
        elif name not in _SED_OPTIONS:
            raise CommandRefused(f"sed {name} is not allowed; use sed -n 'A,Bp' FILE to print lines A to B")
    files = list(positionals)
    if not scripts and files:
        scripts, files = [files[0]], files[1:]
    if not quiet:
        raise CommandRefused("sed is allowed only with -n, printing the lines asked for: e.g. "
                             "sed -n '10,40p' src/app.py")
    if not scripts:
        raise CommandRefused("sed needs a script, e.g. sed -n '10,40p' src/app.py")
    for script in scripts:
        m = re.fullmatch(rf"\s*(?:{_SED_ADDR}(?:\s*,\s*(?:{_SED_ADDR}|[+~]\d+))?)?\s*(?P<cmd>.*?)\s*", script)
        cmd = m.group("cmd") if m else script
        if cmd in ("p", "="):
            continue
        first = cmd[:1]
        reason = {"w": "'w' writes a file", "W": "'W' writes a file", "e": "'e' runs a command",
                  "r": "'r' reads another file", "R": "'R' reads another file",
                  "s": "'s' substitutes (and its w and e flags write files and run commands)"}.get(
            first, "only printing is allowed")
        raise CommandRefused(f"sed script {script!r}: {reason}; use sed -n 'A,Bp' FILE to print lines A to B")
    return files


def command_sandbox(workspace: Workspace, mode: str | None = None) -> Sandbox:
    """How CommandLine commands in ``workspace`` are confined under ``mode`` (``[agent] sandbox``; the
    environment variable wins): :func:`benchwright.core.agent.sandbox.agent_sandbox` with
    :func:`command_environment` and the programs of :data:`ALLOWED_COMMANDS`.

    Raises:
        BenchwrightError: an unknown mode.
    """
    return agent_sandbox(workspace.root, mode, command_environment(), programs=ALLOWED_COMMANDS, path=COMMAND_PATH)


def command_line(workspace: Workspace, command: str, *, timeout_s: float = 10.0,
                 max_chars: int = 8000, sandbox: Sandbox | None = None) -> ToolResult:
    """Run ``command`` when :func:`check_command` allows it, with :func:`run_argv`. A refused command is not run
    (``ok`` False, the reason)."""
    try:
        argv = check_command(workspace, command)
    except CommandRefused as e:
        return refused(str(e))
    result = run_argv(workspace, hide_git(argv), timeout_s=timeout_s, max_chars=max_chars, sandbox=sandbox)
    shown = drop_git_lines(argv[0], result.output)
    result.output = shown if shown.strip() or not result.output.strip() else "(no output)"
    return result


def run_argv(workspace: Workspace, argv: list[str], *, timeout_s: float = 10.0, max_chars: int = 8000,
             sandbox: Sandbox | None = None) -> ToolResult:
    """Run ``argv`` as it is (no checks: :func:`command_line` checks first) as an argument vector (no shell), in
    the workspace root, with :func:`command_environment`, standard input empty, killed after ``timeout_s``
    seconds, confined by ``sandbox`` (None: :func:`command_sandbox`, decided now; an unconfined one runs the
    program directly). The output is standard output, then standard error (marked), then the exit status when it
    is not 0; cut at ``max_chars``. Not run (``ok`` False, saying why): a program not installed here, a
    ``required`` sandbox without bubblewrap (:data:`~benchwright.core.agent.sandbox.REQUIRED_MISSING`)."""
    sandbox = command_sandbox(workspace) if sandbox is None else sandbox
    if sandbox.missing:
        return ToolResult(REQUIRED_MISSING, ok=False)
    exe = shutil.which(argv[0], path=COMMAND_PATH)
    if exe is None:
        hint = " (use grep -rn instead)" if argv[0] == "rg" else ""
        return ToolResult(f"{argv[0]} is not installed on this machine{hint}", ok=False)
    # confined, bwrap finds the program on the same PATH inside; it keeps the name as written (argv[0])
    full, exe = ([*sandbox.prefix, *argv], sandbox.prefix[0]) if sandbox.confined else (argv, exe)
    try:
        proc = subprocess.run(full, executable=exe, cwd=workspace.root, env=command_environment(),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as e:
        partial = (e.stdout or b"").decode("utf-8", errors="replace")
        text, _ = cap(partial, max_chars // 2)
        return ToolResult(f"{text}\n[the command was stopped after {timeout_s:g} seconds (the time limit)]".lstrip(),
                          ok=False, truncated=True)
    except OSError as e:
        return ToolResult(f"{argv[0]} could not be started ({e.strerror or e})", ok=False)
    out = proc.stdout.decode("utf-8", errors="replace")
    err = proc.stderr.decode("utf-8", errors="replace")
    parts = [out.rstrip("\n")] if out else [] if err else ["(no output)"]
    if err:
        parts.append("[standard error]\n" + err.rstrip("\n"))
    if proc.returncode != 0:
        parts.append(f"[exit status {proc.returncode}]")
    text = "\n".join(parts) if parts else "(no output)"
    text, cut = cap(text, max_chars)
    return ToolResult(text, truncated=cut)


# ------------------------------------------------------------------------------------------------ dispatch
def _run_search(ws: Workspace, args: dict, **kw) -> ToolResult:
    return search(ws, args["query"], args.get("path"), max_hits=kw["search_max_hits"])


def _run_view(ws: Workspace, args: dict, **kw) -> ToolResult:
    return view(ws, args["path"], args.get("start_line"), args.get("end_line"), bool(args.get("outline")),
                max_chars=kw["max_chars"])


def _run_command(ws: Workspace, args: dict, **kw) -> ToolResult:
    return command_line(ws, args["command"], timeout_s=kw["timeout_s"], max_chars=kw["max_chars"],
                        sandbox=kw["sandbox"])


_RUNNERS: dict[str, Callable[..., ToolResult]] = {SEARCH: _run_search, VIEW: _run_view, COMMAND_LINE: _run_command}

