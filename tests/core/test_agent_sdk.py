"""The agent through the real OpenAI and Anthropic SDKs on an httpx2 mock transport: the four tools go out as
each API wants them (OpenAI strict functions, Anthropic input_schema), the tool results come back in the next
turn, and the Finish call ends the run."""

from __future__ import annotations

import json

import httpx2
import pytest
from test_agent_fixture import make_repo

from benchwright.core.agent.loop import run_agent
from benchwright.core.agent.model import AgentSettings
from benchwright.core.agent.tools import TOOLS
from benchwright.core.agent.workspace import Workspace
from benchwright.core.llm import LLMClient, MemoryLedger
from benchwright.core.llm.anthropic_provider import AnthropicProvider
from benchwright.core.llm.openai_provider import OpenAIProvider

ANSWER = "normalize lower-cases names (pkg/util.py: line 4-6)."


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)


def _openai_server(bodies: list[dict]):
    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        bodies.append(body)
        done = any(m["role"] == "tool" for m in body["messages"])
        name, args = ("finish", {"answer": ANSWER}) if done else ("search", {"query": "def normalize", "path": None})
        message = {"role": "assistant", "content": None if done else "Search first.", "tool_calls": [
            {"id": f"call_{len(bodies)}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}
        return httpx2.Response(200, json={
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
    return handler


def _anthropic_server(bodies: list[dict]):
    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        bodies.append(body)
        done = any(isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"])
                   for m in body["messages"])
        name, args = ("finish", {"answer": ANSWER}) if done else ("search", {"query": "def normalize", "path": None})
        blocks = ([] if done else [{"type": "text", "text": "Search first."}]) + [
            {"type": "tool_use", "id": f"toolu_{len(bodies)}", "name": name, "input": args}]
        return httpx2.Response(200, json={
            "id": "msg", "type": "message", "role": "assistant", "model": "claude-x", "content": blocks,
            "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 10}})
    return handler


async def test_the_agent_over_the_openai_sdk(tmp_path):
    bodies: list[dict] = []
    provider = OpenAIProvider("local", base_url="http://llm.test/v1", api_key_env=None, max_retries=0, timeout_s=5,
                              http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(_openai_server(bodies))))
    client = LLMClient(provider, MemoryLedger())
    out = await run_agent(client, Workspace(make_repo(tmp_path)), "What does normalize do?",
                          AgentSettings(model="m"), qa_pair_id="p1")
    assert out.ok and out.answer == ANSWER and out.calls == 2 and out.usage.input_tokens == 200
    first, second = bodies
    assert [t["function"]["name"] for t in first["tools"]] == [t.name for t in TOOLS]
    assert all(t["function"]["strict"] is True for t in first["tools"])  # every spec fits strict mode
    assert first["temperature"] == 0
    tool_msg = second["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_1"
    assert "pkg/util.py:4: def normalize(name: str) -> str:" in tool_msg["content"]


async def test_the_agent_over_the_anthropic_sdk(tmp_path):
    bodies: list[dict] = []
    provider = AnthropicProvider("claude", base_url="http://llm.test", max_retries=0, timeout_s=5,
                                 http_client=httpx2.AsyncClient(
                                     transport=httpx2.MockTransport(_anthropic_server(bodies))))
    client = LLMClient(provider, MemoryLedger())
    out = await run_agent(client, Workspace(make_repo(tmp_path)), "What does normalize do?",
                          AgentSettings(model="claude-x"), qa_pair_id="p1")
    assert out.ok and out.answer == ANSWER and out.turns[0].text == "Search first."
    first, second = bodies
    assert [t["name"] for t in first["tools"]] == [t.name for t in TOOLS]
    assert first["tools"][1]["input_schema"] == TOOLS[1].parameters
    last = second["messages"][-1]
    assert last["role"] == "user" and last["content"][0]["type"] == "tool_result"
    assert last["content"][0]["tool_use_id"] == "toolu_1"
    result = last["content"][0]["content"]
    text = result if isinstance(result, str) else "".join(b.get("text", "") for b in result)
    assert "pkg/util.py:4: def normalize" in text


def _plain_text_server(bodies: list[dict]):
    """A compatible server that ignores native tools (llama.cpp's llama_cpp.server does): plain text, no calls."""
    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "I think it lower-cases names."}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    return handler


@pytest.mark.parametrize("base_url, hinted", [("http://127.0.0.1:8000/v1", True),
                                              ("https://api.openai.com/v1", False)])
async def test_a_server_that_never_calls_a_native_tool_gets_the_prompt_protocol_hint(tmp_path, monkeypatch,
                                                                                     base_url, hinted):
    if not hinted:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    bodies: list[dict] = []
    provider = OpenAIProvider("local", base_url=base_url, api_key_env=None if hinted else "OPENAI_API_KEY",
                              max_retries=0, timeout_s=5,
                              http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(_plain_text_server(bodies))))
    out = await run_agent(LLMClient(provider, MemoryLedger()), Workspace(make_repo(tmp_path)),
                          "What does normalize do?", AgentSettings(model="m"), qa_pair_id="p1")
    assert not out.ok and out.reason.startswith("no parseable Finish block") and len(bodies) == 2
    assert ('tools = "prompt" under [providers.local]' in out.reason) is hinted
