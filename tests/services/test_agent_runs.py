"""Agent answers over the scripted fake (tui/services/agent_runs.py): conditions that mean what they say
(Code-QA-Bench "Methodology"), the plan and its refusals, samples, failed runs stored as failed runs, replay from
the ledger, claims and cancellation."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from pathlib import Path

import pytest

from benchwright.core.errors import BenchwrightError
from benchwright.core.importers import parse
from benchwright.core.judgment import JudgmentError, answer_id
from benchwright.core.llm import ScriptedProvider
from benchwright.core.llm.client import LLMClient
from benchwright.core.llm.fake import Delay, Reply
from benchwright.core.models import Repository
from benchwright.core.repository import git_changed_files
from benchwright.core.vocabulary import AGENT_CONDITIONS, CONDITION_ACCESS, DIRECT_CONDITIONS
from benchwright.db import Store
from benchwright.tui.services.agent_runs import (
    AgentConditionError,
    AgentSettings,
    check_agent_condition,
    plan_agent_answers,
    run_agent_answers,
)
from benchwright.tui.services.judge_runs import plan_direct_answers

APP = "".join(f"line_{i} = {i}\n" for i in range(1, 41))
ANSWER = "It is made in src/pkg/app.py: line 12-13, not in src/pkg/gone.py: line 3."


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin", "HOME": str(repo)}).stdout


def _import(store: Store, tmp_path: Path, name: str, questions: list[str], repository: str | None) -> None:
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join(json.dumps({"question": q, "answer": f"Reference for {q}"}) + "\n" for q in questions))
    store.apply_import(parse("jsonl", data, repository=repository), annotator="lead", file_path=data)


@pytest.fixture
def project(tmp_path: Path):
    """``(store, ids)``: two pairs about ``pkg`` (a plain folder), one about ``gitpkg`` (a git checkout at its pinned
    commit), one about ``remote`` (registered without a checkout) and one about no repository."""
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "src" / "pkg" / "app.py").write_text(APP)
    (repo / "README.md").write_text("# pkg\nThe app is made in app.py.\n")
    gitrepo = tmp_path / "gitrepo"
    (gitrepo / "lib").mkdir(parents=True)
    (gitrepo / "lib" / "core.py").write_text("def core():\n    return 1\n")
    _git(gitrepo, "init", "-q")
    _git(gitrepo, "add", ".")
    _git(gitrepo, "commit", "-q", "-m", "one")
    pinned = _git(gitrepo, "rev-parse", "HEAD").strip()
    store = Store.open(tmp_path / "project.db")
    store.add_repository(Repository(name="pkg", version_label="1.0", local_path=str(repo)), "lead")
    store.add_repository(Repository(name="gitpkg", commit=pinned, commit_verified=True, local_path=str(gitrepo)),
                         "lead")
    store.add_repository(Repository(name="remote", version_label="2.0"), "lead")
    _import(store, tmp_path, "pkg", ["Where is the app made?", "What is line 5?"], "pkg")
    _import(store, tmp_path, "git", ["What does core return?"], "gitpkg")
    _import(store, tmp_path, "remote", ["What is remote?"], "remote")
    _import(store, tmp_path, "none", ["What is nothing?"], None)
    ids = [row.id for row in store.queue_page("lead", limit=100)]
    yield store, ids, {"repo": repo, "gitrepo": gitrepo, "pinned": pinned}
    store.close()


def agent_script(*, finish: bool = True, delay: float = 0.0):
    """A deterministic agent: turn 1 searches, turn 2 views the file, turn 3 finishes (or searches again forever
    when not ``finish``). The reply is chosen from the conversation, so a replayed run asks the same."""

    def reply(req):
        tools_seen = sum(1 for m in req.messages if m.role == "tool")
        if tools_seen == 0:
            out = Reply("Looking for it.", tool_calls=[("search", {"query": "line_12", "path": None})])
        elif tools_seen == 1 or not finish:
            out = Reply("Reading.", tool_calls=[("view", {"path": "src/pkg/app.py", "start_line": 10,
                                                          "end_line": 14 + tools_seen, "outline": False})])
        else:
            out = Reply("", tool_calls=[("finish", {"answer": ANSWER})])
        return Delay(delay, out) if delay else out

    return ScriptedProvider(reply)


def settings(**kw) -> AgentSettings:
    return AgentSettings(model="m-agent", **kw)


def run(store, provider, plan, condition="agentic", **kw):
    client = LLMClient(provider, store)
    seen = []
    final = asyncio.run(run_agent_answers(store, client, plan, kw.pop("settings", settings()), condition=condition,
                                          by="alice", on_outcome=seen.append, **kw))
    return final, seen


# ------------------------------------------------------------------------------------------------ conditions
def test_each_condition_says_what_the_model_may_read():
    assert dict(CONDITION_ACCESS) == {"closed-book": "none", "code-only": "code-only", "documented": "repository",
                                      "agentic": "repository", "direct": "none"}
    assert list(AGENT_CONDITIONS) == ["code-only", "documented", "agentic"]
    assert list(DIRECT_CONDITIONS) == ["closed-book", "direct"]
    assert check_agent_condition(None) == "agentic"
    for direct in DIRECT_CONDITIONS:
        with pytest.raises(AgentConditionError, match=f"condition {direct} gives the model no repository"):
            check_agent_condition(direct)


def test_a_direct_answer_is_refused_under_a_condition_that_reads_the_repository(project):
    store, _, _ = project
    for condition in AGENT_CONDITIONS:  # a no-repository answer labelled code-only was possible before
        with pytest.raises(JudgmentError, match=f"condition {condition} means the agent reads the repository"):
            plan_direct_answers(store, "m", condition)
    with pytest.raises(AgentConditionError):
        plan_agent_answers(store, "m", "closed-book")


def test_direct_samples_are_answers_with_their_own_sample_index_and_ledger_entry(project):
    from benchwright.core.judging import AnswerSettings
    from benchwright.tui.services.judge_runs import run_direct_answers

    store, ids, _ = project
    plan = plan_direct_answers(store, "m-direct", "direct", samples=3, limit=1)
    assert plan.targets == [(ids[0], 0), (ids[0], 1), (ids[0], 2)] and plan.pair_ids == [ids[0]]
    provider = ScriptedProvider(lambda req: "The same text each time.")
    asyncio.run(run_direct_answers(store, LLMClient(provider, store), plan.targets, AnswerSettings(model="m-direct"),
                                   condition="direct", by="alice"))
    got = store.answers(model="m-direct")
    assert [a.sample_index for a in got] == [0, 1, 2] and len({a.id for a in got}) == 3
    assert got[0].id == answer_id(ids[0], "m-direct", "direct", "The same text each time.")  # sample 0: old id
    assert sorted(c.repeat for c in provider.calls) == [0, 1, 2]
    again = plan_direct_answers(store, "m-direct", "direct", samples=3, limit=1)
    assert again.already_answered == 3 and again.targets == [(ids[1], s) for s in range(3)]


def test_closed_book_and_direct_answers_never_share_a_cached_draw(project):
    from benchwright.core.judging import AnswerSettings
    from benchwright.tui.services.judge_runs import run_direct_answers

    store, ids, _ = project
    provider = ScriptedProvider(lambda req: f"draw {len(provider.calls)}")
    client = LLMClient(provider, store)
    for condition in ("direct", "closed-book"):
        asyncio.run(run_direct_answers(store, client, [ids[0]], AnswerSettings(model="m-d"), condition=condition,
                                       by="alice"))
    assert len(provider.calls) == 2  # the closed-book answer was drawn, not replayed from the direct one
    texts = {a.condition: a.text for a in store.answers(model="m-d")}
    assert texts["direct"] != texts["closed-book"]
    rows = [c for c in store.llm_calls() if c.purpose == "answer:direct"]
    assert len({c.request_hash for c in rows}) == 2
    for condition in ("direct", "closed-book"):  # a rerun of either replays its own draw
        asyncio.run(run_direct_answers(store, client, [ids[0]], AnswerSettings(model="m-d"), condition=condition,
                                       by="alice"))
    assert len(provider.calls) == 2


# ------------------------------------------------------------------------------------------------------ plan
def test_a_checkout_with_uncommitted_changes_is_refused_untracked_files_are_allowed(project):
    store, ids, where = project
    gitrepo = where["gitrepo"]
    (gitrepo / "notes.txt").write_text("untracked\n")  # untracked: allowed
    plan = plan_agent_answers(store, "m-agent", "documented")
    assert (ids[2], 0) in plan.targets and ids[2] not in dict(plan.refused)
    (gitrepo / "lib" / "core.py").write_text("def core():\n    return 'edited'\n")  # same HEAD, tracked file changed
    plan = plan_agent_answers(store, "m-agent", "documented")
    why = dict(plan.refused)[ids[2]]
    assert (ids[2], 0) not in plan.targets
    assert f"the checkout of gitpkg at {gitrepo} has uncommitted changes to 1 tracked file (lib/core.py)" in why
    assert f"not the pinned commit {where['pinned'][:12]}: commit or stash them" in why
    assert f"worktree add DIR {where['pinned'][:12]}" in why and "benchwright repos move gitpkg DIR" in why  # repos add refuses a registered name
    assert "notes.txt" not in why
    _git(gitrepo, "add", "lib/core.py")  # staged counts too
    assert ids[2] in dict(plan_agent_answers(store, "m-agent", "documented").refused)
    _git(gitrepo, "checkout", "-q", "HEAD", "--", "lib/core.py")  # clean again
    assert (ids[2], 0) in plan_agent_answers(store, "m-agent", "documented").targets
    assert git_changed_files(gitrepo) == [] and git_changed_files(where["repo"]) is None


def test_plan_refuses_pairs_the_agent_cannot_read_with_the_reason(project, tmp_path):
    store, ids, where = project
    plan = plan_agent_answers(store, "m-agent", "agentic")
    assert plan.targets == [(ids[0], 0), (ids[1], 0), (ids[2], 0)]
    assert plan.workspaces[ids[0]] == str(where["repo"]) and plan.repositories[ids[2]] == "gitpkg"
    refused = dict(plan.refused)
    assert "no local checkout of remote" in refused[ids[3]] and "benchwright repos add remote PATH" in refused[ids[3]]
    assert "the pair names no repository" in refused[ids[4]]
    assert len(plan.refused) == 2

    # the git checkout moved off its pinned commit: refused, naming both commits
    (where["gitrepo"] / "lib" / "core.py").write_text("def core():\n    return 2\n")
    _git(where["gitrepo"], "commit", "-qam", "two")
    head = _git(where["gitrepo"], "rev-parse", "HEAD").strip()
    plan = plan_agent_answers(store, "m-agent", "documented")
    why = dict(plan.refused)[ids[2]]
    assert f"is at {head[:12]}, not at the pinned commit {where['pinned'][:12]}" in why
    assert (ids[2], 0) not in plan.targets

    # code-only: the stripped copy, or a refusal naming the command that makes it
    plan = plan_agent_answers(store, "m-agent", "code-only")
    assert dict(plan.refused)[ids[0]] == "no code-only copy of pkg: run benchwright repos strip pkg"
    assert not any(pid == ids[0] for pid, _ in plan.targets)
    copy = tmp_path / "pkg-code-only"
    (copy / "src" / "pkg").mkdir(parents=True)
    (copy / "src" / "pkg" / "app.py").write_text(APP)
    store.add_derived_repository(Repository(name="pkg-code-only", version_label="1.0", local_path=str(copy),
                                            derived_from="pkg", derivation="code-only", manifest={}), "lead")
    plan = plan_agent_answers(store, "m-agent", "code-only")
    assert plan.targets[:2] == [(ids[0], 0), (ids[1], 0)]
    assert plan.workspaces[ids[0]] == str(copy) and plan.repositories[ids[0]] == "pkg-code-only"


def test_plan_samples_limit_and_where(project):
    store, ids, _ = project
    plan = plan_agent_answers(store, "m-agent", "agentic", samples=2, limit=1)
    assert plan.targets == [(ids[0], 0), (ids[0], 1)] and plan.samples == 2
    with pytest.raises(BenchwrightError, match="from 1 to 100, not 0"):
        plan_agent_answers(store, "m-agent", "agentic", samples=0)
    from benchwright.db import QueueFilter

    plan = plan_agent_answers(store, "m-agent", "agentic", where=QueueFilter(repository="gitpkg"))
    assert plan.targets == [(ids[2], 0)] and plan.refused == []


# ------------------------------------------------------------------------------------------------------- run
def test_samples_become_answers_with_trajectories_runs_and_citations(project):
    store, ids, _ = project
    plan = plan_agent_answers(store, "m-agent", "agentic", samples=3, limit=1)
    provider = agent_script()
    final, seen = run(store, provider, plan)
    assert final.done == 3 and final.failed == 0 and final.calls == 9
    answers = store.answers(model="m-agent", condition="agentic")
    assert [a.sample_index for a in answers] == [0, 1, 2] and len({a.id for a in answers}) == 3
    assert answers[0].id == answer_id(ids[0], "m-agent", "agentic", ANSWER)
    assert answers[1].id == answer_id(ids[0], "m-agent", "agentic", ANSWER, 1)
    a = answers[1]
    assert a.text == ANSWER and a.source_format == "agent"
    assert [t["index"] for t in a.trajectory] == [1, 2, 3]
    assert [u["name"] for t in a.trajectory for u in t["tool_uses"]] == ["search", "view", "finish"]
    assert "src/pkg/app.py:12: line_12 = 12" in a.trajectory[0]["tool_uses"][0]["output"]
    assert a.extra["repository"] == "pkg" and a.extra["turns"] == 3
    assert a.extra["tool_counts"] == {"search": 1, "view": 1, "finish": 1}
    assert a.extra["settings"]["max_turns"] == 25 and a.extra["call_ids"]
    cites = a.extra["citations"]
    assert _n(cites, "resolving") == 1 and _n(cites, "not_resolving") == 1
    # each sample is its own ledger entry: repeat = sample index on every turn
    assert sorted(c.repeat for c in provider.calls) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    runs = sorted(store.answer_runs(model="m-agent"), key=lambda r: r.sample_index)  # stored as they finish
    assert [(r.sample_index, r.status, r.turns) for r in runs] == [(0, "ok", 3), (1, "ok", 3), (2, "ok", 3)]
    assert {r.answer_id for r in runs} == {x.id for x in answers} and runs[0].repository == "pkg"
    assert runs[0].trajectory == answers[0].trajectory and len(runs[0].call_ids) == 3
    assert store.answer_run_for(answers[2].id).id == runs[2].id
    assert {o.status for o in seen} == {"ok"} and all(o.run_id for o in seen)
    # nothing left to do; the same targets again are skipped, with no call
    assert plan_agent_answers(store, "m-agent", "agentic", samples=3, limit=1).already_answered == 3
    idle = agent_script()
    final, seen = run(store, idle, plan)
    assert idle.calls == [] and final.skipped == 3 and {o.reason for o in seen} == {"answered meanwhile by another run"}


def _n(cites: dict, key: str) -> int:
    value = cites[key]
    return len(value) if isinstance(value, list) else value


def test_a_run_at_the_turn_limit_is_a_failed_run_never_an_answer_and_replays_from_the_ledger(project):
    store, ids, _ = project
    plan = plan_agent_answers(store, "m-agent", "agentic", limit=1)
    provider = agent_script(finish=False)
    final, seen = run(store, provider, plan, settings=settings(max_turns=3))
    assert final.failed == 1 and len(provider.calls) == 3
    assert store.answers(model="m-agent") == []
    (r,) = store.answer_runs(ids[0], "m-agent", "agentic")
    assert r.status == "failed" and "turn limit" in r.reason and r.answer_id is None and r.turns == 3
    assert [t["index"] for t in r.trajectory] == [1, 2, 3] and r.settings["max_turns"] == 3
    assert seen[0].status == "failed" and seen[0].reason == r.reason
    # the next invocation tries again: every turn comes from the ledger (0 calls), and the same failure adds no row
    again = plan_agent_answers(store, "m-agent", "agentic", limit=1)
    assert again.targets == [(ids[0], 0)]
    replay = agent_script(finish=False)
    final, seen = run(store, replay, again, settings=settings(max_turns=3))
    assert replay.calls == [] and final.calls == 0 and final.cached == 3 and seen[0].cached == 3
    assert len(store.answer_runs(ids[0], "m-agent", "agentic")) == 1
    # with more turns allowed it is a new run (the prompt states the limit), which finishes
    final, seen = run(store, agent_script(finish=True), again, settings=settings(max_turns=6))
    assert seen[0].ok, seen[0].reason
    assert [r.status for r in store.answer_runs(ids[0])] == ["failed", "ok"]


def test_a_provider_error_is_a_failed_run_with_the_reason(project):
    from benchwright.core.llm.base import LLMError

    store, ids, _ = project
    plan = plan_agent_answers(store, "m-agent", "agentic", limit=1)
    final, _ = run(store, ScriptedProvider([LLMError("the server is down", status="error")]), plan)
    assert final.failed == 1 and store.answers(model="m-agent") == []
    (r,) = store.answer_runs(ids[0])
    assert r.status == "failed" and "the server is down" in r.reason


def test_an_item_another_process_holds_is_skipped(project):
    store, ids, _ = project
    plan = plan_agent_answers(store, "m-agent", "agentic", limit=2)
    other = f"{socket.gethostname()}:1:someone"  # pid 1 is alive: a live claim of another process
    assert store.claim("agent:agentic:m-agent", f"{ids[0]}:0", other)
    provider = agent_script()
    final, seen = run(store, provider, plan)
    assert final.skipped == 1 and final.done == 2
    assert [a.qa_pair_id for a in store.answers(model="m-agent")] == [ids[1]]
    assert [o.reason for o in seen if o.skipped] == ["another run is answering it"]


def test_cancelling_keeps_the_finished_runs_and_the_next_run_resumes_from_the_ledger(project):
    store, ids, _ = project
    plan = plan_agent_answers(store, "m-agent", "agentic", limit=3)
    provider = agent_script(delay=0.05)
    provider.concurrency = 1
    client = LLMClient(provider, store)
    seen = []

    async def go():
        task = asyncio.ensure_future(run_agent_answers(store, client, plan, settings(), condition="agentic",
                                                       by="alice", on_outcome=seen.append))
        while len(provider.calls) < 5:  # the first run done (3 turns), the second in its second turn
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert [o.qa_pair_id for o in seen] == [ids[0]]
    assert [a.qa_pair_id for a in store.answers(model="m-agent")] == [ids[0]]
    before = len(provider.calls)
    resumed = agent_script()
    final, seen = run(store, resumed, plan_agent_answers(store, "m-agent", "agentic", limit=3))
    assert final.failed == 0 and {o.qa_pair_id for o in seen} == {ids[1], ids[2]}
    # the second pair's finished turns came from the ledger: fewer than 3 + 3 new calls
    assert len(resumed.calls) < 6 and final.cached >= 1 and before >= 5


def test_a_checkout_gone_since_the_plan_fails_that_pair_only(project):
    import shutil

    store, ids, where = project
    plan = plan_agent_answers(store, "m-agent", "agentic")
    shutil.rmtree(where["gitrepo"])
    final, seen = run(store, agent_script(), plan)
    by_pair = {o.qa_pair_id: o for o in seen}
    assert by_pair[ids[2]].status == "failed" and by_pair[ids[2]].reason.startswith("not run: ")
    assert final.failed == 1 and {a.qa_pair_id for a in store.answers(model="m-agent")} == {ids[0], ids[1]}
    assert store.answer_runs(ids[2]) == []  # nothing ran, nothing was paid: no run row


def test_the_store_keeps_runs_append_only_and_refuses_inconsistent_ones(project):
    store, ids, _ = project
    with pytest.raises(BenchwrightError, match="says why it failed"):
        store.record_answer_run(ids[0], "m", "agentic", status="failed", by="a")
    with pytest.raises(BenchwrightError, match="names the answer it stored"):
        store.record_answer_run(ids[0], "m", "agentic", status="ok", by="a")
    with pytest.raises(BenchwrightError, match="unknown run status"):
        store.record_answer_run(ids[0], "m", "agentic", status="done", by="a", reason="x")
    with pytest.raises(JudgmentError):
        store.record_answer_run(ids[0], "m", "open-book", status="failed", by="a", reason="x")
    first = store.record_answer_run(ids[0], "m", "agentic", status="failed", by="a", reason="turn limit", turns=2,
                                    trajectory=[{"index": 1}], call_ids=[1, 2], settings={"max_turns": 2})
    aid = store.add_generated_answer(ids[0], "m", "agentic", "An answer.", extra={}, by="a", sample_index=1,
                                     trajectory=[{"index": 1}], source_format="agent")
    second = store.record_answer_run(ids[0], "m", "agentic", status="ok", by="a", answer_id=aid, sample_index=1)
    assert (first.trajectory, first.call_ids, first.settings, first.cost_usd) == ([{"index": 1}], [1, 2],
                                                                                   {"max_turns": 2}, None)
    assert [r.id for r in store.answer_runs(ids[0], latest_only=True)] == [first.id, second.id]
    assert store.answer_run_for(aid) == second and store.get_answer(aid).sample_index == 1
    with pytest.raises(BenchwrightError, match="already has an answer by m under agentic \\(sample 1\\)"):
        store.add_generated_answer(ids[0], "m", "agentic", "Another.", extra={}, by="a", sample_index=1)
    import sqlite3

    with pytest.raises(sqlite3.DatabaseError):  # append-only: a run is never rewritten
        store.db.conn.execute("UPDATE answer_runs SET status = 'ok' WHERE id = ?", [first.id])


def test_two_conditions_never_share_a_cached_turn(project):
    """The first turn's messages are the same under every condition (the question alone); the cache key holds the
    condition and the workspace, so a documented run after an agentic one asks the model again, every turn."""
    store, _, _ = project
    first = agent_script()
    run(store, first, plan_agent_answers(store, "m-agent", "agentic", limit=1))
    assert len(first.calls) == 3
    second = agent_script()
    final, _ = run(store, second, plan_agent_answers(store, "m-agent", "documented", limit=1), condition="documented")
    assert final.done == 1 and len(second.calls) == 3
    assert store.answers(model="m-agent", condition="documented")[0].trajectory[0]["cached"] is False


def test_an_unexpected_error_before_any_call_fails_that_item_only_and_stores_nothing(project, monkeypatch):
    import benchwright.tui.services.agent_runs as agent_runs

    store, ids, _ = project
    real = agent_runs.build_input

    def broken(store_, pid, kind):
        if pid == ids[0]:
            raise ValueError("a bug")
        return real(store_, pid, kind)

    monkeypatch.setattr(agent_runs, "build_input", broken)
    plan = plan_agent_answers(store, "m-agent", "agentic", limit=2)
    final, seen = run(store, agent_script(), plan)
    by_pair = {o.qa_pair_id: o for o in seen}
    assert by_pair[ids[0]].status == "failed" and by_pair[ids[1]].ok
    assert by_pair[ids[0]].reason == "internal error: ValueError: a bug (please report)"
    assert by_pair[ids[0]].run_id is None and store.answer_runs(ids[0], "m-agent") == []  # nothing paid
    assert final.failed == 1
    # the claim was released: a later run may take the item
    monkeypatch.setattr(agent_runs, "build_input", real)
    _, seen = run(store, agent_script(), plan_agent_answers(store, "m-agent", "agentic", limit=1))
    assert [(o.qa_pair_id, o.status) for o in seen] == [(ids[0], "ok")]


@pytest.mark.parametrize("samples", [0, 101, 100000])
def test_sample_counts_outside_one_to_max_samples_are_refused_before_planning(project, samples):
    store, _, _ = project
    for plan in (lambda: plan_agent_answers(store, "m", "agentic", samples=samples),
                 lambda: plan_direct_answers(store, "m", "direct", samples=samples)):
        with pytest.raises(BenchwrightError, match=f"from 1 to 100, not {samples}"):
            plan()
