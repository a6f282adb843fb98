"""CLI commands besides import: init, repo add/list, status, review without a project, demo."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess

import pytest
from click.testing import CliRunner

from benchwright.tui.cli import main
from benchwright.tui.services.demo import prepare_demo


def run(*args, **kw):
    return CliRunner().invoke(main, list(args), catch_exceptions=False, **kw)


def test_repo_add_plain_directory_needs_a_version(tmp_path):
    db = str(tmp_path / "p.db")
    (tmp_path / "code").mkdir()
    r = run("--db", db, "repos", "add", "code", str(tmp_path / "code"), "--version", "2.0")
    assert r.exit_code == 1 and "benchwright init" in r.output and not (tmp_path / "p.db").exists()
    assert run("--db", db, "init").exit_code == 0
    r = run("--db", db, "repos", "add", "code", str(tmp_path / "code"))
    assert r.exit_code == 1 and r.output.rstrip().endswith("give --version LABEL (e.g. 3.1.1) or --commit SHA")
    r = run("--db", db, "repos", "add", "code", str(tmp_path / "code"), "--version", "2.0")
    assert r.exit_code == 0 and "code@2.0" in r.output
    assert run("--db", db, "repos", "add", "code", str(tmp_path / "code"), "--version", "2.0").exit_code == 0
    r = run("--db", db, "repos", "add", "code", str(tmp_path / "code"), "--version", "3.0")
    assert r.exit_code == 1 and "already registered as code@2.0" in r.output
    r = run("--db", db, "repos", "add", "gone", str(tmp_path / "nope"), "--version", "1")
    assert r.exit_code == 1 and "no such directory" in r.output
    assert "code@2.0" in run("--db", db, "repos", "list").output


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_repo_add_git_checkout_reads_and_checks_the_commit(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "a.py").write_text("x = 1\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "c"]):
        subprocess.run(["git", "-C", str(code), *cmd], check=True, env=env)
    head = subprocess.run(["git", "-C", str(code), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    db = str(tmp_path / "p.db")
    assert run("--db", db, "init").exit_code == 0
    r = run("--db", db, "repos", "add", "code", str(code), "--commit", "0000000")
    assert r.exit_code == 1 and head[:12] in r.output and "0000000" in r.output
    r = run("--db", db, "repos", "add", "code", str(code), "--commit", head[:7])
    assert r.exit_code == 0 and "commit read from git" in r.output
    row = sqlite3.connect(db).execute("SELECT commit_sha, commit_verified FROM repositories").fetchone()
    assert row == (head, 1)


def test_review_without_a_project_is_a_clear_error(tmp_path):
    r = run("--db", str(tmp_path / "none.db"), "review")
    assert r.exit_code == 1 and "benchwright init" in r.output
    assert not (tmp_path / "none.db").exists()


def test_status_and_init(tmp_path):
    db = str(tmp_path / "p.db")
    assert "0 Q&A pairs" in run("--db", db, "init").output
    assert "0 Q&A pairs, 0 decided" in run("--db", db, "status", "--as", "ann").output


def test_db_from_environment(tmp_path):
    db = tmp_path / "env.db"
    r = run("init", env={"BENCHWRIGHT_DB": str(db)})
    assert r.exit_code == 0 and db.exists()


def test_not_a_project_file(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_text("this is not sqlite" * 100)
    r = run("--db", str(bad), "status")
    assert r.exit_code == 1 and "bad.db" in r.output and "Traceback" not in r.output
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r = run("--db", str(empty), "status")
    assert r.exit_code == 1 and "not a benchwright project" in r.output
    assert empty.read_bytes() == b""  # never overwritten


def test_commands_other_than_init_never_create_a_project(tmp_path):
    db = tmp_path / "typo.db"
    for args in (["status"], ["repos", "list"], ["pairs", "import", "swe-qa", str(tmp_path / "x.jsonl")]):
        r = run("--db", str(db), *args)
        assert r.exit_code == 1, args
        assert not db.exists(), args


def test_demo_is_created_once_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_DATA_DIR", str(tmp_path))
    r1 = run("demo", "--no-open")
    r2 = run("demo", "--no-open")
    assert r1.exit_code == 0 and r1.output == r2.output
    db = r1.output.strip()
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM qa_pairs").fetchone()[0] >= 10
    assert con.execute("SELECT count(*) FROM import_batches").fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM repositories WHERE local_path IS NOT NULL").fetchone()[0] == 1
    assert prepare_demo(tmp_path / "demo") == type(prepare_demo(tmp_path / "demo"))(db)
    # Sample answers and judgments for the judge inspector, added once however often the demo opens.
    assert con.execute("SELECT count(*) FROM answers").fetchone()[0] == 2
    assert con.execute("SELECT count(*) FROM judgments WHERE status = 'scored'").fetchone()[0] == 6
    assert con.execute("SELECT count(*) FROM failure_modes").fetchone()[0] == 1


def test_db_option_is_accepted_after_the_command(tmp_path):
    db = tmp_path / "later.db"
    r = run("init", "--db", str(db))
    assert r.exit_code == 0 and db.exists(), r.output
    r = run("status", f"--db={db}")
    assert r.exit_code == 0 and str(db) in r.output
