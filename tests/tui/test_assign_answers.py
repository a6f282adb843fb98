"""Human judgments from the command line (issue 20 item 5): ``assign --answers`` hands answers out with overlap
(balanced, reproducible), ``judgments assigned`` lists them, ``judgments human`` records scores (one answer, or a
JSONL file all or nothing, errors naming the file and line), and the report's numbers stay those of the judges."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from human_checklist import three_item_checklist

from benchwright.core.importers.answers import AnswerRecord
from benchwright.db import Store
from benchwright.tui.cli import main


def checklist():
    return three_item_checklist('Names [b]app.py[/b]')


class Project:
    """Three pairs with checklists, two models' answers to each (six answers), each judged once by an LLM."""

    def __init__(self, tmp_path: Path):
        from benchwright.core.models import QAPair, SourceRef, qa_pair_id

        self.db = tmp_path / "project.db"
        self.dir = tmp_path
        with Store.open(self.db) as s:
            from benchwright.core.importers import ParseResult

            pairs = [QAPair(id=qa_pair_id(None, f"Q{i}?", f"A{i}."), repository=None, question=f"Q{i}?",
                            reference_answer=f"A{i}.", source=SourceRef(format="jsonl", file="p.jsonl", line=i))
                     for i in range(1, 4)]
            f = tmp_path / "p.jsonl"
            f.write_text("{}\n")
            s.apply_import(ParseResult("jsonl", str(f), read=3, pairs=pairs), annotator="setup", file_path=f)
            self.answers = []
            for p in pairs:
                s.save_checklist(p.id, checklist(), author="setup", expected_version=None)
                for model in ("m1", "m2"):
                    rep = s.import_answers([AnswerRecord(line=1, text=f"{model} on {p.question}", pair_ref=p.id)],
                                           model=model, condition="direct", created_by="setup")
                    aid = rep.answer_ids[0]
                    self.answers.append(aid)
                    s.save_judgment(aid, "checklist", "judge-x", created_by="setup", checklist_version=1, entries=[
                        {"key": "1", "label": "a", "kind": "knowledge", "score": 3, "max": 5, "allowed": [0, 3, 5]},
                        {"key": "2", "label": "b", "kind": "knowledge", "score": 4, "max": 4, "allowed": [0, 4]},
                        {"key": "3", "label": "c", "kind": "clarity", "score": 1, "max": 1, "allowed": [0, 1]}])

    def run(self, *args: str):
        return CliRunner().invoke(main, ["--db", str(self.db), *args], env={"COLUMNS": "250"})

    def rows(self, sql: str):
        with sqlite3.connect(self.db) as conn:
            return conn.execute(sql).fetchall()


@pytest.fixture
def proj(tmp_path, cli_env) -> Project:
    return Project(tmp_path)


def test_assign_answers_with_overlap_is_balanced_and_reproducible(proj):
    r = proj.run("assign", "--answers", "--annotators", "ada,bob,cy", "--overlap", "2", "--seed", "5", "--as", "lead")
    assert r.exit_code == 0, r.output
    assert "ada\t4 answers to score" in r.output and "bob\t4 answers" in r.output and "cy\t4 answers" in r.output
    plan = proj.rows("SELECT answer_id, annotator FROM answer_assignments ORDER BY 1, 2")
    assert len(plan) == 12 and all(n == 2 for (n,) in proj.rows(
        "SELECT count(*) FROM answer_assignments GROUP BY answer_id"))
    assert proj.run("assign", "--answers", "--annotators", "ada,bob,cy", "--overlap", "2", "--seed", "5").exit_code == 0
    assert proj.rows("SELECT answer_id, annotator FROM answer_assignments ORDER BY 1, 2") == plan
    # a model and a sample; the pairs' assignments are untouched
    r = proj.run("assign", "--answers", "--annotators", "ada,bob", "--overlap", "1", "--model", "m2", "--sample", "2")
    assert r.exit_code == 0, r.output
    rows = proj.rows("SELECT a.model FROM answer_assignments s JOIN answers a ON a.id = s.answer_id")
    assert rows == [("m2",), ("m2",)]
    assert proj.rows("SELECT count(*) FROM assignments") == [(0,)]


def test_assign_answers_refusals(proj):
    r = proj.run("assign", "--answers", "--annotators", "ada", "--overlap", "2")
    assert r.exit_code != 0 and "overlap" in r.output
    r = proj.run("assign", "--answers", "--annotators", "ada", "--overlap", "1", "--fraction", "0.5")
    assert r.exit_code != 0 and "--fraction" in r.output
    r = proj.run("assign", "--annotators", "ada", "--overlap", "1", "--model", "m1")
    assert r.exit_code != 0 and "--answers" in r.output
    r = proj.run("assign", "--answers", "--annotators", "ada", "--overlap", "1", "--model", "nobody")
    assert r.exit_code != 0 and "no answer to hand out" in r.output


def test_judgments_human_records_one_answer_and_assigned_lists_it(proj):
    assert proj.run("assign", "--answers", "--annotators", "ada", "--overlap", "1").exit_code == 0
    aid = proj.answers[0]
    r = proj.run("judgments", "human", aid, "--as", "ada", "--score", "1=3", "--score", "2=0", "--score", "3=1",
                 "--rationale", "2=misses the [b]flow[/b]")
    assert r.exit_code == 0, r.output
    assert f"{aid}\thuman:ada\tscore rate 40.0% (checklist v1" in r.output
    (row,) = proj.rows("SELECT judge, judge_model, created_by, run_index, status, score_rate, scores_json "
                       "FROM judgments WHERE judge = 'human'")
    assert row[:6] == ("human", "ada", "ada", 0, "scored", pytest.approx(0.4))
    entries = json.loads(row[6])
    assert [e["score"] for e in entries] == [3, 0, 1] and entries[1]["rationale"] == "misses the [b]flow[/b]"
    r = proj.run("judgments", "assigned", "--as", "ada")
    assert r.exit_code == 0 and f"scored\t{aid}\tm1" in r.output and "6 answers assigned, 5 to score" in r.output
    r = proj.run("judgments", "assigned", "--as", "ada", "--todo")
    assert aid not in r.output


def test_judgments_human_refuses_a_score_outside_the_allowed_set_naming_the_item(proj):
    r = proj.run("judgments", "human", proj.answers[0], "--as", "ada", "--score", "1=4", "--score", "2=4",
                 "--score", "3=1")
    assert r.exit_code != 0
    assert "item 1 (Names [b]app.py[/b]): score 4 is not one of the allowed scores [0, 3, 5]" in r.output
    r = proj.run("judgments", "human", proj.answers[0], "--as", "ada", "--score", "1=3")
    assert r.exit_code != 0 and "missing: item 2, 3" in r.output
    r = proj.run("judgments", "human", "--as", "ada")
    assert r.exit_code != 0 and "ANSWER_ID" in r.output
    assert proj.rows("SELECT count(*) FROM judgments WHERE judge = 'human'") == [(0,)]


def test_judgments_human_from_a_file_is_all_or_nothing(proj):
    f = proj.dir / "human.jsonl"
    good = {"answer_id": proj.answers[0], "scores": {"1": 5, "2": 4, "3": 1}, "rationales": {"1": "ok"}}
    bad = {"answer_id": proj.answers[1], "annotator": "bob", "scores": {"1": 1, "2": 4, "3": 1}}
    f.write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n")
    r = proj.run("judgments", "human", "--file", str(f), "--as", "ada")
    assert r.exit_code != 0 and f"{f}, line 3: " in r.output and "item 1" in r.output
    assert proj.rows("SELECT count(*) FROM judgments WHERE judge = 'human'") == [(0,)]
    f.write_text(json.dumps(good) + "\n" + json.dumps({**bad, "scores": {"1": 0, "2": 4, "3": 1}}) + "\n")
    r = proj.run("judgments", "human", "--file", str(f), "--as", "ada")
    assert r.exit_code == 0, r.output
    assert proj.rows("SELECT judge_model FROM judgments WHERE judge = 'human' ORDER BY id") == [("ada",), ("bob",)]
    f.write_text('{"answer_id": 3}\nnot json\n')
    r = proj.run("judgments", "human", "--file", str(f), "--as", "ada")
    assert r.exit_code != 0 and "line 1, field 'answer_id'" in r.output and "line 2: not JSON" in r.output


def test_the_report_is_unchanged_by_human_judgments_unless_asked(proj):
    before, after, human = (proj.dir / f"{n}.json" for n in ("before", "after", "human"))
    r = proj.run("report", "--json", str(before))
    assert r.exit_code == 0, r.output
    for aid in proj.answers:
        assert proj.run("judgments", "human", aid, "--as", "ada", "--score", "1=0", "--score", "2=0",
                        "--score", "3=0").exit_code == 0
    again = proj.run("report", "--json", str(after))
    # every table of the judges is as it was (the calibration summary against the humans may follow them)
    assert again.output.startswith(r.output.rsplit("wrote ", 1)[0])
    data = json.loads(after.read_text())
    assert "judge_calibration" in data  # the calibration against the humans is added; the rest is unchanged
    assert {k: v for k, v in data.items() if k != "judge_calibration"} == json.loads(before.read_text())
    assert proj.run("report", "--judge", "human", "--json", str(human)).exit_code == 0
    assert '"human"' in human.read_text() and '"human"' not in before.read_text()
