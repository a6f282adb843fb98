"""The provider protocol and the values every LLM call carries (ARCHITECTURE.md "LLM layer").

A :class:`Provider` turns one :class:`LLMRequest` into one :class:`LLMResponse` (or raises an
:class:`LLMError`). Providers know nothing of the ledger, the cache or validation: :class:`~.client.LLMClient`
adds those. SDKs are imported only inside the provider that uses them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from ..canonical import canonical_json_bytes
from ..errors import BenchwrightError


class CallStatus(StrEnum):
    """Outcome of one call as recorded in the ledger. Only ``ok`` is ever reused from the cache."""

    OK = "ok"
    INVALID = "invalid"
    """The provider answered but the output is not JSON, breaks the schema, or fails the caller's checks."""
    REFUSED = "refused"
    ERROR = "error"
    """HTTP error after the SDK's retries, timeout, connection failure."""
    CANCELLED = "cancelled"
    TRUNCATED = "truncated"
    """The output was cut off at the token budget (stop reason ``length``); the partial text is kept, never used
    as a complete answer, never reused from the cache."""


class StopReason(StrEnum):
    """Why a provider stopped generating, in one vocabulary for every provider (:func:`normalize_stop_reason`);
    the ledger keeps the provider's own value beside it."""

    STOP = "stop"
    """Finished on its own (OpenAI ``stop``; Anthropic ``end_turn``, ``stop_sequence``)."""
    LENGTH = "length"
    """Cut off at the token budget (OpenAI ``length``; Anthropic ``max_tokens``,
    ``model_context_window_exceeded``)."""
    TOOL_USE = "tool_use"
    """Stopped to call a tool (OpenAI ``tool_calls``, ``function_call``; Anthropic ``tool_use``)."""
    CONTENT_FILTER = "content_filter"
    """Withheld by the provider's filter (OpenAI ``content_filter``)."""
    REFUSAL = "refusal"
    """The model declined (Anthropic ``refusal``; an OpenAI ``refusal`` message)."""
    UNKNOWN = "unknown"
    """Not reported, or a value this vocabulary does not know (e.g. Anthropic ``pause_turn``)."""


_STOP_REASONS = {
    "stop": StopReason.STOP, "end_turn": StopReason.STOP, "stop_sequence": StopReason.STOP, "eos": StopReason.STOP,
    "length": StopReason.LENGTH, "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "tool_calls": StopReason.TOOL_USE, "function_call": StopReason.TOOL_USE, "tool_use": StopReason.TOOL_USE,
    "content_filter": StopReason.CONTENT_FILTER,
    "refusal": StopReason.REFUSAL,
}


def normalize_stop_reason(raw: str | None) -> StopReason:
    """The :class:`StopReason` of a provider's raw stop / finish reason (case-insensitive); ``unknown`` for None
    or a value not listed. Sources: OpenAI Chat Completions ``choices[].finish_reason``, Anthropic Messages
    ``stop_reason``."""
    if not isinstance(raw, str):
        return StopReason.UNKNOWN
    return _STOP_REASONS.get(raw.strip().lower(), StopReason.UNKNOWN)


class StructuredOutput(StrEnum):
    """How an endpoint is asked for JSON: its native JSON-Schema mechanism, or the prompt (then validated)."""

    JSON_SCHEMA = "json_schema"
    PROMPT = "prompt"


# ------------------------------------------------------------------------------------------------ errors
class LLMError(BenchwrightError):
    """A call failed. ``status`` is what the ledger records; ``transient`` errors may succeed later.

    Attributes:
        status: :class:`CallStatus` of the failure.
        http_status: the HTTP status code, when there was a response.
        request_id: the provider's request id, when known.
        raw: the text the provider returned, when there was one (refusals, invalid output).
        stop_reason: the provider's raw stop / finish reason, when there was an answer (refusals).
    """

    def __init__(self, message: str, *, status: CallStatus = CallStatus.ERROR, http_status: int | None = None,
                 request_id: str | None = None, raw: str | None = None, transient: bool = False,
                 attempts: int = 1, usage: Usage | None = None, model: str | None = None,
                 stop_reason: str | None = None):
        super().__init__(message)
        self.stop_reason = stop_reason
        self.status = status
        self.http_status = http_status
        self.request_id = request_id
        self.raw = raw
        self.transient = transient
        self.attempts = attempts
        self.usage = usage
        self.model = model


class LLMRefusalError(LLMError):
    """The model declined to answer (stop reason ``refusal`` or an OpenAI ``refusal`` message)."""

    def __init__(self, message: str, **kw: Any):
        kw.setdefault("status", CallStatus.REFUSED)
        super().__init__(message, **kw)


class LLMConfigError(BenchwrightError):
    """The LLM configuration is incomplete or wrong: no model for a role, a missing API key, a bad value.
    The message names the setting and where to set it."""


class ToolProtocol(StrEnum):
    """How an endpoint is offered tools: its SDK's native tool calling, or a text protocol in the prompt
    (``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks and one ``<finish>...</finish>`` block;
    ``tools = "prompt"`` in ``[providers.NAME]``, for local servers without native tools)."""

    NATIVE = "native"
    PROMPT = "prompt"


# ------------------------------------------------------------------------------------------------ values
@dataclass(frozen=True)
class ToolSpec:
    """A tool a model may call.

    Attributes:
        name: the tool's name (``[A-Za-z0-9_-]{1,64}``, the rule both OpenAI and Anthropic apply).
        description: what it does, for the model.
        parameters: JSON Schema of its arguments (an object schema).
    """

    name: str
    description: str
    parameters: dict

    def as_json(self) -> dict:
        """``{"name", "description", "parameters"}`` (for the request hash and the prompt protocol)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class ToolCall:
    """One tool call a model made.

    Attributes:
        id: the provider's call id (OpenAI ``tool_calls[].id``, Anthropic ``tool_use.id``; ``call_N`` in the prompt
            protocol), echoed back with the result.
        name: the tool's name as the model wrote it (may name no offered tool).
        arguments: the parsed arguments (a dict; ``{}`` when they did not parse).
        arguments_raw: the arguments' text when it was not a JSON object (else None), kept for the trajectory.
    """

    id: str
    name: str
    arguments: dict = field(default_factory=dict)
    arguments_raw: str | None = None

    def as_json(self) -> dict:
        """``{"id", "name", "arguments"[, "arguments_raw"]}`` (ledger, request hash, trajectory)."""
        out: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.arguments_raw is not None:
            out["arguments_raw"] = self.arguments_raw
        return out

    @classmethod
    def from_json(cls, value: dict) -> ToolCall:
        """The inverse of :meth:`as_json`."""
        args = value.get("arguments")
        return cls(id=str(value.get("id", "")), name=str(value.get("name", "")),
                   arguments=args if isinstance(args, dict) else {}, arguments_raw=value.get("arguments_raw"))


@dataclass(frozen=True)
class ChatMessage:
    """One conversation turn (the system prompt travels apart).

    Attributes:
        role: ``user``, ``assistant`` or ``tool`` (a tool's result).
        content: the text (an assistant turn that only calls tools may have ``""``).
        tool_calls: on an assistant turn, the tool calls it made.
        tool_call_id: on a ``tool`` turn, the id of the call this is the result of.
        name: on a ``tool`` turn, the tool's name.
    """

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def as_json(self) -> list | dict:
        """The message for the request hash: ``[role, content]`` for a plain turn (as before tools existed, so
        old cache keys stay valid), else a dict with the tool fields."""
        if not self.tool_calls and self.tool_call_id is None and self.name is None:
            return [self.role, self.content]
        return {"role": self.role, "content": self.content, "tool_calls": [c.as_json() for c in self.tool_calls],
                "tool_call_id": self.tool_call_id, "name": self.name}


@dataclass(frozen=True)
class Usage:
    """Token counts of one call (0 when the provider did not report them)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __post_init__(self) -> None:
        # A server that reports negative or missing counts gets 0, never a negative total or cost.
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                object.__setattr__(self, name, max(0, int(v)) if isinstance(v, int | float) else 0)

    def __add__(self, other: Usage) -> Usage:
        # Field by field (``dataclasses.astuple`` deep-copies: it was most of a call's bookkeeping cost).
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens)


@dataclass(frozen=True)
class LLMRequest:
    """Everything that determines a model's answer, plus bookkeeping that does not.

    Attributes:
        model: the model name as the provider knows it.
        messages: the conversation (usually one user turn).
        system: the system prompt, or None.
        json_schema: JSON Schema the output must satisfy (an object schema), or None for free text.
        schema_name: a short name for the schema (OpenAI requires one).
        params: sampling parameters (``temperature``, ``max_tokens``, ``top_p``, ``seed``); providers map
            them to their API and report what they sent.
        template_id, template_hash: the prompt template the messages came from (ledger only).
        repeat: repeat index (0 for the first run); part of the cache key, so run 2 of a judge is a
            separate call, not a cache hit of run 1 (for an agent: the sample index).
        tools: tools the model may call (empty: none). A request with tools is not validated against
            ``json_schema``; its answer is text plus :attr:`LLMResponse.tool_calls`.
        cache_scope: what else the answer belongs to that the messages do not show (never sent): an agent's
            condition and workspace (``agentic:flask``), so two conditions never share a cached draw even when a
            turn's messages are the same (the first turn always is). None: no scope (the hash is as before).
    """

    model: str
    messages: tuple[ChatMessage, ...]
    system: str | None = None
    json_schema: dict | None = None
    schema_name: str = "output"
    params: dict = field(default_factory=dict)
    template_id: str | None = None
    template_hash: str | None = None
    repeat: int = 0
    tools: tuple[ToolSpec, ...] = ()
    cache_scope: str | None = None

    def request_hash(self, provider_kind: str, base_url: str | None) -> str:
        """SHA-256 (hex) of what determines the answer: provider kind, base URL, model, system prompt,
        messages, schema and parameters. The repeat index is *not* in it (the cache key pairs them)."""
        payload = {
            "provider": provider_kind,
            "base_url": (base_url or "").rstrip("/"),
            "model": self.model,
            "system": self.system,
            "messages": [m.as_json() for m in self.messages],
            "schema": self.json_schema,
            "params": self.params,
        }
        if self.tools:  # absent for requests without tools, so their hashes are unchanged
            payload["tools"] = [t.as_json() for t in self.tools]
        if self.cache_scope is not None:
            payload["scope"] = self.cache_scope
        return hashlib.sha256(canonical_json_bytes(payload)).hexdigest()

    def with_messages(self, messages: tuple[ChatMessage, ...]) -> LLMRequest:
        """A copy with other messages (the repair turn)."""
        return LLMRequest(**{**self.__dict__, "messages": tuple(messages)})


@dataclass
class LLMResponse:
    """One provider answer.

    Attributes:
        text: the output text (for structured output, the JSON text).
        model: the model the provider says answered (may differ from the requested one).
        usage: token counts (None when the provider reported none: tokens then count 0 and the cost is unknown).
        request_id: the provider's request id, when sent.
        stop_reason: the provider's raw stop / finish reason (:func:`normalize_stop_reason` maps it).
        latency_s: wall time of the call including the SDK's retries, in seconds.
        attempts: HTTP attempts the SDK made (1 + retries).
        params_sent: the parameters as they went over the wire (after mapping).
        tool_calls: the tool calls the model made (stop reason ``tool_use``), in order; empty for none.
    """

    text: str
    model: str
    usage: Usage | None = field(default_factory=Usage)
    request_id: str | None = None
    stop_reason: str | None = None
    latency_s: float = 0.0
    attempts: int = 1
    params_sent: dict = field(default_factory=dict)
    tool_calls: tuple[ToolCall, ...] = ()


@runtime_checkable
class Provider(Protocol):
    """One configured endpoint.

    Attributes:
        kind: ``openai``, ``anthropic`` or ``fake`` (goes into the request hash).
        name: the configured provider name (``[providers.NAME]`` in benchwright.toml).
        base_url: the endpoint URL (None for the SDK default).
        structured_output: how JSON output is requested (:class:`StructuredOutput`).
        concurrency: at most this many calls in flight.
        tools: how tools are offered (:class:`ToolProtocol`); a provider without the attribute is native.
    """

    kind: str
    name: str
    base_url: str | None
    structured_output: StructuredOutput
    concurrency: int

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Send ``request``; return the answer.

        Raises:
            LLMRefusalError: the model refused.
            LLMError: HTTP error after the SDK's own retries (408/409/429/5xx), timeout, connection error.
        """
        ...

    async def aclose(self) -> None:
        """Release the HTTP client."""
        ...
