"""LLMClient (ARCHITECTURE.md "LLM layer"): ledger, cache, validation with one repair turn, prompt fallback,
concurrency limit, cancellation and cost, over the scripted provider, with the in-memory ledger and with the
project database as the ledger."""

from __future__ import annotations

import asyncio
import json

import pytest

from benchwright.core.llm import (
    CallStatus,
    ChatMessage,
    Delay,
    LLMClient,
    LLMError,
    LLMRefusalError,
    LLMRequest,
    MemoryLedger,
    Price,
    ScriptedProvider,
    StructuredOutput,
)
from benchwright.core.llm.client import prompt_schema_instruction
from benchwright.core.llm.jobs import ItemTally, Job

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "integer", "enum": [0, 1, 2]}},
    "required": ["answer", "score"],
    "additionalProperties": False,
}
GOOD = {"answer": "yes", "score": 2}


def req(text: str = "Is it?", *, repeat: int = 0, schema: dict | None = SCHEMA, model: str = "m1") -> LLMRequest:
    return LLMRequest(model=model, system="sys", messages=(ChatMessage("user", text),), json_schema=schema,
                      params={"temperature": 0}, template_id="t", template_hash="h" * 8, repeat=repeat)


@pytest.fixture(params=["memory", "store"])
def ledger(request, tmp_path):
    """The in-memory ledger and the project database (both implement the Ledger protocol)."""
    if request.param == "memory":
        yield MemoryLedger()
        return
    from benchwright.db import Store

    store = Store.open(tmp_path / "project.db")
    yield store
    store.close()


def rows(ledger) -> list:
    """Every ledger record, oldest first."""
    return list(ledger.records) if isinstance(ledger, MemoryLedger) else ledger.llm_calls()


# ------------------------------------------------------------------------------------------------ cache
async def test_cache_hit_makes_no_call_and_reuses_the_output(ledger):
    p = ScriptedProvider([GOOD])
    client = LLMClient(p, ledger)
    first = await client.call(req(), purpose="test")
    assert first.ok and first.calls == 1 and not first.cached and first.parsed == GOOD
    second = await client.call(req(), purpose="test")
    assert second.ok and second.cached and second.calls == 0 and second.parsed == GOOD
    assert len(p.calls) == 1
    assert second.call_ids == first.call_ids
    assert [r.status for r in rows(ledger)] == [CallStatus.OK]


async def test_a_different_request_is_not_a_cache_hit(ledger):
    p = ScriptedProvider([GOOD, GOOD])
    client = LLMClient(p, ledger)
    await client.call(req("one"))
    r = await client.call(req("two"))
    assert not r.cached and len(p.calls) == 2


async def test_repeat_index_is_part_of_the_key(ledger):
    p = ScriptedProvider([GOOD, {"answer": "again", "score": 1}])
    client = LLMClient(p, ledger)
    r0 = await client.call(req(repeat=0))
    r1 = await client.call(req(repeat=1))
    assert r0.request_hash == r1.request_hash  # same logical request ...
    assert not r1.cached and r1.parsed["answer"] == "again" and len(p.calls) == 2  # ... separate call
    assert (await client.call(req(repeat=1))).parsed["answer"] == "again"
    assert (await client.call(req(repeat=0))).parsed["answer"] == "yes"
    assert len(p.calls) == 2
    assert sorted(r.repeat for r in rows(ledger)) == [0, 1]


async def test_force_bypasses_the_cache_and_the_new_answer_becomes_the_cached_one(ledger):
    p = ScriptedProvider([GOOD, {"answer": "fresh", "score": 0}])
    client = LLMClient(p, ledger)
    await client.call(req())
    forced = await client.call(req(), force=True)
    assert forced.calls == 1 and not forced.cached and forced.parsed["answer"] == "fresh"
    again = await client.call(req())
    assert again.cached and again.parsed["answer"] == "fresh" and len(p.calls) == 2


# ----------------------------------------------------------------------------------------------- repair
async def test_invalid_output_gets_one_repair_turn_listing_the_problems(ledger):
    bad = json.dumps({"answer": "yes", "score": 7})
    p = ScriptedProvider([bad, GOOD])
    client = LLMClient(p, ledger)
    r = await client.call(req(), purpose="test", qa_pair_id=None)
    assert r.ok and r.calls == 2 and r.parsed == GOOD
    first, second = p.calls
    # the repair request carries the first raw output as the assistant turn, then the problems
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert second.messages[0] == first.messages[0]
    assert second.messages[1].content == bad
    repair = second.messages[2].content
    assert "score: 7 is not one of [0, 1, 2]" in repair and "Problems" in repair
    recs = rows(ledger)
    assert [(x.attempt, x.status) for x in recs] == [(1, CallStatus.INVALID), (2, CallStatus.OK)]
    # both recorded under the logical request's hash, so the repaired answer is the cached one
    assert {x.request_hash for x in recs} == {r.request_hash} == {client.request_hash(req())}
    assert "score" in recs[0].error
    rerun = await client.call(req())
    assert rerun.ok and rerun.cached and rerun.calls == 0 and rerun.parsed == GOOD
    assert len(p.calls) == 2


async def test_not_json_then_repaired(ledger):
    p = ScriptedProvider(["I think the answer is yes", GOOD])
    r = await LLMClient(p, ledger).call(req())
    assert r.ok and r.calls == 2
    assert "not JSON" in p.calls[1].messages[2].content
    assert p.calls[1].messages[1].content == "I think the answer is yes"


async def test_caller_validator_problems_are_repaired_too(ledger):
    def no_maybe(v):
        return ["answer: must not be 'maybe'"] if v["answer"] == "maybe" else []

    p = ScriptedProvider([{"answer": "maybe", "score": 1}, GOOD])
    r = await LLMClient(p, ledger).call(req(), validate=no_maybe)
    assert r.ok and r.parsed == GOOD
    assert "answer: must not be 'maybe'" in p.calls[1].messages[2].content


async def test_invalid_twice_is_invalid_and_nothing_is_cached(ledger):
    p = ScriptedProvider(["nope", '{"answer": 1}', GOOD])
    client = LLMClient(p, ledger)
    r = await client.call(req())
    assert r.status is CallStatus.INVALID and not r.ok and r.calls == 2
    assert r.text == '{"answer": 1}' and r.parsed is None
    assert any("score" in pr for pr in r.problems) and any("answer" in pr for pr in r.problems)
    assert [x.status for x in rows(ledger)] == [CallStatus.INVALID, CallStatus.INVALID]
    assert ledger.cached_call(r.request_hash, 0) is None
    again = await client.call(req())  # nothing was cached: the provider is asked again
    assert again.ok and again.calls == 1 and len(p.calls) == 3


async def test_no_repair_when_disabled(ledger):
    p = ScriptedProvider(["nope", GOOD])
    r = await LLMClient(p, ledger).call(req(), repair=False)
    assert r.status is CallStatus.INVALID and r.calls == 1 and len(p.calls) == 1


async def test_refusal_and_error_are_recorded_but_never_cached(ledger):
    p = ScriptedProvider([
        LLMRefusalError("I cannot help with that", raw="I cannot help with that", request_id="r1"),
        LLMError("HTTP 500 after 3 attempts", http_status=500, transient=True, attempts=3),
        GOOD,
    ])
    client = LLMClient(p, ledger)
    refused = await client.call(req())
    assert refused.status is CallStatus.REFUSED and refused.calls == 1 and "cannot help" in refused.error
    failed = await client.call(req())
    assert failed.status is CallStatus.ERROR and failed.calls == 1 and "500" in failed.error
    assert len(p.calls) == 2  # neither was reused, and neither got a repair turn
    ok = await client.call(req())
    assert ok.ok and ok.calls == 1
    recs = rows(ledger)
    assert [x.status for x in recs] == [CallStatus.REFUSED, CallStatus.ERROR, CallStatus.OK]
    assert recs[0].output_text == "I cannot help with that" and recs[0].request_id == "r1"
    assert recs[1].http_status == 500 and recs[1].http_attempts == 3
    assert ledger.cached_call(ok.request_hash, 0).id == recs[2].id


async def test_cached_output_that_no_longer_validates_is_not_reused(ledger):
    """A stricter validator than the one in force when the answer was cached: the answer is asked again."""
    p = ScriptedProvider([{"answer": "maybe", "score": 1}, GOOD])
    client = LLMClient(p, ledger)
    assert (await client.call(req())).ok
    r = await client.call(req(), validate=lambda v: ["no maybe"] if v["answer"] == "maybe" else [])
    assert r.ok and not r.cached and r.parsed == GOOD and len(p.calls) == 2


# ------------------------------------------------------------------------------------------ prompt mode
async def test_prompt_fallback_appends_the_schema_and_parses_a_fenced_answer(ledger):
    fenced = "Here you go:\n```json\n" + json.dumps(GOOD) + "\n```"
    p = ScriptedProvider(["```json\n" + json.dumps(GOOD) + "\n```", fenced],
                         structured_output=StructuredOutput.PROMPT)
    client = LLMClient(p, ledger)
    r = await client.call(req())
    assert r.ok and r.parsed == GOOD
    sent = p.calls[0]
    assert sent.json_schema is None  # not sent natively
    assert sent.messages[-1].content == "Is it?" + prompt_schema_instruction(SCHEMA)
    assert json.dumps(SCHEMA, indent=1) in sent.messages[-1].content
    # the cache key is the logical request's: the same call on this provider is a hit
    assert (await client.call(req())).cached and len(p.calls) == 1
    r2 = await client.call(req("other"))  # prose around a fence still parses (outermost braces)
    assert r2.ok and r2.parsed == GOOD


async def test_native_mode_sends_the_schema_untouched(ledger):
    p = ScriptedProvider([GOOD])
    await LLMClient(p, ledger).call(req())
    assert p.calls[0].json_schema == SCHEMA and p.calls[0].messages[-1].content == "Is it?"


async def test_free_text_request_returns_the_text(ledger):
    p = ScriptedProvider(["just words"])
    r = await LLMClient(p, ledger).call(req(schema=None))
    assert r.ok and r.parsed == "just words"


# ------------------------------------------------------------------------------------ concurrency, cost
async def test_concurrency_limit_is_respected(ledger):
    p = ScriptedProvider(lambda r: Delay(0.03, GOOD), concurrency=3)
    client = LLMClient(p, ledger)
    results = await asyncio.gather(*(client.call(req(f"q{i}")) for i in range(12)))
    assert all(r.ok for r in results) and len(p.calls) == 12
    assert p.max_in_flight == 3  # reached, never exceeded


async def test_client_reused_across_event_loops():
    """The CLI and the app may run several asyncio.run() with one client; its limit must still work."""
    p = ScriptedProvider(lambda r: Delay(0.01, GOOD), concurrency=1)
    client = LLMClient(p, MemoryLedger())
    for k in range(4):
        results = await asyncio.to_thread(
            asyncio.run, _gather(client, [f"loop{k}-{i}" for i in range(3)]))
        assert all(r.ok for r in results)
    assert p.max_in_flight == 1 and len(p.calls) == 12


async def _gather(client, texts):
    return await asyncio.gather(*(client.call(req(t)) for t in texts))


async def test_cost_from_prices(ledger):
    p = ScriptedProvider([GOOD, GOOD, GOOD], model_suffix="-2026")
    prices = {"m1-2026": Price(input=2.0, output=10.0), "m2": Price(input=1.0, output=1.0)}
    client = LLMClient(p, ledger, prices=prices)
    r = await client.call(req("one two three"))
    rec = rows(ledger)[-1]
    assert rec.returned_model == "m1-2026" and rec.usage.input_tokens > 0 and rec.usage.output_tokens > 0
    expected = (rec.usage.input_tokens * 2.0 + rec.usage.output_tokens * 10.0) / 1e6
    assert rec.cost_usd == pytest.approx(expected) and r.cost_usd == pytest.approx(expected) and expected > 0
    assert r.cost_unknown == 0
    # the returned model has no price: the requested one's applies
    await client.call(req("x", model="m2"))
    rec = rows(ledger)[-1]
    assert rec.returned_model == "m2-2026"
    assert rec.cost_usd == pytest.approx((rec.usage.input_tokens + rec.usage.output_tokens) / 1e6)
    # no price at all: no cost (None, not 0)
    r3 = await client.call(req("y", model="m3"))
    assert rows(ledger)[-1].cost_usd is None and r3.cost_unknown == 1
    # a cache hit costs nothing
    assert (await client.call(req("one two three"))).cost_usd == 0


async def test_ledger_row_has_the_bookkeeping(ledger):
    p = ScriptedProvider([GOOD])
    r = await LLMClient(p, ledger).call(req(), purpose="classify", qa_pair_id="abc")
    rec = rows(ledger)[0]
    assert rec.id == r.call_ids[0]
    assert (rec.provider, rec.provider_kind, rec.requested_model, rec.returned_model) == ("fake", "fake", "m1", "m1")
    assert (rec.template_id, rec.template_hash, rec.purpose, rec.qa_pair_id) == ("t", "h" * 8, "classify", "abc")
    assert rec.params == {"temperature": 0} and rec.request_id == "fake-1" and rec.parsed == GOOD


# ---------------------------------------------------------------------------------------- cancellation
async def test_cancellation_records_cancelled_calls_and_keeps_finished_ones(ledger):
    def script(r):
        i = int(r.messages[0].content[1:])
        return Delay(0.01 if i < 2 else 30, {"answer": f"a{i}", "score": 1})

    p = ScriptedProvider(script, concurrency=2)
    client = LLMClient(p, ledger)
    kept: list[tuple[int, object]] = []

    async def work(i: int):
        return await client.call(req(f"q{i}"), purpose="test")

    job = Job(work, concurrency=2, tally=lambda r: ItemTally(calls=r.calls),
              on_result=lambda i, r: kept.append((i, r)))
    task = asyncio.ensure_future(job.run(range(6)))
    for _ in range(500):
        await asyncio.sleep(0.01)
        if p.in_flight == 2 and len(kept) == 2:
            break
    assert [i for i, _ in kept] == [0, 1]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    recs = rows(ledger)
    ok = [x for x in recs if x.status is CallStatus.OK]
    cancelled = [x for x in recs if x.status is CallStatus.CANCELLED]
    assert len(ok) == 2 and len(cancelled) == 2 and len(recs) == 4
    assert all(x.error and x.output_text is None for x in cancelled)
    assert ledger.cached_call(cancelled[0].request_hash, 0) is None
    # a rerun reuses the finished calls and asks only for the rest
    p2 = ScriptedProvider(lambda r: {"answer": "late", "score": 0}, concurrency=2)
    client2 = LLMClient(p2, ledger)
    results = [await client2.call(req(f"q{i}")) for i in range(6)]
    assert [r.cached for r in results] == [True, True, False, False, False, False]
    assert len(p2.calls) == 4


async def test_provider_error_from_the_script_running_out_is_an_error_result(ledger):
    p = ScriptedProvider([])
    r = await LLMClient(p, ledger).call(req())
    assert r.status is CallStatus.ERROR and "no more answers" in r.error


# ------------------------------------------------------------------ what servers send back: keys, usage, size
class _EchoProvider:
    """A provider whose answers carry whatever a misbehaving server would send."""

    kind, name, base_url, concurrency = "fake", "echo", None, 2

    def __init__(self, answers, key=None):
        from benchwright.core.llm import StructuredOutput

        self.structured_output = StructuredOutput.JSON_SCHEMA
        self.answers = list(answers)
        self._key = key
        self.sent = []

    async def complete(self, request):
        self.sent.append(request)
        return self.answers.pop(0)

    async def aclose(self):
        pass


_SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
           "additionalProperties": False}


def _req():
    from benchwright.core.llm import ChatMessage, LLMRequest

    return LLMRequest(model="m", messages=(ChatMessage("user", "hi"),), json_schema=_SCHEMA)


def test_keys_echoed_by_a_server_or_a_model_are_never_stored(monkeypatch):
    from benchwright.core.llm import LLMClient, LLMResponse, MemoryLedger

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET-0123456789")
    key = "sk-live-SECRET-abcdefghij"
    answer = LLMResponse(text=json.dumps({"a": f"Bearer {key} and sk-ant-SECRET-0123456789"}),
                         model=f"m {key}", request_id=f"rid {key}")
    ledger = MemoryLedger()
    r = asyncio.run(LLMClient(_EchoProvider([answer], key=key), ledger).call(_req()))
    assert r.ok and r.parsed == {"a": "Bearer *** and ***"}
    rec = ledger.records[0]
    assert "SECRET" not in json.dumps([rec.output_text, rec.request_id, rec.returned_model, rec.parsed])


def test_missing_usage_means_unknown_cost_not_zero():
    from benchwright.core.llm import LLMClient, LLMResponse, MemoryLedger, Price

    ledger = MemoryLedger()
    answer = LLMResponse(text='{"a": "x"}', model="m", usage=None)
    r = asyncio.run(LLMClient(_EchoProvider([answer]), ledger, prices={"m": Price(2, 8)}).call(_req()))
    assert r.ok and r.usage_missing == 1
    assert ledger.records[0].cost_usd is None and ledger.records[0].usage_missing


def test_huge_output_is_invalid_and_not_echoed_whole_in_the_repair_turn():
    from benchwright.core.llm import LLMClient, LLMResponse, MemoryLedger
    from benchwright.core.llm.client import MAX_OUTPUT_CHARS, REPAIR_ECHO_CHARS, STORED_FAILURE_CHARS

    huge = LLMResponse(text="A" * (MAX_OUTPUT_CHARS + 5), model="m")
    provider = _EchoProvider([huge, LLMResponse(text='{"a": "ok"}', model="m")])
    ledger = MemoryLedger()
    r = asyncio.run(LLMClient(provider, ledger).call(_req()))
    assert r.ok and r.parsed == {"a": "ok"}
    assert "output too long" in ledger.records[0].error
    assert len(ledger.records[0].output_text) < STORED_FAILURE_CHARS + 100
    echoed = provider.sent[1].messages[1].content
    assert provider.sent[1].messages[1].role == "assistant" and len(echoed) < REPAIR_ECHO_CHARS + 100


def test_describe_cost_never_shows_an_unknown_cost_as_zero():
    from benchwright.core.llm.jobs import describe_cost

    assert describe_cost(0.0, calls=3, cost_unknown=3) == "cost unknown (no price configured)"
    assert describe_cost(0.0, calls=2, cost_unknown=2, usage_missing=2) == "cost unknown (2 reported no token usage)"
    assert describe_cost(0.5, calls=3, cost_unknown=1) == "$0.5000 + unknown for 1 call (1 without a configured price)"
    assert describe_cost(0.0, calls=0) == "$0.0000"  # everything cached: nothing was paid
    assert describe_cost(0.0123, calls=2) == "$0.0123"


async def test_a_call_that_got_no_answer_has_an_unknown_cost_a_server_error_a_known_zero(ledger):
    """A timeout (no HTTP answer) may still be billed: its cost is unknown, never $0; an HTTP 400 without usage
    cost nothing."""
    from benchwright.core.llm.jobs import describe_cost

    p = ScriptedProvider([
        LLMError("timed out after 1 s", transient=True),
        LLMError("HTTP 400: bad request", http_status=400),
    ])
    client = LLMClient(p, ledger, prices={"m1": Price(input=1.0, output=1.0)})
    timed_out = await client.call(req())
    assert timed_out.cost_unknown == 1 and timed_out.unanswered == 1
    assert describe_cost(timed_out.cost_usd, calls=1, cost_unknown=1, unanswered=1) == (
        "cost unknown (1 got no answer and may still be billed)")
    refused = await client.call(req("other"))
    assert refused.cost_unknown == 0 and refused.unanswered == 0


def test_one_rule_for_secret_variables_scrubs_what_probes_withhold(monkeypatch):
    """A value of any variable probes never see (``DB_PASSWORD``, ``GH_TOKEN``) is scrubbed from stored text too."""
    from benchwright.core.llm.scrub import env_secrets, scrub_text
    from benchwright.core.probes._workspace import is_secret_name, scrubbed_environment

    monkeypatch.setenv("DB_PASSWORD", "hunter2-but-longer-than-12")
    assert is_secret_name("DB_PASSWORD") and "DB_PASSWORD" not in scrubbed_environment()
    assert "hunter2" not in scrub_text("pw is hunter2-but-longer-than-12.", env_secrets())


def test_a_short_api_key_is_still_scrubbed_but_not_a_placeholder(monkeypatch):
    """OPENAI_API_KEY=sk-test-123 (11 characters) is a key: a model echoing it never gets it stored; a placeholder
    such as EMPTY (vLLM's) is not hunted, nor is a short value of a variable only named like a secret."""
    from benchwright.core.llm.scrub import env_secrets, scrub_text

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "EMPTY")
    monkeypatch.setenv("GH_TOKEN", "short-tok")
    secrets = env_secrets(["prov-key-1"])
    assert scrub_text("done sk-test-123 prov-key-1", secrets) == "done *** ***"
    assert scrub_text("EMPTY short-tok", secrets) == "EMPTY short-tok"
