"""Documentation stripping (Code-QA-Bench "Methodology" 2) on the fixture package tests/data/strip_fixture: the
exact output, idempotence, every file compiling, --keep-lines line numbers, and the tree rules (deleted files,
files that do not parse, encodings, line endings, symlinks)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchwright.core.errors import RepositoryError
from benchwright.core.strip import check_compiles, strip_python_source, strip_tree

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "strip_fixture"

CORE_STRIPPED = '''#!/usr/bin/env python3

from __future__ import annotations

import re
from typing import Any

HASH = "#"
PATTERN = re.compile(r"#\\d+")
TEMPLATE = f"{HASH} item {1 + 1} # not a comment"
NESTED = f"{'#'.join(['a', 'b'])}"
COUNTS = {}  # type: dict[str, int]
LATER = None  # type: ignore[assignment]


class OnlyDocumented:
    pass


class Greeter:

    greeting: str = "hello"
    """An attribute docstring: a string literal after a statement, kept."""

    def __init__(self, name: str) -> None:
        self.name = name

    def greet(self, loud: bool = False) -> str:
        text = f"{self.greeting}, {self.name}"
        if loud:
            return text.upper() + "!"
        return text

    async def later(self) -> Any:
        def inner():
            return 1
        return inner()


def one_liner(): pass


def described(x: int) -> int:

    return x * 2
'''


def _tree(root: Path) -> dict[str, bytes | str]:
    """``{relative path: bytes, or 'link -> target'}`` of every file and link under ``root``."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = f"link -> {os.readlink(path)}"
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found


@pytest.fixture(scope="module")
def stripped(tmp_path_factory) -> tuple[Path, dict]:
    dest = tmp_path_factory.mktemp("strip") / "copy"
    return dest, strip_tree(FIXTURE, dest)


def test_the_fixture_package_strips_to_the_exact_text(stripped):
    dest, _ = stripped
    assert (dest / "pkg" / "core.py").read_text() == CORE_STRIPPED
    assert (dest / "pkg" / "__init__.py").read_text() == "\nfrom .core import Greeter\n"
    assert (dest / "pkg" / "only_doc.py").read_bytes() == b""
    assert (dest / "pkg" / "doc" / "helpers.py").read_text() == "\nHELP = 1\n"
    # An encoding declaration is kept, and the file is written back in its encoding.
    assert (dest / "pkg" / "latin1.py").read_bytes() == b'# -*- coding: latin-1 -*-\nNAME = "caf\xe9"\n'


def test_documentation_is_deleted_and_the_rest_copied(stripped):
    dest, manifest = stripped
    assert sorted(_tree(dest)) == [
        "pkg/__init__.py", "pkg/broken.py", "pkg/core.py", "pkg/data.bin", "pkg/doc/helpers.py", "pkg/latin1.py",
        "pkg/only_doc.py", "setup.cfg",
    ]
    assert manifest["deleted"] == [
        "CHANGES.rst", "README.md", "docs/conf.py", "docs/index.rst", "pkg/README.txt", "pkg/notes.md",
    ]
    # Binary and non-Python files are copied byte for byte, comment-like text included.
    for rel in ("pkg/data.bin", "setup.cfg"):
        assert (dest / rel).read_bytes() == (FIXTURE / rel).read_bytes()


def test_a_file_that_does_not_parse_is_copied_unchanged_and_listed(stripped):
    dest, manifest = stripped
    assert (dest / "pkg/broken.py").read_bytes() == (FIXTURE / "pkg/broken.py").read_bytes()
    assert manifest["unchanged"] == [{"path": "pkg/broken.py", "reason": "line 3: invalid syntax"}]
    assert "pkg/broken.py" not in manifest["files"]


def test_the_manifest_counts_what_was_removed(stripped):
    _, manifest = stripped
    core = manifest["files"]["pkg/core.py"]
    assert core == {
        "docstrings": 8, "docstring_lines": [[2, 5], [21, 21], [25, 25], [31, 31], [42, 42], [44, 44], [48, 48],
                                             [52, 56]],
        "comments": 6, "comment_lines": [9, 12, 27, 35, 36, 38], "type_comments_kept": 2, "lines": [58, 45],
    }
    assert manifest["totals"] == {
        "python_files": 6, "stripped_files": 5, "docstrings": 12, "comments": 9, "type_comments_kept": 2,
        "lines_removed": 20, "files_deleted": 6, "files_copied": 8, "unchanged": 1, "links_kept": 0,
        "links_skipped": 0, "skipped": 0,
    }
    assert manifest["derivation"] == "code-only" and manifest["keep_lines"] is False and manifest["rules"] == 1


def test_every_stripped_file_compiles(stripped):
    dest, manifest = stripped
    for rel in manifest["files"]:
        path = dest / rel
        check_compiles(path.read_bytes().decode("latin-1" if "latin1" in rel else "utf-8"), rel)


@pytest.mark.parametrize("keep_lines", [False, True])
def test_stripping_the_stripped_copy_changes_nothing(tmp_path, keep_lines):
    first = tmp_path / "first"
    strip_tree(FIXTURE, first, keep_lines=keep_lines)
    again = strip_tree(first, tmp_path / "again", keep_lines=keep_lines)
    assert _tree(tmp_path / "again") == _tree(first)
    assert again["files"] == {} and again["deleted"] == []
    assert again["totals"]["type_comments_kept"] == 2  # still there, still kept


def test_keep_lines_keeps_every_remaining_line_at_its_number(tmp_path):
    strip_tree(FIXTURE, tmp_path / "copy", keep_lines=True)
    for rel in ("pkg/core.py", "pkg/__init__.py", "pkg/doc/helpers.py"):
        before = (FIXTURE / rel).read_text().splitlines()
        after = (tmp_path / "copy" / rel).read_text().splitlines()
        assert len(after) == len(before)
        # Where a docstring shared its line with code, the code stays on that line.
        shared = {44: "            return 1", 48: "def one_liner(): pass"} if rel == "pkg/core.py" else {}
        for n, line in enumerate(after, 1):
            # A line is the original, the original less its comment, blank, or `pass` where a docstring was.
            assert line in ("", before[n - 1], shared.get(n)) or before[n - 1].startswith(line) \
                or line.strip() == "pass", (rel, n, line)
    core = (tmp_path / "copy" / "pkg/core.py").read_text().splitlines()
    original = (FIXTURE / "pkg/core.py").read_text().splitlines()
    assert core[58 - 1] == original[58 - 1] == "    return x * 2"
    assert core[32 - 1] == original[32 - 1] == "        self.name = name"
    assert core[21 - 1] == "    pass"  # the class's docstring line holds the pass
    assert core[2 - 1 : 6 - 1] == ["", "", "", ""]  # the module docstring's lines are blank


def test_one_source_rules():
    source = (
        'def f():\n    """Doc.\n\n    Long.\n    """\n    # note\n    return "a # b"  # why\n'
        'def g(): "doc"; return 1\n'
        'class C:\n    "first"\n    "second"\n'
    )
    result = strip_python_source(source)
    assert result.text == 'def f():\n    return "a # b"\ndef g(): return 1\nclass C:\n    pass\n'
    assert result.docstrings == ((2, 5), (8, 8), (10, 10), (11, 11))
    assert result.comments == (6, 7)
    kept = strip_python_source(source, keep_lines=True).text
    assert kept == ('def f():\n\n\n\n\n\n    return "a # b"\ndef g(): return 1\nclass C:\n    pass\n\n')
    # f-strings are not docstrings; bytes are not either; a string after the first statement is kept.
    other = 'def h():\n    f"{1}"\n    return 1\ndef k():\n    b"x"\nx = 1\n"after"\n'
    assert strip_python_source(other).text == other


def test_keep_lines_keeps_code_after_a_multi_line_docstring_on_its_line():
    source = '"""a\nb"""; import os\ndef n():\n    """multi\n    line"""; return 2\n'
    kept = strip_python_source(source, keep_lines=True).text
    assert kept == "\nimport os\ndef n():\n\n    return 2\n"
    assert strip_python_source(source).text == "import os\ndef n():\n    return 2\n"
    assert strip_python_source(kept, keep_lines=True).text == kept


def test_code_after_a_docstring_is_kept_byte_for_byte_even_its_trailing_blanks_inside_a_string():
    source = 'def f():\n    """doc"""; x = """a   \nb"""\n    return x  # why   \n'
    for keep_lines in (False, True):
        out = strip_python_source(source, keep_lines=keep_lines).text
        assert out == 'def f():\n    x = """a   \nb"""\n    return x\n'
        namespace: dict = {}
        exec(compile(out, "<stripped>", "exec"), namespace)
        assert namespace["f"]() == "a   \nb"


def test_comments_that_are_read_by_tools_are_kept_and_others_removed():
    source = "#!/usr/bin/env python\n# coding: utf-8\nx = []  # type: list[int]\ny = 1  # noqa: E501\n"
    result = strip_python_source(source)
    assert result.text == "#!/usr/bin/env python\n# coding: utf-8\nx = []  # type: list[int]\ny = 1\n"
    assert result.type_comments == (3,) and result.comments == (4,)
    # Not on line 1, a #! is an ordinary comment.
    assert strip_python_source("x = 1\n#!/bin/sh\n").text == "x = 1\n"


def test_line_endings_and_a_missing_final_newline_are_kept():
    assert strip_python_source('"""D."""\r\nx = 1  # c\r\ny = 2').text == "x = 1\r\ny = 2"
    assert strip_python_source("x = 1  # c").text == "x = 1"


def test_a_source_that_does_not_compile_raises():
    with pytest.raises(SyntaxError):
        strip_python_source("def f(:\n")
    with pytest.raises(SyntaxError):
        strip_python_source("return 1\n")  # parses, but does not compile
    with pytest.raises((SyntaxError, ValueError)):  # NUL bytes: ValueError before Python 3.11.4
        strip_python_source("x = 1\x00\n")


def test_files_that_cannot_be_read_as_python_are_copied_unchanged(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "nul.py").write_bytes(b"x = 1\x00\n")
    (src / "bad.py").write_bytes(b"x = '\xff'  # not UTF-8\n")
    manifest = strip_tree(src, tmp_path / "out")
    assert [u["path"] for u in manifest["unchanged"]] == ["bad.py", "nul.py"]
    assert "cannot be decoded" in manifest["unchanged"][0]["reason"]
    for name in ("nul.py", "bad.py"):
        assert (tmp_path / "out" / name).read_bytes() == (src / name).read_bytes()


def test_symlinks_inside_are_relinked_and_others_skipped(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    outside = tmp_path / "secret.py"
    outside.write_text("KEY = 1\n")
    (src / "pkg" / "alias.py").symlink_to("core.py")
    (src / "pkg" / "absolute.py").symlink_to(src / "pkg" / "core.py")
    (src / "pkg" / "out.py").symlink_to(outside)
    (src / "pkg" / "dangling.py").symlink_to("missing.py")
    (src / "pkg" / "to_docs").symlink_to("../docs")
    (src / "pkg" / "subdir").symlink_to("doc")
    (src / ".git").mkdir()
    (src / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    manifest = strip_tree(src, tmp_path / "out")
    out = tmp_path / "out"
    assert os.readlink(out / "pkg" / "alias.py") == "core.py"
    assert os.readlink(out / "pkg" / "absolute.py") == "core.py"  # made relative, so it names the copy
    assert (out / "pkg" / "absolute.py").read_text() == CORE_STRIPPED
    assert os.readlink(out / "pkg" / "subdir") == "doc"
    assert {s["path"]: s["reason"] for s in manifest["links"]["skipped"]} == {
        "pkg/out.py": "leads outside the repository",
        "pkg/dangling.py": "dangles (its target does not exist)",
        "pkg/to_docs": "points at something the copy does not keep",
    }
    assert not (out / "pkg" / "out.py").exists() and not (out / "pkg" / "out.py").is_symlink()
    assert not (out / ".git").exists()
    assert [k["path"] for k in manifest["links"]["kept"]] == ["pkg/absolute.py", "pkg/alias.py", "pkg/subdir"]


def test_the_copy_is_never_written_inside_the_original_or_over_something(tmp_path):
    with pytest.raises(RepositoryError, match="inside the repository"):
        strip_tree(FIXTURE, FIXTURE / "pkg" / "copy")
    (tmp_path / "there").mkdir()
    with pytest.raises(RepositoryError, match="already exists"):
        strip_tree(FIXTURE, tmp_path / "there")
    with pytest.raises(RepositoryError, match="not a directory"):
        strip_tree(FIXTURE / "setup.cfg", tmp_path / "x")


@pytest.mark.slow
def test_stripped_code_still_runs(tmp_path):
    """Executable code is kept: the installed click, stripped, runs a command as before (its help texts, which
    click reads from docstrings, are the one thing stripping takes away)."""
    import subprocess
    import sys

    import click

    manifest = strip_tree(Path(click.__file__).parent, tmp_path / "click")
    assert manifest["unchanged"] == [] and manifest["totals"]["docstrings"] > 100
    program = (
        "import click\n"
        "@click.command()\n@click.option('--n', type=int, default=2)\n@click.argument('who')\n"
        "def hello(n, who):\n    '''Say hello.'''\n    click.echo(' '.join([f'hi {who}'] * n))\n"
        "hello(['--n', '3', 'ada'], standalone_mode=False)\n"
        "print(click.__file__)\n"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["hi ada hi ada hi ada", str(tmp_path / "click" / "__init__.py")]
