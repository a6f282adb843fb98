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

from .base import LLMError, LLMRequest, LLMResponse, StructuredOutput, Usage


@dataclass(frozen=True)
class Reply:
    """An answer with an explicit stop reason: ``Reply("{\"a\": 1", stop_reason="length")`` is a reply cut off
    at the token budget (``stop_reason`` is the provider's raw value: ``length``, ``max_tokens``, ``end_turn``...)."""

    answer: Any
    stop_reason: str | None = "end_turn"


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

    Raises (from :meth:`complete`):
        LLMError: a scripted error, or the list script ran out (status ``error``).
    """

    kind = "fake"

    def __init__(self, script: list | Callable[[LLMRequest], Any], *, name: str = "fake",
                 structured_output: StructuredOutput = StructuredOutput.JSON_SCHEMA, concurrency: int = 4,
                 model_suffix: str = ""):
        self._script = list(script) if isinstance(script, list | tuple) else script
        self.name = name
        self.base_url = None
        self.structured_output = StructuredOutput(structured_output)
        self.concurrency = concurrency
        self.model_suffix = model_suffix
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
            stop_reason = "end_turn"
            if isinstance(answer, Reply):
                answer, stop_reason = answer.answer, answer.stop_reason
            text = answer if isinstance(answer, str) else json.dumps(answer)
            n_in = sum(len(m.content.split()) for m in request.messages) + len((request.system or "").split())
            return LLMResponse(
                text=text, model=request.model + self.model_suffix,
                usage=Usage(input_tokens=n_in, output_tokens=len(text.split())),
                request_id=f"fake-{len(self.calls)}", stop_reason=stop_reason, params_sent=dict(request.params),
            )
        finally:
            self.in_flight -= 1

    async def aclose(self) -> None:
        """Nothing to release."""
        self.closed = True
