"""``benchwright pairs import github-discussions`` and ``repos add|set|check|list`` through click: the summary
lists every filtered thread with its reason, re-imports add nothing, --categories belongs to that format only,
eligibility (RepoProbe §3.2) exits 1 when a repository fails, and hostile text in an export prints literally."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.tui.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "github_discussions"
PAGE1, PAGE2, LINES = FIXTURE / "page1.json", FIXTURE / "page2.json", FIXTURE / "discussions.jsonl"
URL = "https://github.com/acme/widget/discussions/"


class Project:
    """A project in tmp_path with the repository ``widget`` registered (version 1.0)."""

    def __init__(self, tmp_path: Path):
        self.dir = tmp_path
        self.db = tmp_path / "project.db"
        (tmp_path / "widget").mkdir()
        assert self.run("init").exit_code == 0

    def run(self, *args: str):
        return CliRunner().invoke(main, ["--db", str(self.db), *args])

    def add(self, *extra: str):
        r = self.run("repos", "add", "widget", str(self.dir / "widget"), "--version", "1.0", *extra)
        assert r.exit_code == 0, r.output
        return r

    def imp(self, path: Path, *extra: str):
        return self.run("pairs", "import", "github-discussions", str(path), "--repo", "widget", "--as", "t", *extra)

    def rows(self, sql: str) -> list[tuple]:
        with sqlite3.connect(self.db) as conn:
            return conn.execute(sql).fetchall()


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.delenv("BENCHWRIGHT_DB", raising=False)
    monkeypatch.delenv("BENCHWRIGHT_ANNOTATOR", raising=False)
    return Project(tmp_path)


def test_import_lists_every_filtered_thread_with_its_reason(project):
    project.add()
    r = project.imp(PAGE1)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        f"{PAGE1}: read 7 records, added 2 Q&A pairs",
        "  left out 5 records by rule:",
        f"    page 1, node 2 ({URL}102): unanswered",
        f"    page 1, node 3 ({URL}103): no accepted answer",
        f"    page 1, node 4 ({URL}104): no accepted answer",
        f"    page 1, node 5 ({URL}105): category Ideas not in Q&A, Help",
        f"    page 1, node 6 ({URL}106): question relies on an image: markdown image: ![broken layout](",
        "  note: the last page says there are more (pageInfo.hasNextPage is true, endCursor "
        "'Y3Vyc29yOnYyOpK5MjAyNC0wNi0xNw=='): the export stops before the last page; fetch the rest with after: "
        "that cursor (gh api graphql --paginate fetches every page)",
        "  repository widget: 1,523 stars, created 2024-05-02, 6 answered discussions (answered: counted from the "
        "imported threads); check it with: benchwright repos check widget",
    ]
    again = project.imp(PAGE1)
    assert again.exit_code == 0
    assert "added 0 Q&A pairs" in again.output and "2 already in the project" in again.output
    assert project.rows("SELECT count(*) FROM import_batches") == [(1,)]


def test_the_second_page_and_the_jsonl_variant_add_nothing_twice(project):
    project.add()
    assert project.imp(PAGE1).exit_code == 0
    r = project.imp(PAGE2)
    assert "added 1 Q&A pair" in r.output and "1 already in the project" in r.output
    assert f"page 1, node 2 ({URL}108): answer relies on an image: <img> tag: <img" in r.output
    assert f"page 1, node 3 ({URL}109): question relies on an image: attachment URL: " in r.output
    lines = project.imp(LINES)
    assert lines.exit_code == 0
    assert "added 0 Q&A pairs" in lines.output and "3 already in the project" in lines.output
    assert "1 repeated earlier records of the same file" in lines.output
    assert project.rows("SELECT count(*) FROM qa_pairs") == [(3,)]
    # every thread the JSONL filtered was recorded by the page imports: no new batch
    assert project.rows("SELECT count(*) FROM import_batches") == [(2,)]


def test_more_than_twenty_filtered_threads_are_counted(project, tmp_path):
    project.add()
    nodes = [{"number": n, "url": f"{URL}{n}", "title": f"Question {n}", "isAnswered": False} for n in range(1, 26)]
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in nodes), encoding="utf-8")
    r = project.imp(path)
    assert r.exit_code == 0, r.output
    assert "  left out 25 records by rule:" in r.output
    assert f"line 20 ({URL}20): unanswered" in r.output and f"({URL}21)" not in r.output
    assert "    ... and 5 more (every one is in the import batch's filtered_json)" in r.output
    assert project.rows("SELECT filtered_count FROM import_batches") == [(25,)]


def test_categories_option(project):
    project.add()
    r = project.imp(LINES, "--categories", "IDEAS, q&a")
    assert r.exit_code == 0, r.output
    assert "added 3 Q&A pairs" in r.output  # 101, 105, 110 (107 is in Help)
    assert f"({URL}107): category help not in IDEAS, q&a" in r.output
    assert json.loads(project.rows("SELECT options_json FROM import_batches")[0][0])["categories"] == "IDEAS, q&a"


def test_categories_is_refused_for_other_formats(project):
    project.add()
    r = project.run("pairs", "import", "swe-qa", str(LINES), "--repo", "widget", "--categories", "Q&A")
    assert r.exit_code == 1
    assert "--categories is for the github-discussions format, not swe-qa" in r.output
    old = project.run("import", "answers", str(LINES), "--categories", "Q&A")
    assert old.exit_code == 2 and "--categories is for the github-discussions format" in old.output


def test_the_old_import_spelling_takes_the_format(project):
    project.add()
    r = project.run("import", "github-discussions", str(LINES), "--repo", "widget", "--categories", "*")
    assert r.exit_code == 0, r.output
    assert "added 4 Q&A pairs" in r.output


def test_without_repo_and_with_a_broken_page_nothing_is_imported(project, tmp_path):
    project.add()
    r = project.run("pairs", "import", "github-discussions", str(PAGE1))
    assert r.exit_code == 1 and "github-discussions needs --repo NAME" in r.output
    doc = json.loads(PAGE2.read_text(encoding="utf-8"))
    doc["data"]["repository"]["discussions"]["nodes"][0]["category"] = ["Q&A"]
    path = tmp_path / "broken.json"
    path.write_text(PAGE1.read_text(encoding="utf-8") + json.dumps(doc), encoding="utf-8")
    r = project.imp(path)
    assert r.exit_code == 1
    assert ("page 2, field 'data.repository.discussions.nodes[1].category': must be an object, found array"
            in r.output)
    assert "nothing was imported" in r.output and "Traceback" not in r.output
    assert project.rows("SELECT count(*) FROM qa_pairs") == [(0,)]
    bad = tmp_path / "latin1.json"
    bad.write_bytes(PAGE1.read_bytes().replace(b"Which one wins?", b"Welche gewinnt \xe4?"))
    r = project.imp(bad)
    assert r.exit_code == 1 and "not valid UTF-8" in r.output


def test_repos_add_set_list_and_check(project):
    project.add("--stars", "1500", "--created", "2024-02-01T08:00:00Z")
    r = project.run("repos", "check")
    assert r.exit_code == 1
    assert r.output.splitlines() == [
        "widget: unknown: answered not known (set it: benchwright repos set widget --answered N); met: 1,500 stars "
        "(at least 1,000); created 2024-02-01 (on or after 2024-01-01)",
        "0 of 1 eligible (at least 1,000 stars, created on or after 2024-01-01, at least 10 answered discussions)",
    ]
    r = project.run("repos", "set", "widget", "--answered", "12")
    assert r.exit_code == 0 and r.output == "widget: 1,500 stars, created 2024-02-01, 12 answered discussions\n"
    r = project.run("repos", "check", "widget")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("widget: eligible: 1,500 stars (at least 1,000); created 2024-02-01")
    strict = project.run("repos", "check", "--min-stars", "2000", "--created-after", "2024-03-01", "--min-answered", "5")
    assert strict.exit_code == 1
    assert strict.output.splitlines()[0] == (
        "widget: not eligible: 1,500 stars (fewer than 2,000); created 2024-02-01 (before 2024-03-01); "
        "met: 12 answered discussions (at least 5)")
    listed = project.run("repos", "list")
    assert listed.output.rstrip("\n").endswith("\t1,500 stars, created 2024-02-01, 12 answered discussions")
    project.add("--stars", "900")  # registering again with a fact replaces it
    assert project.rows("SELECT stars, created_on, answered_discussions FROM repositories") == [(900, "2024-02-01", 12)]


def test_repos_facts_are_checked_on_entry(project):
    project.add()
    r = project.run("repos", "set", "widget", "--created", "2024-02-30")
    assert r.exit_code == 2 and "is not a real day" in r.output
    r = project.run("repos", "set", "widget", "--stars", "-1")
    assert r.exit_code == 2
    r = project.run("repos", "set", "widget")
    assert r.exit_code == 2 and "name at least one of --stars" in r.output
    r = project.run("repos", "check", "nope")
    assert r.exit_code == 1 and "repository 'nope' is not registered" in r.output
    r = project.run("repos", "set", "nope", "--stars", "3")
    assert r.exit_code == 1 and "repository 'nope' is not registered" in r.output


def test_a_count_sqlite_cannot_hold_is_refused_not_a_traceback(project, tmp_path):
    project.add()
    huge = str(10**30)
    for option in ("--stars", "--answered"):
        r = project.run("repos", "set", "widget", option, huge)
        assert r.exit_code == 2 and "too large" in r.output, r.output  # was an OverflowError (exit 1)
    doc = json.loads(PAGE1.read_text(encoding="utf-8"))
    doc["data"]["repository"]["stargazerCount"] = 10**30
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = project.imp(path)
    assert r.exit_code == 1 and "field 'data.repository.stargazerCount': must be a whole number >= 0" in r.output
    assert project.rows("SELECT count(*) FROM qa_pairs") == [(0,)]


def test_facts_from_the_import_make_check_pass_or_fail(project, tmp_path):
    project.add()
    project.imp(PAGE1)
    project.imp(PAGE2)
    r = project.run("repos", "check", "widget")
    assert r.exit_code == 1
    assert r.output.startswith("widget: not eligible: 9 answered discussions (fewer than 10)")
    assert project.run("repos", "check", "widget", "--min-answered", "9").exit_code == 0


def test_hostile_text_in_an_export_is_printed_literally(project, tmp_path):
    project.add()
    esc = "\x1b[31m"
    nodes = [
        {"number": 1, "url": f"{URL}1{esc}[@click=quit]", "title": "[bold]x[/] title", "isAnswered": False},
        {"number": 2, "url": f"{URL}2", "title": "an image", "body": f"![{esc}[@click=quit alt](http://h/i.png)",
         "isAnswered": True, "answer": {"body": "yes"}, "category": {"name": "Q&A"}},
        {"number": 3, "url": f"{URL}3", "title": "t", "isAnswered": True, "answer": {"body": "a"},
         "category": {"name": f"[red]Ideas[/]{esc}\u009b"}},
        {"number": 4, "url": f"{URL}4", "title": "huge", "body": "x" * 1_000_000 + " <img src=a>",
         "isAnswered": True, "answer": {"body": "b" * 1_000_000}, "category": {"name": "Q&A"}},
        {"number": 5, "url": f"{URL}5", "title": "[link=file:///etc/passwd]kept[/link]", "body": "b" * 1_000_000,
         "isAnswered": True, "answer": {"body": "c" * 1_000_000}, "category": {"name": "Help"}},
        {"number": 6, "url": f"{URL}6" + "u" * 1_000_000, "title": "t", "isAnswered": True, "answer": {"body": "a"},
         "category": {"name": "c" * 1_000_000}},
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in nodes), encoding="utf-8")
    r = project.imp(path)
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.output and "\u009b" not in r.output
    assert f"line 1 ({URL}1␛[31m[@click=quit]): unanswered" in r.output
    assert f"line 2 ({URL}2): question relies on an image: markdown image: ![␛[31m[@click=quit alt](" in r.output
    assert "category [red]Ideas[/]␛[31m\\x9b not in Q&A, Help" in r.output
    assert f"line 4 ({URL}4): question relies on an image: <img> tag: <img" in r.output
    assert "added 1 Q&A pair" in r.output
    assert f"line 6 ({URL}6{'u' * (300 - len(URL) - 1)}…): category {'c' * 80}… not in Q&A, Help" in r.output
    assert len(r.output) < 4000  # the megabyte bodies, url and category are not printed
    [(question,)] = project.rows("SELECT question FROM qa_pairs")
    assert question.startswith("[link=file:///etc/passwd]kept[/link]\n\nbbb") and len(question) > 1_000_000
