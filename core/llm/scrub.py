"""API keys out of everything a provider or a model sends back, in every spelling a decoder would read as the key.

A server or a model may echo a key: literally, or written with JSON ``\\u`` escapes (``sk-\\u0061bc...``), which
a plain search of the raw text misses and the JSON parser then decodes. :func:`scrub_text` removes a key however
its characters are spelled (each one literal, ``\\uXXXX`` or, for ``/``, ``\\/``) without decoding anything else;
:func:`scrub_value` removes it from every string of a parsed value (keys of objects too). The client applies both
before anything is parsed, stored or shown; the release writer applies :func:`scrub_value` again as a last line of
defence (docs/llm.md "Keys").
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from typing import Any

SECRET_ENV_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_ADMIN_KEY")
"""Environment variables whose values are always treated as secrets."""
SECRET_ENV_SUFFIXES = ("_API_KEY", "_ADMIN_KEY", "_AUTH_TOKEN", "_ACCESS_TOKEN")
"""Any other environment variable named with one of these endings holds a secret too (``GROQ_API_KEY``)."""
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
"""A variable whose name contains one of these (any case) may hold a credential."""
SECRET_PREFIXES = ("ANTHROPIC_", "OPENAI_")
"""A variable whose name starts with one of these (any case) may hold a credential."""


def is_secret_name(name: str) -> bool:
    """True for environment variable names that may hold credentials (:data:`SECRET_MARKERS`,
    :data:`SECRET_PREFIXES`): their values are scrubbed from what is stored and never passed to probe commands."""
    upper = name.upper()
    return any(marker in upper for marker in SECRET_MARKERS) or upper.startswith(SECRET_PREFIXES)


MIN_SECRET_CHARS = 12
"""Shorter values of variables found by their name's shape are not secrets worth hunting (and would blank out
ordinary words)."""
MIN_KEY_CHARS = 8
"""The provider's own key and the values of :data:`SECRET_ENV_VARS` are keys by definition: scrubbed from this
length (a test key such as ``sk-test-123`` is 11 characters), so only placeholders like ``EMPTY`` stay."""
MASK = "***"


def env_secrets(extra: Iterable[str | None] = ()) -> list[str]:
    """The secret values to scrub: ``extra`` (e.g. a provider's own key) and the values of :data:`SECRET_ENV_VARS`,
    at least :data:`MIN_KEY_CHARS` long, and the values of every variable ending in one of
    :data:`SECRET_ENV_SUFFIXES`, at least :data:`MIN_SECRET_CHARS` long (surrounding white space dropped), longest
    first, without repeats. Variables :func:`is_secret_name` names count too (``DB_PASSWORD``, ``GH_TOKEN``): the
    same rule that keeps them from probe commands."""
    keys = [*extra, *(os.environ.get(v) for v in SECRET_ENV_VARS)]
    values = [v for k, v in os.environ.items() if k.upper().endswith(SECRET_ENV_SUFFIXES) or is_secret_name(k)]
    found = {v.strip() for v in keys if isinstance(v, str) and len(v.strip()) >= MIN_KEY_CHARS}
    found |= {v.strip() for v in values if isinstance(v, str) and len(v.strip()) >= MIN_SECRET_CHARS}
    return sorted(found, key=lambda s: (-len(s), s))


def _char_pattern(c: str) -> str:
    code = ord(c)
    alts = [re.escape(c)]
    if code < 0x10000:
        alts.append("\\\\u" + "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in f"{code:04x}"))
    if c == "/":
        alts.append(r"\\/")
    return "(?:" + "|".join(alts) + ")"


@functools.lru_cache(maxsize=64)
def _spelled(secret: str) -> re.Pattern:
    """A pattern matching ``secret`` with any of its characters written as a JSON ``\\u`` escape."""
    return re.compile("".join(_char_pattern(c) for c in secret))


def scrub_text(text: str | None, secrets: Iterable[str]) -> str | None:
    """``text`` with every secret replaced by ``***``, literal or spelled with JSON ``\\u`` escapes (so the JSON
    parser cannot decode it back). None and empty text are returned as they are."""
    if not text:
        return text
    escaped = "\\u" in text or "\\/" in text
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
        if escaped:
            text = _spelled(secret).sub(MASK, text)
    return text


def scrub_value(value: Any, secrets: Iterable[str]) -> tuple[Any, bool]:
    """``(clean, changed)``: a parsed value (dicts, lists, tuples, strings, scalars, nested) with :func:`scrub_text`
    applied to every string, dictionary keys included; containers are copied only where something changed."""
    secrets = list(secrets)
    if not secrets:
        return value, False
    if isinstance(value, str):
        clean = scrub_text(value, secrets)
        return clean, clean != value
    if isinstance(value, dict):
        out, changed = {}, False
        for k, v in value.items():
            k2, ck = scrub_value(k, secrets)
            v2, cv = scrub_value(v, secrets)
            out[k2] = v2
            changed = changed or ck or cv
        return (out, True) if changed else (value, False)
    if isinstance(value, list | tuple):
        pairs = [scrub_value(v, secrets) for v in value]
        if not any(c for _, c in pairs):
            return value, False
        items = [v for v, _ in pairs]
        return (tuple(items) if isinstance(value, tuple) else items), True
    return value, False
