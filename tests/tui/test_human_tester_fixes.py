"""A tester's findings on human judgments (issue 20 follow-up, helper E2): blind mode in ``answers show`` and
``calibration``, ``judgments human --file`` strict and idempotent, one rule for annotator names."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_assign_answers import Project

from benchwright.core.annotator_names import annotator_name
from benchwright.core.errors import BenchwrightError
from benchwright.tui.cli import main


@pytest.fixture
def proj(tmp_path, cli_env) -> Project:
    return Project(tmp_path)


def score(proj, aid, who, *items):
    args = [a for n, v in enumerate(items, 1) for a in ("--score", f"{n}={v}")]
    r = proj.run("judgments", "human", aid, "--as", who, *args)
    assert r.exit_code == 0, r.output
    return r


def test_answers_show_hides_the_judges_from_an_assigned_annotator_until_they_score(proj):
    assert proj.run("assign", "--answers", "--annotators", "ada,eve", "--overlap", "2").exit_code == 0
    aid = proj.answers[0]
    score(proj, aid, "ada", 5, 4, 1)
    r = CliRunner().invoke(main, ["--db", str(proj.db), "answers", "show", aid],
                           env={"BENCHWRIGHT_ANNOTATOR": "eve"})
    assert r.exit_code == 0, r.output
    assert "--- judgment " not in r.output and "human by ada" not in r.output and "judge-x" not in r.output
    assert "judgments hidden from eve" in r.output and "blind mode" in r.output
    # a lead who was not handed the answer sees everything
    r = proj.run("answers", "show", aid, "--as", "lead")
    assert "checklist by judge-x" in r.output and "human by ada" in r.output
    score(proj, aid, "eve", 3, 0, 1)
    r = proj.run("answers", "show", aid, "--as", "eve")
    assert "checklist by judge-x" in r.output and "human by ada" in r.output and "hidden" not in r.output


def test_human_file_refuses_unknown_keys_and_floats_warns_of_surrogates_and_is_idempotent(proj):
    f = proj.dir / "h.jsonl"
    a0, a1 = proj.answers[:2]
    f.write_text(json.dumps({"answer_id": a0, "scores": {"1": 5, "2": 4, "3": 1}, "rationale": {"1": "x"}}) + "\n")
    r = proj.run("judgments", "human", "--file", str(f), "--as", "ada")
    assert r.exit_code != 0 and f"{f}, line 1, field 'rationale'" in r.output and "unknown key" in r.output
    f.write_text(json.dumps({"answer_id": a0, "scores": {"1": 5.0, "2": 4, "3": 1}}) + "\n")
    r = proj.run("judgments", "human", "--file", str(f), "--as", "ada")
    assert r.exit_code != 0 and "item 1" in r.output and "score 5.0 is not one of" in r.output
    r = proj.run("judgments", "human", a0, "--as", "ada", "--score", "1=5.0", "--score", "2=4", "--score", "3=1")
    assert r.exit_code != 0 and "score 5.0 is not one of" in r.output
    assert proj.rows("SELECT count(*) FROM judgments WHERE judge = 'human'") == [(0,)]
    good = (json.dumps({"answer_id": a0, "scores": {"1": 5, "2": 4, "3": 1}, "rationales": {"1": "ok"}}) + "\n"
            + json.dumps({"answer_id": a1, "scores": {"1": 0, "2": 0, "3": 1}, "rationales": {"2": "bad @"}})
            .replace("@", "\\ud800") + "\n")
    f.write_text(good)
    r = proj.run("judgments", "human", "--file", str(f), "--as", "ada")
    assert r.exit_code == 0, r.output
    assert f"warning: {f}, line 2: invalid Unicode (a lone surrogate)" in r.output
    assert "2 human judgments recorded, 0 unchanged" in r.output
    r = proj.run("judgments", "human", "--file", str(f), "--as", "ada")
    assert r.exit_code == 0, r.output
    assert "0 human judgments recorded, 2 unchanged" in r.output
    assert proj.rows("SELECT count(*) FROM judgments WHERE judge = 'human'") == [(2,)]
    f.write_text(good.replace('"ok"', '"better"'))
    r = proj.run("judgments", "human", "--file", str(f), "--as", "ada")
    assert "1 human judgment recorded, 1 unchanged" in r.output


@pytest.mark.parametrize("bad", ["a\nb", "x\x1b[31my", "zero\u200bwidth", "", "   ", "n" * 65])
def test_annotator_names_with_control_or_format_characters_are_refused_everywhere(proj, bad):
    r = proj.run("judgments", "human", proj.answers[0], "--as", bad, "--score", "1=5", "--score", "2=4",
                 "--score", "3=1")
    assert r.exit_code != 0 and "--as" in r.output
    r = CliRunner().invoke(main, ["--db", str(proj.db), "judgments", "assigned"], env={"BENCHWRIGHT_ANNOTATOR": bad})
    assert r.exit_code != 0 and "BENCHWRIGHT_ANNOTATOR" in r.output
    f = proj.dir / "bad.jsonl"
    f.write_text(json.dumps({"answer_id": proj.answers[0], "annotator": bad + "!",
                             "scores": {"1": 5, "2": 4, "3": 1}}) + "\n")
    if bad.strip() and len(bad) < 64:
        r = proj.run("judgments", "human", "--file", str(f), "--as", "ada")
        assert r.exit_code != 0 and f"{f}, line 1, field 'annotator'" in r.output
    assert proj.rows("SELECT count(*) FROM judgments WHERE judge = 'human'") == [(0,)]


def test_markup_and_accents_are_valid_names_normalised_to_nfc():
    assert annotator_name("[bold red]cy[/]", "--as") == "[bold red]cy[/]"
    assert annotator_name(" Zoe\u0301 ", "--as") == "Zo\u00e9"
    with pytest.raises(BenchwrightError, match="--as: an annotator name cannot hold control"):
        annotator_name("a\tb", "--as")


def test_serve_uses_the_core_rule():
    from benchwright.tui.services.serve import AccessDenied
    from benchwright.tui.services.serve import annotator_name as serve_name

    with pytest.raises(AccessDenied, match="name: an annotator name cannot hold invisible"):
        serve_name("a\u202eb", "name")
    assert serve_name("[b]x[/b]", "name") == "[b]x[/b]"


def test_calibration_withholds_the_disagreements_of_answers_still_to_score_in_blind_mode(proj):
    assert proj.run("assign", "--answers", "--annotators", "ada,eve", "--overlap", "2").exit_code == 0
    aid = proj.answers[0]
    score(proj, aid, "ada", 5, 4, 1)  # judge-x gave 3 to item 1
    r = proj.run("calibration", "--as", "eve")
    assert r.exit_code == 0, r.output
    assert aid not in r.output and "ada" not in r.output and "1 answer still to score by you" in r.output
    data = json.loads(proj.run("calibration", "--as", "eve", "--json").output)
    assert data["withheld_answers"] == 1 and data["judges"][0]["worst"] == []
    r = proj.run("calibration", "--as", "ada")
    assert aid in r.output and "still to score" not in r.output


def test_calibration_header_counts_the_scores_after_the_modes_apply(proj):
    aid = proj.answers[0]
    score(proj, aid, "ada", 5, 4, 1)
    score(proj, aid, "bob", 3, 4, 1)
    r = proj.run("calibration", "--humans", "consensus", "--as", "lead")
    assert r.exit_code == 0, r.output
    assert "3 paired scores with runs: mean, humans: consensus (6 before they apply)" in r.output
    data = json.loads(proj.run("calibration", "--humans", "consensus", "--json").output)
    assert data["observations"] == 6 and data["applied_observations"] == 3 == data["judges"][0]["overall"]["n"]
    r = proj.run("calibration", "--as", "lead")
    assert "6 paired scores with runs: mean, humans: each (docs" in r.output and "before they apply" not in r.output


def test_assign_answers_says_when_the_sample_asks_more_than_there_is(proj):
    r = proj.run("assign", "--answers", "--annotators", "ada,bob", "--overlap", "2", "--sample", "1000")
    assert r.exit_code == 0, r.output
    assert "sample of 1000 asked, 6 answers available: all assigned" in r.output
    r = proj.run("assign", "--answers", "--annotators", "ada,bob", "--overlap", "1", "--sample", "4")
    assert "available" not in r.output and proj.rows("SELECT count(*) FROM answer_assignments") == [(4,)]
