"""Leakage in the app (issue 17 item 8), driven with Pilot: the review screen's banner on a pair whose current
question leaks terms of its reference answer (each term literally, with kind and source), none on a clean pair, and
the text screen (``w``) marking the leaked spans of the question (reverse, underlined; hostile text literal)."""

from __future__ import annotations

from test_literal_text import assert_literal, screen_segments, screen_text, settle
from textual.widgets import Static

from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens import ReviewScreen
from benchwright.tui.screens.text_versions import TextVersionsScreen, marked_spans
from benchwright.tui.services.texts import edit_text

SIZE = (160, 48)
LEAKY = "Question number 2: [bold]x[/] \x1b[31m what do lines 10-12 of src/pkg/app.py hold?"


async def test_banner_on_a_leaked_pair_none_on_a_clean_one_and_the_spans_marked_on_the_text_screen(project):
    db, ids = project
    with Store.open(db) as store:
        edit_text(store, ids[1], LEAKY, "Answer 2: lines 10-12 of src/pkg/app.py [@click=app.quit]q[/].", by="ann",
                  expected_version=1)
        edit_text(store, ids[2], "Question number 3, asked again?", None, by="ann", expected_version=1)
        assert store.leakage_check(ids[1]).status == "leaked" and store.leakage_check(ids[2]).status == "clean"
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await settle(app, pilot)
            await app.push_screen(ReviewScreen(store, "ann", ids[2]))
            await settle(app, pilot)
            assert app.screen.query_one("#leakage-banner", Static).display is False
            assert "question leaks" not in screen_text(app)
            await app.screen.show_pair(ids[1])
            await settle(app, pilot)
            assert app.screen.query_one("#leakage-banner", Static).display is True
            shown = screen_text(app)
            assert "question leaks 2 terms the original did not have (w shows them)" in shown
            assert "lines 10-12 (key-point, reference answer) · src/pkg/app.py (path, reference answer)" in shown
            assert_literal(app, "review of a leaked pair", marks=("[bold]x[/]", "␛[31m"))
            await pilot.press("w")
            await settle(app, pilot)
            assert isinstance(app.screen, TextVersionsScreen)
            shown = screen_text(app)
            assert "Leaked terms: 2 of the reference answer or checklist" in shown
            assert "src/pkg/app.py  path, from the reference answer" in shown
            assert "lines 10-12  key-point, from the reference answer" in shown
            marked = [seg.text for seg in screen_segments(app)
                      if seg.style is not None and seg.style.reverse and seg.style.underline]
            assert "".join(marked).count("src/pkg/app.py") == 2  # in the list and in the question
            assert "".join(marked).count("lines 10-12") == 2
            assert_literal(app, "text screen of a leaked pair", marks=("[bold]x[/]", "␛[31m"))
            # a revert to the original text (checked clean) hides the marks
            await pilot.press("o")
            await settle(app, pilot)
            assert app.screen.query_one("#text-leakage", Static).display is False


def test_marked_spans_keep_offsets_after_control_characters_and_cut_long_text():
    class Span:
        def __init__(self, start, end):
            self.start, self.end = start, end

    text = "a\x9bb leak_name c"
    t = marked_spans(text, [Span(4, 13), Span(5, 9)])
    assert t.plain == "a\\x9bb leak_name c"  # the C1 control is shown as four characters
    styled = [t.plain[s.start:s.end] for s in t.spans if "reverse" in str(s.style)]
    assert styled == ["leak_name"]
    long = marked_spans("x" * 50 + " tail_name", [Span(51, 60)], limit=20)
    assert long.plain.startswith("x" * 20) and "40 more characters" in long.plain and not long.spans[:-1]
