"""``benchwright import answers``, ``answers list|show`` and ``override`` through click, on the real SWE-QA files.

What the real flask files hold (checked against the data, see /work/shared/data/README.md):

- ``Benchmark__flask.jsonl`` has 48 pairs whose questions are the REWRITTEN questions (identifiers hidden);
  its answers are the agent's answers.
- ``cursor_agent_unidentified_question__flask.jsonl`` has 47 runs. Their ``origin_question`` (the original
  wording) is in the categorized file, not in the Benchmark file, so against Benchmark pairs 0 match by
  ``origin_question`` and all 47 match by the fall-back ``question`` (the rewrite). Against the categorized
  file's pairs all 47 match by ``origin_question``.
- ``ErrorAnalysis__error_analysis.flask.jsonl`` has 4 records whose questions are Benchmark questions; scores
  go up to 19 (line 1, relevance) and ``rate == total / 100``, i.e. 5 dimensions of 0-20.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.tui.cli import main

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "swe-qa"
BENCHMARK = DATA / "Benchmark__flask.jsonl"
CATEGORIZED = DATA / "origin_question__generated_questions_flask_categorized.jsonl"
AGENT = DATA / "cursor_agent_unidentified_question__flask.jsonl"
ERRORS = DATA / "ErrorAnalysis__error_analysis.flask.jsonl"


def need(*paths: Path) -> None:
    for path in paths:
        if not path.exists():
            pytest.skip(f"real data {path} is absent (the shared data folder ../shared/data is not checked out here)")


class Project:
    def __init__(self, tmp_path: Path):
        self.dir = tmp_path
        self.db = tmp_path / "project.db"
        assert self.run("init").exit_code == 0

    def run(self, *args: str):
        return CliRunner().invoke(main, ["--db", str(self.db), *args])

    def answers(self, file: Path | str, *args: str):
        return self.run("answers", "import", str(file), "--as", "tester", *args)

    def rows(self, sql: str) -> list[tuple]:
        with sqlite3.connect(self.db) as conn:
            return conn.execute(sql).fetchall()

    def count(self, table: str) -> int:
        return self.rows(f"SELECT count(*) FROM {table}")[0][0]

    def file(self, name: str, *records: object) -> Path:
        path = self.dir / name
        path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
        return path


@pytest.fixture
def bench(tmp_path) -> Project:
    need(BENCHMARK)
    p = Project(tmp_path)
    r = p.run("pairs", "import", "swe-qa", str(BENCHMARK), "--as", "tester")
    assert r.exit_code == 0 and "added 48 Q&A pairs" in r.output
    return p


def test_agent_runs_match_benchmark_pairs_by_the_rewritten_question(bench):
    need(AGENT)
    r = bench.answers(AGENT, "--model", "cursor-agent", "--condition", "agentic")
    assert r.exit_code == 0, r.output
    assert "(swe-qa-agent): read 47 records, matched 47 (47 by question); added 47 answers by cursor-agent " \
           "under agentic" in r.output
    assert "not 'origin_question'" in r.output
    assert bench.count("answers") == 47
    # the trajectory is kept as JSON and viewable; the rewriting reason is in extra
    traj, extra = bench.rows("SELECT trajectory_json, extra_json FROM answers WHERE source_line = 1")[0]
    assert json.loads(traj)[0]["type"] == "result"
    assert json.loads(extra)["rewriting_reason"].startswith("The original question was compound")
    again = bench.answers(AGENT, "--model", "cursor-agent", "--condition", "agentic")
    assert again.exit_code == 0 and "added 0 answers" in again.output and "47 already in the project" in again.output
    assert bench.count("answers") == 47


def test_agent_runs_match_categorized_pairs_by_origin_question(tmp_path):
    need(CATEGORIZED, AGENT)
    p = Project(tmp_path)
    assert p.run("pairs", "import", "swe-qa-categorized", str(CATEGORIZED), "--as", "t").exit_code == 0
    r = p.answers(AGENT, "--model", "cursor-agent", "--condition", "agentic")
    assert r.exit_code == 0, r.output
    assert "matched 47 (47 by origin_question); added 47 answers" in r.output


def test_error_analysis_scale_question_surfaces_and_is_handled(bench):
    need(ERRORS)
    base = ("--model", "unnamed-model", "--condition", "direct")
    r = bench.answers(ERRORS, *base)
    assert r.exit_code == 1
    assert "error:" in r.output and "no scale was given" in r.output and "highest score is 19" in r.output
    assert "suggests 20 per dimension" in r.output
    r = bench.answers(ERRORS, *base, "--scale", "10")
    assert r.exit_code == 1
    assert f"{ERRORS}, line 1, field 'scores.clarity': scores.clarity = 18 is above --scale 10" in r.output
    assert bench.count("answers") == 0 and bench.count("judgments") == 0
    r = bench.answers(ERRORS, *base, "--scale", "20", "--judge-model", "swe-qa-authors-judge")
    assert r.exit_code == 0, r.output
    assert "matched 4 (4 by question); added 4 answers" in r.output
    assert "imported scores: 4 judgments added (judge 'imported', judge model swe-qa-authors-judge, scale 0-20" \
        in r.output
    rows = bench.rows("SELECT a.source_line, j.score_rate, j.scale_max, j.judge, j.critique FROM judgments j "
                      "JOIN answers a ON a.id = j.answer_id ORDER BY a.source_line")
    # score rate = sum / (5 x 20), which is the file's own rate: 0.48, 0.47, 0.53, 0.47
    assert [(line, round(rate, 4), mx, judge) for line, rate, mx, judge, _ in rows] == [
        (1, 0.48, 20, "imported"), (2, 0.47, 20, "imported"), (3, 0.53, 20, "imported"), (4, 0.47, 20, "imported")]
    assert all(critique.startswith("# Detailed Error Analysis") for *_, critique in rows)
    again = bench.answers(ERRORS, *base, "--scale", "20", "--judge-model", "swe-qa-authors-judge")
    assert again.exit_code == 0 and "added 0 answers" in again.output and "4 already present" in again.output
    assert bench.count("judgments") == 4


def test_override_from_the_command_line(bench):
    need(ERRORS)
    assert bench.answers(ERRORS, "--model", "m", "--condition", "direct", "--scale", "20").exit_code == 0
    (jid,) = bench.rows("SELECT j.id FROM judgments j JOIN answers a ON a.id = j.answer_id WHERE a.source_line = 1")[0]
    r = bench.run("judgments", "override", str(jid), "correctness", "7", "--reason", "the judge missed the file path", "--as", "ann")
    assert r.exit_code == 0, r.output
    assert f"judgment {jid}, correctness: 2 -> 7 by ann; score rate 48.0% -> 53.0% (1 override in effect)" in r.output
    assert bench.rows("SELECT key, original_score, score, annotator FROM score_overrides") == [
        ("correctness", 2.0, 7.0, "ann")]
    assert json.loads(bench.rows(f"SELECT scores_json FROM judgments WHERE id = {jid}")[0][0])[0]["score"] == 2
    for args, message in [
        (("correctness", "21"), "score 21 is not a number in [0, 20]"),
        (("accuracy", "3"), "has no score 'accuracy'"),
        (("correctness", "high"), "score 'high' is not a number"),
    ]:
        r = bench.run("judgments", "override", str(jid), *args, "--reason", "x")
        assert r.exit_code == 1, r.output
        assert r.output.startswith("error: ") and message in r.output
    r = bench.run("judgments", "override", str(jid), "correctness", "3", "--reason", "  ")
    assert r.exit_code == 1 and "needs a reason" in r.output and r.output.rstrip().endswith("(--reason TEXT)")
    r = bench.run("judgments", "override", "999", "correctness", "3", "--reason", "x")
    assert r.exit_code == 1 and "no judgment with id 999" in r.output
    assert bench.count("score_overrides") == 1
    (aid,) = bench.rows("SELECT id FROM answers WHERE source_line = 1")[0]
    shown = bench.run("answers", "show", aid)
    assert "override correctness: 2 -> 7 by ann (the judge missed the file path)" in shown.output
    assert "correctness\t7/20 (judge: 2)" in shown.output


def test_answers_list_and_show(bench):
    need(AGENT)
    bench.answers(AGENT, "--model", "cursor-agent", "--condition", "agentic")
    r = bench.run("answers", "list")
    assert r.exit_code == 0
    lines = r.output.strip().splitlines()
    assert len(lines) == 48 and lines[-1] == "cursor-agent / agentic: 47"
    assert bench.run("answers", "list", "--model", "other").output.strip() == "no answers match"
    one = bench.run("answers", "list", "--pair", "#1").output.strip().splitlines()
    assert len(one) == 1 and one[0].split("\t")[1:4] == ["#1", "cursor-agent", "agentic"]
    aid = one[0].split("\t")[0]
    shown = bench.run("answers", "show", aid)
    assert shown.exit_code == 0 and "trajectory: 1 step (print it with --trajectory)" in shown.output
    full = bench.run("answers", "show", aid, "--trajectory")
    assert '"subtype": "success"' in full.output
    assert bench.run("answers", "show", "ans_nope").exit_code == 1


# --------------------------------------------------------------------------------------------- bad input
def test_import_answers_usage_errors(bench):
    f = bench.file("a.jsonl", {"question": "Q?", "answer": "A"})
    r = bench.answers(f, "--condition", "direct")
    assert r.exit_code == 2 and "needs --model NAME" in r.output
    r = bench.answers(f, "--model", "m")
    assert r.exit_code == 2 and "needs --condition" in r.output
    r = bench.answers(f, "--model", "m", "--condition", "open-book")
    assert r.exit_code == 2 and "open-book" in r.output
    r = bench.run("pairs", "import", "swe-qa", str(BENCHMARK), "--model", "m")
    assert r.exit_code == 2 and "No such option '--model'" in r.output
    r = bench.run("import", "swe-qa", str(BENCHMARK), "--model", "m")  # the old spelling, a hidden alias
    assert r.exit_code == 2 and "are for: benchwright answers import FILE" in r.output
    r = bench.answers(f, "--model", "m", "--condition", "direct", "--repo", "flask")
    assert r.exit_code == 2
    r = bench.answers(f, "--model", "m", "--condition", "direct", "--scale", "0")
    assert r.exit_code == 2


def test_bad_json_and_missing_fields_name_file_and_line(bench):
    q = json.loads(BENCHMARK.read_text(encoding="utf-8").splitlines()[0])["question"]
    f = bench.file("bad.jsonl", {"question": q, "answer": "Fine."}, '{"question": "x", ', {"question": q})
    r = bench.answers(f, "--model", "m", "--condition", "direct")
    assert r.exit_code == 1
    assert f"{f}, line 2: invalid JSON" in r.output
    assert f"{f}, line 3, field 'answer': required field is missing" in r.output
    assert "nothing was imported" in r.output and bench.count("answers") == 0
    r = bench.answers(f, "--model", "m", "--condition", "direct", "--skip-invalid")
    assert r.exit_code == 0, r.output
    assert "added 1 answer " in r.output and "skipped 2 invalid records" in r.output
    assert bench.count("answers") == 1


def test_unmatched_answers_are_listed_and_none_matching_is_an_error(bench):
    q = json.loads(BENCHMARK.read_text(encoding="utf-8").splitlines()[0])["question"]
    f = bench.file("some.jsonl", {"question": q, "answer": "A"}, {"question": "Not in the project?", "answer": "B"})
    r = bench.answers(f, "--model", "m", "--condition", "closed-book")
    assert r.exit_code == 0
    assert "1 unmatched (not imported):" in r.output
    assert "line 2: 'Not in the project?' (no Q&A pair has this question; tried question)" in r.output
    none = bench.file("none.jsonl", {"question": "Nope?", "answer": "B"})
    r = bench.answers(none, "--model", "m", "--condition", "closed-book")
    assert r.exit_code == 1 and "none of the 1 answer matched a Q&A pair" in r.output


def test_conflicting_answer_refuses_the_import(bench):
    q = json.loads(BENCHMARK.read_text(encoding="utf-8").splitlines()[0])["question"]
    assert bench.answers(bench.file("one.jsonl", {"question": q, "answer": "A"}), "--model", "m",
                         "--condition", "direct").exit_code == 0
    other = bench.file("two.jsonl", {"question": q, "answer": "B"})
    r = bench.answers(other, "--model", "m", "--condition", "direct")
    assert r.exit_code == 1 and "1 record conflicts with answers" in r.output and "line 1:" in r.output
    r = bench.answers(other, "--model", "m", "--condition", "direct", "--skip-invalid")
    assert r.exit_code == 0, r.output
    assert "added 0 answers" in r.output and "1 conflicting (skipped):" in r.output
    assert bench.count("answers") == 1


def test_text_from_data_is_shown_literally(bench):
    q = json.loads(BENCHMARK.read_text(encoding="utf-8").splitlines()[0])["question"]
    f = bench.file("markup.jsonl", {"question": q, "answer": "[bold]not bold[/bold] \x1b[31mred\x1b[0m"})
    assert bench.answers(f, "--model", "[red]m[/red]", "--condition", "direct").exit_code == 0
    listed = bench.run("answers", "list").output
    assert "[red]m[/red]" in listed and "[bold]not bold[/bold] ␛[31mred␛[0m" in listed
    assert "\x1b" not in listed


# ------------------------------------------------------------------------------ new-user trial findings
def _no_rate_copy(p: Project, name: str = "norate.jsonl", **changes) -> Path:
    """The flask error analysis without its ``rate`` field (so the rate check cannot catch a wrong scale);
    ``changes`` maps a 1-based line to new scores for it."""
    records = []
    for i, line in enumerate(ERRORS.read_text(encoding="utf-8").splitlines(), start=1):
        rec = json.loads(line)
        rec.pop("rate")
        if f"line{i}" in changes:
            rec["scores"] = {**rec["scores"], **changes[f"line{i}"]}
            rec["total"] = sum(rec["scores"].values())
        records.append(rec)
    return p.file(name, *records)


def test_reimporting_scores_with_another_scale_is_a_conflict(bench):
    need(ERRORS)
    base = ("--model", "m", "--condition", "agentic")
    assert bench.answers(ERRORS, *base, "--scale", "20").exit_code == 0
    r = bench.answers(ERRORS, *base, "--scale", "25")  # the file's rate catches this one
    assert r.exit_code == 1 and "field 'rate'" in r.output
    plain = _no_rate_copy(bench)
    r = bench.answers(plain, *base, "--scale", "20")  # same scores, same scale: nothing added
    assert r.exit_code == 0, r.output
    assert "4 already present" in r.output and bench.count("judgments") == 4
    r = bench.answers(plain, *base, "--scale", "19")
    assert r.exit_code == 1, r.output
    assert "4 records conflict with imported scores" in r.output and "nothing was imported" in r.output
    assert "line 1: " in r.output and "scale 0-20 there, --scale 19 here" in r.output
    assert bench.count("judgments") == 4
    r = bench.answers(plain, *base, "--scale", "19", "--skip-invalid")
    assert r.exit_code == 0, r.output
    assert "4 conflicting (skipped):" in r.output and "judgments added" not in r.output
    assert bench.count("judgments") == 4 and bench.count("answers") == 4
    # the report still uses the scores of the first import
    assert sorted(round(x, 2) for (x,) in bench.rows("SELECT score_rate FROM judgments")) == [0.47, 0.47, 0.48, 0.53]


def test_reimporting_changed_scores_for_the_same_answer_is_a_conflict(bench):
    need(ERRORS)
    base = ("--model", "m", "--condition", "agentic", "--scale", "20")
    assert bench.answers(_no_rate_copy(bench), *base).exit_code == 0
    changed = _no_rate_copy(bench, "changed.jsonl", line2={"correctness": 9})
    original = json.loads(ERRORS.read_text(encoding="utf-8").splitlines()[1])["scores"]["correctness"]
    r = bench.answers(changed, *base)
    assert r.exit_code == 1, r.output
    assert "1 record conflicts with imported scores" in r.output
    assert "line 2: " in r.output and f"scores differ (correctness {original} -> 9)" in r.output
    assert "line 1:" not in r.output and bench.count("judgments") == 4
    r = bench.answers(changed, *base, "--skip-invalid")
    assert r.exit_code == 0 and "1 conflicting (skipped):" in r.output and "3 already present" in r.output
    assert bench.count("judgments") == 4


def test_id_question_mismatch_alias_clash_and_position_ids_are_reported(bench):
    _, q2, q3 = (json.loads(line)["question"] for line in BENCHMARK.read_text(encoding="utf-8").splitlines()[:3])
    ids = [pid for (pid,) in bench.rows("SELECT id FROM qa_pairs ORDER BY ordinal")]
    f = bench.file("a.jsonl",
                   {"qa_pair_id": ids[0], "question": q2, "answer": "A1"},
                   {"question": q3, "answer": "A3", "response": "something else"},
                   {"qa_pair_id": "#2", "question": q2, "answer": "A2"},
                   {"qa_pair_id": "#4", "answer": "A4"})
    r = bench.answers(f, "--model", "m", "--condition", "direct")
    assert r.exit_code == 0, r.output
    assert "line 1: qa_pair_id names #1 but its question is #2's; matched by id" in r.output
    assert "line 2: has 'answer' and 'response' with different texts; used 'answer'" in r.output
    assert "line 3: qa_pair_id '#2' is not a pair id (it looks like a queue position" in r.output
    assert "matched by question" in r.output
    assert "line 4: pair #4 (qa_pair_id '#4' is not a pair id" in r.output  # unmatched, and says why
    assert "matched 3 (1 by qa_pair_id, 2 by question)" in r.output


def test_all_ambiguous_is_not_called_unmatched(tmp_path):
    p = Project(tmp_path)
    pairs = p.file("pairs.jsonl", {"question": "What does X do?", "answer": "one"},
                   {"question": "What does X do?", "answer": "two"})
    assert p.run("pairs", "import", "jsonl", str(pairs), "--as", "t").exit_code == 0
    r = p.answers(p.file("a.jsonl", {"question": "What does X do?", "answer": "A"}), "--model", "m",
                  "--condition", "direct")
    assert r.exit_code == 1
    assert "ambiguous" in r.output and "give qa_pair_id" in r.output
    assert "none of the" not in r.output and "import the pairs first" not in r.output


def test_ignored_scores_ignored_scale_and_binary_files_are_said(bench):
    q = json.loads(BENCHMARK.read_text(encoding="utf-8").splitlines()[0])["question"]
    f = bench.file("agentish.jsonl", {"question": q, "answer": "A", "scores": {"correctness": 3}})
    r = bench.answers(f, "--model", "m", "--condition", "agentic", "--answer-format", "swe-qa-agent")
    assert r.exit_code == 0, r.output
    assert "warning: 1 record has 'scores', which the swe-qa-agent format ignores" in r.output
    assert "origin_question" not in r.output  # the file has none: no claim about it
    r = bench.answers(bench.file("plain.jsonl", {"question": q, "answer": "B"}), "--model", "m2",
                      "--condition", "direct", "--scale", "20")
    assert r.exit_code == 0 and "warning: --scale 20 is ignored: the file has no imported scores" in r.output
    parquet = bench.dir / "rows.parquet"
    parquet.write_bytes(b"PAR1\x15\x00\x15\xd0\x01\x00\x00binary")
    r = bench.answers(parquet, "--model", "m", "--condition", "direct")
    assert r.exit_code == 1
    assert "not a JSON lines file (looks like Parquet); answers come as JSON lines" in r.output
    assert "UTF-8" not in r.output
    neg = bench.file("neg.jsonl", {"question": q, "answer": "C", "scores": {"correctness": -3}})
    r = bench.answers(neg, "--model", "m3", "--condition", "direct", "--scale", "5")
    assert f"{neg}, line 1, field 'scores.correctness': scores.correctness = -3 is negative" in r.output


def test_show_gives_the_effective_rate_runs_from_1_and_no_trajectory(bench):
    need(ERRORS)
    assert bench.answers(ERRORS, "--model", "m", "--condition", "direct", "--scale", "20").exit_code == 0
    (jid, aid) = bench.rows("SELECT j.id, a.id FROM judgments j JOIN answers a ON a.id = j.answer_id "
                            "WHERE a.source_line = 3")[0]
    shown = bench.run("answers", "show", aid, "--trajectory")
    assert f"--- judgment {jid}: imported by unknown, run 1, 53.0%\n" in shown.output
    assert "--- trajectory\n(no trajectory)" in shown.output
    (correctness,) = bench.rows(f"SELECT json_extract(scores_json, '$[0].score') FROM judgments WHERE id = {jid}")[0]
    r = bench.run("judgments", "override", str(jid), "correctness", str(correctness + 2), "--reason", "r")
    assert r.exit_code == 0, r.output
    shown = bench.run("answers", "show", aid)
    assert f"--- judgment {jid}: imported by unknown, run 1, 55.0% (judge: 53.0%, 1 override)" in shown.output
    for bad in ("7.5", "1e1"):
        r = bench.run("judgments", "override", str(jid), "correctness", bad, "--reason", "r")
        assert r.exit_code == 1 and r.output.startswith("error: "), r.output
    assert "not a whole number" in bench.run("judgments", "override", str(jid), "correctness", "7.5", "--reason", "r").output
    assert bench.count("score_overrides") == 1


def test_long_problem_lists_are_cut_unless_verbose(bench):
    f = bench.file("many.jsonl", *({"question": f"Nobody asked question {i}?", "answer": "A"} for i in range(120)))
    r = bench.answers(f, "--model", "m", "--condition", "direct")
    assert r.exit_code == 1
    assert "120 unmatched (not imported):" in r.output
    assert "... and 70 more (all of them with --verbose)" in r.output
    assert sum(line.startswith("    line ") for line in r.output.splitlines()) == 50
    r = bench.answers(f, "--model", "m", "--condition", "direct", "--verbose")
    assert sum(line.startswith("    line ") for line in r.output.splitlines()) == 120
    assert "more (all of them" not in r.output
    assert bench.run("pairs", "import", "swe-qa", str(f), "--verbose").exit_code == 2
