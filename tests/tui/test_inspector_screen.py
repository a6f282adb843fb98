"""The judge inspector driven with Pilot: runs side by side, disagreement highlighted with its spread,
rationales shown literally, override from the grid (original kept), compare mode, scalar judges, evidence."""

from __future__ import annotations

import pytest

from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.inspection import judgment_grid
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.evidence import EvidenceScreen
from benchwright.tui.screens.inspector import InspectorScreen


def _entries(scores, why):
    return [
        {"key": "1", "label": "Names [red]app.py[/red]", "kind": "knowledge", "score": scores[0], "max": 5,
         "allowed": [0, 3, 5], "rationale": why},
        {"key": "2", "label": "Explains the flow", "kind": "knowledge", "score": scores[1], "max": 4,
         "allowed": [0, 4], "rationale": "see src/pkg/app.py:12"},
        {"key": "3", "label": "Clarity & Organization", "kind": "clarity", "score": scores[2], "max": 1,
         "allowed": [0, 1], "rationale": "clear"},
    ]


def _seed(store: Store, pair_id: str) -> tuple[str, list[int]]:
    rep = store.import_answers([AnswerRecord(line=1, text="It is in `src/pkg/app.py:120`.", pair_ref=pair_id)],
                               model="model-x", condition="agentic", created_by="t")
    assert rep.added == 1
    (ans,) = store.answers(pair_id=pair_id)
    j1 = store.save_judgment(ans.id, "checklist", "judge-1", entries=_entries([5, 4, 1], "run one [b]says[/b]"),
                             run_index=0, checklist_version=1, created_by="t")
    j2 = store.save_judgment(ans.id, "checklist", "judge-1", entries=_entries([0, 4, 1], "run two disagrees"),
                             run_index=1, checklist_version=1, created_by="t")
    dims = [{"key": d, "label": d, "kind": "dimension", "score": 7, "max": 10, "allowed": list(range(1, 11)),
             "rationale": f"{d} ok"} for d in ("correctness", "completeness", "relevance", "clarity", "reasoning")]
    store.save_judgment(ans.id, "swe-qa-pro", "judge-2", entries=dims, run_index=0, scale_max=10, seed=3,
                        created_by="t")
    return ans.id, [j1.id, j2.id]


def test_grid_spread_and_rates(project):
    db, ids = project
    with Store.open(db) as store:
        aid, _ = _seed(store, ids[1])
        grid = judgment_grid(store.judgments(answer_id=aid, judge="checklist"), [])
    assert [r.spread for r in grid.rows] == [5, 0, 0]
    assert grid.disagreeing == 1
    assert grid.rates == [1.0, 0.5]


async def test_inspector_shows_runs_and_overrides(project):
    db, ids = project
    with Store.open(db) as store:
        _aid, (_j1, j2) = _seed(store, ids[1])
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[1], "ann"))
            await pilot.pause()
            screen = app.screen
            summary = str(screen.query_one("#summary-a").render())
            assert "2 runs" in summary and "run 1: 100%" in summary and "run 2: 50%" in summary
            assert "disagree on 1 entry" in summary
            table = screen.query_one("#grid-a")
            first = table.get_row_at(0)
            assert str(first[0]) == "1. Names [red]app.py[/red]"  # literal
            assert str(first[-1]) == "Δ5" and "yellow" in str(first[-1].style)
            detail = str(screen.query_one("#detail-a").render())
            assert "run 1: 5" in detail and "run one [b]says[/b]" in detail
            # Move to run 2 of item 1 and override it.
            await pilot.press("right")
            await pilot.pause()
            assert "run two disagrees" in str(screen.query_one("#detail-a").render())
            await pilot.press("o")
            await pilot.pause()
            await pilot.press("3", "enter")
            for ch in "partly right":
                await pilot.press("space" if ch == " " else ch)
            await pilot.press("enter")
            await pilot.pause()
            cell = str(screen.query_one("#grid-a").get_row_at(0)[3])
            assert cell == "0→3*"
            grid = screen.query_one("#grid-a")
            assert (grid.cursor_coordinate.row, grid.cursor_coordinate.column) == (0, 3)  # the cursor stays put
            # A disallowed score is refused inside the dialog, which stays open with what was typed.
            await pilot.press("o")
            await pilot.pause()
            await pilot.press("2", "enter", "x", "enter")
            await pilot.pause()
            dialog = app.screen
            assert dialog.__class__.__name__ == "OverrideScreen"
            assert "score 2 is not" in str(dialog.query_one("#override-error").render())
            assert dialog.query_one("#override-reason").value == "x"
            await pilot.press("escape")
            await pilot.pause()
            # Evidence: the cited file opens in the viewer.
            await pilot.press("e")
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, EvidenceScreen)
            await pilot.press("escape")
            await pilot.pause()
            # Compare: a second panel with the scalar judge.
            await pilot.press("v")
            await pilot.pause()
            b = screen.query_one("#panel-b")
            assert b.display
            b.query_one("#judge-b").value = "swe-qa-pro\x1fjudge-2"
            await pilot.pause()
            assert "swe-qa-pro judge · judge-2 · 1 runs · run 1: 70%" in str(screen.query_one("#summary-b").render())
        overrides = store.overrides(j2)
        assert [(o.key, o.original_score, o.score, o.reason) for o in overrides] == [("1", 0, 3, "partly right")]
        assert store.get_judgment(j2).entries[0].score == 0  # the judge's score stays


async def test_inspector_without_answers(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[0], "ann"))
            await pilot.pause()
            assert "no answers yet" in str(app.screen.query_one("#summary-a").render())
            await pilot.press("o")
            await pilot.pause()
            assert isinstance(app.screen, InspectorScreen)


# slow, to keep the default run short; main path: test_inspector_shows_runs_and_overrides
@pytest.mark.slow
async def test_inspector_cycles_judges_and_labels_failure_mode(project):
    db, ids = project
    with Store.open(db) as store:
        aid, _ = _seed(store, ids[1])
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[1], "ann"))
            await pilot.pause()
            screen = app.screen
            await pilot.press("s")
            await pilot.pause()
            assert str(screen.query_one("#summary-a").render()).startswith("swe-qa-pro judge · judge-2")
            await pilot.press("s")
            await pilot.pause()
            assert str(screen.query_one("#summary-a").render()).startswith("checklist judge · judge-1")
            await pilot.press("m")
            await pilot.pause()
            await pilot.press("down", "enter")  # second mode: shallow-explanation
            for ch in "thin":
                await pilot.press(ch)
            await pilot.press("enter")
            await pilot.pause()
            assert "failure mode: shallow-explanation (ann): thin" in str(screen.query_one("#summary-a").render())
        label = store.failure_mode(aid)
        assert (label.mode, label.origin, label.annotator, label.rationale) == (
            "shallow-explanation", "annotator", "ann", "thin")


async def test_a_code_only_answers_cited_files_are_found_in_the_stripped_copy_it_was_made_in(project, tmp_path):
    from benchwright.core.models import Repository

    db, ids = project
    copy = tmp_path / "copy"
    (copy / "src" / "pkg").mkdir(parents=True)
    (copy / "src" / "pkg" / "app.py").write_text("a = 1\nb = 2\n")
    (tmp_path / "repo" / "src" / "pkg" / "notes.py").write_text('"""Only in the original."""\n')  # not in the copy
    with Store.open(db) as store:
        store.add_derived_repository(Repository(name="pkg-code-only", version_label="1.0", local_path=str(copy),
                                                derived_from="pkg", derivation="code-only", manifest={}), "t")
        store.add_generated_answer(ids[1], "m", "code-only", "See src/pkg/notes.py:1 and src/pkg/app.py:2.",
                                   extra={"repository": "pkg-code-only"}, by="t", source_format="agent")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[1], "ann"))
            await pilot.pause()
            screen = app.screen
            ol = screen.query_one("#inspector-evidence")
            labels = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
            assert labels == ["✗ src/pkg/notes.py:1", "✓ src/pkg/app.py:2"]  # resolved in the copy, not the original
            await pilot.press("e")
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, EvidenceScreen)
            assert app.screen.repository.name == "pkg-code-only"
