"""``benchwright report`` additions of issue 16 item 6 from the command line: the Table 4 summary across models
(text, JSON, CSV), the Table 6 instability listing with its two options, and ``--by repository`` /
``--by qa-subtype``.

The project: three models answer two pairs (flask / subtype "rationale", requests / no subtype), one checklist
run each; model totals out of 10: P1 m1 8, m2 6, m3 [red]m3[/red] 4; P2 m1 2, m2 2, m3 5. Model m1's answer to P1 also
has two swe-qa-pro runs (every dimension 9, then 3: 0.9 and 0.3) and a second checklist run (8 again): an
instability case (scalar range 0.6, checklist range 0).
"""

from __future__ import annotations

import csv
import json
import statistics
import uuid
from pathlib import Path

from click.testing import CliRunner

from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import Store
from benchwright.tui.cli import main

NOW = "2026-01-01T00:00:00Z"
M3 = "[red]m3[/red]\x1b[31m"  # markup and an ANSI escape in a model name
TOTALS = {("m1", 0): 8, ("m2", 0): 6, (M3, 0): 4, ("m1", 1): 2, ("m2", 1): 2, (M3, 1): 5}


def run(*args):
    return CliRunner(env={"COLUMNS": "250"}).invoke(main, list(args), catch_exceptions=False)


def _checklist(total):
    return json.dumps([
        {"key": "k1", "label": "k1", "kind": "knowledge", "score": total - 1, "max": 9, "allowed": None,
         "rationale": ""},
        {"key": "clarity", "label": "Clarity", "kind": "clarity", "score": 1, "max": 1, "allowed": [0, 1],
         "rationale": ""},
    ])


def _swe(score):
    return json.dumps([{"key": d, "label": d, "kind": "dimension", "score": score, "max": 10, "allowed": None,
                        "rationale": ""} for d in ("correctness", "completeness", "relevance", "clarity",
                                                   "reasoning")])


def _judgment(db, aid, scores, *, judge="checklist", judge_model="jx", run_index=0):
    db.execute("INSERT INTO judgments (answer_id, judge, judge_model, run_index, status, scores_json, created_at,"
               " created_by, uid) VALUES (?, ?, ?, ?, 'scored', ?, ?, 'setup', ?)",
               [aid, judge, judge_model, run_index, scores, NOW, uuid.uuid4().hex])


def make_project(tmp_path: Path) -> Path:
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"question": "Why the app context?", "answer": "Isolation.", "sub": "rationale",
                                "repo": "flask"}) + "\n"
                    + json.dumps({"question": "Where are sessions kept?", "answer": "sessions.py.",
                                  "repo": "requests"}) + "\n")
    db_path = tmp_path / "p.db"
    with Store.open(db_path) as store:
        for name in ("flask", "requests"):
            store.add_repository(Repository(name=name, version_label="1.0.0", language="Python"), "setup")
        for repo in ("flask", "requests"):
            lines = [line for line in data.read_text().splitlines() if f'"repo": "{repo}"' in line]
            part = tmp_path / f"{repo}.jsonl"
            part.write_text("\n".join(lines) + "\n")
            store.apply_import(parse("jsonl", part, repository=repo, mapping=("qa_subtype=sub",)),
                               annotator="setup", file_path=part)
        pairs = [row.id for row in store.queue_page("x", limit=10)]
        with store.write() as db:
            for (model, i), total in TOTALS.items():
                aid = uuid.uuid4().hex
                db.execute("INSERT INTO answers (id, qa_pair_id, model, condition, text, source_format, created_at,"
                           " created_by) VALUES (?, ?, ?, 'agentic', 'text', 'jsonl', ?, 'setup')",
                           [aid, pairs[i], model, NOW])
                _judgment(db, aid, _checklist(total))
                if (model, i) == ("m1", 0):
                    _judgment(db, aid, _checklist(total), run_index=1)
                    _judgment(db, aid, _swe(9), judge="swe-qa-pro", judge_model="jy")
                    _judgment(db, aid, _swe(3), judge="swe-qa-pro", judge_model="jy", run_index=1)
    return db_path


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_table4_and_instability_in_text_json_and_csv(tmp_path):
    db = make_project(tmp_path)
    out, js = tmp_path / "csv", tmp_path / "r.json"
    r = run("--db", str(db), "report", "--by", "repository", "--by", "qa-subtype", "--csv", str(out), "--json",
            str(js))
    assert r.exit_code == 0, r.output
    assert "By Repository across models (RepoProbe §5.2.2 Table 4)" in r.output
    assert "By QA subtype across models" in r.output and "n - 1" in r.output
    assert "[red]m3[/red]␛[31m" in r.output and "\x1b" not in r.output  # literal, the escape made visible
    flask = statistics.fmean([80.0, 60.0, 40.0])
    flask_sd = statistics.stdev([80.0, 60.0, 40.0])  # 20.0
    line = next(x for x in r.output.splitlines() if x.startswith("│ checklist") and "flask" in x)
    cells = [c.strip() for c in line.split("│")[1:-1]]
    assert cells == ["checklist", "jx", "agentic", "flask", "3", f"{flask:.1f}", f"{flask_sd:.1f}", "0.0", "3"]

    data = json.loads(js.read_text(encoding="utf-8"))
    repo_rows = {(x["judge"], x["stratum"]): x for x in data["strata_summary"]["repository"]}
    req = repo_rows[("checklist", "requests")]
    assert req["models"] == 3 and req["overall_mean_pct"] == statistics.fmean([20.0, 20.0, 50.0])
    assert abs(req["overall_sd_pct"] - statistics.stdev([20.0, 20.0, 50.0])) < 1e-9
    subtypes = {x["stratum"] for x in data["strata_summary"]["qa_subtype"]}
    assert subtypes == {"rationale", "(none)"}
    assert {x["stratum"] for x in data["strata"]["repository"]} == {"flask", "requests"}

    rows = read_csv(out / "strata_summary.csv")
    assert {(x["axis"], x["stratum"]) for x in rows if x["judge"] == "checklist"} == {
        ("repository", "flask"), ("repository", "requests"), ("qa_subtype", "rationale"), ("qa_subtype", "(none)")}
    assert (out / "by_repository.csv").is_file() and (out / "by_qa_subtype.csv").is_file()

    # Table 6: m1's answer to P1
    assert "Instability cases (RepoProbe §5.3.2 Table 6)" in r.output
    inst_line = next(x for x in r.output.splitlines() if "0.90 0.30" in x)
    assert "m1" in inst_line and "0.60" in inst_line and "0.80 0.80" in inst_line
    [case] = data["instability"]
    assert case["model"] == "m1" and case["scalar_scores"] == [0.9, 0.3] and case["checklist_range"] == 0.0
    [csv_case] = read_csv(out / "instability.csv")
    assert csv_case["scalar_scores"] == "0.9;0.3" and csv_case["model"] == "m1"


def test_instability_options(tmp_path):
    db = make_project(tmp_path)
    js = tmp_path / "r.json"
    r = run("--db", str(db), "report", "--instability-threshold", "0.7", "--json", str(js))
    assert r.exit_code == 0, r.output
    assert "range >= 0.7 while checklist runs range <= 0.1: none" in r.output
    assert json.loads(js.read_text())["instability"] == []
    r = run("--db", str(db), "report", "--checklist-tolerance", "1.5")
    assert r.exit_code == 2 and "1.5" in r.output


def test_nan_threshold_is_a_usage_error(tmp_path):
    """click.FloatRange(0, 1) lets nan through: it reached core and ended in a traceback (report) or in a silent
    'at or above nan%' (failure-modes classify)."""
    db = make_project(tmp_path)
    for option in ("--instability-threshold", "--checklist-tolerance"):
        r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["--db", str(db), "report", option, "nan"])
        assert r.exit_code == 2 and "not a number between 0 and 1" in r.output, r.output
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["--db", str(db), "failure-modes", "classify",
                                                        "--threshold", "NaN"])
    assert r.exit_code == 2 and "not a number between 0 and 1" in r.output, r.output
