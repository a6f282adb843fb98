"""The agent tests' repository: tests/data/agent_repo copied into a temporary folder, with the links the tests need
made at run time (never committed): ``leak.txt`` and ``leak/`` lead outside it, ``pkg/alias.py`` stays inside."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "agent_repo"
SECRET = "TOP SECRET OUTSIDE THE WORKSPACE"


def make_repo(tmp_path: Path) -> Path:
    """A copy of the fixture repository under ``tmp_path / 'repo'`` with a folder beside it that holds a secret,
    and symlinks into that folder from inside the copy."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (outside / "secret.py").write_text(f"# {SECRET}\n")
    os.symlink(outside / "secret.txt", root / "leak.txt")
    os.symlink(outside, root / "leak")
    os.symlink("engine.py", root / "pkg" / "alias.py")
    return root


def test_the_fixture_has_its_links(tmp_path):
    root = make_repo(tmp_path)
    assert (root / "leak.txt").is_symlink() and (root / "leak.txt").read_text().startswith(SECRET)
    assert (root / "leak").is_symlink() and (root / "pkg" / "alias.py").is_symlink()
    assert sorted(p.name for p in (root / "pkg").iterdir()) == ["__init__.py", "alias.py", "engine.py", "util.py"]
