"""Canonical JSON made by orjson where it gives the standard library's bytes (issue 19 item 2: the online path
hashes each request and stores each checklist in this form): the same bytes for every value, hence unchanged
request hashes and stored checklists."""

from __future__ import annotations

import hashlib
import json

import pytest

from benchwright.core.canonical import canonical_json, canonical_json_bytes
from benchwright.core.checklist import Checklist, ChecklistItem, RubricTier, clarity_item
from benchwright.core.llm.base import ChatMessage, LLMRequest


def stdlib(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


VALUES = [
    {"b": 1, "a": {"d": [1, 2, {"z": None, "y": True}], "c": "x"}},
    {"text": "".join(chr(i) for i in range(0x800)) + "\u2028\u2029\ufeff\U0001f600"},  # every control and escape
    {"floats": [0.0, 0.1, 1e-05, 1e16, 1.5e300, -2.5, float("nan"), float("inf")]},  # spelled differently by orjson
    {"big": 2**70, "neg": -(2**64)},  # beyond orjson's 64 bits
    {2: "int key", 1: "another"},  # orjson refuses non-str keys
    ("tuple", ["list"], ()),
    {"lone": "a\ud800b"},  # a lone surrogate: json.dumps keeps it
    [],
    "plain",
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_canonical_json_is_the_standard_librarys_text(value):
    assert canonical_json(value) == stdlib(value)


@pytest.mark.parametrize("value", [v for v in VALUES if "lone" not in v], ids=range(len(VALUES) - 1))
def test_canonical_json_bytes_are_its_utf8(value):
    assert canonical_json_bytes(value) == stdlib(value).encode("utf-8")


def test_a_lone_surrogate_cannot_be_encoded_and_what_json_refuses_raises_type_error():
    with pytest.raises(UnicodeEncodeError):
        canonical_json_bytes({"lone": "\udc80"})
    with pytest.raises(TypeError):
        canonical_json({"when": object()})
    with pytest.raises(TypeError):
        canonical_json_bytes({"when": __import__("datetime").date(2026, 1, 1)})  # orjson would write it


def test_request_hash_is_the_sha256_of_the_standard_librarys_text():
    req = LLMRequest(model="m", system="Sys \u00e9", messages=(ChatMessage("user", "Q \U0001f600\n\t\x01"),),
                     json_schema={"type": "object", "properties": {"b": {"minimum": 0.5}, "a": {"type": "string"}}},
                     params={"temperature": 0.2, "max_tokens": 100})
    payload = {"provider": "openai", "base_url": "http://x", "model": "m", "system": "Sys \u00e9",
               "messages": [m.as_json() for m in req.messages], "schema": req.json_schema, "params": req.params}
    assert req.request_hash("openai", "http://x/") == hashlib.sha256(stdlib(payload).encode()).hexdigest()
    no_floats = LLMRequest(model="m", messages=req.messages, params={"max_tokens": 100})
    payload.update(system=None, schema=None, params={"max_tokens": 100})
    assert no_floats.request_hash("openai", "http://x") == hashlib.sha256(stdlib(payload).encode()).hexdigest()


def test_checklist_to_json_is_unchanged():
    cl = Checklist(items=[ChecklistItem(key_point="K\u00e9y \"q\" \\", weight=9,
                                        rubric=[RubricTier(score=0, criterion="No."), RubricTier(score=9, criterion="Yes.")]),
                          clarity_item()])
    assert cl.to_json() == stdlib(cl.model_dump(mode="json"))
