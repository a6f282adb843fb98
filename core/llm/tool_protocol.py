"""The prompt protocol for tools: tool calling as plain text, for endpoints without native tools.

ARCHITECTURE.md "LLM layer"; ``tools = "prompt"`` in ``[providers.NAME]`` (:class:`~.base.ToolProtocol`). Local
OpenAI-compatible servers (llama.cpp's ``llama_cpp.server`` without a function-calling chat format, small models)
either reject the ``tools`` field or ignore it. For them :class:`~.client.LLMClient` sends the tools in the system
prompt (:func:`render_system`), replays earlier tool calls and tool results as plain text turns
(:func:`render_messages`), and reads the reply's blocks back into :class:`~.base.ToolCall` values
(:func:`parse_reply`). The protocol follows SWE-QA-Pro's agent prompt (§3.1, ``<tool_call>`` JSON blocks and one
``<finish>`` block); the wording here is ours.

The reply format::

    some reasoning (the turn's text)
    <tool_call>{"name": "search", "arguments": {"query": "def run"}}</tool_call>
    <tool_call>{"name": "view", "arguments": {"path": "src/app.py"}}</tool_call>

or, when done, exactly one ``<finish>the final answer</finish>`` block.

Parsing rules (:func:`parse_reply`):

- every ``<tool_call>JSON</tool_call>`` whose JSON is an object with a string ``name`` becomes a ToolCall (a list
  of such objects, as some chat templates write, one ToolCall each); its
  ``arguments`` is the object's ``arguments`` (an object, or a string holding a JSON object; absent: ``{}``).
  ``arguments`` of any other kind gives ``arguments={}`` and ``arguments_raw`` = that text (a value that is not
  text: as JSON), as for native calls (:func:`read_arguments`).
- a ``<tool_call>`` block that is not such an object (bad JSON, no ``name``), or that is never closed, is a
  **malformed call**: a ToolCall with ``name=""`` and ``arguments_raw`` = the block's text as the model wrote it
  (tags included), so the caller can answer it with an error instead of losing it.
- ``<finish>TEXT</finish>`` becomes a ToolCall named ``finish`` with ``{"answer": TEXT}`` (stripped), exactly as a
  native ``finish`` tool call; the text inside is taken literally (a ``<tool_call>`` in it is part of the answer).
  A ``<finish>`` never closed is a malformed call too.
- ids are ``call_1``, ``call_2``... in the order of the blocks; the text outside every block, stripped, is the
  turn's text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .base import ChatMessage, ToolCall, ToolSpec

FINISH = "finish"
"""The name of the finish call (native ``finish`` tool and ``<finish>`` block alike)."""

_OPEN = re.compile(r"<(tool_call|finish)>")
_CLOSE = {"tool_call": "</tool_call>", "finish": "</finish>"}
_OUR_TAGS = re.compile(r"<(/?)(tool_call|tool_result|finish)>", re.I)
_FENCE_TAG = re.compile(r"[A-Za-z0-9_-]*")


@dataclass(frozen=True)
class ParsedReply:
    """A reply read under the prompt protocol.

    Attributes:
        text: the text outside every block, stripped.
        tool_calls: the calls in block order (malformed ones with ``name == ""``; a finish block as ``finish``).
    """

    text: str
    tool_calls: tuple[ToolCall, ...]

    @property
    def malformed(self) -> tuple[ToolCall, ...]:
        """The calls that could not be read (``name == ""``; their ``arguments_raw`` is the block's text)."""
        return tuple(c for c in self.tool_calls if not c.name)


def render_system(system: str | None, tools: Sequence[ToolSpec]) -> str:
    """The system prompt with the tool instructions appended: each tool's name, description and JSON Schema of its
    arguments, how to call tools and how to finish. A tool named ``finish`` is not listed as a tool: its
    description goes with the ``<finish>`` block (it is the block).

    Returns the instructions alone when ``system`` is empty.
    """
    finish = next((t for t in tools if t.name == FINISH), None)
    listed = [t for t in tools if t.name != FINISH]
    parts = ["# Tools", "",
             "You can call the tools below. A tool call is a block of this form, on its own lines:", "",
             '<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>', "",
             "The block holds one JSON object: the tool's name and its arguments, which must follow the tool's "
             "JSON Schema. You may make several calls in one reply, one block each. Stop after your calls: their "
             "results come back in the next message, each in a <tool_result> block. Never write a "
             "<tool_result> block yourself.", "",
             "When you have the final answer, give it with `finish`: write exactly one block of this form (not a "
             "<tool_call>), and make no other call in that reply:", "",
             "<finish>", "your final answer", "</finish>", ""]
    if finish and finish.description.strip():
        parts += [f"finish: {finish.description.strip()}", ""]
    if listed:
        parts += ["Available tools:", ""]
        for t in listed:
            parts += [f"## {t.name}", t.description.strip(),
                      "Arguments (JSON Schema): " + json.dumps(t.parameters, ensure_ascii=False, sort_keys=True), ""]
    instructions = "\n".join(parts).rstrip() + "\n"
    return f"{system.rstrip()}\n\n{instructions}" if system and system.strip() else instructions


def render_call(call: ToolCall) -> str:
    """One call as the model writes it: ``<finish>answer</finish>`` for ``finish``, the block text as it came for
    a malformed call, else ``<tool_call>{"name", "arguments"}</tool_call>``."""
    if not call.name:
        return call.arguments_raw or ""
    if call.name == FINISH and set(call.arguments) == {"answer"} and isinstance(call.arguments["answer"], str):
        return f"<finish>\n{call.arguments['answer']}\n</finish>"
    args = call.arguments if call.arguments_raw is None else call.arguments_raw
    return "<tool_call>" + json.dumps({"name": call.name, "arguments": args}, ensure_ascii=False) + "</tool_call>"


def render_calls(text: str, calls: Sequence[ToolCall]) -> str:
    """An assistant turn as plain text: its text, then one block per call."""
    return "\n".join(p for p in (text.strip(), *(render_call(c) for c in calls)) if p)


def defuse(text: str) -> str:
    """``text`` with the protocol's own tags (``<tool_call>``, ``<tool_result>``, ``<finish>``, opening or closing)
    written as ``<\\tag>`` / ``<\\/tag>``, so a tool's output (a file that mentions them) cannot end its result
    block early or pose as a call."""
    return _OUR_TAGS.sub(lambda m: f"<\\{m.group(1)}{m.group(2)}>", text)


def render_result(message: ChatMessage) -> str:
    """A ``tool`` turn as a ``<tool_result>`` block naming the call (id and tool); the output is defused."""
    attrs = "".join(f' {k}="{v}"' for k, v in (("name", message.name), ("id", message.tool_call_id)) if v)
    return f"<tool_result{attrs}>\n{defuse(message.content)}\n</tool_result>"


def render_messages(messages: Sequence[ChatMessage]) -> tuple[ChatMessage, ...]:
    """The conversation as plain ``user``/``assistant`` text turns: an assistant turn's calls become blocks
    (:func:`render_calls`), a ``tool`` turn becomes a user turn holding its ``<tool_result>`` block, and
    consecutive turns of the same role are joined (blank line between), so roles alternate."""
    out: list[ChatMessage] = []
    for m in messages:
        if m.role == "tool":
            role, text = "user", render_result(m)
        elif m.role == "assistant" and m.tool_calls:
            role, text = "assistant", render_calls(m.content, m.tool_calls)
        else:
            role, text = m.role, m.content
        if out and out[-1].role == role:
            out[-1] = ChatMessage(role, f"{out[-1].content}\n\n{text}")
        else:
            out.append(ChatMessage(role, text))
    return tuple(out)


def read_arguments(call_id: str, name: str, value: Any) -> ToolCall:
    """A :class:`~.base.ToolCall` from a model's arguments (OpenAI sends their text, Anthropic the object, the
    prompt protocol either): a JSON object is ``arguments``; anything else (bad JSON, a list, a number, empty text)
    gives ``arguments={}`` with ``arguments_raw`` = the text as sent (a value that is not text: as JSON)."""
    if isinstance(value, dict):
        return ToolCall(id=call_id, name=name, arguments=value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return ToolCall(id=call_id, name=name, arguments=parsed)
        return ToolCall(id=call_id, name=name, arguments_raw=value)
    return ToolCall(id=call_id, name=name, arguments_raw=json.dumps(value, ensure_ascii=False, default=str))


def _named(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("name"), str) and bool(value["name"].strip())


def _unfence(text: str) -> str:
    """``text`` without a Markdown code fence around it (```` ```json ... ``` ````), else as it is. Done by hand, in
    linear time: a regular expression with a lazy body between white space and the closing fence backtracks
    cubically on a long run of white space, so a hostile reply would stall the parse."""
    if len(text) < 6 or not (text.startswith("```") and text.endswith("```")):
        return text
    inner = text[3:-3]
    return inner[_FENCE_TAG.match(inner).end():].strip()


def _read_calls(body: str, n: int, raw: str) -> list[ToolCall]:
    """The call(s) in one ``<tool_call>`` block's ``body``, ids from ``call_N`` on (``raw``: the block with its
    tags, kept when malformed). A JSON list of call objects (as some chat templates write) is
    one call per element."""
    text = _unfence(body.strip())
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    values = value if isinstance(value, list) and value else [value]
    if not all(_named(v) for v in values):
        return [ToolCall(id=f"call_{n}", name="", arguments_raw=raw)]
    return [read_arguments(f"call_{n + i}", v["name"].strip(), v.get("arguments", {})) for i, v in enumerate(values)]


def parse_reply(text: str) -> ParsedReply:
    """The calls and the outside text of a reply written under the protocol (rules in the module docstring).

    Never raises: what cannot be read comes back as a malformed call (``name == ""``).
    """
    outside: list[str] = []
    calls: list[ToolCall] = []
    pos = 0
    while True:
        m = _OPEN.search(text, pos)
        if m is None:
            outside.append(text[pos:])
            break
        outside.append(text[pos:m.start()])
        kind, n = m.group(1), len(calls) + 1
        end = text.find(_CLOSE[kind], m.end())
        if end < 0:  # never closed: kept whole, as the model wrote it
            calls.append(ToolCall(id=f"call_{n}", name="", arguments_raw=text[m.start():]))
            break
        body, pos = text[m.end():end], end + len(_CLOSE[kind])
        if kind == FINISH:
            calls.append(ToolCall(id=f"call_{n}", name=FINISH, arguments={"answer": body.strip()}))
        else:
            calls.extend(_read_calls(body, n, text[m.start():pos]))
    return ParsedReply(text="".join(outside).strip(), tool_calls=tuple(calls))
