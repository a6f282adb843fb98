"""Curation runs through the store (benchwright.tui.services.curation_runs): which pairs a run takes, what each step reads,
what is saved (checklist versions with origin ``generated``, failed results with raw output), queue filters,
reruns that make no calls, and a cancelled run that resumes with nothing lost and nothing repeated."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from store_helpers import ALICE, FLASK

from benchwright.core.curation import StepSettings
from benchwright.core.errors import BenchwrightError
from benchwright.core.importers import parse
from benchwright.core.llm import CallStatus, Delay, LLMClient, ScriptedProvider
from benchwright.db import QueueFilter, Store
from benchwright.tui.services.curation_runs import (
    build_input,
    generated_checklist_author,
    run_curation,
    select_pairs,
)

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
BENCHMARK = DATA / "swe-qa" / "Benchmark__flask.jsonl"
SETTINGS = StepSettings(model="gen-1")

VALID = {"items": [
    {"kind": "knowledge", "key_point": "Fact one", "weight": 9,
     "rubric": [{"score": 0, "criterion": "Missing."}, {"score": 9, "criterion": "Stated."}]},
    {"kind": "clarity", "key_point": "Clarity & Organization", "weight": 1,
     "rubric": [{"score": 0, "criterion": "Severe hallucination, or an incoherent, disorganized answer."},
                {"score": 1, "criterion": "Clear, well-organized answer without severe hallucination."}]},
]}
INVALID = {"items": [dict(VALID["items"][0], weight=7, rubric=[{"score": 0, "criterion": "No."},
                                                               {"score": 7, "criterion": "Yes."}]),
                     VALID["items"][1]]}
"""Passes the JSON Schema, breaks RepoProbe §4.1 (knowledge weights sum to 7)."""
_Q = re.compile(r"<question>\n(.*?)\n</question>", re.S)


def question_in(request) -> str:
    return _Q.search(request.messages[0].content).group(1)


@pytest.fixture
def flask(store: Store, tmp_path: Path) -> Store:
    """The project with the 48 SWE-QA flask pairs imported the way `benchwright import swe-qa` does."""
    if not BENCHMARK.exists():
        pytest.skip(f"real data {BENCHMARK} is absent (the shared data folder ../shared/data is not checked out here)")
    store.add_repository(FLASK, ALICE)
    result = parse("swe-qa", BENCHMARK, repository="flask")
    assert store.apply_import(result, annotator=ALICE, file_path=BENCHMARK).added == 48
    return store


def ids_of(store: Store) -> list[str]:
    return [r.id for r in store.queue_page(ALICE, limit=1000)]


def run(store, client, step, ids, settings=SETTINGS, **kw):
    return asyncio.run(run_curation(store, client, step, ids, settings, by=ALICE, **kw))


# ------------------------------------------------------------------------------------------- checklist
def test_checklist_run_saves_generated_versions_and_records_failures(flask: Store):
    ids = ids_of(flask)[:6]
    questions = {flask.get_pair(i).question: n for n, i in enumerate(ids)}
    sent: dict[int, int] = {}

    def script(r):
        n = questions[question_in(r)]
        sent[n] = sent.get(n, 0) + 1
        if n == 2:  # invalid, then repaired
            return INVALID if sent[n] == 1 else VALID
        if n == 4:  # invalid twice
            return INVALID if sent[n] == 1 else "not even JSON"
        return VALID

    p = ScriptedProvider(script, concurrency=3)
    progress = run(flask, LLMClient(p, flask), "checklist", ids)
    assert (progress.total, progress.done, progress.failed, progress.calls) == (6, 6, 1, 8)
    for n, pid in enumerate(ids):
        v = flask.checklist_version(pid)
        cur = flask.curation_current(pid)["checklist"]
        if n == 4:
            assert v is None and cur.status == "failed"
            assert cur.raw_text == "not even JSON" and "not JSON" in cur.reason and cur.calls_made == 2
            assert len(cur.call_ids) == 2
            calls = flask.llm_calls(qa_pair_id=pid)
            assert [(c.attempt, c.status) for c in calls] == [(1, CallStatus.INVALID), (2, CallStatus.INVALID)]
            assert "knowledge weights sum to 7; they must sum to 9" in calls[0].error
        else:
            assert v is not None and v.origin == "generated" and v.is_valid and not v.is_draft
            assert v.author == generated_checklist_author("gen-1") == "llm:gen-1"
            assert v.checklist.model_dump(mode="json") == VALID
            assert cur.status == "ok" and cur.calls_made == (2 if n == 2 else 1)
    assert p.max_in_flight <= 3
    # the queue finds the failure
    failed = flask.queue_page(ALICE, QueueFilter(curation="step-failed"))
    assert [r.id for r in failed] == [ids[4]]
    # a rerun without --force takes only the failed pair (done pairs and pairs with a checklist are skipped)
    assert select_pairs(flask, "checklist", pair_ids=ids) == [ids[4]]
    assert select_pairs(flask, "checklist", pair_ids=ids, force=True) == ids


def test_rerun_of_a_finished_step_makes_no_calls(flask: Store):
    ids = ids_of(flask)[:5]
    p = ScriptedProvider(lambda r: {"rationale": "r", "code_understanding_relevant": True,
                                    "category": "Business Logic"})
    run(flask, LLMClient(p, flask), "classify", ids)
    assert len(p.calls) == 5
    assert select_pairs(flask, "classify", pair_ids=ids) == []
    # forced past the selection, each pair is found done (up to date) when its turn comes: no call, no new row
    progress = run(flask, LLMClient(p, flask), "classify", ids)
    assert len(p.calls) == 5 and progress.calls == 0 and progress.skipped == 5
    assert len(flask.curation_history(ids[0], "classify")) == 1
    # --force: new calls
    progress = run(flask, LLMClient(p, flask), "classify", ids, StepSettings(model="gen-1", force=True))
    assert len(p.calls) == 10 and progress.calls == 5
    assert len(flask.curation_history(ids[0], "classify")) == 2


def test_select_pairs_filters_limits_and_rejects_unknown_steps(flask: Store):
    all_ids = ids_of(flask)
    assert select_pairs(flask, "classify") == all_ids
    assert select_pairs(flask, "classify", limit=3) == all_ids[:3]
    hit = select_pairs(flask, "classify", where=QueueFilter(text="ensure_ascii"))
    assert hit and all("ensure_ascii" in (flask.get_pair(i).question + flask.get_pair(i).reference_answer).lower()
                       or "ensure_ascii" in flask.get_pair(i).reference_answer for i in hit)
    assert len(hit) < len(all_ids)
    with pytest.raises(BenchwrightError, match="unknown step 'judge'"):
        select_pairs(flask, "judge")


# -------------------------------------------------------------------------------------- classify, verify
def test_flags_reach_the_queue_filters(flask: Store):
    ids = ids_of(flask)[:4]
    first_q = flask.get_pair(ids[0]).question

    def classify(r):
        return {"rationale": "r", "code_understanding_relevant": question_in(r) != first_q,
                "category": "Project Architecture"}

    run(flask, LLMClient(ScriptedProvider(classify), flask), "classify", ids)
    assert [r.id for r in flask.queue_page(ALICE, QueueFilter(curation="not-code-relevant"))] == [ids[0]]
    not_classified = {r.id for r in flask.queue_page(ALICE, QueueFilter(curation="not-classified"), limit=1000)}
    assert not_classified == set(ids_of(flask)) - set(ids)

    def verify(r):
        bad = question_in(r) == flask.get_pair(ids[2]).question
        return {"self_contained": {"rationale": "r", "passed": True},
                "answerable": {"rationale": "Needs the issue thread." if bad else "ok", "passed": not bad}}

    run(flask, LLMClient(ScriptedProvider(verify), flask), "verify", ids)
    assert [r.id for r in flask.queue_page(ALICE, QueueFilter(curation="verify-failed"))] == [ids[2]]
    assert {r.id for r in flask.queue_page(ALICE, QueueFilter(curation="flagged"))} == {ids[0], ids[2]}
    counts = flask.curation_counts()
    assert counts["verify"] == {"ok": 4, "failed": 0, "flagged": 1}
    assert counts["classify"] == {"ok": 4, "failed": 0, "flagged": 1}


# -------------------------------------------------------------------------------------- enrich, inputs
def test_enrich_resolves_links_from_the_link_store(flask: Store, tmp_path: Path):
    pid = ids_of(flask)[0]
    pair = flask.get_pair(pid)
    # enrich reads the refined/enriched text only from steps before it: start from a pair with links
    url, missing = "https://flask.palletsprojects.com/en/stable/api/", "https://github.com/pallets/flask/pull/1"
    flask.save_curation_result(pid, "classify", status="ok", output={}, by=ALICE)
    page = tmp_path / "api.md"
    page.write_text("DefaultJSONProvider.ensure_ascii: escape non-ASCII.", encoding="utf-8")
    flask.add_link(url, page, by=ALICE)
    assert flask.get_link(url).content.startswith("DefaultJSONProvider") and flask.get_link(missing) is None
    with pytest.raises(BenchwrightError, match="no such file"):
        flask.add_link(url, tmp_path / "gone.md", by=ALICE)

    # a pair whose text has both links: make one by importing it
    from store_helpers import import_pairs, make_pair

    linked = make_pair(f"How is ensure_ascii documented? See {url}", f"Per {missing} and http://localhost:5000/.")
    import_pairs(flask, tmp_path, [linked])
    inp = build_input(flask, linked.id, "enrich")
    assert inp.links == {url: "DefaultJSONProvider.ensure_ascii: escape non-ASCII.", missing: None}

    def script(r):
        if r.schema_name == "link_summary":
            return {"rationale": "Docs.", "relevant": True, "summary": "Escapes non-ASCII."}
        return {"question": "How is ensure_ascii documented (it escapes non-ASCII)?", "answer": "Integrated."}

    p = ScriptedProvider(script)
    run(flask, LLMClient(p, flask), "enrich", [linked.id, pid])
    res = flask.curation_current(linked.id)["enrich"]
    assert res.flagged and res.output["integrated"]
    assert [lk["status"] for lk in res.output["links"]] == ["relevant", "unresolved"]
    assert flask.queue_page(ALICE, QueueFilter(curation="unresolved-links"))[0].id == linked.id
    plain = flask.curation_current(pid)["enrich"]
    assert plain.calls_made == 0 and not plain.flagged and plain.output["question"] == pair.question
    assert len(p.calls) == 2
    # the later steps work on the enriched text
    assert build_input(flask, linked.id, "checklist").question == res.output["question"]
    assert build_input(flask, linked.id, "enrich").question == linked.question


def test_refine_output_feeds_the_later_steps_and_keeps_the_original(flask: Store):
    pid = ids_of(flask)[1]
    original = flask.get_pair(pid)
    p = ScriptedProvider([{"question": "Refined Q?", "answer": "Refined A.", "changes": "c"}, VALID])
    run(flask, LLMClient(p, flask), "refine", [pid])
    res = flask.curation_current(pid)["refine"]
    assert res.output["original_question"] == original.question
    assert res.output["original_answer"] == original.reference_answer
    # the rewrite is the pair's current text (RepoProbe §3.2); the original stays as text version 1
    assert flask.get_pair(pid).question == "Refined Q?"
    versions = flask.text_versions(pid)
    assert [v.origin.value for v in versions] == ["original", "refined"]
    assert versions[0].question == original.question and versions[1].model == res.model
    assert versions[1].call_ids == tuple(res.call_ids)
    assert flask.queue_page(ALICE, QueueFilter(curation="refined"))[0].id == pid
    inp = build_input(flask, pid, "checklist")
    assert (inp.question, inp.answer) == ("Refined Q?", "Refined A.")
    assert build_input(flask, pid, "refine").question == original.question
    run(flask, LLMClient(p, flask), "checklist", [pid])
    assert "Refined A." in p.calls[1].messages[0].content


def test_verify_sees_the_current_checklist(flask: Store):
    pid = ids_of(flask)[0]
    from benchwright.core.checklist import Checklist

    flask.save_checklist(pid, Checklist.model_validate(VALID), author=ALICE)
    inp = build_input(flask, pid, "verify")
    assert inp.checklist is not None and inp.checklist.items[0].key_point == "Fact one"


# ------------------------------------------------------------------------------------- cancel and resume
def test_cancelled_run_resumes_with_nothing_lost_and_nothing_repeated(flask: Store):
    ids = ids_of(flask)[:10]
    slow_from = {flask.get_pair(i).question for i in ids[4:]}
    p = ScriptedProvider(lambda r: Delay(30 if question_in(r) in slow_from else 0.01, VALID), concurrency=2)
    client = LLMClient(p, flask)

    async def cancel_midway():
        task = asyncio.ensure_future(run_curation(flask, client, "checklist", ids, SETTINGS, by=ALICE))
        for _ in range(1000):
            await asyncio.sleep(0.01)
            if len(flask.pairs_with_step_done("checklist")) == 4 and p.in_flight == 2:
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    done = set(flask.pairs_with_step_done("checklist"))
    assert done == set(ids[:4])
    assert all(flask.checklist_version(i) is not None for i in ids[:4])
    statuses = [c.status for c in flask.llm_calls()]
    assert statuses.count(CallStatus.OK) == 4 and statuses.count(CallStatus.CANCELLED) == 2
    # resume: only the rest is selected and asked for
    rest = select_pairs(flask, "checklist", pair_ids=ids)
    assert rest == ids[4:]
    p2 = ScriptedProvider(lambda r: VALID, concurrency=2)
    run(flask, LLMClient(p2, flask), "checklist", rest)
    assert sorted(question_in(r) for r in p2.calls) == sorted(slow_from)
    assert set(flask.pairs_with_step_done("checklist")) == set(ids)
    assert select_pairs(flask, "checklist", pair_ids=ids) == []
    for i in ids:
        assert len(flask.checklist_history(i)) == 1  # nothing saved twice


def test_outcomes_are_stored_as_they_finish(flask: Store):
    """Each outcome is in the database before the run ends (a kill loses only what was in flight)."""
    ids = ids_of(flask)[:3]
    seen: list[int] = []

    def on_outcome(pid, outcome):
        seen.append(len(flask.pairs_with_step_done("checklist")))

    run(flask, LLMClient(ScriptedProvider(lambda r: VALID, concurrency=1), flask), "checklist", ids,
        on_outcome=on_outcome)
    assert seen == [1, 2, 3]


def test_curation_result_round_trip_is_json(flask: Store):
    pid = ids_of(flask)[0]
    r = flask.save_curation_result(pid, "verify", status="failed", output={"x": "ü"}, raw_text="raw",
                                   reason="why", call_ids=[1, 2], calls_made=2, by=ALICE)
    assert (r.output, r.raw_text, r.reason, r.call_ids, r.calls_made) == ({"x": "ü"}, "raw", "why", [1, 2], 2)
    with pytest.raises(BenchwrightError, match="unknown step"):
        flask.save_curation_result(pid, "judge", status="ok", by=ALICE)
    with pytest.raises(BenchwrightError, match="ok or failed"):
        flask.save_curation_result(pid, "verify", status="maybe", by=ALICE)
    assert json.loads(json.dumps(r.output)) == {"x": "ü"}


# ------------------------------------------------------------------ concurrency, forced-run resume, staleness
def test_two_runs_at_once_share_the_work(flask: Store):
    """Two runs of one step at the same time (two processes, or the CLI and the app) never pay for the same
    pair twice: a pair one run has claimed is left to it."""
    ids = ids_of(flask)[:8]
    p = ScriptedProvider(lambda r: Delay(0.02, VALID), concurrency=2)

    async def both():
        client = LLMClient(p, flask)
        return await asyncio.gather(run_curation(flask, client, "checklist", ids, SETTINGS, by=ALICE),
                                    run_curation(flask, client, "checklist", ids, SETTINGS, by="bob"))

    a, b = asyncio.run(both())
    assert len(p.calls) == 8  # one call per pair, not two
    assert a.skipped + b.skipped == 8 and a.done + b.done == 16
    assert all([v.version for v in flask.checklist_history(i)] == [1] for i in ids)
    assert flask.db.conn.execute("SELECT count(*) FROM work_claims").fetchone()[0] == 0  # all released


def test_a_claim_of_a_process_that_is_gone_is_taken_over(flask: Store):
    import socket

    from benchwright.db.llm import claim_owner

    pid = ids_of(flask)[0]
    gone = f"{socket.gethostname()}:999999999:x"  # no such process on this host
    mine, other = claim_owner(), f"{socket.gethostname()}:1:y"  # pid 1 always runs
    assert flask.claim("curation:verify", pid, gone)
    assert flask.claim("curation:verify", pid, mine)  # the gone owner's claim counts for nothing
    assert not flask.claim("curation:verify", pid, other)  # a live owner's claim holds
    flask.release("curation:verify", pid, other)  # only the owner releases
    assert flask.db.conn.execute("SELECT owner FROM work_claims").fetchone()[0] == mine
    flask.release("curation:verify", pid, mine)
    assert flask.claim("curation:verify", pid, other)


def test_an_interrupted_forced_run_resumes_where_it_stopped(flask: Store):
    from benchwright.tui.services.curation_runs import plan_pairs

    ids = ids_of(flask)[:6]
    run(flask, LLMClient(ScriptedProvider(lambda r: {"rationale": "r", "code_understanding_relevant": True,
                                                      "category": "Business Logic"}), flask), "classify", ids)
    run_id, since, resumed = flask.open_run("curation:classify:force", "sig", by=ALICE)
    assert not resumed
    # the forced run finishes two pairs, then is killed
    p = ScriptedProvider(lambda r: {"rationale": "again", "code_understanding_relevant": True,
                                    "category": "Business Logic"})
    run(flask, LLMClient(p, flask), "classify", ids[:2], StepSettings(model="gen-1", force=True))
    again_id, again_since, resumed = flask.open_run("curation:classify:force", "sig", by=ALICE)
    assert (again_id, again_since, resumed) == (run_id, since, True)
    plan = plan_pairs(flask, "classify", pair_ids=ids, force=True, since=since)
    assert plan.pair_ids == ids[2:] and plan.resumed_done == 2
    flask.finish_run(run_id)
    assert flask.open_run("curation:classify:force", "sig", by=ALICE)[2] is False


def test_a_result_whose_input_changed_is_stale_and_runs_again(flask: Store):
    from benchwright.tui.services.curation_runs import plan_pairs

    ids = ids_of(flask)[:3]
    verify = {"self_contained": {"rationale": "ok", "passed": True}, "answerable": {"rationale": "ok", "passed": True}}
    p = ScriptedProvider(lambda r: verify)
    run(flask, LLMClient(p, flask), "verify", ids)
    assert plan_pairs(flask, "verify", pair_ids=ids).pair_ids == []
    # refine rewrites pair 2 afterwards: its verification no longer matches what it would check now
    flask.save_curation_result(ids[1], "refine", status="ok", output={"question": "New?", "answer": "New."}, by=ALICE)
    flask.save_text_version(ids[1], "New?", "New.", origin="refined", by=ALICE)
    plan = plan_pairs(flask, "verify", pair_ids=ids)
    assert plan.pair_ids == [ids[1]] and plan.stale == 1 and plan.done == 2
    run(flask, LLMClient(p, flask), "verify", plan.pair_ids)
    assert "New?" in p.calls[-1].messages[0].content
    assert plan_pairs(flask, "verify", pair_ids=ids).pair_ids == []


def test_forced_checklist_generation_leaves_human_checklists_alone(flask: Store):
    from benchwright.core.checklist import Checklist
    from benchwright.tui.services.curation_runs import plan_pairs

    ids = ids_of(flask)[:3]
    flask.save_checklist(ids[0], Checklist.model_validate(VALID), author=ALICE, origin="edited")
    flask.save_checklist(ids[1], Checklist.model_validate(VALID), author="llm:x", origin="generated")
    plan = plan_pairs(flask, "checklist", pair_ids=ids, force=True)
    assert plan.pair_ids == ids[1:] and plan.human == [ids[0]]
    assert plan_pairs(flask, "checklist", pair_ids=ids, force=True, include_edited=True).pair_ids == ids


def test_classify_fills_a_missing_category(flask: Store):
    ids = ids_of(flask)[:2]
    p = ScriptedProvider(lambda r: {"rationale": "r", "code_understanding_relevant": True,
                                    "category": "Project Architecture"})
    run(flask, LLMClient(p, flask), "classify", ids)
    assert [flask.get_pair(i).category for i in ids] == ["Project Architecture"] * 2
    assert [r.id for r in flask.queue_page(ALICE, QueueFilter(category="Project Architecture"))] == ids
