"""Calls with a ledger, a cache, a concurrency limit, structured-output validation and one repair attempt.

ARCHITECTURE.md "LLM layer": every call is recorded (:class:`CallRecord`); a finished call with the same
request hash and repeat index is reused, so rerunning a finished step makes no calls; errors, refusals and
invalid output are recorded but never reused. Invalid output gets one bounded repair turn that lists the
problems; if that fails too the result is ``invalid`` with the raw text and the reasons (never coerced).
Every answer's stop reason is recorded (normalized, and as the provider sent it); an output cut off at the token
budget is ``truncated`` (kept, never parsed as complete) and gets one retry with a larger budget
(:class:`TruncationPolicy`), not the repair turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import math
import re
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..models import utc_now
from ..text import repair_json_text, repair_text, repair_value
from . import fastcheck as _fastcheck
from . import scrub as _scrub
from . import tool_protocol as _tool_protocol
from .base import (
    CallStatus,
    ChatMessage,
    LLMError,
    LLMRefusalError,
    LLMRequest,
    LLMResponse,
    Provider,
    StopReason,
    StructuredOutput,
    ToolCall,
    ToolProtocol,
    Usage,
    normalize_stop_reason,
)
from .schemas import per_schema

Validator = Callable[[Any], list[str]]
"""Checks a parsed output beyond its JSON Schema; returns the problems (empty: valid)."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    batch_input: float | None = None
    batch_output: float | None = None
    """Batch API rates (``[prices."MODEL"]`` ``batch_input`` / ``batch_output``); None: :attr:`batch_discount` of
    the online rate."""
    batch_discount: float = 0.5
    """What a batch costs relative to online when no batch rate is given: 0.5, the discount both Anthropic's Message
    Batches and OpenAI's Batch API give (their pricing pages, 2026); cache reads and writes are discounted alike."""

    def cost(self, usage: Usage, *, batch: bool = False) -> float:
        """Dollars for ``usage``, at the batch rates when ``batch``."""
        if not batch:
            return (usage.input_tokens * self.input + usage.output_tokens * self.output
                    + usage.cache_read_tokens * self.cache_read + usage.cache_write_tokens * self.cache_write) / 1e6
        d = self.batch_discount
        inp = self.batch_input if self.batch_input is not None else self.input * d
        out = self.batch_output if self.batch_output is not None else self.output * d
        return (usage.input_tokens * inp + usage.output_tokens * out
                + usage.cache_read_tokens * self.cache_read * d + usage.cache_write_tokens * self.cache_write * d) / 1e6


@dataclass
class CallRecord:
    """One ledger row: one request sent to a provider (or one cancelled before its answer).

    ``request_hash`` is the hash of the *logical* request (the first attempt's); the repair turn is
    recorded under the same hash with ``attempt`` 2, so a repaired answer is reused on a rerun.
    ``http_attempts`` counts the SDK's retries (1 = no retry). ``cost_usd`` is None without a price.
    """

    provider: str
    provider_kind: str
    base_url: str | None
    requested_model: str
    returned_model: str | None
    template_id: str | None
    template_hash: str | None
    request_hash: str
    repeat: int
    attempt: int
    params: dict
    status: CallStatus
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    cost_usd: float | None = None
    request_id: str | None = None
    http_attempts: int = 1
    http_status: int | None = None
    output_text: str | None = None
    parsed: Any = None
    error: str | None = None
    purpose: str | None = None
    qa_pair_id: str | None = None
    created_at: str = field(default_factory=utc_now)
    id: int | None = None
    usage_missing: bool = False
    """The provider reported no token usage (tokens 0 and cost unknown)."""
    stop_reason: str | None = None
    """Why generation stopped, normalized (:class:`~.base.StopReason` value); None when no answer came back
    (HTTP error, timeout, cancelled)."""
    stop_reason_raw: str | None = None
    """The provider's own value (OpenAI ``finish_reason``, Anthropic ``stop_reason``), as sent."""
    text_repaired: bool = False
    """The provider's text held lone surrogates, stored as U+FFFD (the ledger flags the row in ``text_repairs``)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls the model made in this call (``llm_calls.tool_calls_json``), replayed from the cache."""
    batch_id: int | None = None
    """The project's batch (``llm_batches.id``) the answer came from; None for an online call."""
    batch_custom_id: str | None = None
    """The batch request (``llm_batch_requests.custom_id``) this row was made from (the store links them)."""
    reused: bool = False
    """Set by the ledger: another process had already recorded this batch result; ``id`` is that row's."""


@dataclass(frozen=True)
class TruncationPolicy:
    """What to do when an output is cut off at the token budget (stop reason ``length``): one retry with a
    larger budget (``[roles.ROLE]`` ``truncation_retry_factor`` / ``retry_max_tokens`` in benchwright.toml).

    Attributes:
        factor: the retry's ``max_tokens`` is the budget that was cut off times this (rounded up); default 2.
        retry_max_tokens: the retry's ``max_tokens`` outright (overrides ``factor``); None: use ``factor``.
        retry: False: no retry (the first truncated output is the result).
    """

    factor: float = 2.0
    retry_max_tokens: int | None = None
    retry: bool = True

    def retry_budget(self, cut_at: int | None, output_tokens: int = 0) -> int | None:
        """The ``max_tokens`` of the retry after an output cut off at ``cut_at`` tokens (None: the server's own
        default, then ``output_tokens``, what it produced, stands for it); None when there is no retry (off, no
        budget known and none configured, or the retry would not be larger)."""
        if not self.retry:
            return None
        base = cut_at or output_tokens or None
        if self.retry_max_tokens is not None:
            return self.retry_max_tokens if base is None or self.retry_max_tokens > base else None
        if base is None:
            return None
        nxt = math.ceil(base * self.factor)
        return nxt if nxt > base else None


class Ledger(Protocol):
    """Where calls are recorded and looked up (the project database implements it)."""

    def record_call(self, record: CallRecord) -> int:
        """Store ``record``; return its id."""
        ...

    def cached_call(self, request_hash: str, repeat: int) -> CallRecord | None:
        """The latest ``ok`` call with this request hash and repeat index, or None."""
        ...


class MemoryLedger:
    """A :class:`Ledger` in memory (tests, dry runs)."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []

    def record_call(self, record: CallRecord) -> int:
        """Append ``record``; ids start at 1."""
        record.id = len(self.records) + 1
        self.records.append(record)
        return record.id

    def cached_call(self, request_hash: str, repeat: int) -> CallRecord | None:
        """The latest ok record with this hash and repeat."""
        for r in reversed(self.records):
            if r.request_hash == request_hash and r.repeat == repeat and r.status is CallStatus.OK:
                return r
        return None


@dataclass
class CallResult:
    """What :meth:`LLMClient.call` returns.

    Attributes:
        status: ``ok`` (``parsed`` holds the output), ``invalid`` (``problems`` says why, ``text`` is the
            last raw output), ``truncated`` (the output was cut off at the token budget even after the retry
            with a larger one: ``text`` is the partial output, ``problems`` says at which budget), ``refused``
            or ``error`` (``error`` says why).
        cached: the output came from the ledger; ``calls`` is then 0.
        calls: requests sent (0 to 3: the first, one retry with a larger budget after a truncation, one repair
            turn after invalid output).
        call_ids: ledger ids of the calls made (or of the cached call).
    """

    status: CallStatus
    request_hash: str
    parsed: Any = None
    text: str | None = None
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    cached: bool = False
    calls: int = 0
    call_ids: list[int] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    model: str | None = None
    usage_missing: int = 0
    """Calls whose provider reported no token usage (their cost is unknown, not 0)."""
    cost_unknown: int = 0
    """Calls made whose cost is unknown (no price configured, no usage reported, or no answer); not in
    ``cost_usd``."""
    unanswered: int = 0
    """Of ``cost_unknown``, calls that got no answer (timeout, connection lost, cancelled in flight)."""
    stop_reason: str | None = None
    """The last call's normalized stop reason (:class:`~.base.StopReason` value), None without an answer."""
    max_tokens: int | None = None
    """The token budget the output was cut off at, when ``truncated`` (None: the server's own default)."""
    truncation_retried: bool = False
    """A truncated output was retried with a larger budget (once at most)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls the model made (a request with tools), in order; from the cache too."""

    @property
    def truncated(self) -> bool:
        """True when the output stayed cut off at the token budget (``status`` ``truncated``)."""
        return self.status is CallStatus.TRUNCATED

    @property
    def ok(self) -> bool:
        """True when the output is valid."""
        return self.status is CallStatus.OK


def cost_is_unknown(record: CallRecord) -> bool:
    """True when a call may have been billed but its cost is not known: no price is configured for its model,
    the provider reported no token usage, or no answer arrived (a timeout, a dropped connection, a cancel after
    the request went out: the provider may still bill it). A call the server answered with an error and no
    usage cost nothing, and that is known."""
    if record.cost_usd is not None:
        return False
    if record.usage_missing or (record.usage.input_tokens + record.usage.output_tokens) > 0:
        return True
    return call_unanswered(record)


def call_unanswered(record: CallRecord) -> bool:
    """True for a failed call that got no HTTP answer at all (timeout, connection lost, cancelled in flight)."""
    return record.status is not CallStatus.OK and record.http_status is None and not record.output_text


_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.S)


def parse_json_output(text: str) -> Any:
    """The JSON value in a model's output: the whole text, or a fenced block, or the outermost ``{...}``.

    Raises:
        ValueError: no JSON value could be read (the message says where parsing stopped).
    """
    candidates = [text]
    m = _FENCE.match(text)
    if m:
        candidates.append(m.group(1))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    err: json.JSONDecodeError | None = None
    for c in candidates:
        try:
            return json.loads(c)
        except json.JSONDecodeError as e:
            err = err or e
    raise ValueError(f"not JSON ({err.msg} at line {err.lineno} column {err.colno})" if err else "empty output")


@functools.lru_cache(maxsize=64)
def _validator(schema_json: str):
    import jsonschema

    schema = json.loads(schema_json)
    return jsonschema.Draft202012Validator(schema), _fastcheck.compile_check(schema)


@per_schema
def _validators(schema: dict):
    """(jsonschema validator, fast check) of ``schema``: looked up by the schema object first (a request's schema is
    usually a module constant, so its canonical JSON, the key of :func:`_validator`, need not be made for every
    call), then by its canonical JSON."""
    return _validator(json.dumps(schema, sort_keys=True))


_SCHEMA_CACHE = _validators.cache
"""``id(schema)`` -> (the schema, a copy of it as it was, :func:`_validator`'s pair) (:func:`~.schemas.per_schema`)."""


def schema_problems(value: Any, schema: dict) -> list[str]:
    """Every way ``value`` breaks ``schema`` (JSON Schema 2020-12), each with its JSON path.

    Validators are built once per distinct schema (building one costs more than validating). A value the fast
    check (:mod:`.fastcheck`) finds valid is not given to ``jsonschema`` at all; any other value is, so the
    problems and their wording are always ``jsonschema``'s."""
    validator, fast = _validators(schema)
    if fast is not None and fast(value):
        return []
    out = []
    for e in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        path = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        out.append(f"{path}: {e.message}")
    return out


def prompt_schema_instruction(schema: dict) -> str:
    """The text appended to the last user turn when an endpoint has no native JSON-Schema output."""
    return (
        "\n\nRespond with one JSON object and nothing else (no prose, no code fence). "
        "It must conform to this JSON Schema:\n" + json.dumps(schema, indent=1, ensure_ascii=False)
    )


MAX_OUTPUT_CHARS = 1_000_000
"""Longer output is invalid ("too long") and is neither parsed nor sent back in a repair turn."""
STORED_FAILURE_CHARS = 100_000
"""At most this much of a failed call's output is kept in the ledger (the rest is cut, and says so)."""
REPAIR_ECHO_CHARS = 20_000
"""At most this much of an invalid output goes back to the model in the repair turn."""
BATCH_JOB_CONCURRENCY = 1_000_000
"""Items in flight at once in batch mode (:attr:`LLMClient.job_concurrency`): all of them."""
SECRET_ENV_VARS = _scrub.SECRET_ENV_VARS
"""Environment variables whose values are removed from everything a provider returns, besides the provider's own
(and any variable named ``*_API_KEY``, ``*_AUTH_TOKEN``...: :func:`.scrub.env_secrets`)."""


def _cut(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit:,} more characters cut by benchwright]"


def _clean_text(text: str | None, secrets: list[str], record: CallRecord, *, json_text: bool = False) -> str | None:
    """Text from a provider, made safe to parse and store: keys scrubbed, lone surrogates replaced by U+FFFD (in
    JSON output also their ``\\u`` escapes); ``record.text_repaired`` is set when a surrogate was replaced."""
    text = _scrub.scrub_text(text, secrets)
    if not text:
        return text
    text, repaired = (repair_json_text if json_text else repair_text)(text)
    record.text_repaired = record.text_repaired or repaired
    return text


def truncation_reason(r: CallResult) -> str:
    """The reason stored with an outcome whose output stayed cut off at the token budget (status ``truncated``):
    the budget, and that a retry with a larger one was made (when it was)."""
    retried = " after one retry with a larger budget" if r.truncation_retried else ""
    return (f"truncated: {r.problems[-1] if r.problems else 'output cut off at the token budget'}{retried}; "
            "raise max_tokens (or truncation_retry_factor / retry_max_tokens) for the role in benchwright.toml")


def _budget_sent(response: LLMResponse) -> int | None:
    """The ``max_tokens`` the provider sent (under either OpenAI name), or None when none was sent."""
    for key in ("max_tokens", "max_completion_tokens"):
        v = response.params_sent.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def repair_message(problems: list[str]) -> str:
    """The repair turn: the problems, and the instruction to answer again (RepoProbe §4.1/§4.2 outputs)."""
    listed = "\n".join(f"- {p}" for p in problems[:20])
    return (
        "Your previous output cannot be used. Problems:\n" + listed +
        "\n\nAnswer again with the complete corrected JSON object only."
    )


class LLMClient:
    """A provider with the ledger, the cache, a concurrency limit and validation.

    Args:
        provider: the endpoint.
        ledger: where calls are recorded and looked up.
        prices: dollars per million tokens by model name (requested or returned); missing: no cost.
        truncation: what to do with an output cut off at the token budget (default: one retry at twice it).
    """

    def __init__(self, provider: Provider, ledger: Ledger, *, prices: dict[str, Price] | None = None,
                 truncation: TruncationPolicy | None = None):
        self.provider = provider
        self.ledger = ledger
        self.prices = prices or {}
        self.truncation = truncation or TruncationPolicy()
        # One limit per event loop (the CLI runs one loop per command; tests run many): keyed weakly by the loop
        # itself, so a new loop never inherits the limiter of a dead one.
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())
        self._secrets = _scrub.env_secrets([getattr(provider, "_key", None)])
        self.batch = None
        """A :class:`~.batch.Batcher` in batch mode (``--batch``): first attempts go through the provider's batch
        API; None: every call is online."""

    @property
    def job_concurrency(self) -> int:
        """How many items a job should run at once with this client: the provider's concurrency online; in batch
        mode every item (:data:`BATCH_JOB_CONCURRENCY`), so that their first requests are gathered into one batch."""
        return BATCH_JOB_CONCURRENCY if self.batch is not None else max(1, self.provider.concurrency)

    @property
    def secrets(self) -> list[str]:
        """The key values scrubbed from whatever comes back (the provider's own key and :func:`.scrub.env_secrets`);
        the agent scrubs its tool outputs with them too (a repository file that holds a key)."""
        return list(self._secrets)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = self._semaphores[loop] = asyncio.Semaphore(max(1, self.provider.concurrency))
        return sem

    def _price(self, requested: str, returned: str | None) -> Price | None:
        return self.prices.get(returned or "") or self.prices.get(requested)

    def request_hash(self, request: LLMRequest) -> str:
        """The cache key's hash for ``request`` on this provider: :meth:`~.base.LLMRequest.request_hash` of the
        logical request; under the prompt tool protocol (``tools = "prompt"``) that hash joined with the protocol's
        name, so turns made natively are not replayed for the text protocol or the other way round (a server that
        ignored native tools would otherwise replay its call-less replies after the switch)."""
        h = request.request_hash(self.provider.kind, self.provider.base_url)
        if self._prompt_tools(request):
            h = hashlib.sha256(f"{h}|tools={ToolProtocol.PROMPT}".encode()).hexdigest()
        return h

    async def call(self, request: LLMRequest, *, validate: Validator | None = None, repair: bool = True,
                   force: bool = False, purpose: str | None = None, qa_pair_id: str | None = None) -> CallResult:
        """Get a valid output for ``request``: from the cache, or from the provider (with one repair turn).

        Args:
            validate: extra checks on the parsed output (after the JSON Schema), e.g. checklist rules.
            repair: allow one repair turn after invalid output.
            force: ignore the cache (the new answer is recorded and becomes the cached one).
            purpose, qa_pair_id: recorded in the ledger (the step or judge, and the pair).

        Never raises for a provider failure: it comes back as a result with ``status`` error/refused.
        Cancellation (``asyncio.CancelledError``) is recorded as a cancelled call and re-raised.

        Raises:
            LLMConfigError: the provider is misconfigured (raised by the provider before any request).
        """
        h = self.request_hash(request)
        if not force:
            hit = self.ledger.cached_call(h, request.repeat)
            if hit is not None:
                # Under the prompt protocol the ledger keeps the reply as written; its text is what lies outside
                # the blocks, as on the first run (the calls are the stored ones).
                text = (_tool_protocol.parse_reply(hit.output_text or "").text if self._prompt_tools(request)
                        else hit.output_text)
                res = self._evaluate(request, text or "", validate)
                if not isinstance(res, list):
                    return CallResult(status=CallStatus.OK, request_hash=h, parsed=res, text=text,
                                      cached=True, call_ids=[hit.id] if hit.id else [], model=hit.returned_model,
                                      stop_reason=hit.stop_reason, tool_calls=tuple(hit.tool_calls))
        result = CallResult(status=CallStatus.ERROR, request_hash=h)
        wire = self._wire_request(request)
        repaired = retried = False
        attempt = 0
        while True:
            attempt += 1
            response, record = await self._send(wire, request, h, attempt, purpose, qa_pair_id)
            result.calls += 1
            result.usage = result.usage + record.usage
            result.cost_usd += record.cost_usd or 0.0
            result.usage_missing += int(record.usage_missing)
            result.cost_unknown += int(cost_is_unknown(record))
            result.unanswered += int(cost_is_unknown(record) and call_unanswered(record))
            result.model = record.returned_model or result.model
            result.stop_reason = record.stop_reason
            if response is None:  # error / refusal: recorded, not repaired
                result.call_ids.append(self.ledger.record_call(record))
                result.status, result.error, result.text = record.status, record.error, record.output_text
                return result
            if record.stop_reason == StopReason.LENGTH:
                # Cut off at the token budget: the partial output is kept (it was paid for) but never parsed as
                # complete, and the repair turn (for invalid JSON) does not apply: one retry with a larger budget.
                cut_at = _budget_sent(response)
                budget = f"max_tokens {cut_at}" if cut_at else "no max_tokens sent: the server's default"
                problem = (f"output cut off at the token budget ({budget}; {record.usage.output_tokens:,} output "
                           f"tokens; stop reason {record.stop_reason_raw})")
                record.status, record.error = CallStatus.TRUNCATED, problem
                record.output_text = _cut(record.output_text, MAX_OUTPUT_CHARS)
                record.tool_calls = ()  # a cut-off reply's calls are never run (nor kept: their text is cut too)
                result.call_ids.append(self.ledger.record_call(record))
                result.status, result.problems, result.max_tokens = CallStatus.TRUNCATED, [problem], cut_at
                result.text = _cut(response.text, MAX_OUTPUT_CHARS)
                nxt = None if retried else self.truncation.retry_budget(cut_at, record.usage.output_tokens)
                if nxt is None:
                    return result
                retried = result.truncation_retried = True
                wire = LLMRequest(**{**wire.__dict__, "params": {**wire.params, "max_tokens": nxt}})
                continue
            written = self._output_chars(request, response, record)
            if written > MAX_OUTPUT_CHARS:
                parsed = [f"output too long ({written:,} characters; at most {MAX_OUTPUT_CHARS:,})"]
            else:
                parsed = self._evaluate(request, response.text, validate)
            if isinstance(parsed, list):
                record.status, record.error = CallStatus.INVALID, "; ".join(parsed)[:2000]
                record.output_text = _cut(record.output_text, STORED_FAILURE_CHARS)
                record.tool_calls = ()  # an unusable reply's calls are neither run nor kept (they may be huge)
                result.call_ids.append(self.ledger.record_call(record))
                result.status, result.problems = CallStatus.INVALID, parsed
                result.text = _cut(response.text, STORED_FAILURE_CHARS)
                # The repair turn asks for a corrected JSON object: a request with tools has none to correct.
                if not repair or repaired or request.tools:
                    return result
                repaired = True
                wire = wire.with_messages((*wire.messages,
                                           ChatMessage("assistant", _cut(response.text, REPAIR_ECHO_CHARS)),
                                           ChatMessage("user", repair_message(parsed))))
                continue
            record.parsed = parsed
            result.call_ids.append(self.ledger.record_call(record))
            if record.reused:  # another process recorded this batch result first: it was paid for once, there
                result.calls -= 1
                result.cost_usd -= record.cost_usd or 0.0
                result.cached = result.calls == 0
            result.status, result.parsed, result.text, result.problems = CallStatus.OK, parsed, response.text, []
            result.tool_calls = record.tool_calls
            return result

    def _output_chars(self, request: LLMRequest, response: LLMResponse, record: CallRecord) -> int:
        """How much the model wrote: the reply as written (under the prompt protocol its call blocks are in it) and
        each native tool call's name and arguments, so a reply cannot pass the size limit by putting it all into a
        tool call."""
        n = len(record.output_text or "")
        if not self._prompt_tools(request):
            n += sum(len(c.name) + len(c.arguments_raw if c.arguments_raw is not None
                                       else json.dumps(c.arguments, ensure_ascii=False))
                     for c in record.tool_calls)
        return n

    def _clean_tool_call(self, call: ToolCall, record: CallRecord) -> ToolCall:
        """A tool call cleaned like the text: keys scrubbed, lone surrogates replaced, in name and arguments."""
        args, repaired = repair_value(call.arguments)  # a JSON \udc81 escape in the arguments decodes to one
        record.text_repaired = record.text_repaired or repaired
        args, _ = _scrub.scrub_value(args, self._secrets)
        clean = functools.partial(_clean_text, secrets=self._secrets, record=record)
        return ToolCall(id=clean(call.id) or "", name=clean(call.name) or "",
                        arguments=args if isinstance(args, dict) else {}, arguments_raw=clean(call.arguments_raw))

    def _prompt_tools(self, request: LLMRequest) -> bool:
        """True when ``request`` carries tools and the provider takes them through the prompt protocol
        (``tools = "prompt"``; a provider without a ``tools`` attribute is native)."""
        return bool(request.tools) and getattr(self.provider, "tools", ToolProtocol.NATIVE) == ToolProtocol.PROMPT

    def _wire_request(self, request: LLMRequest) -> LLMRequest:
        """What goes to the provider for the logical ``request`` (whose hash stays the cache key): under the prompt
        protocol the tools go into the system prompt and the calls and results into plain text turns
        (:mod:`.tool_protocol`); a schema the endpoint cannot enforce goes into the last user turn. A request with
        tools carries no schema (tools win)."""
        if request.tools:
            if not self._prompt_tools(request):
                return LLMRequest(**{**request.__dict__, "json_schema": None})
            return LLMRequest(**{**request.__dict__, "json_schema": None, "tools": (),
                                 "system": _tool_protocol.render_system(request.system, request.tools),
                                 "messages": _tool_protocol.render_messages(request.messages)})
        if request.json_schema is None or self.provider.structured_output is StructuredOutput.JSON_SCHEMA:
            return request
        msgs = list(request.messages)
        last = msgs[-1]
        msgs[-1] = ChatMessage(last.role, last.content + prompt_schema_instruction(request.json_schema))
        return LLMRequest(**{**request.__dict__, "messages": tuple(msgs), "json_schema": None})

    def _evaluate(self, request: LLMRequest, text: str, validate: Validator | None) -> Any:
        """The parsed output, or the list of its problems. Every string of a parsed value is scrubbed of keys and
        lone surrogates again after decoding (a cached output stored before either rule)."""
        if request.json_schema is None or request.tools:  # with tools the answer is text and calls (tools win)
            value: Any = text
        else:
            try:
                value = parse_json_output(text)
            except ValueError as e:
                return [str(e)]
            value, _ = _scrub.scrub_value(repair_value(value)[0], self._secrets)
            problems = schema_problems(value, request.json_schema)
            if problems:
                return problems
        if validate is not None:
            problems = validate(value)
            if problems:
                return list(problems)
        return value

    async def _send(self, wire: LLMRequest, logical: LLMRequest, h: str, attempt: int, purpose: str | None,
                    qa_pair_id: str | None) -> tuple[LLMResponse | None, CallRecord]:
        p = self.provider
        record = CallRecord(
            provider=p.name, provider_kind=p.kind, base_url=p.base_url, requested_model=logical.model,
            returned_model=None, template_id=logical.template_id, template_hash=logical.template_hash,
            request_hash=h, repeat=logical.repeat, attempt=attempt, params=dict(logical.params),
            status=CallStatus.OK, purpose=purpose, qa_pair_id=qa_pair_id,
        )
        batched = self.batch is not None and attempt == 1
        async with (contextlib.nullcontext() if batched else self._semaphore()):
            t0 = time.perf_counter()
            try:
                if batched:
                    # Through the batch API: a cancelled wait leaves the batch running (nothing to record).
                    response, record.batch_id, record.batch_custom_id = await self.batch.complete(
                        wire, request_hash=h, purpose=purpose, qa_pair_id=qa_pair_id, online=self._online)
                else:
                    response = await p.complete(wire)
            except asyncio.CancelledError:
                if batched:
                    raise
                record.status, record.error = CallStatus.CANCELLED, "cancelled before the answer arrived"
                record.latency_s = time.perf_counter() - t0
                self.ledger.record_call(record)
                raise
            except LLMError as e:
                record.latency_s = time.perf_counter() - t0
                if e.stop_reason is not None or isinstance(e, LLMRefusalError):
                    stop = normalize_stop_reason(e.stop_reason)
                    if isinstance(e, LLMRefusalError) and stop not in (StopReason.CONTENT_FILTER, StopReason.REFUSAL):
                        stop = StopReason.REFUSAL  # an OpenAI refusal message arrives with finish reason "stop"
                    record.stop_reason, record.stop_reason_raw = str(stop), e.stop_reason
                clean = functools.partial(_clean_text, secrets=self._secrets, record=record)
                record.status, record.error = e.status, clean(str(e))
                record.http_status, record.request_id = e.http_status, clean(e.request_id)
                record.output_text = _cut(clean(e.raw), STORED_FAILURE_CHARS)
                record.http_attempts = e.attempts
                record.returned_model = clean(e.model)
                if getattr(e, "batch_id", None) is not None:
                    record.batch_id, record.batch_custom_id = e.batch_id, e.batch_custom_id
                if e.usage is not None:
                    record.usage = e.usage
                    price = self._price(logical.model, e.model)
                    record.cost_usd = price.cost(e.usage, batch=record.batch_id is not None) if price else None
                elif isinstance(e, LLMRefusalError):
                    record.usage_missing = True  # a refusal is an answer (billed) that reported no usage: cost unknown
                return None, record
        # Whatever the server sent back is cleaned of API keys before anything is parsed, stored or shown.
        # Lone surrogates (which no store or terminal takes) become U+FFFD, and the record says so.
        response.text = _clean_text(response.text, self._secrets, record,
                                    json_text=logical.json_schema is not None) or ""
        response.model = _clean_text(response.model, self._secrets, record) or logical.model
        response.request_id = _clean_text(response.request_id, self._secrets, record)
        record.latency_s = response.latency_s or (time.perf_counter() - t0)
        record.returned_model = response.model
        record.usage = response.usage or Usage()
        record.usage_missing = response.usage is None
        record.request_id = response.request_id
        record.http_attempts = response.attempts
        record.params = dict(response.params_sent or logical.params)
        record.output_text = response.text
        record.stop_reason_raw = response.stop_reason
        record.stop_reason = str(normalize_stop_reason(response.stop_reason))
        if self._prompt_tools(logical):
            # The ledger keeps the reply as written (output_text); the turn's text is what lies outside the blocks.
            reply = _tool_protocol.parse_reply(response.text)
            response.text, response.tool_calls = reply.text, reply.tool_calls
        record.tool_calls = tuple(self._clean_tool_call(c, record) for c in response.tool_calls or ())
        price = self._price(logical.model, response.model)
        # Without reported usage the cost is unknown (None), never a silent $0.
        record.cost_usd = (price.cost(record.usage, batch=record.batch_id is not None)
                           if price and not record.usage_missing else None)
        return response, record

    async def _online(self, wire: LLMRequest) -> LLMResponse:
        """The online call of a batch-mode request (a retry of one that did not succeed in its batch), under the
        concurrency limit."""
        async with self._semaphore():
            return await self.provider.complete(wire)
