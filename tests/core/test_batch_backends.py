"""The providers' batch backends (core/llm/anthropic_batch.py, openai_batch.py) through the real SDKs on an httpx2
mock transport, the scripted backend of the fake provider (core/llm/fake.py), and both SDK backends against the
loopback fake of the providers' batch endpoints (tests/batch_server.py) with the batcher and the project store.

No network, no real key: the keys below are placeholders the tests check are never leaked in an error."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
from datetime import UTC, datetime, timedelta

import httpx2
import pytest
from batch_server import BatchServer

from benchwright.core.llm.anthropic_batch import CUSTOM_ID, AnthropicBatchBackend
from benchwright.core.llm.anthropic_provider import AnthropicProvider
from benchwright.core.llm.base import (
    ChatMessage,
    LLMConfigError,
    LLMError,
    LLMRefusalError,
    LLMRequest,
    ToolSpec,
    Usage,
)
from benchwright.core.llm.batch import (
    ANTHROPIC_LIMITS,
    OPENAI_LIMITS,
    Batcher,
    BatchItem,
    BatchItemFailed,
    BatchPolicy,
    BatchStatus,
    RemoteBatch,
    ResultKind,
    new_custom_id,
)
from benchwright.core.llm.client import LLMClient
from benchwright.core.llm.fake import Reply, ScriptedProvider
from benchwright.core.llm.openai_batch import (
    embedding_line,
    embedding_response,
    openai_batch_line,
    openai_batch_response,
)
from benchwright.core.llm.openai_provider import OpenAIProvider
from benchwright.db import Store

OPENAI_KEY = "sk-test-OPENAI-batch-0123456789"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-batch-0123"
SCHEMA = {"type": "object", "properties": {"label": {"type": "string"}, "description": {"type": "string"}},
          "required": ["label", "description"], "additionalProperties": False}
TOOL = ToolSpec("search", "Search the code.", {"type": "object", "properties": {"q": {"type": "string"}},
                                                 "required": ["q"]})


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
                "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)


def _req(text: str = "<question>\nWhy?\n</question>", **params) -> LLMRequest:
    return LLMRequest(model="model-x", messages=(ChatMessage("user", text),), system="You are careful.",
                      json_schema=SCHEMA, schema_name="taxonomy_label", params=params)


class Router:
    """A mock HTTP server: ``routes`` maps ``"METHOD /path"`` (a regex) to a response or ``request -> response``."""

    def __init__(self, routes: dict):
        self.routes = routes
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        key = f"{request.method} {request.url.path}"
        for pattern, answer in self.routes.items():
            if re.fullmatch(pattern, key):
                return answer(request) if callable(answer) else answer
        return httpx2.Response(404, json={"error": {"message": f"no route {key}"}})

    def seen(self) -> list[str]:
        return [f"{r.method} {r.url.path}" for r in self.requests]


def _anthropic(router: Router) -> AnthropicProvider:
    return AnthropicProvider(base_url="http://llm.test", max_retries=0, timeout_s=5.0,
                             http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(router)))


def _openai(router: Router, base_url: str = "http://llm.test/v1") -> OpenAIProvider:
    return OpenAIProvider(base_url=base_url, max_retries=0, timeout_s=5.0,
                          http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(router)))


def _message(text: str = '{"label": "L", "description": "D"}', *, mid: str = "msg_1", stop: str = "end_turn",
             tool: bool = False, explanation: str | None = None) -> dict:
    content = [{"type": "text", "text": text}] if text else []
    if tool:
        content.append({"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "def run"}})
    doc = {"id": mid, "type": "message", "role": "assistant", "model": "claude-test", "content": content,
           "stop_reason": stop, "stop_sequence": None,
           "usage": {"input_tokens": 100, "output_tokens": 30, "cache_read_input_tokens": 40,
                     "cache_creation_input_tokens": 5}}
    if explanation is not None:
        doc["stop_details"] = {"type": "refusal", "category": "cyber", "explanation": explanation}
    return doc


def _completion(content: str | None = '{"label": "L", "description": "D"}', *, refusal: str | None = None,
                tool: bool = False) -> dict:
    message: dict = {"role": "assistant", "content": content, "refusal": refusal}
    if tool:
        message["tool_calls"] = [{"id": "call_9", "type": "function",
                                  "function": {"name": "search", "arguments": '{"q": "def run"}'}}]
    return {"id": "chatcmpl-7", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if tool else "stop", "message": message}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
                      "prompt_tokens_details": {"cached_tokens": 20}}}


def _anthropic_batch(bid: str, status: str = "in_progress", *, created: datetime | None = None, n: int = 3,
                     ended_counts: dict | None = None) -> dict:
    counts = ended_counts or {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    return {"id": bid, "type": "message_batch", "processing_status": status, "request_counts": counts,
            "created_at": (created or datetime.now(UTC)).isoformat().replace("+00:00", "Z"),
            "expires_at": "2099-01-01T00:00:00Z", "ended_at": None, "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"http://llm.test/v1/messages/batches/{bid}/results" if status == "ended" else None}


def _openai_batch(bid: str, status: str = "in_progress", *, label: str = "benchwright-x", created: int | None = None,
                  **extra) -> dict:
    return {"id": bid, "object": "batch", "endpoint": "/v1/chat/completions", "input_file_id": "file-in",
            "completion_window": "24h", "status": status, "created_at": created or int(datetime.now(UTC).timestamp()),
            "request_counts": {"total": 3, "completed": 2, "failed": 1}, "metadata": {"benchwright_batch": label},
            **extra}


def test_new_custom_ids_meet_both_providers_rule():
    ids = {new_custom_id() for _ in range(200)}
    assert len(ids) == 200 and all(CUSTOM_ID.fullmatch(i) for i in ids)
    assert CUSTOM_ID.pattern == r"^[a-zA-Z0-9_-]{1,64}$"
    p = OpenAIProvider(base_url="http://llm.test/v1")
    with pytest.raises(LLMConfigError, match="custom_id"):
        openai_batch_line(p, "has space", _req())
    with pytest.raises(LLMConfigError, match="custom_id"):
        AnthropicBatchBackend(AnthropicProvider(base_url="http://llm.test")).line("x" * 65, _req())


# ------------------------------------------------------------------------------------------- Anthropic (SDK)
async def test_anthropic_line_is_the_online_body_and_submit_posts_it():
    router = Router({"POST /v1/messages": httpx2.Response(200, json=_message()),
                     "POST /v1/messages/batches": httpx2.Response(200, json=_anthropic_batch("msgbatch_1"))})
    provider = _anthropic(router)
    backend = provider.batch_backend()
    assert backend is provider.batch_backend() and backend.limits is ANTHROPIC_LIMITS
    request = _req(temperature=0.2, top_p=0.9, max_tokens=300)
    await provider.complete(request)
    online = json.loads(router.requests[0].content)
    line = backend.line("bw-1", request)
    assert line == {"custom_id": "bw-1", "params": online}  # extra_body (temperature, top_p) merged as the SDK does
    assert online["temperature"] == 0.2 and "output_config" in online and backend.endpoint(line) == "/v1/messages"
    tools = LLMRequest(model="m", messages=(ChatMessage("user", "go"),), tools=(TOOL,))
    await provider.complete(tools)
    assert backend.line("bw-2", tools)["params"] == json.loads(router.requests[1].content)

    assert await backend.submit([line, backend.line("bw-2", tools)], label="benchwright-a") == "msgbatch_1"
    sent = json.loads(router.requests[-1].content)
    assert router.seen()[-1] == "POST /v1/messages/batches"
    assert sent == {"requests": [line, backend.line("bw-2", tools)]}  # no label: Anthropic keeps none


def test_anthropic_refuses_what_the_batch_api_refuses():
    backend = AnthropicProvider(base_url="http://llm.test").batch_backend()
    for bad in (0, -1, 2.5, True):
        with pytest.raises(LLMConfigError, match="max_tokens"):
            backend.line("bw-1", _req(max_tokens=bad))
    with pytest.raises(LLMConfigError, match="unsupported parameter"):
        backend.line("bw-1", _req(logprobs=True))


async def test_anthropic_retrieve_maps_status_and_counts():
    ended = {"processing": 0, "succeeded": 5, "errored": 1, "canceled": 2, "expired": 1}
    router = Router({"GET /v1/messages/batches/b_run": httpx2.Response(200, json=_anthropic_batch("b_run")),
                     "GET /v1/messages/batches/b_cxl": httpx2.Response(200, json=_anthropic_batch("b_cxl", "canceling")),
                     "GET /v1/messages/batches/b_end": httpx2.Response(
                         200, json=_anthropic_batch("b_end", "ended", ended_counts=ended)),
                     "POST /v1/messages/batches/b_run/cancel": httpx2.Response(
                         200, json=_anthropic_batch("b_run", "canceling"))})
    backend = _anthropic(router).batch_backend()
    run, cxl, end = [await backend.retrieve(b) for b in ("b_run", "b_cxl", "b_end")]
    assert (run.ended, run.status, run.counts["processing"]) == (False, "in_progress", 3)
    assert (cxl.ended, cxl.status) == (False, "canceling")
    assert end.ended and not end.failed and end.counts == ended
    cancelled = await backend.cancel("b_run")
    assert cancelled.status == "canceling" and router.seen()[-1] == "POST /v1/messages/batches/b_run/cancel"


async def test_anthropic_results_of_every_kind_out_of_order():
    lines = [
        {"custom_id": "bw-c", "result": {"type": "canceled"}},
        {"custom_id": "bw-b", "result": {"type": "errored", "error": {"type": "error", "error": {
            "type": "invalid_request_error", "message": "max_tokens: too large"}}}},
        {"custom_id": "bw-r", "result": {"type": "succeeded", "message": _message("", stop="refusal",
                                                                                  explanation="Not this.")}},
        {"custom_id": "bw-a", "result": {"type": "succeeded", "message": _message(tool=True, mid="msg_a")}},
        {"custom_id": "bw-e", "result": {"type": "expired"}},
    ]
    jsonl = "".join(json.dumps(x) + "\n" for x in lines).encode()
    router = Router({"GET /v1/messages/batches/b1": httpx2.Response(200, json=_anthropic_batch("b1", "ended")),
                     "GET /v1/messages/batches/b1/results": httpx2.Response(200, content=jsonl),
                     "POST /v1/messages": httpx2.Response(200, json=_message(tool=True, mid="msg_a"))})
    provider = _anthropic(router)
    backend = provider.batch_backend()
    items = [i async for i in backend.results(RemoteBatch(id="b1", ended=True, status="ended"))]
    assert [(i.custom_id, i.kind) for i in items] == [
        ("bw-c", ResultKind.CANCELLED), ("bw-b", ResultKind.ERRORED), ("bw-r", ResultKind.SUCCEEDED),
        ("bw-a", ResultKind.SUCCEEDED), ("bw-e", ResultKind.EXPIRED)]
    assert items[3].raw["result"]["message"]["content"][1]["input"] == {"q": "def run"}  # the line, as JSON
    json.dumps([i.raw for i in items])  # storable as is

    request = _req(max_tokens=200)
    batch_answer = backend.response(items[3], request)
    online = await provider.complete(request)
    online.latency_s = 0.0
    assert batch_answer == online  # same reader: text, tool calls, usage, stop reason, model, id (the message id)
    assert batch_answer.request_id == "msg_a" and batch_answer.usage == Usage(100, 30, 40, 5)
    assert batch_answer.tool_calls[0].arguments == {"q": "def run"} and batch_answer.params_sent == {"max_tokens": 200}
    with pytest.raises(LLMRefusalError, match="cyber") as refused:
        backend.response(items[2], request)
    assert refused.value.raw == "Not this." and refused.value.usage == Usage(100, 30, 40, 5)
    with pytest.raises(BatchItemFailed, match="invalid_request_error: max_tokens: too large") as failed:
        backend.response(items[1], request)
    assert failed.value.kind is ResultKind.ERRORED
    for item, kind in ((items[0], ResultKind.CANCELLED), (items[4], ResultKind.EXPIRED)):
        with pytest.raises(BatchItemFailed) as e:
            backend.response(item, request)
        assert e.value.kind is kind


async def test_anthropic_find_matches_by_time_and_count_across_pages():
    now = datetime.now(UTC)
    page1 = [_anthropic_batch("b5", n=3, created=now), _anthropic_batch("b4", n=7, created=now - timedelta(minutes=1))]
    page2 = [_anthropic_batch("b3", n=3, created=now - timedelta(minutes=3)),
             _anthropic_batch("b2", n=3, created=now - timedelta(hours=2))]

    def listing(request):
        if request.url.params.get("after_id") == "b4":
            return httpx2.Response(200, json={"data": page2, "has_more": True, "first_id": "b3", "last_id": "b2"})
        return httpx2.Response(200, json={"data": page1, "has_more": True, "first_id": "b5", "last_id": "b4"})

    router = Router({"GET /v1/messages/batches": listing})
    backend = _anthropic(router).batch_backend()
    when = (now - timedelta(seconds=30)).isoformat()
    assert await backend.find("benchwright-x", created_after=when, count=7) == "b4"
    assert await backend.find("benchwright-x", created_after=when, count=9) is None
    # only batches created since created_after less the 1-minute skew count: b5 (b3 is 3 minutes old)
    assert await backend.find("benchwright-x", created_after=when, count=3) == "b5"
    # a batch the project already holds is never adopted
    assert await backend.find("benchwright-x", created_after=when, count=3, known=frozenset({"b5"})) is None
    # several candidates: the one created closest to the local commit (a wrong guess costs a retry: results are
    # matched by custom_id)
    earlier = (now - timedelta(minutes=2, seconds=30)).isoformat()
    assert await backend.find("l", created_after=earlier, count=3) == "b3"
    assert await backend.find("l", created_after=earlier, count=3, known=frozenset({"b3"})) == "b5"
    assert router.seen().count("GET /v1/messages/batches") >= 8


async def test_anthropic_sdk_errors_are_llm_errors_without_the_key():
    router = Router({"POST /v1/messages/batches": httpx2.Response(
        401, json={"type": "error", "error": {"type": "authentication_error", "message": f"bad key {ANTHROPIC_KEY}"}})})
    backend = _anthropic(router).batch_backend()
    with pytest.raises(LLMError) as e:
        await backend.submit([backend.line("bw-1", _req())], label="l")
    assert e.value.http_status == 401 and ANTHROPIC_KEY not in str(e.value) and "***" in str(e.value)


# ---------------------------------------------------------------------------------------------- OpenAI (SDK)
async def test_openai_line_is_the_online_body_and_submit_uploads_jsonl_with_the_label():
    router = Router({"POST /v1/chat/completions": httpx2.Response(200, json=_completion()),
                     "POST /v1/files": httpx2.Response(200, json={
                         "id": "file-in", "object": "file", "bytes": 1, "created_at": 1, "filename": "x.jsonl",
                         "purpose": "batch", "status": "processed"}),
                     "POST /v1/batches": httpx2.Response(200, json=_openai_batch("batch_1", "validating"))})
    provider = _openai(router)
    backend = provider.batch_backend()
    assert backend is provider.batch_backend() and backend.limits is OPENAI_LIMITS
    request = _req(temperature=0.0, seed=3, max_tokens=100)
    await provider.complete(request)
    online = json.loads(router.requests[0].content)
    line = backend.line("bw-1", request)
    assert line == {"custom_id": "bw-1", "method": "POST", "url": "/v1/chat/completions", "body": online}
    assert online["response_format"]["json_schema"]["strict"] is True and online["max_tokens"] == 100
    lines = [line, backend.line("bw-2", _req("second"))]
    assert await backend.submit(lines, label="benchwright-abc") == "batch_1"
    upload, create = router.requests[1], router.requests[2]
    assert router.seen()[1:] == ["POST /v1/files", "POST /v1/batches"]
    form = upload.content.decode()
    assert 'name="purpose"\r\n\r\nbatch' in form and 'filename="benchwright-abc.jsonl"' in form
    body_lines = [json.loads(x) for x in form.splitlines() if x.startswith('{"custom_id"')]
    assert body_lines == lines  # the file is exactly the lines, one JSON object a line
    assert json.loads(create.content) == {"input_file_id": "file-in", "endpoint": "/v1/chat/completions",
                                          "completion_window": "24h", "metadata": {"benchwright_batch": "benchwright-abc"}}


async def test_openai_refused_batch_deletes_its_file_and_reports_without_the_key():
    router = Router({"POST /v1/files": httpx2.Response(200, json={
                         "id": "file-in", "object": "file", "bytes": 1, "created_at": 1, "filename": "x.jsonl",
                         "purpose": "batch", "status": "processed"}),
                     "POST /v1/batches": httpx2.Response(400, json={"error": {"message": f"no {OPENAI_KEY}"}}),
                     "DELETE /v1/files/file-in": httpx2.Response(200, json={"id": "file-in", "object": "file",
                                                                            "deleted": True})})
    backend = _openai(router).batch_backend()
    with pytest.raises(LLMError) as e:
        await backend.submit([backend.line("bw-1", _req())], label="l")
    assert e.value.http_status == 400 and OPENAI_KEY not in str(e.value)
    assert router.seen()[-1] == "DELETE /v1/files/file-in"


async def test_openai_retrieve_maps_every_status():
    statuses = ["validating", "in_progress", "finalizing", "cancelling", "completed", "expired", "cancelled", "failed"]
    errors = {"object": "list", "data": [{"code": "invalid_json_line", "line": 2, "message": "not JSON"}]}
    routes = {f"GET /v1/batches/b_{s}": httpx2.Response(200, json=_openai_batch(
        f"b_{s}", s, output_file_id="file-out" if s == "completed" else None,
        errors=errors if s == "failed" else None)) for s in statuses}
    routes["POST /v1/batches/b_in_progress/cancel"] = httpx2.Response(200, json=_openai_batch("b_in_progress",
                                                                                             "cancelling"))
    backend = _openai(Router(routes)).batch_backend()
    got = {s: await backend.retrieve(f"b_{s}") for s in statuses}
    assert [s for s, r in got.items() if not r.ended] == ["validating", "in_progress", "finalizing", "cancelling"]
    assert [s for s, r in got.items() if r.failed] == ["failed"]
    assert got["failed"].error == "invalid_json_line (line 2): not JSON"
    assert got["completed"].counts == {"total": 3, "completed": 2, "failed": 1}
    assert got["completed"].output_file_id == "file-out" and got["completed"].error is None
    assert (await backend.cancel("b_in_progress")).status == "cancelling"


async def test_openai_results_read_both_files_and_every_kind():
    out = [{"id": "r2", "custom_id": "bw-2", "error": None,
            "response": {"status_code": 200, "request_id": "req_2", "body": _completion(tool=True)}},
           {"id": "r1", "custom_id": "bw-1", "error": None,
            "response": {"status_code": 200, "request_id": "req_1", "body": _completion(None, refusal="No.")}}]
    err = [{"id": "r3", "custom_id": "bw-3", "error": None, "response": {
               "status_code": 400, "request_id": "req_3",
               "body": {"error": {"message": "bad schema", "type": "invalid_request_error", "code": None}}}},
           {"id": "r4", "custom_id": "bw-4", "response": None,
            "error": {"code": "batch_expired", "message": "not run before the window ended"}},
           {"id": "r5", "custom_id": "bw-5", "response": None,
            "error": {"code": "batch_cancelled", "message": "cancelled first"}},
           {"id": "r6", "custom_id": "bw-6", "response": None,
            "error": {"code": "request_timeout", "message": "the model timed out"}}]

    def jsonl(rows):
        return httpx2.Response(200, content=("".join(json.dumps(x) + "\n" for x in rows) + "\n").encode())

    router = Router({"GET /v1/files/file-out/content": jsonl(out), "GET /v1/files/file-err/content": jsonl(err),
                     "POST /v1/chat/completions": httpx2.Response(200, json=_completion(tool=True),
                                                                  headers={"x-request-id": "req_2"})})
    provider = _openai(router)
    backend = provider.batch_backend()
    items = [i async for i in backend.results(RemoteBatch(id="b", ended=True, status="completed",
                                                          output_file_id="file-out", error_file_id="file-err"))]
    assert [(i.custom_id, i.kind) for i in items] == [
        ("bw-2", ResultKind.SUCCEEDED), ("bw-1", ResultKind.SUCCEEDED), ("bw-3", ResultKind.ERRORED),
        ("bw-4", ResultKind.EXPIRED), ("bw-5", ResultKind.CANCELLED), ("bw-6", ResultKind.ERRORED)]
    assert items[0].raw == out[0]
    request = _req(max_tokens=50)
    online = await provider.complete(request)
    online.latency_s = 0.0
    assert backend.response(items[0], request) == online  # the same reader as the online call
    assert online.tool_calls[0].arguments == {"q": "def run"} and online.usage == Usage(100, 30, 20, 0)
    with pytest.raises(LLMRefusalError, match=r"refused: No\."):
        backend.response(items[1], request)
    with pytest.raises(BatchItemFailed, match="bad schema") as e:
        backend.response(items[2], request)
    assert e.value.kind is ResultKind.ERRORED
    with pytest.raises(BatchItemFailed, match="batch_expired") as e:
        backend.response(items[3], request)
    assert e.value.kind is ResultKind.EXPIRED
    # usable without a live client (--batch-file imports)
    assert openai_batch_response(items[0], request).text == online.text
    assert openai_batch_response(items[0], request).params_sent == {"max_tokens": 50}


async def test_openai_find_matches_the_metadata_label_across_pages():
    now = int(datetime.now(UTC).timestamp())
    page1 = [_openai_batch("b4", label="other", created=now), _openai_batch("b3", label="mine", created=now - 60)]
    page2 = [_openai_batch("b2", label="twice", created=now - 90), _openai_batch("b1", label="twice", created=now - 99)]

    def listing(request):
        if request.url.params.get("after") == "b3":
            return httpx2.Response(200, json={"object": "list", "data": page2, "has_more": False})
        return httpx2.Response(200, json={"object": "list", "data": page1, "has_more": True})

    backend = _openai(Router({"GET /v1/batches": listing})).batch_backend()
    since = datetime.fromtimestamp(now - 30, UTC).isoformat()
    assert await backend.find("mine", created_after=since, count=3) == "b3"
    assert await backend.find("absent", created_after=since, count=3) is None
    with pytest.raises(LLMError, match="b2, b1"):
        await backend.find("twice", created_after=since, count=3)


def test_openai_embedding_lines_and_results():
    line = embedding_line("bw-e", {"model": "text-embedding-3-small", "input": ["a", "b"]})
    assert line == {"custom_id": "bw-e", "method": "POST", "url": "/v1/embeddings",
                    "body": {"model": "text-embedding-3-small", "input": ["a", "b"]}}
    import base64
    import struct

    packed = base64.b64encode(struct.pack("<2f", 0.5, -1.0)).decode()
    body = {"object": "list", "data": [{"index": 1, "embedding": packed}, {"index": 0, "embedding": [0.25, 0.75]}],
            "usage": {"prompt_tokens": 7, "total_tokens": 7}}
    item = BatchItem("bw-e", ResultKind.SUCCEEDED, {"custom_id": "bw-e",
                                                    "response": {"status_code": 200, "body": body}})
    vectors, usage = embedding_response(item)
    assert vectors == [[0.25, 0.75], [0.5, -1.0]] and usage == Usage(input_tokens=7)
    with pytest.raises(BatchItemFailed):
        embedding_response(BatchItem("bw-e", ResultKind.EXPIRED, {"error": {"code": "batch_expired"}}))


# ------------------------------------------------------------------------------------------- scripted fake
def _batch_client(store, provider, backend, **policy):
    client = LLMClient(provider, store)
    client.batch = Batcher(backend, store, BatchPolicy(poll_interval_s=0.001, gather_s=0.01,
                                                       owner=f"{socket.gethostname()}:{os.getpid()}:t", **policy),
                           provider=provider.name, provider_kind=provider.kind,
                           base_url=getattr(provider, "base_url", None))
    return client


@pytest.fixture()
def store(tmp_path):
    with Store.open(tmp_path / "p.db", create=True) as s:
        yield s


def _n(request: LLMRequest) -> int:
    return int(request.messages[-1].content.split()[-1])


async def test_scripted_batch_backend_answers_through_the_script_with_knobs(store):
    provider = ScriptedProvider(lambda r: {"label": f"n{_n(r)}", "description": "d"})
    backend = provider.batch_backend()
    assert backend is provider.batch
    backend.polls = 2
    backend.outcome = lambda cid, r: {1: "errored", 2: "expired", 3: "missing", 4: "cancelled"}.get(_n(r))
    client = _batch_client(store, provider, backend)
    results = await asyncio.gather(*(client.call(_req(f"item {n}"), purpose="t") for n in range(6)))
    assert [r.parsed["label"] for r in results] == [f"n{n}" for n in range(6)]
    assert backend.submissions == 1 and sorted(_n(r) for r in provider.calls) == [1, 2, 3, 4]  # retried online
    assert sorted(_n(r) for r in backend.answered) == [0, 5]
    kinds = dict(store.db.conn.execute("SELECT result_kind, count(*) FROM llm_batch_requests GROUP BY 1").fetchall())
    assert kinds == {"succeeded": 2, "errored": 1, "expired": 1, "missing": 1, "cancelled": 1}


async def test_scripted_batch_refusal_and_failed_submission(store):
    provider = ScriptedProvider(lambda r: LLMRefusalError("fake: the model refused: no", raw="no")
                                if _n(r) == 1 else Reply({"label": "x", "description": "d"}))
    backend = provider.batch
    backend.fail_submit = LLMError("the batch API is down")
    client = _batch_client(store, provider, backend)
    results = await asyncio.gather(*(client.call(_req(f"item {n}"), purpose="t") for n in range(2)))
    # a refused submission: both requests go online (where item 1 is refused as online)
    assert backend.submissions == 0 and len(provider.calls) == 2 and store.batches()[0].status is BatchStatus.FAILED
    assert results[0].parsed == {"label": "x", "description": "d"} and results[1].parsed is None  # refused
    item = BatchItem("bw-1", ResultKind.SUCCEEDED, {"custom_id": "bw-1", "result": {
        "type": "succeeded", "refusal": {"message": "refused", "raw": "no", "stop_reason": "refusal"}}})
    with pytest.raises(LLMRefusalError):
        backend.response(item, _req())


async def test_scripted_batch_kill_after_create_is_found_not_submitted_again(store):
    class Died(BaseException):
        pass

    provider = ScriptedProvider(lambda r: {"label": "x", "description": "d"})
    backend = provider.batch
    backend.die_after_create = Died
    client = _batch_client(store, provider, backend)
    first = await asyncio.gather(*(client.call(_req(f"item {n}"), purpose="t") for n in range(3)))
    assert all(r.parsed is None for r in first)  # the calls end in errors: the process "died"
    (batch,) = store.batches()
    assert batch.status is BatchStatus.PENDING and batch.provider_batch_id is None and backend.submissions == 1
    with store.write() as db:  # the dead process's owner
        db.conn.execute("UPDATE llm_batches SET created_by = ?", (f"{socket.gethostname()}:999999999:dead",))
    client2 = _batch_client(store, provider, backend)
    results = await asyncio.gather(*(client2.call(_req(f"item {n}"), purpose="t") for n in range(3)))
    assert all(r.parsed == {"label": "x", "description": "d"} for r in results)
    assert store.batches()[0].provider_batch_id == "fakebatch-1"
    assert backend.submissions == 1 and not provider.calls  # found by its label, never paid twice


# ------------------------------------------------------------------------------------ loopback batch server
@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_loopback_server_partial_errored_expired_results_then_resume_after_restart(tmp_path, store, kind):
    state = tmp_path / "server"
    with BatchServer(state, polls=2, errored_every=4, expired_every=5, missing_every=7, cancelled_every=9) as server:
        provider = (AnthropicProvider(base_url=server.base_url, max_retries=0) if kind == "anthropic"
                    else OpenAIProvider(base_url=server.base_url + "/v1", max_retries=0))
        client = _batch_client(store, provider, provider.batch_backend())
        reqs = [_req(f"<question>\nq{n}\n</question>") for n in range(20)]
        results = await asyncio.gather(*(client.call(r, purpose="t") for r in reqs))
        assert all(r.parsed["label"].startswith("Topic") for r in results)
        assert server.submissions == 1
        # every 4th, 5th, 7th and 9th request (12 of 20) went online; the 8 others came from the batch
        assert server.online == 12
        assert store.batch_request_counts(store.batches()[0].id)["used"] == 8
        kinds = dict(store.db.conn.execute("SELECT result_kind, count(*) FROM llm_batch_requests GROUP BY 1"))
        assert kinds == {"succeeded": 8, "errored": 5, "expired": 3, "missing": 2, "cancelled": 2}
        await provider.aclose()

    # a killed client: a batch submitted, not collected; the server restarts on its state (same port)
    def provider_at(server):
        return (AnthropicProvider(base_url=server.base_url, max_retries=0) if kind == "anthropic"
                else OpenAIProvider(base_url=server.base_url + "/v1", max_retries=0))

    with Store.open(tmp_path / "p2.db", create=True) as store2:
        with BatchServer(state, polls=10**6) as server:
            port = server.port
            provider = provider_at(server)
            client = _batch_client(store2, provider, provider.batch_backend())
            task = asyncio.ensure_future(asyncio.gather(*(client.call(r, purpose="t") for r in reqs[:5])))
            while not store2.batches() or store2.batches()[0].status is not BatchStatus.SUBMITTED:
                await asyncio.sleep(0.01)
            await _kill(client, task)
            await provider.aclose()
        assert server.submissions == 2
        with BatchServer(state, polls=0, port=port) as server:
            provider = provider_at(server)
            client = _batch_client(store2, provider, provider.batch_backend())
            again = await asyncio.gather(*(client.call(r, purpose="t") for r in reqs[:5]))
            assert all(r.parsed["label"].startswith("Topic") for r in again)
            assert server.submissions == 2  # no second submission: the batch was resumed
            assert store2.batches()[0].status is BatchStatus.COLLECTED and len(store2.batches()) == 1
            await provider.aclose()


async def _kill(client, task) -> None:
    """Stop a client as a kill would: its calls and every task of its batcher (pollers) end now."""
    tasks = [task, *client.batch._tasks, *client.batch._pollers.values()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_loopback_server_failed_openai_batch_goes_online(tmp_path, store):
    with BatchServer(tmp_path / "s", polls=0, fail_batches=True) as server:
        provider = OpenAIProvider(base_url=server.base_url + "/v1", max_retries=0)
        client = _batch_client(store, provider, provider.batch_backend())
        results = await asyncio.gather(*(client.call(_req(f"<question>\nq{n}\n</question>"), purpose="t")
                                         for n in range(3)))
        assert all(r.parsed for r in results) and server.online == 3 and server.submissions == 1
        assert store.batches()[0].status is BatchStatus.FAILED and "scripted_failure" in store.batches()[0].error
        await provider.aclose()


def test_batch_server_runs_in_its_own_process_and_takes_knobs(tmp_path):
    import subprocess
    import sys
    import urllib.request
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "batch_server.py"
    proc = subprocess.Popen([sys.executable, str(script), "--state", str(tmp_path / "s"), "--polls", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", base)
        with urllib.request.urlopen(base + "/stats", timeout=10) as r:
            assert json.loads(r.read()) == {"submissions": 0, "online": 0, "batches": 0}
        req = urllib.request.Request(base + "/control", data=json.dumps({"errored_every": 2}).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            knobs = json.loads(r.read())
        assert knobs["errored_every"] == 2 and knobs["polls"] == 3
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()
