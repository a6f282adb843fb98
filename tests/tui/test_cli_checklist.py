"""``benchwright checklist`` through click: schema, import (ours, RubberDuckBench, CheckEval), export round
trip, show, history, diff, restore, and bad inputs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.checklist import Checklist, checklist_json_schema, clarity_item
from benchwright.tui.cli import main

QUESTIONS = [
    ("How are routes registered?", "With the route decorator, which calls add_url_rule."),
    ("Where is the CLI defined?\n", "In src/flask/cli.py."),  # a trailing newline, as JSONL exports often have
    ("Why is the app context needed?", "So current_app works outside a request."),
]

RUBBERDUCK = [
    {"desc": "Does the answer state or imply that both expressions produce the same result?", "points": 2,
     "subitems": [
         {"desc": "1 point should be deducted if the answer only says they might be equal", "points": 1, "lie": False},
         {"desc": "2 points should be deducted if the answer claims they differ", "points": 2, "lie": True}]},
    {"desc": "Does the answer explain that list.sort() sorts in place and returns None?", "points": 3,
     "subitems": [{"desc": "1 point should be deducted if it omits the None return", "points": 1, "lie": False}]},
    {"desc": "Does the answer mention that sorted() accepts any iterable?", "points": 3, "subitems": []},
]

CHECKEVAL = (
    "definition: \n"
    "  summeval: the collective quality of all sentences.\n"
    "sub_aspect:\n"
    "  Topic Maintenance:\n"
    "    Does the answer stay on the question?\n"
    "    Does each paragraph relate to the question?\n"
    "  Logical Flow:\n"
    "    Does the answer present the steps in order?\n"
)


def ours(pair: str | None, weights=(5, 4), tag: str = "", **extra) -> dict:
    items = [
        {"kind": "knowledge", "key_point": f"Point {n}{tag}", "weight": w,
         "rubric": [{"score": w, "criterion": f"States point {n}{tag}"}, {"score": 0, "criterion": "Does not"}]}
        for n, w in enumerate(weights, start=1)
    ]
    return {**({"qa_pair_id": pair} if pair else {}), "items": [*items, clarity_item().model_dump(mode="json")], **extra}


class Project:
    """A project made through the CLI: repository ``flask`` and the three pairs of :data:`QUESTIONS`."""

    def __init__(self, tmp_path: Path):
        self.dir = tmp_path
        self.db = tmp_path / "project.db"
        (tmp_path / "flask-src").mkdir()
        assert self.run("init").exit_code == 0
        r = self.run("repos", "add", "flask", str(tmp_path / "flask-src"), "--version", "1.0")
        assert r.exit_code == 0, r.output
        pairs = self.file("pairs.jsonl", "".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in QUESTIONS))
        r = self.run("pairs", "import", "jsonl", str(pairs), "--repo", "flask", "--as", "setup")
        assert r.exit_code == 0 and "added 3 Q&A pairs" in r.output, r.output
        self.ids = [row[0] for row in self.rows("SELECT id FROM qa_pairs ORDER BY ordinal")]

    def run(self, *args: str):
        return CliRunner().invoke(main, ["--db", str(self.db), *args])

    def file(self, name: str, content: str) -> Path:
        path = self.dir / name
        path.write_text(content, encoding="utf-8", newline="")
        return path

    def json_file(self, name: str, doc) -> Path:
        return self.file(name, json.dumps(doc, indent=2))

    def imp(self, path: Path, *args: str):
        return self.run("checklists", "import", str(path), "--as", "tester", *args)

    def rows(self, sql: str, *params) -> list[tuple]:
        with sqlite3.connect(self.db) as conn:
            return conn.execute(sql, params).fetchall()

    def versions(self) -> int:
        return self.rows("SELECT count(*) FROM checklist_versions")[0][0]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.delenv("BENCHWRIGHT_DB", raising=False)
    monkeypatch.delenv("BENCHWRIGHT_ANNOTATOR", raising=False)
    return Project(tmp_path)


# --------------------------------------------------------------------------------------------- schema
def test_schema_prints_the_json_schema():
    r = CliRunner().invoke(main, ["checklists", "schema"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == checklist_json_schema()


# --------------------------------------------------------------------------------------------- import
def test_import_our_json(project):
    a, b, _ = project.ids
    path = project.json_file("ours.json", {"checklists": [ours(a), ours(b, (5, 3))]})
    r = project.imp(path)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        f"{a}: version 1 (benchwright, valid)",
        f"{b}: version 1 (benchwright, draft)",
        "    knowledge weights sum to 8; they must sum to 9",
        "imported 2 checklists (1 draft to fix in the editor)",
    ]
    assert project.rows("SELECT qa_pair_id, version, origin, is_draft, is_valid, author, source_format "
                        "FROM checklist_versions ORDER BY id") == [
        (a, 1, "imported", 0, 1, "tester", "benchwright"), (b, 1, "imported", 1, 0, "tester", "benchwright")]
    stored = Checklist.model_validate_json(project.rows("SELECT items_json FROM checklist_versions WHERE id = 1")[0][0])
    assert stored == Checklist.model_validate({"items": ours(a)["items"]})


def test_import_rubberduck_rubric_for_a_pair(project):
    pid = project.ids[2]
    r = project.imp(project.json_file("rubric.json", RUBBERDUCK), "--pair", pid)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        f"{pid}: version 1 (rubberduck, draft)",
        "    knowledge weights sum to 8; they must sum to 9",
        "    converted: item 1 (weight 2): 3 allowed scores (2, 1, 0)",
        "    converted: item 2 (weight 3): 3 allowed scores (3, 2, 0)",
        "    converted: item 3 (weight 3): 2 allowed scores (3, 0)",
        "imported 1 checklist (1 draft to fix in the editor)",
    ]
    show = project.run("checklists", "show", pid)
    assert show.exit_code == 0, show.output
    lines = show.stdout.splitlines()
    assert lines[0].startswith("version 1 · imported · draft · tester · ")
    assert f"1. [knowledge, weight 2] {RUBBERDUCK[0]['desc']}" in lines
    assert "     1: 1 point should be deducted if the answer only says they might be equal" in lines
    assert "     0: 2 points should be deducted if the answer claims they differ (a false claim)" in lines
    assert "4. [clarity, weight 1] Clarity & Organization" in lines
    assert lines[-2:] == ["violations:", "  knowledge weights sum to 8; they must sum to 9"]


def test_import_rubberduck_without_a_pair_is_refused(project):
    r = project.imp(project.json_file("rubric.json", RUBBERDUCK))
    assert r.exit_code == 1 and "names no pair" in r.output and "--pair" in r.output
    assert project.versions() == 0


def test_import_checkeval_yaml_for_a_pair(project):
    pid = project.ids[0]
    r = project.imp(project.file("coherence.yaml", CHECKEVAL), "--pair", pid, "--format", "checkeval")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        f"{pid}: version 1 (checkeval, draft)",
        "    knowledge weights sum to 3; they must sum to 9",
        "imported 1 checklist (1 draft to fix in the editor)",
    ]
    show = project.run("checklists", "show", pid).stdout
    for question in ("Does the answer stay on the question?", "Does each paragraph relate to the question?",
                     "Does the answer present the steps in order?"):
        assert f"[knowledge, weight 1] {question}" in show


def test_import_matches_a_pair_by_its_question_text(project):
    # the stored question ends with a newline; the file's does not
    doc = ours(None, question="Where is the CLI defined?")
    r = project.imp(project.json_file("by-question.json", doc))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"{project.ids[1]}: version 1 (benchwright, valid)")
    r = project.imp(project.json_file("nobody.json", ours(None, question="Who wrote Flask?")))
    assert r.exit_code == 1 and "no pair has exactly this question" in r.output
    assert project.versions() == 1


def test_a_file_naming_an_unknown_pair_writes_nothing(project):
    a = project.ids[0]
    lines = json.dumps(ours(a)) + "\n" + json.dumps(ours("qa_0000000000000000")) + "\n"
    r = project.imp(project.file("some-unknown.jsonl", lines))
    assert r.exit_code == 1
    assert "qa_0000000000000000" in r.output and r.output.startswith("error: ")
    assert "Traceback" not in r.output
    assert project.versions() == 0  # the valid first record was not written either


def test_an_unknown_pair_is_reported_with_its_file_and_line(project):
    lines = json.dumps(ours(project.ids[0])) + "\n" + json.dumps(ours("qa_0000000000000000")) + "\n"
    path = project.file("some-unknown.jsonl", lines)
    r = project.imp(path)
    assert str(path) in r.output and "line 2" in r.output


def test_export_round_trips_through_import(project):
    a, b, c = project.ids
    assert project.imp(project.json_file("ours.json", [ours(a), ours(b, (5, 3))])).exit_code == 0
    assert project.imp(project.json_file("rubric.json", RUBBERDUCK), "--pair", c).exit_code == 0
    out = project.dir / "export.jsonl"
    r = project.run("checklists", "export", "--out", str(out))
    assert r.exit_code == 0 and f"wrote 3 checklists to {out}" in r.output
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(e["qa_pair_id"], e["version"], e["origin"], e["draft"], e["valid"]) for e in exported] == [
        (a, 1, "imported", False, True), (b, 1, "imported", True, False), (c, 1, "imported", True, False)]

    r = project.imp(out)
    assert r.exit_code == 0, r.output
    # imports are idempotent (issue 20): the same checklists again are counted unchanged, not new versions
    assert "imported 0 checklists" in r.output and "3 unchanged" in r.output, r.output
    again = project.run("checklists", "export").stdout
    reimported = [json.loads(line) for line in again.splitlines()]
    assert [(e["qa_pair_id"], e["version"], e["draft"], e["valid"]) for e in reimported] == [
        (a, 1, False, True), (b, 1, True, False), (c, 1, True, False)]
    assert [e["items"] for e in reimported] == [e["items"] for e in exported]  # same checklists, nothing rescaled


def test_export_of_a_project_without_checklists_is_empty(project):
    r = project.run("checklists", "export")
    assert r.exit_code == 0 and r.stdout == ""


def test_export_to_a_folder_that_does_not_exist_is_an_error_not_a_traceback(project, tmp_path):
    target = tmp_path / "missing" / "out.jsonl"
    r = project.run("checklists", "export", "--out", str(target))
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), repr(r.exception)
    assert f"error: {target}: cannot write the checklists (No such file or directory)" in r.output, r.output


# ---------------------------------------------------------------------------- show, history, diff, restore
def test_history_diff_and_restore(project):
    pid = project.ids[0]
    assert project.imp(project.json_file("v1.json", ours(pid))).exit_code == 0
    edited = ours(pid, (6, 3), tag=" (edited)")
    assert project.imp(project.json_file("v2.json", edited)).exit_code == 0

    history = project.run("checklists", "history", pid)
    assert history.exit_code == 0
    lines = [line.split("\t") for line in history.stdout.splitlines()]
    assert [row[:4] for row in lines] == [["v1", "imported", "valid", "tester"], ["v2", "imported", "valid", "tester"]]

    diff = project.run("checklists", "diff", pid)
    assert diff.exit_code == 0, diff.output
    assert diff.stdout.splitlines() == [
        "version 1 (imported) -> version 2 (imported)",
        "#1 knowledge item: changed",
        "  key point: Point 1{+ (edited)+}",
        "  weight: 5 -> 6",
        "  score 6 added: {+States point 1 (edited)+}",
        "  score 5 removed: [-States point 1-]",
        "#2 knowledge item: changed",
        "  key point: Point 2{+ (edited)+}",
        "  weight: 4 -> 3",
        "  score 4 removed: [-States point 2-]",
        "  score 3 added: {+States point 2 (edited)+}",
        "#3 clarity item: unchanged",
    ]
    same = project.run("checklists", "diff", pid, "2", "2")
    assert same.stdout.splitlines()[1:] == ["#1 knowledge item: unchanged", "#2 knowledge item: unchanged",
                                            "#3 clarity item: unchanged"]

    r = project.run("checklists", "restore", pid, "1", "--as", "reviewer")
    assert r.exit_code == 0 and r.stdout.strip() == f"restored version 1 of {pid} as version 3"
    history = project.run("checklists", "history", pid).stdout.splitlines()
    assert history[-1].startswith("v3\tedited\tvalid\treviewer\t") and history[-1].endswith("(restored from 1)")
    show = project.run("checklists", "show", pid).stdout
    assert show.startswith("version 3 · edited · reviewer · ") and "Point 1 (edited)" not in show
    old = project.run("checklists", "show", pid, "--version", "2").stdout
    assert old.startswith("version 2 · imported · tester") and "[knowledge, weight 6] Point 1 (edited)" in old
    assert project.versions() == 3


def _one_point(pair: str, key_point: str, criterion: str = "States it") -> dict:
    return {"qa_pair_id": pair, "items": [
        {"kind": "knowledge", "key_point": key_point, "weight": 9,
         "rubric": [{"score": 9, "criterion": criterion}, {"score": 0, "criterion": "Does not"}]},
        clarity_item().model_dump(mode="json")]}


def test_diff_keeps_emoji_whole_and_calls_normalization_only_differences_so(project):
    import unicodedata

    pid = project.ids[0]
    v1 = _one_point(pid, "Flags 🇫🇷 and a family 👨‍👩‍👧 in café", "Names the café")
    v2 = _one_point(pid, "Flags 🇫🇮 and a family 👨‍👩‍👦 in café", "Names the café")
    v3 = _one_point(pid, unicodedata.normalize("NFD", "Flags 🇫🇮 and a family 👨‍👩‍👦 in café"),
                    unicodedata.normalize("NFD", "Names the café"))
    for n, doc in enumerate((v1, v2, v3), 1):
        assert project.imp(project.json_file(f"v{n}.json", doc)).exit_code == 0
    r = project.run("checklists", "diff", pid, "1", "2")
    assert r.exit_code == 0, r.output
    assert ("  key point: Flags [-🇫🇷-]{+🇫🇮+} and a family [-👨‍👩‍👧-]{+👨‍👩‍👦+} in café"
            in r.stdout.splitlines())
    r = project.run("checklists", "diff", pid, "2", "3")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == "#1 knowledge item: normalization only"
    assert "[-" not in r.stdout and "{+" not in r.stdout


def test_diff_that_runs_out_of_time_says_approximate(project, monkeypatch):
    from benchwright.core import text_diff

    pid = project.ids[0]
    words = ["alpha", "beta", "gamma", "delta"]
    old = " ".join(words[(k * 7) % 4] for k in range(600))
    new = " ".join(w if k % 5 else "omega" for k, w in enumerate(old.split(" ")))
    for n, text in enumerate((old, new), 1):
        assert project.imp(project.json_file(f"v{n}.json", _one_point(pid, text))).exit_code == 0
    monkeypatch.setattr(text_diff, "DEFAULT_TIMEOUT_S", 1e-6)  # what a long diff meets at 1 s
    r = project.run("checklists", "diff", pid)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[2].startswith("  key point: (approximate diff) ")
    assert lines[-1].startswith("approximate diff: a comparison took longer than 1e-06 s")


def test_show_history_diff_restore_of_missing_things(project):
    pid = project.ids[0]
    r = project.run("checklists", "show", pid)
    assert r.exit_code == 1 and f"pair {pid} has no checklist" in r.output
    r = project.run("checklists", "diff", pid)
    assert r.exit_code == 1 and "has no checklist" in r.output
    r = project.run("checklists", "history", pid)
    assert r.exit_code == 1 and f"pair {pid} has no checklist" in r.output
    assert project.imp(project.json_file("v1.json", ours(pid))).exit_code == 0
    r = project.run("checklists", "show", pid, "--version", "5")
    assert r.exit_code == 1 and "has no checklist version 5" in r.output
    r = project.run("checklists", "diff", pid, "1", "5")
    assert r.exit_code == 1 and "has no checklist version 5" in r.output
    r = project.run("checklists", "restore", pid, "5")
    assert r.exit_code == 1 and "has no checklist version 5" in r.output
    assert project.versions() == 1


# ------------------------------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize(("name", "content", "expected"), [
    ("broken.json", '{\n  "qa_pair_id": "x",\n  "items": [\n    oops\n  ]\n}\n', ", line 4: invalid JSON"),
    ("broken.jsonl", '{"items": []}\n{"items": [}\n', ", line 2: invalid JSON"),
    ("broken.yaml", "sub_aspect:\n  A: Is it?\n  B: [unclosed\n", ", line 4: invalid YAML: while parsing a flow sequence"),
    ("tabs.yaml", "sub_aspect:\n\tA: Is it?\n", ", line 2: invalid YAML: "),
    ("shape.json", '{"name": "not a checklist"}', ", line 1: not a checklist shape benchwright knows"),
    ("points.json", json.dumps([{"desc": "no points", "subitems": []}, RUBBERDUCK[2]]),
     ", line 1, field 'item 1': needs a text 'desc' and integer 'points'"),
    ("fields.json", json.dumps(ours("x") | {"items": [{"key_point": "a", "weight": "9", "rubric": []}]}),
     ", line 1, field 'items.0.weight'"),
    ("empty.json", "", ": the file is empty"),
])
def test_bad_files_exit_non_zero_naming_the_file(project, name, content, expected):
    path = project.file(name, content)
    r = project.imp(path, "--pair", project.ids[0])
    assert r.exit_code == 1, r.output
    assert r.output.startswith("error: ") and "Traceback" not in r.output
    assert f"{path}{expected}" in r.output
    assert "<unicode string>" not in r.output
    assert project.versions() == 0


def test_missing_file_and_bad_format_option(project):
    r = project.imp(project.dir / "nope.json")
    assert r.exit_code == 1 and "no such file" in r.output
    r = project.imp(project.json_file("ours.json", ours(project.ids[0])), "--format", "excel")
    assert r.exit_code == 2 and "excel" in r.output
    assert project.versions() == 0


def test_an_exported_valid_draft_comes_back_as_a_draft(project):
    pid = project.ids[0]
    assert project.imp(project.json_file("d.json", ours(pid, draft=True))).exit_code == 0
    assert project.rows("SELECT is_draft, is_valid FROM checklist_versions") == [(1, 1)]
    out = project.dir / "export.jsonl"
    assert project.run("checklists", "export", "--out", str(out)).exit_code == 0
    assert json.loads(out.read_text().splitlines()[0])["draft"] is True
    r = project.imp(out)  # the same draft again: unchanged (issue 20); the draft flag survived the export
    assert r.exit_code == 0 and "1 unchanged" in r.output, r.output
    valid = project.json_file("v.json", ours(pid))
    assert "(benchwright, valid)" in project.imp(valid).output  # same items, not a draft: a new version
    assert project.imp(out).exit_code == 0  # the draft again is a change from the valid current version
    assert project.rows("SELECT is_draft FROM checklist_versions ORDER BY version")[-1] == (1,)


def test_import_for_a_pair_named_by_queue_position(project):
    pid = project.ids[2]
    r = project.imp(project.json_file("rubric.json", RUBBERDUCK), "--pair", "#3")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0] == f"{pid}: version 1 (rubberduck, draft)"
    r = project.imp(project.json_file("rubric2.json", RUBBERDUCK), "--pair", "#99")
    assert r.exit_code == 1 and "--pair #99: no Q&A pair at position #99" in r.output
