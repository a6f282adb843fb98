"""``identity_text``'s fast path for text that is already tidy gives exactly what the line-by-line rule gives
(stored identity keys depend on it), and ``identity_keys`` is the two key functions in one."""

from __future__ import annotations

import random
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright.core import models
from benchwright.core.models import identity_keys, identity_text, pair_identity_key, question_identity_key

SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def reference(text: str | None) -> str:
    """The rule as written before the fast path: every line's white space runs as one space, lines stripped,
    blank-line runs as one, blank lines at the ends dropped (after NFC and line breaks as ``\\n``)."""
    if not text:
        return ""
    import unicodedata

    text = unicodedata.normalize("NFC", text)
    text = models._NEWLINES.sub("\n", text)
    out: list[str] = []
    for line in (" ".join(raw.split()) for raw in text.split("\n")):
        if line:
            out.append(line)
        elif out and out[-1] != "":
            out.append("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)


def test_every_white_space_outside_ascii_is_known():
    assert set(models._WIDE_SPACES) == {c for c in SPACES if not c.isascii()}


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from([*SPACES, "a", "b", "\u00e9", "e\u0301", "\r\n", " ", "\n"]), max_size=24))
def test_fast_path_matches_the_line_rule(pieces):
    text = "".join(pieces)
    assert identity_text(text) == reference(text)


def test_fast_path_on_tidy_and_untidy_prose():
    rng = random.Random(19)
    words = ["flask", "the", "Request", "é", "`ctx`", "-", "1.", "```py"]
    for _ in range(3000):
        parts = []
        for _ in range(rng.randint(0, 30)):
            parts.append(rng.choice(words))
            parts.append(rng.choice([" ", " ", " ", "\n", "\n\n", "\n\n\n", "  ", " \n", "\t", "\u00a0"]))
        text = "".join(parts)
        assert identity_text(text) == reference(text), repr(text)
        assert identity_keys("r", text, text[::-1]) == (
            pair_identity_key("r", text, text[::-1]), question_identity_key("r", text))
