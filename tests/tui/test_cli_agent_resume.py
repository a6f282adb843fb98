"""``benchwright answers generate --agent`` as a user runs it: subprocesses with the real ``openai`` SDK against the
in-test OpenAI-compatible server (tests/llm_server.py) playing native tool calls, configured through
``benchwright.toml``.

Killed with SIGKILL mid-run and run again: the turns finished before the kill come from the ledger (no request is
sent for them again), the run completes, no answer is duplicated, and a further rerun sends nothing. Two processes
started at once share the pairs through claims: every turn of every pair is asked once in all."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from llm_server import LLMServer, Reply, question_of
from test_generate_resume import KEY_ENV, env_for

from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import Store

pytestmark = pytest.mark.slow

BENCHWRIGHT = Path(sys.executable).parent / "benchwright"
TURNS = 3


def make_project(tmp_path: Path, n: int) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("".join(f"def f{i}():\n    return {i}\n" for i in range(1, 31)))
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"question": f"What does f{i} return?", "answer": f"{i}."}) + "\n"
                            for i in range(1, n + 1)))
    db = tmp_path / "proj" / "project.db"
    db.parent.mkdir()
    with Store.open(db, create=True) as store:
        store.add_repository(Repository(name="app", version_label="1.0", local_path=str(repo)), "setup")
        store.apply_import(parse("jsonl", data, repository="app"), annotator="setup", file_path=data)
    return db


def write_config(db: Path, server: LLMServer, *, concurrency: int = 1) -> None:
    (db.parent / "benchwright.toml").write_text(
        f'[providers.local]\nkind = "openai"\nbase_url = "{server.base_url}"\napi_key_env = "{KEY_ENV}"\n'
        f'concurrency = {concurrency}\ntimeout_s = 30\nmax_retries = 0\n\n'
        '[roles.generator]\nprovider = "local"\nmodel = "local-agent"\n\n[agent]\nmax_turns = 5\n',
        encoding="utf-8")


def turn_of(body: dict) -> int:
    """The 1-based turn of an agent request: one more than the assistant turns it carries."""
    return 1 + sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")


def agent_reply(body: dict, n: int) -> Reply:
    """Search, then view, then finish, whatever the question (native tool calls)."""
    q = question_of(body) or "?"
    fn = q.split()[2] if len(q.split()) > 2 else "f1"
    turn = turn_of(body)
    if turn == 1:
        return Reply("", tool_calls=[("search", {"query": f"def {fn}(", "path": None})])
    if turn == 2:
        return Reply("Reading it.", tool_calls=[("view", {"path": "src/app.py", "start_line": 1, "end_line": 4,
                                                          "outline": False})])
    return Reply("", tool_calls=[("finish", {"answer": f"{fn} is defined in src/app.py: line 1-2."})])


def command(db: Path, *args: str) -> list[str]:
    return [str(BENCHWRIGHT), "--db", str(db), "answers", "generate", "--agent", "--model", "local-agent", *args]


def ledger_ok_calls(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        return conn.execute("SELECT count(*) FROM llm_calls WHERE purpose = 'answer:agent' AND status = 'ok'"
                            ).fetchone()[0]


def keys(server: LLMServer) -> Counter:
    """(question, turn) of every request the server got."""
    with server._lock:
        return Counter((question_of(b), turn_of(b)) for b in server.requests)


def test_kill_mid_run_and_resume_from_the_ledger(tmp_path):
    n = 4
    db = make_project(tmp_path, n)
    env = env_for(tmp_path)
    with LLMServer(delay_s=0.25, responder=agent_reply) as server:
        write_config(db, server)
        proc = subprocess.Popen(command(db), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
            try:
                if ledger_ok_calls(db) >= TURNS + 1:  # the first pair done, the second one turn in
                    break
            except sqlite3.OperationalError:
                continue
        assert proc.poll() is None, f"the run ended before it could be killed:\n{proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        time.sleep(0.5)  # let the server finish the reply nobody waits for any more
        finished = ledger_ok_calls(db)
        asked_before = keys(server)
        with Store.open(db) as s:
            answered_before = len(s.answers(model="local-agent"))
        assert TURNS + 1 <= finished < n * TURNS and answered_before < n

        r = subprocess.run(command(db), env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        asked_after = keys(server)
        new = asked_after - asked_before
        # the finished turns came from the ledger: only the turns not finished before the kill were asked
        assert sum(new.values()) == n * TURNS - finished
        assert all(asked_after[k] == 1 for k in asked_before if asked_before[k] == 1 and k not in new)
        stored = n - answered_before
        assert f"agent (local-agent, agentic): {stored} answer{'s' if stored != 1 else ''} stored, 0 failed" in r.stdout
        assert f"{answered_before} pair{'s' if answered_before != 1 else ''} already answered" in r.stdout
        with Store.open(db) as s:
            answers = s.answers(model="local-agent")
            assert len(answers) == n and len({a.qa_pair_id for a in answers}) == n  # nothing duplicated
            runs = s.answer_runs(model="local-agent")
            assert [r.status for r in runs] == ["ok"] * n and all(r.turns == TURNS for r in runs)
            resumed = [a for a in answers if any(t["cached"] for t in a.trajectory)]
            assert resumed, "the run cut by the kill resumed with cached turns"
            dump = "\n".join(s.db.conn.iterdump())
        assert "dummy-key-for-tests" not in dump

        before = server.count
        r = subprocess.run(command(db), env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "nothing to do" in r.stdout and server.count == before


def test_two_processes_share_the_work(tmp_path):
    n = 6
    db = make_project(tmp_path, n)
    env = env_for(tmp_path)
    with LLMServer(delay_s=0.1, responder=agent_reply) as server:
        write_config(db, server)
        procs = [subprocess.Popen(command(db), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        asked = keys(server)
        assert sum(asked.values()) == n * TURNS and set(asked.values()) == {1}  # every turn asked once in all
        with Store.open(db) as s:
            answers = s.answers(model="local-agent")
            assert len(answers) == n and len(s.answer_runs(model="local-agent")) == n
        stored = [int(m.group(1)) for o, _ in outs for m in [re.search(r"(\d+) answers? stored", o)] if m]
        assert sum(stored) == n, outs
