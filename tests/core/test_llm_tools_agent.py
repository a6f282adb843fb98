"""The agent loop over the real SDKs' wire formats (httpx2 mock transport): a two-turn run (search, then finish)
as OpenAI native tools, OpenAI under the prompt protocol and Anthropic native tool use, with the second request's
body checked (the first turn's calls and their results as each API wants them), and a rerun that sends nothing."""

from __future__ import annotations

import json

import httpx2
import pytest
from test_agent_fixture import make_repo

from benchwright.core.agent.loop import run_agent
from benchwright.core.agent.model import AgentSettings
from benchwright.core.agent.workspace import Workspace
from benchwright.core.llm import LLMClient, MemoryLedger
from benchwright.core.llm.anthropic_provider import AnthropicProvider
from benchwright.core.llm.openai_provider import OpenAIProvider

QUESTION = "Where is normalize defined?"
ANSWER = "In pkg/util.py: line 4-6."
SEARCH_ARGS = {"query": "def normalize", "path": None}


def _openai_body(message: dict, finish: str) -> dict:
    return {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def openai_native(n: int) -> dict:
    if n == 1:
        return _openai_body({"content": "Search first.", "tool_calls": [
            {"id": "call_a", "type": "function",
             "function": {"name": "search", "arguments": json.dumps(SEARCH_ARGS)}}]}, "tool_calls")
    return _openai_body({"content": None, "tool_calls": [
        {"id": "call_b", "type": "function", "function": {"name": "finish", "arguments": json.dumps(
            {"answer": ANSWER})}}]}, "tool_calls")


def openai_prompt(n: int) -> dict:
    if n == 1:
        return _openai_body({"content": 'Search first.\n<tool_call>{"name": "search", "arguments": '
                                        + json.dumps(SEARCH_ARGS) + "}</tool_call>"}, "stop")
    return _openai_body({"content": f"<finish>\n{ANSWER}\n</finish>"}, "stop")


def anthropic_native(n: int) -> dict:
    blocks = ([{"type": "text", "text": "Search first."},
               {"type": "tool_use", "id": "toolu_a", "name": "search", "input": SEARCH_ARGS}] if n == 1 else
              [{"type": "tool_use", "id": "toolu_b", "name": "finish", "input": {"answer": ANSWER}}])
    return {"id": "msg", "type": "message", "role": "assistant", "model": "claude-x", "content": blocks,
            "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}


class Server:
    def __init__(self, answer):
        self.answer, self.bodies = answer, []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=self.answer(len(self.bodies)))


def build(kind: str, server: Server):
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    if kind == "anthropic":
        return AnthropicProvider("claude", base_url="http://llm.test", max_retries=0, http_client=http)
    return OpenAIProvider("local", base_url="http://llm.test/v1", api_key_env=None, max_retries=0, http_client=http,
                          tools="prompt" if kind == "openai-prompt" else "native")


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")


@pytest.mark.parametrize(("kind", "answer"), [("openai", openai_native), ("openai-prompt", openai_prompt),
                                              ("anthropic", anthropic_native)])
async def test_an_agent_run_over_each_wire_format(tmp_path, kind, answer):
    workspace = Workspace(make_repo(tmp_path))
    server = Server(answer)
    ledger = MemoryLedger()
    out = await run_agent(LLMClient(build(kind, server), ledger), workspace, QUESTION, AgentSettings(model="m"),
                          qa_pair_id="p1")
    assert out.ok and out.answer == ANSWER, out.reason
    assert out.tool_counts() == {"search": 1, "finish": 1}
    assert len(server.bodies) == 2
    second = server.bodies[1]
    result = out.turns[0].tool_uses[0].output
    assert "pkg/util.py" in result
    if kind == "openai":
        assert [t["function"]["name"] for t in second["tools"]] == ["search", "view", "command_line", "finish"]
        assistant, tool = second["messages"][2:4]
        assert assistant == {"role": "assistant", "content": "Search first.", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "search", "arguments": json.dumps(SEARCH_ARGS)}}]}
        assert tool == {"role": "tool", "tool_call_id": "call_a", "content": result}
    elif kind == "openai-prompt":
        assert "tools" not in second and "<tool_call>" in second["messages"][0]["content"]
        assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
        assert second["messages"][2]["content"] == ('Search first.\n<tool_call>{"name": "search", "arguments": '
                                                    + json.dumps(SEARCH_ARGS) + "}</tool_call>")
        assert second["messages"][3]["content"].startswith('<tool_result name="search" id="call_1">\n')
    else:
        assert [t["name"] for t in second["tools"]] == ["search", "view", "command_line", "finish"]
        assert second["messages"][1:] == [
            {"role": "assistant", "content": [{"type": "text", "text": "Search first."},
                                              {"type": "tool_use", "id": "toolu_a", "name": "search",
                                               "input": SEARCH_ARGS}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": result}]}]
    # a rerun replays both turns from the ledger: nothing is sent
    again = await run_agent(LLMClient(build(kind, server), ledger), workspace, QUESTION, AgentSettings(model="m"),
                            qa_pair_id="p1")
    assert again.ok and again.answer == ANSWER and again.calls == 0 and len(server.bodies) == 2
