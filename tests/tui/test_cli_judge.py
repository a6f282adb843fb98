"""``benchwright judge``, ``answer``, ``failure-modes`` and ``failure-mode set|show`` end to end over the scripted
provider (injected through the click context object, as ``provider_factory``)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.llm import ScriptedProvider
from benchwright.db import Store
from benchwright.tui.cli import main

CHECKLIST = Checklist(items=[
    ChecklistItem(key_point="Names app.py", weight=6, rubric=binary_rubric(6)),
    ChecklistItem(key_point="Gives the line", weight=3, rubric=binary_rubric(3)),
    clarity_item(),
])


@pytest.fixture
def judged_project(project_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    db, ids = project_factory(tmp_path, n=4)
    with Store.open(db) as store:
        for pid in ids[:3]:
            store.save_checklist(pid, CHECKLIST, author="setup")
        store.import_answers([AnswerRecord(line=i + 1, text=f"[red]answer[/red] {i}", pair_ref=pid)
                              for i, pid in enumerate(ids)], model="m1", condition="closed-book", created_by="setup")
    return db, ids


def invoke(db, args, provider=None):
    obj = {"provider_factory": (lambda config, role: provider)} if provider is not None else {}
    return CliRunner().invoke(main, ["--db", str(db), *args], obj=obj, catch_exceptions=False)


def checklist_judge(bad_answer: str | None = None):
    def answer(req):
        cand = re.search(r"<candidate_answer>\n(.*?)\n</candidate_answer>", req.messages[0].content, re.S).group(1)
        if cand == bad_answer:
            return {"items": [{"item": 1, "rationale": "x", "score": 4}]}  # 4 not allowed, items missing
        score = 0 if cand.endswith("0") else 6
        return {"items": [{"item": 1, "rationale": "names it", "score": score},
                          {"item": 2, "rationale": "no line", "score": 0},
                          {"item": 3, "rationale": "clear", "score": 1}]}

    return ScriptedProvider(answer)


def test_judge_checklist_end_to_end_with_runs_summary_and_rerun(judged_project):
    db, _ = judged_project
    provider = checklist_judge(bad_answer="[red]answer[/red] 2")
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--runs", "2", "--as", "alice"], provider)
    assert r.exit_code == 1, r.output  # unscored runs: exit 1
    assert "not judged: 1 answer (no checklist)" in r.output
    assert "judge checklist: 4 scored, 2 unscored" in r.output
    assert "unscored by reason: invalid output 2" in r.output
    assert "not one of the allowed scores" in r.output
    assert len(provider.calls) == 4 + 2 * 2  # the bad answer's two runs each got one repair turn
    assert sorted(c.repeat for c in provider.calls if len(c.messages) == 1) == [0, 0, 0, 1, 1, 1]
    with Store.open(db) as store:
        js = store.judgments(judge="checklist", judge_model="j1")
        assert len(js) == 6 and {j.created_by for j in js} == {"alice"}
        assert sorted(j.score_rate for j in js if j.scored) == pytest.approx([0.1, 0.1, 0.7, 0.7])
    # a rerun only retries the unscored runs; the scored ones make no call
    again = checklist_judge()
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--runs", "2"], again)
    assert r.exit_code == 0, r.output
    assert "judge checklist: 2 scored, 0 unscored, 4 already judged (skipped)" in r.output
    assert len(again.calls) == 2
    idle = checklist_judge()
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--runs", "2"], idle)
    assert "nothing to do" in r.output and idle.calls == []


def test_judge_swe_qa_pro_defaults_to_three_runs(judged_project):
    db, _ = judged_project

    def swe(req):
        label = re.search(r'"rated_answer": "([AB])"', req.messages[0].content).group(1)
        return {"rated_answer": label, **{d: {"rationale": f"Answer {label} is fine", "score": 6} for d in
                                          ("correctness", "completeness", "relevance", "clarity", "reasoning")}}

    provider = ScriptedProvider(swe)
    r = invoke(db, ["judgments", "run", "swe-qa-pro", "--model", "j1", "--limit", "2"], provider)
    assert r.exit_code == 0, r.output
    assert "judge swe-qa-pro: 6 scored, 0 unscored" in r.output
    with Store.open(db) as store:
        js = store.judgments(judge="swe-qa-pro")
        answers = sorted({j.answer_id for j in js})
        assert sorted((j.answer_id, j.run_index) for j in js) == [(a, k) for a in answers for k in range(3)]
        assert len(answers) == 2 and len(provider.calls) == 6
        assert all(j.seed is not None and j.score_rate == pytest.approx(0.6) for j in js)
        assert "(candidate)" in js[0].entries[0].rationale


def test_judge_without_a_model_says_what_to_configure(judged_project):
    db, _ = judged_project
    r = CliRunner().invoke(main, ["--db", str(db), "judgments", "run", "checklist"])
    assert r.exit_code == 1
    assert "error: no model configured for the judge role" in r.output
    assert "[roles.judge]" in r.output


def test_answer_generates_direct_answers_and_stores_them(judged_project):
    db, ids = judged_project
    provider = ScriptedProvider(lambda req: "From memory: it is in app.py.")
    r = invoke(db, ["answers", "generate", "--model", "m9", "--limit", "2"], provider)
    assert r.exit_code == 0, r.output
    assert "answer (m9, closed-book): 2 answers stored, 0 failed" in r.output
    with Store.open(db) as store:
        got = store.answers(model="m9", condition="closed-book")
    assert [a.qa_pair_id for a in got] == ids[:2] and got[0].text == "From memory: it is in app.py."
    r = invoke(db, ["answers", "generate", "--model", "m9", "--condition", "direct"], ScriptedProvider(["A1", "", "A3", "A4"]))
    assert r.exit_code == 1 and "3 answers stored, 1 failed" in r.output and "empty answer" in r.output
    # the empty reply was not cached: a rerun asks again for that pair only
    retry = ScriptedProvider(["A2"])
    r = invoke(db, ["answers", "generate", "--model", "m9", "--condition", "direct"], retry)
    assert r.exit_code == 0 and "1 answer stored, 0 failed, 3 pairs already answered" in r.output
    assert len(retry.calls) == 1
    r = invoke(db, ["answers", "generate", "--model", "m9", "--condition", "direct"], ScriptedProvider([]))
    assert r.exit_code == 0 and "nothing to do; 4 pairs already answered" in r.output


def test_a_hostile_model_name_is_printed_literally_by_answers_generate(judged_project):
    db, _ = judged_project
    name = "m\x1b[31m[bold]x[/bold]"
    for _ in range(2):  # the summary of a run, then the "nothing to do" line of the rerun
        r = invoke(db, ["answers", "generate", "--model", name, "--limit", "1"], ScriptedProvider(lambda req: "A."))
        assert r.exit_code == 0, r.output
        assert "\x1b" not in r.output and "m␛[31m[bold]x[/bold]" in r.output


def test_failure_modes_and_an_annotator_correction(judged_project):
    db, ids = judged_project
    invoke(db, ["judgments", "run", "checklist", "--model", "j1"], checklist_judge())  # answer 0 scores 10%, others 70%
    provider = ScriptedProvider(lambda req: {"rationale": "Generic; never says where.", "mode": "shallow-explanation"})
    r = invoke(db, ["failure-modes", "classify", "--model", "clf"], provider)
    assert r.exit_code == 0, r.output
    assert "failure-modes: 1 labelled, 0 failed" in r.output and "shallow-explanation 1" in r.output
    assert len(provider.calls) == 1
    with Store.open(db) as store:
        aid = store.answers(pair_id=ids[0], model="m1")[0].id
        assert store.failure_mode(aid).mode == "shallow-explanation"
    r = invoke(db, ["failure-modes", "classify", "--model", "clf"], ScriptedProvider([]))
    assert "nothing to do" in r.output and "1 already labelled" in r.output
    r = invoke(db, ["failure-modes", "set", aid[:12], "hallucination", "--reason", "Cites [b]gone.py[/b]",
                    "--as", "bob"])
    assert r.exit_code == 0, r.output
    assert f"{aid}: failure mode hallucination (was shallow-explanation, llm), set by bob" in r.output
    r = invoke(db, ["failure-modes", "show", aid])
    assert "shallow-explanation  (llm: clf)" in r.output and "hallucination  (annotator: bob)" in r.output
    assert "Cites [b]gone.py[/b]" in r.output  # printed literally
    r = invoke(db, ["failure-modes", "set", aid, "laziness", "--reason", "x"])
    assert r.exit_code == 2
    r = invoke(db, ["failure-modes", "set", "ans_nope00", "edit-bias", "--reason", "x"])
    assert r.exit_code == 1 and "error: no answer with id" in r.output


def test_judge_against_an_openai_compatible_server_that_sometimes_returns_invalid_scores(judged_project,
                                                                                           monkeypatch):
    """The real openai SDK over HTTP (tests/llm_server.py), configured through benchwright.toml: an invalid
    score is repaired, a score still invalid after the repair and an HTTP 500 are stored unscored."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from llm_server import LLMServer, Reply

    db, ids = judged_project

    def responder(body, n):
        users = [m for m in body["messages"] if m["role"] == "user"]
        user = users[0]["content"]
        cand = re.search(r"<candidate_answer>\n(.*?)\n</candidate_answer>", user, re.S).group(1)
        good = {"items": [{"item": 1, "rationale": "names it", "score": 6},
                          {"item": 2, "rationale": "no line", "score": 0},
                          {"item": 3, "rationale": "clear", "score": 1}]}
        bad = {"items": [{**good["items"][0], "score": 5}, *good["items"][1:]]}  # 5 is not in {0, 6}
        repair = len(users) > 1
        if cand.endswith(" 0"):
            return Reply(bad if not repair else good)  # repaired
        if cand.endswith(" 1"):
            return Reply(bad)  # still invalid after the repair
        if cand.endswith(" 2"):
            return Reply(status=500, error_message="upstream exploded")
        return Reply(good)

    monkeypatch.setenv("BW_TEST_JUDGE_KEY", "dummy")
    with LLMServer(responder=responder) as server:
        (db.parent / "benchwright.toml").write_text(
            f'[providers.local]\nkind = "openai"\nbase_url = "{server.base_url}"\napi_key_env = "BW_TEST_JUDGE_KEY"\n'
            'max_retries = 0\n\n[roles.judge]\nprovider = "local"\nmodel = "local-judge"\ntemperature = 0.0\n',
            encoding="utf-8")
        r = CliRunner().invoke(main, ["--db", str(db), "judgments", "run", "checklist"], catch_exceptions=False)
        assert r.exit_code == 1, r.output  # unscored runs: exit 1
        assert "judge checklist: 1 scored, 2 unscored" in r.output
        assert "invalid output 1" in r.output and "provider error 1" in r.output
        sent = server.requests
        assert all(b["model"] == "local-judge" and b["response_format"]["json_schema"]["name"] ==
                   "checklist_judgment" for b in sent)
    with Store.open(db) as store:
        by_pair = {store.get_answer(j.answer_id).qa_pair_id: j for j in store.judgments(judge="checklist")}
    assert by_pair[ids[0]].status == "scored" and by_pair[ids[0]].score_rate == pytest.approx(0.7)
    assert by_pair[ids[1]].status == "unscored" and "score 5 is not one of the allowed scores [0, 6]" in \
        by_pair[ids[1]].reason and '"score": 5' in by_pair[ids[1]].raw_text
    assert by_pair[ids[2]].status == "unscored" and by_pair[ids[2]].reason.startswith("provider error")


def test_more_than_ten_truncated_runs_point_to_the_truncated_calls_not_the_invalid_ones(judged_project):
    from benchwright.core.llm import Reply

    db, _ = judged_project
    provider = ScriptedProvider(lambda req: Reply('{"items": [{"item": 1, "rat', stop_reason="length"))
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--runs", "4"], provider)
    assert r.exit_code == 1, r.output
    assert "unscored by reason: truncated 12" in r.output
    assert "... and 2 more (see: benchwright calls --status truncated)" in r.output
