"""``benchwright report --conditions`` end to end (issue 18 item 1): pairs with task sets imported, answers with 0-5
scores imported under the three Code-QA-Bench conditions, the table, the JSON and the CSV checked against scipy."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from scipy import stats

from benchwright.tui.cli import main

MODEL = "[bold]m[/]"  # markup in a model name prints literally


def run(*args):
    return CliRunner(env={"COLUMNS": "250"}).invoke(main, list(args), catch_exceptions=False)


# per pair (accuracy, completeness, specificity) under each condition; p7 has no closed-book answer
SCORES = {
    "closed-book": [(1, 1, 0), (2, 1, 1), (0, 0, 1), (1, 2, 1), (3, 2, 2), (1, 1, 1), (2, 2, 2)],
    "code-only": [(3, 3, 3), (4, 3, 3), (2, 2, 3), (3, 4, 4), (3, 2, 2), (4, 4, 3), (3, 3, 4), (5, 5, 5)],
    "documented": [(3, 3, 3), (5, 4, 4), (2, 2, 3), (4, 4, 4), (4, 3, 3), (4, 4, 3), (3, 4, 4), (5, 5, 5)],
}


@pytest.fixture
def project(tmp_path):
    db = str(tmp_path / "p.db")
    assert run("--db", db, "init").exit_code == 0
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"question": f"Q{i}?", "answer": f"A{i}.", "ts": "code-derivable",
                                         "qt": "where" if i % 2 else "why"}) + "\n" for i in range(8)))
    assert run("--db", db, "pairs", "import", "jsonl", str(pairs), "--map", "task_set=ts",
               "--map", "qa_type=qt").exit_code == 0
    for condition, rows in SCORES.items():
        f = tmp_path / f"{condition}.jsonl"
        f.write_text("".join(json.dumps({"question": f"Q{i}?", "answer": "x", "scores": dict(
            zip(("accuracy", "completeness", "specificity"), s, strict=True))}) + "\n" for i, s in enumerate(rows)))
        r = run("--db", db, "answers", "import", str(f), "--model", MODEL, "--condition", condition, "--scale", "5")
        assert r.exit_code == 0, r.output
    return db, tmp_path


def _norm(condition):
    return [sum(s) / 15 for s in SCORES[condition]]


def test_report_conditions_table_json_and_csv(project):
    db, tmp = project
    r = run("--db", db, "report", "--conditions", "--json", str(tmp / "r.json"), "--csv", str(tmp / "csv"))
    assert r.exit_code == 0, r.output
    assert "Condition deltas (Code-QA-Bench)" in r.output and "Wilcoxon signed-rank" in r.output
    assert MODEL in r.output and "code-derivable" in r.output
    data = json.loads((tmp / "r.json").read_text())["conditions"]
    assert data["test"] == "wilcoxon" and data["resamples"] == 10_000
    [row] = data["rows"]
    cb, co, dc = _norm("closed-book"), _norm("code-only"), _norm("documented")
    first, second = row["deltas"]
    d1 = [co[i] - cb[i] for i in range(7)]
    assert (first["n"], first["only_treatment"], first["only_baseline"]) == (7, 1, 0)
    assert first["mean_delta"] == pytest.approx(sum(d1) / 7)
    assert first["p_value"] == pytest.approx(stats.wilcoxon(d1, zero_method="wilcox").pvalue)
    d2 = [dc[i] - co[i] for i in range(8)]
    assert second["n"] == 8 and second["mean_delta"] == pytest.approx(sum(d2) / 8)
    # four of eight differences are zero: Wilcoxon drops them, and four non-zero ones are too few for a p-value
    assert sum(1 for x in d2 if x) == 4
    assert second["p_value"] is None and "too few non-zero differences" in second["note"]
    assert "1 / 0" in r.output  # the pair answered code-only but not closed-book is shown as left out
    with (tmp / "csv" / "conditions.csv").open(encoding="utf-8") as f:
        records = list(csv.DictReader(f))
    assert [x["delta"] for x in records] == ["code-only - closed-book", "documented - code-only"]
    assert float(records[0]["p_value"]) == pytest.approx(first["p_value"])


def test_ttest_by_qa_type_and_judge_filter(project):
    db, tmp = project
    r = run("--db", db, "report", "--conditions", "--test", "ttest", "--by", "qa-type", "--json", str(tmp / "r.json"))
    assert r.exit_code == 0 and "paired t-test (scipy.stats.ttest_rel" in r.output
    data = json.loads((tmp / "r.json").read_text())["conditions"]
    assert [x["stratum"] for x in data["by"]["qa_type"]] == ["Where", "Why"]
    cb, co = _norm("closed-book"), _norm("code-only")
    odd = [i for i in range(7) if i % 2]
    ref = stats.ttest_rel([co[i] for i in odd], [cb[i] for i in odd])
    assert data["by"]["qa_type"][0]["deltas"][0]["n"] == 3
    assert data["by"]["qa_type"][0]["deltas"][0]["p_value"] is None  # 3 pairs: too few for a p-value
    assert "too few pairs for a p-value (3 < 5)" in r.output
    assert ref.pvalue > 0  # scipy would give one; we say why we do not
    r = run("--db", db, "report", "--conditions", "--judge", "checklist")
    assert r.exit_code == 0 and "no model has judged answers under two of the conditions" in r.output


def test_bad_test_is_a_usage_error(project):
    db, _ = project
    r = run("--db", db, "report", "--conditions", "--test", "mannwhitney")
    assert r.exit_code == 2 and "wilcoxon" in r.output


def test_specificity_saturation_in_the_report_and_json(project):
    import uuid

    from benchwright.db import Store

    db, tmp = project
    with Store.open(db) as store, store.write() as conn:
        answers = [r[0] for r in conn.execute("SELECT id FROM answers WHERE condition = 'documented' ORDER BY id")]
        for i, aid in enumerate(answers):
            scores = [{"key": k, "label": k, "kind": "dimension", "score": s, "max": 5}
                      for k, s in (("accuracy", 4), ("completeness", 4), ("specificity", 5 if i < 5 else 3))]
            conn.execute(
                "INSERT INTO judgments (answer_id, judge, judge_model, run_index, status, scores_json, created_at,"
                " created_by, uid) VALUES (?, 'code-qa-bench', 'jm', 0, 'scored', ?, 'now', 'setup', ?)",
                [aid, json.dumps(scores), uuid.uuid4().hex])
    r = run("--db", db, "report", "--json", str(tmp / "r.json"))
    assert r.exit_code == 0, r.output
    assert "Specificity saturation" in r.output and "saturated: specificity no longer tells" in r.output
    [row] = json.loads((tmp / "r.json").read_text())["specificity_saturation"]["rows"]
    assert (row["model"], row["answers"], row["at_max"], row["warning"]) == (MODEL, 8, 5, True)


def test_the_full_report_points_to_the_conditions_table(project):
    db, _ = project
    r = run("--db", db, "report")
    assert r.exit_code == 0 and "benchwright report --conditions" in r.output
    assert "Condition deltas (Code-QA-Bench):" not in r.output  # the table itself only with --conditions
