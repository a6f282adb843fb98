"""Judging runs over the store: eligibility, resume (a rerun makes no calls), repeated runs as separate judgments,
unscored judgments stored and retried, direct answers, failure-mode selection and annotator corrections."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from store_helpers import ALICE, IDS

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.judging import AnswerSettings, JudgeSettings
from benchwright.core.llm import LLMClient, ScriptedProvider
from benchwright.tui.services.judge_runs import (
    INELIGIBLE_DRAFT_CHECKLIST,
    INELIGIBLE_NO_CHECKLIST,
    INELIGIBLE_NO_REFERENCE,
    plan_direct_answers,
    plan_failure_modes,
    plan_judging,
    run_direct_answers,
    run_failure_modes,
    run_judging,
    set_failure_mode,
)

CHECKLIST = Checklist(items=[
    ChecklistItem(key_point="First fact", weight=5, rubric=binary_rubric(5)),
    ChecklistItem(key_point="Second fact", weight=4, rubric=binary_rubric(4)),
    clarity_item(),
])
# IDS[0..2] get a valid checklist, IDS[3] a draft, IDS[4] none; IDS[6] has no reference answer.
JUDGED = IDS[:3]


@pytest.fixture
def project(loaded):
    for pid in JUDGED:
        loaded.save_checklist(pid, CHECKLIST, author=ALICE)
    draft = Checklist(items=[ChecklistItem(key_point="only", weight=3, rubric=binary_rubric(3)), clarity_item()])
    loaded.save_checklist(IDS[3], draft, author=ALICE, draft=True)
    records = [AnswerRecord(line=n + 1, text=f"Answer of model m1 to pair {n}.", pair_ref=pid)
               for n, pid in enumerate([*IDS[:5], IDS[6]])]
    report = loaded.import_answers(records, model="m1", condition="closed-book", created_by=ALICE)
    assert report.added == 6
    return loaded


def scripted(scores_by_answer: dict[str, tuple] | None = None, default=(5, 4, 1)):
    """A provider that scores the checklist judge's request by the candidate answer's text."""

    def answer(req):
        text = req.messages[0].content
        cand = re.search(r"<candidate_answer>\n(.*?)\n</candidate_answer>", text, re.S).group(1)
        scores = (scores_by_answer or {}).get(cand, default)
        if scores == "bad":
            return "not json at all"
        return {"items": [{"item": i, "rationale": f"r{i}", "score": s} for i, s in enumerate(scores, 1)]}

    return ScriptedProvider(answer)


def judge(store, provider, targets, judge_name="checklist", **kw):
    client = LLMClient(provider, store)
    return asyncio.run(run_judging(store, client, judge_name, targets, JudgeSettings(model="judge-1", **kw), by=ALICE))


def answer_of(store, pid):
    return store.answers(pair_id=pid, model="m1")[0]


def test_plan_reports_ineligible_answers_and_judges_only_valid_checklists(project):
    plan = plan_judging(project, "checklist", "judge-1", runs=2)
    assert plan.answers == 6
    assert plan.ineligible[INELIGIBLE_DRAFT_CHECKLIST] == [answer_of(project, IDS[3]).id]
    assert plan.ineligible[INELIGIBLE_NO_CHECKLIST] == [answer_of(project, IDS[4]).id]
    assert plan.ineligible[INELIGIBLE_NO_REFERENCE] == [answer_of(project, IDS[6]).id]
    assert plan.targets == [(answer_of(project, pid).id, r) for pid in JUDGED for r in (0, 1)]
    # scalar judges need no checklist, only a reference answer
    scalar = plan_judging(project, "swe-qa-pro", "judge-1")
    assert scalar.runs == 3 and len(scalar.targets) == 5 * 3
    assert plan_judging(project, "checklist", "judge-1", limit=2).targets == \
        [(answer_of(project, pid).id, 0) for pid in JUDGED[:2]]


def test_runs_are_stored_as_separate_judgments_and_a_rerun_makes_no_calls(project):
    plan = plan_judging(project, "checklist", "judge-1", runs=2)
    provider = scripted()
    progress = judge(project, provider, plan.targets)
    assert progress.done == 6 and progress.calls == 6 and progress.cached == 0
    assert sorted(c.repeat for c in provider.calls) == [0, 0, 0, 1, 1, 1]
    js = project.judgments(judge="checklist")
    assert len(js) == 6 and {j.run_index for j in js} == {0, 1}
    j = js[0]
    assert j.status == "scored" and j.score_rate == pytest.approx(1.0) and j.judge_model == "judge-1"
    assert j.checklist_version == project.checklist_version(project.get_answer(j.answer_id).qa_pair_id).version
    assert [e.key for e in j.entries] == ["1", "2", "3"] and j.entries[0].label == "First fact"
    calls = {c.id: c for c in project.llm_calls()}
    assert j.call_ids and all(calls[c].purpose == "judge:checklist" for c in j.call_ids)
    assert calls[j.call_ids[0]].repeat == j.run_index
    # the plan now has nothing to do ...
    again = plan_judging(project, "checklist", "judge-1", runs=2)
    assert again.targets == [] and again.done == 6
    # ... and even forced through the same targets, the ledger answers every call
    fresh = scripted()
    progress = judge(project, fresh, plan.targets)
    assert fresh.calls == [] and progress.cached == 6
    # a third run is new work
    assert len(plan_judging(project, "checklist", "judge-1", runs=3).targets) == 3


def test_unscored_judgment_is_stored_with_reason_and_retried_by_a_rerun(project):
    bad_answer = answer_of(project, JUDGED[1])
    provider = scripted({bad_answer.text: "bad"})
    judge(project, provider, plan_judging(project, "checklist", "judge-1").targets)
    j = project.latest_judgment(bad_answer.id, "checklist", "judge-1", 0)
    assert j.status == "unscored" and j.score_rate is None
    assert "invalid output after one repair attempt" in j.reason and j.raw_text == "not json at all"
    assert [e.score for e in j.entries] == [None, None, None] and len(j.call_ids) == 2
    plan = plan_judging(project, "checklist", "judge-1")
    assert plan.targets == [(bad_answer.id, 0)] and plan.done == 2
    judge(project, scripted(), plan.targets)
    latest = project.judgments(answer_id=bad_answer.id, judge="checklist", latest_only=True)
    assert [x.status for x in latest] == ["scored"]
    assert [x.status for x in project.judgments(answer_id=bad_answer.id)] == ["unscored", "scored"]


def test_a_new_checklist_version_needs_a_new_judgment(project):
    judge(project, scripted(), plan_judging(project, "checklist", "judge-1").targets)
    project.save_checklist(JUDGED[0], Checklist(items=[
        ChecklistItem(key_point="Only fact", weight=9, rubric=binary_rubric(9)), clarity_item()]), author=ALICE)
    plan = plan_judging(project, "checklist", "judge-1")
    assert plan.targets == [(answer_of(project, JUDGED[0]).id, 0)]
    judge(project, ScriptedProvider([{"items": [{"item": 1, "rationale": "x", "score": 9},
                                                {"item": 2, "rationale": "y", "score": 0}]}]), plan.targets)
    j = project.latest_judgment(plan.targets[0][0], "checklist", "judge-1")
    assert j.score_rate == pytest.approx(0.9) and j.checklist_version == 2


def test_scalar_judgments_store_seed_and_scale(project):
    plan = plan_judging(project, "code-qa-bench", "judge-1", runs=1, limit=1)
    out = {d: {"rationale": "ok", "score": 4} for d in ("accuracy", "completeness", "specificity")}
    judge(project, ScriptedProvider([out]), plan.targets, judge_name="code-qa-bench")
    j = project.judgments(judge="code-qa-bench")[0]
    assert j.scale_max == 5 and j.score_rate == pytest.approx(0.8) and j.seed is None
    plan = plan_judging(project, "swe-qa-pro", "judge-1", runs=1, limit=1)

    def swe(req):
        label = re.search(r'"rated_answer": "([AB])"', req.messages[0].content).group(1)
        return {"rated_answer": label, **{d: {"rationale": "fine", "score": 7} for d in
                                          ("correctness", "completeness", "relevance", "clarity", "reasoning")}}

    judge(project, ScriptedProvider(swe), plan.targets, judge_name="swe-qa-pro", seed=3)
    j = project.judgments(judge="swe-qa-pro")[0]
    from benchwright.core.judging import order_seed

    assert j.seed == order_seed(j.answer_id, 0, 3) and j.scale_max == 10 and j.score_rate == pytest.approx(0.7)


def test_direct_answers_are_stored_and_a_rerun_has_nothing_to_do(project):
    plan = plan_direct_answers(project, "m2", "closed-book", limit=3)
    assert plan.pair_ids == IDS[:3]
    provider = ScriptedProvider(lambda req: "Direct: " + re.search(r"<question>\n(.*?)\n</question>",
                                                                   req.messages[0].content, re.S).group(1))
    client = LLMClient(provider, project)
    asyncio.run(run_direct_answers(project, client, plan.pair_ids, AnswerSettings(model="m2"),
                                   condition="closed-book", by=ALICE))
    got = project.answers(model="m2")
    assert [a.qa_pair_id for a in got] == IDS[:3]
    a = got[0]
    assert a.condition == "closed-book" and a.source_format == "direct-answer" and a.text.startswith("Direct: ")
    assert a.text == "Direct: " + project.get_pair(IDS[0]).question
    assert a.extra["call_ids"] and all(c.json_schema is None for c in provider.calls)
    again = plan_direct_answers(project, "m2", "closed-book", limit=3)
    assert again.already_answered == 3 and again.pair_ids == IDS[3:6]
    with pytest.raises(BenchwrightError, match="condition"):
        plan_direct_answers(project, "m2", "open-book")


def test_failure_modes_pick_answers_below_60_percent_and_keep_annotator_corrections(project):
    low, mid, high = (answer_of(project, pid) for pid in JUDGED)
    # low: 0/10 and 5/10 -> mean 25%; mid: 6/10 and 9/10 -> 75%; high: 100%
    scores = {low.text: [(0, 0, 0), (5, 0, 0)], mid.text: [(5, 0, 1), (5, 4, 0)], high.text: [(5, 4, 1)] * 2}

    def answer(req):
        text = req.messages[0].content
        cand = re.search(r"<candidate_answer>\n(.*?)\n</candidate_answer>", text, re.S).group(1)
        s = scores[cand][req.repeat]
        return {"items": [{"item": i, "rationale": f"r{i}", "score": v} for i, v in enumerate(s, 1)]}

    judge(project, ScriptedProvider(answer), plan_judging(project, "checklist", "judge-1", runs=2).targets)
    plan = plan_failure_modes(project)
    assert [c.answer.id for c in plan.candidates] == [low.id]
    assert plan.candidates[0].score_rate == pytest.approx(0.25)
    assert plan.above_threshold == 2 and plan.not_judged == 3
    # overrides that take mid's run 0 from 6/10 to 0/10 bring its mean (0 + 90%) / 2 below 60%
    j = project.latest_judgment(mid.id, "checklist", "judge-1", 0)
    project.add_override(j.id, "3", 0, "no clarity after all", ALICE)
    project.add_override(j.id, "1", 0, "wrong function", ALICE)
    assert {c.answer.id for c in plan_failure_modes(project).candidates} == {low.id, mid.id}

    provider = ScriptedProvider(lambda req: {"rationale": "Stays vague.", "mode": "shallow-explanation"})
    cands = plan_failure_modes(project).candidates
    asyncio.run(run_failure_modes(project, LLMClient(provider, project), cands, JudgeSettings(model="clf")))
    label = project.failure_mode(low.id)
    assert (label.mode, label.origin, label.judge_model) == ("shallow-explanation", "llm", "clf")
    assert "Item 1 (knowledge, weight 5): First fact" in provider.calls[0].messages[0].content
    assert "scores by run: 0, 5 of 5" in provider.calls[0].messages[0].content
    assert plan_failure_modes(project).labelled == 2 and not plan_failure_modes(project).candidates

    set_failure_mode(project, low.id[:10], "edit-bias", "Proposes a new flag.", annotator=ALICE)
    label = project.failure_mode(low.id)
    assert (label.mode, label.origin, label.annotator, label.rationale) == \
        ("edit-bias", "annotator", ALICE, "Proposes a new flag.")
    assert [x.origin for x in project.failure_mode_history(low.id)] == ["llm", "annotator"]
    forced = plan_failure_modes(project, force=True)
    assert [c.answer.id for c in forced.candidates] == [mid.id] and forced.annotator_labelled == 1
    with pytest.raises(BenchwrightError, match="reason"):
        set_failure_mode(project, low.id, "edit-bias", "  ", annotator=ALICE)
    with pytest.raises(BenchwrightError, match="failure mode"):
        set_failure_mode(project, low.id, "laziness", "x", annotator=ALICE)
    with pytest.raises(NotFoundError):
        set_failure_mode(project, "ans_ffffffffffff", "edit-bias", "x", annotator=ALICE)


def test_judgments_keep_raw_text_as_json(project):
    provider = ScriptedProvider([json.dumps({"items": []})] * 2)
    target = plan_judging(project, "checklist", "judge-1", limit=1).targets
    judge(project, provider, target)
    j = project.latest_judgment(target[0][0], "checklist", "judge-1")
    assert j.status == "unscored" and "items 1, 2, 3 missing" in j.reason and j.raw_text == '{"items": []}'


def test_two_judge_runs_at_once_share_the_work(project):
    """Two runs judging the same answers at once (two processes, or two annotators) never pay for one run twice:
    a run another is judging is left to it."""
    from benchwright.core.llm import Delay

    plan = plan_judging(project, "checklist", "judge-1", runs=2)
    base = scripted()
    provider = ScriptedProvider(lambda r: Delay(0.02, base._script(r)), concurrency=2)

    async def both():
        client = LLMClient(provider, project)
        settings = JudgeSettings(model="judge-1")
        return await asyncio.gather(run_judging(project, client, "checklist", plan.targets, settings, by=ALICE),
                                    run_judging(project, client, "checklist", plan.targets, settings, by="bob"))

    a, b = asyncio.run(both())
    assert len(provider.calls) == 6  # one call per (answer, run), not two
    assert a.skipped + b.skipped == 6
    assert len(project.judgments(judge="checklist")) == 6
    assert project.db.conn.execute("SELECT count(*) FROM work_claims").fetchone()[0] == 0
