"""The agent loop (SWE-QA-Pro §3.1) over the scripted fake on the fixture repository: turns and tool results, the
ledger cache (replay with 0 calls, samples apart), the context budget's elisions, and every failed-run reason."""

from __future__ import annotations

import asyncio

import pytest
from test_agent_fixture import make_repo

from benchwright.core.agent.loop import ELIDED, EMPTY_REPLY, NUDGE, estimate_tokens, run_agent
from benchwright.core.agent.model import AgentSettings
from benchwright.core.agent.tools import TOOLS
from benchwright.core.agent.workspace import Workspace
from benchwright.core.llm import (
    Delay,
    LLMClient,
    LLMError,
    LLMRefusalError,
    MemoryLedger,
    Reply,
    ScriptedProvider,
    ToolCall,
)

QUESTION = "How does Engine order its tasks?"
ANSWER = "In the order they were added: Engine.add appends to a list (pkg/engine.py: line 14-16)."


@pytest.fixture
def ws(tmp_path) -> Workspace:
    return Workspace(make_repo(tmp_path))


def good_script() -> list:
    return [
        Reply("Look for the class first.", tool_calls=[("search", {"query": "class Engine", "path": None})]),
        Reply("Now read it.", tool_calls=[("view", {"path": "pkg/engine.py", "start_line": 8, "end_line": 20})]),
        Reply("", tool_calls=[("finish", {"answer": ANSWER})]),
    ]


def settings(**kw) -> AgentSettings:
    return AgentSettings(model="m1", **kw)


async def agent(ws, provider, ledger=None, *, sample_index=0, **kw):
    client = LLMClient(provider, ledger if ledger is not None else MemoryLedger())
    return await run_agent(client, ws, QUESTION, settings(**kw), qa_pair_id="p1", sample_index=sample_index)


async def test_a_run_reads_with_tools_and_finishes_with_the_answer(ws):
    p = ScriptedProvider(good_script())
    seen = []
    client = LLMClient(p, MemoryLedger())
    out = await run_agent(client, ws, QUESTION, settings(), qa_pair_id="p1", on_turn=seen.append)
    assert out.ok and out.status == "ok" and out.answer == ANSWER and out.reason is None
    assert [t.index for t in out.turns] == [1, 2, 3] and seen == out.turns
    assert out.tool_counts() == {"search": 1, "view": 1, "finish": 1}
    assert out.calls == 3 and len(out.call_ids) == 3
    t1 = out.turns[0]
    assert t1.text == "Look for the class first." and t1.tool_uses[0].ok
    assert t1.tool_uses[0].output.startswith("2 matching lines of 'class Engine' in 2 files:")
    # every request: the agent template, the tools, temperature 0, repeat = sample index
    for r in p.calls:
        assert r.template_id == "agent" and r.template_hash and r.tools == TOOLS and r.repeat == 0
        assert r.params == {"temperature": 0} and "at most 25 turns" in r.system
    first = p.calls[0].messages
    assert len(first) == 1 and first[0].role == "user" and "<question>\n" + QUESTION + "\n</question>" in first[0].content
    third = p.calls[2].messages
    assert [m.role for m in third] == ["user", "assistant", "tool", "assistant", "tool"]
    assert third[1].tool_calls[0].name == "search" and third[2].tool_call_id == "call_1" and third[2].name == "search"
    assert third[4].content.startswith("pkg/engine.py: lines 8-20 of 28")
    assert out.trajectory_json()[1]["tool_uses"][0]["arguments"] == {"path": "pkg/engine.py", "start_line": 8,
                                                                      "end_line": 20}


async def test_a_finished_run_replays_from_the_ledger_with_no_call(ws):
    ledger = MemoryLedger()
    first = await agent(ws, ScriptedProvider(good_script()), ledger)
    again = ScriptedProvider([])  # any call would fail: the script is empty
    second = await agent(ws, again, ledger)
    assert again.calls == [] and second.calls == 0 and second.ok and second.answer == first.answer
    assert all(t.cached for t in second.turns) and second.trajectory_json() != []
    assert [u.output for t in second.turns for u in t.tool_uses] == [u.output for t in first.turns for u in t.tool_uses]


async def test_samples_are_separate_cache_entries(ws):
    ledger = MemoryLedger()
    await agent(ws, ScriptedProvider(good_script()), ledger, sample_index=0)
    p = ScriptedProvider(good_script())
    out = await agent(ws, p, ledger, sample_index=1)
    assert out.ok and out.sample_index == 1 and out.calls == 3 and len(p.calls) == 3
    assert [r.repeat for r in ledger.records] == [0, 0, 0, 1, 1, 1]
    assert all(r.purpose == "agent" and r.qa_pair_id == "p1" for r in ledger.records)


async def test_the_turn_limit_without_finish_fails_keeping_the_trajectory(ws):
    p = ScriptedProvider(lambda req: Reply("again", tool_calls=[("search", {"query": "def"})]))
    out = await agent(ws, p, max_turns=3)
    assert not out.ok and out.status == "failed" and out.answer is None
    assert out.reason == "turn limit reached (3) without Finish"
    assert len(out.turns) == 3 and len(p.calls) == 3 and out.tool_counts() == {"search": 3}
    assert "at most 3 turns" in p.calls[0].system


async def test_finish_with_an_empty_answer_fails(ws):
    out = await agent(ws, ScriptedProvider([Reply("", tool_calls=[("finish", {"answer": "  "})])]))
    assert not out.ok and out.reason == "Finish with an empty answer" and out.answer is None


async def test_a_reply_without_a_tool_gets_one_reminder_then_fails(ws):
    p = ScriptedProvider(["I think it is ordered.", "Still just text."])
    out = await agent(ws, p)
    assert not out.ok and out.reason.startswith("no parseable Finish block")
    assert len(out.turns) == 2 and len(p.calls) == 2
    assert [m.role for m in p.calls[1].messages] == ["user", "assistant", "user"]
    assert p.calls[1].messages[2].content == NUDGE


async def test_after_the_reminder_a_finish_counts(ws):
    p = ScriptedProvider(["", Reply("", tool_calls=[("finish", {"answer": ANSWER})])])
    out = await agent(ws, p)
    assert out.ok and out.answer == ANSWER and len(out.turns) == 2
    assert p.calls[1].messages[1].content == EMPTY_REPLY  # never an empty assistant turn (Anthropic refuses one)


@pytest.mark.parametrize(("answer", "reason"), [
    (LLMError("HTTP 503 from the server"), "provider error: HTTP 503 from the server"),
    (LLMRefusalError("I cannot help with that"), "refused: I cannot help with that"),
])
async def test_a_provider_failure_fails_the_run_with_its_reason(ws, answer, reason):
    out = await agent(ws, ScriptedProvider([good_script()[0], answer]))
    assert not out.ok and out.reason == reason and len(out.turns) == 2 and out.turns[0].tool_uses


async def test_a_reply_cut_off_at_the_token_budget_fails_as_truncated(ws):
    cut = Reply("partial reasoning", stop_reason="length")
    out = await agent(ws, ScriptedProvider([cut, cut]))
    assert not out.ok and out.reason.startswith("truncated: output cut off at the token budget")
    assert out.calls == 2  # the client's one retry with a larger budget


async def test_refused_and_unknown_calls_are_answered_and_the_run_goes_on(ws):
    p = ScriptedProvider([
        Reply("", tool_calls=[("command_line", {"command": "rm -rf pkg"}), ("view", {"path": "../outside"}),
                              ("write_file", {"path": "x"}),
                              ToolCall(id="call_4", name="", arguments_raw="<tool_call>{oops</tool_call>")]),
        Reply("", tool_calls=[("finish", {"answer": ANSWER})]),
    ])
    out = await agent(ws, p)
    assert out.ok and (ws.root / "pkg" / "engine.py").exists()
    uses = out.turns[0].tool_uses
    assert [u.ok for u in uses] == [False, False, False, False]
    assert "'rm' is not an allowed command" in uses[0].output and "'..' would leave" in uses[1].output
    assert "unknown tool 'write_file'" in uses[2].output and "could not be read" in uses[3].output
    sent = p.calls[1].messages
    assert [m.role for m in sent] == ["user", "assistant", "tool", "tool", "tool", "tool"]
    assert [m.tool_call_id for m in sent[2:]] == ["call_1", "call_2", "call_3", "call_4"]


async def test_calls_after_finish_are_not_run(ws):
    out = await agent(ws, ScriptedProvider([Reply("", tool_calls=[("finish", {"answer": ANSWER}),
                                                                  ("search", {"query": "x"})])]))
    assert out.ok and [u.output for u in out.turns[0].tool_uses] == ["final answer recorded",
                                                                      "not run: finish came before it"]


async def test_finish_with_bad_arguments_is_answered_not_taken(ws):
    out = await agent(ws, ScriptedProvider([Reply("", tool_calls=[("finish", {"text": "x"})]),
                                            Reply("", tool_calls=[("finish", {"answer": ANSWER})])]))
    assert out.ok and len(out.turns) == 2
    assert "finish needs the argument 'answer'" in out.turns[0].tool_uses[0].output


async def test_the_prompt_protocol_finish_block_ends_the_run(ws):
    p = ScriptedProvider([
        'Search first.\n<tool_call>{"name": "search", "arguments": {"query": "normalize"}}</tool_call>',
        f"<finish>{ANSWER}</finish>",
    ], tools="prompt")
    out = await agent(ws, p)
    assert out.ok and out.answer == ANSWER
    assert out.tool_counts() == {"search": 1, "finish": 1}
    assert "pkg/util.py:4: def normalize" in out.turns[0].tool_uses[0].output


def big_script(n_views: int) -> list:
    view = ("view", {"path": "pkg/engine.py", "start_line": None, "end_line": None, "outline": None})
    return [Reply(f"view {i}", tool_calls=[view]) for i in range(n_views)] + [
        Reply("", tool_calls=[("finish", {"answer": ANSWER})])]


async def test_the_oldest_tool_output_is_elided_to_fit_the_budget_and_recorded(ws):
    free = await agent(ws, ScriptedProvider(big_script(3)))
    sizes = [t.context_tokens for t in free.turns]
    assert sizes == sorted(sizes) and not any(t.elided for t in free.turns)
    budget = sizes[3] - 1  # turn 4 no longer fits: one elision (the oldest output) makes room
    p = ScriptedProvider(big_script(3))
    out = await agent(ws, p, context_tokens=budget)
    assert out.ok
    assert [t.elided for t in out.turns] == [[], [], [], ["1:call_1"]]
    assert [u.elided_at_turn for t in out.turns[:3] for u in t.tool_uses] == [4, None, None]
    assert out.turns[3].context_tokens <= budget
    sent = p.calls[3].messages
    full = out.turns[0].tool_uses[0].output
    assert sent[2].content == ELIDED.format(n=len(full)) and sent[4].content == out.turns[1].tool_uses[0].output
    assert full.startswith("pkg/engine.py: lines 1-28 of 28")  # the trajectory keeps the whole output
    assert estimate_tokens(p.calls[3].system, list(sent)) == out.turns[3].context_tokens
    # the same budget elides the same way on a rerun: all four turns replay from the cache
    ledger = MemoryLedger()
    await agent(ws, ScriptedProvider(big_script(3)), ledger, context_tokens=budget)
    again = await agent(ws, ScriptedProvider([]), ledger, context_tokens=budget)
    assert again.ok and again.calls == 0 and [t.elided for t in again.turns] == [t.elided for t in out.turns]


async def test_a_budget_too_small_even_with_everything_elided_fails(ws):
    out = await agent(ws, ScriptedProvider([]), context_tokens=50)
    assert not out.ok and out.reason.startswith("context budget exceeded: about ") and "(budget 50)" in out.reason
    assert out.calls == 0


async def test_cancellation_is_re_raised(ws):
    p = ScriptedProvider([good_script()[0], Delay(30, "late")])
    task = asyncio.ensure_future(agent(ws, p))
    while len(p.calls) < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_on_turn_may_be_a_coroutine(ws):
    seen = []

    async def on_turn(turn):
        seen.append(turn.index)

    client = LLMClient(ScriptedProvider(good_script()), MemoryLedger())
    await run_agent(client, ws, QUESTION, settings(), qa_pair_id="p1", on_turn=on_turn)
    assert seen == [1, 2, 3]


async def test_a_project_override_of_the_prompt_is_used(ws, tmp_path):
    (tmp_path / "proj" / "prompts").mkdir(parents=True)
    (tmp_path / "proj" / "prompts" / "agent.md").write_text("Our own agent prompt, $max_turns turns.")
    p = ScriptedProvider(good_script())
    client = LLMClient(p, MemoryLedger())
    await run_agent(client, ws, QUESTION, settings(project_dir=tmp_path / "proj", max_turns=7), qa_pair_id="p1")
    assert p.calls[0].system == "Our own agent prompt, 7 turns."


async def test_a_key_in_a_repository_file_is_scrubbed_from_tool_outputs(ws, monkeypatch):
    # The model reads a file that holds the OpenAI key: neither the trajectory (stored in answers and answer runs)
    # nor the next request (sent to the model) may hold it; the model's own arguments are scrubbed by the client.
    key = "sk-live-0123456789abcdefSECRET"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    (ws.root / "leak.cfg").write_text(f"token = {key}\n")
    p = ScriptedProvider([
        Reply("", tool_calls=[("view", {"path": "leak.cfg", "start_line": None, "end_line": None}),
                              ("command_line", {"command": "grep -rn token ."}),
                              ("search", {"query": "token", "path": None})]),
        Reply("", tool_calls=[("finish", {"answer": "leak.cfg: line 1"})]),
    ])
    out = await agent(ws, p)
    assert out.ok
    outputs = [u.output for t in out.turns for u in t.tool_uses]
    assert all(key not in o for o in outputs) and sum("token = ***" in o for o in outputs) == 3
    assert key not in repr(p.calls[1].messages) and key not in repr(out.trajectory_json())


async def test_a_turn_runs_at_most_max_tool_calls_per_turn_and_answers_the_rest(ws):
    """One reply asking for 40 searches runs 4 of them; the other 36 are answered "not run" (every call still gets
    its result in the next request, as both APIs require), and a Finish after them still ends the run."""
    many = [("search", {"query": f"def{i}"}) for i in range(40)]
    p = ScriptedProvider([Reply("", tool_calls=many),
                          Reply("", tool_calls=[*many[:5], ("finish", {"answer": ANSWER})])])
    out = await agent(ws, p, max_tool_calls_per_turn=4)
    assert out.ok and out.answer == ANSWER
    first = out.turns[0].tool_uses
    assert len(first) == 40 and [u.ok for u in first[:4]] == [True] * 4
    assert all(not u.ok and u.output.startswith("not run: at most 4 tool calls a turn") for u in first[4:])
    assert sum(1 for m in p.calls[1].messages if m.role == "tool") == 40
    assert [u.ok for u in out.turns[1].tool_uses] == [True] * 4 + [False, True]
