"""``issues import|list``, the ``import issues`` spelling, and ``embeddings compute|status`` through click: the
summary lists what was left out, a re-import adds nothing, bad input exits 1 writing nothing, an unregistered
--repo names the fix, hostile text prints literally, and a second compute embeds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.tui.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "github_issues"


class Project:
    def __init__(self, tmp_path: Path):
        self.dir = tmp_path
        self.db = tmp_path / "p.db"
        assert self.run("init").exit_code == 0
        (tmp_path / "flask").mkdir()
        assert self.run("repos", "add", "flask", str(tmp_path / "flask"), "--version", "3.1.1").exit_code == 0

    def run(self, *args: str):
        return CliRunner().invoke(main, ["--db", str(self.db), *args])


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    return Project(tmp_path)


def test_import_lists_left_out_and_reimport_adds_nothing(project):
    r = project.run("issues", "import", str(DATA / "issues.jsonl"), "--repo", "flask", "--as", "ada")
    assert r.exit_code == 0, r.output
    assert "read 7 records, added 5 issue texts to flask" in r.output
    assert "left out 2 records (texts must be 10 to 16384 bytes" in r.output
    assert "line 2: too short: 9 bytes < 10 (#2)" in r.output and "line 5: too long: 16385 bytes > 16384 (#5)" in r.output
    again = project.run("import", "issues", str(DATA / "issues.jsonl"), "--repo", "flask")  # the other spelling
    assert again.exit_code == 0 and "added 0 issue texts" in again.output and "5 already in the project" in again.output
    rest = project.run("issues", "import", str(DATA / "rest.json"), "--repo", "flask")
    assert "page 1, node 2 https://github.com/pallets/flask/pull/11: pull request (#11)" in rest.output
    listed = project.run("issues", "list", "--repo", "flask", "--limit", "2")
    assert listed.exit_code == 0
    lines = listed.output.splitlines()
    assert lines[0].split() == ["#1", "84", "B", "[bug,blueprints]", "Blueprint", "url_prefix", "ignored"]
    assert lines[-2] == "... 5 more (--limit N)" and lines[-1] == "7 issue texts"


def test_bad_input_and_unregistered_repo_exit_1_writing_nothing(project):
    r = project.run("issues", "import", str(DATA / "bad_line.jsonl"), "--repo", "flask")
    assert r.exit_code == 1 and "bad_line.jsonl, line 2: invalid JSON" in r.output and "Traceback" not in r.output
    r = project.run("issues", "import", str(DATA / "issues.jsonl"), "--repo", "nope")
    assert r.exit_code == 1 and "repository 'nope' is not registered" in r.output and "repos add" in r.output
    bad = project.dir / "latin1.jsonl"
    bad.write_bytes(b'{"number": 1, "title": "caf\xe9 au lait"}\n')
    r = project.run("issues", "import", str(bad), "--repo", "flask")
    assert r.exit_code == 1 and "not valid UTF-8" in r.output
    assert "no issue texts imported" in project.run("issues", "list").output
    r = project.run("import", "issues", str(DATA / "issues.jsonl"), "--map", "question=title", "--repo", "flask")
    assert r.exit_code == 2 and "takes FILE, --repo and --as only" in r.output


def test_hostile_text_prints_literally(project):
    f = project.dir / "hostile.jsonl"
    rows = [{"number": 1, "title": "[bold]x[/] [@click=quit] \x1b[31mred\x1b[0m", "labels": ["[red]l[/]"]},
            {"number": 2, "title": "big", "body": "y" * 1_000_000, "html_url": "https://e.x/" + "u" * 1000}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = project.run("issues", "import", str(f), "--repo", "flask")
    assert r.exit_code == 0 and "too long: 1000005 bytes" in r.output and "u" * 400 not in r.output
    out = project.run("issues", "list").output
    assert "[bold]x[/] [@click=quit] ␛[31mred␛[0m" in out and "[[red]l[/]]" in out and "\x1b" not in out


def test_a_newline_in_a_label_or_title_keeps_one_issue_a_line(project):
    f = project.dir / "newlines.jsonl"
    f.write_text(json.dumps({"number": 1, "title": "two\nlines here", "labels": ["x\ny", "z"]}) + "\n")
    assert project.run("issues", "import", str(f), "--repo", "flask").exit_code == 0
    lines = project.run("issues", "list").output.splitlines()
    assert lines[0].split() == ["flask", "#1", "14", "B", "[x", "y,z]", "two", "lines", "here"] and len(lines) == 2


def test_embeddings_compute_then_status_with_the_hashing_embedder(project):
    project.run("issues", "import", str(DATA / "issues.jsonl"), "--repo", "flask")
    before = project.run("embeddings", "status", "--model", "hashing")
    assert "no vectors cached yet" in before.output and "issues: 5 distinct texts, 5 not embedded yet" in before.output
    r = project.run("embeddings", "compute", "--source", "issues", "--model", "hashing", "--dimensions", "64")
    assert r.exit_code == 0, r.output
    assert "5 texts of issues with hashing (builtin) at 64 dimensions: 5 computed, 0 from the cache, 0 calls" in r.output
    again = project.run("embeddings", "compute", "--source", "issues", "--model", "hashing", "--dimensions", "64")
    assert "0 computed, 5 from the cache" in again.output
    after = project.run("embeddings", "status", "--model", "hashing", "--dimensions", "64")
    assert "hashing at 64 dimensions: 5" in after.output and "issues: 5 distinct texts, 0 not embedded yet" in after.output
    assert "pairs: 0 distinct texts" in after.output
    r = project.run("embeddings", "compute", "--source", "issues", "--where", "status=undecided")
    assert r.exit_code == 2 and "--where selects pairs" in r.output
    r = project.run("embeddings", "compute", "--model", "anthropic:claude")
    assert r.exit_code == 1 and "no embeddings endpoint" in r.output
