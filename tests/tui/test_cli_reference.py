"""``docs/cli.md`` is the CLI reference generated from ``--help`` (``tui/cli/reference.py``): it is current, and it
has a section for every command a user can see, and none for a hidden old spelling."""

from __future__ import annotations

from pathlib import Path

import click

from benchwright.tui.cli import main
from benchwright.tui.cli.reference import render
from benchwright.tui.cli.root import ALIAS_NAMES

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _commands(group: click.Group) -> list[tuple[str, click.Command]]:
    """Every command of ``group``, the root's lazy ones (and its hidden aliases) loaded."""
    ctx = click.Context(group)
    names = [*group.list_commands(ctx), *(ALIAS_NAMES if group is main else ())]
    return [(name, group.get_command(ctx, name)) for name in names]


def _visible(group: click.Group, prefix: str = "benchwright") -> list[str]:
    out = []
    for name, cmd in _commands(group):
        if cmd.hidden:
            continue
        out.append(f"{prefix} {name}")
        if isinstance(cmd, click.Group):
            out += _visible(cmd, f"{prefix} {name}")
    return out


def _hidden(group: click.Group, prefix: str = "benchwright") -> list[str]:
    return [f"{prefix} {name}" for name, cmd in _commands(group) if cmd.hidden]


def test_reference_is_current():
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/cli.md is out of date: run python -m benchwright.tui.cli.reference > docs/cli.md")


def test_reference_lists_every_visible_command_and_no_hidden_one():
    headings = {line[3:] for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("## ")}
    visible = _visible(main)
    assert len(visible) > 40
    assert set(visible) | {"benchwright"} == headings
    assert not headings & set(_hidden(main))
    for command in visible:  # and each section is that command's own --help
        assert f"Usage: {command} " in DOC.read_text(encoding="utf-8")
