"""``benchwright report``'s direct-vs-agent gap (SWE-QA-Pro Table 2) and tool usage (Figure 4) on a stored project.

The project (judge swe-qa-pro, judge model "jm", two dimensions out of 10; a run's rate is (c + comp) / 20),
model "[b]m[/b]" (markup in the name must print literally):
  direct   P1 4+4 = 0.40   P2 2+2 = 0.20   P3 5+5 = 0.50 (direct only: P3 has no agent answer)
  agentic  P1 sample 0 8+8 = 0.80, sample 1 6+6 = 0.60 -> 0.70
           P2 sample 0 judge 3+3, completeness overridden to 9 -> 3+9 = 0.60
           P3 sample 0: a failed run (turn limit), no answer; sample 1: an imported trace of another shape, unjudged
Paired P1, P2: direct 30 %, agent 65 %, gap +35 points; differences 30 and 40 -> bootstrap interval [30, 40].
Dimensions: direct correctness 3, completeness 3 (Overall 6 / 20); agent correctness (7 + 3) / 2 = 5, completeness
(7 + 9) / 2 = 8 (Overall 13 / 20).
Tool usage of the three agent answers: search 2, view 1, command_line 1 (refused), finish 3 = 7 calls, 7/3 per answer,
turns (3 + 2 + 2) / 3; the failed run P3/0 with 1 call; P1/0 failed once before it finished (not a failed run now);
the imported trace is "not ours".
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.agent.model import ToolUse, Turn
from benchwright.core.importers import parse
from benchwright.core.judgment import NewJudgment
from benchwright.core.models import Repository
from benchwright.db import Store
from benchwright.tui.cli import main

MODEL = "[b]m[/b]"


def run(*args):
    return CliRunner(env={"COLUMNS": "250"}).invoke(main, list(args), catch_exceptions=False)


def traj(*turns):
    return [Turn(index=i + 1, text="", tool_uses=[
        ToolUse(call_id=f"c{i}{j}", name=name, arguments={"query": "x"}, output="out", ok=not name.startswith("!"))
        if not name.startswith("!") else
        ToolUse(call_id=f"c{i}{j}", name=name[1:], arguments={"command": "rm -rf /"}, output="refused", ok=False)
        for j, name in enumerate(names)]).as_json() for i, names in enumerate(turns)]


def judge(store, answer_id, c, comp):
    entries = [{"key": "correctness", "label": "Correctness", "kind": "dimension", "score": c, "max": 10},
               {"key": "completeness", "label": "Completeness", "kind": "dimension", "score": comp, "max": 10}]
    return store.save_judgment(NewJudgment.of(answer_id, "swe-qa-pro", "jm", entries=entries), created_by="setup")


def make_project(tmp_path: Path, *, agent: bool = True) -> Path:
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"question": f"Question {i}?", "answer": f"Answer {i}."}) + "\n"
                            for i in (1, 2, 3)))
    db_path = tmp_path / "p.db"
    with Store.open(db_path) as store:
        store.add_repository(Repository(name="flask", version_label="3.1.1", language="Python"), "setup")
        store.apply_import(parse("jsonl", data, repository="flask"), annotator="setup", file_path=data)
        by_question = {row.question: row.id for row in store.queue_page("x", limit=10)}
        p1, p2, p3 = (by_question[f"Question {i}?"] for i in (1, 2, 3))

        def answer(pair, condition, text, sample=0, trajectory=None, source="direct-answer"):
            return store.add_generated_answer(pair, MODEL, condition, text, extra={}, by="setup", sample_index=sample,
                                              trajectory=trajectory, source_format=source)

        judge(store, answer(p1, "direct", "d1"), 4, 4)
        judge(store, answer(p2, "direct", "d2"), 2, 2)
        judge(store, answer(p3, "direct", "d3"), 5, 5)
        if agent:
            store.record_answer_run(p1, MODEL, "agentic", status="failed", reason="provider error: HTTP 500",
                                    by="setup", trajectory=traj(["search"]))
            a10 = answer(p1, "agentic", "a1", 0, traj(["search", "view"], [], ["finish"]), "agent")
            store.record_answer_run(p1, MODEL, "agentic", status="ok", answer_id=a10, by="setup", turns=3,
                                    trajectory=traj(["search", "view"], [], ["finish"]))
            judge(store, a10, 8, 8)
            judge(store, answer(p1, "agentic", "a1 again", 1, traj(["search"], ["finish"]), "agent"), 6, 6)
            j = judge(store, answer(p2, "agentic", "a2", 0, traj(["!command_line"], ["finish"]), "agent"), 3, 3)
            store.add_override(j.id, "completeness", 9, "the judge missed the cited line", "ada")
            store.record_answer_run(p3, MODEL, "agentic", status="failed", by="setup", turns=1,
                                    reason="turn limit reached (25) without Finish", trajectory=traj(["search"]))
            answer(p3, "agentic", "imported", 1, {"steps": [{"action": "grep"}]}, "swe-qa-agent")
    return db_path


def read_csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_gap_and_tool_usage_in_text_csv_and_json(tmp_path):
    db = make_project(tmp_path)
    out, json_file = tmp_path / "csv", tmp_path / "r.json"
    r = run("--db", str(db), "report", "--csv", str(out), "--json", str(json_file))
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    start = next(i for i, line in enumerate(lines) if "Direct vs agent (SWE-QA-Pro §4.2 Table 2), judge swe-qa-pro"
                 in line)
    lines = lines[start:]
    direct_line = next(line for line in lines if MODEL in line and " direct " in line and "jm" in line)
    for cell in ("3.00", "6.00 / 20", "30.0"):
        assert cell in direct_line
    agent_line = next(line for line in lines if "+ agentic" in line)
    for cell in ("5.00", "8.00", "13.00 / 20", "65.0", "+35.0", "+30.0 to +40.0"):
        assert cell in agent_line
    usage = next(line for line in lines if MODEL in line and "2.3" in line and "turn limit" in line)
    cells = [c.strip() for c in usage.split("│")[1:-1]]
    # model, condition, answers, search view command_line finish, calls/answer, turns/answer, refused, elided,
    # failed runs, failed because, not ours
    assert cells == [MODEL, "agentic", "3", "2", "1", "1", "3", "2.3", "2.3", "1", "0", "1",
                     "turn limit reached (25) without Finish: 1", "1"]

    data = json.loads(json_file.read_text(encoding="utf-8"))
    (gap,) = data["agent_gap"]
    assert (gap["model"], gap["direct_condition"], gap["agent_condition"]) == (MODEL, "direct", "agentic")
    assert (gap["pairs"], gap["direct_only"], gap["agent_only"], gap["direct_samples"], gap["agent_samples"]) == (
        2, 1, 0, 2, 3)
    assert (gap["direct_pct"], gap["agent_pct"], gap["gap_pct"]) == (
        pytest.approx(30), pytest.approx(65), pytest.approx(35))
    assert (gap["ci_low_pct"], gap["ci_high_pct"]) == (pytest.approx(30), pytest.approx(40))
    (tools,) = data["tool_usage"]
    assert tools["calls"] == {"command_line": 1, "finish": 3, "search": 2, "view": 1}
    assert (tools["answers"], tools["calls_total"], tools["refused_calls"], tools["not_ours"]) == (3, 7, 1, 1)
    assert tools["calls_per_answer"] == pytest.approx(7 / 3)
    assert tools["turns_per_answer"] == pytest.approx(7 / 3)
    assert (tools["failed_runs"], tools["failed_calls"]) == (1, 1)  # P1's earlier failure was followed by an answer
    assert tools["failed_reasons"] == {"turn limit reached (25) without Finish": 1}

    (row,) = read_csv(out / "agent_gap.csv")
    assert float(row["gap_pct"]) == data["agent_gap"][0]["gap_pct"]
    assert (row["correctness_direct"], row["correctness_agent"], row["completeness_agent"]) == ("3.0", "5.0", "8.0")
    (row,) = read_csv(out / "tool_usage.csv")
    assert (row["search_calls"], row["finish_calls"], row["failed_runs"], row["not_ours"]) == ("2", "3", "1", "1")


def test_sections_say_when_there_are_no_agent_answers(tmp_path):
    db = make_project(tmp_path, agent=False)
    r = run("--db", str(db), "report")
    assert r.exit_code == 0, r.output
    assert "Direct vs agent (SWE-QA-Pro §4.2 Table 2): no agent answers yet" in r.output
    assert "Tool usage (SWE-QA-Pro §4.3 Figure 4): no agent answers yet" in r.output


def test_model_filter_applies_to_tool_usage(tmp_path):
    db = make_project(tmp_path)
    r = run("--db", str(db), "report", "--model", "other", "--json", str(tmp_path / "r.json"))
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["agent_gap"] == [] and data["tool_usage"] == []


def test_tool_names_from_data_print_literally(tmp_path):
    db = make_project(tmp_path, agent=False)
    with Store.open(db) as store:
        pair = store.queue_page("x", limit=1)[0].id
        store.add_generated_answer(pair, "m2", "agentic", "a", extra={}, by="setup", source_format="agent",
                                   trajectory=traj(["[red]grep[/red]"]))
    r = run("--db", str(db), "report")
    assert r.exit_code == 0, r.output
    assert "[red]grep[/red]" in r.output


def test_tool_usage_of_real_agent_runs(tmp_path):
    """The trajectories the agent runner stores (tui/services/agent_runs.py over the scripted fake) are read as ours:
    a run that searches, views and finishes is an answer with 3 turns; a run that never finishes fails at the turn
    limit and is counted as a failed run with its reason."""
    import asyncio

    from benchwright.core.llm import ScriptedProvider
    from benchwright.core.llm.client import LLMClient
    from benchwright.core.llm.fake import Reply
    from benchwright.core.metrics import build_report
    from benchwright.db.report import report_inputs
    from benchwright.tui.services.agent_runs import AgentSettings, plan_agent_answers, run_agent_answers

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "app.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 21)))
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"question": "Where is line_12?", "answer": "app.py"}) + "\n"
                    + json.dumps({"question": "Loop forever?", "answer": "no"}) + "\n")

    def reply(req):
        forever = "forever" in req.messages[0].content
        tools_seen = sum(1 for m in req.messages if m.role == "tool")
        if tools_seen == 0:
            return Reply("Looking.", tool_calls=[("search", {"query": "line_12"})])
        if tools_seen == 1 or forever:
            return Reply("Reading.", tool_calls=[("view", {"path": "pkg/app.py", "start_line": 10,
                                                           "end_line": 12 + tools_seen})])
        return Reply("", tool_calls=[("finish", {"answer": "In pkg/app.py: line 12-12."})])

    with Store.open(tmp_path / "p.db") as store:
        store.add_repository(Repository(name="pkg", version_label="1.0", local_path=str(repo)), "setup")
        store.apply_import(parse("jsonl", data, repository="pkg"), annotator="setup", file_path=data)
        plan = plan_agent_answers(store, "m-agent", "agentic")
        client = LLMClient(ScriptedProvider(reply), store)
        asyncio.run(run_agent_answers(store, client, plan, AgentSettings(model="m-agent", max_turns=3),
                                      condition="agentic", by="setup"))
        (row,) = build_report(report_inputs(store)).tool_usage
    assert (row.model, row.condition, row.answers, row.not_ours) == ("m-agent", "agentic", 1, 0)
    assert row.calls == {"search": 1, "view": 1, "command_line": 0, "finish": 1}
    assert row.turns_per_answer == 3
    assert (row.failed_runs, row.failed_calls, row.failed_turns_per_run) == (1, 3, 3)
    assert list(row.failed_reasons) == ["turn limit reached (3) without Finish"]


def test_many_made_up_tool_names_share_one_column_and_are_listed_below(tmp_path):
    # a model that calls 40 tools of its own invention made one column each: the table squeezed every cell to nothing
    db = make_project(tmp_path, agent=False)
    made_up = [f"bogus{i:02d}" for i in range(40)]
    with Store.open(db) as store:
        pair = store.queue_page("x", limit=1)[0].id
        store.add_generated_answer(pair, "m2", "agentic", "a", extra={}, by="setup", source_format="agent",
                                   trajectory=traj(["search", "\x1b[31mevil", *made_up, "finish"]))
    r = run("--db", str(db), "report")
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if "search" in line and "view" in line)
    assert "bogus" not in header and "other" in header
    row = next(line for line in r.output.splitlines() if "│ m2" in line)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[:8] == ["m2", "agentic", "1", "1", "0", "0", "1", "41"]  # search, view, command_line, finish, other
    assert "other tools: ␛[31mevil 1, bogus00 1, bogus01 1" in r.output and "and 31 more" in r.output
