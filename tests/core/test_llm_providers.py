"""The OpenAI and Anthropic providers over the real SDKs, on an httpx2 mock transport (no network, no keys).

Each test runs the SDK's own request building, retries and error classes; only the HTTP exchange is scripted.
"""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import anthropic
import httpx2
import pytest

from benchwright.core.llm import (
    CallStatus,
    ChatMessage,
    LLMClient,
    LLMConfigError,
    LLMError,
    LLMRefusalError,
    LLMRequest,
    MemoryLedger,
    Price,
    StructuredOutput,
)
from benchwright.core.llm.anthropic_provider import DEFAULT_MAX_TOKENS, AnthropicProvider
from benchwright.core.llm.openai_provider import OpenAIProvider, strict_compatible

OPENAI_KEY = "sk-test-OPENAI-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-0123456789"

SCHEMA = {
    "type": "object",
    "properties": {"category": {"type": "string", "enum": ["a", "b"]}, "score": {"type": "integer"}},
    "required": ["category", "score"],
    "additionalProperties": False,
}


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
                "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)


# ---------------------------------------------------------------------------------------- wire fakes
def openai_body(content: str | None, *, model: str = "gpt-test-2026-01-01", refusal: str | None = None,
                finish: str = "stop", prompt_tokens: int = 120, completion_tokens: int = 30,
                cached: int = 20) -> dict:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", "content": content, "refusal": refusal}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens,
                  "prompt_tokens_details": {"cached_tokens": cached}},
    }


def anthropic_body(text: str, *, model: str = "claude-test-2026", stop: str = "end_turn",
                   explanation: str | None = None) -> dict:
    body = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}] if text else [],
        "stop_reason": stop,
        "usage": {"input_tokens": 100, "output_tokens": 30, "cache_read_input_tokens": 40,
                  "cache_creation_input_tokens": 5},
    }
    if explanation is not None:
        body["stop_details"] = {"type": "refusal", "category": "cyber", "explanation": explanation}
    return body


@dataclass
class Kind:
    """How to build a provider of one SDK and fake its answers."""

    name: str
    key: str
    request_id_header: str
    ok: Callable[[str], dict]
    refusal: Callable[[str], dict]
    make: Callable[..., object]

    def build(self, handler, **kw):
        client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
        kw.setdefault("base_url", "http://llm.test/v1" if self.name == "openai" else "http://llm.test")
        kw.setdefault("max_retries", 2)
        kw.setdefault("timeout_s", 5.0)
        return self.make(http_client=client, **kw)


OPENAI = Kind("openai", OPENAI_KEY, "x-request-id", lambda t: openai_body(t),
              lambda why: openai_body(None, refusal=why), OpenAIProvider)
ANTHROPIC = Kind("anthropic", ANTHROPIC_KEY, "request-id", lambda t: anthropic_body(t),
                 lambda why: anthropic_body("", stop="refusal", explanation=why), AnthropicProvider)


@pytest.fixture(params=[OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def kind(request) -> Kind:
    return request.param


class Server:
    """A scripted HTTP endpoint: each answer is a Response, an exception to raise, or a callable."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def bodies(self) -> list[dict]:
        return [json.loads(r.content) for r in self.requests]


def ok(kind: Kind, text: str, request_id: str = "req-123") -> httpx2.Response:
    return httpx2.Response(200, json=kind.ok(text), headers={kind.request_id_header: request_id})


def request(text: str = "Classify this pair.", *, schema: dict | None = SCHEMA, **params) -> LLMRequest:
    return LLMRequest(model="model-x", messages=(ChatMessage("user", text),), system="You are careful.",
                      json_schema=schema, schema_name="classification", params=params)


def assert_key_only_in_auth_header(req: httpx2.Request, key: str) -> None:
    assert req.headers["authorization"] == f"Bearer {key}"
    for name, value in req.headers.items():
        if name != "authorization":
            assert key not in value, name
    assert key not in str(req.url)
    assert key not in req.content.decode("utf-8")


# ------------------------------------------------------------------------------------- request shape
async def test_openai_structured_output_request_shape():
    server = Server(ok(OPENAI, '{"category": "a", "score": 2}'))
    provider = OPENAI.build(server)
    schema_before = copy.deepcopy(SCHEMA)
    resp = await provider.complete(request(temperature=0.2, max_tokens=300, top_p=0.9, seed=7))
    [req] = server.requests
    assert str(req.url) == "http://llm.test/v1/chat/completions"
    body = json.loads(req.content)
    assert body == {
        "model": "model-x",
        "messages": [{"role": "system", "content": "You are careful."},
                     {"role": "user", "content": "Classify this pair."}],
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "classification", "schema": SCHEMA, "strict": True}},
        "temperature": 0.2, "top_p": 0.9, "seed": 7, "max_tokens": 300,
    }
    assert schema_before == SCHEMA
    assert_key_only_in_auth_header(req, OPENAI_KEY)
    assert resp.text == '{"category": "a", "score": 2}'
    assert resp.model == "gpt-test-2026-01-01"
    assert resp.request_id == "req-123"
    assert resp.attempts == 1
    assert resp.params_sent == {"temperature": 0.2, "top_p": 0.9, "seed": 7, "max_tokens": 300}
    # prompt tokens minus the cached ones, which are priced apart
    assert (resp.usage.input_tokens, resp.usage.output_tokens, resp.usage.cache_read_tokens) == (100, 30, 20)
    await provider.aclose()


async def test_openai_official_endpoint_gets_max_completion_tokens():
    server = Server(ok(OPENAI, "hi"))
    provider = OPENAI.build(server, base_url=None)
    assert provider.base_url == "https://api.openai.com/v1"
    resp = await provider.complete(request(schema=None, max_tokens=64))
    body = server.bodies()[0]
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body
    assert "response_format" not in body
    assert resp.params_sent == {"max_completion_tokens": 64}


async def test_openai_non_strict_schema_is_sent_unchanged_with_strict_false():
    loose = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
             "required": ["a"]}
    before = copy.deepcopy(loose)
    server = Server(ok(OPENAI, '{"a": "x"}'))
    provider = OPENAI.build(server)
    await provider.complete(request(schema=loose))
    fmt = server.bodies()[0]["response_format"]["json_schema"]
    assert fmt["strict"] is False and fmt["schema"] == before and loose == before


def test_strict_compatible_rules():
    assert strict_compatible(SCHEMA)
    nested = {"type": "object", "additionalProperties": False, "required": ["items"],
              "properties": {"items": {"type": "array", "items": {
                  "type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}}}
    assert not strict_compatible(nested)  # the inner object allows extra keys
    nested["properties"]["items"]["items"]["additionalProperties"] = False
    assert strict_compatible(nested)
    assert not strict_compatible({**SCHEMA, "required": ["category"]})
    assert not strict_compatible({**SCHEMA, "allOf": [{"type": "object"}]})


async def test_anthropic_structured_output_request_shape():
    server = Server(ok(ANTHROPIC, '{"category": "b", "score": 1}', request_id="req-ant-9"))
    provider = ANTHROPIC.build(server)
    resp = await provider.complete(request(temperature=0.3, max_tokens=500, top_p=0.8, seed=11))
    [req] = server.requests
    assert str(req.url) == "http://llm.test/v1/messages"
    body = json.loads(req.content)
    assert body == {
        "model": "model-x", "max_tokens": 500, "system": "You are careful.",
        "messages": [{"role": "user", "content": "Classify this pair."}],
        # the schema in Anthropic's subset, by the SDK's own transform (here: the enum's type is left to the enum)
        "output_config": {"format": {"type": "json_schema", "schema": anthropic.transform_schema(SCHEMA)}},
        "temperature": 0.3, "top_p": 0.8,  # through extra_body; seed has no Anthropic equivalent
    }
    assert_key_only_in_auth_header(req, ANTHROPIC_KEY)
    assert resp.params_sent == {"max_tokens": 500, "temperature": 0.3, "top_p": 0.8}
    assert resp.request_id == "req-ant-9" and resp.model == "claude-test-2026"
    u = resp.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (100, 30, 40, 5)
    assert resp.stop_reason == "end_turn"


async def test_anthropic_sends_default_max_tokens_and_no_output_config_for_text():
    server = Server(ok(ANTHROPIC, "plain"))
    provider = ANTHROPIC.build(server)
    resp = await provider.complete(request(schema=None))
    body = server.bodies()[0]
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS and "output_config" not in body
    assert "temperature" not in body
    assert resp.params_sent == {"max_tokens": DEFAULT_MAX_TOKENS}


async def test_prompt_mode_sends_schema_in_the_prompt_not_natively(kind):
    server = Server(ok(kind, '{"category": "a", "score": 3}'))
    provider = kind.build(server, structured_output="prompt")
    client = LLMClient(provider, MemoryLedger())
    result = await client.call(request())
    assert result.ok and result.parsed == {"category": "a", "score": 3}
    body = server.bodies()[0]
    assert "response_format" not in body and "output_config" not in body
    assert '"additionalProperties": false' in body["messages"][-1]["content"]


async def test_unsupported_parameter_is_a_config_error(kind):
    server = Server(ok(kind, "x"))
    provider = kind.build(server)
    with pytest.raises(LLMConfigError, match="frequency_penalty"):
        await provider.complete(request(frequency_penalty=1.0))
    assert server.requests == []


# ----------------------------------------------------------------------------------- keys and errors
@pytest.mark.parametrize("make,env", [(OpenAIProvider, "OPENAI_API_KEY"), (AnthropicProvider, "ANTHROPIC_API_KEY")])
def test_missing_api_key_names_the_variable_at_construction(monkeypatch, make, env):
    monkeypatch.delenv(env)
    with pytest.raises(LLMConfigError, match=env):
        make(api_key_env=env)
    monkeypatch.setenv("MY_OTHER_KEY", "")
    with pytest.raises(LLMConfigError, match="MY_OTHER_KEY"):
        make(api_key_env="MY_OTHER_KEY")


async def test_openai_compatible_server_without_key_sends_placeholder(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    server = Server(ok(OPENAI, "hello"))
    provider = OPENAI.build(server, api_key_env=None, base_url="http://127.0.0.1:8000/v1")
    assert (await provider.complete(request(schema=None))).text == "hello"
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_rate_limited_then_success_uses_sdk_retry(kind):
    limited = httpx2.Response(429, json={"error": {"message": "slow down"}}, headers={"retry-after-ms": "1"})
    server = Server(limited, ok(kind, '{"category": "a", "score": 1}'))
    provider = kind.build(server, max_retries=2)
    ledger = MemoryLedger()
    result = await LLMClient(provider, ledger).call(request())
    assert result.ok
    assert len(server.requests) == 2
    assert [r.headers["x-stainless-retry-count"] for r in server.requests] == ["0", "1"]
    assert ledger.records[0].http_attempts == 2
    assert ledger.records[0].request_id == "req-123"
    # the direct call reports the attempts too
    server2 = Server(limited, ok(kind, "x"))
    resp = await kind.build(server2).complete(request(schema=None))
    assert resp.attempts == 2


async def test_timeout_is_a_transient_error(kind):
    server = Server(httpx2.ReadTimeout("read timed out"))
    provider = kind.build(server, max_retries=0, timeout_s=0.5)
    t0 = time.perf_counter()
    with pytest.raises(LLMError) as info:
        await provider.complete(request())
    assert time.perf_counter() - t0 < 2
    err = info.value
    assert err.transient and err.http_status is None and err.status is CallStatus.ERROR
    assert "within 0.5 s" in str(err) and err.attempts == 1
    assert len(server.requests) == 1


async def test_real_timeout_against_a_silent_loopback_server(kind):
    """The SDK's own timeout fires (no mock transport): a server that accepts and never answers."""
    hold = asyncio.Event()

    async def silent(reader, writer):
        await hold.wait()
        writer.close()

    srv = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}" + ("/v1" if kind.name == "openai" else "")
    provider = kind.make(base_url=base, timeout_s=0.3, max_retries=0)
    t0 = time.perf_counter()
    try:
        with pytest.raises(LLMError) as info:
            await provider.complete(request())
    finally:
        hold.set()
        srv.close()
        await provider.aclose()
    assert info.value.transient
    assert time.perf_counter() - t0 < 3


async def test_client_error_is_not_transient_and_never_shows_the_key(kind):
    echo = httpx2.Response(401, json={"error": {"message": f"Incorrect API key provided: {kind.key}"}},
                           headers={kind.request_id_header: "req-401"})
    server = Server(echo)
    provider = kind.build(server)
    with pytest.raises(LLMError) as info:
        await provider.complete(request())
    err = info.value
    assert err.http_status == 401 and not err.transient and err.request_id == "req-401"
    assert kind.key not in str(err) and "Incorrect API key provided: ***" in str(err)
    assert len(server.requests) == 1  # 401 is not retried


async def test_server_error_exhausted_is_recorded_and_not_cached(kind):
    boom = httpx2.Response(500, json={"error": {"message": "upstream exploded"}},
                           headers={"retry-after-ms": "1", kind.request_id_header: "req-500"})
    server = Server(boom)
    ledger = MemoryLedger()
    client = LLMClient(kind.build(server, max_retries=1), ledger)
    result = await client.call(request(), purpose="classify", qa_pair_id="p1")
    assert result.status is CallStatus.ERROR and "HTTP 500" in result.error and "upstream exploded" in result.error
    assert len(server.requests) == 2
    [rec] = ledger.records
    assert rec.status is CallStatus.ERROR and rec.http_status == 500 and rec.http_attempts == 2
    assert rec.request_id == "req-500" and rec.purpose == "classify" and rec.qa_pair_id == "p1"
    # errors are never cached: the rerun asks again
    await client.call(request())
    assert len(server.requests) == 4 and len(ledger.records) == 2


# --------------------------------------------------------------------------- output through the client
async def test_malformed_json_is_repaired_through_the_client(kind):
    server = Server(ok(kind, '{"category": "a", "score": '), ok(kind, '{"category": "b", "score": 4}'))
    ledger = MemoryLedger()
    result = await LLMClient(kind.build(server), ledger).call(request())
    assert result.ok and result.parsed == {"category": "b", "score": 4} and result.calls == 2
    assert [r.status for r in ledger.records] == [CallStatus.INVALID, CallStatus.OK]
    assert ledger.records[0].output_text == '{"category": "a", "score": '
    repair_turns = server.bodies()[1]["messages"]
    assert repair_turns[-2] == {"role": "assistant", "content": '{"category": "a", "score": '}
    assert "not JSON" in repair_turns[-1]["content"]


async def test_malformed_json_twice_is_invalid_and_not_cached(kind):
    server = Server(ok(kind, "Sure! Here it is: category a"))
    ledger = MemoryLedger()
    client = LLMClient(kind.build(server), ledger)
    result = await client.call(request())
    assert result.status is CallStatus.INVALID and result.text == "Sure! Here it is: category a"
    assert result.problems and len(server.requests) == 2
    await client.call(request())
    assert len(server.requests) == 4


async def test_refusal_raises_with_the_raw_text(kind):
    server = Server(httpx2.Response(200, json=kind.refusal("I can't help with that.")))
    provider = kind.build(server)
    with pytest.raises(LLMRefusalError) as info:
        await provider.complete(request())
    err = info.value
    assert err.status is CallStatus.REFUSED and "I can't help with that." in err.raw
    assert err.usage is not None and err.usage.output_tokens == 30


async def test_refusal_through_the_client_is_recorded_and_not_cached(kind):
    server = Server(httpx2.Response(200, json=kind.refusal("No.")))
    ledger = MemoryLedger()
    client = LLMClient(kind.build(server), ledger, prices={"model-x": Price(input=1.0, output=2.0)})
    result = await client.call(request())
    assert result.status is CallStatus.REFUSED and result.calls == 1
    [rec] = ledger.records
    assert rec.status is CallStatus.REFUSED and "No." in rec.output_text and rec.cost_usd is not None
    await client.call(request())
    assert len(server.requests) == 2


async def test_a_refusal_without_usage_has_an_unknown_cost_not_zero(kind):
    body = kind.refusal("No.")
    body.pop("usage", None)
    server = Server(httpx2.Response(200, json=body))
    ledger = MemoryLedger()
    client = LLMClient(kind.build(server), ledger, prices={"model-x": Price(input=1.0, output=2.0)})
    result = await client.call(request())
    [rec] = ledger.records
    assert result.status is CallStatus.REFUSED and rec.usage_missing and rec.cost_usd is None
    assert result.usage_missing == 1 and result.cost_unknown == 1


async def test_end_to_end_cache_second_call_sends_nothing(kind):
    server = Server(ok(kind, '{"category": "a", "score": 5}'))
    ledger = MemoryLedger()
    prices = {"gpt-test-2026-01-01": Price(input=2.0, output=8.0, cache_read=0.5),
              "claude-test-2026": Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)}
    client = LLMClient(kind.build(server), ledger, prices=prices)
    first = await client.call(request(temperature=0.0))
    assert first.ok and not first.cached and first.calls == 1 and first.cost_usd > 0
    rec = ledger.records[0]
    assert rec.provider_kind == kind.name and rec.base_url and rec.returned_model == first.model
    assert rec.params == (await _params_sent(kind))
    second = await client.call(request(temperature=0.0))
    assert second.cached and second.calls == 0 and second.parsed == {"category": "a", "score": 5}
    assert len(server.requests) == 1
    third = await client.call(request(temperature=0.0), force=True)
    assert not third.cached and len(server.requests) == 2


async def _params_sent(kind: Kind) -> dict:
    return {"temperature": 0.0} if kind.name == "openai" else {"temperature": 0.0, "max_tokens": DEFAULT_MAX_TOKENS}


async def test_cancellation_is_recorded(kind):
    started = asyncio.Event()

    async def never(request: httpx2.Request) -> httpx2.Response:
        started.set()
        await asyncio.sleep(30)
        raise AssertionError("not reached")

    ledger = MemoryLedger()
    client = LLMClient(kind.build(never), ledger)
    task = asyncio.create_task(client.call(request()))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [r.status for r in ledger.records] == [CallStatus.CANCELLED]


async def test_provider_attributes_follow_the_protocol(kind):
    from benchwright.core.llm import Provider

    provider = kind.build(Server(ok(kind, "x")), concurrency=3, structured_output="prompt")
    assert isinstance(provider, Provider)
    assert provider.kind == kind.name and provider.concurrency == 3
    assert provider.structured_output is StructuredOutput.PROMPT
    assert provider.base_url.startswith("http://llm.test")
    await provider.aclose()


def test_importing_the_llm_package_does_not_import_the_sdks():
    code = ("import sys, benchwright.core.llm, benchwright.core.llm.config; "
            "bad = [m for m in ('openai', 'anthropic') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
