"""Curation benchmark (issue #4): 2,000 checklist generations at concurrency 64 against the in-test
OpenAI-compatible server (tests/llm_server.py, in its own process) answering after 100 ms, through the real ``openai`` SDK, the
ledger in the project database, validation and the checklist store (``run_curation``, what
``benchwright curation run checklist`` runs).

Figures: wall time against the ideal 2000 x 0.1 s / 64 (goal: within 1.3x), and against a baseline measured in
the same run: the same 2,000 requests sent by the bare SDK at the same concurrency, with no ledger or store
(what the transport and the server cost by themselves; issue 19's goal: within 1.15x of it). Then a rerun, which
must make 0 calls (asserted). The timing assertion is only a generous safety net (noisy shared machines).

Measured on 2 shared cores, same run each: before issue 19 item 2 (load average 2.4), 31.4 s against 15.6 s bare
(2.01x the bare SDK); after it, at load average 7-8 (the bare SDK itself at 9-11x the ideal, so noisy), 46.3 s
against 33.7 s (1.38x), 58.9 s against 29.2 s (2.01x) and 41.8 s against 25.4 s (1.64x) in three runs:
the 1.15x goal is not shown met. What went: jsonschema on every valid output (a fast check, core/llm/fastcheck.py), astuple in Usage
sums, the template file read per call, two read-backs per stored pair, one of the three commits per pair (the
ledger row commits with the pair's result) and WAL checkpoints on the event loop (a thread does them during a
job). Per pair our own CPU (the curation micro-run with an instant provider) went from about 3.0-3.8 ms to 1.9-2.6.

Since (issue 19 item 2, second pass) the bare side sends the very requests the step sends (captured from the step:
same prompts, schema, parameters; before it sent ``q{i}``), and process CPU is printed for both sides, with the
event loop's thread apart. The run's store writes go through one writer thread with group commit
(db/writer.py): claims 64 at a time, ledger rows queued (provisional ids), one awaited write per pair (its result,
committed with its rows). Figures, same run each: before it (load 1.4-2.1, the bare side still sending ``q{i}``): 26.3 s vs
17.5 s (1.51x) and 27.4 s vs 16.3 s (1.68x wall; CPU 24.2 vs 14.6 s, 1.66x). After it: at load 4.5, 45.3 s vs 34.3 s (1.32x wall; process CPU 29.8 vs 17.6 s, 1.70x; the event loop's
thread 23.5 s, 1.34x); at load 6.4,
60.3 s vs 46.1 s (1.31x wall; process CPU 30.2 vs 16.2 s); at load 7.2, 71.3 s vs 48.9 s (1.46x) with the event
loop's thread at 21.7 s CPU against the bare SDK's 17.6 s (1.24x) and 5.9 s in the writer. Where the rest goes
(py-spy, event loop thread = 100): provider.complete (the SDK, the same on both sides) ~86; build_input 2.8, the
JSON parse + fast check 2.6, the request hash 1.5, the cache lookup 0.8, claims 0.8; the writer thread spends
~22 on save_outcome (save_checklist's validate + read-back 7, save_curation_result 4, check_leakage 1) and the
ledger inserts (2). On a loaded machine the writer's CPU counts against the wall time too (the process's share
of the cores), so the 1.15x goal is not shown met.

Third pass (issue 19 item 2 continued): a generated checklist is checked against the rules once (the step keeps the
model it checked, ``StepOutcome.checklist_checked``; ``save_checklist(checked=True)`` does not check again) and
canonical JSON (the request hash, ``Checklist.to_json``) is made by orjson where it gives the standard library's
bytes (core/canonical.py; hashes unchanged). Same run each, py-spy off: before it at load 7.5, 77.9 s vs 40.0 s bare
(1.95x wall; process CPU 30.9 vs 16.9 s, 1.82x; event loop's thread 23.1 s, 1.36x; writer and others 7.8 s); after
it at load 9.1, 82.9 s vs 45.6 s (1.82x wall; process CPU 29.1 vs 17.8 s, 1.63x; event loop 23.0 s, 1.29x; writer
and others 6.0 s); again at load 5.1, 52.0 s vs 26.1 s (1.99x wall; process CPU 28.5 vs 16.5 s, 1.73x; event loop
22.8 s, 1.38x; writer and others 5.8 s). What this pass saves is in the writer thread (7.8 s -> 5.8-6.0 s); the
ratios stay within the spread of earlier runs (process CPU 1.57-1.86x). At load 5-9 (8 engineers on 2 cores) the bare SDK itself is at 13-15x the ideal and the wall
ratio follows the process's share of the cores, so the 1.15x goal is still not shown met.

2026-12-03, a quiet machine (load ~1): 18.67 s vs 10.43 s bare (1.79x; process CPU 19.7 vs 10.3 s, event loop
15.1 s) and, with the output schema converted once per schema (both sides), 19.68 s vs 9.64 s (2.04x; process CPU
20.6 vs 9.5 s). Quiet, the bare side is CPU-bound itself (3.1-3.3x the ideal; a cProfile puts the SDK's request
transform at ~2.5 ms and httpcore's pool bookkeeping at ~3 ms per request), so our per-pair work on the event loop
(~0.8 ms) and the writer thread's share of the interpreter lock (~2 ms a pair of Python beside the SQL) show in the
wall time one for one. Not met.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from perf_support import ANNOTATOR, goal, report, synthetic_records

SERVER_PY = Path(__file__).resolve().parents[1] / "llm_server.py"

pytestmark = pytest.mark.perf

N = 2000
CONCURRENCY = 64
DELAY_S = 0.1
GOAL_RATIO = 1.3
SDK_GOAL_RATIO = 1.15
"""Issue 19's goal: the pipeline within this many times the bare SDK's time measured in the same run."""
SAFETY_RATIO = 4.0
"""Safety net: the pipeline within this many times the bare SDK's time measured in the same run."""
REPO = "r"


def _project(path: Path) -> list[str]:
    """A project with N synthetic pairs (distinct questions); their ids in queue order."""
    from benchwright.core.importers import ParseResult
    from benchwright.core.models import QAPair, Repository, SourceRef, qa_pair_id
    from benchwright.db import Store

    src = path.parent / "source.jsonl"
    src.write_text("{}\n")
    result = ParseResult("swe-qa", str(src))
    for line, rec in enumerate(synthetic_records(N), start=1):
        result.read += 1
        result.pairs.append(QAPair(
            id=qa_pair_id(REPO, rec["question"], rec["answer"]), repository=REPO, question=rec["question"],
            reference_answer=rec["answer"], source=SourceRef(format="swe-qa", file=str(src), line=line, unit="line"),
        ))
    assert len({p.question for p in result.pairs}) == N
    with Store.open(path, create=True) as store:
        store.add_repository(Repository(name=REPO, version_label="1"), ANNOTATOR)
        assert store.apply_import(result, annotator=ANNOTATOR, file_path=src).added == N
        return [r.id for r in store.queue_page(ANNOTATOR, limit=N + 1)]


class _Server:
    """tests/llm_server.py in its own process (so the server's threads do not share the client's interpreter
    lock and skew the figures); ``count`` and ``max_in_flight`` come from its ``GET /stats``."""

    def __init__(self, base_url: str):
        self.base_url = base_url

    def _stats(self) -> dict:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/stats", timeout=10) as r:
            return json.loads(r.read())

    @property
    def count(self) -> int:
        return self._stats()["count"]

    @property
    def max_in_flight(self) -> int:
        return self._stats()["max_in_flight"]


@contextmanager
def _server(delay_s: float):
    proc = subprocess.Popen([sys.executable, str(SERVER_PY), "--delay", str(delay_s)], stdout=subprocess.PIPE,
                            text=True)
    try:
        yield _Server(proc.stdout.readline().strip())
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _provider(server: _Server):
    from benchwright.core.llm.openai_provider import OpenAIProvider

    return OpenAIProvider("local", base_url=server.base_url, api_key_env=None, concurrency=CONCURRENCY,
                          timeout_s=30, max_retries=0)


def _step_requests(db: Path, ids: list[str], settings) -> list:
    """The requests the ``checklist`` step sends for ``ids`` (the same prompts, schema and parameters), captured by
    running the step with a client that only records them: what the bare SDK side sends."""
    from benchwright.core.curation import run_step
    from benchwright.core.llm import CallResult, CallStatus
    from benchwright.db import Store
    from benchwright.tui.services.curation_runs import build_input

    class Capture:
        def __init__(self) -> None:
            self.requests: list = []

        async def call(self, request, **kwargs):
            self.requests.append(request)
            return CallResult(status=CallStatus.ERROR, request_hash="", error="captured")

    capture = Capture()
    with Store.open(db) as store:
        items = [build_input(store, i, "checklist") for i in ids]

    async def build():
        for item in items:
            await run_step("checklist", capture, item, settings)

    asyncio.run(build())
    assert len(capture.requests) == len(ids)
    return capture.requests


async def _bare_sdk(server: _Server, requests: list) -> tuple[float, float]:
    """``(wall seconds, process CPU seconds)`` for ``requests`` through the bare provider (no ledger, no store) at
    the same concurrency."""
    from benchwright.core.llm import ChatMessage, LLMRequest

    provider = _provider(server)
    sem = asyncio.Semaphore(CONCURRENCY)

    async def one(request) -> None:
        async with sem:
            await provider.complete(request)

    # warm up the connection pool's first connection
    await one(LLMRequest(model="bench", messages=(ChatMessage("user", "warm-up"),)))
    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(r) for r in requests))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    await provider.aclose()
    return elapsed, cpu


def test_generate_2000_checklists_at_concurrency_64(tmp_path: Path) -> None:
    from benchwright.core.curation import StepSettings
    from benchwright.core.llm import LLMClient
    from benchwright.db import Store
    from benchwright.tui.services.curation_runs import run_curation, select_pairs

    db = tmp_path / "bench.db"
    t0 = time.perf_counter()
    ids = _project(db)
    setup_s = time.perf_counter() - t0
    ideal = N * DELAY_S / CONCURRENCY
    settings = StepSettings(model="bench-model", params={"temperature": 0.0})
    requests = _step_requests(db, ids, settings)

    with _server(DELAY_S) as server:
        baseline, base_cpu = asyncio.run(_bare_sdk(server, requests))
        base_requests = server.count

        with Store.open(db) as store:
            client = LLMClient(_provider(server), store)

            async def go():
                try:
                    return await run_curation(store, client, "checklist", ids, settings, by=ANNOTATOR)
                finally:
                    await client.provider.aclose()

            t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
            progress = asyncio.run(go())
            wall, cpu, main_cpu = time.perf_counter() - t0, time.process_time() - c0, time.thread_time() - m0
            sent = server.count - base_requests
            assert (progress.done, progress.failed, progress.calls) == (N, 0, N)
            max_in_flight = server.max_in_flight
            assert sent == N and max_in_flight <= CONCURRENCY
            assert len(store.pairs_with_step_done("checklist")) == N
            origins = store.db.conn.execute(
                "SELECT origin, count(*) FROM checklist_versions GROUP BY 1").fetchall()
            assert origins == [("generated", N)]

            # rerun: nothing selected; and run over every pair anyway, every call is a cache hit
            assert select_pairs(store, "checklist") == []
            before = server.count
            client2 = LLMClient(_provider(server), store)
            t1 = time.perf_counter()
            again = asyncio.run(run_curation(store, client2, "checklist", ids, settings, by=ANNOTATOR))
            rerun_s = time.perf_counter() - t1
            asyncio.run(client2.provider.aclose())
            assert server.count == before, "the rerun sent requests"
            assert (again.calls, again.cached + again.skipped, again.failed) == (0, N, 0)

    ratio = wall / ideal
    report(
        f"generate checklist: {N} pairs, concurrency {CONCURRENCY}, server delay {DELAY_S * 1e3:.0f} ms",
        [
            f"project setup (not timed): {setup_s:.2f} s",
            f"ideal {N} x {DELAY_S} s / {CONCURRENCY}:      {ideal:6.2f} s",
            f"bare SDK, same requests:          {baseline:6.2f} s  ({baseline / ideal:.2f}x ideal)",
            f"run_curation (ledger + store):    {wall:6.2f} s  ({ratio:.2f}x ideal, {wall / baseline:.2f}x bare SDK)"
            f"  {goal(ratio <= GOAL_RATIO)} (goal {GOAL_RATIO}x ideal)",
            f"against the bare SDK: {wall / baseline:.2f}x  {goal(wall / baseline <= SDK_GOAL_RATIO)} "
            f"(goal {SDK_GOAL_RATIO}x)",
            f"process CPU: bare SDK {base_cpu:.2f} s, run_curation {cpu:.2f} s ({cpu / base_cpu:.2f}x), of it the "
            f"event loop's thread {main_cpu:.2f} s ({main_cpu / base_cpu:.2f}x); load average {os.getloadavg()[0]:.1f}",
            f"throughput: {N / wall:.0f} pairs/s; max in flight at the server: {max_in_flight}",
            f"rerun over all {N} pairs: 0 calls, {again.cached} cached, {again.skipped} found done, {rerun_s:.2f} s",
        ],
    )
    assert wall / baseline < SAFETY_RATIO
