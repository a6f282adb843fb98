"""OpenAI and OpenAI-compatible servers (vLLM, llama.cpp server, Ollama) through the official ``openai`` SDK.

ARCHITECTURE.md "LLM layer". One class serves api.openai.com and any server speaking the Chat Completions API
at ``base_url``. The SDK is imported here only, so ``import benchwright.core.llm`` does not load it.

Wire mapping (``LLMRequest.params`` -> request body):

- ``temperature``, ``top_p``, ``seed``: sent as is.
- ``max_tokens``: sent as ``max_completion_tokens`` to api.openai.com (its reasoning models reject
  ``max_tokens``) and as ``max_tokens`` to any other base URL (llama.cpp server and Ollama read only that
  one). ``LLMResponse.params_sent`` names the field actually used.
- ``json_schema`` (native structured output): ``response_format = {"type": "json_schema", "json_schema":
  {"name", "schema", "strict"}}``. The schema is converted to OpenAI's strict subset
  (:func:`~.schemas.openai_strict_schema`: ``additionalProperties: false`` on every object, unsupported keywords
  moved into the description) and sent with ``strict: true`` when the result meets every strict-mode rule
  (:func:`~.schemas.openai_strict_problems`); otherwise the schema goes as it is with ``strict: false``. The
  caller's schema is never modified, and the client validates against it in full.
- ``tools`` (native tool calling): ``tools = [{"type": "function", "function": {"name", "description",
  "parameters", "strict"}}]``, the parameters converted and ``strict`` decided as for ``response_format``
  (:func:`wire_schema`). A request with tools sends no ``response_format`` (tools win). An assistant turn with
  calls goes as ``{"role": "assistant", "content": text or null, "tool_calls": [{"id", "type": "function",
  "function": {"name", "arguments": JSON text}}]}``, a tool result as ``{"role": "tool", "tool_call_id",
  "content"}``. The answer's ``message.tool_calls`` become :class:`~.base.ToolCall` values (arguments that are not
  a JSON object: ``{}`` and ``arguments_raw``; a ``custom`` tool call: its ``input`` text as ``arguments_raw``);
  the finish reason is ``tool_calls``.

An HTTP 400, 422 or 5xx from a server other than api.openai.com to a request carrying ``response_format`` or
``tools`` names the setting that avoids them (``structured_output = "prompt"``, ``tools = "prompt"``).

Retries (408/409/429/5xx, connection errors, timeouts) are the SDK's, ``max_retries`` of them, honouring
``retry-after``/``retry-after-ms``; ``LLMResponse.attempts`` is ``retries_taken + 1``.
"""

from __future__ import annotations

import copy
import json
import time
from typing import Any
from urllib.parse import urlsplit

import httpx2
import openai

# The key and error helpers are shared with the Anthropic provider; the ones not used here stay importable from
# this module under their old names.
from ._sdk_common import (
    SDKErrors,
    check_tools,
    read_api_key,
    to_llm_error,
    unsupported_feature_hint,
)
from ._sdk_common import error_detail as error_detail
from ._sdk_common import http_attempts as http_attempts
from ._sdk_common import is_transient_status as is_transient_status
from ._sdk_common import scrub as scrub
from .base import (
    ChatMessage,
    LLMConfigError,
    LLMError,
    LLMRefusalError,
    LLMRequest,
    LLMResponse,
    StructuredOutput,
    ToolCall,
    ToolProtocol,
    ToolSpec,
    Usage,
)
from .schemas import openai_strict_problems, openai_strict_schema, per_schema
from .tool_protocol import read_arguments

NO_KEY_PLACEHOLDER = "not-needed"
"""The key sent to an OpenAI-compatible server configured without ``api_key_env`` (local servers need none)."""

SUPPORTED_PARAMS = ("temperature", "max_tokens", "top_p", "seed")


@per_schema
def wire_schema(schema: dict) -> tuple[dict, bool]:
    """``(schema as sent, strict)`` for a ``response_format``: the strict-subset conversion with ``strict``
    true when it meets every documented rule, else a copy of ``schema`` unchanged with ``strict`` false. Made once
    per schema (:func:`~.schemas.per_schema`): the dict returned is shared, read-only."""
    converted = openai_strict_schema(schema)
    if not openai_strict_problems(converted):
        return converted, True
    return copy.deepcopy(schema), False


def strict_compatible(schema: Any) -> bool:
    """True when ``schema`` satisfies OpenAI's strict structured-output rules as it is, without conversion (the
    documented rules, each with its reason: :func:`~.schemas.openai_strict_problems`)."""
    return not openai_strict_problems(schema)


def params_sent(request: LLMRequest, max_tokens_field: str = "max_tokens") -> dict:
    """The parameters of ``request`` as they go over the wire, in the body's order: ``temperature``, ``top_p``,
    ``seed`` when given, then ``max_tokens`` under ``max_tokens_field`` (``max_completion_tokens`` for
    api.openai.com)."""
    sent: dict[str, Any] = {}
    for key in ("temperature", "top_p", "seed"):
        if request.params.get(key) is not None:
            sent[key] = request.params[key]
    if request.params.get("max_tokens") is not None:
        sent[max_tokens_field] = request.params["max_tokens"]
    return sent


def _tool(spec: ToolSpec) -> dict:
    """One ``tools`` entry: ``{"type": "function", "function": {"name", "description", "parameters", "strict"}}``."""
    parameters, strict = wire_schema(spec.parameters)
    return {"type": "function", "function": {"name": spec.name, "description": spec.description,
                                             "parameters": parameters, "strict": strict}}


def _message(m: ChatMessage) -> dict:
    """One ``messages`` entry for a :class:`~.base.ChatMessage` (plain, assistant with calls, or tool result)."""
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    if m.role == "assistant" and m.tool_calls:
        # Arguments that were not a JSON object go back as {} (as to Anthropic): vLLM and SGLang parse the history's
        # arguments and answer HTTP 400 to text that is not one, which would fail every later turn of the run. The
        # call keeps its id, and its result (the agent's error) quotes the text as the model wrote it.
        return {"role": "assistant", "content": m.content or None, "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
            for c in m.tool_calls]}
    return {"role": m.role, "content": m.content}


def _tool_call(c: Any, n: int) -> ToolCall:
    """A :class:`~.base.ToolCall` from one of ``message.tool_calls`` (a ``function`` call, or a ``custom`` one whose
    free-text input is kept as ``arguments_raw``); a missing id becomes ``call_N``."""
    call_id = _get(c, "id") or f"call_{n}"
    fn = _get(c, "function")
    if fn is not None:
        return read_arguments(call_id, _get(fn, "name") or "", _get(fn, "arguments") or "")
    custom = _get(c, "custom")
    return ToolCall(id=call_id, name=_get(custom, "name") or "", arguments_raw=str(_get(custom, "input") or ""))


def _get(obj: Any, key: str) -> Any:
    """``obj.key`` of an SDK object, ``obj[key]`` of a dict (a batch output line's body), else None."""
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def read_usage(u: Any) -> Usage | None:
    """The :class:`~.base.Usage` of a completion's ``usage`` (SDK object or dict): ``input_tokens`` is the prompt
    tokens not read from or written to the cache. None when none was reported (the cost is unknown, not 0)."""
    if u is None:
        return None  # not reported: the cost is unknown, not 0
    details = _get(u, "prompt_tokens_details")
    cached = (_get(details, "cached_tokens") or 0) if details is not None else 0
    written = (_get(details, "cache_write_tokens") or 0) if details is not None else 0
    prompt = _get(u, "prompt_tokens") or 0
    return Usage(input_tokens=max(0, prompt - cached - written),
                 output_tokens=_get(u, "completion_tokens") or 0,
                 cache_read_tokens=cached, cache_write_tokens=written)


def read_completion(completion: Any, *, provider: str, base_url: str | None, request: LLMRequest, sent: dict,
                    latency_s: float = 0.0, attempts: int = 1, request_id: str | None = None) -> LLMResponse:
    """The :class:`~.base.LLMResponse` of one chat completion: an SDK ``ChatCompletion`` (the online call) or its
    JSON dict (a batch output line's ``response.body``). Text and tool calls of the first choice; the request id is
    ``request_id`` (the HTTP header, or the batch line's) or else the completion id.

    Args:
        provider, base_url: named in messages; request: the request answered (its model is the fallback);
            sent: the parameters as sent (``params_sent``); latency_s, attempts: of the HTTP call.

    Raises:
        LLMRefusalError: the message carries a ``refusal`` or the finish reason is ``content_filter``.
        LLMError: the completion has no choices.
    """
    request_id = request_id or _get(completion, "id")
    model = _get(completion, "model") or request.model
    usage = read_usage(_get(completion, "usage"))
    choices = _get(completion, "choices") or []
    if not choices:
        raise LLMError(f"{provider}: the answer from {base_url} has no choices",
                       request_id=request_id, attempts=attempts, usage=usage, model=model)
    choice = choices[0]
    message = _get(choice, "message")
    finish = _get(choice, "finish_reason")
    refusal = _get(message, "refusal")
    text = _get(message, "content") or ""
    if refusal or finish == "content_filter":
        raw_text = refusal or text
        raise LLMRefusalError(f"{provider}: the model refused: {raw_text[:300]}" if raw_text
                              else f"{provider}: the answer was withheld by the content filter",
                              raw=raw_text or None, request_id=request_id, attempts=attempts,
                              usage=usage, model=model, stop_reason=finish)
    calls = tuple(_tool_call(c, i) for i, c in enumerate(_get(message, "tool_calls") or [], 1))
    return LLMResponse(text=text, model=model, usage=usage, request_id=request_id, stop_reason=finish,
                       latency_s=latency_s, attempts=attempts, params_sent=sent, tool_calls=calls)


_ERRORS = SDKErrors(status=openai.APIStatusError, timeout=openai.APITimeoutError,
                    connection=openai.APIConnectionError, base=openai.OpenAIError)


class OpenAIProvider:
    """A :class:`~.base.Provider` for the OpenAI Chat Completions API (api.openai.com or compatible).

    Args:
        name: the configured provider name (``[providers.NAME]``).
        base_url: the endpoint (e.g. ``http://127.0.0.1:8000/v1``); None for the SDK default
            (``OPENAI_BASE_URL`` if set, else https://api.openai.com/v1).
        api_key_env: name of the environment variable holding the key; None for a server that needs no
            key (a placeholder is sent).
        timeout_s: per-HTTP-attempt timeout in seconds.
        max_retries: SDK retries for 408/409/429/5xx, connection errors and timeouts.
        concurrency: calls in flight at most (applied by :class:`~.client.LLMClient`).
        structured_output: ``json_schema`` (native) or ``prompt`` (the client puts the schema in the prompt).
        tools: ``native`` (the ``tools`` field) or ``prompt`` (the client's text protocol, :mod:`.tool_protocol`).
        http_client: an ``httpx2.AsyncClient`` to send through (tests pass one on ``httpx2.MockTransport``).

    Raises:
        LLMConfigError: ``api_key_env`` names an unset variable (at construction, before any call).
    """

    kind = "openai"

    def __init__(self, name: str = "openai", *, base_url: str | None = None,
                 api_key_env: str | None = "OPENAI_API_KEY", timeout_s: float = 60.0, max_retries: int = 2,
                 concurrency: int = 8, structured_output: StructuredOutput | str = StructuredOutput.JSON_SCHEMA,
                 http_client: httpx2.AsyncClient | None = None, tools: ToolProtocol | str = ToolProtocol.NATIVE):
        self.name = name
        self.structured_output = StructuredOutput(structured_output)
        self.tools = ToolProtocol(tools)
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.api_key_env = api_key_env
        self._key = read_api_key(name, api_key_env, allow_missing=True)
        self._client = openai.AsyncOpenAI(
            api_key=self._key or NO_KEY_PLACEHOLDER, base_url=base_url, timeout=timeout_s,
            max_retries=max_retries, http_client=http_client,
        )
        self.base_url: str | None = str(self._client.base_url).rstrip("/")
        host = urlsplit(self.base_url).hostname or ""
        self.max_tokens_field = "max_completion_tokens" if host == "api.openai.com" else "max_tokens"

    def _body(self, request: LLMRequest) -> tuple[dict, dict]:
        """(keyword arguments for ``chat.completions.create``, parameters as sent)."""
        unknown = set(request.params) - set(SUPPORTED_PARAMS)
        if unknown:
            raise LLMConfigError(f"provider '{self.name}': unsupported parameter(s) {sorted(unknown)}; "
                                 f"supported: {', '.join(SUPPORTED_PARAMS)}")
        messages: list[dict] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend(_message(m) for m in request.messages)
        kwargs: dict[str, Any] = {"model": request.model, "messages": messages}
        sent = self._params_sent(request)
        kwargs.update(sent)
        if request.tools:
            check_tools(self.name, request.tools)
            kwargs["tools"] = [_tool(t) for t in request.tools]
        elif request.json_schema is not None and self.structured_output is StructuredOutput.JSON_SCHEMA:
            schema, strict = wire_schema(request.json_schema)
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": schema, "strict": strict},
            }
        return kwargs, sent

    def _params_sent(self, request: LLMRequest) -> dict:
        """The parameters as they go over the wire: ``temperature``, ``top_p``, ``seed`` as given, ``max_tokens``
        under :attr:`max_tokens_field`."""
        return params_sent(request, self.max_tokens_field)

    def batch_backend(self) -> Any:
        """This provider's Batch API (:class:`~.openai_batch.OpenAIBatchBackend`), one per provider."""
        backend = getattr(self, "_batch", None)
        if backend is None:
            from .openai_batch import OpenAIBatchBackend

            backend = self._batch = OpenAIBatchBackend(self)
        return backend

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One chat completion for ``request`` (see :class:`~.base.Provider`).

        Usage: ``input_tokens`` is the prompt tokens *not* read from or written to the cache (as
        Anthropic counts them), so :class:`~.client.Price` does not charge cached tokens twice.

        Raises:
            LLMRefusalError: the message carries a ``refusal`` or the finish reason is ``content_filter``.
            LLMError: HTTP error after the SDK's retries (``transient`` for 408/409/429/5xx), timeout or
                connection error (transient), or an unreadable answer.
            LLMConfigError: a parameter this provider cannot send.
        """
        kwargs, sent = self._body(request)
        t0 = time.perf_counter()
        try:
            raw = await self._client.chat.completions.with_raw_response.create(**kwargs)
            completion = raw.parse()
        except _ERRORS.caught as e:
            hint = unsupported_feature_hint(self.name, self.base_url, "api.openai.com", tools="tools" in kwargs,
                                            json_schema="response_format" in kwargs)
            raise to_llm_error(e, _ERRORS, provider=self.name, base_url=self.base_url, timeout_s=self.timeout_s,
                               secret=self._key, hint=hint) from None
        latency = time.perf_counter() - t0
        return read_completion(completion, provider=self.name, base_url=self.base_url, request=request, sent=sent,
                               latency_s=latency, attempts=raw.retries_taken + 1, request_id=raw.request_id)

    async def aclose(self) -> None:
        """Close the SDK client and its HTTP connections."""
        await self._client.close()
