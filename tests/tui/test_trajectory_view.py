"""The inspector's trajectory (``t``): an agent answer's turns rendered readably from the stored trajectory
(SWE-QA-Pro §3.1 format, core/agent/model.py), hostile text shown literally, other formats as their JSON."""

from __future__ import annotations

import pytest

from benchwright.core.agent.model import AgentOutcome, ToolUse, Turn
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.llm.base import Usage
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.inspector import InspectorScreen, render_trajectory
from benchwright.tui.services.views import TRAJECTORY_OUTPUT_LINES, TRAJECTORY_TEXT_CHARS, trajectory_view

HOSTILE = "[bold]loud[/bold] \x1b[31mred\x1b[0m [@click=app.quit]quit[/]"


def _trajectory() -> list[dict]:
    long_output = "\n".join(f"src/pkg/app.py:{i}: line_{i} = {i}" for i in range(1, 31))
    outcome = AgentOutcome(qa_pair_id="p", model="m", status="ok", answer="done", turns=[
        Turn(index=1, text=f"I will search. {HOSTILE}", usage=Usage(1200, 80), context_tokens=1300,
             tool_uses=[ToolUse("c1", "search", {"query": "line_1"}, long_output, elided_at_turn=3),
                        ToolUse("c2", "command_line", {"command": "rm -rf /"}, f"refused: rm is not allowed {HOSTILE}",
                                ok=False)]),
        Turn(index=2, text="", usage=Usage(1500, 40), cached=True, context_tokens=1600,
             tool_uses=[ToolUse("c3", "view", {"path": "src/pkg/app.py", "start": 1, "end": 3},
                                "1 line_1 = 1\n2 line_2 = 2\n3 line_3 = 3", truncated=True)]),
        Turn(index=3, text="Found it.", usage=Usage(900, 30), elided=["c1"], context_tokens=400,
             tool_uses=[ToolUse("c4", "finish", {"answer": f"It is in src/pkg/app.py: line 1-3 {HOSTILE}"}, "")]),
    ])
    return outcome.trajectory_json()


def _seed(store: Store, pair_id: str, trajectory, extra=None) -> str:
    rep = store.import_answers([AnswerRecord(line=1, text=f"It is in `src/pkg/app.py:1-3`. {HOSTILE}",
                                             pair_ref=pair_id, trajectory=trajectory, extra=extra or {})],
                               model="agent-m", condition="agentic", created_by="t")
    assert rep.added == 1
    (ans,) = store.answers(pair_id=pair_id)
    return ans.id


def test_view_of_agent_trajectory(project):
    db, ids = project
    with Store.open(db) as store:
        _seed(store, ids[1], _trajectory(), {"citations": {"resolving": 2, "not_resolving": 1, "items": [
            {"cited": "src/pkg/app.py:1-3", "status": "found", "path": "src/pkg/app.py", "resolves": True},
            {"cited": "src/gone.py:9", "status": "missing", "path": None, "resolves": False}]}})
        (ans,) = store.answers(pair_id=ids[1])
    view = trajectory_view(ans)
    assert view.turns is not None and [t.index for t in view.turns] == [1, 2, 3]
    assert view.tool_counts == {"search": 1, "command_line": 1, "view": 1, "finish": 1}
    assert (view.refused, view.elisions) == (1, 1)
    assert (view.citations_resolving, view.citations_not) == (2, 1)
    search = view.turns[0].tool_uses[0]
    assert len(search.output) == TRAJECTORY_OUTPUT_LINES and search.more_lines == 30 - TRAJECTORY_OUTPUT_LINES
    assert search.arguments == '{"query": "line_1"}' and search.elided_at_turn == 3
    assert view.turns[1].cached and view.turns[1].tool_uses[0].truncated
    assert view.turns[2].elided == ("c1",)
    text = render_trajectory(view, "T").plain
    assert "3 turns · tool calls: search 1, command_line 1, view 1, finish 1 · 1 refused or failed · 1 elided" in text
    assert "citations: 2 resolving, 1 not" in text and "not resolving: src/gone.py:9 (missing)" in text
    assert "── turn 1 · 1,200 in / 80 out tokens · context ≈1,300" in text
    assert "── turn 2 · 1,500 in / 40 out tokens · context ≈1,600 · cached" in text
    assert f"… {30 - TRAJECTORY_OUTPUT_LINES} more lines" in text
    assert "src/pkg/app.py:13:" not in text  # beyond the display cap
    assert '✗ command_line {"command": "rm -rf /"}  refused or failed' in text
    assert "[output elided from the context at turn 3]" in text
    assert "[1 earlier output(s) elided before this turn: c1]" in text
    assert "(output cut)" in text


def test_other_formats_fall_back_to_json(project):
    db, ids = project
    with Store.open(db) as store:
        _seed(store, ids[1], {"messages": [{"role": "assistant", "content": HOSTILE}]})
        (ans,) = store.answers(pair_id=ids[1])
    view = trajectory_view(ans)
    assert view.turns is None and '"messages"' in view.raw
    assert '"messages"' in render_trajectory(view, "T").plain
    # A list that is not benchwright's turns (SWE-QA style steps) is JSON too, never an error.
    bad = trajectory_view(type(ans)(**{**ans.__dict__, "trajectory": [{"step": 1, "action": "ls"}]}))
    assert bad.turns is None and '"action": "ls"' in bad.raw
    huge = trajectory_view(type(ans)(**{**ans.__dict__, "trajectory": {"log": "y" * (TRAJECTORY_TEXT_CHARS * 3)}}))
    assert len(huge.raw) < TRAJECTORY_TEXT_CHARS + 200 and "more characters" in huge.raw
    none = trajectory_view(type(ans)(**{**ans.__dict__, "trajectory": None}))
    assert none.turns is None and "(no trajectory)" in render_trajectory(none, "T").plain


def _shown(screen) -> str:
    return str(screen.query_one("#trajectory-text").render())


async def test_inspector_t_shows_turns_literally(project):
    db, ids = project
    with Store.open(db) as store:
        _seed(store, ids[1], _trajectory(), {"citations": {"resolving": 1, "not_resolving": 0}})
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[1], "ann"))
            await pilot.pause()
            screen = app.screen
            assert not screen.query_one("#trajectory-text").display
            await pilot.press("t")
            await pilot.pause()
            assert screen.query_one("#trajectory-text").display and not screen.query_one("#answer-text").display
            shown = _shown(screen)
            assert "Trajectory of agent-m · agentic" in shown
            assert "── turn 3" in shown and "citations: 1 resolving, 0 not" in shown
            # Hostile text: markup and click actions as typed, the escape character visible, nothing run.
            assert "[bold]loud[/bold] ␛[31mred␛[0m [@click=app.quit]quit[/]" in shown
            assert "\x1b" not in shown
            spans = screen.query_one("#trajectory-text").render().spans
            assert not any("@click" in str(s.style) or "link" in str(s.style) for s in spans)
            await pilot.click("#trajectory-text")
            await pilot.pause()
            assert app.is_running
            await pilot.press("t")
            await pilot.pause()
            assert screen.query_one("#answer-text").display and not screen.query_one("#trajectory-text").display


# slow, to keep the default run short; main path: test_inspector_t_shows_turns_literally
@pytest.mark.slow
async def test_inspector_t_imported_json(project):
    db, ids = project
    with Store.open(db) as store:
        _seed(store, ids[1], [{"role": "assistant", "content": HOSTILE}])
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await app.push_screen(InspectorScreen(store, ids[1], "ann"))
            await pilot.pause()
            await pilot.press("t")
            await pilot.pause()
            shown = _shown(app.screen)
            assert '"role": "assistant"' in shown and "[bold]loud[/bold]" in shown and "\x1b" not in shown


def test_the_full_view_keeps_every_output_line_whole(project):
    # `answers show --trajectory` promises every output: the inspector's 12-line cap cut the CLI's too
    db, ids = project
    with Store.open(db) as store:
        _seed(store, ids[1], _trajectory())
        (ans,) = store.answers(pair_id=ids[1])
    search = trajectory_view(ans, full=True).turns[0].tool_uses[0]
    assert len(search.output) == 30 and search.more_lines == 0
    assert search.output[-1] == "src/pkg/app.py:30: line_30 = 30"
    long_line = "x" * 1000
    traj = _trajectory()
    traj[0]["tool_uses"][0]["output"] = long_line
    assert trajectory_view(type(ans)(**{**ans.__dict__, "trajectory": traj}), full=True).turns[0].tool_uses[0].output \
        == (long_line,)
