"""A scripted provider for tests and demos: answers come from a script, not a network.

The script is a list (answers in call order) or a callable ``request -> answer``. An answer is a ``str``
(the output text), a ``dict``/``list`` (sent as JSON text), a :class:`Reply` (text with a stop reason, e.g. a
reply cut off at ``max_tokens``), an :class:`LLMError` instance (raised), or :class:`Delay` wrapping one of those. Every request is kept in ``calls`` so tests can assert what was sent.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from .base import (
    ChatMessage,
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
from .batch import BatchItem, BatchItemFailed, BatchLimits, RemoteBatch, ResultKind
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
        self.batch = ScriptedBatchBackend(self)
        """The batch API of this provider (:meth:`batch_backend`), for tests to set knobs on and inspect."""

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
            return await self._answer(request, f"fake-{len(self.calls)}")
        finally:
            self.in_flight -= 1

    async def _answer(self, request: LLMRequest, request_id: str) -> LLMResponse:
        """The script's answer to ``request`` as a response (or the scripted error, raised)."""
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
            request_id=request_id, stop_reason=stop_reason, params_sent=dict(request.params),
            tool_calls=tool_calls,
        )

    def batch_backend(self) -> ScriptedBatchBackend:
        """This provider's batch API in memory (:class:`ScriptedBatchBackend`); the same one every time, also
        reachable as :attr:`batch`."""
        return self.batch

    async def aclose(self) -> None:
        """Nothing to release."""
        self.closed = True


# ---------------------------------------------------------------------------------------------- batch API
def request_json(request: LLMRequest) -> dict:
    """``request`` as JSON (what the scripted batch API keeps in a line; :func:`request_from_json` reverses it)."""
    return {"model": request.model, "system": request.system,
            "messages": [{"role": m.role, "content": m.content, "tool_calls": [c.as_json() for c in m.tool_calls],
                          "tool_call_id": m.tool_call_id, "name": m.name} for m in request.messages],
            "json_schema": request.json_schema, "schema_name": request.schema_name, "params": dict(request.params),
            "repeat": request.repeat, "tools": [t.as_json() for t in request.tools]}


def request_from_json(d: dict) -> LLMRequest:
    """The :class:`~.base.LLMRequest` of a :func:`request_json` dict."""
    messages = tuple(ChatMessage(m["role"], m["content"],
                                 tuple(ToolCall.from_json(c) for c in m.get("tool_calls") or ()),
                                 m.get("tool_call_id"), m.get("name")) for m in d.get("messages") or ())
    tools = tuple(ToolSpec(t["name"], t.get("description", ""), t.get("parameters") or {}) for t in d.get("tools") or ())
    return LLMRequest(model=d["model"], messages=messages, system=d.get("system"), json_schema=d.get("json_schema"),
                      schema_name=d.get("schema_name") or "output", params=dict(d.get("params") or {}),
                      repeat=int(d.get("repeat") or 0), tools=tools)


def _response_json(r: LLMResponse) -> dict:
    u = r.usage
    return {"text": r.text, "model": r.model, "request_id": r.request_id, "stop_reason": r.stop_reason,
            "params_sent": dict(r.params_sent), "tool_calls": [c.as_json() for c in r.tool_calls],
            "usage": None if u is None else [u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens]}


class ScriptedBatchBackend:
    """A :class:`~.batch.BatchBackend` in memory for a :class:`ScriptedProvider` (kind ``fake``): each line's
    request is answered by the provider's script when the batch's results are read (the answers are kept in
    :attr:`answered`, not in the provider's ``calls``, which count online calls).

    Knobs (attributes, set them before the batch runs):
        polls: retrievals that report ``in_progress`` before the batch ends (default 1).
        errored, expired, cancelled, missing: ``custom_id`` sets to end that way (missing: absent from the results).
        outcome: ``(custom_id, request) -> ResultKind | str | None``, asked first for every request (None: as the
            sets say, else ``succeeded``); a request's ``custom_id`` is unknown before it is sent, so this is how a
            test picks requests by content.
        shuffle: a seed for the order of the results (None: submission order).
        fail_submit: an exception raised by the next :meth:`submit`, before anything is created (then cleared).
        die_after_create: an exception (or class) raised by the next :meth:`submit` AFTER the batch exists here
            (a kill between the provider's creation and the caller's commit; then cleared).
        limits: the :class:`~.batch.BatchLimits` (default Anthropic's).
        poll_errors: exceptions raised by the next retrievals, one each, in order (e.g. an ``LLMError`` with
            ``http_status=503, transient=True``: a proxy or a batch server down while waiting); a retrieval that
            raises does not count as a poll.
        results_errors: exceptions raised by the next results downloads, one each, after the first result was
            yielded (a download cut in the middle).

    Records: :attr:`batches` (id -> ``{"lines", "label", "polls", "created_at", "cancelled"}``),
    :attr:`submissions` (calls of :meth:`submit` that created a batch), :attr:`answered` (requests answered).
    """

    kind = "fake"

    def __init__(self, provider: ScriptedProvider, *, polls: int = 1, limits: BatchLimits | None = None):
        self.provider = provider
        self.limits = limits or BatchLimits(max_requests=100_000, max_bytes=256 * 1000 * 1000)
        self.polls = polls
        self.errored: set[str] = set()
        self.expired: set[str] = set()
        self.cancelled: set[str] = set()
        self.missing: set[str] = set()
        self.outcome: Callable[[str, LLMRequest], ResultKind | str | None] | None = None
        self.shuffle: int | None = 7
        self.fail_submit: BaseException | None = None
        self.die_after_create: BaseException | type[BaseException] | None = None
        self.batches: dict[str, dict] = {}
        self.submissions = 0
        self.answered: list[LLMRequest] = []
        self.poll_errors: list[BaseException] = []
        self.results_errors: list[BaseException] = []

    def line(self, custom_id: str, request: LLMRequest) -> dict:
        """``{"custom_id", "params": request_json(request)}``.

        Raises:
            LLMConfigError: a ``custom_id`` outside ``[a-zA-Z0-9_-]{1,64}``.
        """
        from .anthropic_batch import check_custom_id

        check_custom_id(custom_id, self.provider.name)
        return {"custom_id": custom_id, "params": request_json(request)}

    def endpoint(self, line: dict) -> str:
        """``/v1/messages`` (one endpoint)."""
        return "/v1/messages"

    async def submit(self, lines: list[dict], *, label: str) -> str:
        """Record a batch of ``lines``; its id (``fakebatch-N``).

        Raises:
            whatever :attr:`fail_submit` / :attr:`die_after_create` hold (once each).
        """
        if self.fail_submit is not None:
            err, self.fail_submit = self.fail_submit, None
            raise err
        from datetime import UTC, datetime

        self.submissions += 1
        batch_id = f"fakebatch-{len(self.batches) + 1}"
        self.batches[batch_id] = {"lines": [dict(x) for x in lines], "label": label, "polls": 0,
                                  "created_at": datetime.now(UTC).isoformat(), "cancelled": False}
        if self.die_after_create is not None:
            err, self.die_after_create = self.die_after_create, None
            raise err
        return batch_id

    async def find(self, label: str, *, created_after: str, count: int,
                   known: frozenset[str] = frozenset()) -> str | None:
        """The batch submitted with ``label`` and ``count`` lines, or None.

        Raises:
            LLMError: several match.
        """
        hits = [b for b, v in self.batches.items() if v["label"] == label and len(v["lines"]) == count]
        if len(hits) > 1:
            raise LLMError(f"several fake batches carry the label {label}: {', '.join(hits)}")
        return hits[0] if hits else None

    def _batch(self, batch_id: str) -> dict:
        b = self.batches.get(batch_id)
        if b is None:
            raise LLMError(f"fake batch API: no batch {batch_id!r}", http_status=404)
        return b

    def _kind(self, custom_id: str, request: LLMRequest, cancelled: bool) -> ResultKind:
        if self.outcome is not None:
            chosen = self.outcome(custom_id, request)
            if chosen is not None:
                return ResultKind(chosen)
        for kind, ids in ((ResultKind.MISSING, self.missing), (ResultKind.ERRORED, self.errored),
                          (ResultKind.EXPIRED, self.expired), (ResultKind.CANCELLED, self.cancelled)):
            if custom_id in ids:
                return kind
        return ResultKind.CANCELLED if cancelled else ResultKind.SUCCEEDED

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        """``in_progress`` for :attr:`polls` retrievals, then ``ended`` (at once after :meth:`cancel`).

        Raises:
            LLMError: an unknown batch id; whatever :attr:`poll_errors` holds first (then removed).
        """
        b = self._batch(batch_id)
        if self.poll_errors:
            raise self.poll_errors.pop(0)
        b["polls"] += 1
        ended = b["cancelled"] or b["polls"] > self.polls
        n = len(b["lines"])
        if not ended:
            return RemoteBatch(id=batch_id, ended=False, status="in_progress", counts={"processing": n})
        counts = {"processing": 0}
        for ln in b["lines"]:
            k = str(self._kind(ln["custom_id"], request_from_json(ln["params"]), b["cancelled"]))
            counts[k] = counts.get(k, 0) + 1
        return RemoteBatch(id=batch_id, ended=True, status="ended", counts=counts)

    async def results(self, batch: RemoteBatch) -> AsyncIterator[BatchItem]:
        """Every line's result (shuffled with :attr:`shuffle`): a succeeded one holds the script's answer
        (``{"custom_id", "result": {"type": "succeeded", "response": {...}}}``, a scripted refusal as
        ``"refusal"``); a scripted error other than a refusal makes the request ``errored``.

        Raises:
            LLMError: an unknown batch id; whatever :attr:`results_errors` holds first, after one result.
        """
        b = self._batch(batch.id)
        lines = list(b["lines"])
        if self.shuffle is not None:
            random.Random(self.shuffle).shuffle(lines)
        for i, ln in enumerate(lines):
            if i == 1 and self.results_errors:
                raise self.results_errors.pop(0)
            cid = ln["custom_id"]
            request = request_from_json(ln["params"])
            kind = self._kind(cid, request, b["cancelled"])
            if kind is ResultKind.MISSING:
                continue
            result: dict[str, Any] = {"type": str(kind)}
            if kind is ResultKind.SUCCEEDED:
                self.answered.append(request)
                try:
                    result["response"] = _response_json(await self.provider._answer(request, f"fakebatch-{cid}"))
                except LLMRefusalError as e:
                    result["refusal"] = {"message": str(e), "raw": e.raw, "stop_reason": e.stop_reason}
                except LLMError as e:
                    kind, result = ResultKind.ERRORED, {"type": "errored", "error": {"message": str(e)}}
            elif kind is ResultKind.ERRORED:
                result["error"] = {"type": "scripted_error", "message": "scripted batch error"}
            yield BatchItem(cid, kind, {"custom_id": cid, "result": result})

    def response(self, item: BatchItem, request: LLMRequest) -> LLMResponse:
        """The scripted answer in a succeeded item.

        Raises:
            BatchItemFailed: the item did not succeed; LLMRefusalError: the script answered with a refusal.
        """
        result = (item.raw or {}).get("result") or {}
        if item.kind is not ResultKind.SUCCEEDED:
            why = (result.get("error") or {}).get("message") or (item.raw or {}).get("error") or ""
            raise BatchItemFailed(f"fake batch request {item.custom_id} {item.kind}" + (f": {why}" if why else ""),
                                  kind=item.kind)
        refusal = result.get("refusal")
        if refusal is not None:
            raise LLMRefusalError(refusal.get("message") or "refused", raw=refusal.get("raw"),
                                  stop_reason=refusal.get("stop_reason"))
        r = result.get("response") or {}
        u = r.get("usage")
        return LLMResponse(text=r.get("text") or "", model=r.get("model") or request.model,
                           usage=None if u is None else Usage(*u), request_id=r.get("request_id"),
                           stop_reason=r.get("stop_reason"), params_sent=dict(r.get("params_sent") or {}),
                           tool_calls=tuple(ToolCall.from_json(c) for c in r.get("tool_calls") or ()))

    async def cancel(self, batch_id: str) -> RemoteBatch:
        """Cancel: the batch ends at the next :meth:`retrieve` with every request ``cancelled``.

        Raises:
            LLMError: an unknown batch id.
        """
        self._batch(batch_id)["cancelled"] = True
        return RemoteBatch(id=batch_id, ended=False, status="canceling")

    def ids(self, batch_id: str | None = None) -> list[str]:
        """The ``custom_id`` of every line submitted (of one batch, or of all), in submission order."""
        return [ln["custom_id"] for b, v in self.batches.items() if batch_id in (None, b) for ln in v["lines"]]
