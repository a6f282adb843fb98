"""``answers generate --agent`` and the agent's sandbox mode: ``required`` without bubblewrap refuses before any
run (exit 1, the reason, nothing stored, no call); every stored run records how its commands were confined."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchwright.core.agent import sandbox as S
from benchwright.core.llm import ScriptedProvider
from benchwright.core.llm.fake import Reply
from benchwright.db import Store
from benchwright.tui.cli import main


def agent() -> ScriptedProvider:
    return ScriptedProvider(lambda req: Reply("", tool_calls=[("command_line", {"command": "ls src"})])
                            if not any(m.role == "tool" for m in req.messages)
                            else Reply("", tool_calls=[("finish", {"answer": "src holds pkg."})]))


@pytest.fixture
def project(project_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    monkeypatch.delenv(S.ENV_SANDBOX, raising=False)
    return project_factory(tmp_path, n=2)


def invoke(db, args, provider):
    return CliRunner().invoke(main, ["--db", str(db), *args], obj={"provider_factory": lambda config, role: provider},
                              catch_exceptions=False)


def test_required_without_bubblewrap_refuses_before_any_run(project, tmp_path, monkeypatch):
    db, _ = project
    (db.parent / "benchwright.toml").write_text('[agent]\nsandbox = "required"\n', encoding="utf-8")
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    provider = agent()
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag", "--limit", "1"], provider)
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert 'missing bubblewrap (agent sandbox = "required"); install bubblewrap' in r.output
    assert provider.calls == []
    with Store.open(db) as store:
        assert store.answer_runs(model="m-ag") == [] and store.answers(model="m-ag") == []


def test_a_stored_run_says_how_its_commands_were_confined(project, monkeypatch):
    db, _ = project
    monkeypatch.setenv(S.ENV_SANDBOX, "off")
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag", "--limit", "1"], agent())
    assert r.exit_code == 0, r.output
    with Store.open(db) as store:
        (run,) = store.answer_runs(model="m-ag")
        (answer,) = store.answers(model="m-ag")
    assert run.settings["sandbox_note"] == S.OFF and answer.extra["settings"]["sandbox_note"] == S.OFF
    # ... and answers show says so, literally, beside the trajectory's summary.
    shown = invoke(db, ["answers", "show", answer.id], agent())
    assert shown.exit_code == 0 and f"commands {S.OFF}" in shown.output


def test_the_trajectory_views_carry_the_confinement(project, monkeypatch):
    """The inspector's and the run screen's trajectory views both say how the commands ran."""
    from benchwright.tui.screens.inspector import render_trajectory
    from benchwright.tui.services.views import AnswerRunResult, run_trajectory_view, trajectory_view

    db, _ = project
    monkeypatch.setenv(S.ENV_SANDBOX, "off")
    assert invoke(db, ["answers", "generate", "--agent", "--model", "m-ag", "--limit", "1"], agent()).exit_code == 0
    with Store.open(db) as store:
        (answer,) = store.answers(model="m-ag")
        view = trajectory_view(answer)
        result = AnswerRunResult(answer.qa_pair_id, 1, 0, "m-ag", "agentic", "ok", None, 2, 0, 0.0, answer.id)
        assert run_trajectory_view(store, result).confinement == S.OFF
    assert view.confinement == S.OFF and f"commands {S.OFF}" in render_trajectory(view, "answer").plain
