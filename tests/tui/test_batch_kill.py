"""A ``--batch`` judge job against the loopback fake of both providers' batch APIs (tests/batch_server.py, the real
SDKs over real HTTP), with the client killed with SIGKILL twice while its batch runs: the third run collects the
batch, the provider saw one submission, every judgment is stored once, each ledger row names its batch. Also
Ctrl+C (SIGINT), which says how to resume; and errored / expired / missing requests retried online."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from batch_project import batch_project
from batch_server import BatchServer

pytestmark = pytest.mark.slow

BENCHWRIGHT = str(Path(sys.executable).with_name("benchwright"))
"""The installed command (the README's install puts it beside the interpreter)."""


def _env(tmp_path: Path) -> dict:
    env = {**os.environ, "FAKE_BATCH_KEY": "sk-fake-batch-0123456789", "BENCHWRIGHT_CONFIG": str(tmp_path / "none.toml"),
           "BENCHWRIGHT_ANNOTATOR": "tester"}
    env.pop("BENCHWRIGHT_DB", None)
    return env


def _start(db: Path, tmp_path: Path, *extra: str) -> subprocess.Popen:
    cmd = [BENCHWRIGHT, "--db", str(db), "judgments", "run", "checklist", "--batch", *extra]
    return subprocess.Popen(cmd, env=_env(tmp_path), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _wait_for(db: Path, sql: str, want, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with sqlite3.connect(db, timeout=5) as conn:
                got = conn.execute(sql).fetchone()[0]
            if want(got):
                return
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {sql}")


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_batch_survives_two_kills_and_is_paid_for_once(tmp_path, kind):
    with BatchServer(tmp_path / "server", polls=10**9) as server:  # the batch runs until we say so
        db, _ids = batch_project(tmp_path, 40, server.base_url, kind=kind)
        for _ in range(2):
            proc = _start(db, tmp_path)
            _wait_for(db, "SELECT count(*) FROM llm_batches WHERE status = 'submitted'", lambda n: n >= 1)
            time.sleep(0.3)  # polling
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        assert server.submissions == 1 and server.online == 0
        server.knobs["polls"] = 0  # the provider finishes
        proc = _start(db, tmp_path)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err + out
        assert "judge checklist: 40 scored, 0 unscored" in out
        assert server.submissions == 1 and server.online == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT answer_id) FROM judgments").fetchone() == (40, 40)
        assert conn.execute("SELECT count(*), count(batch_id) FROM llm_calls").fetchone() == (40, 40)
        assert conn.execute("SELECT status FROM llm_batches").fetchall() == [("collected",)]
        assert "sk-fake-batch" not in "".join(str(r) for r in conn.execute("SELECT * FROM llm_batches"))


def test_ctrl_c_leaves_the_batch_running_and_says_how_to_resume(tmp_path):
    with BatchServer(tmp_path / "server", polls=10**9) as server:
        db, _ = batch_project(tmp_path, 5, server.base_url)
        proc = _start(db, tmp_path)
        _wait_for(db, "SELECT count(*) FROM llm_batches WHERE status = 'submitted'", lambda n: n >= 1)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
        assert proc.returncode == 130
        assert "still running at the provider" in err and "benchwright batches resume" in err
        server.knobs["polls"] = 0
        r = subprocess.run([BENCHWRIGHT, "--db", str(db), "batches", "resume"],
                           env=_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr + r.stdout
        assert "5 scored" in r.stdout and server.submissions == 1


def test_errored_expired_and_missing_requests_go_online(tmp_path):
    with BatchServer(tmp_path / "server", polls=1, errored_every=5, expired_every=7, missing_every=11) as server:
        db, _ = batch_project(tmp_path, 30, server.base_url)
        proc = _start(db, tmp_path)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err + out
        assert "judge checklist: 30 scored, 0 unscored" in out
        assert server.submissions == 1 and server.online == 6 + 4 + 2  # 5, 10, ... 30; 7, ... 28; 11, 22
    with sqlite3.connect(db) as conn:
        kinds = dict(conn.execute("SELECT result_kind, count(*) FROM llm_batch_requests GROUP BY 1").fetchall())
        assert kinds.get("errored", 0) + kinds.get("expired", 0) + kinds.get("missing", 0) == server.online
