"""Reading answer files (plain JSONL, SWE-QA agent runs, SWE-QA error analyses) and the judgment domain model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchwright.core.errors import BenchwrightError, InputFileError
from benchwright.core.importers.answers import parse_answers
from benchwright.core.judgment import (
    Judgment,
    JudgmentError,
    ScoreEntry,
    ScoreOverride,
    answer_id,
    check_override,
    effective_entries,
    effective_score_rate,
    entries_from_json,
    entries_json_schema,
    entries_to_json,
    score_rate_of,
)

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "swe-qa"
AGENT = DATA / "cursor_agent_unidentified_question__flask.jsonl"
ERRORS = DATA / "ErrorAnalysis__error_analysis.flask.jsonl"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data {path} is absent (the shared data folder ../shared/data is not checked out here)")
    return path


def write(tmp_path: Path, *records: object, name: str = "answers.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ real files
def test_agent_file_is_detected_and_keeps_both_questions_and_the_parsed_trajectory():
    result = parse_answers(need(AGENT))
    assert result.format == "swe-qa-agent"
    assert (result.read, len(result.records), result.problems) == (47, 47, [])
    first = result.records[0]
    assert [f for f, _ in first.questions] == ["origin_question", "question"]
    assert first.questions[0][1].startswith("What is the relationship between the `ensure_ascii` parameter")
    assert first.questions[1][1].startswith("What is the relationship between the ASCII-only encoding")
    # the trajectory was a string holding JSON: it is parsed (a list with one "result" step in this file)
    assert isinstance(first.trajectory, list) and first.trajectory[0]["type"] == "result"
    assert "rewriting_reason" in first.extra and "trajectory" not in first.extra
    assert first.scores is None


def test_error_analysis_without_scale_is_refused_with_the_observed_maximum_and_the_rates_hint():
    with pytest.raises(InputFileError) as err:
        parse_answers(need(ERRORS))
    text = str(err.value)
    assert "no scale was given" in text
    assert "highest score is 19 (line 1, scores.relevance)" in text
    assert "suggests 20 per dimension over 5 dimensions" in text
    assert "--scale N" in text


def test_error_analysis_with_scale_10_names_every_record_and_field_above_it():
    with pytest.raises(InputFileError) as err:
        parse_answers(need(ERRORS), scale=10)
    problems = err.value.problems
    assert [(p.line, p.field) for p in problems][:2] == [(1, "scores.clarity"), (1, "scores.relevance")]
    assert "scores.clarity = 18 is above --scale 10" in problems[0].message
    assert str(problems[0]).startswith(f"{ERRORS}, line 1, field 'scores.clarity'")
    # every value above 10 in the four records: clarity 18, relevance 19 / 14, 12 / 16, 13, 13 / 14, 14
    assert len(problems) == 9
    assert {p.line for p in problems} == {1, 2, 3, 4}


def test_error_analysis_with_scale_20_reads_scores_critique_and_reference():
    result = parse_answers(need(ERRORS), scale=20)
    assert result.format == "swe-qa-error-analysis" and result.scale == 20
    assert len(result.records) == 4 and not result.problems
    first = result.records[0]
    assert first.scores == {"correctness": 2, "completeness": 1, "clarity": 18, "relevance": 19, "reasoning": 8}
    assert first.critique.startswith("# Detailed Error Analysis")
    assert first.extra["total"] == 48 and first.extra["rate"] == 0.48 and "reference" in first.extra
    assert "scores" not in first.extra and "error_analysis" not in first.extra


def test_a_scale_the_files_rate_contradicts_is_refused():
    with pytest.raises(InputFileError) as err:
        parse_answers(need(ERRORS), scale=25)
    first = err.value.problems[0]
    assert (first.line, first.field) == (1, "rate")
    assert "rate = 0.48 but total / (5 x --scale 25) = 0.384" in first.message
    assert "implies a scale of 20" in first.message


# ------------------------------------------------------------------------------------------- plain JSONL
def test_plain_jsonl_accepts_documented_aliases(tmp_path):
    path = write(
        tmp_path,
        {"qa_pair_id": "qa_1", "answer": "A1"},
        {"pair_id": "qa_2", "response": "A2"},
        {"id": 7, "model_answer": "A3"},
        {"question": "Why?", "prediction": "A4", "note": "kept"},
        {"question": "How?", "answer": "A5", "trajectory": [{"step": 1}], "critique": "fine"},
    )
    result = parse_answers(path)
    assert result.format == "jsonl" and not result.problems
    refs = [(r.pair_ref, r.question, r.text) for r in result.records]
    assert refs == [("qa_1", None, "A1"), ("qa_2", None, "A2"), ("7", None, "A3"), (None, "Why?", "A4"),
                    (None, "How?", "A5")]
    assert result.records[3].extra == {"note": "kept"}
    assert result.records[4].trajectory == [{"step": 1}] and result.records[4].critique == "fine"


def test_plain_jsonl_with_scores_needs_a_scale_too(tmp_path):
    path = write(tmp_path, {"question": "Q?", "answer": "A", "scores": {"accuracy": 4}})
    with pytest.raises(InputFileError, match="no scale was given"):
        parse_answers(path)
    assert parse_answers(path, scale=5).records[0].scores == {"accuracy": 4}


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        ('{"question": "Q", "answer": ', None, "invalid JSON"),
        ("[1, 2]", None, "expected a JSON object"),
        ({"question": "Q?"}, "answer", "required field is missing (accepted names: answer, response"),
        ({"question": "Q?", "answer": 3}, "answer", "must be a string, found number"),
        ({"question": "Q?", "answer": "  "}, "answer", "must not be empty"),
        ({"answer": "A"}, "question", "the record names no Q&A pair"),
        ({"question": "Q?", "answer": "A", "trajectory": "[{"}, "trajectory", "holds no valid JSON"),
        ({"question": "Q?", "answer": "A", "trajectory": 5}, "trajectory", "must be a JSON array or object"),
        ({"question": "Q?", "answer": "A", "scores": {"x": "high"}}, "scores.x", "must be a number, found string"),
        ({"question": "Q?", "answer": "A", "scores": {"x": -1}}, "scores.x", "is negative"),
        ({"question": "Q?", "answer": "A", "scores": []}, "scores", "must be a non-empty object"),
    ],
)
def test_bad_records_are_named_by_file_line_and_field(tmp_path, record, field, message):
    path = write(tmp_path, {"question": "Fine?", "answer": "yes"}, record)
    result = parse_answers(path, scale=10)
    assert len(result.records) == 1 and result.read == 2
    problem = result.problems[0]
    assert (problem.file, problem.line, problem.field) == (str(path), 2, field)
    assert message in problem.message


def test_error_analysis_total_must_be_the_sum_of_the_scores(tmp_path):
    path = write(tmp_path, {"question": "Q?", "reference": "R", "answer": "A", "error_analysis": "meh",
                            "scores": {"a": 2, "b": 3}, "total": 6})
    result = parse_answers(path, scale=10)
    assert result.format == "swe-qa-error-analysis"
    assert [(p.line, p.field) for p in result.problems] == [(1, "total")]
    assert "= 6 but the scores add up to 5" in result.problems[0].message


def test_explicit_format_checks_that_shapes_fields(tmp_path):
    path = write(tmp_path, {"question": "Q?", "answer": "A"})
    result = parse_answers(path, fmt="swe-qa-error-analysis", scale=10)
    assert [(p.line, p.field) for p in result.problems] == [(1, "scores")]
    agent = parse_answers(write(tmp_path, {"answer": "A"}, name="agent.jsonl"), fmt="swe-qa-agent")
    assert [(p.line, p.field) for p in agent.problems] == [(1, "origin_question")]


def test_agent_record_without_origin_question_matches_by_question(tmp_path):
    path = write(tmp_path, {"question": "Rewritten?", "answer": "A", "trajectory": "[]"})
    record = parse_answers(path).records[0]
    assert record.questions == [("question", "Rewritten?")] and record.trajectory == []


def test_whole_file_problems_and_unknown_options(tmp_path):
    with pytest.raises(InputFileError, match="no such file"):
        parse_answers(tmp_path / "missing.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(InputFileError, match="empty"):
        parse_answers(tmp_path / "empty.jsonl")
    path = write(tmp_path, {"question": "Q?", "answer": "A"})
    with pytest.raises(BenchwrightError, match="unknown answer format"):
        parse_answers(path, fmt="csv")
    with pytest.raises(BenchwrightError, match="--scale must be a whole number"):
        parse_answers(path, scale=0)


# ------------------------------------------------------------------------------------ judgment model
def entry(key, score, mx, allowed=None, kind="dimension"):
    return ScoreEntry(key=key, label=key, kind=kind, score=score, max=mx, allowed=allowed)


def judgment(judge, entries, *, jid=1, status="scored"):
    return Judgment(
        id=jid, answer_id="ans_x", judge=judge, judge_model="m", run_index=0, status=status, checklist_version=None,
        entries=entries, score_rate=score_rate_of(judge, entries) if status == "scored" else None, scale_max=None,
        seed=None, critique=None, reason=None if status == "scored" else "bad JSON", raw_text=None, call_ids=[],
        created_at="", created_by="t",
    )


def test_score_rates_per_judge_by_hand():
    checklist = [entry("1", 4, 5, [0, 2, 4, 5], "knowledge"), entry("2", 3, 4, [0, 3, 4], "knowledge"),
                 entry("3", 1, 1, [0, 1], "clarity")]
    assert score_rate_of("checklist", checklist) == pytest.approx(8 / 10)
    pro = [entry(d, s, 10, list(range(1, 11))) for d, s in zip("abcde", [8, 6, 7, 9, 5], strict=True)]
    assert score_rate_of("swe-qa-pro", pro) == pytest.approx(7 / 10)  # mean 35/5 = 7
    cqb = [entry(d, s, 5, list(range(6))) for d, s in zip("abc", [5, 4, 3], strict=True)]
    assert score_rate_of("code-qa-bench", cqb) == pytest.approx(4 / 5)  # normalized mean
    imported = [entry("x", 2, 20), entry("y", 18, 20), entry("z", 28, 60)]
    assert score_rate_of("imported", imported) == pytest.approx(48 / 100)
    assert score_rate_of("checklist", [entry("1", None, 9, [0, 9], "knowledge")]) is None
    with pytest.raises(JudgmentError, match="unknown judge"):
        score_rate_of("vibes", imported)
    with pytest.raises(JudgmentError, match="at least one"):
        score_rate_of("imported", [])


def test_score_entry_validation():
    with pytest.raises(ValidationError, match="is not one of"):
        entry("1", 2, 5, [0, 5])
    with pytest.raises(ValidationError, match=r"not a number in \[0, 10\]"):
        entry("x", 11, 10)
    with pytest.raises(ValidationError):
        entry("x", True, 10)  # a boolean is not a score
    with pytest.raises(ValidationError, match=r"outside 0\.\.3"):
        entry("1", 0, 3, [0, 4])
    with pytest.raises(ValidationError):
        ScoreEntry(key="x", kind="vibe", score=1, max=2)
    ok = entry("x", 2.5, 10)
    assert ok.accepts(0) and not ok.accepts(float("nan")) and not ok.accepts("3")


def test_entries_json_round_trip_and_schema():
    entries = [entry("1", 3, 5, [0, 3, 5], "knowledge"), entry("clarity", None, 1, [0, 1], "clarity")]
    text = entries_to_json(entries)
    assert json.loads(text)[0] == {"allowed": [0, 3, 5], "key": "1", "kind": "knowledge", "label": "1", "max": 5,
                                   "rationale": "", "score": 3}
    assert entries_from_json(text) == entries
    assert entries_json_schema()["type"] == "array"


def test_effective_entries_use_the_latest_override_per_key_and_count_keys():
    j = judgment("checklist", [entry("1", 9, 9, [0, 5, 9], "knowledge"), entry("2", 0, 1, [0, 1], "clarity")])
    overrides = [
        ScoreOverride(1, 1, "1", 9, 0, "wrong", "ann", ""),
        ScoreOverride(3, 1, "1", 9, 5, "partly right", "bob", ""),
        ScoreOverride(2, 1, "2", 0, 1, "clear", "ann", ""),
        ScoreOverride(4, 2, "1", 9, 0, "another judgment", "ann", ""),
        ScoreOverride(5, 1, "99", 0, 1, "no such key", "ann", ""),
    ]
    entries, used = effective_entries(j, overrides)
    assert [e.score for e in entries] == [5, 1] and used == 2
    assert isinstance(entries[0].score, int)
    assert j.entries[0].score == 9  # the judgment itself is unchanged
    assert effective_score_rate(j, overrides) == (pytest.approx(0.6), 2)
    assert effective_score_rate(judgment("checklist", [], status="unscored"), overrides) == (None, 0)


def test_check_override_refusals():
    j = judgment("swe-qa-pro", [entry("correctness", 7, 10, list(range(1, 11)))])
    assert check_override(j, "correctness", 8, "the judge missed a path").score == 7
    with pytest.raises(JudgmentError, match="has no score 'accuracy'; its keys are: correctness"):
        check_override(j, "accuracy", 8, "x")
    with pytest.raises(JudgmentError, match=r"score 0 is not one of \[1, 2"):
        check_override(j, "correctness", 0, "x")
    with pytest.raises(JudgmentError, match="needs a reason"):
        check_override(j, "correctness", 8, "   ")
    with pytest.raises(JudgmentError, match="unscored"):
        check_override(judgment("swe-qa-pro", [], status="unscored"), "correctness", 8, "x")


def test_answer_ids_are_content_hashes():
    a = answer_id("qa_1", "gpt", "direct", "The answer.")
    assert a.startswith("ans_") and len(a) == 20
    assert a == answer_id("qa_1", "gpt", "direct", "  The answer.\n")
    assert len({a, answer_id("qa_2", "gpt", "direct", "The answer."), answer_id("qa_1", "gpt2", "direct", "The answer."),
                answer_id("qa_1", "gpt", "agentic", "The answer."), answer_id("qa_1", "gpt", "direct", "Other.")}) == 5


def test_fractional_overrides_only_where_the_judge_score_is_fractional():
    whole = judgment("imported", [entry("correctness", 7, 20)])
    with pytest.raises(JudgmentError, match=r"score 7\.5 is not a whole number, and the judge's score \(7\) is"):
        check_override(whole, "correctness", 7.5, "x")
    assert check_override(whole, "correctness", 8, "x").score == 7
    assert check_override(whole, "correctness", 8.0, "x").score == 7  # a whole number written as a float
    fractional = judgment("imported", [entry("correctness", 7.5, 20)])
    assert check_override(fractional, "correctness", 6.5, "x").score == 7.5


# ------------------------------------------------------------------------------ new-user trial findings
def test_binary_files_are_named_as_such_not_as_bad_utf8(tmp_path):
    for magic, kind in ((b"PAR1", "Parquet"), (b"PK\x03\x04", "a zip archive"), (b"\x00\x01\x02", "binary")):
        path = tmp_path / "answers.bin"
        path.write_bytes(magic + b"\x00\xff\xfe rest")
        with pytest.raises(InputFileError) as e:
            parse_answers(path)
        assert f"not a JSON lines file (looks like {kind}); answers come as JSON lines" in str(e.value)
        assert "UTF-8" not in str(e.value)


def test_negative_score_message_names_its_subject(tmp_path):
    path = write(tmp_path, {"question": "Q?", "answer": "A", "scores": {"correctness": -3}})
    result = parse_answers(path, scale=5)
    assert [str(p) for p in result.problems] == [
        f"{path}, line 1, field 'scores.correctness': scores.correctness = -3 is negative; scores are 0 or more"]


def test_differing_answer_aliases_are_noted_and_equal_ones_are_not(tmp_path):
    path = write(tmp_path, {"question": "Q?", "answer": "A", "response": "B", "prediction": "A"},
                 {"question": "Q2?", "answer": "A", "response": "A"})
    first, second = parse_answers(path).records
    assert first.text == "A" and first.notes == [
        "line 1: has 'answer' and 'response' with different texts; used 'answer' "
        "(preferred order: answer, response, model_answer, prediction)"]
    assert second.notes == []


def test_ignored_scores_and_ignored_scale_are_warned(tmp_path):
    path = write(tmp_path, {"question": "Q?", "answer": "A", "scores": {"x": 1}}, {"question": "Q2?", "answer": "B"})
    result = parse_answers(path, fmt="swe-qa-agent")
    assert result.warnings == [
        "1 record has 'scores', which the swe-qa-agent format ignores (kept only as extra fields, no judgment); "
        "to import them use --answer-format jsonl or swe-qa-error-analysis"]
    assert not result.has_scores
    plain = write(tmp_path, {"question": "Q?", "answer": "A"}, name="plain.jsonl")
    result = parse_answers(plain, scale=20)
    assert result.warnings == ["--scale 20 is ignored: the file has no imported scores"] and result.scale is None
