"""The agent's ReAct loop (SWE-QA-Pro §3.1): the model reads the repository with tools until it calls Finish.

Each turn is one :meth:`LLMClient.call <benchwright.core.llm.client.LLMClient.call>` of an :class:`LLMRequest` with
the tools (:data:`.tools.TOOLS`), ``template_id`` ``agent`` and ``repeat`` = the sample index, so the ledger caches
every turn by its request hash and sample. The conversation is a function of the repository and of the answers
before it (sorted listings, fixed caps, elision decided from sizes alone), so a run started again after a kill
replays its finished turns from the cache (0 calls) and goes on where it stopped, and a finished run replays
entirely with 0 calls. A second sample (``sample_index`` 1) is a separate cache entry from its first turn on.

How a run ends (:class:`~.model.AgentOutcome`):

- ``ok``: the model called ``finish`` with a non-empty answer (a native tool call, or the prompt protocol's
  ``<finish>`` block, which the client turns into the same call).
- ``failed``, with the reason: the turn limit was reached without Finish; Finish with an empty answer; the model
  replied twice without a tool call (after the first such reply it gets one reminder, which uses a turn); the
  conversation does not fit the context budget even with every tool output elided; the call failed (provider
  error, refusal, output cut off at the token budget: the client's status and error). The trajectory is kept.

The context budget: the conversation sent (system prompt, messages, tool calls, tool specs) is estimated at
:data:`CHARS_PER_TOKEN` characters a token; when a turn's request would exceed ``settings.context_tokens``, the
oldest tool outputs are replaced, one by one, by ``[output elided to fit the context budget: N characters]``
until it fits. Each elision is recorded (:attr:`Turn.elided`, :attr:`ToolUse.elided_at_turn`); the trajectory
keeps the full output.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections.abc import Callable, Sequence

from ..llm._sdk_common import silent_tools_hint
from ..llm.base import CallStatus, ChatMessage, LLMError, LLMRequest, ToolCall
from ..llm.client import CallResult, LLMClient, truncation_reason
from ..llm.prompts import delimit, load_template
from ..llm.scrub import scrub_text
from ..sandbox import Sandbox
from .model import AgentOutcome, AgentSettings, ToolUse, Turn
from .sandbox import REQUIRED_MISSING
from .tools import FINISH, TOOLS, argument_problems, command_sandbox, execute
from .workspace import Workspace

TEMPLATE_ID = "agent"
"""The system prompt's template (``core/prompts/agent.md``; a project overrides it with ``prompts/agent.md``)."""
CHARS_PER_TOKEN = 4
"""The context budget's estimate: this many characters make a token (SWE-QA-Pro gives the budget in tokens; no
tokenizer is assumed, so the estimate is the same for every model)."""
ELIDED = "[output elided to fit the context budget: {n:,} characters]"
"""What replaces an elided tool output in the conversation."""
NUDGE = ("You replied without calling a tool. Go on investigating with a tool, or give your final answer with "
         "finish. Another reply without either ends the run without an answer.")
"""The one reminder a run gets after a reply with no tool call."""
EMPTY_REPLY = "(no reply)"
"""What stands in the conversation for an empty reply without a tool call (before the reminder)."""


def question_turn(question: str) -> str:
    """The first user turn: the question, delimited as data (:func:`~benchwright.core.llm.prompts.delimit`)."""
    return "Answer this question about the repository you are in.\n\n" + delimit("question", question)


def estimate_tokens(system: str | None, messages: list[ChatMessage], tools=TOOLS) -> int:
    """The estimated size in tokens of a request with ``system``, ``messages`` and ``tools``: all their characters
    (contents, tool calls' names and arguments as JSON, the tools' specs as JSON) over :data:`CHARS_PER_TOKEN`,
    rounded up."""
    chars = len(system or "") + sum(len(json.dumps(t.as_json(), ensure_ascii=False)) for t in tools)
    for m in messages:
        chars += len(m.content)
        for c in m.tool_calls:
            chars += len(c.name) + len(json.dumps(c.arguments, ensure_ascii=False)) + len(c.arguments_raw or "")
    return math.ceil(chars / CHARS_PER_TOKEN)


def failure_reason(result: CallResult) -> str:
    """Why a turn's call gave no usable reply, from the client's status and error."""
    if result.status is CallStatus.TRUNCATED:
        return truncation_reason(result)
    if result.status is CallStatus.REFUSED:
        return f"refused: {result.error or 'the model declined'}"
    if result.status is CallStatus.INVALID:
        return f"invalid output: {'; '.join(result.problems) or result.error}"
    return f"provider error: {result.error or result.status}"


class _Conversation:
    """The messages of a run and which of them are tool outputs (oldest first), for the budget."""

    def __init__(self, system: str, first_turn: str, budget: int):
        self.system = system
        self.budget = budget
        self.messages: list[ChatMessage] = [ChatMessage("user", first_turn)]
        self.outputs: list[tuple[int, int, ToolUse]] = []  # (message index, turn index, use), oldest first

    def add_tool_output(self, turn: int, use: ToolUse) -> None:
        self.outputs.append((len(self.messages), turn, use))
        self.messages.append(ChatMessage("tool", use.output, tool_call_id=use.call_id, name=use.name))

    def size(self) -> int:
        return estimate_tokens(self.system, self.messages)

    def fit(self, turn: Turn) -> int:
        """Elide the oldest tool outputs until the conversation fits the budget; record it in ``turn`` and in the
        uses; return the size after."""
        size = self.size()
        for pos, at_turn, use in self.outputs:
            if size <= self.budget:
                break
            if use.elided_at_turn is not None:
                continue
            marker = ELIDED.format(n=len(use.output))
            if len(marker) >= len(use.output):
                continue
            self.messages[pos] = ChatMessage("tool", marker, tool_call_id=use.call_id, name=use.name)
            use.elided_at_turn = turn.index
            turn.elided.append(f"{at_turn}:{use.call_id}")
            size = self.size()
        return size


async def _notify(on_turn: Callable[[Turn], object] | None, turn: Turn) -> None:
    if on_turn is not None:
        out = on_turn(turn)
        if inspect.isawaitable(out):
            await out


async def run_agent(client: LLMClient, workspace: Workspace, question: str, settings: AgentSettings, *,
                    qa_pair_id: str, sample_index: int = 0, purpose: str = "agent",
                    on_turn: Callable[[Turn], object] | None = None,
                    outcome: AgentOutcome | None = None, template_id: str = TEMPLATE_ID,
                    task: str | None = None) -> AgentOutcome:
    """Run the agent on ``question`` in ``workspace`` (SWE-QA-Pro §3.1; see the module docstring for the turns,
    the budget and how a run ends).

    Args:
        client: the answering model's client (its ledger caches each turn).
        workspace: the repository, read-only.
        question: the question, sent as data.
        settings: model, sampling parameters (temperature 0 by default), turn limit, context budget, caps.
        qa_pair_id, purpose: recorded with every call in the ledger.
        sample_index: the sample (the ledger's repeat index): sample k is cached apart from sample 0.
        on_turn: called with each finished turn (its tools run); may return an awaitable, which is awaited.
        outcome: an empty outcome to fill in place (returned), so a caller still has the turns and totals so far
            when the run raises; None: a new one.
        template_id: the system prompt's template (``agent``; answer-first generation's gold answer uses
            ``gold_agent``, :mod:`benchwright.core.generation`); it may use ``$max_turns``.
        task: the first user turn as written (already delimited), instead of :func:`question_turn` of
            ``question``.

    Returns:
        The outcome: ``ok`` with the answer, or ``failed`` with the reason; the trajectory and totals either way;
        ``sandbox`` says how its commands were confined (a ``required`` sandbox that does not work here fails the
        run before its first turn, :data:`~benchwright.core.agent.sandbox.REQUIRED_MISSING`).

    Raises:
        asyncio.CancelledError: the run was cancelled (the turns finished so far are in the ledger).
        BenchwrightError: the prompt template cannot be loaded (a bad project override); an unknown sandbox mode.
        LLMConfigError: the provider is misconfigured (from the client, before any request).
    """
    template = load_template(template_id, settings.project_dir)
    system = template.render(max_turns=str(settings.max_turns))
    conv = _Conversation(system, task if task is not None else question_turn(question), settings.context_tokens)
    if outcome is None:
        outcome = AgentOutcome(qa_pair_id=qa_pair_id, model=settings.model, sample_index=sample_index)
    confinement = command_sandbox(workspace, settings.sandbox)
    outcome.sandbox = confinement.note
    nudged = False

    def fail(reason: str) -> AgentOutcome:
        outcome.status, outcome.reason, outcome.answer = "failed", reason, None
        return outcome

    if confinement.missing:
        return fail(REQUIRED_MISSING)
    for index in range(1, settings.max_turns + 1):
        turn = Turn(index=index)
        turn.context_tokens = conv.fit(turn)
        if turn.context_tokens > settings.context_tokens:
            outcome.turns.append(turn)
            await _notify(on_turn, turn)
            return fail(f"context budget exceeded: about {turn.context_tokens:,} tokens with every tool output "
                        f"elided (budget {settings.context_tokens:,})")
        request = LLMRequest(model=settings.model, messages=tuple(conv.messages), system=system,
                             params=dict(settings.params), template_id=template_id, template_hash=template.sha256,
                             repeat=sample_index, tools=TOOLS, cache_scope=workspace.scope)
        try:
            result = await client.call(request, purpose=purpose, qa_pair_id=qa_pair_id)
        except LLMError as e:  # the client returns provider failures; this is a safety net, never a crash
            result = CallResult(status=e.status, request_hash="", error=str(e))
        turn.text = result.text or ""
        turn.usage, turn.cached, turn.call_ids = result.usage, result.cached, list(result.call_ids)
        outcome.usage = outcome.usage + result.usage
        outcome.cost_usd += result.cost_usd
        outcome.calls += result.calls
        outcome.cost_unknown += result.cost_unknown
        outcome.call_ids += result.call_ids
        outcome.turns.append(turn)
        if not result.ok:
            await _notify(on_turn, turn)
            return fail(failure_reason(result))
        calls = tuple(result.tool_calls)
        if not calls:
            await _notify(on_turn, turn)
            if nudged:
                reason = ("no parseable Finish block: the model replied without a tool call or Finish twice "
                          "(after one reminder)")
                hint = None if any(t.tool_uses for t in outcome.turns) else silent_tools_hint(client.provider)
                return fail(f"{reason}; {hint}" if hint else reason)
            nudged = True
            # an empty assistant turn is refused by some APIs (Anthropic): the placeholder keeps the turn valid
            conv.messages.append(ChatMessage("assistant", turn.text or EMPTY_REPLY))
            conv.messages.append(ChatMessage("user", NUDGE))
            continue
        conv.messages.append(ChatMessage("assistant", turn.text, tool_calls=calls))
        answer, empty_finish = None, False
        run_here = 0
        for call in calls:
            if answer is not None or empty_finish:
                turn.tool_uses.append(ToolUse(call.id, call.name, dict(call.arguments),
                                              "not run: finish came before it", ok=False,
                                              arguments_raw=call.arguments_raw))
                continue
            if call.name == FINISH and call.arguments_raw is None and not argument_problems(FINISH, call.arguments):
                text = call.arguments["answer"].strip()
                turn.tool_uses.append(ToolUse(call.id, call.name, dict(call.arguments),
                                              "final answer recorded" if text else "empty answer", ok=bool(text)))
                answer, empty_finish = (text, False) if text else (None, True)
                continue
            run_here += 1
            if run_here > settings.max_tool_calls_per_turn:
                use = ToolUse(call.id, call.name, dict(call.arguments),
                              f"not run: at most {settings.max_tool_calls_per_turn} tool calls a turn; call it again "
                              "in the next turn", ok=False, arguments_raw=call.arguments_raw)
            else:
                use = await _run_tool(workspace, call, settings, confinement, getattr(client, "secrets", ()))
            turn.tool_uses.append(use)
            conv.add_tool_output(index, use)
        await _notify(on_turn, turn)
        if answer is not None:
            outcome.status, outcome.answer, outcome.reason = "ok", answer, None
            return outcome
        if empty_finish:
            return fail("Finish with an empty answer")
    return fail(f"turn limit reached ({settings.max_turns}) without Finish")


async def _run_tool(workspace: Workspace, call: ToolCall, settings: AgentSettings, sandbox: Sandbox,
                    secrets: Sequence[str] = ()) -> ToolUse:
    """One non-finish call run off the event loop (a command may take up to its timeout). Its output is scrubbed of
    ``secrets`` (API keys), like everything a model sends: a repository file holding a key must not put it into
    the trajectory (answers, answer runs) nor send it to the model."""
    if not call.name:
        raw = (call.arguments_raw or "")[:300]
        return ToolUse(call.id, call.name, dict(call.arguments),
                       f"this tool call could not be read (it must be a JSON object with a name and arguments): "
                       f"{raw!r}", ok=False, arguments_raw=call.arguments_raw)
    res = await asyncio.to_thread(
        execute, workspace, call.name, dict(call.arguments), search_max_hits=settings.search_max_hits,
        tool_output_chars=settings.tool_output_chars, command_timeout_s=settings.command_timeout_s,
        arguments_raw=call.arguments_raw, sandbox=sandbox)
    return ToolUse(call.id, call.name, dict(call.arguments), scrub_text(res.output, secrets) or res.output, ok=res.ok,
                   truncated=res.truncated, arguments_raw=call.arguments_raw)
