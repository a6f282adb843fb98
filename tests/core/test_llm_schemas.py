"""Output schemas in each provider's supported subset (issue 12 item 5).

Every prompt benchwright sends is run through its real step or judge (so a new prompt cannot be missed); each
schema it sends, converted for a provider, must pass that provider's documented rules (core/llm/schemas.py encodes
them), and what goes over the wire to Anthropic through the real SDK has no unsupported keyword. The bounds the
conversion removes stay in the descriptions and in benchwright's own validation."""

from __future__ import annotations

import json
import tempfile

import anthropic
import httpx2
import pytest

from benchwright.core.agent.loop import run_agent
from benchwright.core.agent.model import AgentSettings
from benchwright.core.agent.workspace import Workspace
from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.curation import STEP_FUNCTIONS, PairInput, StepSettings, generate_checklist
from benchwright.core.doc_chunks import DocChunk
from benchwright.core.generation import (
    ChunkInput,
    audit,
    derive_question,
    gold_by_agent,
    gold_from_documentation,
)
from benchwright.core.judging import (
    JUDGES,
    AnswerSettings,
    FailureInput,
    JudgeInput,
    JudgeSettings,
    classify_failure,
    direct_answer,
    run_judge,
)
from benchwright.core.llm import LLMClient, LLMRequest, MemoryLedger, ScriptedProvider
from benchwright.core.llm._sdk_common import check_tools
from benchwright.core.llm.anthropic_provider import AnthropicProvider
from benchwright.core.llm.anthropic_provider import wire_schema as anthropic_wire
from benchwright.core.llm.base import LLMConfigError
from benchwright.core.llm.openai_provider import OpenAIProvider
from benchwright.core.llm.openai_provider import wire_schema as openai_wire
from benchwright.core.llm.prompts import template_ids
from benchwright.core.llm.schemas import (
    anthropic_schema_problems,
    openai_strict_problems,
    openai_strict_schema,
)
from benchwright.core.models import QAPair, SourceRef
from benchwright.core.taxonomy_labels import label_node, leaf_request

CHECKLIST = Checklist(items=[ChecklistItem(key_point="Names app.py", weight=9, rubric=binary_rubric(9)),
                             clarity_item()])


# ------------------------------------------------------------------------------------------ the rules
def _obj(**props) -> dict:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def test_anthropic_rules_follow_its_documented_limitations():
    assert anthropic_schema_problems(_obj(a={"type": "string"}, n={"type": "integer"})) == []
    assert anthropic_schema_problems(_obj(a={"type": "array", "items": {"type": "string"}, "minItems": 1})) == []
    bad = {
        "minimum": _obj(n={"type": "integer", "minimum": 1}),
        "maximum": _obj(n={"type": "number", "maximum": 1}),
        "multipleOf": _obj(n={"type": "number", "multipleOf": 2}),
        "minLength": _obj(s={"type": "string", "minLength": 2}),
        "maxItems": _obj(a={"type": "array", "items": {"type": "string"}, "maxItems": 5}),
        "minItems 2": _obj(a={"type": "array", "items": {"type": "string"}, "minItems": 2}),
        "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}},
        "complex enum": _obj(e={"enum": [{"a": 1}]}),
        "external": _obj(r={"$ref": "http://example.com/s.json"}),
        "recursive": {**_obj(n={"$ref": "#/$defs/node"}),
                      "$defs": {"node": _obj(next={"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]})}},
        "format": _obj(s={"type": "string", "format": "regex"}),
    }
    for what, schema in bad.items():
        assert anthropic_schema_problems(schema), what


def test_openai_strict_rules_follow_its_documented_limits():
    ok = _obj(n={"type": "integer", "minimum": 1, "maximum": 10},
              a={"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 5})
    assert openai_strict_problems(ok) == []  # OpenAI enforces these bounds itself
    assert openai_strict_problems({**ok, "required": ["n"]})  # every property required
    assert openai_strict_problems({k: v for k, v in ok.items() if k != "additionalProperties"})
    assert openai_strict_problems({**ok, "allOf": [ok]})
    assert openai_strict_problems({"anyOf": [ok, ok]})  # the root is an object
    deep = {"type": "string"}
    for _ in range(11):
        deep = _obj(x=deep)
    assert any("nesting" in p for p in openai_strict_problems(deep))
    assert any("properties" in p for p in openai_strict_problems(_obj(**{f"p{i}": {"type": "string"}
                                                                         for i in range(5001)})))
    assert any("enum" in p for p in openai_strict_problems(_obj(e={"type": "integer", "enum": list(range(1001))})))


def test_openai_conversion_moves_unsupported_keywords_into_the_description():
    schema = {"type": "object", "properties": {"s": {"type": "string", "minLength": 3, "description": "A name."}},
              "required": ["s"]}
    out = openai_strict_schema(schema)
    assert out["additionalProperties"] is False and openai_strict_problems(out) == []
    assert out["properties"]["s"] == {"type": "string", "description": "A name.\n\n{minLength: 3}"}
    assert "minLength" in schema["properties"]["s"]  # the caller's schema is untouched


# ------------------------------------------------------------------------------------------ every prompt
def _answer(req: LLMRequest):
    if req.template_id == "link_summary":  # so enrich goes on to its integration prompt
        return {"rationale": "about it", "relevant": True, "summary": "It says app.py."}
    return "{}" if req.json_schema is not None else "An answer."


async def _every_request() -> list[LLMRequest]:
    """The requests of every step, judge, the direct answer, the failure-mode classifier and the agent (first
    turns)."""
    provider = ScriptedProvider(_answer)
    client = LLMClient(provider, MemoryLedger())
    pair = QAPair(id="p1", question="Where is it defined? See https://example.com/doc", reference_answer="In app.py.",
                  repository="flask", source=SourceRef(format="jsonl", file="x.jsonl", line=1))
    item = PairInput(pair=pair, question=pair.question, answer=pair.reference_answer, checklist=CHECKLIST,
                     links={"https://example.com/doc": "The docs page."})
    for fn in STEP_FUNCTIONS.values():
        await fn(client, item, StepSettings("g"))
    answer = JudgeInput("ans_1", "p1", "flask", pair.question, "In app.py.", "In app.py", CHECKLIST, 1)
    for judge in JUDGES:
        await run_judge(judge, client, answer, JudgeSettings("j"))
    await direct_answer(client, "p1", "flask", pair.question, AnswerSettings("m"))
    await classify_failure(client, FailureInput("ans_1", "p1", "flask", pair.question, "In app.py.", "elsewhere",
                                                "1: 0/9", 0.1), JudgeSettings("j"))
    with tempfile.TemporaryDirectory() as repo:
        await run_agent(client, Workspace(repo), pair.question, AgentSettings("m", max_turns=1), qa_pair_id="p1")
        # answer-first generation (Code-QA-Bench Methodology 3 and 4): the gold agent's first turn, then each step
        chunk_item = ChunkInput(DocChunk("dc_1", "flask", "README.md", 1, 3, "markdown", "T", "Text.", {}, (), 0.5),
                                "code-derivable", gold="In app.py.")
        await gold_by_agent(client, Workspace(repo), chunk_item, AgentSettings("m", max_turns=1))
    for step in (gold_from_documentation, audit, derive_question):
        await step(client, chunk_item, StepSettings("g"))
    # the taxonomy's label of a leaf (SWE-QA-Pro §2.1)
    await label_node(client, "1.1", leaf_request("g", {}, ["How are routes matched?"], scope="flask"))
    return [c for c in provider.calls if len(c.messages) == 1]


@pytest.fixture(scope="module")
def every_request():
    import asyncio

    return asyncio.run(_every_request())


def test_every_packaged_prompt_is_covered(every_request):
    assert {r.template_id for r in every_request} == set(template_ids())


def test_every_schema_converts_to_both_providers_rules(every_request):
    schemas = {r.template_id: r.json_schema for r in every_request if r.json_schema is not None}
    assert len(schemas) == len(template_ids()) - 3  # all but the free-text direct answer and the agents (tools)
    assert "taxonomy_label" in schemas
    refused_as_is = {t for t, s in schemas.items() if anthropic_schema_problems(s)}
    assert {"judge_swe_qa_pro", "judge_code_qa_bench", "checklist"} <= refused_as_is  # what Anthropic refused
    for template, schema in schemas.items():
        assert anthropic_schema_problems(anthropic_wire(schema)) == [], template
        wire, strict = openai_wire(schema)
        assert strict and openai_strict_problems(wire) == [], template


def test_removed_bounds_are_in_the_descriptions(every_request):
    by_template = {r.template_id: r.json_schema for r in every_request}
    swe = anthropic_wire(by_template["judge_swe_qa_pro"])
    score = swe["properties"]["correctness"]["properties"]["score"]
    assert "minimum" not in score and "{minimum: 1, maximum: 10}" in score["description"]
    cqb = anthropic_wire(by_template["judge_code_qa_bench"])
    assert "{minimum: 0, maximum: 5}" in cqb["properties"]["accuracy"]["properties"]["score"]["description"]
    items = anthropic_wire(by_template["checklist"])["properties"]["items"]
    assert "maxItems" not in items and "minItems" not in items
    assert "minItems: 2" in items["description"] and "maxItems: 5" in items["description"]
    assert items["items"]["properties"]["rubric"]["minItems"] == 1  # supported: kept


def test_a_schema_anthropic_cannot_take_stops_before_any_request():
    recursive = {**_obj(n={"$ref": "#/$defs/node"}),
                 "$defs": {"node": _obj(next={"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]})}}
    with pytest.raises(LLMConfigError, match=r"cannot be sent to Anthropic.*recursive"):
        anthropic_wire(recursive, "tree")


# ------------------------------------------------------------------------------------------ the wire
def _subschemas(schema):
    if isinstance(schema, dict):
        yield schema
        for key in ("properties", "$defs"):
            for sub in (schema.get(key) or {}).values():
                yield from _subschemas(sub)
        for sub in schema.get("anyOf") or []:
            yield from _subschemas(sub)
        yield from _subschemas(schema.get("items"))


class Server:
    def __init__(self, reply):
        self.reply, self.bodies = reply, []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        return self.reply(len(self.bodies))


def _anthropic_reply(text: str) -> httpx2.Response:
    return httpx2.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
                                      "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                                      "usage": {"input_tokens": 1, "output_tokens": 1}})


async def test_anthropic_wire_bodies_have_no_unsupported_keyword(every_request, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    server = Server(lambda n: _anthropic_reply("{}"))
    provider = AnthropicProvider(base_url="http://llm.test", max_retries=0,
                                 http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)))
    sent = [r for r in every_request if r.json_schema is not None]
    for r in sent:
        await provider.complete(r)
    await provider.aclose()
    assert len(server.bodies) == len(sent)
    for r, body in zip(sent, server.bodies, strict=True):
        schema = body["output_config"]["format"]["schema"]
        assert anthropic_schema_problems(schema) == [], r.template_id
        for sub in _subschemas(schema):
            assert not {"minimum", "maximum", "maxItems", "minLength", "maxLength"} & sub.keys(), r.template_id
            assert sub.get("minItems", 0) in (0, 1), r.template_id
            assert sub.get("type") != "object" or sub.get("additionalProperties") is False, r.template_id


async def test_openai_wire_bodies_are_strict(every_request, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    bodies = []

    def handler(request):
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "c", "object": "chat.completion", "created": 1, "model": "gpt-x",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{}"}}]})

    provider = OpenAIProvider(base_url="http://llm.test/v1", max_retries=0,
                              http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
    for r in (r for r in every_request if r.json_schema is not None):
        await provider.complete(r)
        fmt = bodies[-1]["response_format"]["json_schema"]
        assert fmt["strict"] is True and openai_strict_problems(fmt["schema"]) == [], r.template_id
        assert fmt["schema"] == r.json_schema  # OpenAI takes our bounds as they are
    await provider.aclose()


async def test_bounds_anthropic_cannot_enforce_are_still_validated(monkeypatch):
    """A checklist of one item (minItems 2, dropped from the wire) is invalid output: the repair turn names it."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    one = {"items": [{"kind": "knowledge", "key_point": "Names app.py", "weight": 10,
                      "rubric": [{"score": 10, "criterion": "names it"}, {"score": 0, "criterion": "does not"}]}]}
    two = {"items": [{"kind": "knowledge", "key_point": "Names app.py", "weight": 9,
                      "rubric": [{"score": 9, "criterion": "names it"}, {"score": 0, "criterion": "does not"}]},
                     {"kind": "clarity", "key_point": "Clear", "weight": 1,
                      "rubric": [{"score": 1, "criterion": "clear"}, {"score": 0, "criterion": "unclear"}]}]}
    server = Server(lambda n: _anthropic_reply(json.dumps(one if n == 1 else two)))
    provider = AnthropicProvider(base_url="http://llm.test", max_retries=0,
                                 http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)))
    pair = QAPair(id="p1", question="Where?", reference_answer="In app.py.", repository="flask",
                  source=SourceRef(format="jsonl", file="x.jsonl", line=1))
    out = await generate_checklist(LLMClient(provider, MemoryLedger()),
                                   PairInput(pair=pair, question="Where?", answer="In app.py."), StepSettings("c"))
    await provider.aclose()
    assert out.ok and len(out.checklist.items) == 2
    assert len(server.bodies) == 2
    repair = server.bodies[1]["messages"][-1]["content"]
    assert "items: " in repair and "is too short" in repair  # jsonschema's minItems message, on the full schema
    assert callable(anthropic.transform_schema)  # the SDK's own helper does the conversion (anthropic >= 2)


def test_every_tool_meets_both_providers_rules(every_request):
    tools = list({t.name: t for r in every_request for t in r.tools}.values())  # two agents share the tools
    assert {t.name for t in tools} >= {"search", "view", "command_line", "finish"}
    check_tools("p", tools)  # names and object schemas, as both APIs want them
    for t in tools:
        schema, strict = openai_wire(t.parameters)
        assert strict and schema == t.parameters, t.name  # goes strict to OpenAI, unchanged


def test_a_schema_is_converted_once_and_again_after_it_changed_in_place():
    from benchwright.core.llm.openai_provider import wire_schema as openai_wire
    from benchwright.core.llm.schemas import per_schema

    calls: list[dict] = []

    @per_schema
    def convert(schema: dict, flag: str = "x") -> dict:
        calls.append(schema)
        return {"converted": json.dumps(schema, sort_keys=True), "flag": flag}

    schema = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0}}}
    first = convert(schema)
    assert convert(schema) is first and len(calls) == 1  # the same schema: converted once
    assert convert(schema, "y")["flag"] == "y" and convert(schema, flag="z")["flag"] == "z" and len(calls) == 3
    schema["properties"]["score"]["minimum"] = 1  # changed in place: converted again
    again = convert(schema)
    assert again is not first and '"minimum": 1' in again["converted"] and len(calls) == 4
    twin = json.loads(json.dumps(schema))  # an equal schema in another dict: converted for itself
    assert convert(twin) == again and len(calls) == 5

    def failing(schema: dict) -> dict:
        calls.append(schema)
        raise ValueError("no")

    failing_once = per_schema(failing)
    for _ in range(2):
        with pytest.raises(ValueError):
            failing_once(schema)
    assert len(calls) == 7  # an error is not cached

    sent, strict = openai_wire(schema)
    assert openai_wire(schema) == (sent, strict) and openai_wire(schema)[0] is sent
