"""Issue 20 tester finding: the cut 1 MB answer in the judge inspector says "tab here and press enter"; the keys
must do that (tab reaches the answer, enter shows all of it)."""

from __future__ import annotations

from test_big_answer import BIG

from benchwright.core.importers.answers import AnswerRecord
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.inspector import InspectorScreen
from benchwright.tui.widgets import LiteralMarkdown


async def test_tab_reaches_the_cut_answer_and_enter_shows_it_all(project):
    db, ids = project
    with Store.open(db) as store:
        store.import_answers([AnswerRecord(line=1, text=BIG, pair_ref=ids[1])], model="model-x",
                             condition="agentic", created_by="t")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(140, 45)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[1], "ann"))
            await pilot.pause()
            md = app.screen.query_one("#answer-text", LiteralMarkdown)
            seen = []
            for _ in range(12):
                await pilot.press("tab")
                await pilot.pause()
                seen.append(app.focused.id if app.focused else None)
                if app.focused is md:
                    break
            assert app.focused is md, seen
            await pilot.press("enter")
            await pilot.pause()
            assert not md.truncated and md.full_text is not None and md.full_text.has_focus
