"""The agent's workspace and tools (SWE-QA-Pro §3.1): paths stay inside, nothing is writable, outputs are capped,
commands run without a shell and without benchwright's environment."""

from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_agent_fixture import SECRET, make_repo

from benchwright.core.agent import tools as T
from benchwright.core.agent.workspace import Workspace
from benchwright.core.errors import RepositoryError, UnsafePathError
from benchwright.core.llm.schemas import openai_strict_problems


@pytest.fixture
def ws(tmp_path) -> Workspace:
    return Workspace(make_repo(tmp_path))


def run(ws: Workspace, name: str, **args) -> T.ToolResult:
    return T.execute(ws, name, args)


# ------------------------------------------------------------------------------------------------ workspace
def test_a_missing_root_is_a_repository_error(tmp_path):
    with pytest.raises(RepositoryError, match="no such directory"):
        Workspace(tmp_path / "nope")
    (tmp_path / "f").write_text("x")
    with pytest.raises(RepositoryError, match="not a directory"):
        Workspace(tmp_path / "f")


@pytest.mark.parametrize(("path", "reason"), [
    ("/etc/passwd", "absolute paths are not allowed"),
    ("../outside/secret.txt", "'..' would leave the repository"),
    ("pkg/../../outside", "'..' would leave the repository"),
    ("leak.txt", "outside the repository (a symlink out)"),
    ("leak/secret.txt", "outside the repository (a symlink out)"),
    ("~/.ssh/id_rsa", "absolute paths are not allowed"),
])
def test_paths_leading_outside_are_refused_with_the_reason(ws, path, reason):
    with pytest.raises(UnsafePathError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        ws.resolve(path)
    result = run(ws, "view", path=path)
    assert not result.ok and result.output.startswith("refused: ") and reason in result.output
    assert SECRET not in result.output


def test_the_file_index_is_sorted_skips_links_out_and_keeps_links_inside(ws):
    assert ws.files == ("README.md", "docs/guide.md", "pkg/__init__.py", "pkg/alias.py", "pkg/engine.py",
                        "pkg/util.py")
    assert ws.resolve("./pkg/alias.py") == ws.root / "pkg" / "engine.py"


# ------------------------------------------------------------------------------------------------ specs
def test_every_tool_spec_fits_openai_strict_mode_and_anthropic_names():
    import re

    assert [t.name for t in T.TOOLS] == ["search", "view", "command_line", "finish"]
    for spec in T.TOOLS:
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", spec.name)
        assert openai_strict_problems(spec.parameters) == [], spec.name
        assert spec.parameters["type"] == "object" and spec.description


def test_unknown_tools_and_bad_arguments_say_so(ws):
    r = run(ws, "delete_file", path="x")
    assert not r.ok and "unknown tool 'delete_file'" in r.output and "search, view, command_line, finish" in r.output
    r = run(ws, "view")
    assert not r.ok and "view needs the argument 'path'" in r.output
    r = run(ws, "view", path="pkg", start_line="3")
    assert not r.ok and "'start_line' must be an integer" in r.output
    r = run(ws, "view", path="pkg/engine.py", view_range=[1, 3])
    assert not r.ok and "view takes no argument 'view_range'" in r.output
    r = T.execute(ws, "search", {}, arguments_raw='{"query": ')
    assert not r.ok and "not a JSON object" in r.output
    # null stands for "not given" (OpenAI strict mode sends every property)
    assert run(ws, "search", query="normalize", path=None).ok


# ------------------------------------------------------------------------------------------------ search
def test_search_gives_counts_per_file_then_the_line_hits(ws):
    r = run(ws, "search", query="Engine", path="pkg")
    assert r.ok and not r.truncated
    assert r.output == "\n".join([
        "6 matching lines of 'Engine' under pkg in 3 files:",
        "  pkg/__init__.py: 2", "  pkg/alias.py: 2", "  pkg/engine.py: 2", "",
        "matching lines:",
        "pkg/__init__.py:3: from .engine import Engine, run_all",
        'pkg/__init__.py:5: __all__ = ["Engine", "run_all"]',
        "pkg/alias.py:8: class Engine:",
        "pkg/alias.py:25:     engine = Engine()",
        "pkg/engine.py:8: class Engine:",
        "pkg/engine.py:25:     engine = Engine()",
    ])


def test_search_by_glob_and_by_file(ws):
    r = run(ws, "search", query="def ", path="*.py")
    assert "in 3 files" in r.output and "pkg/util.py:9: async def gather(items):" in r.output
    r = run(ws, "search", query="normalize", path="pkg/util.py")
    assert r.output.startswith("1 matching lines of 'normalize' under pkg/util.py in 1 file:")


def test_search_is_capped_at_max_hits_and_says_so(ws):
    r = T.execute(ws, "search", {"query": "e"}, search_max_hits=3)
    hits = [line for line in r.output.splitlines() if line.count(":") >= 2 and not line.startswith(" ")]
    assert len(hits) == 3 and r.truncated
    assert "more matching lines not shown; narrow the search with 'path'" in r.output


def test_search_never_reads_through_a_link_out(ws):
    r = run(ws, "search", query="TOP SECRET")
    assert r.ok and r.output.startswith("no matches of 'TOP SECRET'")
    r = run(ws, "search", query="TOP", path="leak")
    assert not r.ok and "symlink out" in r.output and SECRET not in r.output
    r = run(ws, "search", query="x", path="../*")
    assert not r.ok and "without '..'" in r.output
    r = run(ws, "search", query="")
    assert not r.ok and "non-empty query" in r.output
    r = run(ws, "search", query="class Engine:\n    def")
    assert not r.ok and "within one line" in r.output


# ------------------------------------------------------------------------------------------------ view
def test_view_numbers_the_lines_of_a_range(ws):
    r = run(ws, "view", path="pkg/util.py", start_line=4, end_line=6)
    assert r.output == "\n".join([
        "pkg/util.py: lines 4-6 of 10",
        "     4  def normalize(name: str) -> str:",
        '     5      """Task names are compared lower-case, without surrounding spaces."""',
        "     6      return name.strip().lower()",
    ])
    assert run(ws, "view", path="pkg/util.py", start_line=9, end_line=-1).output.startswith(
        "pkg/util.py: lines 9-10 of 10")
    assert "past the end of the file (10 lines)" in run(ws, "view", path="pkg/util.py", start_line=11).output
    assert "before start_line" in run(ws, "view", path="pkg/util.py", start_line=5, end_line=2).output


def test_view_lists_a_folder_marking_links_out(ws):
    r = run(ws, "view", path=".")
    assert r.output == "\n".join([
        "the repository root: 5 entries", "  README.md", "  docs/",
        "  leak -> (a symlink leading outside the repository; not followed)",
        "  leak.txt -> (a symlink leading outside the repository; not followed)", "  pkg/",
    ])
    assert run(ws, "view", path="pkg").output.splitlines()[1:] == [
        "  __init__.py", "  alias.py@", "  engine.py", "  util.py"]


def test_view_outline_of_a_python_file(ws):
    r = run(ws, "view", path="pkg/engine.py", outline=True)
    assert r.output == "\n".join([
        "pkg/engine.py: outline (28 lines)",
        "          3  from __future__ import annotations",
        "          5  from .util import normalize",
        "       8-20  class Engine",
        "      11-12    def __init__(self) -> None",
        "      14-16    def add(self, name: str, task) -> None",
        "      18-20    def run(self) -> list",
        "      23-28  def run_all(tasks) -> list",
    ])
    r = run(ws, "view", path="README.md", outline=True)
    assert not r.ok and "outline is for Python files" in r.output
    (ws.root / "bad.py").write_text("def f(:\n")
    r = run(ws, "view", path="bad.py", outline=True)
    assert not r.ok and "does not parse as Python (line 1" in r.output


def test_view_cuts_at_whole_lines_and_names_the_rest(ws):
    r = T.execute(ws, "view", {"path": "pkg/engine.py"}, tool_output_chars=300)
    assert r.truncated and r.output.endswith("[lines 8-28 not shown (output limit); view again with start_line 8]")
    assert len(r.output) <= 300


def test_view_refuses_binary_files(ws):
    (ws.root / "blob.bin").write_bytes(b"\x00\x01\x02")
    r = run(ws, "view", path="blob.bin")
    assert not r.ok and "a binary file" in r.output


# ------------------------------------------------------------------------------------------------ command line
@pytest.mark.parametrize(("command", "reason"), [
    ("rm -rf pkg", "'rm' is not an allowed command"),
    ("cat pkg/util.py", "'cat' is not an allowed command"),
    ("/bin/ls", "give the program by its name only"),
    ("ls > out.txt", "'>' (a redirection)"),
    ("grep x < pkg/util.py", "'<' (a redirection)"),
    ("ls; rm -rf pkg", "';' (a command separator)"),
    ("ls && rm x", "'&' (a background job or '&&')"),
    ("ls | wc -l", "'|' (a pipe)"),
    ("ls $(rm -rf pkg)", "'$(' (command substitution)"),
    ("ls `rm -rf pkg`", "a backquote (command substitution)"),
    ("ls\nrm -rf pkg", "a line break (one command only)"),
    ("sed -i s/a/b/ pkg/util.py", "sed -i edits files in place, and nothing is writable"),
    ("sed -ni 1p pkg/util.py", "sed -i edits files in place"),
    ("sed --in-place=.bak -n 1p pkg/util.py", "sed --in-place edits files in place"),
    ("sed 1,3p pkg/util.py", "sed is allowed only with -n"),
    ("sed -n '1w out.txt' pkg/util.py", "'w' writes a file"),
    ("sed -n '1e id' pkg/util.py", "'e' runs a command"),
    ("sed -n '1r leak.txt' pkg/util.py", "'r' reads another file"),
    ("sed -n s/a/b/w pkg/util.py", "'s' substitutes"),
    ("find . -delete", "find -delete deletes files"),
    ("find . -name '*.py' -exec rm {} +", "find -exec runs a command"),
    ("find . -fprint out.txt", "find -fprint writes a file"),
    ("find -L .", "follows symlinks"),
    ("find -files0-from names.txt", "find -files0-from reads its starting points from a file"),
    ("sort -o out.txt README.md", "sort -o writes a file"),
    ("sort --out=out.txt README.md", "sort --out writes a file"),
    ("uniq README.md out.txt", "uniq INPUT OUTPUT writes OUTPUT"),
    ("grep -R TOP .", "grep -R follows every symlink"),
    ("tail -f README.md", "never ends"),
    ("ls /etc", "'/etc' is an absolute path"),
    ("head -n 3 /etc/passwd", "'/etc/passwd' is an absolute path"),
    ("grep root /etc/passwd", "'/etc/passwd' is an absolute path"),
    ("head ../outside/secret.txt", "'..' would leave the repository"),
    ("wc -l pkg/../../outside/secret.txt", "'..' would leave the repository"),
    ("head leak.txt", "'leak.txt' is a symlink leading outside the repository"),
    ("ls leak", "'leak' is a symlink leading outside the repository"),
    ("grep -r TOP leak/", "is a symlink leading outside the repository"),
    ("grep -f leak.txt README.md", "'leak.txt' is a symlink leading outside"),
    ("du --files0-from=names.txt", "reads file names from a file"),
    ("ls 'unclosed", "cannot be parsed"),
    ("", "the command is empty"),
])
def test_refused_commands_are_not_run_and_say_why(ws, command, reason, monkeypatch):
    ran = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: ran.append(a))
    before = sorted(p.name for p in ws.root.rglob("*"))
    r = run(ws, "command_line", command=command)
    assert not r.ok and r.output.startswith("refused: ") and reason in r.output, r.output
    assert ran == [] and sorted(p.name for p in ws.root.rglob("*")) == before


def test_allowed_commands_run_in_the_workspace(ws):
    assert run(ws, "command_line", command="ls pkg").output == "__init__.py\nalias.py\nengine.py\nutil.py"
    assert run(ws, "command_line", command="sed -n '4,5p' pkg/util.py").output.splitlines()[0] == \
        "def normalize(name: str) -> str:"
    assert run(ws, "command_line", command="wc -l pkg/util.py").output == "10 pkg/util.py"
    r = run(ws, "command_line", command="grep -rn 'def normalize' pkg")
    assert r.ok and r.output == "pkg/util.py:4:def normalize(name: str) -> str:"
    r = run(ws, "command_line", command="find docs -name '*.md'")
    assert r.output == "docs/guide.md"
    r = run(ws, "command_line", command="grep -e /etc/passwd README.md")  # a pattern given with -e is no path
    assert r.ok and r.output == "(no output)\n[exit status 1]"


def test_unquoted_globs_expand_inside_the_workspace_only(ws):
    assert T.check_command(ws, "ls pkg/*.py") == ["ls", "pkg/__init__.py", "pkg/alias.py", "pkg/engine.py",
                                                  "pkg/util.py"]
    assert T.check_command(ws, "ls 'pkg/*.py'") == ["ls", "pkg/*.py"]  # quoted: as written
    assert T.check_command(ws, "ls *") == ["ls", "README.md", "docs", "pkg"]  # the links out are dropped
    assert T.check_command(ws, "ls leak*") == ["ls", "leak*"]  # only links out match: nothing is expanded
    assert T.check_command(ws, "grep -n def pkg/u*.py") == ["grep", "-n", "def", "pkg/util.py"]
    (ws.root / "-delete").write_text("")
    assert T.check_command(ws, "find *") == ["find", "./-delete", "README.md", "docs", "pkg"]  # never an option
    r = run(ws, "command_line", command="wc -l pkg/*.py")
    assert r.ok and r.output.splitlines()[-1].endswith(" total") and (ws.root / "-delete").exists()
    assert "'/etc/*' is an absolute path" in run(ws, "command_line", command="ls /etc/*").output


def test_ls_all_leaves_out_the_folder_above(ws):
    assert T.check_command(ws, "ls -la pkg") == ["ls", "-lA", "pkg"]
    assert T.check_command(ws, "ls --all -I a*") == ["ls", "--almost-all", "-I", "a*"]
    lines = run(ws, "command_line", command="ls -la").output.splitlines()
    assert not any(line.endswith((" ..", " .")) for line in lines) and any(line.endswith(" pkg") for line in lines)


def test_recursive_commands_do_not_follow_links_out(ws):
    r = run(ws, "command_line", command="grep -rn TOP .")
    assert SECRET not in r.output
    r = run(ws, "command_line", command="find . -name 'secret*'")
    assert r.output == "(no output)"


def test_command_output_is_capped(ws):
    r = T.execute(ws, "command_line", {"command": "grep -rn e ."}, tool_output_chars=120)
    assert r.truncated and "[output cut at 120 characters:" in r.output
    assert len(r.output.split("\n[output cut")[0]) == 120
    full = T.execute(ws, "command_line", {"command": "grep -rn e ."}, tool_output_chars=10**7).output
    left = int(r.output.rsplit(": ", 1)[1].split(" more")[0].replace(",", ""))
    assert left == len(full) - 120 and r.output.count("[output cut at") == 1  # what was really left out


def test_a_command_past_its_timeout_is_stopped(ws, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_AGENT_SANDBOX", "off")  # the direct spawn (bwrap's: test_agent_sandbox.py)
    seen = {}

    def fake_run(argv, **kw):
        seen.update(kw)
        raise subprocess.TimeoutExpired(argv, kw["timeout"], output=b"partial")  # argv[0] is the bare name

    monkeypatch.setattr(subprocess, "run", fake_run)
    r = T.execute(ws, "command_line", {"command": "find ."}, command_timeout_s=2.5)
    assert not r.ok and "stopped after 2.5 seconds (the time limit)" in r.output and r.output.startswith("partial")
    assert seen["timeout"] == 2.5 and seen["cwd"] == ws.root and seen["stdin"] is subprocess.DEVNULL
    assert seen["executable"].endswith("/find")
    assert "shell" not in seen


def test_the_command_environment_holds_no_keys(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-for-commands")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("HOME", "/root")
    env = T.command_environment()
    assert env == {"PATH": T.COMMAND_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    assert "sk-test-not-for-commands" not in repr(env)
    seen = {}
    real = subprocess.run

    def spy(argv, **kw):
        seen.update(kw)
        return real(argv, **kw)

    monkeypatch.setattr(subprocess, "run", spy)
    assert run(ws, "command_line", command="ls").ok
    assert seen["env"] == env and not any("KEY" in k for k in seen["env"]) and os.environ["OPENAI_API_KEY"]


# ------------------------------------------------------------------------------------------------ hostile input
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=40),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                 max_size=3), max_leaves=6)
_paths = st.sampled_from(["", ".", "/", "..", "../x", "~", "leak", "leak.txt", "leak/secret.txt", "pkg/",
                          "pkg/engine.py", "a" * 5000, "pkg/\x00x", "*.py", "[", "pkg/engine.py/x"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["search", "view", "command_line", "finish", "nope", ""]),
       args=st.dictionaries(st.sampled_from(["query", "path", "start_line", "end_line", "outline", "command",
                                             "answer", "extra"]), _json | _paths, max_size=4))
def test_no_argument_makes_a_tool_raise_or_leak(ws, name, args):
    r = T.execute(ws, name, args)
    assert isinstance(r, T.ToolResult) and isinstance(r.output, str) and SECRET not in r.output


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(["ls", "grep", "sed", "find", "head", "sort", "uniq", "du", "-n", "-r", "-R",
                                       "-e", "-i", "-o", "-L", "-exec", "-delete", "--out=x", "1p", "1w", "TOP", ".",
                                       "..", "/etc", "leak", "leak.txt", "leak/", "pkg", "pkg/util.py", "'", "--",
                                       "-f", "--files0-from=x", "a" * 300, "*", "leak*", "*/*"]), min_size=1,
                      max_size=6))
def test_no_command_reads_outside_or_writes(ws, words):
    before = sorted(str(p) for p in ws.root.rglob("*"))
    r = T.execute(ws, "command_line", {"command": " ".join(words)}, command_timeout_s=5)
    assert SECRET not in r.output
    assert sorted(str(p) for p in ws.root.rglob("*")) == before


def test_a_file_name_that_is_not_utf8_never_puts_a_surrogate_in_an_output(tmp_path):
    # A name holding bytes that are not UTF-8 is decoded by the OS layer with surrogateescape; such text cannot be
    # encoded as UTF-8, so hashing or sending the next request would raise (it stopped the whole answers run).
    root = make_repo(tmp_path)
    bad = os.path.join(os.fsencode(root), b"pkg", b"bad\xff\xfename.py")
    with open(bad, "wb") as f:
        f.write(b"NEEDLE = 1\n")
    ws = Workspace(root)
    outputs = [run(ws, "view", path="pkg").output, run(ws, "search", query="NEEDLE", path=None).output,
               run(ws, "search", query="NEEDLE", path="pkg/*.py").output]
    for out in outputs:
        out.encode("utf-8")
        assert "bad\ufffd\ufffdname.py" in out


# ------------------------------------------------------------------------------------------------ .git hidden
GIT_TOKEN = "ghp_NOT_A_REAL_TOKEN_123"


def git_workspace(tmp_path) -> Workspace:
    """The fixture repository as a git checkout whose .git/config holds a remote URL with a token, and a symlink
    into .git."""
    root = make_repo(tmp_path)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "config", "remote.origin.url",
                    f"https://u:{GIT_TOKEN}@example.com/r.git"], check=True, env=env)
    os.symlink(".git/config", root / "gitconfig_link")
    return Workspace(root)


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_git_metadata_is_invisible_to_every_tool(tmp_path, mode):
    ws = git_workspace(tmp_path)
    box = T.command_sandbox(ws, mode)
    for path in (".git/config", ".git", "./.git/HEAD", "pkg/../.git/config", "gitconfig_link"):
        r = run(ws, "view", path=path)
        assert not r.ok and (".git is git's metadata" in r.output or "leads into .git" in r.output), (path, r.output)
    listing = run(ws, "view", path=".").output
    assert ".git" not in listing.split() and "gitconfig_link" in listing
    assert run(ws, "search", query=GIT_TOKEN).output.startswith("no matches")
    assert not run(ws, "search", query="x", path=".git").ok
    for command in ("head .git/config", "grep -n url .git/config", "sed -n 1p .git/config", "ls .git",
                    "wc -l ./.git/config", "head gitconfig_link", "find .git", "grep -rn x .git"):
        r = T.command_line(ws, command, sandbox=box)
        assert not r.ok and r.output.startswith("refused: ") and ".git" in r.output, (command, r.output)
    for command in (f"grep -rn {GIT_TOKEN} .", "grep -rln url .", "find .", "find . -name config", "ls -RA",
                    "ls -lRA", "ls -A", "du -a .", "ls -a", "head .g*/config", "wc -l .*/*"):
        r = T.command_line(ws, command, sandbox=box)
        assert GIT_TOKEN not in r.output and "HEAD" not in r.output and "refs" not in r.output, (command, r.output)
        assert not any(part == ".git" for line in r.output.splitlines()
                       for part in line.replace("\t", " ").replace("/", " ").replace(":", " ").split()), (command,
                                                                                                          r.output)
    assert "./pkg/engine.py" in T.command_line(ws, "find .", sandbox=box).output
    ls = T.command_line(ws, "ls -RA", sandbox=box).output
    assert "\n\n./pkg:\n" in ls  # the sections around the dropped .git ones keep their blank lines


def test_drop_git_lines_keeps_other_programs_output_and_the_ls_sections():
    text = ".:\n.git\nREADME\n\n./.git:\nHEAD\nconfig\n\n./.git/refs:\nheads\n\n./src:\na.py"
    assert T.drop_git_lines("ls", text) == ".:\nREADME\n\n./src:\na.py"
    assert T.drop_git_lines("ls", "total 12\n-rw 1 a .git\n-rw 1 a x") == "-rw 1 a x"  # the total counted .git
    assert T.drop_git_lines("grep", "src/a.py:1: see .git/config") == "src/a.py:1: see .git/config"
    assert T.drop_git_lines("find", "./a.git\n./.git\n./.git/HEAD\n./b") == "./a.git\n./b"


def test_a_leading_backslash_is_refused_saying_why(ws):
    r = T.command_line(ws, r"grep -rn '\[bold' pkg")
    assert r.output == ("refused: '\\\\[bold' starts with a backslash, which is taken as a path separator (so it "
                        "would name an absolute path); give paths relative to the repository root; if it is the "
                        "pattern, give it as -e PATTERN")
    assert T.command_line(ws, r"grep -rn -e '\[bold' pkg").ok
