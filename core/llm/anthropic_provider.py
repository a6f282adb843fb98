"""Anthropic's Messages API through the official ``anthropic`` SDK (ARCHITECTURE.md "LLM layer").

The SDK is imported here only, so ``import benchwright.core.llm`` does not load it.

Wire mapping (``LLMRequest.params`` -> request body):

- ``max_tokens``: required by the API; :data:`DEFAULT_MAX_TOKENS` when the role sets none.
- ``temperature``, ``top_p``: not in ``messages.create``'s signature since anthropic 1.x; they travel in
  ``extra_body`` (models that reject them answer HTTP 400, reported as an error naming the parameter).
- ``seed``: the API has none; it is not sent and is absent from ``params_sent``.
- ``json_schema`` (native structured output): ``output_config = {"format": {"type": "json_schema",
  "schema": ...}}`` with the schema converted to Anthropic's supported subset by the SDK's own
  ``anthropic.transform_schema`` (:func:`wire_schema`): unsupported constraints (``minimum``, ``maximum``,
  ``minItems`` above 1, ``maxItems``, ``minLength``...) are removed and written into the description, every object
  gets ``additionalProperties: false``. The caller's schema is never modified; the client validates the parsed
  output against it in full, so a bound the API could not enforce is still enforced (a violation is invalid output
  and gets the repair turn).
- ``tools`` (native tool use): ``tools = [{"name", "description", "input_schema"}]``, the schema as given (tool
  input schemas are not limited to the structured-output subset). A request with tools sends no
  ``output_config`` (tools win). An assistant turn with calls goes as content blocks (a ``text`` block when it has
  text, then one ``{"type": "tool_use", "id", "name", "input"}`` per call); the ``tool`` turns that follow go
  together as ONE user turn of ``{"type": "tool_result", "tool_use_id", "content"}`` blocks (the API wants every
  result right after its ``tool_use`` turn, and roles alternating), and a user turn right after them joins that
  turn as a ``text`` block after the results. The answer's ``tool_use`` blocks become :class:`~.base.ToolCall`
  values beside the text; the stop reason is ``tool_use``.

An HTTP 400, 422 or 5xx from a server other than api.anthropic.com to a request carrying ``output_config`` or
``tools`` names the setting that avoids them (``structured_output = "prompt"``, ``tools = "prompt"``).

Retries (408/409/429/5xx, connection errors, timeouts) are the SDK's, honouring ``retry-after-ms``;
``LLMResponse.attempts`` is ``retries_taken + 1``.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import anthropic
import httpx2

from ._sdk_common import (
    SDKErrors,
    check_tools,
    read_api_key,
    to_llm_error,
    unsupported_feature_hint,
)
from .base import (
    ChatMessage,
    LLMConfigError,
    LLMRefusalError,
    LLMRequest,
    LLMResponse,
    StructuredOutput,
    ToolProtocol,
    Usage,
)
from .schemas import anthropic_schema_problems, per_schema
from .tool_protocol import read_arguments

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` sent when the role configures none (the API requires one)."""

SUPPORTED_PARAMS = ("temperature", "max_tokens", "top_p", "seed")


@per_schema
def wire_schema(schema: dict, name: str = "output") -> dict:
    """``schema`` converted to Anthropic's structured-output subset (``anthropic.transform_schema``; the bounds it
    cannot send are in the descriptions). Made once per schema and name (:func:`~.schemas.per_schema`): the dict
    returned is shared, read-only.

    Raises:
        LLMConfigError: the converted schema still breaks a documented rule
            (:func:`~.schemas.anthropic_schema_problems`; e.g. a recursive schema), named with the problems, before
            any request is sent (the API would answer HTTP 400).
    """
    try:
        converted = anthropic.transform_schema(copy.deepcopy(schema))
    except (TypeError, ValueError) as e:
        raise LLMConfigError(f"output schema {name!r} cannot be sent to Anthropic: {e}") from None
    problems = anthropic_schema_problems(converted)
    if problems:
        raise LLMConfigError(f"output schema {name!r} cannot be sent to Anthropic: " + "; ".join(problems[:5]))
    return converted


def wire_messages(messages: tuple[ChatMessage, ...] | list[ChatMessage]) -> list[dict]:
    """The ``messages`` of a request: plain turns as ``{"role", "content": text}`` (as before tools existed), an
    assistant turn with calls as ``text`` + ``tool_use`` blocks, and each run of ``tool`` turns as ONE user turn of
    ``tool_result`` blocks, joined by a user turn that directly follows them (its text as a block after the
    results), so the results sit right after their ``tool_use`` turn and roles alternate. An assistant turn with
    neither text nor calls (a model that replied nothing) is left out before the last turn: the API refuses empty
    content, and joins the user turns around it into one."""
    out: list[dict] = []
    grouping = False  # the last entry is a user turn of tool results
    for i, m in enumerate(messages):
        # (blank counts as empty: the API refuses a text block of white space only, e.g. the "\n\n" a model
        # wrote before its tool_use blocks, with "text content blocks must contain non-whitespace text")
        if m.role == "assistant" and not m.content.strip() and not m.tool_calls and i < len(messages) - 1:
            continue
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content}
            if grouping:
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
                grouping = True
            continue
        if m.role == "user" and grouping:
            if m.content.strip():
                out[-1]["content"].append({"type": "text", "text": m.content})
            grouping = False
            continue
        grouping = False
        if m.role == "assistant" and m.tool_calls:
            blocks: list[dict] = [{"type": "text", "text": m.content}] if m.content.strip() else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def _get(obj: Any, key: str) -> Any:
    """``obj.key`` of an SDK object, ``obj[key]`` of a dict (a stored batch result), else None."""
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def read_usage(u: Any) -> Usage | None:
    """The :class:`~.base.Usage` of a message's ``usage`` (an SDK object or its JSON dict); None when the answer
    reported none (the cost is unknown, not 0)."""
    if u is None:
        return None  # not reported: the cost is unknown, not 0
    return Usage(input_tokens=_get(u, "input_tokens") or 0,
                 output_tokens=_get(u, "output_tokens") or 0,
                 cache_read_tokens=_get(u, "cache_read_input_tokens") or 0,
                 cache_write_tokens=_get(u, "cache_creation_input_tokens") or 0)


def read_message(message: Any, *, provider: str, request: LLMRequest, sent: dict, latency_s: float = 0.0,
                 attempts: int = 1, request_id: str | None = None) -> LLMResponse:
    """The :class:`~.base.LLMResponse` of one Messages API answer: an SDK ``Message`` (the online call) or its
    JSON dict (a batch result's ``message``). The text is the concatenation of the text blocks, the ``tool_use``
    blocks become tool calls, the request id is ``request_id`` (the HTTP header) or else the message id.

    Args:
        provider: the configured provider name (in messages); request: the request answered (its model is the
            fallback); sent: the parameters as sent (``params_sent``); latency_s, attempts: of the HTTP call.

    Raises:
        LLMRefusalError: stop reason ``refusal`` (``raw`` holds any text and the stated explanation).
    """
    request_id = request_id or _get(message, "id")
    model = _get(message, "model") or request.model
    usage = read_usage(_get(message, "usage"))
    blocks = _get(message, "content") or []
    text = "".join(_get(b, "text") or "" for b in blocks if _get(b, "type") == "text")
    calls = tuple(read_arguments(_get(b, "id") or f"call_{i}", _get(b, "name") or "", _get(b, "input"))
                  for i, b in enumerate((b for b in blocks if _get(b, "type") == "tool_use"), 1))
    stop = _get(message, "stop_reason")
    if stop == "refusal":
        details = _get(message, "stop_details")
        explanation = _get(details, "explanation") if details is not None else None
        category = _get(details, "category") if details is not None else None
        raw_text = "\n".join(p for p in (text, explanation) if p) or None
        what = f" ({category})" if category else ""
        raise LLMRefusalError(f"{provider}: the model refused{what}: {(raw_text or '')[:300]}".rstrip(": "),
                              raw=raw_text, request_id=request_id, attempts=attempts, usage=usage,
                              model=model, stop_reason=stop)
    return LLMResponse(text=text, model=model, usage=usage, request_id=request_id, stop_reason=stop,
                       latency_s=latency_s, attempts=attempts, params_sent=sent, tool_calls=calls)


_ERRORS = SDKErrors(status=anthropic.APIStatusError, timeout=anthropic.APITimeoutError,
                    connection=anthropic.APIConnectionError, base=anthropic.AnthropicError)


class AnthropicProvider:
    """A :class:`~.base.Provider` for Anthropic's Messages API.

    Args:
        name: the configured provider name (``[providers.NAME]``).
        base_url: the endpoint; None for the SDK default (``ANTHROPIC_BASE_URL`` if set, else
            https://api.anthropic.com).
        api_key_env: name of the environment variable holding the key (required).
        timeout_s: per-HTTP-attempt timeout in seconds.
        max_retries: SDK retries for 408/409/429/5xx, connection errors and timeouts.
        concurrency: calls in flight at most (applied by :class:`~.client.LLMClient`).
        structured_output: ``json_schema`` (native ``output_config``) or ``prompt``.
        tools: ``native`` (the ``tools`` field) or ``prompt`` (the client's text protocol, :mod:`.tool_protocol`).
        http_client: an ``httpx2.AsyncClient`` to send through (tests pass one on ``httpx2.MockTransport``).

    Raises:
        LLMConfigError: ``api_key_env`` is missing or names an unset variable (at construction).
    """

    kind = "anthropic"

    def __init__(self, name: str = "anthropic", *, base_url: str | None = None,
                 api_key_env: str | None = "ANTHROPIC_API_KEY", timeout_s: float = 60.0, max_retries: int = 2,
                 concurrency: int = 8, structured_output: StructuredOutput | str = StructuredOutput.JSON_SCHEMA,
                 http_client: httpx2.AsyncClient | None = None, tools: ToolProtocol | str = ToolProtocol.NATIVE):
        self.name = name
        self.structured_output = StructuredOutput(structured_output)
        self.tools = ToolProtocol(tools)
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.api_key_env = api_key_env
        # An empty api_key_env counts as not configured (there is no key-less Anthropic endpoint).
        self._key: str = read_api_key(name, api_key_env or None, allow_missing=False,
                                      what="the Anthropic API key (e.g. ANTHROPIC_API_KEY)")
        self._client = anthropic.AsyncAnthropic(
            api_key=self._key, base_url=base_url, timeout=timeout_s, max_retries=max_retries,
            http_client=http_client,
        )
        self.base_url: str | None = str(self._client.base_url).rstrip("/")

    def _body(self, request: LLMRequest) -> tuple[dict, dict]:
        """(keyword arguments for ``messages.create``, parameters as sent)."""
        unknown = set(request.params) - set(SUPPORTED_PARAMS)
        if unknown:
            raise LLMConfigError(f"provider '{self.name}': unsupported parameter(s) {sorted(unknown)}; "
                                 f"supported: {', '.join(SUPPORTED_PARAMS)}")
        sent = self._params_sent(request)
        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": sent["max_tokens"],
            "messages": wire_messages(request.messages),
        }
        if request.system:
            kwargs["system"] = request.system
        extra = {k: sent[k] for k in ("temperature", "top_p") if k in sent}
        if extra:
            kwargs["extra_body"] = extra
        if request.tools:
            check_tools(self.name, request.tools)
            kwargs["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                               for t in request.tools]
        elif request.json_schema is not None and self.structured_output is StructuredOutput.JSON_SCHEMA:
            kwargs["output_config"] = {"format": {"type": "json_schema",
                                                  "schema": wire_schema(request.json_schema, request.schema_name)}}
        return kwargs, sent

    @staticmethod
    def _params_sent(request: LLMRequest) -> dict:
        """The parameters as they go over the wire: ``max_tokens`` (the default when unset), ``temperature`` and
        ``top_p`` when given (``seed`` is never sent)."""
        sent: dict[str, Any] = {"max_tokens": request.params.get("max_tokens") or DEFAULT_MAX_TOKENS}
        sent.update({k: request.params[k] for k in ("temperature", "top_p") if request.params.get(k) is not None})
        return sent

    def batch_backend(self) -> Any:
        """This provider's Message Batches API (:class:`~.anthropic_batch.AnthropicBatchBackend`), one per
        provider."""
        backend = getattr(self, "_batch", None)
        if backend is None:
            from .anthropic_batch import AnthropicBatchBackend

            backend = self._batch = AnthropicBatchBackend(self)
        return backend

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One message for ``request`` (see :class:`~.base.Provider`). The text is the concatenation of
        the answer's text blocks.

        Raises:
            LLMRefusalError: stop reason ``refusal`` (``raw`` holds any text and the stated explanation).
            LLMError: HTTP error after the SDK's retries (``transient`` for 408/409/429/5xx, 529), timeout
                or connection error (transient), or an unreadable answer.
            LLMConfigError: a parameter this provider cannot send.
        """
        kwargs, sent = self._body(request)
        t0 = time.perf_counter()
        try:
            raw = await self._client.messages.with_raw_response.create(**kwargs)
            message = await raw.parse()
        except _ERRORS.caught as e:
            # Anthropic's error bodies nest the message; a bare {"error": "text"} body is reported through the
            # SDK's own message (plain_error=False), as this provider always did.
            hint = unsupported_feature_hint(self.name, self.base_url, "api.anthropic.com", tools="tools" in kwargs,
                                            json_schema="output_config" in kwargs)
            raise to_llm_error(e, _ERRORS, provider=self.name, base_url=self.base_url, timeout_s=self.timeout_s,
                               secret=self._key, plain_error=False, hint=hint) from None
        latency = time.perf_counter() - t0
        return read_message(message, provider=self.name, request=request, sent=sent, latency_s=latency,
                            attempts=raw.retries_taken + 1, request_id=raw.request_id)

    async def aclose(self) -> None:
        """Close the SDK client and its HTTP connections."""
        await self._client.close()
