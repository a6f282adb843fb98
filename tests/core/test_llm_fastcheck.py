"""The fast schema check (core/llm/fastcheck.py) never calls an invalid value valid: checked against ``jsonschema``
on every output schema benchwright sends, with valid values and thousands of mutations of them, and on each
keyword's edge cases; and ``schema_problems`` keeps ``jsonschema``'s messages."""

from __future__ import annotations

import copy
import random

import jsonschema
import pytest

from benchwright.core import curation, generation, judging, taxonomy_labels
from benchwright.core.llm import client as client_module
from benchwright.core.llm.client import schema_problems
from benchwright.core.llm.fastcheck import compile_check

SCHEMAS = {
    "classify": curation.CLASSIFY_SCHEMA, "link": curation.LINK_SCHEMA, "rewrite": curation.REWRITE_SCHEMA,
    "refine": curation.REFINE_SCHEMA, "verify": curation.VERIFY_SCHEMA, "checklist": curation.CHECKLIST_SCHEMA,
    "gold_doc": generation.GOLD_DOC_SCHEMA, "audit": generation.AUDIT_SCHEMA, "question": generation.QUESTION_SCHEMA,
    "judge": judging.CHECKLIST_JUDGE_SCHEMA, "failure_mode": judging.FAILURE_MODE_SCHEMA,
    "label": taxonomy_labels.LABEL_SCHEMA,
}


def _valid(schema: dict, rng: random.Random):
    """A random value valid under ``schema`` (the subset the output schemas use)."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    t = schema.get("type")
    if t == "object":
        return {k: _valid(s, rng) for k, s in schema.get("properties", {}).items()}
    if t == "array":
        lo = schema.get("minItems", 0)
        n = rng.randint(lo, schema.get("maxItems", lo + 3))
        return [_valid(schema.get("items", {}), rng) for _ in range(n)]
    if t == "string":
        return rng.choice(["", "x", "a longer text ü"])
    if t == "integer":
        return rng.choice([0, 1, 5, -3])
    if t == "boolean":
        return rng.choice([True, False])
    return None


_ODD = [None, True, False, 0, 1, 1.0, 1.5, -1, "", "x", "knowledge", [], [1], {}, {"a": 1}, float("nan")]


def _mutate(value, rng: random.Random):
    """``value`` with one random change somewhere inside it (a value replaced, a key dropped or added, an item
    dropped or repeated)."""
    value = copy.deepcopy(value)
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(list(value))
        r = rng.random()
        if r < 0.2:
            del value[key]
        elif r < 0.35:
            value["extra"] = rng.choice(_ODD)
        elif r < 0.5:
            value[key] = rng.choice(_ODD)
        else:
            value[key] = _mutate(value[key], rng)
        return value
    if isinstance(value, list) and value and rng.random() < 0.7:
        i = rng.randrange(len(value))
        r = rng.random()
        if r < 0.2:
            del value[i]
        elif r < 0.4:
            value.append(copy.deepcopy(value[i]))
        else:
            value[i] = _mutate(value[i], rng)
        return value
    return rng.choice(_ODD)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_output_schema_has_a_fast_check_that_agrees_with_jsonschema(name):
    schema = SCHEMAS[name]
    fast = compile_check(schema)
    assert fast is not None, f"{name}: falls back to jsonschema (a keyword outside the fast subset)"
    reference = jsonschema.Draft202012Validator(schema)
    rng = random.Random(name)
    invalid_seen = 0
    for _ in range(150):
        good = _valid(schema, rng)
        assert reference.is_valid(good) and fast(good), good
        for _ in range(10):
            bad = _mutate(good, rng)
            if fast(bad):
                assert reference.is_valid(bad), (name, bad)
            invalid_seen += not reference.is_valid(bad)
    assert invalid_seen > 250  # the mutations do reach invalid values


@pytest.mark.parametrize("schema,value", [
    ({"type": "integer"}, 1.0), ({"type": "integer"}, True), ({"type": "number"}, False), ({"type": "integer"}, 1.5),
    ({"type": ["string", "null"]}, None), ({"type": ["string", "null"]}, 0),
    ({"enum": ["a", "b"]}, "a"), ({"enum": ["a", "b"]}, "c"), ({"const": "a"}, "a"), ({"const": "a"}, "b"),
    ({"minimum": 1}, True), ({"minimum": 1}, 0), ({"maximum": 1}, 1), ({"exclusiveMaximum": 1}, 1),
    ({"exclusiveMinimum": 0}, 0.5), ({"minimum": 0}, "text"),
    ({"minLength": 2}, "ab"), ({"minLength": 2}, "a"), ({"maxLength": 1}, "ab"), ({"minLength": 3}, 5),
    ({"minItems": 1}, []), ({"maxItems": 1}, [1, 2]), ({"minItems": 1}, "not an array"),
    ({"items": False}, []), ({"items": False}, [1]), ({"items": {"type": "string"}}, ["a", 1]),
    ({"required": ["a"]}, {}), ({"required": ["a"]}, []), ({"properties": {"a": {"type": "string"}}}, {"a": 1}),
    ({"additionalProperties": False, "properties": {"a": {}}}, {"a": 1, "b": 2}),
    ({"additionalProperties": {"type": "integer"}}, {"b": 2}), ({"additionalProperties": {"type": "integer"}}, {"b": "x"}),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 3), ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, []),
    ({"type": "string", "format": "email", "description": "d"}, "not an email"),
    ({"type": "object"}, (1, 2)), ({"type": "array"}, (1, 2)),
])
def test_each_keyword_edge_case_agrees_with_jsonschema(schema, value):
    fast = compile_check(schema)
    assert fast is not None
    expected = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert fast(value) is expected or (not fast(value) and expected)  # "not known" may only err toward jsonschema
    assert (schema_problems(value, schema) == []) is expected


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^a"}, {"$ref": "#/$defs/x", "$defs": {"x": {}}}, {"enum": [1, 2]},
    {"prefixItems": [{}]}, {"not": {}}, {"properties": {"a": {"oneOf": [{}]}}},
])
def test_a_keyword_outside_the_subset_leaves_it_all_to_jsonschema(schema):
    assert compile_check(schema) is None
    assert schema_problems("abc", schema) == [
        f"(top level): {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors("abc")]


def test_problems_are_jsonschemas_and_a_schema_changed_in_place_is_seen():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
              "additionalProperties": False}
    assert schema_problems({"n": 1}, schema) == []
    assert schema_problems({"n": "1", "x": 0}, schema) == [
        "(top level): Additional properties are not allowed ('x' was unexpected)", "n: '1' is not of type 'integer'"]
    schema["properties"]["n"]["minimum"] = 2  # the same object, changed: not answered from the old entry
    assert schema_problems({"n": 1}, schema) == ["n: 1 is less than the minimum of 2"]
    assert id(schema) in client_module._SCHEMA_CACHE
