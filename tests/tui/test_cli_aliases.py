"""The spellings before the noun-then-verb names (issue 13) keep working for one release: every old spelling,
run on a copy of the same project as its new spelling, prints the same output with the same exit code, and
notes on stderr, in one line, the new spelling. None of them is listed by ``--help``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.tui.cli import main
from benchwright.tui.cli.aliases import ALIASES
from benchwright.tui.cli.generate import generate


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A project with three pairs and one answer (the same file is copied for each run)."""
    folder = tmp_path_factory.mktemp("aliases")
    db = folder / "template.db"
    pairs = folder / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"question": f"What does step {i} do?", "answer": f"It does {i}."}) + "\n"
                             for i in range(3)), encoding="utf-8")
    answers = folder / "answers.jsonl"
    answers.write_text(json.dumps({"question": "What does step 0 do?", "answer": "Something."}) + "\n",
                       encoding="utf-8")
    for args in (["init"], ["pairs", "import", "jsonl", str(pairs), "--as", "setup"]):
        r = CliRunner().invoke(main, ["--db", str(db), *args])
        assert r.exit_code == 0, r.output
    return folder


def run_on_copy(template: Path, name: str, args: list[str]):
    db = template / f"{name}.db"
    shutil.copyfile(template / "template.db", db)
    return CliRunner().invoke(main, ["--db", str(db), *args], env={"COLUMNS": "200"})


def files(template: Path) -> dict[str, str]:
    return {"PAIRS": str(template / "pairs.jsonl"), "ANSWERS": str(template / "answers.jsonl"),
            "DIR": str(template)}


# (old spelling, new spelling, the rest of the line); FILE names are filled from the template folder
CASES = [
    ("import jsonl", "pairs import jsonl", ["PAIRS", "--as", "t"]),
    ("import answers", "answers import", ["ANSWERS", "--model", "m", "--condition", "closed-book", "--as", "t"]),
    ("import release", "releases import", ["DIR"]),
    ("history", "pairs history", ["#1"]),
    ("repo list", "repos list", []),
    ("repo add", "repos add", ["x", "DIR"]),
    ("checklist schema", "checklists schema", []),
    ("checklist show", "checklists show", ["#1"]),
    ("checklist export", "checklists export", []),
    ("answer", "answers generate", ["--model", "m"]),
    ("judge checklist", "judgments run checklist", ["--model", "j"]),
    ("override", "judgments override", ["999", "1", "3", "--reason", "x"]),
    ("generate classify", "curation run classify", ["--model", "g"]),
    ("failure-modes", "failure-modes classify", ["--model", "c"]),
    ("failure-mode show", "failure-modes show", ["ans_nope00"]),
    ("failure-mode set", "failure-modes set", ["ans_nope00", "hallucination", "--reason", "x"]),
    ("adjudicate", "adjudication decide", ["#1", "--decision", "accept", "--reason", "fine", "--as", "lead"]),
    ("release preflight", "releases preflight", []),
    ("probe list", "probes list", []),
]


@pytest.mark.parametrize(("old", "new", "rest"), CASES, ids=[c[0] for c in CASES])
def test_old_spelling_runs_the_new_command_and_notes_it(template, old, new, rest):
    rest = [files(template).get(a, a) for a in rest]
    before = run_on_copy(template, "old", [*old.split(), *rest])
    after = run_on_copy(template, "new", [*new.split(), *rest])
    assert (before.exit_code, before.stdout) == (after.exit_code, after.stdout)
    note, _, errors = before.stderr.partition("\n")
    assert note.startswith(f"note: 'benchwright {old.split()[0]}") and "deprecated" in note, note
    named = note.split("use 'benchwright ")[1].rstrip("'").removesuffix(" [OPTIONS]")
    assert new == named or (new.startswith(named + " ") and len(named.split()) == len(new.split()) - 1), note
    assert errors == after.stderr.replace(str(template / "new.db"), str(template / "old.db"))


def test_every_alias_is_covered_and_hidden():
    tested = {old.split()[0] for old, _, _ in CASES}
    # generate is a group again (answer-first generation); it hands a curation step's name to its hidden fallback
    assert {a.name for a in ALIASES} == tested - {"failure-modes", "generate"}
    assert generate.fallback is not None and generate.fallback.hidden and "classify" in generate.fallback_names
    listing = CliRunner().invoke(main, ["--help"]).output
    commands = {line.split()[0] for line in listing.split("Commands:")[1].splitlines() if line.strip()}
    assert not commands & {a.name for a in ALIASES}


def test_failure_modes_help_is_the_group_help():
    r = CliRunner().invoke(main, ["failure-modes", "--help"])
    assert r.exit_code == 0 and "classify" in r.output and "note:" not in r.stderr
