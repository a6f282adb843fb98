"""``benchwright calibrate`` and ``benchwright items`` end to end on a scratch project whose answers and judge
scores are imported with ``answers import`` (judge ``imported``, two dimensions on a 0-10 scale, so a record's
score rate is its score / 10).

Closed-book answers (the hand-computed table of tests/core/test_calibration.py, rates x 10):

    q      A   B   C        z_A  z_B  z_C   mean z
    q1     6   7   7         0    1    1     2/3    too easy at 0.5 (mean-z)
    q2     8   7   7         2    1    1     4/3    too easy (mean-z and all-z)
    q3     5   7   1        -1    1   -1    -1/3
    q4     5   3   1        -1   -1   -1    -1
    q5     6   3   1         0   -1   -1    -2/3
    q6     6   3   7         0   -1    1     0

Agentic answers of a planted panel for ``items``: q1 every model 10 (saturated), q2 every model 0 (unsolved),
q3 S 10 / M 5 / W 0 (separates), q4 S 0 / M 5 / W 10 (backwards: low discrimination), q5 and q6 fillers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.db import QueueFilter, Store
from benchwright.tui.cli import main

QUESTIONS = [f"Question {i}: how does part {i} of flask work?" for i in range(1, 7)]
CLOSED = {"A": [6, 8, 5, 5, 6, 6], "B": [7, 7, 7, 3, 3, 3], "C": [7, 7, 1, 1, 1, 7]}
AGENTIC = {"S": [10, 0, 10, 0, 9, 8], "M": [10, 0, 5, 5, 5, 6], "W": [10, 0, 0, 10, 1, 2]}
HOSTILE = "[bold]m[/bold]\x1b[31m"


class Project:
    def __init__(self, tmp_path: Path):
        self.dir = tmp_path
        self.db = tmp_path / "p.db"
        assert self.run("init").exit_code == 0
        pairs = tmp_path / "pairs.jsonl"
        pairs.write_text("".join(json.dumps({"question": q, "answer": "A reference.", "qa_type": "How"}) + "\n"
                                 for q in QUESTIONS), encoding="utf-8")
        (tmp_path / "code").mkdir()
        assert self.run("repos", "add", "demo", str(tmp_path / "code"), "--version", "1.0").exit_code == 0
        r = self.run("pairs", "import", "jsonl", str(pairs), "--repo", "demo")
        assert r.exit_code == 0, r.output
        with Store.open(self.db) as store:
            self.ids = store.filtered_pair_ids("x")

    def run(self, *args: str):
        return CliRunner(env={"COLUMNS": "200"}).invoke(main, ["--db", str(self.db), *args],
                                                        catch_exceptions=False)

    def answers(self, model: str, condition: str, scores: list[int]) -> None:
        f = self.dir / f"answers-{len(list(self.dir.iterdir()))}.jsonl"
        f.write_text("".join(json.dumps({"question": q, "answer": f"{model} answer {s}",
                                         "scores": {"correctness": s, "completeness": s}}) + "\n"
                             for q, s in zip(QUESTIONS, scores, strict=True)), encoding="utf-8")
        r = self.run("answers", "import", str(f), "--model", model, "--condition", condition, "--scale", "10",
                     "--judge-model", "jm", "--as", "t")
        assert r.exit_code == 0, r.output

    def where(self, **kw) -> list[int]:
        with Store.open(self.db) as store:
            return [self.ids.index(p) + 1 for p in store.filtered_pair_ids("x", QueueFilter(**kw))]


@pytest.fixture
def project(tmp_path, cli_env):
    p = Project(tmp_path)
    for model, scores in CLOSED.items():
        p.answers(model, "closed-book", scores)
    return p


def test_calibrate_stores_values_decisions_and_prints_the_summary(project):
    r = project.run("calibrate", "--models", "A,B,C", "--judge", "imported", "--rule", "mean-z", "--as", "t")
    assert r.exit_code == 0, r.output
    assert "calibration run 1: 6 pairs, rule mean-z, threshold 0.5" in r.output
    assert re.search(r"A\s+│\s+6\s+│\s+0\.600\s+│\s+0\.100", r.output)
    assert re.search(r"C\s+│\s+6\s+│\s+0\.400\s+│\s+0\.300", r.output)
    assert "too easy 2 · kept 4 · insufficient 0" in r.output
    assert "--where difficulty=too-easy" in r.output
    # the histogram: q4 at -1, q3 and q5 in [-0.5, 0) / [-1, -0.5), q6 at exactly 0
    assert re.search(r"\[0, 0\.5\) █+ 1", r.output) and re.search(r"\[1, 1\.5\) █+ 1", r.output)
    with Store.open(project.db) as store:
        run = store.latest_calibration()
    assert run.judge == "imported" and run.judge_model == "jm" and run.condition == "closed-book"
    assert run.result.rule == "mean-z" and run.result.min_models == 3
    assert run.result.model_stats["B"].sd == pytest.approx(0.2)
    by = {project.ids.index(p.qa_pair_id) + 1: p for p in run.result.pairs}
    assert by[2].scores["A"].z == pytest.approx(2.0) and by[2].mean_z == pytest.approx(4 / 3)
    assert project.where(difficulty="too-easy") == [1, 2]
    assert project.where(difficulty="kept") == [3, 4, 5, 6]
    assert project.where(difficulty="uncalibrated") == []


def test_a_later_run_decides_and_show_prints_it_again(project):
    assert project.run("calibrate", "--as", "t").exit_code == 0
    r = project.run("calibrate", "--rule", "all-z", "--threshold", "1", "--as", "t")
    assert "calibration run 2" in r.output and "too easy 1 · kept 5" in r.output  # the tie: q2's min z is 1
    assert project.where(difficulty="too-easy") == [2]
    lines = r.output.split("min z over the models (all-z decides on it), 6 decided pairs:\n")[1].splitlines()[:10]
    bins = {m.group(1): int(m.group(2)) for m in (re.match(r"\s+(.+?) [█ ]*?(\d+)$", x) for x in lines)}
    assert bins["[-1, -0.5)"] == 4 and bins["[0, 0.5)"] == 1 and bins["[1, 1.5)"] == 1  # min z: -1 x4, 0, 1
    shown = project.run("calibrate", "show")
    assert "calibration run 2 (" in shown.output and "rule all-z, threshold 1" in shown.output
    assert "too easy 1 · kept 5" in shown.output
    assert project.run("calibrate", "--show").output == shown.output


def test_dry_run_stores_nothing(project):
    r = project.run("calibrate", "--dry-run", "--as", "t")
    assert r.exit_code == 0 and "dry run (nothing stored)" in r.output
    assert "no calibration run yet" in project.run("calibrate", "show").output
    assert project.where(difficulty="uncalibrated") == [1, 2, 3, 4, 5, 6]


def test_where_limits_the_pairs_and_min_models_decides_the_insufficient(project, tmp_path):
    r = project.run("calibrate", "--where", "text=Question 1:", "--as", "t")
    assert r.exit_code == 0, r.output
    assert "1 pair," in r.output
    assert "insufficient 1" in r.output  # standardised over the run's one pair: no spread, so no z-scores
    r = project.run("calibrate", "--where", "text=no such words", "--as", "t")
    assert r.exit_code == 1 and "--where matches no pair" in r.output
    r = project.run("items", "--where", "text=Question 1:", "--condition", "agentic", "--as", "t")
    assert r.exit_code == 1 and "no judged answers to the 1 pair --where selects under agentic" in r.output
    d = tmp_path / "d.jsonl"
    d.write_text(json.dumps({"question": QUESTIONS[0], "answer": "x", "scores": {"correctness": 1}}) + "\n")
    assert project.run("answers", "import", str(d), "--model", "D", "--condition", "direct", "--scale", "10",
                       "--judge-model", "jm", "--as", "t").exit_code == 0
    r = project.run("calibrate", "--models", "A,B,C,D", "--as", "t")
    assert "insufficient 6" in r.output  # D has one pair: no sd, so no pair has 4 z-scores
    r = project.run("calibrate", "--models", "A,B,C,D", "--min-models", "3", "--as", "t")
    assert "too easy 1 · kept 5 · insufficient 0" in r.output  # the default all-z: q2, every model's z >= 0.5


def test_unknown_models_and_judges_are_refused_listing_what_exists(project):
    r = project.run("calibrate", "--models", "A,nobody", "--as", "t")
    assert r.exit_code == 1
    assert "model(s) nobody" in r.output and "A (closed-book) judged by imported / jm: 6 answers" in r.output
    r = project.run("calibrate", "--judge", "swe-qa-pro", "--as", "t")
    assert r.exit_code == 1 and "judged by swe-qa-pro" in r.output and "B (closed-book)" in r.output
    r = project.run("calibrate", "--min-models", "4", "--as", "t")
    assert r.exit_code == 1 and "between 1 and the 3 models" in r.output
    r = project.run("calibrate", "--threshold", "nan", "--as", "t")
    assert r.exit_code == 1 and "not a finite number" in r.output
    assert "Traceback" not in r.output


def test_a_project_without_answers_says_how_to_get_them(tmp_path, cli_env):
    p = Project(tmp_path)
    r = p.run("calibrate", "--as", "t")
    assert r.exit_code == 1 and "No answers are stored" in r.output and "answers generate" in r.output
    r = p.run("items", "--as", "t")
    assert r.exit_code == 1 and "No answers are stored" in r.output


def test_items_over_a_planted_panel(project, tmp_path):
    for model, scores in AGENTIC.items():
        project.answers(model, "agentic", scores)
    assert project.run("calibrate", "--rule", "mean-z", "--as", "t").exit_code == 0
    out = tmp_path / "items.json"
    r = project.run("items", "--json", str(out), "--as", "t")
    assert r.exit_code == 0, r.output
    assert "note: condition agentic" in r.output  # the repository condition is the default
    assert "items run 1: 6 pairs over 3 models (M, S, W)" in r.output
    assert "saturated 1 · unsolved 1 · closed-book-solvable 2" in r.output
    assert project.where(item="saturated") == [1]
    assert project.where(item="unsolved") == [2]
    assert project.where(item="closed-book-solvable") == [1, 2]
    assert 4 in project.where(item="low-discrimination") and 3 not in project.where(item="low-discrimination")
    data = json.loads(out.read_text())
    rows = {row["position"]: row for row in data["items"]}
    assert rows[3]["discrimination"] > 0.9 and rows[4]["discrimination"] < -0.9
    assert rows[1]["question"] == QUESTIONS[0] and data["thresholds"]["high"] == 0.9
    with Store.open(project.db) as store:
        run = store.latest_item_stats()
    assert run.condition == "agentic" and run.params["high"] == 0.9 and run.counts["saturated"] == 1
    r = project.run("items", "--condition", "closed-book", "--high", "0.8", "--as", "t")
    assert "items run 2" in r.output and "high 0.8" in r.output
    with Store.open(project.db) as store:
        assert store.latest_item_stats().params["high"] == 0.8
    # a minimum of models no pair can reach (3 in the panel) is refused, and nothing is stored
    r = project.run("items", "--min-models", "4", "--as", "t")
    assert r.exit_code == 1 and "--min-models 4 is more than the 3 models of the panel" in r.output
    with Store.open(project.db) as store:
        assert store.latest_item_stats().params["high"] == 0.8


def test_hostile_model_names_print_literally(project):
    project.answers(HOSTILE, "closed-book", [1, 2, 3, 4, 5, 6])
    r = project.run("calibrate", "--as", "t")
    assert r.exit_code == 0
    assert "[bold]m[/bold]" in r.output and "\x1b" not in r.output
    r = project.run("calibrate", "--models", "[bold]x[/]", "--as", "t")
    assert r.exit_code == 1 and "[bold]x[/]" in r.output


def test_report_gains_a_calibration_section_only_when_a_run_exists(project, tmp_path):
    before = project.run("report")
    assert before.exit_code == 0 and "Difficulty calibration" not in before.output
    assert project.run("report", "--json", str(tmp_path / "a.json")).exit_code == 0
    assert "calibration" not in json.loads((tmp_path / "a.json").read_text())
    assert project.run("calibrate", "--as", "t").exit_code == 0  # the defaults: all-z at 0.5
    after = project.run("report", "--json", str(tmp_path / "b.json"))
    assert after.output.startswith(before.output.rsplit("\n", 1)[0])  # the report as it was, then the section
    section = after.output[len(before.output) - 1:]
    assert "Difficulty calibration (SWE-QA-Pro §2.3), run 1" in section and "rule all-z, threshold 0.5" in section
    assert "too easy 1 · kept 5 · insufficient 0" in section
    data = json.loads((tmp_path / "b.json").read_text())["calibration"]
    assert data["counts"] == {"too-easy": 1, "kept": 5, "insufficient": 0} and data["models"] == ["A", "B", "C"]
    assert sum(data["mean_z_histogram"].values()) == 6
    # under all-z the statistic the rule decides on is the minimum z: its histogram too, as calibrate prints it
    assert "min z over the models (all-z decides on it; decided pairs):" in section
    assert sum(data["min_z_histogram"].values()) == 6
    assert project.run("calibrate", "--rule", "mean-z", "--as", "t").exit_code == 0
    assert "min z over the models" not in project.run("report").output


def _accept_with_checklists(project, positions) -> None:
    from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item

    checklist = Checklist(items=[ChecklistItem(key_point="Names the module", weight=5, rubric=binary_rubric(5)),
                                 ChecklistItem(key_point="Explains the order", weight=4, rubric=binary_rubric(4)),
                                 clarity_item()])
    with Store.open(project.db) as store:
        for i in positions:
            pid = project.ids[i - 1]
            store.save_checklist(pid, checklist, author="ada", origin="edited")
            store.record_decision(pid, "ada", "accept")
            store.record_decision(pid, "bob", "accept")


def test_the_card_counts_difficulty_and_item_flags_and_a_rebuild_keeps_the_bytes(project, tmp_path):
    _accept_with_checklists(project, [1, 2, 3, 4])
    out = tmp_path / "rel"
    r = project.run("releases", "create", "plain", "--version", "1.0.0", "--out", str(out), "--as", "lead")
    assert r.exit_code == 0, r.output
    plain = out / "plain-1.0.0"
    assert "### Difficulty" not in (plain / "README.md").read_text()
    assert "difficulty" not in json.loads((plain / "manifest.json").read_text())

    for model, scores in AGENTIC.items():
        project.answers(model, "agentic", scores)
    assert project.run("calibrate", "--as", "t").exit_code == 0
    assert project.run("items", "--as", "t").exit_code == 0
    # the release made before the runs rebuilds byte for byte (its manifest had no difficulty figures)
    r = project.run("releases", "rebuild", "plain", "--version", "1.0.0", "--out", str(tmp_path / "again"))
    assert r.exit_code == 0, r.output
    for f in ("README.md", "manifest.json", "data/test.jsonl"):
        assert (plain / f).read_bytes() == (tmp_path / "again" / "plain-1.0.0" / f).read_bytes(), f

    r = project.run("releases", "create", "hard", "--version", "1.0.0", "--out", str(out), "--as", "lead")
    assert r.exit_code == 0, r.output
    folder = out / "hard-1.0.0"
    card = (folder / "README.md").read_text()
    assert "### Difficulty" in card
    assert "| too-easy | 1 |" in card and "| kept | 3 |" in card and "| uncalibrated | 0 |" in card
    assert "| saturated | 1 |" in card and "| unsolved | 1 |" in card and "| closed-book-solvable | 1 |" in card
    assert "rule `all-z` at threshold 0.500" in card
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["difficulty"]["calibration"]["counts"]["too-easy"] == 1
    assert manifest["difficulty"]["items"]["thresholds"]["high"] == 0.9
    assert project.run("releases", "verify", str(folder)).exit_code == 0
    # a later calibration changes no byte of the recorded release's rebuild
    assert project.run("calibrate", "--rule", "all-z", "--threshold", "3", "--as", "t").exit_code == 0
    r = project.run("releases", "rebuild", "hard", "--version", "1.0.0", "--out", str(tmp_path / "again2"))
    assert r.exit_code == 0, r.output
    assert (folder / "README.md").read_bytes() == (tmp_path / "again2" / "hard-1.0.0" / "README.md").read_bytes()


def test_a_huge_model_name_is_cut_in_every_message(project):
    huge = "m" * 200_000
    project.answers(huge, "closed-book", [1, 2, 3, 4, 5, 6])
    for args in (("calibrate", "--as", "t"), ("calibrate", "--models", "A,nobody", "--as", "t"),
                 ("items", "--as", "t")):
        r = project.run(*args)
        assert huge[:80] + "…" in r.output or "nobody" in r.output, args
        assert len(r.output) < 60_000, (args, len(r.output))
    section = project.run("report").output.split("Difficulty calibration (SWE-QA-Pro §2.3)")[1]
    assert huge not in section.replace("\n", "") and len(section) < 5_000  # the report's own tables are not ours
