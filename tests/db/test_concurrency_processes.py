"""Two real processes on one project file: concurrent decisions, a writer killed with SIGKILL, and a
compare-and-set race on a checklist. Children are ``sys.executable -c`` scripts; a file is the start
barrier so their work overlaps; every wait is bounded."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from store_helpers import IDS

from benchwright.core.checklist import Checklist, ChecklistItem, ItemKind, binary_rubric, clarity_item

TIMEOUT_S = 60

# Shared prelude of the child scripts: argv[1] is the project, argv[2] the barrier file.
PRELUDE = """
import sys, time
from pathlib import Path
from benchwright.db import Store
db, go = sys.argv[1], Path(sys.argv[2])
store = Store.open(db, create=False)
print("ready", flush=True)
deadline = time.monotonic() + 30
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit("no go signal")
    time.sleep(0.005)
"""

DECIDE = PRELUDE + """
who, n, pairs = sys.argv[3], int(sys.argv[4]), sys.argv[5].split(",")
decisions = ["accept", "reject", "revise", "skip"]
for i in range(n):
    store.record_decision(pairs[i % len(pairs)], who, decisions[i % 4])
    time.sleep(0.002)  # let the other process in between commits
store.close()
print("done", n, flush=True)
"""

SAVE_LOOP = PRELUDE + """
from benchwright.core.checklist import Checklist
pair, body = sys.argv[3], Checklist.model_validate_json(sys.argv[4])
for i in range(100000):
    v = store.save_checklist(pair, body, author="looper", expected_version=store.checklist_version(pair).version
                             if store.checklist_version(pair) else None)
    print("saved", v.version, flush=True)
"""

SAVE_ONCE = PRELUDE + """
from benchwright.db import ChecklistConflictError
from benchwright.core.checklist import Checklist
pair, body, expected, who = sys.argv[3], Checklist.model_validate_json(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
try:
    v = store.save_checklist(pair, body, author=who, expected_version=expected)
    print("ok", v.version, flush=True)
except ChecklistConflictError as e:
    print("conflict", str(e).splitlines()[0], flush=True)
store.close()
"""


def checklist(*weights: int, tag: str = "") -> Checklist:
    return Checklist(items=[
        *(ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=f"point {n}{tag}", weight=w, rubric=binary_rubric(w))
          for n, w in enumerate(weights, start=1)),
        clarity_item(),
    ])


def spawn(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_ready(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        line = p.stdout.readline()
        assert line == "ready\n", (line, p.stderr.read() if p.poll() is not None else "")


def finish(p: subprocess.Popen) -> str:
    try:
        out, err = p.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"child did not finish in {TIMEOUT_S} s: {err}")
    assert p.returncode == 0, err
    return out


def integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture
def project(loaded, db_path):
    """The loaded project's path, with the test's own connection closed."""
    loaded.close()
    return db_path


def test_two_processes_record_decisions_concurrently(project, tmp_path):
    go = tmp_path / "go"
    n = 300
    shared = IDS[0]
    procs = [
        spawn(DECIDE, project, go, "ada", n, ",".join([shared, *IDS[1:4]])),
        spawn(DECIDE, project, go, "bob", n, ",".join([shared, *IDS[4:7]])),
    ]
    wait_ready(procs)
    go.touch()
    outs = [finish(p) for p in procs]
    assert outs == [f"done {n}\n"] * 2
    assert integrity(project) == "ok"
    conn = sqlite3.connect(project)
    per = dict(conn.execute("SELECT annotator, count(*) FROM review_decisions GROUP BY annotator"))
    assert per == {"ada": n, "bob": n}
    assert conn.execute("SELECT count(*) FROM events WHERE kind IN ('review', 'skip')").fetchone()[0] == 2 * n
    both = conn.execute("SELECT count(*) FROM review_decisions WHERE qa_pair_id = ?", [shared]).fetchone()[0]
    assert both == 2 * ((n + 3) // 4)  # every 4th decision of each process is on the shared pair
    # the current state of each (pair, annotator) is its last decision
    rows = conn.execute(
        """SELECT s.decision_id, (SELECT max(id) FROM review_decisions d
                                 WHERE d.qa_pair_id = s.qa_pair_id AND d.annotator = s.annotator)
           FROM review_state s""").fetchall()
    assert len(rows) == 8 and all(a == b for a, b in rows)
    ids = [r[0] for r in conn.execute("SELECT id FROM review_decisions ORDER BY id")]
    assert len(set(ids)) == 2 * n
    # the two loops really overlapped: their commits interleave
    span = dict((who, (lo, hi)) for who, lo, hi in conn.execute(
        "SELECT annotator, min(id), max(id) FROM review_decisions GROUP BY annotator"))
    assert span["ada"][0] < span["bob"][1] and span["bob"][0] < span["ada"][1]
    conn.close()


def test_a_writer_killed_mid_loop_leaves_the_project_intact(project, tmp_path):
    go = tmp_path / "go"
    pair = IDS[0]
    p = spawn(SAVE_LOOP, project, go, pair, checklist(5, 4).model_dump_json())
    watchdog = threading.Timer(TIMEOUT_S, p.kill)
    watchdog.start()
    try:
        wait_ready([p])
        go.touch()
        printed: list[int] = []
        while len(printed) < 40:
            line = p.stdout.readline()
            assert line.startswith("saved "), (line, p.stderr.read() if p.poll() is not None else "")
            printed.append(int(line.split()[1]))
        os.kill(p.pid, signal.SIGKILL)
        # read the rest through the same buffered file: communicate() reads the pipe's descriptor directly and
        # would miss lines readline() already buffered
        rest = p.stdout.read()
        p.wait(timeout=TIMEOUT_S)
    finally:
        watchdog.cancel()
    assert p.returncode == -signal.SIGKILL
    printed += [int(x.split()[1]) for x in rest.splitlines() if x.startswith("saved ")]
    assert printed == list(range(1, len(printed) + 1))
    assert integrity(project) == "ok"
    conn = sqlite3.connect(project)
    versions = [r[0] for r in conn.execute(
        "SELECT version FROM checklist_versions WHERE qa_pair_id = ? ORDER BY version", [pair])]
    assert set(printed) <= set(versions)  # everything reported as saved is there
    assert versions == list(range(1, len(versions) + 1))  # and nothing half-written
    assert len(versions) - len(printed) <= 1  # at most the commit it was killed after, before printing
    current = conn.execute("SELECT version FROM checklist_current WHERE qa_pair_id = ?", [pair]).fetchone()[0]
    assert current == versions[-1]
    events = conn.execute("SELECT count(*) FROM events WHERE kind = 'checklist'").fetchone()[0]
    assert events == len(versions)
    conn.close()
    # and the project still takes writes
    from benchwright.db import Store

    with Store.open(project, create=False) as store:
        v = store.save_checklist(pair, checklist(4, 5), author="after", expected_version=versions[-1])
        assert v.version == versions[-1] + 1


def test_checklist_compare_and_set_race_between_processes(project, tmp_path):
    from benchwright.db import Store

    pair = IDS[0]
    with Store.open(project, create=False) as store:
        store.save_checklist(pair, checklist(5, 4), author="generator", origin="generated")
    for round_, expected in enumerate((1, 2)):
        go = tmp_path / f"go{round_}"
        procs = [
            spawn(SAVE_ONCE, project, go, pair, checklist(3, 3, 3, tag=f" {who}").model_dump_json(), expected, who)
            for who in ("ada", "bob")
        ]
        wait_ready(procs)
        time.sleep(0.05)
        go.touch()
        outs = [finish(p).strip() for p in procs]
        ok = [o for o in outs if o.startswith("ok")]
        conflicts = [o for o in outs if o.startswith("conflict")]
        assert ok == [f"ok {expected + 1}"], outs
        assert len(conflicts) == 1 and f"now at version {expected + 1}" in conflicts[0], outs
    assert integrity(project) == "ok"
    with Store.open(project, create=False) as store:
        history = store.checklist_history(pair)
        assert [v.version for v in history] == [1, 2, 3]
        assert [v.parent_version for v in history] == [None, 1, 2]
