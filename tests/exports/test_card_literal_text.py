"""Data text in the dataset card is shown literally on the Hub: no Markdown, HTML, math, images, control or bidi
characters take effect (tester finding, issue 20)."""
from __future__ import annotations

from pathlib import Path

from test_release import ROWS, row, spec

from benchwright.exports import write_release
from benchwright.exports.card import _cell, _code

HOSTILE = "a | b `code` *em* ![img](http://evil/x.png) <b>html</b> $\\alpha$ & #h _u_ \x1b[31m \u202eevil\u202c"


def test_cell_neutralises_markdown_html_math_and_control_characters():
    got = _cell(HOSTILE)
    assert got == ("a \\| b \\`code\\` \\*em\\* \\!\\[img\\](http://evil/x.png) &lt;b&gt;html&lt;/b&gt; "
                   "\\$\\\\alpha\\$ &amp; \\#h \\_u\\_ \\\\x1b\\[31m \\\\u202eevil\\\\u202c")
    for raw in ("\x1b", "\u202e", "<b>", " ![", " `code", " *em*", " $\\"):
        assert raw not in got
    assert _cell("line one\nline\ttwo") == "line one line two"


def test_code_span_text_cannot_close_the_span_or_the_row():
    assert _code("sel`x | y\x1b\u202e") == "selx  y\\x1b\\u202e"


def test_a_hostile_category_lands_escaped_in_the_written_card(tmp_path: Path):
    rows = [row(0, category=HOSTILE), *ROWS[1:]]
    card = (write_release(rows, spec(), tmp_path / "out") / "README.md").read_text()
    assert "\x1b" not in card and "\u202e" not in card
    assert "<b>html</b>" not in card and "![img]" not in card and "$\\alpha$" not in card
    assert "&lt;b&gt;html&lt;/b&gt;" in card and "\\!\\[img\\]" in card
