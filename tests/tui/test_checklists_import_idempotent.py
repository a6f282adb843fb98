"""``checklists import F`` twice (issue 20 tester finding): the second run adds no version; a checklist identical
(canonical JSON) to the pair's current version is skipped and counted "unchanged"; a changed one is a new version."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from benchwright.core.checklist import clarity_item
from benchwright.tui.cli import main


def checklist(question: str, weights=(5, 4)) -> dict:
    items = [{"kind": "knowledge", "key_point": f"Point {n}", "weight": w,
              "rubric": [{"score": w, "criterion": f"States point {n}"}, {"score": 0, "criterion": "Does not"}]}
             for n, w in enumerate(weights, start=1)]
    return {"question": question, "items": [*items, clarity_item().model_dump(mode="json")]}


def _project(tmp_path: Path, n: int) -> Path:
    db = tmp_path / "p.db"
    (tmp_path / "src").mkdir()
    run = CliRunner().invoke
    assert run(main, ["--db", str(db), "init"]).exit_code == 0
    assert run(main, ["--db", str(db), "repos", "add", "r", str(tmp_path / "src"), "--version", "1"]).exit_code == 0
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"question": f"Q{i}?", "answer": f"A{i}."}) + "\n" for i in range(n)),
                     encoding="utf-8")
    assert run(main, ["--db", str(db), "pairs", "import", "jsonl", str(pairs), "--repo", "r", "--as", "t"]
               ).exit_code == 0
    return db


def versions(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM checklist_versions").fetchone()[0]


def test_importing_the_same_file_twice_adds_nothing(tmp_path):
    db = _project(tmp_path, 3)
    f = tmp_path / "c.jsonl"
    f.write_text("".join(json.dumps(checklist(f"Q{i}?")) + "\n" for i in range(3)), encoding="utf-8")
    run = CliRunner().invoke
    r = run(main, ["--db", str(db), "checklists", "import", str(f), "--as", "t"])
    assert r.exit_code == 0 and "imported 3 checklists" in r.output and "unchanged" not in r.output, r.output
    assert versions(db) == 3
    r = run(main, ["--db", str(db), "checklists", "import", str(f), "--as", "t"])
    assert r.exit_code == 0, r.output
    assert "imported 0 checklists" in r.output and "3 unchanged" in r.output, r.output
    assert versions(db) == 3
    # one checklist changed (a weight): only that one is a new version
    docs = [checklist("Q0?", weights=(5, 3)), checklist("Q1?"), checklist("Q2?")]
    f.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    r = run(main, ["--db", str(db), "checklists", "import", str(f), "--as", "t"])
    assert "imported 1 checklist " in r.output and "2 unchanged" in r.output, r.output
    assert versions(db) == 4


def test_a_repeated_line_in_one_file_is_stored_once(tmp_path):
    db = _project(tmp_path, 1)
    f = tmp_path / "c.jsonl"
    f.write_text((json.dumps(checklist("Q0?")) + "\n") * 2, encoding="utf-8")
    r = CliRunner().invoke(main, ["--db", str(db), "checklists", "import", str(f), "--as", "t"])
    assert r.exit_code == 0 and "1 unchanged" in r.output, r.output
    assert versions(db) == 1
