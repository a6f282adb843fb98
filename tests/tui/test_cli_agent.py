"""``benchwright answers generate --agent`` (and the old ``answer``) end to end over the scripted provider injected
as ``provider_factory``: conditions, refusals, samples, failed runs, the summary, and ``answers show`` with the
trajectory printed literally."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchwright.core.llm import ScriptedProvider
from benchwright.core.llm.fake import Reply
from benchwright.core.models import Repository
from benchwright.db import Store
from benchwright.tui.cli import main

HOSTILE = "[bold]not bold[/bold] \x1b[31mred\x1b[0m [@click=app.quit]"
ANSWER = "Made in src/pkg/app.py: line 12-13 (and src/pkg/nowhere.py: line 1)."


def agent(*, finish: bool = True, answer: str = ANSWER) -> ScriptedProvider:
    """Turn 1 searches, turn 2 views (saying something hostile), turn 3 finishes (or views forever)."""

    def reply(req):
        seen = sum(1 for m in req.messages if m.role == "tool")
        if seen == 0:
            return Reply("Searching.", tool_calls=[("search", {"query": "line_12 ", "path": None})])
        if seen == 1 or not finish:
            return Reply(HOSTILE, tool_calls=[("view", {"path": "src/pkg/app.py", "start_line": 11,
                                                        "end_line": 13 + seen, "outline": False})])
        return Reply("", tool_calls=[("finish", {"answer": answer})])

    return ScriptedProvider(reply)


@pytest.fixture
def project(project_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    return project_factory(tmp_path, n=4)


def invoke(db, args, provider=None):
    obj = {"provider_factory": (lambda config, role: provider)} if provider is not None else {}
    return CliRunner().invoke(main, ["--db", str(db), *args], obj=obj, catch_exceptions=False)


def test_agent_answers_are_stored_listed_and_shown_with_their_trajectory(project):
    db, ids = project
    provider = agent()
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag", "--limit", "2"], provider)
    assert r.exit_code == 0, r.output
    assert "agent (m-ag, agentic): 2 answers stored, 0 failed; 6 calls made, 0 cached" in r.output
    assert "6 turns over 2 answers; cited locations: 2 resolving, 2 not" in r.output
    with Store.open(db) as store:
        got = store.answers(model="m-ag")
        assert [(a.qa_pair_id, a.condition, a.sample_index, a.source_format) for a in got] == [
            (ids[0], "agentic", 0, "agent"), (ids[1], "agentic", 0, "agent")]
        assert len(store.answer_runs(model="m-ag")) == 2
    listed = invoke(db, ["answers", "list", "--model", "m-ag"]).output.splitlines()
    assert listed[0].split("\t")[1:5] == ["#1", "m-ag", "agentic", "sample 0"]
    aid = got[0].id
    shown = invoke(db, ["answers", "show", aid]).output
    assert f"{aid} · pair #1 {ids[0]} · m-ag · agentic · sample 0 · agent\n" in shown
    assert "--- run 1: 3 turns in pkg, " in shown
    assert ("--- trajectory: 3 turns; tool calls: search 1, view 1, finish 1; 0 elisions; cited locations: "
            "1 resolving, 1 not; commands ") in shown and " (print it with --trajectory)\n" in shown
    full = invoke(db, ["answers", "show", aid, "--trajectory"]).output
    assert "--- trajectory: 3 turns; " in full and "(print it with --trajectory)" not in full
    assert [line.split(" · ")[0] for line in full.splitlines() if line.startswith("turn ")] == [
        "turn 1", "turn 2", "turn 3"]
    assert "  > search {\"query\": \"line_12 \", \"path\": null}\n" in full
    assert "    src/pkg/app.py:12: line_12 = 12\n" in full
    assert '  > view {"path": "src/pkg/app.py", "start_line": 11, "end_line": 14, "outline": false}\n' in full
    assert "        12  line_12 = 12\n" in full
    assert "  > finish " in full
    # the model's text is shown as typed: markup stays text, terminal control is made visible, never sent
    assert "  [bold]not bold[/bold] \u241b[31mred\u241b[0m [@click=app.quit]\n" in full
    assert "\x1b" not in full
    # the rest of the queue, then nothing to do and no call
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag"], agent())
    assert r.exit_code == 0 and "2 answers stored, 0 failed, 2 pairs already answered" in r.output
    idle = agent()
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag"], idle)
    assert r.exit_code == 0 and "nothing to do; 4 pairs already answered" in r.output and idle.calls == []


def test_samples_and_the_old_answer_spelling(project):
    db, _ = project
    r = invoke(db, ["answer", "--condition", "documented", "--samples", "2", "--model", "m-ag", "--limit", "1"],
               agent())
    assert r.exit_code == 0, r.output
    assert "agent (m-ag, documented): 2 answers stored, 0 failed" in r.output
    with Store.open(db) as store:
        assert [a.sample_index for a in store.answers(model="m-ag", condition="documented")] == [0, 1]
    r = invoke(db, ["answers", "generate", "--condition", "documented", "--samples", "3", "--model", "m-ag",
                    "--limit", "1"], agent())
    assert "1 answer stored, 0 failed, 2 samples already answered" in r.output


def test_failed_runs_exit_1_with_their_reasons_and_are_not_answers(project):
    db, ids = project
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag", "--limit", "1", "--max-turns", "2"],
               agent(finish=False))
    assert r.exit_code == 1, r.output
    assert "agent (m-ag, agentic): 0 answers stored, 1 failed" in r.output
    assert f"failed #1 {ids[0]} sample 0 after 2 turns: turn limit" in r.output
    with Store.open(db) as store:
        assert store.answers(model="m-ag") == []
        (run,) = store.answer_runs(model="m-ag")
        assert run.status == "failed" and run.turns == 2 and run.settings["max_turns"] == 2
    listed = invoke(db, ["answers", "runs", "--failed"]).output.splitlines()
    assert listed[0].startswith(f"run {run.id}\t#1\tm-ag\tagentic\tsample 0\t2 turns\t")
    assert "\tfailed: turn limit reached (2) without Finish" in listed[0] and listed[-1] == "1 run: 0 ok, 1 failed"
    # the [agent] table gives the turn limit when --max-turns is not given; a failed run is tried again, its
    # finished turns replayed from the ledger (the same limit: the same requests), and the same failure is not
    # stored twice
    (db.parent / "benchwright.toml").write_text("[agent]\nmax_turns = 2\n", encoding="utf-8")
    again = agent(finish=False)
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag", "--limit", "1"], again)
    assert r.exit_code == 1, r.output
    assert "0 answers stored, 1 failed; 0 calls made, 2 cached" in r.output and again.calls == []
    with Store.open(db) as store:
        assert len(store.answer_runs(model="m-ag")) == 1
    # a larger limit is a new run (the prompt states the limit), which finishes
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag", "--limit", "1", "--max-turns", "4"], agent())
    assert r.exit_code == 0 and "1 answer stored, 0 failed; 3 calls made" in r.output
    with Store.open(db) as store:
        assert [x.status for x in store.answer_runs(model="m-ag")] == ["failed", "ok"]
    assert invoke(db, ["answers", "runs", "--failed"]).output == "no runs match\n"
    assert invoke(db, ["answers", "runs", "--all"]).output.splitlines()[-1] == "2 runs: 1 ok, 1 failed"


def test_an_unexpected_error_in_one_run_fails_that_run_only(project, monkeypatch):
    import benchwright.core.agent.loop as loop

    db, _ = project
    real, raised = loop.execute, []

    def flaky(*args, **kwargs):  # the first tool call of the job meets a bug; every other one works
        if not raised:
            raised.append(1)
            raise KeyError("boom")
        return real(*args, **kwargs)

    monkeypatch.setattr(loop, "execute", flaky)
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag", "--limit", "2"], agent())
    assert r.exit_code == 1, r.output
    assert "agent (m-ag, agentic): 1 answer stored, 1 failed" in r.output
    assert "internal error: KeyError: 'boom' (please report)" in r.output and "Traceback" not in r.output
    with Store.open(db) as store:
        assert len(store.answers(model="m-ag")) == 1
        (failed,) = [x for x in store.answer_runs(model="m-ag") if x.status == "failed"]
        assert failed.reason == "internal error: KeyError: 'boom' (please report)"
        assert failed.turns == 1 and failed.trajectory[0]["index"] == 1  # the paid turn is kept
    # the rerun replays that paid turn from the ledger and finishes
    r = invoke(db, ["answers", "generate", "--agent", "--model", "m-ag", "--limit", "1"], agent())
    assert r.exit_code == 0 and "1 answer stored, 0 failed" in r.output and "1 cached" in r.output, r.output


def test_list_and_runs_take_the_model_as_generate_does(project):
    db, _ = project
    r = invoke(db, ["answers", "generate", "--agent", "--model", "openai:m-ag", "--limit", "1"], agent())
    assert r.exit_code == 0 and "agent (m-ag, agentic)" in r.output, r.output  # stored as m-ag
    for spelling in ("openai:m-ag", "m-ag"):
        listed = invoke(db, ["answers", "list", "--model", spelling]).output.splitlines()
        assert len(listed) == 1 and listed[0].split("\t")[2] == "m-ag", (spelling, listed)
        runs = invoke(db, ["answers", "runs", "--model", spelling]).output.splitlines()
        assert runs[-1] == "1 run: 1 ok, 0 failed", (spelling, runs)
    assert invoke(db, ["answers", "list", "--model", "nowhere:m-ag"]).output == "no answers match\n"


def test_conditions_that_mean_what_they_say(project, tmp_path):
    db, ids = project
    for direct in ("closed-book", "direct"):
        r = invoke(db, ["answers", "generate", "--agent", "--condition", direct, "--model", "m"], agent())
        assert r.exit_code == 1 and f"condition {direct} gives the model no repository" in r.output
        assert "Traceback" not in r.output
    # code-only without a stripped copy: refused, naming the command that makes it; no answer labelled code-only
    provider = agent()
    r = invoke(db, ["answers", "generate", "--condition", "code-only", "--model", "m"], provider)
    assert r.exit_code == 1, r.output
    assert f"refused #1 {ids[0]}: no code-only copy of pkg: run benchwright repos strip pkg" in r.output
    assert "nothing to do; 0 pairs already answered; 4 pairs refused" in r.output and provider.calls == []
    with Store.open(db) as store:
        assert store.answers(condition="code-only") == []
        copy = tmp_path / "pkg-code-only"
        (copy / "src" / "pkg").mkdir(parents=True)
        (copy / "src" / "pkg" / "app.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 201)))
        repo = store.get_repository("pkg")
        store.add_derived_repository(Repository(name="pkg-code-only", version_label=repo.version_label,
                                                local_path=str(copy), derived_from="pkg", derivation="code-only"),
                                     "lead")
    r = invoke(db, ["answers", "generate", "--condition", "code-only", "--model", "m", "--limit", "1"], agent())
    assert r.exit_code == 0, r.output
    with Store.open(db) as store:
        (a,) = store.answers(condition="code-only")
        assert a.extra["repository"] == "pkg-code-only"
        assert store.answer_runs(condition="code-only")[0].repository == "pkg-code-only"
    # a direct answer under an agent condition is no longer possible, with or without --agent
    r = invoke(db, ["answers", "generate", "--max-turns", "3", "--model", "m"], agent())
    assert r.exit_code == 2 and "--max-turns is for agent runs" in r.output


def test_config_show_lists_the_agent_table(project):
    db, _ = project
    (db.parent / "benchwright.toml").write_text("[agent]\nmax_turns = 12\n", encoding="utf-8")
    out = invoke(db, ["config", "show"]).output
    assert "\n[agent]\nmax_turns = 12  # project file\n# context_tokens (not set)\n" in out
    (db.parent / "benchwright.toml").write_text("[agent]\nmax_turn = 12\n", encoding="utf-8")
    r = invoke(db, ["config", "show"])
    assert r.exit_code == 1 and "agent.max_turn" in r.output


def test_a_long_provider_error_is_cut_in_the_summaries(project):
    # A server's error can be a whole traceback (llama_cpp.server's is): each failure is listed with the first 300
    # characters of its reason (the setting to change comes first), never the traceback's 200 lines.
    from benchwright.core.llm import LLMError
    db, _ = project
    long = "loc: HTTP 500 from http://x/v1. set tools = \"prompt\". The server said: Traceback\n" + "  File x\n" * 200
    for args in (["answers", "generate", "--agent", "--model", "m-err", "--limit", "1"],
                 ["answers", "generate", "--model", "m-err", "--limit", "1"],
                 ["curation", "run", "classify", "--model", "m-err", "--limit", "1"]):
        r = invoke(db, args, ScriptedProvider(lambda req: LLMError(long)))
        assert r.exit_code == 1 or "1 failed" in r.output, r.output
        assert "tools = \"prompt\"" in r.output and r.output.count("File x") < 40, (args, r.output)
