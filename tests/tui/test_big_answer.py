"""A 1 MB answer (issue 19 testers' finding: opening it blocked the app about 4 s in Rich's Markdown): the
inspector and review screens render only its first :data:`~benchwright.tui.widgets.SHOWN_CHARS` as Markdown, say
so literally, and show all of it (plain text) on request. Asserts what is rendered, not how long it takes."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.widgets import TextArea

from benchwright.core.importers.answers import AnswerRecord
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.inspector import InspectorScreen
from benchwright.tui.widgets import SHOWN_CHARS, LiteralMarkdown, shown_part

PARAGRAPH = "The handler calls `dispatch`, which resolves the [bold]rule[/bold] and returns the view. " * 8
BIG = "\n\n".join(f"{n}. {PARAGRAPH}" for n in range(1_500)) + "\n\nSee src/pkg/app.py:7.\n\nTHE VERY END"


def test_shown_part_cuts_at_a_paragraph():
    part = shown_part(BIG)
    assert len(part) <= SHOWN_CHARS and BIG.startswith(part) and BIG[len(part):].startswith("\n\n")
    assert shown_part("short") == "short"


async def test_inspector_renders_the_first_part_of_a_1_mb_answer(project):
    assert len(BIG) > 1_000_000
    db, ids = project
    with Store.open(db) as store:
        rep = store.import_answers([AnswerRecord(line=1, text=BIG, pair_ref=ids[1])], model="model-x",
                                   condition="agentic", created_by="t")
        assert rep.added == 1
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(140, 45)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[1], "ann"))
            await pilot.pause()
            md = app.screen.query_one("#answer-text", LiteralMarkdown)
            assert md.source == BIG and md.truncated
            # only the first part is in the Markdown document Rich lays out
            assert len(md.document.markup) <= SHOWN_CHARS and "THE VERY END" not in md.document.markup
            shown = md.content
            assert isinstance(shown, Group)
            notice = shown.renderables[-1]
            assert isinstance(notice, Text) and f"showing the first {len(md.document.markup) // 1024} KB" in notice.plain
            assert f"of {len(BIG) // 1024:,} KB" in notice.plain and "press enter" in notice.plain
            # the cited files of the whole MB are found in a thread worker, the list filled when it posts them
            await app.workers.wait_for_complete()
            await pilot.pause()
            evidence = app.screen.query_one("#inspector-evidence")
            assert "src/pkg/app.py:7" in str(evidence.get_option_at_index(0).prompt)
            # the screen handles keys
            await pilot.press("tab")
            await pilot.pause()
            # enter on the focused answer shows all of it, literally (no markup applied)
            md.focus()
            await pilot.press("enter")
            await pilot.pause()
            assert not md.truncated and not md.display
            full = md.full_text
            assert isinstance(full, TextArea) and full.read_only and full.has_focus
            assert full.text == BIG and "[bold]rule[/bold]" in full.text  # literal, no markup applied
            await pilot.press("end")  # the whole text scrolls
            await pilot.pause()
            # another answer replaces it (the TextArea goes, the Markdown view is back)
            md.show("Short one.")
            await pilot.pause()
            assert md.full_text is None and md.display and not md.truncated
            assert not app.screen.query(TextArea).filter(".literal-markdown-all")


async def test_a_short_answer_is_whole_and_not_focusable(project):
    db, ids = project
    with Store.open(db) as store:
        store.import_answers([AnswerRecord(line=1, text="It is in `app.py`.", pair_ref=ids[1])], model="m",
                             condition="agentic", created_by="t")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(140, 45)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[1], "ann"))
            await pilot.pause()
            md = app.screen.query_one("#answer-text", LiteralMarkdown)
            assert not md.truncated and not md.can_focus and md.document.markup == "It is in `app.py`."


async def test_review_screen_renders_the_first_part_of_a_1_mb_reference_answer(tmp_path):
    import json

    from click.testing import CliRunner

    from benchwright.tui.cli import main

    db = tmp_path / "p.db"
    (tmp_path / "src").mkdir()
    run = CliRunner().invoke
    assert run(main, ["--db", str(db), "init"]).exit_code == 0
    assert run(main, ["--db", str(db), "repos", "add", "r", str(tmp_path / "src"), "--version", "1"]).exit_code == 0
    f = tmp_path / "pairs.jsonl"
    f.write_text(json.dumps({"question": "Where is dispatch?", "answer": BIG}) + "\n", encoding="utf-8")
    assert run(main, ["--db", str(db), "pairs", "import", "jsonl", str(f), "--repo", "r", "--as", "t"]).exit_code == 0
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(140, 45)) as pilot:
            from benchwright.tui.screens.review import ReviewScreen

            (pid,) = [p.id for p in store.queue_page("ann")]
            await app.push_screen(ReviewScreen(store, "ann", pid))
            await pilot.pause()
            md = app.screen.query_one("#answer", LiteralMarkdown)
            assert md.truncated and len(md.document.markup) <= SHOWN_CHARS
            assert "THE VERY END" not in md.document.markup
            await pilot.press("n")  # a review key is still handled by the screen
            await pilot.pause()


async def test_the_score_by_hand_dialog_shows_the_first_part(project):
    from human_checklist import three_item_checklist

    from benchwright.tui.screens.human_score import HumanScoreScreen

    db, ids = project
    with Store.open(db) as store:
        store.save_checklist(ids[1], three_item_checklist(), author="setup", expected_version=None)
        store.import_answers([AnswerRecord(line=1, text=BIG, pair_ref=ids[1])], model="model-x", condition="direct",
                             created_by="t")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[1], "ann"))
            await pilot.pause()
            await pilot.press("h")
            await pilot.pause()
            assert isinstance(app.screen, HumanScoreScreen)
            shown = app.screen.query_one("#hs-answer-text").content
            assert isinstance(shown, Text) and len(shown.plain) < SHOWN_CHARS + 200
            assert "THE VERY END" not in shown.plain and "[bold]rule[/bold]" in shown.plain
            assert f"of {len(BIG) // 1024:,} KB (all of it: the judge inspector's answer view" in shown.plain
            await pilot.press("down")  # the form's keys are handled
            await pilot.pause()
