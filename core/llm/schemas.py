"""Each provider's supported JSON-Schema subset for native structured output, as checkers and a converter.

benchwright's output schemas carry bounds (``minimum``/``maximum`` on scores, ``minItems``/``maxItems`` on a
checklist's items) that not every provider's constrained decoding accepts. A provider sends a schema converted to
its subset; the full schema stays the one ``LLMClient`` validates the parsed output against (jsonschema, then the
caller's checks), so a bound the provider could not enforce is still enforced: a violation is invalid output and
gets the repair turn. This module imports no SDK (the Anthropic conversion is the SDK's own ``transform_schema``,
called in :mod:`.anthropic_provider`).

Sources (read 2026):

- Anthropic, "Structured outputs", section "JSON Schema limitations" (platform.claude.com/docs/en/build-with-claude/
  structured-outputs): supported are the basic types, ``enum`` of strings/numbers/bools/nulls, ``const``,
  ``anyOf`` and ``allOf`` (not with ``$ref``), local ``$ref``/``$defs``/``definitions``, ``default``, ``required``,
  ``additionalProperties`` (must be ``false`` for objects), string ``format`` from a fixed list, ``pattern``
  (simple regular expressions), array ``minItems`` of 0 or 1. Not supported: recursive schemas, complex enum values,
  external ``$ref``, numerical constraints (``minimum``, ``maximum``, ``multipleOf``...), string constraints
  (``minLength``, ``maxLength``), array constraints beyond ``minItems`` 0/1, ``additionalProperties`` other than
  ``false``. An unsupported feature is an HTTP 400.
- OpenAI, "Structured Outputs", section "Supported schemas" (platform.openai.com/docs/guides/structured-outputs),
  for ``strict: true``: types string, number, boolean, integer, object, array, null, ``enum``, ``anyOf``; string
  ``pattern`` and ``format`` (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid); number
  ``multipleOf``, ``maximum``, ``exclusiveMaximum``, ``minimum``, ``exclusiveMinimum``; array ``minItems``,
  ``maxItems``; ``$defs``/``$ref`` (recursion allowed). The root is an object, not ``anyOf``; every property is
  ``required``; every object sets ``additionalProperties: false``; at most 5000 object properties and 10 levels of
  nesting; at most 120,000 characters of property names, definition names, enum and const values; at most 1000
  enum values. Not supported: ``allOf``, ``not``, ``if``/``then``/``else``, ``dependentRequired``,
  ``dependentSchemas``, ``patternProperties``.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

ANTHROPIC_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "allOf", "$ref",
    "$defs", "definitions", "default", "description", "title", "format", "pattern", "minItems",
})
"""Keywords Anthropic's structured outputs accept (with the value rules :func:`anthropic_schema_problems` checks)."""
ANTHROPIC_STRING_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4",
                                      "ipv6", "uuid"})

OPENAI_STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref", "$defs",
    "definitions", "description", "title", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum",
    "minimum", "exclusiveMinimum", "minItems", "maxItems",
})
"""Keywords OpenAI's strict structured outputs accept."""
OPENAI_STRING_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6",
                                   "uuid"})
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_NESTING = 10
OPENAI_MAX_STRING_CHARS = 120_000
OPENAI_MAX_ENUM_VALUES = 1000

TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")


def _children(schema: dict, path: str) -> Iterator[tuple[str, Any]]:
    for key in _SUBSCHEMA_MAPS:
        sub = schema.get(key)
        if isinstance(sub, dict):
            for name, s in sub.items():
                yield f"{path}/{key}/{name}", s
    for key in _SUBSCHEMA_LISTS:
        sub = schema.get(key)
        if isinstance(sub, list):
            for i, s in enumerate(sub):
                yield f"{path}/{key}/{i}", s
    for key in ("items", "additionalProperties", "not", "if", "then", "else"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            yield f"{path}/{key}", sub


def _walk(schema: Any, path: str = "#") -> Iterator[tuple[str, dict]]:
    """Every (sub)schema object of ``schema`` with its JSON-pointer-like path, depth first."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for p, s in _children(schema, path):
        yield from _walk(s, p)


def _types(schema: dict) -> set[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    return set()


def _is_object(schema: dict) -> bool:
    return "object" in _types(schema) or "properties" in schema


def _recursive_refs(schema: dict) -> list[str]:
    """Definitions that reach themselves through ``$ref`` (and refs to the root ``#``)."""
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        for name, s in (schema.get(key) or {}).items():
            defs[f"#/{key}/{name}"] = s
    out = [p for p, s in _walk(schema) if s.get("$ref") == "#"]

    def refs(s: Any) -> set[str]:
        return {x.get("$ref") for _, x in _walk(s) if isinstance(x.get("$ref"), str)}

    for start in defs:
        seen, todo = set(), list(refs(defs[start]))
        while todo:
            r = todo.pop()
            if r == start:
                out.append(start)
                break
            if r in seen or r not in defs:
                continue
            seen.add(r)
            todo.extend(refs(defs[r]))
    return out


def anthropic_schema_problems(schema: Any) -> list[str]:
    """Every way ``schema`` breaks Anthropic's documented structured-output rules (module docstring), each with
    its path; empty when Anthropic accepts it."""
    if not isinstance(schema, dict):
        return ["#: the schema must be a JSON object"]
    problems: list[str] = []
    for path, s in _walk(schema):
        for key in sorted(set(s) - ANTHROPIC_KEYWORDS):
            problems.append(f"{path}: '{key}' is not supported")
        bad_types = _types(s) - TYPES
        if bad_types:
            problems.append(f"{path}: type {sorted(bad_types)} is not a JSON Schema type")
        if "enum" in s and (not isinstance(s["enum"], list)
                            or any(isinstance(v, dict | list) for v in s["enum"])):
            problems.append(f"{path}: enum values must be strings, numbers, booleans or null")
        if _is_object(s) and s.get("additionalProperties") is not False:
            problems.append(f"{path}: objects must set additionalProperties to false")
        if "minItems" in s and s["minItems"] not in (0, 1):
            problems.append(f"{path}: minItems {s['minItems']!r} is not supported (only 0 or 1)")
        if "format" in s and s["format"] not in ANTHROPIC_STRING_FORMATS:
            problems.append(f"{path}: string format {s['format']!r} is not supported")
        ref = s.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            problems.append(f"{path}: external $ref {ref!r} is not supported")
        if "allOf" in s and any(isinstance(x, dict) and "$ref" in x for x in s["allOf"]):
            problems.append(f"{path}: allOf with $ref is not supported")
    problems += [f"{p}: recursive schemas are not supported" for p in _recursive_refs(schema)]
    return problems


def _object_depth(schema: Any) -> int:
    if not isinstance(schema, dict):
        return 0
    below = max((_object_depth(s) for _, s in _children(schema, "")), default=0)
    return below + (1 if _is_object(schema) else 0)


def openai_strict_problems(schema: Any) -> list[str]:
    """Every way ``schema`` breaks OpenAI's documented strict structured-output rules (module docstring), each
    with its path; empty when it can be sent with ``strict: true``."""
    if not isinstance(schema, dict):
        return ["#: the schema must be a JSON object"]
    problems: list[str] = []
    if not _is_object(schema) or "anyOf" in schema:
        problems.append("#: the root must be an object, not anyOf")
    n_props = n_enum = chars = 0
    for path, s in _walk(schema):
        for key in sorted(set(s) - OPENAI_STRICT_KEYWORDS):
            problems.append(f"{path}: '{key}' is not supported in strict mode")
        bad_types = _types(s) - TYPES
        if bad_types:
            problems.append(f"{path}: type {sorted(bad_types)} is not a JSON Schema type")
        props = s.get("properties")
        if _is_object(s):
            if s.get("additionalProperties") is not False:
                problems.append(f"{path}: objects must set additionalProperties to false")
            missing = sorted(set(props or {}) - set(s.get("required") or []))
            if missing:
                problems.append(f"{path}: every property must be required (not: {', '.join(missing)})")
        if isinstance(props, dict):
            n_props += len(props)
            chars += sum(len(k) for k in props)
        for key in ("$defs", "definitions"):
            chars += sum(len(k) for k in (s.get(key) or {}))
        if isinstance(s.get("enum"), list):
            n_enum += len(s["enum"])
            chars += sum(len(str(v)) for v in s["enum"])
        if "const" in s:
            chars += len(str(s["const"]))
        if "format" in s and s["format"] not in OPENAI_STRING_FORMATS:
            problems.append(f"{path}: string format {s['format']!r} is not supported")
    if n_props > OPENAI_MAX_PROPERTIES:
        problems.append(f"#: {n_props} object properties (at most {OPENAI_MAX_PROPERTIES})")
    depth = _object_depth(schema)
    if depth > OPENAI_MAX_NESTING:
        problems.append(f"#: {depth} levels of object nesting (at most {OPENAI_MAX_NESTING})")
    if n_enum > OPENAI_MAX_ENUM_VALUES:
        problems.append(f"#: {n_enum} enum values (at most {OPENAI_MAX_ENUM_VALUES})")
    if chars > OPENAI_MAX_STRING_CHARS:
        problems.append(f"#: {chars:,} characters of names and enum/const values (at most "
                        f"{OPENAI_MAX_STRING_CHARS:,})")
    return problems


def _describe(schema: dict, moved: dict) -> None:
    """Append the constraints in ``moved`` to ``schema``'s description, so the model still reads them."""
    note = "{" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in moved.items()) + "}"
    schema["description"] = f"{schema['description']}\n\n{note}" if schema.get("description") else note


def openai_strict_schema(schema: dict) -> dict:
    """A copy of ``schema`` in OpenAI's strict subset where it can be: every object gets
    ``additionalProperties: false``, keywords strict mode does not support are removed and written into the
    description (``{minLength: 3}``), ``oneOf`` becomes ``anyOf``. Properties that are not required stay so (making
    them required would change what a valid answer is), so such a schema still fails
    :func:`openai_strict_problems` and is sent with ``strict: false``. ``schema`` itself is not modified."""
    out = copy.deepcopy(schema)
    for _, s in list(_walk(out)):
        if "oneOf" in s and "anyOf" not in s:
            s["anyOf"] = s.pop("oneOf")
        moved = {k: s.pop(k) for k in sorted(set(s) - OPENAI_STRICT_KEYWORDS)
                 if k not in ("not", "if", "then", "else", "patternProperties")}
        if moved:
            _describe(s, moved)
        if _is_object(s) and "additionalProperties" not in s:
            s["additionalProperties"] = False
    return out


_R = TypeVar("_R")
PER_SCHEMA_CACHE_SIZE = 128
"""Distinct schemas :func:`per_schema` keeps the result of, per function (then it starts again)."""


def per_schema(fn: Callable[..., _R]) -> Callable[..., _R]:
    """Cache ``fn(schema, *args)`` per schema: a request's schema is usually a module constant sent with every call
    of a job, and converting and checking it cost more per request (0.4-0.8 ms) than the rest of building it.

    The cache (``wrapper.cache``) is keyed by ``id(schema)`` (with the other, hashable, arguments: a tuple), and
    holds a deep copy of the schema as it was: a schema changed in place since, or a new dict at a recycled address,
    fails the equality check and is converted again. The value returned is the one cached: callers treat it as
    read-only (the SDKs copy what they send). Exceptions are not cached.
    """
    cache: dict[Any, tuple[Any, Any, Any]] = {}

    @functools.wraps(fn)
    def wrapper(schema: Any, *args: Any, **kwargs: Any) -> _R:
        key = (id(schema), *args, *sorted(kwargs.items())) if args or kwargs else id(schema)
        hit = cache.get(key)
        if hit is not None and hit[0] is schema and hit[1] == schema:
            return hit[2]
        value = fn(schema, *args, **kwargs)
        if len(cache) >= PER_SCHEMA_CACHE_SIZE:
            cache.clear()
        cache[key] = (schema, copy.deepcopy(schema), value)
        return value

    wrapper.cache = cache  # type: ignore[attr-defined]
    wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
    return wrapper
