"""Making text from data and from LLMs safe to show literally in a terminal."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _picture(m: re.Match) -> str:
    code = ord(m.group())
    if code < 0x20:
        return chr(0x2400 + code)  # U+2400 CONTROL PICTURES: ESC -> ␛
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"


def printable(text: str) -> str:
    """``text`` with every control character except newline and tab made visible.

    C0 controls become their Unicode control pictures (ESC shows as ``␛``), DEL as ``␡``, C1 controls
    as ``\\x9b``-style escapes, so a terminal interprets none of them. Carriage returns become ``␍``.
    Everything else, including Rich markup such as ``[bold]``, is left as it is: callers must also
    display the result without markup parsing.
    """
    return _CONTROL.sub(_picture, text)
