"""The fixture of the stale-evidence tests (issue 16 item 7): a git repository with two commits, and a project whose
pairs cite it at the first.

Commit 1: ``a.py`` with a function ``f`` (lines 4-5), ``b.py``, ``c.py``, ``d.py`` (one line of hostile text).
Commit 2: ``f`` moved within ``a.py`` (to lines 8-9, other lines above it), ``b.py`` deleted, ``c.py`` untouched,
``d.py``'s line changed (to other hostile text: Rich markup, a click action, an ANSI escape).

A module with a unique name (not conftest) so test modules can import it whatever else is collected.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import Store

A_OLD = "import os\n\n\ndef f(x):\n    return x + 1\n\n\nVALUE = 2\n"
A_NEW = "import os\n\nVALUE = 2\n\nOTHER = 3\n\n\ndef f(x):\n    return x + 1\n"
B = 'def g():\n    return "g"\n'
C = "def h():\n    return 3\n"
D_OLD = 'LABEL = "[bold]old[/bold]"\n'
D_NEW = 'LABEL = "[@click=app.quit]new[/] \x1b[31mred\x1b[0m [link=file:///etc]x[/link]"\n'

QUESTIONS = [
    ("What does f do?", "f is defined at a.py:4-5 and adds one."),
    ("What does g return?", "See b.py lines 1-2."),
    ("What does h return?", "c.py:1-2 returns 3."),
    ("What is LABEL?", "d.py:1 sets it."),
    ("What is the answer without files?", "Nothing is cited here."),
]
"""(question, reference answer) of pairs #1-#5: #1 moved, #2 deleted, #3 unchanged, #4 changed, #5 cites nothing."""


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with a fixed identity and no user configuration; its standard output, stripped."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


@dataclass(frozen=True)
class StaleFixture:
    """The project file, the checkout (at commit 1), a second work tree at commit 2, the two SHAs, the pair ids
    (#1-#5 in order)."""

    db: Path
    checkout: Path
    new_tree: Path
    one: str
    two: str
    pair_ids: tuple[str, ...]


def make_stale_fixture(root: Path, *, name: str = "demo") -> StaleFixture:
    """Build the repository, a work tree of commit 2 beside it, and the project (pairs imported, ``name`` registered
    at commit 1)."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    for rel, text in (("a.py", A_OLD), ("b.py", B), ("c.py", C), ("d.py", D_OLD)):
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    one = git(repo, "rev-parse", "HEAD")
    (repo / "a.py").write_text(A_NEW, encoding="utf-8")
    (repo / "d.py").write_text(D_NEW, encoding="utf-8")
    git(repo, "rm", "-q", "b.py")
    git(repo, "commit", "-q", "-am", "two")
    two = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", one)
    new_tree = root / "repo-two"
    git(repo, "worktree", "add", "-q", str(new_tree), two)
    data = root / "pairs.jsonl"
    data.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in QUESTIONS), encoding="utf-8")
    db = root / "project.db"
    with Store.open(db) as store:
        store.add_repository(Repository(name=name, commit=one, local_path=str(repo.resolve()), commit_verified=True),
                             "setup")
        store.apply_import(parse("jsonl", data, repository=name), annotator="setup", file_path=data)
        ids = tuple(row.id for row in store.queue_page("x", limit=100))
    return StaleFixture(db=db, checkout=repo.resolve(), new_tree=new_tree.resolve(), one=one, two=two, pair_ids=ids)
