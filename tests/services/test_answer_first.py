"""Answer-first generation (Code-QA-Bench "Methodology" 3 and 4) over the scripted provider: doc-chunks, the agent's
gold answer in the documented repository, the code-only audit against the stripped copy, the derived question
and the Q&A pair it makes (provenance, task set, key points); the doc-dependent path; a kill and a resume; a rerun
that makes no call."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from benchwright.core.agent.model import AgentSettings
from benchwright.core.curation import StepSettings
from benchwright.core.generation import (
    AUDIT_SCHEMA,
    CODE_DERIVABLE,
    DOC_DEPENDENT,
    GOLD_DOC_SCHEMA,
    QUESTION_SCHEMA,
)
from benchwright.core.llm import ScriptedProvider
from benchwright.core.llm.client import LLMClient
from benchwright.core.llm.fake import Delay, Reply
from benchwright.core.models import Repository
from benchwright.db import Store
from benchwright.tui.services.generation import (
    answer_first_view,
    cut_doc_chunks,
    plan_generation,
    run_generation,
)
from benchwright.tui.services.strip import strip_repository

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "doc_chunks_repo"
HOSTILE = "[bold]x[/] [@click=app.quit] \x1b[31m"
GOLD = ("place_order reserves each cart line with Inventory.reserve (shop/orders.py: line 29-30) and a failed "
        "reservation leaves earlier lines reserved. The counter _COUNTER numbers orders (shop/orders.py: line 31). "
        "Callers must know about the missing rollback.")
VERIFIED = ("place_order reserves each cart line with Inventory.reserve (shop/orders.py: line 29-30); an "
            "OutOfStock raised part way leaves the earlier lines reserved. _COUNTER numbers orders.")


def script(req):
    """Plays every template: the agent searches once then finishes; the others answer their schema."""
    tid = req.template_id
    if tid == "gold_agent":
        if not any(m.role == "tool" for m in req.messages):
            return Reply("Looking for place_order.", tool_calls=[("search", {"query": "def place_order", "path": None})])
        return Reply("", tool_calls=[("finish", {"answer": GOLD})])
    if tid == "gold_doc":
        size = len(req.messages[0].content)  # each chunk its own answer
        return {"answer": f"Reservations are not persisted; restock adds to a count ({size}). " + HOSTILE,
                "key_points": ["not persisted", "restock adds"]}
    if tid == "gold_audit":
        return {"claims": [
            {"claim": "reserves each line with Inventory.reserve", "verdict": "code-recoverable",
             "evidence": "shop/orders.py: for sku, qty in cart: inventory.reserve(sku, qty)", "rewrite": ""},
            {"claim": "a failed reservation leaves earlier lines reserved", "verdict": "code-recoverable",
             "evidence": "no rollback in the loop", "rewrite": ""},
            {"claim": "Callers must know about the missing rollback", "verdict": "documentation-only",
             "evidence": "only the docstring says so", "rewrite": ""},
        ], "answer": VERIFIED}
    if tid == "gold_question":
        more = " And after a restock?" if "Also restock." in req.messages[0].content else ""
        return {"question": "What happens to the stock already reserved when place_order meets an item that is "
                            f"out of stock?{more} " + HOSTILE, "key_points": ["reserve per line", "no rollback"]}
    raise AssertionError(f"unexpected template {tid}")


@pytest.fixture
def project(tmp_path):
    repo = tmp_path / "shop"
    shutil.copytree(FIXTURE, repo)
    db = tmp_path / "proj" / "p.db"
    db.parent.mkdir()
    store = Store.open(db, create=True)
    store.add_repository(Repository(name="shop", version_label="1.0", local_path=str(repo)), "setup")
    strip_repository(store, "shop", annotator="setup")
    cut_doc_chunks(store, "shop", top=2, by="setup")
    yield store
    store.close()


def run(store, step, task_set, provider, *, force=False):
    client = LLMClient(provider, store)
    if step == "gold" and task_set == CODE_DERIVABLE:
        settings = AgentSettings(model="m-gen", max_turns=4, sandbox="off")
    else:
        settings = StepSettings(model="m-gen", force=force)
    plan = plan_generation(store, step, task_set, repository="shop", force=force)
    seen = []
    final = asyncio.run(run_generation(store, client, step, task_set, plan.chunk_ids, settings, by="ada",
                                       on_outcome=lambda c, o: seen.append((c, o))))
    return plan, final, seen


def test_the_code_derivable_path_makes_a_pair_with_its_provenance(project):
    store = project
    chunks = [c.chunk for c in store.current_doc_chunks("shop")]
    assert len(chunks) == 2
    plan = plan_generation(store, "audit", CODE_DERIVABLE, repository="shop")
    assert plan.waiting == 2 and not plan.chunk_ids  # no gold answer yet
    provider = ScriptedProvider(script)
    _, final, seen = run(store, "gold", CODE_DERIVABLE, provider)
    assert final.failed == 0 and len(seen) == 2 and len(provider.calls) == 4  # two turns per chunk
    gold = store.generation_current(chunks[0].id, "gold", CODE_DERIVABLE)
    assert gold.ok and gold.output["answer"] == GOLD and gold.output["turns"] == 2
    assert [t["index"] for t in gold.trajectory] == [1, 2] and gold.trajectory[0]["tool_uses"][0]["name"] == "search"
    first_turn = provider.calls[0].messages[0].content
    assert "<documentation>" in first_turn and chunks[0].text.splitlines()[-1] in first_turn
    assert provider.calls[0].template_id == "gold_agent"

    _, final, _ = run(store, "audit", CODE_DERIVABLE, provider)
    audit_req = provider.calls[-1]
    # the auditor sees the cited file of the code-only copy: code, without its docstrings
    prompt = audit_req.messages[0].content
    assert "--- shop/orders.py" in prompt and "def place_order" in prompt and "no rollback" not in prompt.split(
        "<code>")[1]
    audit = store.generation_current(chunks[0].id, "audit", CODE_DERIVABLE)
    assert audit.output["answer"] == VERIFIED and audit.output["removed"] == 1 and audit.output["rewritten"] == 0
    assert audit.output["original_answer"] == GOLD

    _, final, seen = run(store, "question", CODE_DERIVABLE, provider)
    assert final.failed == 0
    question = store.generation_current(chunks[0].id, "question", CODE_DERIVABLE)
    pair = store.get_pair(question.qa_pair_id)
    assert pair.task_set == CODE_DERIVABLE and pair.repository == "shop"
    assert pair.question.endswith(HOSTILE) and pair.reference_answer == VERIFIED  # the audited answer
    assert pair.extra["gold_key_points"] == ["reserve per line", "no rollback"]
    prov = pair.extra["answer_first"]
    assert prov["chunk_id"] == chunks[0].id and prov["path"] == chunks[0].path
    assert prov["results"] == {"gold": gold.id, "audit": audit.id}
    view = answer_first_view(store, pair)
    assert view["chunk_text"] == chunks[0].text and view["audit"]["removed"] == 1

    # every step again: nothing to do, and a forced rerun of a direct step replays from the cache (0 calls)
    calls = len(provider.calls)
    for step in ("gold", "audit", "question"):
        plan, _, _ = run(store, step, CODE_DERIVABLE, provider)
        assert plan.chunk_ids == [] and plan.done == 2
    assert len(provider.calls) == calls
    pairs_before = len(store.filtered_pair_ids(""))
    _, final, _ = run(store, "question", CODE_DERIVABLE, provider, force=True)
    assert len(store.filtered_pair_ids("")) == pairs_before  # the same pair, not a second one


def test_the_doc_dependent_path_needs_no_agent_and_no_audit(project):
    store = project
    provider = ScriptedProvider(script)
    with pytest.raises(ValueError, match="audit is not a step of the doc-dependent path"):
        plan_generation(store, "audit", DOC_DEPENDENT)
    run(store, "gold", DOC_DEPENDENT, provider)
    assert {c.template_id for c in provider.calls} == {"gold_doc"} and len(provider.calls) == 2
    _, _, seen = run(store, "question", DOC_DEPENDENT, provider)
    pairs = [store.get_pair(i) for i in store.filtered_pair_ids("")]
    assert {p.task_set for p in pairs} == {DOC_DEPENDENT} and len(pairs) == 1
    assert pairs[0].reference_answer.startswith("Reservations are not persisted")
    # the script derives the same question for the second chunk: never merged into the first chunk's pair
    (failed,) = [o for _, o in seen if o.status == "failed"]
    assert failed.reason.startswith("question: not added: the derived question is already pair #1's")
    # the code-derivable results of these chunks are apart: their gold has not run
    assert plan_generation(store, "question", CODE_DERIVABLE, repository="shop").waiting == 2


def test_a_stale_audit_runs_again_when_the_gold_answer_changes(project):
    store = project
    provider = ScriptedProvider(script)
    run(store, "gold", CODE_DERIVABLE, provider)
    run(store, "audit", CODE_DERIVABLE, provider)
    chunk = store.current_doc_chunks("shop")[0].chunk
    store.save_generation_result(chunk.id, "shop", "gold", CODE_DERIVABLE, status="ok",
                                 output={"answer": GOLD + " More."}, by="ada")
    plan = plan_generation(store, "audit", CODE_DERIVABLE, repository="shop")
    assert plan.chunk_ids == [chunk.id] and plan.stale == 1 and plan.done == 1


def test_killed_mid_run_and_resumed_nothing_lost_nothing_repeated(project):
    store = project
    slow = ScriptedProvider(lambda req: Delay(0.05, script(req)), concurrency=1)

    async def go():
        client = LLMClient(slow, store)
        plan = plan_generation(store, "gold", CODE_DERIVABLE, repository="shop")
        settings = AgentSettings(model="m-gen", max_turns=4, sandbox="off")
        task = asyncio.ensure_future(run_generation(store, client, "gold", CODE_DERIVABLE, plan.chunk_ids,
                                                    settings, by="ada"))
        while len(slow.calls) < 4 and not task.done():  # chunk 1 done (2 turns), chunk 2's turn 1 done, 2 sent
            await asyncio.sleep(0.01)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    chunks = [c.chunk for c in store.current_doc_chunks("shop")]
    assert store.generation_current(chunks[0].id, "gold", CODE_DERIVABLE).ok
    assert store.generation_current(chunks[1].id, "gold", CODE_DERIVABLE) is None
    resumed = ScriptedProvider(script)
    plan, final, _seen = run(store, "gold", CODE_DERIVABLE, resumed)
    assert plan.chunk_ids == [chunks[1].id] and final.failed == 0
    # the second chunk's first turn finished before the kill, so it came from the ledger
    assert len(resumed.calls) == 1 and final.cached == 1
    again = ScriptedProvider(script)
    plan, _, _ = run(store, "gold", CODE_DERIVABLE, again)
    assert plan.chunk_ids == [] and again.calls == []


def test_a_failed_call_is_stored_failed_and_tried_again(project):
    store = project
    from benchwright.core.llm.base import CallStatus, LLMError

    def broken(req):
        raise LLMError("server down", status=CallStatus.ERROR)

    _, final, seen = run(store, "gold", DOC_DEPENDENT, ScriptedProvider(broken))
    assert final.failed == 2 and all(o.status == "failed" and "server down" in o.reason for _, o in seen)
    chunk = store.current_doc_chunks("shop")[0].chunk
    assert store.generation_current(chunk.id, "gold", DOC_DEPENDENT).status == "failed"
    assert len(plan_generation(store, "gold", DOC_DEPENDENT).chunk_ids) == 2


@pytest.mark.parametrize("schema", [GOLD_DOC_SCHEMA, AUDIT_SCHEMA, QUESTION_SCHEMA])
def test_schemas_suit_openai_strict_output(schema):
    """OpenAI strict mode: every object lists every property as required and allows no other."""

    def check(node):
        if node.get("type") == "object":
            assert node["additionalProperties"] is False and set(node["required"]) == set(node["properties"])
            for child in node["properties"].values():
                check(child)
        if node.get("type") == "array":
            check(node["items"])

    check(schema)
    json.dumps(schema)


def test_the_audit_over_the_real_openai_sdk(project):
    """One step through the real ``openai`` SDK on httpx2.MockTransport: the strict JSON Schema goes over the wire,
    the reply is parsed and stored, and a rerun sends nothing."""
    import httpx2

    from benchwright.core.llm.openai_provider import OpenAIProvider

    store = project
    run(store, "gold", CODE_DERIVABLE, ScriptedProvider(script))
    bodies = []

    def handler(request):
        body = json.loads(request.content)
        bodies.append(body)
        content = json.dumps(script(type("R", (), {"template_id": "gold_audit"})()))
        return httpx2.Response(200, json={
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, "refusal": None}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    def provider():
        return OpenAIProvider("local", base_url="http://llm.test/v1", api_key_env=None, max_retries=0,
                              http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))

    _, final, _ = run(store, "audit", CODE_DERIVABLE, provider())
    assert final.failed == 0 and len(bodies) == 2
    fmt = bodies[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["properties"]["claims"]["items"]["required"] == [
        "claim", "verdict", "evidence", "rewrite"]
    chunk = store.current_doc_chunks("shop")[0].chunk
    audit = store.generation_current(chunk.id, "audit", CODE_DERIVABLE)
    assert audit.ok and audit.output["answer"] == VERIFIED and audit.model == "gpt-test"
    plan, _, _ = run(store, "audit", CODE_DERIVABLE, provider())
    assert plan.chunk_ids == [] and len(bodies) == 2


@pytest.mark.slow
def test_doc_chunks_of_flask(tmp_path):
    """flask 3.1.1 (../shared/data/get-flask-repo): its Sphinx documentation and docstrings, the change log left
    out, the best chunks prose about code that resolves in it."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
    from flask_source import flask_tree_or_skip

    from benchwright.core.doc_chunks import doc_chunks

    tree = flask_tree_or_skip()
    chunks = doc_chunks(tree, "flask")
    kinds = {c.kind for c in chunks}
    assert kinds == {"rst", "docstring", "markdown"} and len(chunks) > 300
    assert not any(c.path.upper().startswith("CHANGES") for c in chunks)
    best = chunks[:20]
    assert all(c.path.startswith("docs/") or c.kind == "docstring" for c in best)
    assert all(c.features["references"] >= 0.75 for c in best)
    app = [c for c in chunks if c.path == "src/flask/app.py" and c.title == "Flask"]
    assert app and any(ok for _, ok in app[0].references)
    assert chunks == doc_chunks(tree, "flask")  # deterministic


def test_a_huge_chunk_is_cut_in_the_prompt():
    from benchwright.core.doc_chunks import DocChunk
    from benchwright.core.generation import PASSAGE_CHARS, chunk_passage

    big = DocChunk("dc_1", "r", "a.md", 1, 2, "markdown", "T" * 10_000, "w " * 600_000, {}, (), 0.1)
    passage = chunk_passage(big)
    assert len(passage) < PASSAGE_CHARS + 1_000 and "[passage cut: 1,180,000 more characters]" in passage


@pytest.mark.parametrize("step, task_set, before", [
    ("gold", DOC_DEPENDENT, ()), ("audit", CODE_DERIVABLE, (("gold", CODE_DERIVABLE),)),
    ("question", CODE_DERIVABLE, (("gold", CODE_DERIVABLE), ("audit", CODE_DERIVABLE)))])
def test_each_direct_step_killed_and_resumed(project, step, task_set, before):
    store = project
    for earlier in before:
        run(store, *earlier, ScriptedProvider(script))
    if step == "question":  # the second chunk's verified answer its own (else its request is the first's, cached)
        second = store.current_doc_chunks("shop")[1].chunk
        store.save_generation_result(second.id, "shop", "audit", CODE_DERIVABLE, status="ok",
                                     output={"answer": VERIFIED + " Also restock."}, by="ada")
    slow = ScriptedProvider(lambda req: Delay(0.05, script(req)), concurrency=1)

    async def go():
        plan = plan_generation(store, step, task_set, repository="shop")
        task = asyncio.ensure_future(run_generation(store, LLMClient(slow, store), step, task_set, plan.chunk_ids,
                                                    StepSettings(model="m-gen"), by="ada"))
        while len(slow.calls) < 2 and not task.done():  # the first chunk done, the second's call sent
            await asyncio.sleep(0.01)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    resumed = ScriptedProvider(script)
    plan, final, _ = run(store, step, task_set, resumed)
    assert plan.done == 1 and len(plan.chunk_ids) == 1 and final.failed == 0 and len(resumed.calls) == 1
    again = ScriptedProvider(script)
    assert run(store, step, task_set, again)[0].chunk_ids == [] and again.calls == []
