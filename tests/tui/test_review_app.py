"""The review app driven with Pilot: decide, undo, resume after restart, notes, evidence, literal text."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from rich.console import Console
from textual.widgets import DataTable, Input, OptionList, Static

from benchwright.core.evidence import Evidence
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens import EvidenceScreen, HelpScreen, NotesScreen, QueueScreen, ReviewScreen

SIZE = (160, 48)


def decisions(db, annotator="ann"):
    with Store.open(db) as s:
        return {r.id: r.decision for r in s.queue_page(annotator, limit=1000)}


async def test_opens_at_first_undecided_and_stores_each_decision_at_once(project):
    db, ids = project
    with Store.open(db) as store:
        store.record_decision(ids[0], "ann", "accept")
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ReviewScreen)
            assert screen.pair_id == ids[1]
            assert "ann" in app.sub_title
            await pilot.press("a")
            await pilot.pause()
            # committed: another connection sees it while the app is still running
            assert decisions(db)[ids[1]] == "accept"
            assert app.screen.pair_id == ids[2]
            await pilot.press("x", "enter")  # a reject asks for its reason: enter takes the default
            await pilot.press("space")
            await pilot.pause()
            got = decisions(db)
            assert got[ids[2]] == "reject" and got[ids[3]] == "skip"
            assert app.screen.pair_id == ids[4]


async def test_previous_next_and_undo(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("right", "right")
            await pilot.pause()
            assert app.screen.pair_id == ids[2]
            await pilot.press("left")
            await pilot.pause()
            assert app.screen.pair_id == ids[1]
            await pilot.press("a", "a")
            await pilot.pause()
            assert decisions(db)[ids[2]] == "accept"
            await pilot.press("backspace")
            await pilot.pause()
            assert app.screen.pair_id == ids[2]
            assert decisions(db)[ids[2]] is None
            assert decisions(db)[ids[1]] == "accept"
            await pilot.press("backspace")
            await pilot.pause()
            assert app.screen.pair_id == ids[1]
            assert decisions(db)[ids[1]] is None


# slow, to keep the default run short; main path: test_opens_at_first_undecided_and_stores_each_decision_at_once
@pytest.mark.slow
async def test_resume_after_restart_and_undo_across_it(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("a", "x", "enter")
            await pilot.pause()
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.screen.pair_id == ids[2]
            await pilot.press("backspace")
            await pilot.pause()
            assert app.screen.pair_id == ids[1]
    assert decisions(db)[ids[1]] is None and decisions(db)[ids[0]] == "accept"
    # the undo is history, not an erasure
    with Store.open(db) as store:
        assert [h["decision"] for h in store.decision_history(ids[1])] == ["reject", None]


async def test_another_annotator_has_own_queue(project):
    db, ids = project
    with Store.open(db) as store:
        store.record_decision(ids[0], "ann", "accept")
        app = BenchwrightApp(store, "bob")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.screen.pair_id == ids[0]


async def test_text_from_data_is_literal(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert screen.pair_id == ids[0]
            console = Console(width=150, color_system="truecolor", record=True, file=io.StringIO())
            segments = list(console.render(screen.query_one("#question").document))
            text = "".join(seg.text for seg in segments)
            assert "[bold]this[/bold]" in text
            assert "\x1b" not in text and "␛[31m" in text
            assert "<module>" in text
            styled = [seg for seg in segments if "this" in seg.text]
            assert styled and not any(seg.style and (seg.style.bold or seg.style.color) for seg in styled)
            svg = app.export_screenshot()
            assert "[bold]this[/bold]" in svg.replace("&#160;", " ")


async def test_notes_are_saved_and_cancel_keeps_nothing(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(app.screen, NotesScreen)
            await pilot.press(*"ok [red]x")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            assert store.current_note(ids[0], "ann") == "ok [red]x"
            assert "ok [red]x" in str(app.screen.query_one("#note", Static).render())
            await pilot.press("n", "z", "escape")
            await pilot.pause()
            assert store.current_note(ids[0], "ann") == "ok [red]x"


# slow, to keep the default run short; main path: test_notes_are_saved_and_cancel_keeps_nothing
@pytest.mark.slow
async def test_a_note_saved_meanwhile_by_another_session_is_not_replaced_silently(project):
    """The same annotator in two terminals: the second save is refused, shows the newer note and keeps what was
    typed; a second ctrl+s then saves it on purpose."""
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("n")
            await pilot.pause()
            with Store.open(db) as other:  # the other terminal saves first
                other.add_note(ids[0], "ann", "newer [b]one", expected=None)
            await pilot.press(*"mine")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert store.current_note(ids[0], "ann") == "newer [b]one"  # not replaced
            assert isinstance(app.screen, NotesScreen)
            assert "newer [b]one" in str(app.screen.query_one("#notes-conflict", Static).render())
            assert app.screen.query_one("#notes-text").text == "mine"
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            assert store.current_note(ids[0], "ann") == "mine"
            with Store.open(db) as s2:  # both versions kept (append-only)
                texts = [r[0] for r in s2.db.conn.execute(
                    "SELECT text FROM review_notes WHERE qa_pair_id = ? ORDER BY id", [ids[0]])]
            assert texts == ["newer [b]one", "mine"]


async def test_evidence_opens_cited_file_at_line_and_flags_missing_and_unsafe(project):
    db, _ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            review = app.screen
            statuses = {str(e.citation): e.status for e in review.evidence}
            assert statuses == {"src/pkg/app.py:120": "found", "src/pkg/gone.py": "missing",
                                "../../etc/passwd.py": "unsafe"}
            options = review.query_one("#evidence", OptionList)
            assert [options.get_option_at_index(i).disabled for i in range(3)] == [False, True, True]
            await pilot.press("e", "enter")
            await pilot.pause()
            await app.workers.wait_for_complete()  # the viewer reads and highlights in a worker
            await pilot.pause()
            ev = app.screen
            assert isinstance(ev, EvidenceScreen)
            assert ev.text.startswith("line_1 = 1")
            scroll = ev.query_one("#evidence-scroll")
            assert 110 <= scroll.scroll_y <= 120
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)


async def test_evidence_screen_refuses_path_outside_repository(project, tmp_path):
    db, _ids = project
    from benchwright.core.evidence import Citation

    with Store.open(db) as store:
        repo = store.get_repository("pkg")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = EvidenceScreen(repo, Evidence(Citation("../outside.py"), "found", "../outside.py"))
            await app.push_screen(screen)
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert screen.text is None and "leave the repository" in screen.error
            assert screen.phase == "error" and "leave the repository" in str(screen.query_one("#evidence-note").render())


async def test_queue_filters_search_and_open(project):
    db, ids = project
    with Store.open(db) as store:
        store.record_decision(ids[0], "ann", "accept")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            queue = app.screen
            assert isinstance(queue, QueueScreen)
            table = queue.query_one(DataTable)
            assert table.row_count == len(ids)
            assert queue.rows[table.cursor_row].id == ids[1]  # opens at the first undecided
            await pilot.press("slash")
            await pilot.press(*"number 4", "enter")
            await pilot.pause()
            assert [r.id for r in queue.rows] == [ids[3]]
            queue.query_one("#f-text", Input).value = ""
            await pilot.press("slash", "enter")
            await pilot.pause()
            queue.query_one("#f-status").value = "accepted"
            await pilot.pause()
            assert [r.id for r in queue.rows] == [ids[0]]
            queue.query_one("#f-status").value = "undecided"
            queue.query_one("#f-qa_type").value = "How"
            await pilot.pause()
            assert {r.id for r in queue.rows} == {ids[2], ids[4]}
            table.focus()
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen) and app.screen.pair_id == ids[2]
            await pilot.press("right")
            await pilot.pause()
            assert app.screen.pair_id == ids[4]  # previous/next follow the filter
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is queue and queue.rows[table.cursor_row].id == ids[4]


async def test_help_and_palette_list_the_review_keys(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            titles = [c.title for c in app.get_system_commands(app.screen)]
            for title in ("Accept", "Reject", "Skip", "Undo", "Notes", "Previous", "Next"):
                assert title in titles
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            # the palette's Accept command stores a decision like the key does
            accept = next(c for c in app.get_system_commands(app.screen) if c.title == "Accept")
            await accept.callback()
            await pilot.pause()
            assert store.current_decision(ids[0], "ann").value == "accept"


def test_decisions_survive_kill_9(project, tmp_path):
    db, ids = project
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from benchwright.db import Store
        from benchwright.tui.app import BenchwrightApp

        async def main():
            store = Store.open({str(db)!r})
            app = BenchwrightApp(store, "ann")
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause()
                await pilot.press("a", "x", "enter", "a")
                await pilot.pause()
                print("decided", flush=True)
                await asyncio.sleep(60)

        asyncio.run(main())
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "decided"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    got = decisions(db)
    assert [got[i] for i in ids[:3]] == ["accept", "reject", "accept"]
    with Store.open(db) as store:
        assert store.db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        app_next = store.first_undecided("ann")
    assert app_next == ids[3]


def test_markdown_keeps_code_names_and_html_literal():
    from benchwright.tui.widgets import LiteralMarkdownRenderable

    source = "Why do `__init__`, __getattr__ and **kwargs and <module> and ~~x~~ stay?\n\n- item one\n"
    console = Console(width=120, record=True, file=io.StringIO())
    segments = list(console.render(LiteralMarkdownRenderable(source)))
    text = "".join(seg.text for seg in segments)
    for literal_part in ("__getattr__", "**kwargs", "<module>", "~~x~~", "__init__"):
        assert literal_part in text
    assert "item one" in text and "- item one" not in text  # structure is rendered


async def test_revise_shows_in_the_queue_and_its_filter(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("1", "r")  # QA consistency pass, then revise
            await pilot.pause()
            assert store.current_decision(ids[0], "ann").value == "revise"
            assert store.current_criteria(ids[0], "ann").verdicts["qa_consistency"].value == "pass"
            await pilot.press("escape")
            await pilot.pause()
            queue = app.screen
            assert isinstance(queue, QueueScreen)
            table = queue.query_one(DataTable)
            assert "to revise" in str(table.get_row_at(0)[1])
            queue.query_one("#f-status").value = "to-revise"
            await pilot.pause()
            assert [r.id for r in queue.rows] == [ids[0]]


# slow, to keep the default run short; main path: test_opens_at_first_undecided_and_stores_each_decision_at_once
@pytest.mark.slow
async def test_marked_criteria_survive_moving_away_and_a_restart(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("1", "2", "2", "right", "left")
            await pilot.pause()
            verdicts = app.screen.criteria.verdicts
            assert verdicts["qa_consistency"].value == "pass" and verdicts["checklist_quality"].value == "fail"
    with Store.open(db) as store:  # as after a crash: nothing was submitted, the marks are kept
        assert store.current_criteria(ids[0], "ann").verdicts["checklist_quality"].value == "fail"
        assert store.current_decision(ids[0], "ann") is None


# slow, to keep the default run short; main path: test_evidence_opens_cited_file_at_line_and_flags_missing_and_unsafe
@pytest.mark.slow
async def test_evidence_key_skips_an_ambiguous_citations_header(tmp_path):
    import json

    from benchwright.core.importers import parse
    from benchwright.core.models import Repository

    repo = tmp_path / "repo"
    for sub in ("a", "b"):
        (repo / sub).mkdir(parents=True)
        (repo / sub / "views.py").write_text("v = 1\n" * 50)
    data = tmp_path / "p.jsonl"
    data.write_text(json.dumps({"question": "Where?", "answer": "In views.py:10."}) + "\n")
    db = tmp_path / "p.db"
    with Store.open(db) as store:
        store.add_repository(Repository(name="r", version_label="1", local_path=str(repo)), "t")
        store.apply_import(parse("swe-qa", data, repository="r"), annotator="t", file_path=data)
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.screen.evidence[0].status == "ambiguous"
            await pilot.press("e", "enter")
            await pilot.pause()
            assert isinstance(app.screen, EvidenceScreen) and app.screen.evidence.path == "a/views.py"


# slow, to keep the default run short; main path: test_opens_at_first_undecided_and_stores_each_decision_at_once
@pytest.mark.slow
async def test_a_refused_stale_decision_refreshes_the_counts(project):
    """Two sessions of one annotator: the second's decision on a pair the first already decided is refused,
    and its header shows the first session's decision in the counts."""
    db, _ids = project
    with Store.open(db) as store, Store.open(db) as other:
        app = BenchwrightApp(store, "bob", resume=True)
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            assert "decided 0/6" in str(app.screen.query_one("#review-status").render())
            other.record_decision(app.screen.pair_id, "bob", "accept")  # the other session decides first
            await pilot.press("x", "enter")
            await pilot.pause()
            assert "decided 1/6" in str(app.screen.query_one("#review-status").render())


async def test_home_moves_the_queue_cursor_to_the_top(project):
    db, _ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "bob", resume=False)
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            table = app.screen.query_one(DataTable)
            await pilot.press("down", "down", "down")
            assert table.cursor_row == 3
            await pilot.press("home")
            await pilot.pause()
            assert table.cursor_row == 0


# slow, to keep the default run short; main path: test_opens_at_first_undecided_and_stores_each_decision_at_once
@pytest.mark.slow
async def test_a_huge_key_point_is_cut_in_the_sidebar(project):
    """A 1 MB key point (140,000 words) is cut in the review screen's checklist panel: wrapping it whole
    froze the screen for seconds each time its pair was shown."""
    from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
    from benchwright.tui.screens.review import KEY_POINT_CHARS

    db, ids = project
    huge = " ".join(f"w{i}" for i in range(140_000))
    with Store.open(db) as store:
        store.save_checklist(ids[0], Checklist(items=[ChecklistItem(key_point=huge, weight=9, rubric=binary_rubric(9)),
                                                      clarity_item()]), author="ann", origin="imported")
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ReviewScreen)
            shown = app.screen.query_one("#checklist", Static).render().plain
            assert huge[:KEY_POINT_CHARS] in shown and huge not in shown
            assert f"… [{len(huge) - KEY_POINT_CHARS:,} more characters: c shows them]" in shown
            assert len(shown) < 2 * KEY_POINT_CHARS
