"""Start-up (issue 19 item 5): the root group loads its commands on use (``tui/cli/root.py``'s table), so
``benchwright --help``, ``--version``, a command's ``--help`` and shell completion import no heavy library. Checked
in fresh interpreters, like the layer test; and the table is checked against the commands it stands for, so the
lazy ``--help`` prints what the commands themselves would."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import click
import pytest
from click.utils import _make_default_short_help

from benchwright.tui.cli import main
from benchwright.tui.cli.root import ALIAS_NAMES, COMMANDS

HEAVY = (
    "numpy", "pandas", "pyarrow", "sklearn", "scipy", "statsmodels", "anthropic", "openai", "httpx", "httpx2",
    "textual", "rich", "sqlite_utils", "wordllama", "krippendorff", "jsonschema", "pygments", "markdown_it",
)
"""Libraries no start-up path may import (top-level package names)."""

ROOT_HEAVY = (*HEAVY, "pydantic")
"""... nor, for ``benchwright --help``, ``--version`` and completing a command name, pydantic (a command's own help
may load it: core's modules are pydantic models)."""

_RUN = """
import json, sys
from benchwright.tui.cli import main
try:
    main(json.loads(sys.argv[1]), prog_name="benchwright", standalone_mode=False)
except SystemExit:
    pass
print("\\n" + json.dumps(sorted(sys.modules)))
"""


def _loaded(args: list[str], env: dict[str, str] | None = None) -> tuple[str, set[str]]:
    """Run ``benchwright ARGS`` in a fresh interpreter: its output, and the modules it imported."""
    out = subprocess.run([sys.executable, "-c", _RUN, json.dumps(args)], capture_output=True, text=True,
                         check=True, env={**os.environ, **(env or {})}, timeout=120)
    text, _, modules = out.stdout.rstrip("\n").rpartition("\n")
    return text, set(json.loads(modules))


def _heavy(modules: set[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The ``heavy`` libraries among ``modules``."""
    return sorted({m.split(".")[0] for m in modules} & set(heavy))


def _complete(words: str) -> tuple[str, set[str]]:
    """Ask for bash completions of ``benchwright WORDS`` (the last word the incomplete one), as the shell does."""
    env = {"_BENCHWRIGHT_COMPLETE": "bash_complete", "COMP_WORDS": f"benchwright {words}",
           "COMP_CWORD": str(len(words.split(" ")))}
    return _loaded([], env)


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["-h"]], ids=" ".join)
def test_root_help_and_version_load_no_command_module(args):
    text, modules = _loaded(args)
    assert "Usage: benchwright" in text or "version" in text
    assert not _heavy(modules, ROOT_HEAVY), f"benchwright {' '.join(args)} imported {_heavy(modules, ROOT_HEAVY)}"
    ours = {m for m in modules if m.startswith("benchwright.")}
    assert ours <= {"benchwright.tui", "benchwright.tui.cli", "benchwright.tui.cli.root", "benchwright.tui.signals"}


def test_command_name_completion_loads_nothing_heavy():
    text, modules = _complete("ju")
    assert "plain,judgments" in text.splitlines()
    assert not any(line.endswith(",judge") for line in text.splitlines())  # hidden aliases are not offered
    assert not _heavy(modules, ROOT_HEAVY), _heavy(modules, ROOT_HEAVY)
    assert not any(m.startswith("benchwright.tui.cli.") and m != "benchwright.tui.cli.root" for m in modules)


@pytest.mark.parametrize("words", ["judgments r", "judgments run --mo", "judge --mo", "generate g"])
def test_subcommand_and_option_completion_load_nothing_heavy(words):
    text, modules = _complete(words)
    assert text.strip(), f"no completion for {words!r}"
    assert not _heavy(modules), _heavy(modules)


_EVERY_HELP = """
import json, sys
import click
from benchwright.tui.cli import main
from benchwright.tui.cli.root import ALIAS_NAMES
heavy = set(json.loads(sys.argv[1]))
seen, out = set(), {}

def walk(group, path, names):
    ctx = click.Context(group)
    for name in names:
        cmd = group.get_command(ctx, name)
        try:
            main([*path, name, "--help"], prog_name="benchwright", standalone_mode=False)
        except SystemExit:
            pass
        new = sorted({m.split(".")[0] for m in sys.modules} & heavy - seen)
        seen.update(new)
        out[" ".join([*path, name])] = new
        if isinstance(cmd, click.Group):
            walk(cmd, [*path, name], cmd.list_commands(click.Context(cmd)))

walk(main, [], [*main.list_commands(click.Context(main)), *ALIAS_NAMES])
print("\\n" + json.dumps(out))
"""


def test_no_command_help_loads_a_heavy_library():
    """``benchwright PATH --help`` for every command, group, subcommand and hidden alias, one after another in one
    fresh interpreter: none imports a heavy library (each is named with the first help that loaded it)."""
    out = subprocess.run([sys.executable, "-c", _EVERY_HELP, json.dumps(HEAVY)], capture_output=True, text=True,
                         check=True, timeout=300)
    helps = json.loads(out.stdout.rstrip("\n").rpartition("\n")[2])
    assert len(helps) > 100 and "judgments run" in helps and "judge" in helps
    assert not {path: libs for path, libs in helps.items() if libs}


# ---------------------------------------------------------------------------------------------------------------
# the table stands for the commands


def _eager_main() -> click.Group:
    """The root as it was before the table: a plain group with every command (and alias) added."""
    ctx = click.Context(main)
    commands = {name: main.get_command(ctx, name) for name in [*main.list_commands(ctx), *ALIAS_NAMES]}
    return click.Group(main.name, commands=commands, params=main.params, callback=main.callback, help=main.help,
                       context_settings=main.context_settings)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_table_entry_is_its_command(name):
    module, attr = COMMANDS[name][0].split(":")
    try:
        cmd = getattr(importlib.import_module(f"benchwright.tui.cli.{module}"), attr)
    except ModuleNotFoundError as exc:
        if exc.name != f"benchwright.tui.cli.{module}":
            raise
        pytest.skip(f"tui/cli/{module}.py is not written yet (the table names it ahead)")
    assert cmd.name == name and not cmd.hidden
    short = cmd.short_help or _make_default_short_help(cmd.help or "", 10**6)
    assert COMMANDS[name][1] == short, f"COMMANDS[{name!r}] in tui/cli/root.py: put {short!r}"


def test_alias_names_are_the_aliases():
    from benchwright.tui.cli.aliases import ALIASES

    assert set(ALIAS_NAMES) == {a.name for a in ALIASES}
    assert all(main.get_command(click.Context(main), a.name) is a for a in ALIASES)


@pytest.mark.parametrize("width", [60, 80, 100, 200])
def test_lazy_help_is_the_eager_help(width):
    eager = _eager_main()
    for group in (main, eager):
        assert group.list_commands(click.Context(group))  # both list something
    texts = [g.get_help(click.Context(g, info_name="benchwright", terminal_width=width, max_content_width=width,
                                      **main.context_settings)) for g in (main, eager)]
    assert texts[0] == texts[1]
    assert "  judgments " in texts[0] and "  judge " not in texts[0]


def test_a_mistyped_command_still_gets_suggestions():
    from click.testing import CliRunner

    r = CliRunner().invoke(main, ["judgment"])
    assert r.exit_code == 2 and "No such command 'judgment'" in r.output and "judgments" in r.output


def test_old_generate_step_spelling_loads_its_alias_on_use():
    text, modules = _loaded(["generate", "classify", "--help"])
    assert "Run curation STEP" in text
    assert "benchwright.tui.cli.aliases" in modules
    _, modules = _loaded(["generate", "--help"])
    assert "benchwright.tui.cli.aliases" not in modules
