"""A fast yes-or-maybe check of a parsed output against its JSON Schema (the online path's hot spot).

``jsonschema`` builds a validator object per subschema and value it descends into: for a checklist that was most
of a call's own cost (about 1 ms, more than the ledger insert). :func:`compile_check` turns a schema written in the
subset benchwright's output schemas use into plain Python closures that answer "valid" in a few microseconds.

The check is one-sided on purpose: True means the value is valid under JSON Schema 2020-12 as ``jsonschema``'s
``Draft202012Validator`` judges it (no format checker); False means "not known to be valid", and the caller asks
``jsonschema`` itself, which gives the answer and the error messages (:func:`benchwright.core.llm.client.
schema_problems`). A schema with any keyword outside the subset compiles to None (``jsonschema`` does it all).

The subset: ``type`` (a name or a list), ``properties``, ``required``, ``additionalProperties`` (a boolean or a
schema), ``items`` (a boolean or a schema, without ``prefixItems``), ``enum`` and ``const`` of strings,
``minItems`` / ``maxItems``, ``minLength`` / ``maxLength``, ``minimum`` / ``maximum`` / ``exclusiveMinimum`` /
``exclusiveMaximum``, ``anyOf``; annotations (``title``, ``description``, ``default``, ``examples``,
``$comment``, ``format``) are ignored, as ``jsonschema`` ignores them without a format checker. Values must be
what ``json.loads`` makes (dict, list, str, int, float, bool, None): anything else is "not known".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]
"""``value -> True`` when it is certainly valid (False: ask ``jsonschema``)."""

ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "format", "deprecated",
                         "readOnly", "writeOnly"})
"""Keywords that assert nothing (``format`` asserts only with a format checker, which benchwright does not use)."""
KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "const",
                      "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
                      "exclusiveMaximum", "anyOf"})
"""The asserting keywords :func:`compile_check` implements."""


def _true(_: Any) -> bool:
    return True


def _false(_: Any) -> bool:
    return False


def _is_number(v: Any) -> bool:
    return type(v) is int or type(v) is float


_TYPE_TESTS: dict[str, Check] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "number": _is_number,
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
}
"""JSON Schema's types over ``json.loads`` values (a bool is no number; 1.0 is an integer, as in ``jsonschema``)."""


def _is_bound(x: Any) -> bool:
    return type(x) is int or type(x) is float


def _is_count(x: Any) -> bool:
    return type(x) is int and x >= 0


def compile_check(schema: Any) -> Check | None:
    """The fast check of ``schema`` (see the module docstring), or None when the schema uses anything outside the
    subset (or a keyword's value is not of the expected shape)."""
    if schema is True:
        return _true
    if schema is False:
        return _false
    if type(schema) is not dict or not schema.keys() <= KEYWORDS | ANNOTATIONS:
        return None
    tests: list[Check] = []
    if "type" in schema:
        names = schema["type"] if type(schema["type"]) is list else [schema["type"]]
        if not names or not all(type(n) is str and n in _TYPE_TESTS for n in names):
            return None
        alts = [_TYPE_TESTS[n] for n in names]
        tests.append(alts[0] if len(alts) == 1 else (lambda v, alts=alts: any(t(v) for t in alts)))
    if "enum" in schema:
        values = schema["enum"]
        if type(values) is not list or not all(type(x) is str for x in values):
            return None
        allowed = frozenset(values)
        tests.append(lambda v: type(v) is str and v in allowed)
    if "const" in schema:
        if type(schema["const"]) is not str:
            return None
        const = schema["const"]
        tests.append(lambda v: type(v) is str and v == const)
    if "anyOf" in schema:
        if type(schema["anyOf"]) is not list or not schema["anyOf"]:
            return None
        subs = [compile_check(s) for s in schema["anyOf"]]
        if any(s is None for s in subs):
            return None
        tests.append(lambda v: any(s(v) for s in subs))
    obj = _object_check(schema)
    arr = _array_check(schema)
    text = _string_check(schema)
    num = _number_check(schema)
    if None in (obj, arr, text, num):
        return None
    if obj is not _true:
        tests.append(lambda v: type(v) is not dict or obj(v))
    if arr is not _true:
        tests.append(lambda v: type(v) is not list or arr(v))
    if text is not _true:
        tests.append(lambda v: type(v) is not str or text(v))
    if num is not _true:
        tests.append(lambda v: not _is_number(v) or num(v))
    known = (dict, list, str, int, float, bool, type(None))

    if len(tests) == 1:
        only = tests[0]
        return lambda v: type(v) in known and only(v)
    return lambda v: type(v) in known and all(t(v) for t in tests)


def _object_check(schema: dict) -> Check | None:
    props_schema = schema.get("properties", {})
    required = schema.get("required", [])
    extra_schema = schema.get("additionalProperties", True)
    if type(props_schema) is not dict or type(required) is not list or not all(type(r) is str for r in required):
        return None
    props = {name: compile_check(s) for name, s in props_schema.items()}
    extra = compile_check(extra_schema)
    if extra is None or any(c is None for c in props.values()):
        return None
    if not props and not required and extra is _true:
        return _true

    def check(v: dict) -> bool:
        for name in required:
            if name not in v:
                return False
        for key, value in v.items():
            sub = props.get(key)
            if sub is None:
                if not extra(value):
                    return False
            elif not sub(value):
                return False
        return True

    return check


def _array_check(schema: dict) -> Check | None:
    items = compile_check(schema.get("items", True))
    lo, hi = schema.get("minItems", 0), schema.get("maxItems")
    if items is None or not _is_count(lo) or (hi is not None and not _is_count(hi)):
        return None
    if items is _true and lo == 0 and hi is None:
        return _true

    def check(v: list) -> bool:
        n = len(v)
        if n < lo or (hi is not None and n > hi):
            return False
        return items is _true or all(items(x) for x in v)

    return check


def _string_check(schema: dict) -> Check | None:
    lo, hi = schema.get("minLength", 0), schema.get("maxLength")
    if not _is_count(lo) or (hi is not None and not _is_count(hi)):
        return None
    if lo == 0 and hi is None:
        return _true
    return lambda v: len(v) >= lo and (hi is None or len(v) <= hi)


def _number_check(schema: dict) -> Check | None:
    bounds = [(k, schema[k]) for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in schema]
    if not all(_is_bound(b) for _, b in bounds):
        return None
    if not bounds:
        return _true
    ops: dict[str, Callable[[Any, Any], bool]] = {
        "minimum": lambda v, b: v >= b, "maximum": lambda v, b: v <= b,
        "exclusiveMinimum": lambda v, b: v > b, "exclusiveMaximum": lambda v, b: v < b,
    }
    pairs = [(ops[k], b) for k, b in bounds]
    return lambda v: all(op(v, b) for op, b in pairs)
