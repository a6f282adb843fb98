"""``benchwright calibration`` end to end on a small project: LLM checklist judgments and human judgments
(Store.save_human_judgment), paired by the store, figures checked by hand.

The checklist of both pairs: item 1 (weight 5, scores 0/3/5), item 2 (weight 4, 0/4), item 3 clarity (0/1).
  A1: pair P1 ("How" category), model "[red]m-a[/red]" (markup must print literally)
  A2: pair P2 ("Why"), model "m-b"
  judge checklist/jx: A1 (5, 4, 1) (an earlier row of the same run, (0, 0, 0), is replaced), A2 (3, 0, 1)
  judge checklist/jy: A1 (5, 4, 1) only
  ada (human): A1 (3, 4, 1), A2 (3, 0, 0) (her earlier (5, 4, 1) of A2 is replaced)
jx against ada, six observations: item 1: 5-3 = +2, 3-3 = 0; item 2: 0, 0; item 3: 0, 1-0 = +1.
  exact 4/6; mean difference (2 + 1) / 6 = +0.5; per model m-a: +2/3 (exact 2/3), m-b: +1/3 (exact 2/3);
  the worst: A1 item 1 (+2), then A2 item 3 (+1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from human_checklist import three_item_checklist

from benchwright.core.importers import parse
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.judgment import ScoreEntry
from benchwright.core.models import Repository
from benchwright.db import Store
from benchwright.tui.cli import main

MODEL_A = "[red]m-a[/red]"


def run(*args):
    return CliRunner(env={"COLUMNS": "250"}).invoke(main, list(args))


def checklist():
    return three_item_checklist("Names provider.py")


def entries(scores):
    return [ScoreEntry(key=str(n), label=it.key_point, kind=it.kind.value, score=s, max=it.weight,
                       allowed=it.allowed_scores)
            for n, (it, s) in enumerate(zip(checklist().items, scores, strict=True), 1)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    data = tmp_path / "pairs.jsonl"
    data.write_text(
        json.dumps({"question": "How is the app context pushed?", "answer": "In ctx.py.", "category": "How"}) + "\n"
        + json.dumps({"question": "Why blueprints?", "answer": "Modularity.", "category": "Why"}) + "\n")
    db_path = tmp_path / "p.db"
    with Store.open(db_path) as store:
        store.add_repository(Repository(name="flask", version_label="3.1.1", language="Python"), "setup")
        result = parse("jsonl", data, repository="flask", mapping=("category=category",))
        store.apply_import(result, annotator="setup", file_path=data)
        p1, p2 = (row.id for row in store.queue_page("x", limit=10))
        answers = []
        for n, (pair, model) in enumerate(((p1, MODEL_A), (p2, "m-b")), 1):
            store.save_checklist(pair, checklist(), author="setup", expected_version=None)
            report = store.import_answers([AnswerRecord(line=n, text=f"Answer {n}.", pair_ref=pair, questions=[])],
                                          model=model, condition="agentic", created_by="setup",
                                          source_file="a.jsonl")
            answers.append(report.answer_ids[0])
        a1, a2 = answers
        for aid, judge_model, scores in ((a1, "jx", (0, 0, 0)), (a1, "jx", (5, 4, 1)), (a2, "jx", (3, 0, 1)),
                                         (a1, "jy", (5, 4, 1))):
            store.save_judgment(aid, "checklist", judge_model, entries=entries(scores), checklist_version=1,
                                created_by="setup")
        store.save_human_judgment(a1, "ada", {"1": 3, "2": 4, "3": 1})
        store.save_human_judgment(a2, "ada", {"1": 5, "2": 4, "3": 1})
        store.save_human_judgment(a2, "ada", {"1": 3, "2": 0, "3": 0})
    return db_path


def test_calibration_json_has_the_hand_computed_figures(project: Path):
    r = run("--db", str(project), "calibration", "--json", "--judge", "checklist:jx")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["options"] == {"weights": "linear", "runs": "mean", "humans": "each", "by": ["model"], "worst": 10}
    (jx,) = data["judges"]
    assert jx["label"] == "checklist:jx"
    o = jx["overall"]
    assert (o["n"], o["answers"], o["annotators"]) == (6, 2, 1)
    assert o["exact"]["value"] == pytest.approx(4 / 6)
    assert o["mean_diff"]["value"] == pytest.approx(0.5)
    models = jx["groups"]["model"]
    assert models[MODEL_A]["mean_diff"]["value"] == pytest.approx(2 / 3)
    assert models["m-b"]["mean_diff"]["value"] == pytest.approx(1 / 3)
    assert models[MODEL_A]["exact"]["value"] == pytest.approx(2 / 3)
    assert [(w["item"], w["judge_score"], w["human_score"], w["diff"], w["annotator"]) for w in jx["worst"]] == [
        ("1", 5, 3, 2, "ada"), ("3", 1, 0, 1, "ada")]
    assert jx["worst"][0]["item_label"] == "Names provider.py"
    # per item: six items (two pairs x three); item 2 of each pair agrees exactly, one observation: no kappa
    assert len(jx["items"]) == 6
    one = next(v for k, v in jx["items"].items() if k.endswith("#2"))
    assert one["n"] == 1 and one["exact"]["value"] == 1 and one["kappa"]["value"] is None
    assert one["kappa"]["reason"]


def test_calibration_tables_print_every_judge_literally(project: Path):
    r = run("--db", str(project), "calibration", "--by", "category")
    assert r.exit_code == 0, r.output
    assert "checklist:jx against the humans" in r.output and "checklist:jy against the humans" in r.output
    assert "largest disagreements" in r.output and "Names provider.py" in r.output
    assert MODEL_A in r.output  # markup printed as text, not swallowed
    assert "How" in r.output and "Why" in r.output
    assert "+0.500" in r.output  # jx overall mean difference
    assert "nan" not in r.output.lower().replace("names", "")


def test_calibration_by_model_name_filter_and_bad_judge(project: Path):
    r = run("--db", str(project), "calibration", "--json", "--judge", "jy")
    assert r.exit_code == 0, r.output
    (jy,) = json.loads(r.output)["judges"]
    # jy scored A1 only: (5, 4, 1) against (3, 4, 1): +2, 0, 0
    assert jy["overall"]["n"] == 3 and jy["overall"]["mean_diff"]["value"] == pytest.approx(2 / 3)
    bad = run("--db", str(project), "calibration", "--judge", "nobody")
    assert bad.exit_code == 1
    assert "no judge 'nobody'" in bad.output and "checklist:jx" in bad.output


def test_calibration_on_a_project_without_human_scores_says_what_to_do(tmp_path: Path):
    db_path = tmp_path / "empty.db"
    Store.open(db_path).close()
    r = run("--db", str(db_path), "calibration")
    assert r.exit_code == 0, r.output
    assert "no human score is paired" in r.output


def test_pairs_keep_the_human_checklist_version_and_every_run(project: Path):
    from benchwright.db.judge_calibration import paired_scores

    with Store.open(project) as store:
        a1, a2 = (a.id for a in sorted(store.answers(), key=lambda a: a.model != MODEL_A))
        # A1's checklist changes (version 2) and jx judges it again against v2: ada scored v1, so her pairing
        # keeps jx's v1 run 0 (5, 4, 1), not the newer v2 row.
        pair1 = store.get_answer(a1).qa_pair_id
        store.save_checklist(pair1, checklist(), author="setup", expected_version=1)
        store.save_judgment(a1, "checklist", "jx", entries=entries((0, 0, 0)), checklist_version=2,
                            created_by="setup")
        # A second jx run of A2 (v1): item 1 runs (3, 5), item 2 (0, 4), item 3 (1, 0).
        store.save_judgment(a2, "checklist", "jx", entries=entries((5, 4, 0)), checklist_version=1, run_index=1,
                            created_by="setup")
        scores = paired_scores(store, judges=["checklist"])
        assert paired_scores(store, models=["nobody"]) == []
    jx = {(s.answer_id, s.item): s for s in scores if s.judge_model == "jx"}
    assert len(jx) == 6 and all(s.annotator == "ada" and s.checklist_version == 1 for s in jx.values())
    assert [jx[(a1, k)].judge_scores for k in "123"] == [(5,), (4,), (1,)]
    assert [jx[(a2, k)].judge_scores for k in "123"] == [(3, 5), (0, 4), (1, 0)]
    assert [jx[(a2, k)].human_score for k in "123"] == [3, 0, 0]  # ada's latest row of A2
    assert jx[(a2, "1")].allowed == (0, 3, 5) and jx[(a2, "3")].item_kind == "clarity"
    assert jx[(a1, "1")].strata["category"] == "How" and jx[(a1, "1")].answer_model == MODEL_A
    # runs=mean: A2 item 1 mean 4 -> snapped to 3 or 5 (a tie: 3, the lower); the difference uses 4 - 3 = +1
    r = run("--db", str(project), "calibration", "--json", "--judge", "checklist:jx", "--by", "kind")
    (j,) = json.loads(r.output)["judges"]
    assert set(j["groups"]["kind"]) == {"knowledge", "clarity"}
    # knowledge: A1 +2, 0; A2 item 1 mean 4 vs 3 = +1, item 2 mean 2 vs 0 = +2 -> (2 + 0 + 1 + 2) / 4
    assert j["groups"]["kind"]["knowledge"]["mean_diff"]["value"] == pytest.approx(5 / 4)


def test_report_has_the_judges_against_humans(project: Path, tmp_path: Path):
    out = tmp_path / "report.json"
    r = run("--db", str(project), "report", "--json", str(out))
    assert r.exit_code == 0, r.output
    assert "Judges against humans" in r.output
    assert "checklist:jx: n 6, exact 0.667" in r.output and "judge−human +0.500" in r.output
    data = json.loads(out.read_text())
    labels = [j["label"] for j in data["judge_calibration"]["judges"]]
    assert labels == ["checklist:jx", "checklist:jy"]
    # --judge of another judge: no pairing, no section
    other = run("--db", str(project), "report", "--judge", "swe-qa-pro")
    assert "Judges against humans" not in other.output
