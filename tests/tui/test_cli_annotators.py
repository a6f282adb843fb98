"""Several annotators on the command line: assign, blind, agreement (tables and JSON, with kappa computed by
hand), adjudication list / accept-unanimous, adjudicate, history, merge, and bad pair references."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.checklist import Checklist, ChecklistItem, ItemKind, binary_rubric, clarity_item
from benchwright.core.review import Criteria, Verdict
from benchwright.db import Store
from benchwright.db.merge import copy_project
from benchwright.tui.cli import main

QUESTIONS = [f"How does step {i} of the request cycle work?" for i in range(1, 6)]


def checklist(*weights: int, tag: str = "") -> Checklist:
    return Checklist(items=[
        *(ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=f"point {n}{tag}", weight=w, rubric=binary_rubric(w))
          for n, w in enumerate(weights, start=1)),
        clarity_item(),
    ])


def verdicts(**v: str) -> Criteria:
    return Criteria(verdicts={**Criteria().verdicts, **{k: Verdict(x) for k, x in v.items()}})


class Project:
    """``init``, ``repo add flask DIR --version 1`` and ``import jsonl`` of five pairs, through the CLI."""

    def __init__(self, tmp_path: Path):
        self.dir = tmp_path
        self.db = tmp_path / "project.db"
        (tmp_path / "flask-src").mkdir()
        assert self.run("init").exit_code == 0
        r = self.run("repos", "add", "flask", str(tmp_path / "flask-src"), "--version", "1")
        assert r.exit_code == 0, r.output
        data = tmp_path / "pairs.jsonl"
        data.write_text("".join(json.dumps({"question": q, "answer": f"Answer {i}."}) + "\n"
                                for i, q in enumerate(QUESTIONS, start=1)), encoding="utf-8")
        r = self.run("pairs", "import", "jsonl", str(data), "--repo", "flask", "--as", "setup")
        assert r.exit_code == 0 and "added 5 Q&A pairs" in r.output, r.output
        with self.store() as s:
            self.ids = [row.id for row in s.queue_page("setup")]
        assert len(self.ids) == 5

    def run(self, *args: str, db: Path | None = None):
        return CliRunner().invoke(main, ["--db", str(db or self.db), *args], env={"COLUMNS": "250"})

    def store(self, db: Path | None = None) -> Store:
        return Store.open(db or self.db, create=False)

    def count(self, table: str, db: Path | None = None) -> int:
        with sqlite3.connect(db or self.db) as conn:
            return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.delenv("BENCHWRIGHT_DB", raising=False)
    monkeypatch.delenv("BENCHWRIGHT_ANNOTATOR", raising=False)
    return Project(tmp_path)


def rated(project: Project) -> Project:
    """Four pairs rated by ada and bob (the fifth by nobody):

    ========  ======  ======  ==============  ==============
    pair      ada     bob     qa_consistency  (ada / bob)
    ========  ======  ======  ==============  ==============
    #1        accept  accept  pass / pass
    #2        accept  reject  pass / pass
    #3        reject  reject  fail / fail
    #4        reject  reject  fail / fail
    ========  ======  ======  ==============  ==============

    Decision, Cohen's kappa by hand: observed p_o = 3/4; ada says accept 2/4, bob 1/4, so chance
    p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2 and kappa = (3/4 - 1/2) / (1 - 1/2) = 0.5.
    Fleiss: category shares accept 3/8, reject 5/8, P_e = 9/64 + 25/64 = 34/64; mean item agreement 3/4;
    kappa = (3/4 - 34/64) / (1 - 34/64) = 7/15.
    Krippendorff (nominal): 8 values, 3 accept, 5 reject; disagreeing pairable values 2 of 8, so
    D_o = 1/4; D_e = 2 * 3 * 5 / (8 * 7) = 15/28; alpha = 1 - (1/4) / (15/28) = 8/15.
    qa_consistency agrees everywhere with both labels used: kappa = 1.
    """
    decisions = [("accept", "accept"), ("accept", "reject"), ("reject", "reject"), ("reject", "reject")]
    qa = ["pass", "pass", "fail", "fail"]
    with project.store() as s:
        for pid, (a, b), v in zip(project.ids, decisions, qa, strict=False):
            s.record_decision(pid, "ada", a, criteria=verdicts(qa_consistency=v))
            s.record_decision(pid, "bob", b, criteria=verdicts(qa_consistency=v))
    return project


# ------------------------------------------------------------------------------------------------ assign
def test_assign_prints_balanced_loads_and_blind_mode(project):
    r = project.run("assign", "--annotators", "ada,bob,cy", "--overlap", "2", "--seed", "4", "--as", "lead")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    loads = dict(line.split("\t") for line in lines[:3])
    assert set(loads) == {"ada", "bob", "cy"}
    assert sorted(int(v.split()[0]) for v in loads.values()) == [3, 3, 4]  # 5 pairs x 2 = 10
    assert lines[3] == "overlap 2, seed 4; blind mode on"
    assert project.count("assignments") == 10
    with project.store() as s:
        assert s.blind_mode
        assert all(len(s.assignees(pid)) == 2 for pid in project.ids)
    # the same seed gives the same loads; the blind command turns it off
    assert project.run("assign", "--annotators", "ada,bob,cy", "--overlap", "2", "--seed", "4").output == r.output
    r = project.run("blind", "off", "--as", "lead")
    assert r.exit_code == 0 and r.output == "blind mode off\n"
    r = project.run("assign", "--annotators", "ada, bob", "--overlap", "1")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert [line.split("\t")[0] for line in lines[:2]] == ["ada", "bob"]  # names stripped
    assert sorted(line.split("\t")[1] for line in lines[:2]) == ["2 pairs", "3 pairs"]
    assert lines[2:] == ["overlap 1, seed 0; blind mode off"]
    assert project.count("assignments") == 5


@pytest.mark.parametrize(("args", "message"), [
    (["--annotators", "ada,bob", "--overlap", "3"], "overlap must be between 1 and the number of annotators (2)"),
    (["--annotators", "ada,ada"], "named twice"),
    (["--annotators", "ada,", "--overlap", "1"], "non-empty"),
])
def test_assign_refuses_bad_input(project, args, message):
    project.run("assign", "--annotators", "x,y", "--overlap", "1")
    r = project.run("assign", *args)
    assert r.exit_code == 1 and r.output.startswith("error: ") and message in r.output
    assert "Traceback" not in r.output
    assert project.count("assignments") == 5  # the earlier assignment stays


def test_assign_refuses_a_seed_beyond_64_bits(project):
    r = project.run("assign", "--annotators", "ada,bob", "--seed", str(2**63))
    assert r.exit_code == 2 and "--seed" in r.output, r.output
    assert project.count("assignments") == 0


# --------------------------------------------------------------------------------------------- agreement
def test_agreement_json_has_hand_computed_figures(project):
    rated(project)
    r = project.run("agreement", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert list(data) == ["reviews", "checklists"]
    assert list(data["reviews"]) == ["decision", "qa_consistency", "checklist_quality", "task_validity",
                                     "code_relevance"]
    decision = data["reviews"]["decision"]
    assert decision["n_items"] == 4 and decision["annotators"] == ["ada", "bob"]
    [cohen] = decision["cohen"]
    assert (cohen["annotator_a"], cohen["annotator_b"], cohen["n_items"]) == ("ada", "bob", 4)
    assert cohen["kappa"] == pytest.approx(0.5)
    assert cohen["observed_agreement"] == pytest.approx(0.75)
    assert decision["fleiss"]["value"] == pytest.approx(7 / 15)
    assert decision["fleiss"]["n_items"] == 4 and decision["fleiss"]["n_raters"] == 2
    assert decision["krippendorff"]["value"] == pytest.approx(8 / 15)
    assert data["reviews"]["qa_consistency"]["cohen"][0]["kappa"] == pytest.approx(1.0)
    unjudged = data["reviews"]["task_validity"]
    assert unjudged["n_items"] == 0 and unjudged["cohen"][0]["kappa"] is None
    assert unjudged["fleiss"]["value"] is None
    assert data["checklists"]["n_pairs"] == 0 and data["checklists"]["match_rate"] is None


def test_agreement_tables(project):
    rated(project)
    with project.store() as s:
        s.save_checklist(project.ids[0], checklist(5, 4), author="ada")
        s.save_checklist(project.ids[0], checklist(6, 3), author="bob")
    r = project.run("agreement")
    assert r.exit_code == 0, r.output
    assert "Agreement of reviews" in r.output
    assert "Cohen's kappa" in r.output and "Fleiss' kappa" in r.output and "Krippendorff's alpha" in r.output
    decision_row = next(line for line in r.output.splitlines() if "decision" in line)
    assert "ada-bob 0.500 (n=4)" in decision_row
    assert "0.467 (n=4)" in decision_row and "0.533 (n=4)" in decision_row
    qa_row = next(line for line in r.output.splitlines() if "qa_consistency" in line)
    assert "ada-bob 1.000 (n=4)" in qa_row
    assert "Checklists edited by two or more annotators: 1 pair; key points matched 4/4 (1.000)" in r.output
    data = json.loads(project.run("agreement", "--json").output)
    assert (data["checklists"]["n_pairs"], data["checklists"]["n_key_points"], data["checklists"]["n_matched"]) == (
        1, 4, 4)
    assert data["checklists"]["weight_alpha"]["n_items"] == 2


def test_agreement_of_an_empty_project(project):
    r = project.run("agreement")
    assert r.exit_code == 0 and "n/a" in r.output
    data = json.loads(project.run("agreement", "--json").output)
    assert data["reviews"]["decision"]["n_items"] == 0


# ------------------------------------------------------------------------------------------ adjudication
def test_adjudication_list_accept_unanimous_adjudicate_history(project):
    rated(project)
    p1, p2, p3 = project.ids[:3]
    r = project.run("adjudication", "list")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [f"#2\t{p2}\tdecision\tada, bob", "1 pair awaits adjudication"]

    r = project.run("adjudication", "accept-unanimous", "--as", "lead")
    assert r.exit_code == 0 and r.output == "adjudicated 3 unanimous pairs\n"
    with project.store() as s:
        assert s.adjudication_of(p1).decision == "accept"
        assert s.adjudication_of(p3).decision == "reject"
        assert s.adjudication_of(p2) is None
    assert project.run("adjudication", "accept-unanimous", "--as", "lead").output == "adjudicated 0 unanimous pairs\n"

    # bob's and ada's differing checklist edits on #2; the adjudicator takes bob's
    with project.store() as s:
        s.save_checklist(p2, checklist(5, 4, tag=" (ada)"), author="ada")
        s.save_checklist(p2, checklist(3, 3, 3, tag=" (bob)"), author="bob")
    r = project.run("adjudication", "list")
    assert r.output.splitlines()[0] == f"#2\t{p2}\tdecision, checklist\tada, bob"
    r = project.run("adjudication", "decide", "#2", "--decision", "reject", "--reason", "bob is right",
                    "--checklist-from", "bob", "--as", "lead")
    assert r.exit_code == 0, r.output
    assert r.output == f"{p2}: reject (bob is right), checklist version 3\n"
    with project.store() as s:
        v = s.checklist_version(p2)
        assert (v.version, v.origin, v.author) == (3, "adjudicated", "lead")
        assert v.checklist == checklist(3, 3, 3, tag=" (bob)")
    r = project.run("adjudication", "list")
    assert r.exit_code == 0 and r.output == "0 pairs await adjudication\n"

    r = project.run("pairs", "history", "2")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    kinds = [line.split("\t")[2] for line in lines]
    assert kinds == ["review", "review", "checklist", "checklist", "checklist", "adjudication"]
    assert [line.split("\t")[1] for line in lines] == ["ada", "bob", "ada", "bob", "lead", "lead"]
    assert lines[0].endswith('{"decision": null} -> {"decision": "accept", "criteria": {"checklist_quality": '
                             '{"note": "", "verdict": null}, "code_relevance": {"note": "", "verdict": null}, '
                             '"qa_consistency": {"note": "", "verdict": "pass"}, "task_validity": {"note": "", '
                             '"verdict": null}}, "notes": null, "reverts": null}')
    assert '"reason": "bob is right"' in lines[-1] and '"checklist_version": 3' in lines[-1]
    assert lines[-1].split("\t")[3].startswith("null -> ")


def test_adjudicate_errors_and_exit_codes(project):
    rated(project)
    p2 = project.ids[1]
    before = project.count("adjudications")
    r = project.run("adjudication", "decide", "#2", "--decision", "accept", "--reason", "   ")
    assert r.exit_code == 1 and "error: an adjudication needs a reason" in r.output
    r = project.run("adjudication", "decide", "#2", "--decision", "accept", "--reason", "x", "--checklist-from", "cy")
    assert r.exit_code == 1 and f"error: cy has not edited the checklist of {p2}" in r.output
    r = project.run("adjudication", "decide", "#2", "--decision", "maybe", "--reason", "x")
    assert r.exit_code == 2  # click usage error
    r = project.run("adjudication", "decide", "#2", "--reason", "x")
    assert r.exit_code == 2
    assert project.count("adjudications") == before
    r = project.run("adjudication", "decide", p2, "--decision", "accept", "--reason", "fine", "--as", "lead")
    assert r.exit_code == 0 and r.output == f"{p2}: accept (fine)\n"


@pytest.mark.parametrize("command", [
    ["pairs", "history", "#999"],
    ["adjudication", "decide", "#999", "--decision", "accept", "--reason", "x"],
    ["checklists", "history", "#999"],
])
def test_unknown_pair_exits_1(project, command):
    r = project.run(*command)
    assert r.exit_code == 1
    assert r.output == "error: no Q&A pair at position #999\n"


def test_history_by_id_and_unknown_id(project):
    with project.store() as s:
        s.record_decision(project.ids[0], "ada", "skip")
        s.add_note(project.ids[0], "ada", "later")
    r = project.run("pairs", "history", project.ids[0])
    assert r.exit_code == 0
    assert [line.split("\t")[2] for line in r.output.splitlines()] == ["skip", "note"]
    assert r.output.splitlines()[1].endswith('{"text": null} -> {"text": "later"}')
    r = project.run("pairs", "history", "qa_0000")
    assert r.exit_code == 1 and "no Q&A pair with id qa_0000" in r.output


# ------------------------------------------------------------------------------------------------ merge
def test_merge_twice_adds_nothing_the_second_time(project):
    offline = project.dir / "laptop.db"
    with project.store() as s:
        s.save_checklist(project.ids[0], checklist(5, 4), author="generator", origin="generated")
    copy_project(project.db, offline)
    with project.store(offline) as off:
        off.record_decision(project.ids[0], "bob", "accept")
        off.record_decision(project.ids[1], "bob", "reject")
        off.add_note(project.ids[0], "bob", "seen offline")
        off.save_checklist(project.ids[0], checklist(3, 3, 3), author="bob", expected_version=1)
    with project.store() as s:
        s.record_decision(project.ids[0], "ada", "reject")
        s.save_checklist(project.ids[0], checklist(4, 5), author="ada", expected_version=1)
    offline_bytes = offline.read_bytes()
    r = project.run("merge", str(offline))
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == f"merged {offline}: 2 review decisions, 1 review note, 1 checklist version"
    assert lines[1].startswith(f"  conflict: {project.ids[0]}: their checklist version 2 by bob differs")
    assert lines[1].endswith("added as version 3")
    assert len(lines) == 2
    counts = {t: project.count(t) for t in ("review_decisions", "review_notes", "checklist_versions", "events")}
    r = project.run("merge", str(offline))
    assert r.exit_code == 0 and r.output == f"merged {offline}: nothing new\n"
    assert {t: project.count(t) for t in counts} == counts
    assert offline.read_bytes() == offline_bytes
    r = project.run("adjudication", "list")
    assert r.output.splitlines()[0] == f"#1\t{project.ids[0]}\tdecision, checklist\tada, bob"


def test_merge_of_a_non_project_file_exits_1(project):
    bad = project.dir / "notes.db"
    bad.write_text("hello\n" * 100)
    r = project.run("merge", str(bad))
    assert r.exit_code == 1
    assert r.output.startswith(f"error: {bad}: not a benchwright project")
    r = project.run("merge", str(project.dir / "missing.db"))
    assert r.exit_code == 1 and "missing.db: no such project file" in r.output


def test_agreement_without_variance_says_undefined_with_percent_agreement(project):
    """Issue 12 item 11: ada and bob accept everything: every kappa is 0/0, shown as "undefined (no
    variance)" with 100% agreement, never a bare n/a."""
    with project.store() as s:
        for pid in project.ids[:3]:
            s.record_decision(pid, "ada", "accept")
            s.record_decision(pid, "bob", "accept")
    r = project.run("agreement")
    assert r.exit_code == 0, r.output
    row = next(line for line in r.output.splitlines() if "decision" in line)
    assert "ada-bob undefined (no variance; 100.0% agreement) (n=3)" in row
    assert row.count("undefined (no variance; 100.0% agreement)") == 3 and "n/a" not in row
