"""The QA pass on the command line: assign --sample / --fraction / --stratify-by / --where, and qa-report
(tables, --json, --csv) with exact numbers; errors exit 1 without a traceback; names print literally."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.review import Criteria, Verdict
from benchwright.db import Store
from benchwright.tui.cli import main

HOSTILE = "[bold]eve[/] [@click=quit] \x1b[31mred"


class Project:
    """flask (6 pairs, categories A/B) and click (3 pairs, no category), imported through the CLI."""

    def __init__(self, tmp_path: Path):
        self.db = tmp_path / "project.db"
        assert self.run("init").exit_code == 0
        for repo in ("flask", "click"):
            (tmp_path / repo).mkdir()
            assert self.run("repos", "add", repo, str(tmp_path / repo), "--version", "1").exit_code == 0
        for repo, n, cats in (("flask", 6, ["A", "A", "A", "A", "B", "B"]), ("click", 3, [None] * 3)):
            data = tmp_path / f"{repo}.jsonl"
            data.write_text("".join(json.dumps({"question": f"How does {repo} step {i} work?", "answer": f"Ans {i}.",
                                                **({"category": c} if c else {})}) + "\n"
                                    for i, c in enumerate(cats, start=1)), encoding="utf-8")
            r = self.run("pairs", "import", "jsonl", str(data), "--repo", repo, "--map", "category=category",
                         "--as", "setup")
            assert r.exit_code == 0 and f"added {n} Q&A pairs" in r.output, r.output
        with Store.open(self.db, create=False) as s:
            rows = s.queue_page("setup")
            self.ids = [row.id for row in rows]
            self.repo = {row.id: row.repository for row in rows}

    def run(self, *args: str):
        return CliRunner().invoke(main, ["--db", str(self.db), *args], env={"COLUMNS": "250"})

    def assigned(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        with sqlite3.connect(self.db) as conn:
            for pid, who in conn.execute("SELECT qa_pair_id, annotator FROM assignments ORDER BY annotator"):
                out.setdefault(pid, []).append(who)
        return out


@pytest.fixture
def project(tmp_path, cli_env):
    return Project(tmp_path)


# ------------------------------------------------------------------------------------------- assign
def test_assign_a_stratified_sample(project):
    r = project.run("assign", "--annotators", "ada,bob", "--sample", "3", "--stratify-by", "repository",
                    "--seed", "5", "--as", "lead")
    assert r.exit_code == 0, r.output
    # quotas 2.0 (flask 6/9 of 3) and 1.0 (click)
    assert "QA sample: 3 pairs of 9" in r.output
    assert "repository click\t1 of 3" in r.output and "repository flask\t2 of 6" in r.output
    assigned = project.assigned()
    assert len(assigned) == 3 and all(v == ["ada", "bob"] for v in assigned.values())
    assert sorted(project.repo[p] for p in assigned) == ["click", "flask", "flask"]
    again = project.run("assign", "--annotators", "ada,bob", "--sample", "3", "--stratify-by", "repository",
                        "--seed", "5", "--as", "lead")
    assert again.output == r.output and project.assigned() == assigned
    samples = set()
    for seed in range(8):
        assert project.run("assign", "--annotators", "ada,bob", "--sample", "3", "--seed", str(seed)).exit_code == 0
        samples.add(frozenset(project.assigned()))
    assert len(samples) > 1  # the seed draws


def test_assign_a_fraction_of_the_pairs_where_selects_and_strata_without_a_value(project):
    r = project.run("assign", "--annotators", "ada", "--overlap", "1", "--fraction", "0.5", "--where",
                    "repository=FLASK", "--stratify-by", "category", "--seed", "1")
    assert r.exit_code == 0, r.output
    assert "QA sample: 3 pairs of 6" in r.output
    assert "category A\t2 of 4" in r.output and "category B\t1 of 2" in r.output
    assert {project.repo[p] for p in project.assigned()} == {"flask"}
    r = project.run("assign", "--annotators", "ada", "--overlap", "1", "--sample", "50", "--stratify-by", "category")
    assert "QA sample: 9 pairs of 9 (the pool has only 9)" in r.output
    assert "category (none)\t3 of 3" in r.output
    with Store.open(project.db, create=False) as s:
        assert s.assignment_parameters()["sample"]["stratify_by"] == "category"


@pytest.mark.parametrize(("args", "message"), [
    (("--stratify-by", "repository"), "give --sample N or --fraction F"),
    (("--where", "repository=flask"), "give --sample N or --fraction F"),
    (("--fraction", "1.5"), "between 0 and 1"),
    (("--sample", "-2"), "0 or more"),
    (("--sample", "2", "--fraction", "0.5"), "not both"),
    (("--sample", "2", "--where", "repository=django"), "no pair has it"),
])
def test_assign_refuses_bad_sample_options_and_keeps_the_assignment(project, args, message):
    assert project.run("assign", "--annotators", "ada", "--overlap", "1").exit_code == 0
    r = project.run("assign", "--annotators", "ada,bob", "--overlap", "1", *args)
    assert r.exit_code == 1, r.output
    assert message in r.output and "Traceback" not in r.output
    assert len(project.assigned()) == 9


# ------------------------------------------------------------------------------------------- qa-report
def _c(**v: str) -> Criteria:
    return Criteria(verdicts={**Criteria().verdicts, **{k: Verdict(x) for k, x in v.items()}})


def _decide(project: Project) -> None:
    """Sample: pairs 0, 1, 2 (flask) and 6 (click) for ada and bob; pair 4 reviewed by a hostile name alone.

    0: ada reject directly-answerable, bob reject task_validity (by default)   -> rejected
    1: ada accept, bob accept                                                  -> accepted
    2: ada reject code_relevance, bob accept                                   -> disagreement
    6: ada revise, bob -                                                       -> reviews pending
    4: HOSTILE reject directly-answerable (not sampled)                        -> rejected
    """
    with Store.open(project.db, create=False) as s:
        with s.write() as db:
            db.conn.executemany("INSERT INTO assignments (qa_pair_id, annotator, assigned_at, assigned_by, seed) "
                                "VALUES (?, ?, 't', 'lead', 9)",
                                [(project.ids[i], a) for i in (0, 1, 2, 6) for a in ("ada", "bob")])
        ok = _c(qa_consistency="pass", checklist_quality="pass", task_validity="pass", code_relevance="pass")
        ids = project.ids
        s.record_decision(ids[0], "ada", "reject", criteria=_c(), reason="directly-answerable")
        s.record_decision(ids[0], "bob", "reject", criteria=_c(qa_consistency="pass", task_validity="fail"))
        s.record_decision(ids[1], "ada", "accept", criteria=ok)
        s.record_decision(ids[1], "bob", "accept", criteria=ok)
        s.record_decision(ids[2], "ada", "reject", criteria=_c(code_relevance="fail"), reason="code_relevance")
        s.record_decision(ids[2], "bob", "accept", criteria=ok)
        s.record_decision(ids[6], "ada", "revise", criteria=_c(checklist_quality="fail"))
        s.record_decision(ids[4], HOSTILE, "reject", criteria=_c(), reason="directly-answerable")


def test_qa_report_numbers_in_json_and_csv(project, tmp_path):
    _decide(project)
    out = tmp_path / "qa.json"
    r = project.run("qa-report", "--json", str(out), "--csv", str(tmp_path / "csv"))
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text(encoding="utf-8"))
    every = data["all"]
    assert {k: every[k] for k in ("units", "accepted", "rejected", "to_revise", "decided", "undecided")} == {
        "units": 5, "accepted": 1, "rejected": 2, "to_revise": 0, "decided": 3, "undecided": 2}
    assert every["discard_rate"] == pytest.approx(2 / 3)
    assert every["reasons"] == {"task_validity": 1, "directly-answerable": 2}
    assert every["pending"] == {"reviews pending": 1, "unresolved disagreement": 1}
    sample = data["sample"]
    assert (sample["units"], sample["accepted"], sample["rejected"], sample["undecided"]) == (4, 1, 1, 2)
    assert sample["discard_rate"] == pytest.approx(1 / 2)
    assert data["by_repository"]["click"]["undecided"] == 1 and data["by_repository"]["flask"]["rejected"] == 2
    ada, bob = data["by_annotator"]["ada"], data["by_annotator"]["bob"]
    assert (ada["accepted"], ada["rejected"], ada["to_revise"], ada["undecided"]) == (1, 2, 1, 0)
    assert ada["reasons"] == {"code_relevance": 1, "directly-answerable": 1}
    assert (bob["accepted"], bob["rejected"], bob["undecided"], bob["units"]) == (2, 1, 1, 4)
    assert data["by_annotator"][HOSTILE]["rejected"] == 1
    assert every["criteria"]["task_validity"]["fail"] == {"accept": 0, "reject": 1, "revise": 0}
    assert every["criteria"]["qa_consistency"]["pass"] == {"accept": 3, "reject": 1, "revise": 0}
    assert data["assignment"] is None  # assigned by hand here, not by assign
    with open(tmp_path / "csv" / "summary.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["scope"], r["name"]) for r in rows][:4] == [("all", ""), ("sample", ""), ("repository", "click"),
                                                           ("repository", "flask")]
    assert rows[0]["rejected"] == "2" and rows[1]["discard_rate"] == "0.5"
    with open(tmp_path / "csv" / "reasons.csv", encoding="utf-8") as f:
        reasons = {(r["scope"], r["name"], r["reason"]): r["rejected"] for r in csv.DictReader(f)}
    assert reasons[("all", "", "directly-answerable")] == "2"
    assert reasons[("annotator", "ada", "code_relevance")] == "1"
    with open(tmp_path / "csv" / "criteria.csv", encoding="utf-8") as f:
        crit = list(csv.DictReader(f))
    assert len(crit) == 7 * 4 * 3  # 7 scopes (all, sample, 2 repositories, 3 annotators) x 4 criteria x 3 verdicts


def test_qa_report_tables_print_names_literally(project):
    _decide(project)
    r = project.run("qa-report")
    assert r.exit_code == 0, r.output
    assert "QA pass (final decisions" in r.output and "66.7%" in r.output and "50.0%" in r.output
    assert "directly answerable" in r.output and "undecided pairs: reviews pending 1; unresolved disagreement 1" in r.output
    assert "[bold]eve[/] [@click=quit] ␛[31mred" in r.output  # markup kept as typed, the escape made visible
    assert "\x1b" not in r.output
    stdout = project.run("qa-report", "--json", "-")
    assert json.loads(stdout.output)["all"]["units"] == 5


def test_qa_report_after_a_sampled_assign_and_on_an_empty_project(project):
    r = project.run("qa-report")
    assert r.exit_code == 0 and "nothing to report" in r.output
    project.run("assign", "--annotators", "ada,bob", "--sample", "4", "--stratify-by", "repository", "--seed", "2")
    r = project.run("qa-report")
    assert r.exit_code == 0, r.output
    assert "QA sample: 4 of 9 pairs (--sample 4, stratified by repository; seed 2; ada, bob; overlap 2)" in r.output
    data = json.loads(project.run("qa-report", "--json", "-").output)
    assert data["sample"]["units"] == 4 and data["sample"]["undecided"] == 4
    assert data["sample"]["pending"] == {"not reviewed": 4}
    r = project.run("qa-report", "--csv", str(project.db))  # a file where the folder should be
    assert r.exit_code != 0 and "Traceback" not in r.output


def test_long_and_hostile_names_are_cut_and_shown_literally(project):
    long_name = "n" * 1_000_000
    r = project.run("assign", "--annotators", f"{long_name},{HOSTILE}", "--overlap", "1", "--sample", "1")
    assert r.exit_code == 0, r.output[:500]
    assert len(r.output) < 2000 and "n" * 80 + "…" in r.output
    assert "[bold]eve[/] [@click=quit] ␛[31mred\t" in r.output and "\x1b" not in r.output
    r = project.run("qa-report")
    assert r.exit_code == 0 and len(r.output) < 20_000 and "\x1b" not in r.output
