"""``benchwright curation run checklist`` as a user runs it: a subprocess with the real ``openai`` SDK against the
in-test OpenAI-compatible server (tests/llm_server.py), configured through ``benchwright.toml``.

Killed with SIGKILL mid-run and run again: nothing lost (every pair finished before the kill keeps its
checklist), nothing repeated (no request for a finished pair), everything done at the end, and a further rerun
sends no request. Then servers that answer broken JSON, 429s and nothing at all (timeouts)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from llm_server import VALID_CHECKLIST, LLMServer, Reply, default_answer, question_of

from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import Store

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
BENCHMARK = DATA / "swe-qa" / "Benchmark__flask.jsonl"
BENCHWRIGHT = Path(sys.executable).parent / "benchwright"
KEY_ENV = "BW_TEST_LOCAL_KEY"


def make_project(tmp_path: Path, n: int) -> Path:
    if not BENCHMARK.exists():
        pytest.skip(f"real data {BENCHMARK} is absent (the shared data folder ../shared/data is not checked out here)")
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "flask.jsonl"
    src.write_text("".join(BENCHMARK.read_text(encoding="utf-8").splitlines(keepends=True)[:n]), encoding="utf-8")
    db = tmp_path / "proj" / "project.db"
    db.parent.mkdir()
    with Store.open(db, create=True) as store:
        store.add_repository(Repository(name="flask", version_label="3.1.1"), "setup")
        store.apply_import(parse("swe-qa", src, repository="flask"), annotator="setup", file_path=src)
    return db


def write_config(db: Path, server: LLMServer, *, concurrency: int = 2, timeout_s: float = 30,
                 max_retries: int = 2) -> None:
    (db.parent / "benchwright.toml").write_text(
        f'[providers.local]\nkind = "openai"\nbase_url = "{server.base_url}"\napi_key_env = "{KEY_ENV}"\n'
        f'structured_output = "json_schema"\nconcurrency = {concurrency}\ntimeout_s = {timeout_s}\n'
        f'max_retries = {max_retries}\n\n'
        '[roles.generator]\nprovider = "local"\nmodel = "local-coder"\ntemperature = 0.0\n',
        encoding="utf-8")


def env_for(tmp_path: Path) -> dict:
    env = dict(os.environ)
    for k in ("BENCHWRIGHT_DB", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(k, None)
    env.update({KEY_ENV: "dummy-key-for-tests", "BENCHWRIGHT_CONFIG": str(tmp_path / "user" / "config.toml"),
                "BENCHWRIGHT_ANNOTATOR": "tester", "COLUMNS": "200"})
    return env


def generate(db: Path, env: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(BENCHWRIGHT), "--db", str(db), "curation", "run", "checklist", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def done_pairs(db: Path) -> set[str]:
    """Pairs whose current checklist result is ok (read without the Store: the run may be writing)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        return {r[0] for r in conn.execute(
            "SELECT qa_pair_id FROM curation_current WHERE step = 'checklist' AND status = 'ok'")}


def questions_by_id(db: Path) -> dict[str, str]:
    with Store.open(db) as s:
        return {r.id: s.get_pair(r.id).question for r in s.queue_page("x", limit=1000)}


def test_kill_mid_run_and_resume(tmp_path):
    n = 12
    db = make_project(tmp_path, n)
    env = env_for(tmp_path)
    with LLMServer(delay_s=0.3) as server:
        write_config(db, server, concurrency=2)
        proc = subprocess.Popen([str(BENCHWRIGHT), "--db", str(db), "curation", "run", "checklist"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            try:
                if len(done_pairs(db)) >= 4:
                    break
            except sqlite3.OperationalError:  # the file is being set up
                continue
        assert proc.poll() is None, f"the run ended before it could be killed:\n{proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        time.sleep(0.5)  # let the server finish the answers nobody waits for any more
        finished = done_pairs(db)
        asked_before = Counter(server.questions())
        questions = questions_by_id(db)
        assert 4 <= len(finished) < n
        assert server.max_in_flight <= 2

        # nothing lost: every pair finished before the kill has its generated checklist
        with Store.open(db) as s:
            for pid in finished:
                v = s.checklist_version(pid)
                assert v is not None and v.origin == "generated" and v.author == "llm:local-coder"

        # resume
        r = generate(db, env)
        assert r.returncode == 0, r.stdout + r.stderr
        asked_after = Counter(server.questions())
        for pid in finished:  # nothing repeated
            assert asked_after[questions[pid]] == asked_before[questions[pid]] == 1
        assert server.count - sum(asked_before.values()) == n - len(finished)
        assert f"checklist: {n - len(finished)} ok, 0 failed" in r.stdout
        assert done_pairs(db) == set(questions)
        with Store.open(db) as s:
            assert all(len(s.checklist_history(pid)) == 1 for pid in questions)
            calls = s.llm_calls()
            assert {c.base_url for c in calls} == {server.base_url}
            assert all(c.provider == "local" and c.requested_model == "local-coder" for c in calls)
            # the key never reaches the database
            dump = "\n".join(s.db.conn.iterdump())
        assert "dummy-key-for-tests" not in dump

        # a second rerun sends nothing
        before = server.count
        r = generate(db, env)
        assert r.returncode == 0 and "nothing to do" in r.stdout and server.count == before
        r = generate(db, env, "--force")  # --force runs every pair again and ignores the cached calls
        assert r.returncode == 0 and server.count == before + n


def test_broken_json_is_repaired_or_failed_with_the_raw_output(tmp_path):
    db = make_project(tmp_path, 4)
    env = env_for(tmp_path)
    questions = list(questions_by_id(db).items())
    repaired_q, failed_q, http_broken_q = questions[0][1], questions[1][1], questions[2][1]
    seen: Counter = Counter()

    def responder(body, n):
        q = question_of(body)
        seen[q] += 1
        if q == repaired_q and seen[q] == 1:
            return Reply('{"items": [{"kind": "knowledge", "key_point": ')  # cut short
        if q == failed_q:
            return Reply("{not json at all" if seen[q] == 1 else "still { broken")
        if q == http_broken_q and seen[q] == 1:
            return Reply(raw_body=b'{"id": "x", "choices": [')  # the HTTP body itself is broken
        return default_answer(body, n)

    with LLMServer(responder=responder) as server:
        write_config(db, server, max_retries=0)
        r = generate(db, env)
        assert r.returncode == 1, r.stdout + r.stderr
        assert "checklist: 2 ok, 2 failed" in r.stdout
        assert "invalid output after one repair attempt" in r.stdout and "not JSON" in r.stdout
        assert "unusable answer" in r.stdout
        assert seen[repaired_q] == 2 and seen[failed_q] == 2 and seen[http_broken_q] == 1
        with Store.open(db) as s:
            failed = s.curation_current(questions[1][0])["checklist"]
            assert failed.status == "failed" and failed.raw_text == "still { broken"
            assert s.checklist_version(questions[1][0]) is None
            assert s.checklist_version(questions[0][0]).origin == "generated"
            statuses = [str(c.status) for c in s.llm_calls(qa_pair_id=questions[0][0])]
            assert statuses == ["invalid", "ok"]
        r = generate(db, env)  # the failures are asked again; the broken-HTTP pair now succeeds
        assert "1 ok, 1 failed" in r.stdout and r.returncode == 1
        assert seen[repaired_q] == 2 and seen[http_broken_q] == 2


def test_429_then_success_and_a_timeout(tmp_path):
    db = make_project(tmp_path, 3)
    env = env_for(tmp_path)
    questions = list(questions_by_id(db).items())
    limited_q, hung_q = questions[0][1], questions[1][1]
    seen: Counter = Counter()

    def responder(body, n):
        q = question_of(body)
        seen[q] += 1
        if q == limited_q and seen[q] <= 2:
            return Reply(status=429, headers={"retry-after": "0.1"}, error_message="slow down")
        if q == hung_q and seen[q] == 1:
            return Reply(hang=True)
        return Reply(VALID_CHECKLIST)

    with LLMServer(responder=responder) as server:
        write_config(db, server, timeout_s=1, max_retries=2)
        # the hang: attempt 1 times out, the SDK retries and gets an answer
        r = generate(db, env)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "checklist: 3 ok, 0 failed" in r.stdout
        assert seen[limited_q] == 3 and seen[hung_q] == 2
        with Store.open(db) as s:
            limited = s.llm_calls(qa_pair_id=questions[0][0])
            assert [(str(c.status), c.http_attempts) for c in limited] == [("ok", 3)]
            hung = s.llm_calls(qa_pair_id=questions[1][0])
            assert [(str(c.status), c.http_attempts) for c in hung] == [("ok", 2)]
            assert hung[0].latency_s >= 1.0

    # no retries left: a 429 and a timeout fail the pair, exit 1, and the ledger says why
    db2 = make_project(tmp_path / "second", 2)
    questions = list(questions_by_id(db2).items())
    answers = {questions[0][1]: Reply(status=429, headers={"retry-after": "0"}, error_message="rate limited"),
               questions[1][1]: Reply(hang=True)}
    with LLMServer(responder=lambda body, n: answers[question_of(body)]) as server:
        write_config(db2, server, timeout_s=0.5, max_retries=0)
        r = generate(db2, env)
        assert r.returncode == 1
        assert "0 ok, 2 failed" in r.stdout and "HTTP 429" in r.stdout and "rate limited" in r.stdout
        assert "no answer from" in r.stdout
        with Store.open(db2) as s:
            rows = {c.qa_pair_id: c for c in s.llm_calls()}
            assert rows[questions[0][0]].status == "error" and rows[questions[0][0]].http_status == 429
            assert rows[questions[1][0]].status == "error" and "within 0.5 s" in rows[questions[1][0]].error
        answers.update({q: Reply(VALID_CHECKLIST) for _, q in questions})
        r = generate(db2, env)
        assert r.returncode == 0 and "2 ok, 0 failed" in r.stdout


def test_missing_api_key_is_a_clear_error(tmp_path):
    db = make_project(tmp_path, 1)
    env = env_for(tmp_path)
    env.pop(KEY_ENV)
    with LLMServer() as server:
        write_config(db, server)
        r = generate(db, env)
        assert r.returncode == 1 and f"{KEY_ENV} is not set" in r.stderr and "Traceback" not in r.stderr
        assert server.count == 0


def test_prompt_mode_endpoint_runs_every_step_and_the_judge(tmp_path):
    """An endpoint without native JSON-Schema output (structured_output = "prompt"): the schema travels in the
    prompt, no response_format is sent, and the output is validated the same way."""
    data = BENCHMARK
    if not data.exists():
        pytest.skip(f"real data {data} is absent")
    db = tmp_path / "p.db"
    bw = [str(BENCHWRIGHT), "--db", str(db)]
    env = {**os.environ, "BENCHWRIGHT_CONFIG": str(tmp_path / "user.toml")}
    with LLMServer() as server:
        (tmp_path / "benchwright.toml").write_text(
            f'[providers.local]\nkind = "openai"\nbase_url = "{server.base_url}"\nstructured_output = "prompt"\n'
            '[roles.generator]\nprovider = "local"\nmodel = "g"\n[roles.verifier]\nprovider = "local"\nmodel = "v"\n')
        subprocess.run([*bw, "init"], check=True, capture_output=True, env=env)
        subprocess.run([*bw, "pairs", "import", "swe-qa", str(data)], check=True, capture_output=True, env=env)
        for step in ("classify", "refine", "checklist", "verify"):
            r = subprocess.run([*bw, "curation", "run", step, "--limit", "3"], capture_output=True, text=True, env=env)
            assert r.returncode == 0, r.stdout + r.stderr
            assert f"{step}: 3 ok, 0 failed" in r.stdout
        assert server.requests and all("response_format" not in b for b in server.requests)
        assert all("It must conform to this JSON Schema" in b["messages"][-1]["content"] for b in server.requests)
