"""Canonical JSON: the one form in which values are stored and hashed (sorted keys at every level, no spaces,
non-ASCII characters as they are).

:func:`canonical_json_bytes` is what ``json.dumps(value, sort_keys=True, ensure_ascii=False,
separators=(",", ":")).encode("utf-8")`` gives, byte for byte, made by orjson when it gives the same bytes (about
ten times faster: the online path hashes each request and stores each checklist in this form) and by the standard
library otherwise: for floats (the two spell some differently, e.g. ``1e-05`` / ``1e-5``, ``NaN`` / ``null``),
strings with lone surrogates and integers beyond 64 bits (orjson refuses them). Stored hashes therefore do not
change.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
"""Sorted keys; what the standard library refuses (datetimes, dataclasses) goes to it, which raises."""

def _orjson_safe(value: Any) -> bool:
    """True when ``value`` holds no float (where orjson's spelling may differ from the standard library's)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            return False
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return True


def canonical_json_bytes(value: Any) -> bytes:
    """``value`` (JSON types: dict, list, tuple, str, int, float, bool, None) as canonical JSON, UTF-8 encoded.

    Raises:
        TypeError: ``value`` holds something JSON cannot (from :func:`json.dumps`).
        UnicodeEncodeError: a string holds a lone surrogate (as ``str.encode`` raises).
    """
    return _canonical(value).encode("utf-8") if not _orjson_safe(value) else _orjson_or_json(value)


def canonical_json(value: Any) -> str:
    """:func:`canonical_json_bytes` as text (a lone surrogate stays as it is, as ``json.dumps`` leaves it).

    Raises:
        TypeError: ``value`` holds something JSON cannot (from :func:`json.dumps`).
    """
    if _orjson_safe(value):
        try:
            return orjson.dumps(value, option=_OPTIONS).decode("utf-8")
        except orjson.JSONEncodeError:
            pass
    return _canonical(value)


def _orjson_or_json(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return _canonical(value).encode("utf-8")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
