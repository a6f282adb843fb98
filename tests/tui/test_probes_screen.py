"""Probes through the CLI and the validation screen: import the shipped Python probe, run every variant,
see the separating matrix, sign off, go stale after a change, preview a rule in the rules editor."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable, TextArea

from benchwright.core.probes import sample_probe_dirs
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.cli import main
from benchwright.tui.screens.probes import ProbesScreen
from benchwright.tui.screens.rules_editor import RulesEditorScreen


def _lines(editor) -> dict[str, str]:
    """The rules editor's preview: each tree's line (``intended (intended, expected pass): ...``) by tree name."""
    text = str(editor.query_one("#rules-preview").render())
    return {line.split(" (", 1)[0]: line for line in text.splitlines() if " (" in line and "expected" in line}


def run(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args])


@pytest.fixture
def python_probe(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    source = next(p for p in sample_probe_dirs() if p.name == "token_clock")
    folder = tmp_path / "token_clock"
    shutil.copytree(source, folder)
    db = tmp_path / "p.db"
    assert run(db, "init").exit_code == 0
    r = run(db, "probes", "import", str(folder / "case"), str(folder / "evaluator"), "--variants", str(folder / "variants"))
    assert r.exit_code == 0, r.output
    return db, folder


def test_cli_run_signoff_and_stale_after_a_change(python_probe):
    db, folder = python_probe
    r = run(db, "probes", "list")
    assert "token-clock" in r.output and "not run" in r.output
    r = run(db, "probes", "run", "token-clock", "--as", "ada")
    assert r.exit_code == 0, r.output
    assert "validation state: separating" in r.output
    assert "shortcut\tfail\texpected fail\tas expected" in r.output
    assert "no-wall-clock-call" in r.output  # the rule that caught the shortcut is named
    r = run(db, "probes", "signoff", "token-clock", "--verdict", "signed-off", "--as", "lead")
    assert r.exit_code == 0 and "signed off" in r.output
    r = run(db, "probes", "signoff", "token-clock", "--verdict", "not-signed-off", "--as", "lead")
    assert r.exit_code == 1 and "say why" in r.output
    # a change to the probe after sign-off makes the sign-off stale
    task = folder / "case" / "TASK.md"
    task.write_text(task.read_text() + "\nOne more sentence.\n")
    r = run(db, "probes", "run", "token-clock")
    assert r.exit_code == 1 and "import it again" in r.output
    assert run(db, "probes", "import", str(folder / "case"), str(folder / "evaluator"),
               "--variants", str(folder / "variants")).exit_code == 0
    assert "stale sign-off" in run(db, "probes", "list").output
    r = run(db, "probes", "run", "token-clock", "--variant", "nope")
    assert r.exit_code == 1 and "has no variant nope" in r.output


def test_probe_new_scaffolds_an_importable_probe(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    r = run(tmp_path / "p.db", "probes", "new", str(tmp_path / "mine"), "--id", "my-probe")
    assert r.exit_code == 0, r.output
    assert run(tmp_path / "p.db", "init").exit_code == 0
    r = run(tmp_path / "p.db", "probes", "import", str(tmp_path / "mine" / "case"), str(tmp_path / "mine" / "evaluator"),
            "--variants", str(tmp_path / "mine" / "variants"))
    assert r.exit_code == 0 and "imported probe my-probe" in r.output, r.output


def test_probe_new_where_no_folder_can_be_made_is_an_error_not_a_traceback(tmp_path):
    (tmp_path / "a-file").write_text("x")
    dest = tmp_path / "a-file" / "mine"
    r = run(tmp_path / "p.db", "probes", "new", str(dest), "--id", "my-probe")
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), repr(r.exception)
    assert f"error: {dest}: cannot write the probe (" in r.output, r.output


async def test_validation_screen_runs_all_and_signs_off(python_probe):
    db, _folder = python_probe
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ada", resume=False)
        async with app.run_test(size=(180, 50)) as pilot:
            await pilot.pause()
            await pilot.press("P")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ProbesScreen) and screen.probe_id == "token-clock"
            screen.query_one("#probe-matrix", DataTable).focus()
            await pilot.press("a")
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert store.validation_state("token-clock") == "separating"
            table = screen.query_one("#probe-matrix", DataTable)
            rows = {str(table.get_row_at(i)[0]): [str(c) for c in table.get_row_at(i)] for i in range(table.row_count)}
            assert rows["shortcut"][-2:] == ["fail", "✓ as expected"]
            assert rows["intended"][-2:] == ["pass", "✓ as expected"]
            # the rules editor previews matches without running anything
            await pilot.press("e")
            await pilot.pause()
            editor = app.screen
            assert isinstance(editor, RulesEditorScreen)
            await pilot.pause()
            preview = _lines(editor)
            assert "2 files scanned; 1 finding · module fails" in preview["shortcut"]
            assert "no finding · module passes" in preview["intended"]
            editor.query_one("#rule-condition", TextArea).text = '{"any_patterns": ["this_pattern_matches_nothing"]}'
            await pilot.pause()
            assert "no finding · module passes" in _lines(editor)["shortcut"]
            await pilot.press("escape")  # the first esc warns about the unsaved edit, the second leaves
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
            await pilot.press("s")
            await pilot.pause()
            await pilot.press(*"ok", "enter")
            await pilot.pause()
            assert store.validation_state("token-clock") == "signed off"
            assert store.latest_signoff("token-clock").annotator == "ada"


def test_states_need_intended_and_shortcut_and_errors_do_not_separate(python_probe, tmp_path):
    db, folder = python_probe
    # sign-off is refused before the runs separate
    r = run(db, "probes", "signoff", "token-clock", "--verdict", "signed-off")
    assert r.exit_code == 1 and "not run" in r.output
    # a shortcut whose patch does not apply ends in error: not separating
    bad = folder / "variants" / "broken"
    bad.mkdir()
    (bad / "variant.json").write_text('{"kind": "shortcut", "expected": "fail"}')
    (bad / "patch.diff").write_text("--- a/tokens/nothing.py\n+++ b/tokens/nothing.py\n@@ -1 +1 @@\n-x\n+y\n")
    assert run(db, "probes", "import", str(folder / "case"), str(folder / "evaluator")).exit_code == 0  # variants/ found beside case/
    r = run(db, "probes", "run", "token-clock")
    assert "broken\terror" in r.output and "validation state: not separating" in r.output
    r = run(db, "probes", "signoff", "token-clock", "--verdict", "signed-off")
    assert r.exit_code == 1 and "not separating" in r.output
    # a probe with no variants is incomplete, never separating
    assert run(db, "probes", "new", str(tmp_path / "bare"), "--id", "bare").exit_code == 0
    with Store.open(db) as store:
        from benchwright.core.probes import probe_fingerprint, read_probe

        probe = read_probe(tmp_path / "bare" / "case", tmp_path / "bare" / "evaluator")
        store.save_probe(probe, [], probe_fingerprint(probe, []), by="t")
        assert store.validation_state("bare") == "incomplete"


# slow, to keep the default run short; main path: test_validation_screen_runs_all_and_signs_off
@pytest.mark.slow
async def test_rules_editor_save_keeps_variants_and_makes_the_sign_off_stale(python_probe):
    db, folder = python_probe
    assert run(db, "probes", "run", "token-clock").exit_code == 0
    assert run(db, "probes", "signoff", "token-clock", "--verdict", "signed-off").exit_code == 0
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ada", resume=False)
        async with app.run_test(size=(180, 50)) as pilot:
            await pilot.pause()
            await pilot.press("P")
            await pilot.pause()
            await pilot.press("e")
            await pilot.pause()
            editor = app.screen
            assert isinstance(editor, RulesEditorScreen)
            condition = editor.query_one("#rule-condition", TextArea)
            patterns = json.loads(condition.text)["any_patterns"]
            condition.text = json.dumps({"any_patterns": [*patterns, "\\b_now\\s*=\\s*time\\.time\\b"]})
            await pilot.pause()
            await pilot.press("ctrl+s")
            await pilot.pause()
        assert len(store.probe_record("token-clock")["variants"]) == 5
        assert store.validation_state("token-clock") == "stale sign-off"
        assert "_now" in (folder / "evaluator" / "pipeline.json").read_text()


# slow, to keep the default run short; main path: test_validation_screen_runs_all_and_signs_off
@pytest.mark.slow
async def test_test_counts_and_a_shortcut_that_fails_to_build_in_the_cli_and_the_screen(python_probe):
    db, folder = python_probe
    broken = folder / "variants" / "broken-shortcut"
    (broken / "tree" / "tokens").mkdir(parents=True)
    (broken / "variant.json").write_text('{"kind": "shortcut", "expected": "fail"}')
    (broken / "tree" / "tokens" / "issuer.py").write_text("def issue(:\n    return time.time()\n")
    assert run(db, "probes", "import", str(folder / "case"), str(folder / "evaluator"),
               "--variants", str(folder / "variants")).exit_code == 0
    r = run(db, "probes", "run", "token-clock")
    assert r.exit_code == 0, r.output
    assert "broken-shortcut\tfailed to build\texpected fail\tthe compiler caught it, not the oracle" in r.output
    assert "    functional tests (unit_test): 3 run: 3 passed, 0 failed, 0 skipped (unittest)" in r.output
    assert "\nshortcuts:\n  broken-shortcut: failed to build (byte-compile: exit code 1" in r.output
    assert "  shortcut: caught by the oracle (no hidden wall clock: rule no-wall-clock-call matched in" in r.output
    assert "validation state: not separating" in r.output
    with Store.open(db) as store:
        stored = store.latest_runs("token-clock")["intended"]["run"]["modules"]
        assert [m["tests"] for m in stored if m["module_name"] == "unit_test"] == [
            {"tool": "unittest", "run": 3, "passed": 3, "failed": 0, "skipped": 0}]
        app = BenchwrightApp(store, "ada", resume=False)
        async with app.run_test(size=(200, 50)) as pilot:
            await pilot.pause()
            await pilot.press("P")
            await pilot.pause()
            table = app.screen.query_one("#probe-matrix", DataTable)
            rows = {str(table.get_row_at(i)[0]): [str(c) for c in table.get_row_at(i)] for i in range(table.row_count)}
            assert rows["broken-shortcut"][-2:] == ["failed to build", "✗ not the oracle"]
            assert rows["shortcut"][-2:] == ["fail", "✓ as expected"]
            assert rows["intended"][4] == "✓ 3", "the functional tests' cell shows how many tests passed"


# slow, to keep the default run short; main path: test_validation_screen_runs_all_and_signs_off
@pytest.mark.slow
async def test_a_nitr_case_without_variants_says_why_it_is_incomplete_and_shows_its_starter_run(tmp_path, monkeypatch):
    import test_rules_editor_nitr as nitr

    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "p.db"
    assert run(db, "init").exit_code == 0
    assert run(db, "probes", "import", str(nitr._checkout(tmp_path))).exit_code == 0
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ada", resume=False)
        async with app.run_test(size=(180, 50)) as pilot:
            await pilot.press("P")
            await pilot.pause()
            screen = app.screen
            title = str(screen.query_one("#probe-title").render())
            assert "0 intended and 0 shortcut variants; stable separation needs 2 of each" in title
            assert "press a to run the starter code" in title
            table = screen.query_one("#probe-matrix", DataTable)
            assert table.row_count == 0
            table.focus()
            await pilot.press("a")
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
            assert rows and rows[-1][:3] == ["(starter)", "starter", "-"]
            assert rows[-1][-2] == "fail"  # its source rules find std::stoi
            await pilot.press("r")  # the starter's row is not a variant: r says what a does
            await pilot.pause()
        assert store.latest_runs(nitr.CASE)[None]["outcome"] == "fail"
