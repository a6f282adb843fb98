"""Services and the store give reasons; each front end words them (issue 13 item 3): the command line names its
options, the app its keys, and no app text carries a command-line flag."""

from __future__ import annotations

import pytest

from benchwright.tui.cli.curation import _idle_line
from benchwright.tui.screens.curation import _idle_status
from benchwright.tui.services.curation_runs import IdleReason, Selection

SELECTIONS = {
    IdleReason.NO_MATCH: Selection(pair_ids=[], matching=0),
    IdleReason.ONLY_HUMAN_CHECKLISTS: Selection(pair_ids=[], matching=3, human=["a", "b", "c"]),
    IdleReason.ALL_DONE: Selection(pair_ids=[], matching=3, done=3),
    IdleReason.ALL_DROPPED: Selection(pair_ids=[], matching=3, dropped={"images": 1, "classify": 2}),
}


@pytest.mark.parametrize("reason", list(IdleReason))
def test_a_run_with_nothing_to_do_says_why_in_each_front_ends_words(reason):
    plan = SELECTIONS[reason]
    assert plan.idle_reason is reason
    cli, app = _idle_line("checklist", plan), _idle_status("checklist", plan)
    assert cli.startswith("checklist: ") and app.startswith("checklist: ")
    assert "--" not in app  # the app has keys, not options
    if reason is IdleReason.ALL_DONE:
        assert "--force runs them again" in cli and "f runs them again" in app
    if reason is IdleReason.ONLY_HUMAN_CHECKLISTS:
        assert "3 pairs" in cli and "3 pairs" in app and "--include-edited" in cli
    if reason is IdleReason.ALL_DROPPED:
        assert "--all runs them" in cli and "x includes them" in app


def test_no_model_configured_names_the_option_on_the_command_line_and_not_in_the_app(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from benchwright.core.errors import BenchwrightError, Remedy
    from benchwright.core.llm.config import load_llm_config
    from benchwright.tui.cli import main
    from benchwright.tui.widgets import error_text

    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user.toml"))
    with pytest.raises(BenchwrightError) as caught:
        load_llm_config(tmp_path).role("generator")
    assert caught.value.remedy is Remedy.GIVE_MODEL and "--" not in str(caught.value)
    assert "--" not in error_text(caught.value) and error_text(caught.value).endswith("then run the step again.")
    db = tmp_path / "p.db"
    assert CliRunner().invoke(main, ["--db", str(db), "init"]).exit_code == 0
    r = CliRunner().invoke(main, ["--db", str(db), "curation", "run", "classify"])
    assert r.exit_code == 1 and r.stderr.rstrip().endswith("or pass --model MODEL (or --model PROVIDER:MODEL).")


def test_a_correction_without_a_reason_is_worded_by_each_front_end():
    from benchwright.core.errors import BenchwrightError, Remedy
    from benchwright.tui.cli.common import remedy_text
    from benchwright.tui.services.judge_runs import set_failure_mode
    from benchwright.tui.widgets import error_text

    with pytest.raises(BenchwrightError) as caught:
        set_failure_mode(None, "ans_000000", "hallucination", "  ", annotator="ada")  # refused before any read
    error = caught.value
    assert error.remedy is Remedy.GIVE_REASON and "--" not in str(error) and "--" not in error_text(error)
    assert remedy_text(error) == " (--reason TEXT)"


def test_release_and_answer_import_reasons_are_worded_by_the_front_end():
    from benchwright.core.errors import BenchwrightError, Remedy, with_remedy
    from benchwright.db.answers import AnswerConflictError
    from benchwright.tui.cli.common import remedy_text
    from benchwright.tui.widgets import error_text

    empty = with_remedy(BenchwrightError("the release would be empty"), Remedy.SEE_PREFLIGHT)
    assert "releases preflight --list" in remedy_text(empty) and "--" not in error_text(empty)
    gone = with_remedy(BenchwrightError("gone: restore it there"), Remedy.GIVE_PREVIOUS)
    assert remedy_text(gone) == ", or pass --previous DIR" and error_text(gone) == "gone: restore it there"
    for scores, judge_model in ((False, False), (True, True)):
        conflict = ["line 1: imported scores differ" if scores else "line 1: another answer"]
        e = AnswerConflictError("a.jsonl", conflict)
        assert "--" not in str(e)
        assert ("--judge-model" in remedy_text(e)) is judge_model and "--skip-invalid" in remedy_text(e)


def test_no_message_of_core_db_or_services_patched_by_the_app():
    """The app never rewrites a message's words (``.replace("--...``): a reason is worded where it is shown."""
    from pathlib import Path

    screens = Path(__file__).resolve().parents[2] / "tui"
    patched = [f"{p.name}:{n}" for p in screens.rglob("*.py") if "cli" not in p.parts
               for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if '.replace("--' in line]
    assert patched == []


def test_store_and_answer_import_messages_name_no_option_and_the_cli_adds_it(tmp_path):
    from click.testing import CliRunner

    from benchwright.core.errors import BenchwrightError, Remedy
    from benchwright.core.importers.answers import AnswerRecord
    from benchwright.db import Store
    from benchwright.tui.cli import main

    with pytest.raises(BenchwrightError) as caught:
        Store.open(tmp_path / "none.db", create=False)
    assert caught.value.remedy is Remedy.CREATE_PROJECT and "--" not in str(caught.value)
    for command in (["status"], ["review"]):
        r = CliRunner().invoke(main, ["--db", str(tmp_path / "none.db"), *command])
        assert r.exit_code == 1
        assert r.stderr == f"error: {tmp_path / 'none.db'}: no project here; create one with: benchwright init (or pass --db PATH)\n"
    db = tmp_path / "p.db"
    assert CliRunner().invoke(main, ["--db", str(db), "init"]).exit_code == 0
    with Store.open(db) as store, pytest.raises(BenchwrightError) as caught:
        store.import_answers([AnswerRecord(line=1, text="A", pair_ref="qa_x")], model=" ", condition="closed-book",
                             created_by="t")
    assert caught.value.remedy is Remedy.NAME_ANSWER_MODEL and "--" not in str(caught.value)


def test_a_service_check_names_the_value_not_a_cli_option():
    from benchwright.core.errors import BenchwrightError
    from benchwright.tui.services.judge_runs import plan_judging

    with pytest.raises(BenchwrightError, match="runs per answer must be at least 1, not 0") as caught:
        plan_judging(None, "checklist", "m", runs=0)  # refused before any read
    assert "--" not in str(caught.value)
