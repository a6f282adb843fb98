"""Blind mode in the history, through the one rule (core/blind.py): a checklist another annotator imported is
hidden in ``history`` (CLI and screen) before the viewer has submitted, as it is on the checklist panel."""

from __future__ import annotations

from click.testing import CliRunner
from textual.widgets import Static

from benchwright.core.checklist import Checklist, ChecklistItem, ItemKind, binary_rubric, clarity_item
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.cli import main
from benchwright.tui.screens.history import HistoryScreen

SIZE = (160, 48)


def checklist(tag: str) -> Checklist:
    return Checklist(items=[*(ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=f"point {n} {tag}", weight=3,
                                            rubric=binary_rubric(3)) for n in range(3)), clarity_item()])


def blind_project(db, ids) -> str:
    """ada and bob both have every pair (blind mode on); bob imported a checklist of the first pair and
    reviewed it; ada has not. Returns the pair."""
    pid = ids[0]
    with Store.open(db) as s:
        s.assign(["ada", "bob"], 2, by="lead")
        s.save_checklist(pid, checklist("generated"), author="llm", origin="generated")
        s.import_checklists([(pid, checklist("bob's import"), "jsonl")], author="bob")
        s.record_decision(pid, "bob", "accept")
        assert s.blind_mode and s.visible_checklist_version(pid, "ada") == 1  # the panel hides bob's import
    return pid


def history(db, pid, who):
    return CliRunner().invoke(main, ["--db", str(db), "pairs", "history", pid, "--as", who], env={"COLUMNS": "250"})


def test_cli_history_hides_a_checklist_another_annotator_imported_until_one_submits(project):
    db, ids = project
    pid = blind_project(db, ids)
    r = history(db, pid, "ada")
    assert r.exit_code == 0, r.output
    rows = [line.split("\t") for line in r.output.splitlines() if line.count("\t") >= 3]
    assert [(who, kind) for _, who, kind, *_ in rows] == [("llm", "checklist")]
    assert "imported" not in r.output and "bob" not in r.output
    assert "(2 events of other annotators hidden until you submit your review: blind mode)" in r.output
    # bob sees his own work; ada, once she has submitted, sees everything
    assert "imported" in history(db, pid, "bob").output
    with Store.open(db) as s:
        s.record_decision(pid, "ada", "reject")
    r = history(db, pid, "ada")
    assert "imported" in r.output and "hidden" not in r.output


async def test_history_screen_hides_a_checklist_another_annotator_imported_until_one_submits(project):
    db, ids = project
    pid = blind_project(db, ids)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ada")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            app.push_screen(HistoryScreen(store, pid, "ada"))
            await pilot.pause()
            table = app.screen.query_one("#history", Static).content
            cells = [[str(c) for c in col.cells] for col in table.columns]
            assert cells[1] == ["llm"] and cells[2] == ["checklist"]
            assert not any("imported" in c for c in cells[4])
            assert "2 events of other annotators are hidden" in str(table.caption)


def checklist_cli(db, *args):
    return CliRunner().invoke(main, ["--db", str(db), "checklists", *args], env={"COLUMNS": "250"})


def test_checklist_show_history_and_diff_hide_another_annotators_import_until_one_submits(project):
    db, ids = project
    pid = blind_project(db, ids)
    r = checklist_cli(db, "history", pid, "--as", "ada")
    assert r.exit_code == 0, r.output
    assert [line.split("\t")[:2] for line in r.output.splitlines()[:-1]] == [["v1", "generated"]]
    assert r.output.splitlines()[-1] == ("(1 version of other annotators hidden until you submit your review: "
                                         "blind mode)")
    assert checklist_cli(db, "show", pid, "--as", "ada").output.startswith("version 1 · generated")
    r = checklist_cli(db, "diff", pid, "--as", "ada")
    assert r.exit_code == 0 and r.output.startswith("version 1 (generated) -> version 1 (generated)"), r.output
    for args in (["diff", pid, "1", "2"], ["show", pid, "--version", "2"]):
        r = checklist_cli(db, *args, "--as", "ada")
        assert r.exit_code == 1 and "version 2 is another annotator's edit, hidden in blind mode" in r.output
        assert "point 0 bob's import" not in r.output
    # bob sees his own import; so does ada once she has reviewed
    assert "imported" in checklist_cli(db, "history", pid, "--as", "bob").output
    with Store.open(db) as s:
        s.record_decision(pid, "ada", "accept")
    r = checklist_cli(db, "diff", pid, "--as", "ada")
    assert r.output.startswith("version 1 (generated) -> version 2 (imported)") and "bob's import" in r.output


def test_checklist_restore_refuses_another_annotators_hidden_version_in_blind_mode(project):
    """Restoring bob's hidden import as ada's own new version would let her read it with ``checklists show``."""
    db, ids = project
    pid = blind_project(db, ids)
    r = checklist_cli(db, "restore", pid, "2", "--as", "ada")
    assert r.exit_code == 1 and "version 2 is another annotator's edit, hidden in blind mode" in r.output, r.output
    assert "Traceback" not in r.output
    with Store.open(db) as s:
        assert [v.version for v in s.checklist_history(pid)] == [1, 2]  # nothing written
    assert "bob's import" not in checklist_cli(db, "show", pid, "--as", "ada").output
    # a version ada may see is restored as before; bob restores his own; ada once she has reviewed
    assert checklist_cli(db, "restore", pid, "1", "--as", "ada").exit_code == 0
    assert checklist_cli(db, "restore", pid, "2", "--as", "bob").exit_code == 0
    with Store.open(db) as s:
        s.record_decision(pid, "ada", "accept")
    assert checklist_cli(db, "restore", pid, "2", "--as", "ada").exit_code == 0
