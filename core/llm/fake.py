"""A scripted provider for tests and demos: answers come from a script, not a network.

The script is a list (answers in call order) or a callable ``request -> answer``. An answer is a ``str``
(the output text), a ``dict``/``list`` (sent as JSON text), a :class:`Reply` (text with a stop reason, e.g. a
reply cut off at ``max_tokens``), an :class:`LLMError` instance (raised), or :class:`Delay` wrapping one of those. Every request is kept in ``calls`` so tests can assert what was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .base import LLMError, LLMRequest, LLMResponse, StructuredOutput, ToolCall, ToolProtocol, Usage
from .tool_protocol import render_calls


@dataclass(frozen=True)
class Reply:
    """An answer with an explicit stop reason: ``Reply("{\"a\": 1", stop_reason="length")`` is a reply cut off
    at the token budget (``stop_reason`` is the provider's raw value: ``length``, ``max_tokens``, ``end_turn``...).

    ``tool_calls`` plays tool calls: each a :class:`~.base.ToolCall` or a ``(name, arguments)`` pair (ids
    ``call_1``, ``call_2``... in order); with tool calls the stop reason defaults to ``tool_use``.
    ``Reply("", tool_calls=[("search", {"query": "def run"})])`` is a turn that only calls a tool."""

    answer: Any = ""
    stop_reason: str | None = None
    tool_calls: tuple = ()

    def calls(self) -> tuple[ToolCall, ...]:
        """The tool calls as :class:`~.base.ToolCall` values."""
        out = []
        for i, c in enumerate(self.tool_calls, 1):
            if isinstance(c, ToolCall):
                out.append(c)
            else:
                name, args = c
                out.append(ToolCall(id=f"call_{i}", name=name, arguments=dict(args)))
        return tuple(out)

    def stop(self) -> str | None:
        """The stop reason sent: the given one, else ``tool_use`` with tool calls and ``end_turn`` without."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_calls else "end_turn"


@dataclass(frozen=True)
class Delay:
    """Answer ``answer`` after ``seconds`` (to test concurrency and cancellation)."""

    seconds: float
    answer: Any


class ScriptedProvider:
    """A :class:`~.base.Provider` whose answers are scripted.

    Args:
        script: a list of answers consumed in order, or a callable ``(request) -> answer``.
        name: the configured provider name.
        structured_output: pretend the endpoint has native JSON-Schema output or not.
        concurrency: the limit :class:`~.client.LLMClient` applies.
        tools: pretend the endpoint has native tool calling (scripted :class:`Reply` tool calls) or not
            (``prompt``: the script answers with ``<tool_call>`` text, which the client parses; a :class:`Reply`'s
            tool calls are then played as that text, a ``finish`` call as a ``<finish>`` block).

    Raises (from :meth:`complete`):
        LLMError: a scripted error, or the list script ran out (status ``error``).
    """

    kind = "fake"

    def __init__(self, script: list | Callable[[LLMRequest], Any], *, name: str = "fake",
                 structured_output: StructuredOutput = StructuredOutput.JSON_SCHEMA, concurrency: int = 4,
                 model_suffix: str = "", tools: ToolProtocol | str = ToolProtocol.NATIVE):
        self._script = list(script) if isinstance(script, list | tuple) else script
        self.name = name
        self.base_url = None
        self.structured_output = StructuredOutput(structured_output)
        self.concurrency = concurrency
        self.model_suffix = model_suffix
        self.tools = ToolProtocol(tools)
        self.calls: list[LLMRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.closed = False

    def _next(self, request: LLMRequest) -> Any:
        if callable(self._script):
            return self._script(request)
        if not self._script:
            raise LLMError("scripted provider: the script has no more answers", transient=False)
        return self._script.pop(0)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Return (or raise) the next scripted answer; see the class docstring."""
        self.calls.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            answer = self._next(request)
            while isinstance(answer, Delay):
                await asyncio.sleep(answer.seconds)
                answer = answer.answer
            if isinstance(answer, BaseException):
                raise answer
            stop_reason: str | None = "end_turn"
            tool_calls: tuple[ToolCall, ...] = ()
            if isinstance(answer, Reply):
                tool_calls, stop_reason, answer = answer.calls(), answer.stop(), answer.answer
            text = answer if isinstance(answer, str) else json.dumps(answer)
            if tool_calls and self.tools is ToolProtocol.PROMPT:
                # No native tools here: the calls are played as the protocol's text blocks, which the client parses.
                text, tool_calls = render_calls(text, tool_calls), ()
                stop_reason = "end_turn" if stop_reason == "tool_use" else stop_reason
            n_in = sum(len(m.content.split()) for m in request.messages) + len((request.system or "").split())
            return LLMResponse(
                text=text, model=request.model + self.model_suffix,
                usage=Usage(input_tokens=n_in, output_tokens=len(text.split())),
                request_id=f"fake-{len(self.calls)}", stop_reason=stop_reason, params_sent=dict(request.params),
                tool_calls=tool_calls,
            )
        finally:
            self.in_flight -= 1

    async def aclose(self) -> None:
        """Nothing to release."""
        self.closed = True
