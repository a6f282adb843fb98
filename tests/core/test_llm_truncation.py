"""Stop reasons and truncated output (issue 12 item 4): every call's stop reason is in the ledger (normalized and
raw); an output cut off at the token budget is ``truncated`` (kept, never parsed as complete), gets one retry with
a larger budget (not the JSON repair turn), and if still cut off the judgment is unscored, the curation step fails
and a direct answer is stored flagged. Over the scripted provider and over the real SDKs on httpx2.MockTransport."""

from __future__ import annotations

import json

import httpx2
import pytest

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.curation import PairInput, StepSettings, generate_checklist
from benchwright.core.judging import AnswerSettings, JudgeInput, JudgeSettings, direct_answer, judge_checklist
from benchwright.core.llm import (
    CallStatus,
    ChatMessage,
    LLMClient,
    LLMError,
    LLMRefusalError,
    LLMRequest,
    MemoryLedger,
    Reply,
    ScriptedProvider,
)
from benchwright.core.llm.base import StopReason, normalize_stop_reason
from benchwright.core.llm.client import TruncationPolicy
from benchwright.core.models import QAPair, SourceRef

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
          "additionalProperties": False}


def req(*, schema: dict | None = SCHEMA, **params) -> LLMRequest:
    return LLMRequest(model="m1", system="sys", messages=(ChatMessage("user", "Explain it."),), json_schema=schema,
                      params=params)


@pytest.fixture(params=["memory", "store"])
def ledger(request, tmp_path):
    """The in-memory ledger and the project database (its CHECK constraints must accept what is recorded)."""
    if request.param == "memory":
        yield MemoryLedger()
        return
    from benchwright.db import Store

    store = Store.open(tmp_path / "project.db")
    yield store
    store.close()


def rows(ledger) -> list:
    return list(ledger.records) if isinstance(ledger, MemoryLedger) else ledger.llm_calls()


# ------------------------------------------------------------------------------------------ vocabulary
@pytest.mark.parametrize(("raw", "want"), [
    ("stop", "stop"), ("end_turn", "stop"), ("stop_sequence", "stop"), ("length", "length"),
    ("max_tokens", "length"), ("model_context_window_exceeded", "length"), ("tool_calls", "tool_use"),
    ("tool_use", "tool_use"), ("function_call", "tool_use"), ("content_filter", "content_filter"),
    ("refusal", "refusal"), ("pause_turn", "unknown"), (None, "unknown"), ("LENGTH", "length"),
])
def test_stop_reasons_normalize_to_one_vocabulary(raw, want):
    assert normalize_stop_reason(raw) == StopReason(want)


def test_retry_budget():
    p = TruncationPolicy()
    assert p.retry_budget(100) == 200
    assert p.retry_budget(None, output_tokens=70) == 140  # no budget sent: what it produced stands for it
    assert p.retry_budget(None, 0) is None
    assert TruncationPolicy(factor=1.5).retry_budget(101) == 152
    assert TruncationPolicy(retry_max_tokens=5000).retry_budget(100) == 5000
    assert TruncationPolicy(retry_max_tokens=50).retry_budget(100) is None  # not larger: no point
    assert TruncationPolicy(retry=False).retry_budget(100) is None


# ------------------------------------------------------------------------------------------ the client
async def test_every_call_records_its_stop_reason(ledger):
    provider = ScriptedProvider([{"answer": "ok"}, LLMRefusalError("no", stop_reason="stop"),
                                 LLMError("HTTP 500", http_status=500)])
    client = LLMClient(provider, ledger)
    assert (await client.call(req())).ok
    assert (await client.call(req(temperature=0.1))).status is CallStatus.REFUSED
    assert (await client.call(req(temperature=0.2))).status is CallStatus.ERROR
    got = [(r.status, r.stop_reason, r.stop_reason_raw) for r in rows(ledger)]
    assert got == [(CallStatus.OK, "stop", "end_turn"),
                   (CallStatus.REFUSED, "refusal", "stop"),  # an OpenAI refusal message finishes with "stop"
                   (CallStatus.ERROR, None, None)]  # no answer, no stop reason


async def test_truncated_json_is_retried_with_a_larger_budget_not_repaired(ledger):
    provider = ScriptedProvider([Reply('{"answer": "the first half', stop_reason="length"), {"answer": "whole"}])
    client = LLMClient(provider, ledger)
    r = await client.call(req(max_tokens=100, temperature=0))
    assert r.ok and r.parsed == {"answer": "whole"} and r.calls == 2
    first, second = provider.calls
    assert second.params == {"max_tokens": 200, "temperature": 0}
    assert second.messages == first.messages  # the same question: no "your previous output" repair turn
    recs = rows(ledger)
    assert [(x.status, x.stop_reason, x.stop_reason_raw, x.attempt) for x in recs] == [
        (CallStatus.TRUNCATED, "length", "length", 1), (CallStatus.OK, "stop", "end_turn", 2)]
    assert recs[0].output_text == '{"answer": "the first half'  # paid for: kept
    assert "max_tokens 100" in recs[0].error and "not JSON" not in recs[0].error
    assert recs[1].params["max_tokens"] == 200
    # the complete answer is cached under the logical request: a rerun makes no call
    again = await LLMClient(ScriptedProvider([]), ledger).call(req(max_tokens=100, temperature=0))
    assert again.cached and again.parsed == {"answer": "whole"}


async def test_truncated_twice_is_truncated_with_the_raw_text_and_never_cached(ledger):
    provider = ScriptedProvider([Reply('{"answer": "a', stop_reason="max_tokens"),
                                 Reply('{"answer": "ab', stop_reason="max_tokens")])
    client = LLMClient(provider, ledger)
    r = await client.call(req(max_tokens=10))
    assert r.status is CallStatus.TRUNCATED and r.truncated and not r.ok
    assert r.calls == 2 and r.truncation_retried and r.max_tokens == 20 and r.text == '{"answer": "ab'
    assert [c.params["max_tokens"] for c in provider.calls] == [10, 20]  # one retry only
    assert [x.status for x in rows(ledger)] == [CallStatus.TRUNCATED, CallStatus.TRUNCATED]
    assert ledger.cached_call(r.request_hash, 0) is None


async def test_truncated_free_text_is_never_a_complete_answer(ledger):
    provider = ScriptedProvider([Reply("It starts in app.py and then", stop_reason="length")] * 2)
    client = LLMClient(provider, ledger, truncation=TruncationPolicy(retry_max_tokens=4000))
    r = await client.call(req(schema=None, max_tokens=50), repair=False)
    assert r.truncated and r.text == "It starts in app.py and then"
    assert [c.params["max_tokens"] for c in provider.calls] == [50, 4000]


async def test_invalid_after_a_truncation_retry_still_gets_its_repair_turn(ledger):
    provider = ScriptedProvider([Reply('{"ans', stop_reason="length"), "not json", {"answer": "fixed"}])
    r = await LLMClient(provider, ledger).call(req(max_tokens=10))
    assert r.ok and r.calls == 3
    assert "Your previous output cannot be used" in provider.calls[2].messages[-1].content
    assert provider.calls[2].params["max_tokens"] == 20  # the repair keeps the larger budget


async def test_no_retry_when_switched_off(ledger):
    provider = ScriptedProvider([Reply('{"ans', stop_reason="length")])
    r = await LLMClient(provider, ledger, truncation=TruncationPolicy(retry=False)).call(req(max_tokens=10))
    assert r.truncated and r.calls == 1 and not r.truncation_retried


# ------------------------------------------------------------------------------------------ outcomes
CHECKLIST = Checklist(items=[ChecklistItem(key_point="Names app.py", weight=9, rubric=binary_rubric(9)),
                             clarity_item()])


async def test_checklist_judgment_stays_unscored_with_reason_truncated():
    provider = ScriptedProvider([Reply('{"items": [{"item": 1, "rationale": "names', stop_reason="length")] * 2)
    item = JudgeInput("ans_1", "p1", "flask", "Where?", "app.py", "In app.py", CHECKLIST, 1)
    out = await judge_checklist(LLMClient(provider, MemoryLedger()), item, JudgeSettings("j1", {"max_tokens": 64}))
    assert out.status == "unscored" and out.reason_kind == "truncated"
    assert out.reason.startswith("truncated:") and "max_tokens 128" in out.reason and "retry" in out.reason
    assert out.raw_text.startswith('{"items"') and out.score_rate is None
    assert [c.params["max_tokens"] for c in provider.calls] == [64, 128]


async def test_generated_checklist_fails_truncated_with_the_raw_output():
    provider = ScriptedProvider([Reply('{"items": [{"kind": "knowledge", "key_', stop_reason="length")] * 2)
    pair = QAPair(id="p1", question="Where?", reference_answer="In app.py.", repository="flask",
                  source=SourceRef(format="jsonl", file="x.jsonl", line=1))
    item = PairInput(pair=pair, question=pair.question, answer=pair.reference_answer)
    out = await generate_checklist(LLMClient(provider, MemoryLedger()), item, StepSettings("g1", {"max_tokens": 30}))
    assert out.status == "failed" and out.reason.startswith("checklist: truncated:")
    assert out.raw_text == '{"items": [{"kind": "knowledge", "key_' and out.checklist is None


async def test_direct_answer_cut_off_is_truncated_with_its_text():
    provider = ScriptedProvider([Reply("It is in app.py, where the", stop_reason="length")] * 2)
    out = await direct_answer(LLMClient(provider, MemoryLedger()), "p1", "flask", "Where?",
                              AnswerSettings("m9", {"max_tokens": 8}))
    assert out.truncated and not out.ok and out.text == "It is in app.py, where the"
    assert out.max_tokens == 16 and "truncated" in out.reason


# ------------------------------------------------------------------------------------------ real SDKs
OPENAI_KEY = "sk-test-OPENAI-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-0123456789"


def _openai(content: str, finish: str) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-x",
        "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17}})


def _anthropic(text: str, stop: str) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "text", "text": text}], "stop_reason": stop,
        "usage": {"input_tokens": 10, "output_tokens": 7}})


class Server:
    def __init__(self, *answers):
        self.answers, self.bodies = list(answers), []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        return self.answers.pop(0)


def _provider(kind: str, server: Server, monkeypatch):
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    if kind == "openai":
        from benchwright.core.llm.openai_provider import OpenAIProvider

        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        return OpenAIProvider(base_url="http://llm.test/v1", http_client=client, max_retries=0)
    from benchwright.core.llm.anthropic_provider import AnthropicProvider

    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    return AnthropicProvider(base_url="http://llm.test", http_client=client, max_retries=0)


@pytest.mark.parametrize(("kind", "cut", "done"), [("openai", "length", "stop"),
                                                    ("anthropic", "max_tokens", "end_turn")])
async def test_real_sdk_truncation_is_retried_with_a_larger_max_tokens(kind, cut, done, ledger, monkeypatch):
    reply = _openai if kind == "openai" else _anthropic
    server = Server(reply('{"answer": "hal', cut), reply('{"answer": "whole"}', done))
    client = LLMClient(_provider(kind, server, monkeypatch), ledger)
    r = await client.call(req(max_tokens=300))
    await client.provider.aclose()
    assert r.ok and r.parsed == {"answer": "whole"}
    assert [b["max_tokens"] for b in server.bodies] == [300, 600]
    assert server.bodies[1]["messages"] == server.bodies[0]["messages"]  # no repair turn
    recs = rows(ledger)
    assert [(x.status, x.stop_reason, x.stop_reason_raw) for x in recs] == [
        (CallStatus.TRUNCATED, "length", cut), (CallStatus.OK, "stop", done)]
    assert recs[0].output_text == '{"answer": "hal'


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_real_sdk_truncated_twice_is_truncated(kind, ledger, monkeypatch):
    reply, cut = (_openai, "length") if kind == "openai" else (_anthropic, "max_tokens")
    server = Server(reply("It is in", cut), reply("It is in app", cut))
    client = LLMClient(_provider(kind, server, monkeypatch), ledger)
    r = await client.call(req(schema=None), repair=False)  # no max_tokens configured
    await client.provider.aclose()
    assert r.truncated and r.text == "It is in app"
    if kind == "anthropic":  # the provider's default budget was sent, then doubled
        assert [b["max_tokens"] for b in server.bodies] == [4096, 8192]
    else:  # none sent: the server's default; the retry asks for twice what it produced
        assert "max_tokens" not in server.bodies[0] and server.bodies[1]["max_tokens"] == 14
    assert [x.stop_reason for x in rows(ledger)] == ["length", "length"]


def test_retry_budget_is_configured_per_role(tmp_path, monkeypatch):
    from benchwright.core.llm.config import LLMConfigError, load_llm_config

    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    (tmp_path / "benchwright.toml").write_text(
        '[roles.judge]\nmodel = "j"\ntruncation_retry_factor = 3\n[roles.verifier]\nmodel = "v"\n'
        'truncation_retry_factor = 1\n[roles.generator]\nmodel = "g"\n', encoding="utf-8")
    cfg = load_llm_config(tmp_path)
    assert cfg.role("judge").truncation.retry_budget(100) == 300
    assert cfg.role("verifier").truncation.retry_budget(100) is None  # factor 1: no retry
    assert cfg.role("generator").truncation == TruncationPolicy()  # documented default: once, at twice
    (tmp_path / "benchwright.toml").write_text('[roles.judge]\ntruncation_retry_factor = 0.5\n', encoding="utf-8")
    with pytest.raises(LLMConfigError, match=r"roles\.judge\.truncation_retry_factor"):
        load_llm_config(tmp_path)
