"""``benchwright report``: Rich tables, CSV files and JSON from a small judged project, numbers checked by hand.

The project (checklist k1 max 5, k2 max 4, clarity max 1; s out of 10):
  model "[red]m-a[/red]" (markup in the name must print literally), agentic, checklist judge "jx":
    P1 (Where; language from the repository: Python)  run0 5+4+1 = 10   run1 5+2+1 = 8   -> 0.9, PSR 1/2
    P2 (Why; Go)   run0 judge 2+0+1 = 3, k2 overridden to 2 -> 2+2+1 = 5   run1 UNSCORED   -> 0.5, label edit-bias
  Overall (0.9 + 0.5)/2 = 70 %; Knowledge ((9/9 + 7/9)/2 + 4/9)/2 = (8/9 + 4/9)/2 = 66.667 %; Clarity 100 %;
  PSR (0.5 + 0)/2 = 25 %.
  Stability: only P1 is scored in both runs: 100 % and 80 % -> mean 90, sample std sqrt(200) = 14.142, range 20.
  swe-qa-pro judge "jy" on P1: correctness 6/10, completeness 8/10 -> 70 %.
  model "m-b", closed-book, checklist: P1 0+0+0 -> 0 %, below 60 %, unlabelled.
"""

from __future__ import annotations

import csv
import json
import math
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import Store
from benchwright.tui.cli import main

NOW = "2026-01-01T00:00:00Z"
MODEL_A = "[red]m-a[/red]"


def run(*args):
    return CliRunner(env={"COLUMNS": "250"}).invoke(main, list(args), catch_exceptions=False)


def checklist(k1, k2, cl):
    return json.dumps([
        {"key": "k1", "label": "k1", "kind": "knowledge", "score": k1, "max": 5, "allowed": [0, 2, 5],
         "rationale": ""},
        {"key": "k2", "label": "k2", "kind": "knowledge", "score": k2, "max": 4, "allowed": [0, 2, 4],
         "rationale": ""},
        {"key": "clarity", "label": "Clarity", "kind": "clarity", "score": cl, "max": 1, "allowed": [0, 1],
         "rationale": ""},
    ])


def _answer(db, pair, model, condition):
    aid = uuid.uuid4().hex
    db.execute("INSERT INTO answers (id, qa_pair_id, model, condition, text, source_format, created_at, created_by)"
               " VALUES (?, ?, ?, ?, 'text', 'jsonl', ?, 'setup')", [aid, pair, model, condition, NOW])
    return aid


def _judgment(db, aid, scores, *, judge="checklist", judge_model="jx", run_index=0, status="scored"):
    return db.execute(
        "INSERT INTO judgments (answer_id, judge, judge_model, run_index, status, scores_json, reason, created_at,"
        " created_by, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'setup', ?)",
        [aid, judge, judge_model, run_index, status, scores, "invalid" if status == "unscored" else None, NOW,
         uuid.uuid4().hex]).lastrowid


def make_project(tmp_path: Path, *, judged: bool = True) -> Path:
    data = tmp_path / "pairs.jsonl"
    data.write_text(
        json.dumps({"question": "Where is the app context pushed?", "answer": "In ctx.py.", "qa_type": "Where"})
        + "\n" + json.dumps({"question": "Why blueprints?", "answer": "Modularity.", "qa_type": "Why",
                             "language": "Go"}) + "\n")
    db_path = tmp_path / "p.db"
    with Store.open(db_path) as store:
        store.add_repository(Repository(name="flask", version_label="3.1.1", language="Python"), "setup")
        result = parse("jsonl", data, repository="flask", mapping=("qa_type=qa_type", "language=language"))
        store.apply_import(result, annotator="setup", file_path=data)
        p1, p2 = (row.id for row in store.queue_page("x", limit=10))
        if judged:
            with store.write() as db:
                a1, a2 = _answer(db, p1, MODEL_A, "agentic"), _answer(db, p2, MODEL_A, "agentic")
                _judgment(db, a1, checklist(5, 4, 1))
                _judgment(db, a1, checklist(5, 2, 1), run_index=1)
                j = _judgment(db, a2, checklist(2, 0, 1))
                db.execute("INSERT INTO score_overrides (judgment_id, key, original_score, score, reason, annotator,"
                           " created_at, uid) VALUES (?, 'k2', 0, 2, 'partly right', 'ann', ?, ?)",
                           [j, NOW, uuid.uuid4().hex])
                _judgment(db, a2, "[]", run_index=1, status="unscored")
                _judgment(db, a1, json.dumps([
                    {"key": "correctness", "label": "Correctness", "kind": "dimension", "score": 6, "max": 10,
                     "allowed": None, "rationale": ""},
                    {"key": "completeness", "label": "Completeness", "kind": "dimension", "score": 8, "max": 10,
                     "allowed": None, "rationale": ""}]), judge="swe-qa-pro", judge_model="jy")
                db.execute("INSERT INTO failure_modes (answer_id, mode, origin, created_at, uid) "
                           "VALUES (?, 'edit-bias', 'llm', ?, ?)", [a2, NOW, uuid.uuid4().hex])
                _judgment(db, _answer(db, p1, "m-b", "closed-book"), checklist(0, 0, 0))
    return db_path


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_empty_project_prints_how_to_start(tmp_path):
    db = str(tmp_path / "p.db")
    assert run("--db", db, "init").exit_code == 0
    r = run("--db", db, "report")
    assert r.exit_code == 0
    assert "no judged answers yet" in r.output and "benchwright answers import" in r.output


def test_missing_project_is_an_error(tmp_path):
    r = run("--db", str(tmp_path / "absent.db"), "report")
    assert r.exit_code == 1 and "error:" in r.output


def test_tables_csv_and_json_agree_with_hand_values(tmp_path):
    db = make_project(tmp_path)
    out_dir, json_file = tmp_path / "csv", tmp_path / "report.json"
    r = run("--db", str(db), "report", "--by", "language", "--by", "qa-type", "--csv", str(out_dir),
            "--json", str(json_file))
    assert r.exit_code == 0, r.output
    text = r.output
    for title in ("Checklist judge (RepoProbe §5.1.3)", "Scalar judge swe-qa-pro", "By Language", "By QA type",
                  "Judge stability over runs", "Coverage", "Failure modes of answers below 60%"):
        assert title in text
    assert MODEL_A in text  # shown literally, not as red "m-a"
    checklist_line = next(line for line in text.splitlines() if MODEL_A in line and "jx" in line)
    for cell in ("70.0", "66.7", "100.0", "25.0"):
        assert cell in checklist_line
    stability_line = next(line for line in text.splitlines() if MODEL_A in line and "14.1" in line)
    assert "90.0" in stability_line and "20.0" in stability_line
    assert "1 (100.0%)" in text  # edit bias: 1 of 1 classified failure case of m-a

    files = sorted(p.name for p in out_dir.iterdir())
    assert files == ["agent_gap.csv", "by_language.csv", "by_qa_type.csv", "coverage.csv", "failure_modes.csv",
                     "instability.csv", "scalar_swe-qa-pro.csv", "stability.csv", "strata_summary.csv", "summary.csv",
                     "tool_usage.csv"]
    data = json.loads(json_file.read_text(encoding="utf-8"))

    summary = {(row["model"], row["judge"]): row for row in read_csv(out_dir / "summary.csv")}
    a = summary[(MODEL_A, "checklist")]
    assert float(a["overall_pct"]) == pytest.approx(70)
    assert float(a["knowledge_pct"]) == pytest.approx(200 / 3)
    assert float(a["clarity_pct"]) == pytest.approx(100)
    assert float(a["perfect_solve_pct"]) == pytest.approx(25)
    assert float(summary[("m-b", "checklist")]["overall_pct"]) == 0
    assert summary[(MODEL_A, "swe-qa-pro")]["knowledge_pct"] == ""  # scalar judges have no knowledge score
    json_a = next(row for row in data["summary"] if row["model"] == MODEL_A and row["judge"] == "checklist")
    for key in ("overall_pct", "knowledge_pct", "clarity_pct", "perfect_solve_pct"):
        assert float(a[key]) == json_a[key]  # the CSV and the JSON carry the same numbers

    by_lang = {(row["model"], row["stratum"]): row for row in read_csv(out_dir / "by_language.csv")
               if row["judge"] == "checklist"}
    # P1 has no language of its own: the repository's (Python); P2 is Go
    assert float(by_lang[(MODEL_A, "Python")]["overall_pct"]) == pytest.approx(90)
    assert float(by_lang[(MODEL_A, "Go")]["overall_pct"]) == pytest.approx(50)
    assert {row["stratum"] for row in read_csv(out_dir / "by_qa_type.csv")} == {"Where", "Why"}

    stab = {(row["model"], row["judge"]): row for row in read_csv(out_dir / "stability.csv")}
    s = stab[(MODEL_A, "checklist")]
    assert float(s["std_pct"]) == pytest.approx(math.sqrt(200))
    assert float(s["std_population_pct"]) == pytest.approx(10)
    assert float(s["range_pct"]) == pytest.approx(20)
    assert (float(s["run_0_pct"]), float(s["run_1_pct"])) == (pytest.approx(100), pytest.approx(80))
    assert (s["answers"], s["answers_left_out"]) == ("1", "1")
    json_s = next(row for row in data["stability"] if row["model"] == MODEL_A and row["judge"] == "checklist")
    assert json_s["std_pct"] == float(s["std_pct"])

    scalar = read_csv(out_dir / "scalar_swe-qa-pro.csv")[0]
    assert (scalar["correctness_mean"], scalar["completeness_mean"]) == ("6.0", "8.0")
    assert float(scalar["final_pct"]) == pytest.approx(70)

    cov = {(row["model"], row["judge"]): row for row in read_csv(out_dir / "coverage.csv")}
    assert (cov[(MODEL_A, "checklist")]["runs_unscored"], cov[(MODEL_A, "checklist")]["overrides_used"]) == ("1", "1")

    fails = {row["model"]: row for row in read_csv(out_dir / "failure_modes.csv")}
    assert (fails[MODEL_A]["below"], fails[MODEL_A]["edit-bias_count"]) == ("1", "1")
    assert float(fails[MODEL_A]["edit-bias_pct_of_classified"]) == 100
    assert (fails["m-b"]["below"], fails["m-b"]["unclassified"]) == ("1", "1")
    assert data["answers"] == [{"model": MODEL_A, "condition": "agentic", "answers": 2},
                               {"model": "m-b", "condition": "closed-book", "answers": 1}]


def test_model_and_judge_filters(tmp_path):
    db = make_project(tmp_path)
    json_file = tmp_path / "r.json"
    r = run("--db", str(db), "report", "--model", "m-b", "--json", str(json_file))
    assert r.exit_code == 0 and MODEL_A not in r.output and "m-b" in r.output
    data = json.loads(json_file.read_text())
    assert {row["model"] for row in data["summary"]} == {"m-b"}
    r = run("--db", str(db), "report", "--judge", "swe-qa-pro", "--json", str(json_file))
    data = json.loads(json_file.read_text())
    assert r.exit_code == 0 and {row["judge"] for row in data["summary"]} == {"swe-qa-pro"}
    assert "Checklist judge" not in r.output
    r = run("--db", str(db), "report", "--model", "nobody")
    assert r.exit_code == 0 and "no answers of model nobody" in r.output
    r = run("--db", str(db), "report", "--judge", "gpt")
    assert r.exit_code == 2  # click rejects an unknown judge


def test_answers_without_judgments_say_so(tmp_path):
    db = make_project(tmp_path, judged=False)
    with Store.open(db) as store, store.write() as conn:
        pair = next(row.id for row in store.queue_page("x", limit=1))
        _answer(conn, pair, "m-c", "direct")
    r = run("--db", str(db), "report")
    assert r.exit_code == 0 and "1 answer(s) stored but no judgments yet" in r.output
