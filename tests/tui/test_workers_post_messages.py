"""Long work reaches the app as messages: a thread worker of a screen (``@work(thread=True)``) touches no
widget and owns no screen state; it posts messages and their handlers, on the app's thread, do the rest
(harlequin's pattern). Checked on the source of tui/app.py and tui/screens/*.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TUI = Path(__file__).resolve().parents[2] / "tui"
FORBIDDEN_CALLS = {"query_one", "query", "call_from_thread", "notify", "mount", "refresh", "push_screen",
                   "dismiss", "focus"}
"""Calls a thread worker must not make: DOM reads and changes, toasts, and handing UI code to the app's thread
(``call_from_thread``: post a message instead)."""


def _thread_workers(tree: ast.AST) -> list[ast.FunctionDef]:
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and getattr(dec.func, "id", getattr(dec.func, "attr", "")) == "work" and any(
                    k.arg == "thread" and isinstance(k.value, ast.Constant) and k.value.value for k in dec.keywords):
                out.append(node)
    return out


def _problems(fn: ast.FunctionDef) -> list[str]:
    found = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_CALLS:
            found.append(f"line {node.lineno}: .{node.func.attr}()")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "notify":
            found.append(f"line {node.lineno}: notify()")
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AugAssign | ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                found.append(f"line {node.lineno}: sets self.{t.attr}")
    return found


SOURCES = sorted([TUI / "app.py", *(TUI / "screens").glob("*.py")])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_thread_workers_only_post_messages(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = {fn.name: p for fn in _thread_workers(tree) if (p := _problems(fn))}
    assert not bad, f"{path.name}: thread workers touching the UI or screen state: {bad}"


def test_the_check_sees_thread_workers():
    """The check is not vacuous: the screens have thread workers, and a bad one is caught."""
    assert sum(len(_thread_workers(ast.parse(p.read_text(encoding="utf-8")))) for p in SOURCES) >= 5
    bad = ast.parse("@work(thread=True)\ndef w(self):\n    self.done = 1\n    self.app.call_from_thread(f)\n")
    assert len(_problems(_thread_workers(bad)[0])) == 2
