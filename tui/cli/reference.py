"""The CLI reference, ``docs/cli.md``, generated from the ``--help`` of every command that is not hidden.

Run ``python -m benchwright.tui.cli.reference > docs/cli.md`` after changing a command, an option or a help text;
``tests/tui/test_cli_reference.py`` fails while the file differs from what this prints.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from .root import main

WIDTH = 100
"""Columns the help texts are wrapped at (fixed, so the reference does not depend on the terminal)."""


def command_paths(group: click.Group = main, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every visible command under ``group`` as ``(names after "benchwright", command)``, groups before their
    subcommands, in the order ``--help`` lists them (by name). Hidden commands (the old spellings) are left out."""
    ctx = click.Context(group, info_name="benchwright")
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        yield (*prefix, name), cmd
        if isinstance(cmd, click.Group):
            yield from command_paths(cmd, (*prefix, name))


def help_text(path: tuple[str, ...]) -> str:
    """The ``--help`` output of ``benchwright PATH...`` at :data:`WIDTH` columns."""
    ctx = click.Context(main, info_name="benchwright", terminal_width=WIDTH, max_content_width=WIDTH,
                        **main.context_settings)
    cmd: click.Command = main
    for name in path:
        cmd = cmd.get_command(ctx, name)  # type: ignore[attr-defined]
        ctx = click.Context(cmd, info_name=name, parent=ctx, terminal_width=WIDTH, max_content_width=WIDTH)
    return cmd.get_help(ctx)


def render() -> str:
    """``docs/cli.md``: a contents list, then one section per command with its ``--help`` in a code block."""
    paths = [path for path, _ in command_paths()]
    out = ["# Command-line reference", "",
           "Generated from `--help` by `python -m benchwright.tui.cli.reference > docs/cli.md`; do not edit by "
           "hand (`tests/tui/test_cli_reference.py` checks it is current). The old spellings, hidden aliases kept "
           "for one release, are listed in the README (\"Deprecated spellings\").", ""]
    out += [f"- [`{_title(p)}`](#{_anchor(p)})" for p in [(), *paths]]
    for path in [(), *paths]:
        out += ["", f"## {_title(path)}", "", "```text", help_text(path).rstrip(), "```"]
    return "\n".join(out) + "\n"


def _title(path: tuple[str, ...]) -> str:
    """``benchwright PATH...``, the heading of a command's section."""
    return " ".join(("benchwright", *path))


def _anchor(path: tuple[str, ...]) -> str:
    """The GitHub anchor of the heading ``benchwright PATH``."""
    return "-".join(("benchwright", *path)).lower()


if __name__ == "__main__":  # pragma: no cover
    click.echo(render(), nl=False)
