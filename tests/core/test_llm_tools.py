"""Native tool calling over the real OpenAI and Anthropic SDKs on an httpx2 mock transport (issue 15 item 1).

The exact JSON bodies sent (tools, assistant calls, tool results and their grouping), the parsing of replies with
zero, one and two calls, bad arguments, text beside calls, tools winning over a schema, and the hint an
OpenAI-compatible server's HTTP 500 to ``response_format: json_schema`` (or to ``tools``) gets.
"""

from __future__ import annotations

import itertools
import json

import httpx2
import pytest

from benchwright.core.llm import (
    ChatMessage,
    LLMClient,
    LLMConfigError,
    LLMError,
    LLMRequest,
    MemoryLedger,
    ToolCall,
    ToolSpec,
)
from benchwright.core.llm.anthropic_provider import DEFAULT_MAX_TOKENS, AnthropicProvider
from benchwright.core.llm.base import StopReason
from benchwright.core.llm.config import LLMConfig, LLMSettings, build_provider
from benchwright.core.llm.openai_provider import OpenAIProvider

SEARCH = ToolSpec("search", "Find a substring in the repository.",
                  {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"],
                   "additionalProperties": False})
VIEW = ToolSpec("view", "Show a file or a directory.",
                {"type": "object", "properties": {"path": {"type": "string"}, "start": {"type": "integer"}},
                 "required": ["path"]})
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}

HISTORY = (
    ChatMessage("user", "Where is run defined?"),
    ChatMessage("assistant", "Looking.", tool_calls=(ToolCall("c1", "search", {"query": "def run"}),
                                                     ToolCall("c2", "view", {"path": "app.py"}))),
    ChatMessage("tool", "app.py: 3 matches", tool_call_id="c1", name="search"),
    ChatMessage("tool", "1 import os", tool_call_id="c2", name="view"),
    ChatMessage("user", "You have 3 turns left."),
    ChatMessage("assistant", "", tool_calls=(ToolCall("c3", "search", {}, arguments_raw="{bad"),)),
    ChatMessage("tool", "error: arguments are not JSON", tool_call_id="c3", name="search"),
)


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)


class Server:
    def __init__(self, *responses: httpx2.Response):
        self.responses = list(responses)
        self.bodies: list[dict] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        return self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]


def openai(server: Server, base_url: str = "http://llm.test/v1", **kw) -> OpenAIProvider:
    return OpenAIProvider("local", base_url=base_url, api_key_env=None, max_retries=0, timeout_s=5,
                          http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)), **kw)


def anthropic(server: Server, **kw) -> AnthropicProvider:
    return AnthropicProvider("claude", base_url="http://llm.test", max_retries=0, timeout_s=5,
                             http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)), **kw)


def openai_reply(content: str | None, calls: list[tuple[str, str, str]] = (), finish: str = "tool_calls"):
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, n, a in calls]
    return httpx2.Response(200, json={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


def anthropic_reply(blocks: list[dict], stop: str = "tool_use"):
    return httpx2.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": blocks,
        "stop_reason": stop, "usage": {"input_tokens": 10, "output_tokens": 5}})


def request(messages=HISTORY, tools=(SEARCH, VIEW), schema=None) -> LLMRequest:
    return LLMRequest(model="m", system="Answer from the code.", messages=messages, tools=tools,
                      json_schema=schema, params={"temperature": 0})


# ---------------------------------------------------------------------------------------------------- OpenAI
async def test_openai_sends_tools_calls_and_results():
    server = Server(openai_reply(None, [("x1", "search", '{"query": "x"}')]))
    provider = openai(server)
    await provider.complete(request())
    [body] = server.bodies
    assert body["tools"] == [
        {"type": "function", "function": {"name": "search", "description": "Find a substring in the repository.",
                                          "parameters": SEARCH.parameters, "strict": True}},
        # an optional property: strict mode would make it required, so the schema goes as it is, not strict
        {"type": "function", "function": {"name": "view", "description": "Show a file or a directory.",
                                          "parameters": VIEW.parameters, "strict": False}},
    ]
    assert body["messages"] == [
        {"role": "system", "content": "Answer from the code."},
        {"role": "user", "content": "Where is run defined?"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query": "def run"}'}},
            {"id": "c2", "type": "function", "function": {"name": "view", "arguments": '{"path": "app.py"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "app.py: 3 matches"},
        {"role": "tool", "tool_call_id": "c2", "content": "1 import os"},
        {"role": "user", "content": "You have 3 turns left."},
        # a call-only turn has null content; unreadable arguments go back as {} (vLLM and SGLang answer HTTP 400 to
        # history arguments that are not a JSON object), the call keeping its id
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c3", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c3", "content": "error: arguments are not JSON"},
    ]
    assert body["temperature"] == 0 and "response_format" not in body and "tool_choice" not in body


@pytest.mark.parametrize(("calls", "expected"), [
    ([], ()),
    ([("x1", "search", '{"query": "def run"}')], (ToolCall("x1", "search", {"query": "def run"}),)),
    ([("x1", "search", '{"query": "a"}'), ("x2", "view", '{"path": "b.py", "start": 3}')],
     (ToolCall("x1", "search", {"query": "a"}), ToolCall("x2", "view", {"path": "b.py", "start": 3}))),
    ([("x1", "search", '{"query": ')], (ToolCall("x1", "search", {}, arguments_raw='{"query": '),)),
    ([("x1", "search", '["a"]')], (ToolCall("x1", "search", {}, arguments_raw='["a"]'),)),
    ([("x1", "search", "")], (ToolCall("x1", "search", {}, arguments_raw=""),)),
], ids=["zero", "one", "two", "bad-json", "not-an-object", "empty"])
async def test_openai_parses_tool_calls(calls, expected):
    provider = openai(Server(openai_reply("Thinking." if calls else "Done.", calls,
                                          "tool_calls" if calls else "stop")))
    resp = await provider.complete(request())
    assert resp.tool_calls == expected
    assert resp.text == ("Thinking." if calls else "Done.")  # text beside the calls is kept
    assert resp.stop_reason == ("tool_calls" if calls else "stop")


async def test_openai_custom_tool_call_keeps_its_input_raw():
    body = json.loads(openai_reply(None).content)
    body["choices"][0]["message"]["tool_calls"] = [
        {"id": "k1", "type": "custom", "custom": {"name": "grep", "input": "def run"}}]
    resp = await openai(Server(httpx2.Response(200, json=body))).complete(request())
    assert resp.tool_calls == (ToolCall("k1", "grep", {}, arguments_raw="def run"),)


async def test_openai_tools_win_over_a_schema():
    server = Server(openai_reply("x"))
    await openai(server).complete(request(schema=SCHEMA))
    assert "tools" in server.bodies[0] and "response_format" not in server.bodies[0]
    await openai(server).complete(request(tools=(), schema=SCHEMA, messages=HISTORY[:1]))
    assert "response_format" in server.bodies[1] and "tools" not in server.bodies[1]


@pytest.mark.parametrize("bad", [
    ToolSpec("read file", "x", {"type": "object"}),
    ToolSpec("a" * 65, "x", {"type": "object"}),
    ToolSpec("", "x", {"type": "object"}),
    ToolSpec("view", "x", {"type": "string"}),
])
@pytest.mark.parametrize("make", [openai, anthropic], ids=["openai", "anthropic"])
async def test_tools_the_api_would_refuse_are_refused_before_sending(make, bad):
    server = Server(openai_reply("x"))
    with pytest.raises(LLMConfigError, match="tool"):
        await make(server).complete(request(tools=(SEARCH, bad)))
    assert server.bodies == []


async def test_a_tool_offered_twice_is_refused():
    with pytest.raises(LLMConfigError, match="offered twice"):
        await openai(Server(openai_reply("x"))).complete(request(tools=(SEARCH, SEARCH)))


# ------------------------------------------------------------------------------------------------- Anthropic
async def test_anthropic_sends_tools_and_groups_tool_results_into_one_user_turn():
    server = Server(anthropic_reply([{"type": "text", "text": "ok"}], stop="end_turn"))
    await anthropic(server).complete(request())
    [body] = server.bodies
    assert body["tools"] == [
        {"name": "search", "description": "Find a substring in the repository.", "input_schema": SEARCH.parameters},
        {"name": "view", "description": "Show a file or a directory.", "input_schema": VIEW.parameters},
    ]
    assert body["system"] == "Answer from the code."
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert body["messages"] == [
        {"role": "user", "content": "Where is run defined?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "c1", "name": "search", "input": {"query": "def run"}},
            {"type": "tool_use", "id": "c2", "name": "view", "input": {"path": "app.py"}}]},
        # both results in ONE user turn, right after the tool_use turn; the user's note joins it after them
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "app.py: 3 matches"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "1 import os"},
            {"type": "text", "text": "You have 3 turns left."}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c3", "name": "search", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c3", "content": "error: arguments are not JSON"}]},
    ]
    roles = [m["role"] for m in body["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))  # alternating
    assert "output_config" not in body


async def test_anthropic_plain_requests_keep_their_body():
    server = Server(anthropic_reply([{"type": "text", "text": "ok"}], stop="end_turn"))
    await anthropic(server).complete(LLMRequest(model="m", messages=(ChatMessage("user", "a"),
                                                                     ChatMessage("assistant", "b"),
                                                                     ChatMessage("user", "c"))))
    assert server.bodies[0]["messages"] == [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                                            {"role": "user", "content": "c"}]
    assert "tools" not in server.bodies[0]


async def test_anthropic_leaves_out_an_empty_assistant_turn():
    server = Server(anthropic_reply([{"type": "text", "text": "ok"}], stop="end_turn"))
    await anthropic(server).complete(request(messages=(ChatMessage("user", "q"), ChatMessage("assistant", ""),
                                                       ChatMessage("user", "Use a tool or finish."))))
    assert server.bodies[0]["messages"] == [{"role": "user", "content": "q"},
                                            {"role": "user", "content": "Use a tool or finish."}]


async def test_anthropic_never_sends_a_blank_text_block():
    # Claude may write "\n\n" before its tool_use blocks; the API refuses a text block of white space only
    # ("text content blocks must contain non-whitespace text"), so the next turn must leave it out.
    server = Server(anthropic_reply([{"type": "text", "text": "ok"}], stop="end_turn"))
    await anthropic(server).complete(request(messages=(
        ChatMessage("user", "q"),
        ChatMessage("assistant", "\n\n", tool_calls=(ToolCall("t1", "search", {"query": "x"}),)),
        ChatMessage("tool", "no match", tool_call_id="t1", name="search"),
        ChatMessage("user", " \n"),
        ChatMessage("assistant", " \n"),
        ChatMessage("user", "Use a tool or finish."))))
    assert server.bodies[0]["messages"] == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"query": "x"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "no match"}]},
        {"role": "user", "content": "Use a tool or finish."}]


@pytest.mark.parametrize(("blocks", "text", "expected"), [
    ([{"type": "text", "text": "Done."}], "Done.", ()),
    ([{"type": "tool_use", "id": "t1", "name": "search", "input": {"query": "x"}}], "",
     (ToolCall("t1", "search", {"query": "x"}),)),
    ([{"type": "text", "text": "Two looks."},
      {"type": "tool_use", "id": "t1", "name": "search", "input": {"query": "x"}},
      {"type": "tool_use", "id": "t2", "name": "view", "input": {"path": "a.py"}}], "Two looks.",
     (ToolCall("t1", "search", {"query": "x"}), ToolCall("t2", "view", {"path": "a.py"}))),
], ids=["zero", "one", "two-with-text"])
async def test_anthropic_parses_tool_use_blocks(blocks, text, expected):
    resp = await anthropic(Server(anthropic_reply(blocks, stop="tool_use" if expected else "end_turn"))).complete(
        request())
    assert (resp.text, resp.tool_calls) == (text, expected)
    assert resp.stop_reason == ("tool_use" if expected else "end_turn")


async def test_anthropic_tools_win_over_a_schema():
    server = Server(anthropic_reply([{"type": "text", "text": "ok"}], stop="end_turn"))
    await anthropic(server).complete(request(schema=SCHEMA))
    assert "tools" in server.bodies[0] and "output_config" not in server.bodies[0]


# ---------------------------------------------------------------------------------- through the client
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_client_returns_tool_calls_and_replays_them_from_the_cache(kind):
    if kind == "openai":
        server = Server(openai_reply("Let me look.", [("x1", "search", '{"query": "def run"}')]))
        provider = openai(server)
    else:
        server = Server(anthropic_reply([{"type": "text", "text": "Let me look."},
                                         {"type": "tool_use", "id": "x1", "name": "search",
                                          "input": {"query": "def run"}}]))
        provider = anthropic(server)
    client = LLMClient(provider, MemoryLedger())
    first = await client.call(request(schema=SCHEMA))  # tools win: the text is not validated against the schema
    assert first.ok and first.calls == 1
    assert first.tool_calls == (ToolCall("x1", "search", {"query": "def run"}),)
    assert first.text == first.parsed == "Let me look."
    assert first.stop_reason == StopReason.TOOL_USE
    again = await client.call(request(schema=SCHEMA))
    assert again.cached and again.calls == 0 and len(server.bodies) == 1
    assert (again.tool_calls, again.text, again.stop_reason) == (first.tool_calls, first.text, StopReason.TOOL_USE)


# ------------------------------------------------------------------------------------- the HTTP 500 hint
def _http_500():
    return httpx2.Response(500, json={"detail": "Internal Server Error"})


async def test_json_schema_500_from_a_compatible_server_names_structured_output_prompt():
    provider = openai(Server(_http_500()))
    with pytest.raises(LLMError) as e:
        await provider.complete(request(tools=(), schema=SCHEMA, messages=HISTORY[:1]))
    msg = str(e.value)
    assert "HTTP 500" in msg and 'structured_output = "prompt"' in msg and "[providers.local]" in msg
    assert "benchwright.toml" in msg and e.value.http_status == 500


async def test_the_hint_comes_before_a_long_server_traceback():
    # llama_cpp.server 0.3.36's answer to json_schema (seen by tests/e2e/real_model.sh): a pydantic error and a
    # traceback; the judge CLI shows a reason's first 300 characters, which must still name the setting
    body = {"error": {"message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                      "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}\n\n"
                      + '  File "llama_cpp/server/app.py", line 376, in create_chat_completion\n' * 20}}
    provider = openai(Server(httpx2.Response(500, json=body)))
    with pytest.raises(LLMError) as e:
        await provider.complete(request(tools=(), schema=SCHEMA, messages=HISTORY[:1]))
    msg = str(e.value)
    assert 'structured_output = "prompt"' in msg[:300] and "[providers.local]" in msg[:300]
    assert msg.index("benchwright.toml") < msg.index("validation error") and "line 376" in msg


async def test_tools_rejected_by_a_compatible_server_names_tools_prompt():
    provider = openai(Server(httpx2.Response(400, json={"error": {"message": "tools not supported"}})))
    with pytest.raises(LLMError) as e:
        await provider.complete(request(schema=SCHEMA))
    assert 'tools = "prompt"' in str(e.value) and "structured_output" not in str(e.value)
    assert "tools not supported" in str(e.value)


async def test_anthropic_compatible_server_gets_the_hint_too():
    with pytest.raises(LLMError, match=r'structured_output = "prompt" under \[providers.claude\]'):
        await anthropic(Server(_http_500())).complete(request(tools=(), schema=SCHEMA, messages=HISTORY[:1]))


@pytest.mark.parametrize(("base_url", "response", "schema"), [
    ("https://api.openai.com/v1", _http_500(), SCHEMA),  # OpenAI's own endpoint supports json_schema
    ("http://llm.test/v1", _http_500(), None),  # no response_format was sent
    ("http://llm.test/v1", httpx2.Response(429, json={"error": {"message": "slow down"}}), SCHEMA),
])
async def test_no_hint_where_it_does_not_apply(base_url, response, schema):
    with pytest.raises(LLMError) as e:
        await openai(Server(response), base_url=base_url).complete(
            request(tools=(), schema=schema, messages=HISTORY[:1]))
    assert "benchwright.toml" not in str(e.value)


async def test_client_records_the_hint_in_the_ledger():
    ledger = MemoryLedger()
    result = await LLMClient(openai(Server(_http_500())), ledger).call(
        request(tools=(), schema=SCHEMA, messages=HISTORY[:1]))
    assert not result.ok and 'structured_output = "prompt"' in result.error
    assert 'structured_output = "prompt"' in ledger.records[-1].error


# ---------------------------------------------------------------------------------------------- config
def _config(tools: str | None) -> LLMConfig:
    table = {"kind": "openai", "base_url": "http://llm.test/v1"}
    if tools is not None:
        table["tools"] = tools
    settings = LLMSettings.model_validate({"providers": {"local": table},
                                           "roles": {"generator": {"provider": "local", "model": "m"}}})
    return LLMConfig(settings, [], {})


@pytest.mark.parametrize(("value", "expected"), [(None, "native"), ("native", "native"), ("prompt", "prompt")])
def test_tools_setting_reaches_the_provider(value, expected):
    config = _config(value)
    provider = build_provider(config, config.role("generator"))
    assert provider.tools == expected


def test_tools_setting_is_validated_naming_file_and_key(tmp_path, monkeypatch):
    from benchwright.core.llm.config import load_llm_config

    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    (tmp_path / "benchwright.toml").write_text('[providers.local]\nkind = "openai"\ntools = "json"\n')
    with pytest.raises(LLMConfigError) as e:
        load_llm_config(tmp_path)
    assert "providers.local.tools" in str(e.value) and str(tmp_path / "benchwright.toml") in str(e.value)
    assert "'native'" in str(e.value) and "'prompt'" in str(e.value)
