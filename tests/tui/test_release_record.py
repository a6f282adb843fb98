"""A release folder and its record always agree (issue 12 item 6): the release is recorded as pending before any
file is written and confirmed after the folder is moved into place, so a kill -9 at any step, a failed rename or
a held write lock leaves a state the same command resumes: it adopts a finished folder, or drops the pending
record (and the ``.partial`` leftovers) of one that never appeared and writes it afresh."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.errors import BenchwrightError
from benchwright.db import Store
from benchwright.exports import release as release_mod
from benchwright.exports import verify_release
from benchwright.tui.cli import main
from benchwright.tui.services.releases import create_release

NAME, VERSION = "demo-qa", "1.0.0"
STEPS = 7
"""write_release reports 7 steps: rows, JSONL, Parquet, changelog, card, manifest, move into place."""


def run(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args])


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "p.db"
    (tmp_path / "code").mkdir()
    assert run(db, "init").exit_code == 0
    assert run(db, "repos", "add", "demo", str(tmp_path / "code"), "--version", "1.0").exit_code == 0
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"question": f"Question {i}?", "answer": f"Answer {i}."}) + "\n"
                            for i in range(3)))
    assert run(db, "pairs", "import", "jsonl", str(data), "--repo", "demo").exit_code == 0
    checklist = Checklist(items=[ChecklistItem(key_point="Names it", weight=9, rubric=binary_rubric(9)),
                                 clarity_item()])
    with Store.open(db) as store:
        for r in store.queue_page("x", limit=10):
            store.save_checklist(r.id, checklist, author="llm", origin="generated")
            store.record_decision(r.id, "ada", "accept")
    return db, tmp_path / "releases"


def assert_agree(db: Path, out: Path, version: str = VERSION) -> None:
    """Recorded exactly once, its folder intact at the recorded path with the recorded time; nothing pending,
    no ``.partial`` leftovers."""
    folder = out / f"{NAME}-{version}"
    with Store.open(db) as store:
        rows = store.db.conn.execute(
            "SELECT created_at, path, manifest_json FROM releases WHERE name = ? AND version = ?", [NAME, version]
        ).fetchall()
        assert store.pending_release(NAME, version) is None
    assert len(rows) == 1
    created_at, path, manifest_json = rows[0]
    assert Path(path) == folder.resolve()
    assert verify_release(folder).ok
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == json.loads(manifest_json) and manifest["created_at"] == created_at
    assert not [p.name for p in out.iterdir() if p.name.endswith(".partial")]


def test_a_failed_rename_whose_cleanup_died_is_written_afresh(project, monkeypatch):
    db, out = project

    def refuse(*_a, **_k):
        raise OSError("disk gone")

    with Store.open(db) as store:
        monkeypatch.setattr(release_mod.os, "replace", refuse)
        monkeypatch.setattr(store, "drop_pending_release", lambda *a, **k: (_ for _ in ()).throw(RuntimeError()))
        with pytest.raises(BenchwrightError, match=r"cannot write release demo-qa 1\.0\.0.*disk gone"):
            create_release(store, store.release_preflight(), NAME, VERSION, out, by="lead")
        assert store.pending_release(NAME, VERSION) is not None and not store.release_exists(NAME, VERSION)
    monkeypatch.undo()
    (out / f".{NAME}-{VERSION}.0123456789ab.partial" / "data").mkdir(parents=True)  # what a kill leaves
    r = run(db, "releases", "create", NAME, "--version", VERSION, "--out", str(out))
    assert r.exit_code == 0, r.output
    assert f"wrote {out / f'{NAME}-{VERSION}'}" in r.output
    assert_agree(db, out)


def test_a_lock_held_after_the_rename_is_resumed_by_the_same_command(project):
    """The window of the bug: the folder is in place, the record cannot be written (another process holds the
    write lock). Before the fix the retry said "exists already" and the release stayed unknown to the project."""
    db, out = project
    holder = sqlite3.connect(db, timeout=0)
    with Store.open(db) as store:
        store.db.conn.execute("PRAGMA busy_timeout = 100")

        def progress(done: int, total: int) -> None:
            if done == total:  # moved into place: now someone else takes the write lock
                holder.execute("BEGIN IMMEDIATE")

        with pytest.raises(BenchwrightError, match=r"could not record it.*run the same command again"):
            create_release(store, store.release_preflight(), NAME, VERSION, out, by="lead", progress=progress)
        holder.rollback()
        assert (out / f"{NAME}-{VERSION}" / "manifest.json").is_file() and not store.release_exists(NAME, VERSION)
        # the same process (the app) may retry at once: its own ended attempt is not "another process"
        notes: list[str] = []
        path = create_release(store, store.release_preflight(), NAME, VERSION, out, by="lead", notes=notes)
        assert path == out / f"{NAME}-{VERSION}" and "interrupted attempt" in notes[0]
    holder.close()
    assert_agree(db, out)
    r = run(db, "releases", "create", NAME, "--version", VERSION, "--out", str(out))
    assert r.exit_code == 1 and "exists already" in r.output


def test_a_pending_release_of_a_running_process_is_not_taken_over(project):
    db, out = project
    with Store.open(db) as store:
        parent = f"{socket.gethostname()}:{os.getppid()}:feedbeef"  # a process that runs: pytest's parent
        store.begin_release(NAME, VERSION, created_at="2026-01-01T00:00:00+00:00", created_by="bob",
                            path=str((out / f"{NAME}-{VERSION}").resolve()), owner=parent)
    r = run(db, "releases", "create", NAME, "--version", VERSION, "--out", str(out))
    assert r.exit_code == 1 and "being written by another process" in r.output and not out.exists()


def test_a_damaged_folder_of_a_dead_attempt_is_not_adopted(project):
    db, out = project
    with Store.open(db) as store:
        store.begin_release(NAME, VERSION, created_at="2026-01-01T00:00:00+00:00", created_by="bob",
                            path=str((out / f"{NAME}-{VERSION}").resolve()), owner="elsewhere:1:dead")
        store.end_release_attempt("elsewhere:1:dead")
    store_row = sqlite3.connect(db)
    store_row.execute("UPDATE pending_releases SET started_at = '2000-01-01T00:00:00+00:00'")  # a day old: stale
    store_row.commit()
    store_row.close()
    (out / f"{NAME}-{VERSION}").mkdir(parents=True)
    (out / f"{NAME}-{VERSION}" / "notes.txt").write_text("mine")
    r = run(db, "releases", "create", NAME, "--version", VERSION, "--out", str(out))
    assert r.exit_code == 1 and "does not verify" in r.output and "move it away" in r.output
    assert (out / f"{NAME}-{VERSION}" / "notes.txt").read_text() == "mine"  # never deleted


def test_a_write_lock_held_from_the_start_writes_nothing(project):
    """Before the fix the folder was written first and the record refused after it; now the pending record
    comes first, so a held lock leaves nothing (no folder, no record) and the retry writes it."""
    db, out = project
    holder = sqlite3.connect(db, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    with Store.open(db) as store:
        store.db.conn.execute("PRAGMA busy_timeout = 100")
        with pytest.raises(BenchwrightError, match="held the project"):
            create_release(store, store.release_preflight(), NAME, VERSION, out, by="lead")
    holder.rollback()
    holder.close()
    assert not (out / f"{NAME}-{VERSION}").exists()
    assert run(db, "releases", "create", NAME, "--version", VERSION, "--out", str(out)).exit_code == 0
    assert_agree(db, out)


_KILLER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from benchwright.db import Store
    from benchwright.tui.services.releases import create_release

    db, out, step = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])

    def progress(done, total):
        if done == step:
            os.kill(os.getpid(), signal.SIGKILL)

    with Store.open(db) as store:
        create_release(store, store.release_preflight(), "demo-qa", "1.0.0", out, by="lead", progress=progress)
""")


@pytest.mark.slow
@pytest.mark.parametrize("step", range(1, STEPS + 1))
def test_kill_9_at_every_step_then_the_same_command_succeeds(project, step):
    """A real SIGKILL after each step of the write (the last one: the folder is in place, not yet confirmed);
    ``release create`` run again succeeds and the record and the folder agree."""
    db, out = project
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(db), str(out), str(step)], capture_output=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    with Store.open(db) as store:
        assert store.pending_release(NAME, VERSION) is not None and not store.release_exists(NAME, VERSION)
    assert (out / f"{NAME}-{VERSION}").is_dir() == (step == STEPS)
    r = run(db, "releases", "create", NAME, "--version", VERSION, "--out", str(out))
    assert r.exit_code == 0, r.output
    assert ("interrupted attempt" in r.output) == (step == STEPS)
    assert_agree(db, out)


@pytest.mark.slow
def test_the_real_command_killed_at_random_moments_then_run_again(project):
    """``benchwright release create`` killed with SIGKILL at moments spread over its run time (measured first),
    then run again: every time the record and the folder agree."""
    import random
    import time

    db, out = project
    exe = Path(sys.executable).parent / "benchwright"
    env = {**os.environ, "BENCHWRIGHT_CONFIG": str(db.parent / "none.toml")}

    def command(version: str) -> list[str]:
        return [str(exe), "--db", str(db), "releases", "create", NAME, "--version", version, "--out", str(out)]

    t = time.monotonic()
    assert subprocess.run(command("0.1.0"), env=env, capture_output=True, timeout=120).returncode == 0
    duration = time.monotonic() - t
    rng = random.Random(12)
    for k in range(4):
        version = f"1.{k}.0"
        proc = subprocess.Popen(command(version), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * rng.uniform(0.3, 1.05))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        r = run(db, "releases", "create", NAME, "--version", version, "--out", str(out))
        # killed after its record was confirmed (while exiting): the retry is refused, and all agrees
        assert r.exit_code == 0 or "exists already" in r.output, r.output
        assert_agree(db, out, version)
