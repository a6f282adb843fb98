"""Names typed by users (annotators, repositories, pair references) reach the terminal with their control
characters made visible (``core.text.printable``), as data fields already do: an escape sequence in a name is
shown as typed, never interpreted by the terminal. ``color=True`` keeps click from stripping ANSI codes, as it does
not on a real terminal."""

from __future__ import annotations

from click.testing import CliRunner

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.db import Store
from benchwright.tui.cli import main

EVIL = "[bold]ev\x1b[31mil\x07"
SHOWN = "[bold]ev\u241b[31mil\u2407"


def cli(db, *args):
    return CliRunner().invoke(main, ["--db", str(db), *args], env={"COLUMNS": "250"}, color=True)


def test_names_and_error_messages_show_control_characters_as_typed(project, tmp_path):
    db, ids = project
    with Store.open(db) as s:
        s.save_checklist(ids[0], Checklist(items=[ChecklistItem(key_point="k", weight=9, rubric=binary_rubric(9)),
                                                  clarity_item()]), author=EVIL)
    outputs = [
        cli(db, "assign", "--annotators", f"{EVIL},bob"),
        cli(db, "status", "--as", EVIL),
        cli(db, "repos", "add", EVIL, str(tmp_path), "--version", "1"),
        cli(db, "repos", "list"),
        cli(db, "checklists", "show", ids[0], "--as", EVIL),
        cli(db, "checklists", "history", ids[0], "--as", EVIL),
        cli(db, "pairs", "history", EVIL),  # an error naming what was typed
    ]
    for r in outputs:
        assert "\x1b" not in r.output and "\x07" not in r.output, r.output
        assert SHOWN in r.output, r.output
    assert outputs[-1].exit_code == 1


def test_a_refused_name_with_a_line_break_is_quoted_on_one_line(project):
    db, _ = project
    r = CliRunner().invoke(main, ["--db", str(db), "status"], env={"COLUMNS": "250", "BENCHWRIGHT_ANNOTATOR": "al\nice\t"},
                           color=True)
    assert r.exit_code == 1
    assert r.output.count("\n") == 1, r.output
    assert "BENCHWRIGHT_ANNOTATOR: annotator name 'al\u240aice\u2409'" in r.output, r.output
