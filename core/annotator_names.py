"""The one rule for annotator names (issue 20 follow-up): where a name enters (``--as``,
``BENCHWRIGHT_ANNOTATOR``, the user configuration, ``serve``'s login form and URLs) it passes through
:func:`annotator_name`, so a ``human:NAME`` label never holds a line break, an escape sequence or an invisible
character that would break tab-separated output or fool a reader.

Markup such as ``[bold]`` is allowed: names are displayed literally everywhere.
"""

from __future__ import annotations

import unicodedata

from .errors import BenchwrightError

NAME_CHARS = 64
"""The most characters of an annotator name (after NFC normalisation)."""


def annotator_name_problem(raw: object) -> str | None:
    """Why ``raw`` is not an acceptable annotator name, or None when it is (see :func:`annotator_name`)."""
    if not isinstance(raw, str) or not raw.strip():
        return "give an annotator name (non-empty text)"
    if "\ufffd" in raw or any(unicodedata.category(c) == "Cs" for c in raw):
        return "the name is not valid UTF-8 text"
    name = unicodedata.normalize("NFC", raw.strip())
    if len(name) > NAME_CHARS:
        return f"an annotator name has at most {NAME_CHARS} characters"
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in name):
        return "an annotator name cannot hold control characters (line breaks, tabs, escape sequences)"
    if any(unicodedata.category(c) == "Cf" for c in name):
        return ("an annotator name cannot hold invisible or direction-changing characters "
                "(zero-width, bidi overrides)")
    return None


def annotator_name(raw: object, where: str, error: type[BenchwrightError] = BenchwrightError) -> str:
    """``raw`` stripped and normalised to Unicode NFC (the same name typed on two keyboards is one annotator).

    Args:
        raw: the name as given; ``where``: where it came from (``--as``, ``BENCHWRIGHT_ANNOTATOR``, a file, a
            form field), named in the message; ``error``: the BenchwrightError subclass raised.

    Raises:
        BenchwrightError (``error``): not text, empty, not valid UTF-8 (U+FFFD or a surrogate), longer than
            :data:`NAME_CHARS`, or holding a control character (Cc, line / paragraph separators) or a format
            character (Cf)."""
    problem = annotator_name_problem(raw)
    if problem is not None:
        raise error(f"{where}: {problem}")
    return unicodedata.normalize("NFC", raw.strip())  # type: ignore[union-attr]


__all__ = ["NAME_CHARS", "annotator_name", "annotator_name_problem"]
