"""Making text from data and from LLMs safe to show literally in a terminal."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _picture(m: re.Match) -> str:
    code = ord(m.group())
    if code < 0x20:
        return chr(0x2400 + code)  # U+2400 CONTROL PICTURES: ESC -> ␛
    if code == 0x7F:
        return "\u2421"  # ␡
    if code > 0xFF:  # a bidirectional embedding, override or isolate: it would reorder what follows it
        return f"\\u{code:04x}"
    return f"\\x{code:02x}"


def printable(text: str) -> str:
    """``text`` with every control character except newline and tab made visible.

    C0 controls become their Unicode control pictures (ESC shows as ``␛``), DEL as ``␡``, C1 controls
    as ``\\x9b``-style escapes, so a terminal interprets none of them. Carriage returns become ``␍``. The
    bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), which would make the terminal
    show the text after them in another order than it is ("Trojan Source"), become ``\\u202e``-style escapes.
    Everything else, including Rich markup such as ``[bold]``, is left as it is: callers must also
    display the result without markup parsing.
    """
    return _CONTROL.sub(_picture, text)


# ------------------------------------------------------------------------------------------ lone surrogates
REPLACEMENT_CHARACTER = "\ufffd"
"""What a lone surrogate becomes (U+FFFD REPLACEMENT CHARACTER, as a UTF-8 decoder writes for a bad byte)."""

def printable_line(text: str) -> str:
    """``text`` as :func:`printable` shows it, with newline and tab also made visible (``␊``, ``␉``), so a value
    quoted in a one-line message (an error naming what the user typed) stays on one line and shows as typed."""
    return printable(text).replace("\n", "\u240a").replace("\t", "\u2409")


def has_surrogates(text: str) -> bool:
    """True when ``text`` holds a surrogate code point (U+D800-U+DFFF): text that cannot be encoded as UTF-8,
    so neither SQLite, a UTF-8 file nor a terminal accepts it. (Encoding is the fast test: a C loop, several
    times quicker than a regular-expression scan of non-ASCII text.)"""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def repair_text(text: str) -> tuple[str, bool]:
    """``(clean, repaired)``: ``text`` with every lone surrogate replaced by U+FFFD.

    A high surrogate followed by a low one (two code points, as ``"\\ud83d\\ude00"`` written in Python source)
    becomes the one character they encode (😀); every other surrogate (a JSON ``\\udc81`` escape, a
    ``surrogateescape``-decoded byte) becomes :data:`REPLACEMENT_CHARACTER`. ``repaired`` is True when anything
    changed. Text without surrogates is returned as is (one scan).
    """
    if not has_surrogates(text):
        return text, False
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace"), True


def repair_value(value):
    """``(clean, repaired)``: a parsed JSON/YAML value (dicts, lists, tuples, strings, scalars, nested) with
    :func:`repair_text` applied to every string, dictionary keys included. Containers are copied only where
    something changed; ``repaired`` is True when any string was."""
    if isinstance(value, str):
        return repair_text(value)
    if isinstance(value, dict):
        out, changed = {}, False
        for k, v in value.items():
            k2, ck = repair_value(k)
            v2, cv = repair_value(v)
            out[k2] = v2
            changed = changed or ck or cv
        return (out, True) if changed else (value, False)
    if isinstance(value, list | tuple):
        items, changed = [], False
        for v in value:
            v2, c = repair_value(v)
            items.append(v2)
            changed = changed or c
        if not changed:
            return value, False
        return (tuple(items) if isinstance(value, tuple) else items), True
    return value, False


_JSON_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_JSON_ESCAPE_RUN = re.compile(r"(?<!\\)((?:\\\\)*)(\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                              r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2})")


def repair_json_text(text: str) -> tuple[str, bool]:
    """``(clean, repaired)``: JSON text whose ``\\u`` escapes of lone surrogates (``\\udc81``, a high surrogate
    not followed by a low one) are rewritten as ``\\ufffd``; escaped pairs (``\\ud83d\\ude00``), escaped
    backslashes (``\\\\udc81`` is the text ``\\udc81``) and everything else are kept byte for byte. Raw
    surrogate code points are repaired too (:func:`repair_text`). Used on JSON stored as text (a JSON column
    written with ``ensure_ascii``), so reading it back never yields a lone surrogate."""
    text, repaired = repair_text(text)
    if ("\\ud" not in text and "\\uD" not in text) or _JSON_SURROGATE_ESCAPE.search(text) is None:
        return text, repaired
    changed = False

    def fix(m: re.Match) -> str:
        nonlocal changed
        if len(m.group(2)) == 12:  # a proper pair
            return m.group(0)
        changed = True
        return m.group(1) + "\\ufffd"

    text = _JSON_ESCAPE_RUN.sub(fix, text)
    return text, repaired or changed


_IRREGULAR = {"batch": "batches", "entry": "entries", "query": "queries", "match": "matches", "category": "categories",
              "strata": "strata", "stratum": "strata", "analysis": "analyses", "index": "indexes"}


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun`` in the number ``count`` needs: ``plural(1, "pair")`` is ``1 pair``, ``plural(2,
    "pair")`` is ``2 pairs``, ``plural(3, "batch")`` is ``3 batches``; ``many`` gives another plural form
    (``plural(2, "Q&A pair")``, ``plural(0, "person", "people")``). The one rule for plural nouns in messages (CLI and app)."""
    if count == 1:
        return f"1 {noun}"
    if many is None:
        head, _, last = noun.rpartition(" ")
        many = (f"{head} " if head else "") + _IRREGULAR.get(last, f"{last}s")
    return f"{count} {many}"
