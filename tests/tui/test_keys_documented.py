"""The README's key table names every key of every screen and of the app, and no key that is not bound: a binding
added, removed or moved to another key without the table following fails here (like tests/db/test_store_docs.py
for the tables of docs/store.md)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

from textual.binding import BindingsMap
from textual.screen import Screen

import benchwright.tui.screens as screens_pkg
from benchwright.tui.app import BenchwrightApp

README = Path(__file__).resolve().parents[2] / "README.md"
HEADER = "| screen (opened by) | key | what it does |"

# The table's first column (before any "(opened by ...)") -> the class whose bindings that row group lists.
LABELS = {
    "every screen": "BenchwrightApp",
    "review": "ReviewScreen",
    "queue": "QueueScreen",
    "help": "HelpScreen",
    "notes": "NotesScreen",
    "criterion notes": "CriteriaNotesScreen",
    "reject reason": "RejectReasonScreen",
    "evidence viewer": "EvidenceScreen",
    "checklist editor": "ChecklistEditorScreen",
    "normalize weights": "NormalizeScreen",
    "leave the editor": "LeaveScreen",
    "checklist versions": "ChecklistDiffScreen",
    "history": "HistoryScreen",
    "text versions": "TextVersionsScreen",
    "edit the text": "TextEditScreen",
    "curation of a pair": "CurationScreen",
    "curation of the queue": "CurationRunScreen",
    "agent answers": "AnswerRunScreen",
    "judge inspector": "InspectorScreen",
    "override a score": "OverrideScreen",
    "score by hand": "HumanScoreScreen",
    "answers to score": "AssignedAnswersScreen",
    "failure mode": "FailureModeScreen",
    "adjudication": "AdjudicationScreen",
    "agreement statistics": "StatisticsScreen",
    "release": "ReleaseScreen",
    "probes": "ProbesScreen",
    "sign-off reason": "ReasonScreen",
    "rules editor": "RulesEditorScreen",
    "duplicates": "DuplicatesScreen",
    "taxonomy": "TaxonomyScreen",
    "rename a node": "RenameNodeScreen",
    "batches": "BatchesScreen",
    "cancel a batch": "CancelBatchScreen",
}

# How the table writes a key -> Textual's key name; any other key is written as Textual names it.
DISPLAY = {"esc": "escape", "←": "left", "→": "right", "?": "question_mark", "/": "slash",
           "[": "left_square_bracket", "]": "right_square_bracket"}


def _screen_classes() -> dict[str, type]:
    """Every Screen (and ModalScreen) class defined in tui/screens/*.py and tui/app.py, by class name."""
    modules = [importlib.import_module(f"{screens_pkg.__name__}.{m.name}")
               for m in pkgutil.iter_modules(screens_pkg.__path__)]
    modules.append(importlib.import_module(BenchwrightApp.__module__))
    return {name: cls for module in modules for name, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, Screen) and cls.__module__ == module.__name__}


def _bound_keys(cls: type) -> set[str]:
    """The keys bound by ``cls`` and its bases of ours (Textual's own ``tab`` / ``shift+tab`` / copy are not
    ours to document); for the app also the command palette's key."""
    keys: set[str] = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("benchwright.") and "BINDINGS" in klass.__dict__:
            keys |= set(BindingsMap(klass.__dict__["BINDINGS"]).key_to_bindings)
    if cls is BenchwrightApp and cls.ENABLE_COMMAND_PALETTE:
        keys.add(cls.COMMAND_PALETTE_BINDING)
    return keys


def _cell_keys(cell: str, where: str) -> set[str]:
    """The keys of one key cell: backticked keys separated by ``/`` or ``,``; ``\\`1\\`-\\`4\\``` is a range."""
    keys: set[str] = set()
    for first, last in re.findall(r"`([^`]+)`(?:-`([^`]+)`)?", cell):
        if last:
            assert first.isdigit() and last.isdigit(), f"{where}: a range is of digits, not {first!r}-{last!r}"
            keys |= {str(d) for d in range(int(first), int(last) + 1)}
        else:
            keys.add(DISPLAY.get(first, first))
    rest = re.sub(r"`[^`]+`", "", cell)
    assert re.fullmatch(r"[\s/,-]*", rest), f"{where}: key cell has text outside backticks: {rest.strip()!r}"
    return keys


def _documented() -> dict[str, set[str]]:
    """Class name -> the keys the README's key table gives it (rows with an empty first cell continue the
    screen above)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert HEADER in lines, f"README.md has no key table (header {HEADER!r})"
    start = lines.index(HEADER) + 2
    table: dict[str, set[str]] = {}
    current = None
    for number, line in enumerate(lines[start:], start + 1):
        if not line.startswith("|"):
            break
        screen, key, _what = (c.strip() for c in line.strip().strip("|").split("|", 2))
        if screen:
            label = screen.split(" (")[0]
            assert label in LABELS, f"README.md line {number}: no screen is called {label!r} (LABELS here)"
            current = LABELS[label]
            assert current not in table, f"README.md line {number}: {label!r} has a second group of rows"
            table[current] = set()
        assert current is not None, f"README.md line {number}: the first row names no screen"
        table[current] |= _cell_keys(key, f"README.md line {number}")
    return table


def test_every_screen_has_a_row_group_in_the_key_table():
    classes = _screen_classes()
    assert len(classes) >= 17
    unnamed = sorted(set(classes) - set(LABELS.values()))
    assert not unnamed, f"screens without rows in README.md's key table (and in LABELS): {unnamed}"
    gone = sorted(set(LABELS.values()) - set(classes) - {"BenchwrightApp"})
    assert not gone, f"LABELS names screens that no longer exist: {gone}"


def test_readme_key_table_names_every_bound_key_and_no_other():
    classes = {**_screen_classes(), "BenchwrightApp": BenchwrightApp}
    table = _documented()
    problems = []
    for name in LABELS.values():
        bound, documented = _bound_keys(classes[name]), table.get(name, set())
        if missing := sorted(bound - documented):
            problems.append(f"{name}: bound but not in the table: {missing}")
        if unbound := sorted(documented - bound):
            problems.append(f"{name}: in the table but not bound: {unbound}")
    assert not problems, "README.md key table and the bindings differ:\n" + "\n".join(problems)


def test_a_key_cell_is_read_as_the_keys_it_names():
    assert _cell_keys("`a` / `x` / `space`", "t") == {"a", "x", "space"}
    assert _cell_keys("`1`-`4`", "t") == {"1", "2", "3", "4"}
    assert _cell_keys("`ctrl+z` / `ctrl+shift+z`, `ctrl+y`", "t") == {"ctrl+z", "ctrl+shift+z", "ctrl+y"}
    assert _cell_keys("`esc` / `?` / `[` / `←`", "t") == {"escape", "question_mark", "left_square_bracket", "left"}
