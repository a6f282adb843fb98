"""A run killed with SIGKILL mid-run resumes from the ledger (the project database): the turns it finished replay
from the cache with no call, it goes on from the turn it reached, and once finished it replays with 0 calls.

The run services test the same at the command level (answers generate --agent); this is the core loop alone."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from test_agent_fixture import make_repo

from benchwright.core.agent.loop import run_agent
from benchwright.core.agent.model import AgentSettings
from benchwright.core.agent.workspace import Workspace
from benchwright.core.llm import LLMClient, ScriptedProvider
from benchwright.db import Store

SCRIPT = textwrap.dedent('''
    import asyncio, sys
    from benchwright.core.agent.loop import run_agent
    from benchwright.core.agent.model import AgentSettings
    from benchwright.core.agent.workspace import Workspace
    from benchwright.core.llm import Delay, LLMClient, Reply, ScriptedProvider
    from benchwright.db import Store

    STEPS = [
        Reply("find it", tool_calls=[("search", {"query": "class Engine", "path": None})]),
        Reply("read it", tool_calls=[("view", {"path": "pkg/engine.py", "start_line": 8, "end_line": 20})]),
        Reply("its helper", tool_calls=[("view", {"path": "pkg/util.py", "start_line": None, "end_line": None,
                                                  "outline": True})]),
        Reply("", tool_calls=[("finish", {"answer": "In the order added (pkg/engine.py: line 14-16)."})]),
    ]

    def script(request):
        turn = sum(m.role == "assistant" for m in request.messages)  # 0-based: the conversation says which
        if turn == 2 and sys.argv[3] == "hang":
            return Delay(600, STEPS[turn])  # killed while this call is in flight
        return STEPS[turn]

    async def main():
        store = Store.open(sys.argv[1])
        client = LLMClient(ScriptedProvider(script), store)
        out = await run_agent(client, Workspace(sys.argv[2]), "How are tasks ordered?",
                              AgentSettings(model="m1"), qa_pair_id="p1")
        print(out.status, out.calls, out.answer)

    asyncio.run(main())
''')


def _run_child(tmp_path, db, root, mode: str) -> subprocess.Popen:
    script = tmp_path / "agent_child.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.Popen([sys.executable, str(script), str(db), str(root), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.slow  # two Python processes that import benchwright: several seconds
def test_a_run_killed_mid_run_resumes_from_the_turn_it_reached(tmp_path):
    root = make_repo(tmp_path)
    db = tmp_path / "project.db"
    store = Store.open(db)  # the project exists before the child opens it
    child = _run_child(tmp_path, db, root, "hang")
    deadline = time.monotonic() + 60
    while len(store.llm_calls(purpose="agent")) < 2:
        assert child.poll() is None, child.stderr.read()
        assert time.monotonic() < deadline, "the child never recorded two turns"
        time.sleep(0.05)
    time.sleep(0.3)  # the third turn's call is in flight (its Delay): nothing of it is recorded yet
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert [r.status for r in store.llm_calls(purpose="agent")] == ["ok", "ok"]

    # started again: turns 1-2 come from the cache, turns 3-4 are called
    done = _run_child(tmp_path, db, root, "run")
    stdout, stderr = done.communicate(timeout=60)
    assert done.returncode == 0, stderr
    assert stdout.split()[:2] == ["ok", "2"]
    assert len(store.llm_calls(purpose="agent")) == 4

    # finished: a rerun in this process replays every turn, 0 calls
    empty = ScriptedProvider([])
    out = _replay(store, empty, root)
    assert out.ok and out.calls == 0 and empty.calls == [] and all(t.cached for t in out.turns)
    assert out.answer == "In the order added (pkg/engine.py: line 14-16)." and len(out.turns) == 4


def _replay(store, provider, root):
    client = LLMClient(provider, store)
    return asyncio.run(run_agent(client, Workspace(root), "How are tasks ordered?", AgentSettings(model="m1"),
                                 qa_pair_id="p1"))
