"""The agent-answer run screen (M in the queue) over the scripted fake: the model explores the fixture repository,
progress is shown, results listed (stored / failed with the reason / refused), escape mid-run cancels and keeps the
answers that finished, and the stored trajectory opens in the inspector."""

from __future__ import annotations

import asyncio

import pytest

from benchwright.core.llm import Delay, ScriptedProvider
from benchwright.core.llm.fake import Reply
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.answer_run import AnswerRunScreen
from benchwright.tui.screens.inspector import InspectorScreen

HOSTILE = "[bold]x[/bold] \x1b[31mred [@click=app.quit]q[/]"


def _config(db, extra: str = "") -> None:
    (db.parent / "benchwright.toml").write_text('[roles.generator]\nprovider = "openai"\nmodel = "agent-model"\n'
                                                + extra)


def agent(request):
    """Search on the first turn, finish on the second (a question naming 'never' never finishes)."""
    question = request.messages[0].content
    if any(m.role == "tool" for m in request.messages):
        if "number 3" in question:
            return Reply(f"still looking {HOSTILE}", tool_calls=[("search", {"query": "line_2", "path": None})])
        return Reply("", tool_calls=[("finish", {"answer": f"It is src/pkg/app.py: line 1-2. {HOSTILE}"})])
    return Reply(f"Looking. {HOSTILE}", tool_calls=[("search", {"query": "line_1 ", "path": None})])


def _results(screen) -> list[str]:
    ol = screen.query_one("#answer-run-results")
    return [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]


async def _open(app, pilot) -> AnswerRunScreen:
    """The run screen over the queue's filter, mounted."""
    screen = AnswerRunScreen(app.store, "ann", app.screen.flt)
    await app.push_screen(screen)
    await pilot.pause()
    return screen


async def _wait(app, pilot, predicate, steps: int = 500) -> None:
    for _ in range(steps):
        if predicate():
            break
        await asyncio.sleep(0.02)
    await pilot.pause()


async def test_run_screen_runs_agent_and_lists_results(project):
    db, ids = project
    _config(db, "[agent]\nmax_turns = 3\n")
    provider = ScriptedProvider(agent)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: provider)
        async with app.run_test(size=(150, 50)) as pilot:
            await pilot.press("M")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, AnswerRunScreen)
            assert screen.query_one("#answer-run-model").value == "agent-model"  # the answer role's model
            assert screen.query_one("#answer-run-condition").value == "agentic"  # core's default for the agent
            await pilot.press("ctrl+r")
            await app.workers.wait_for_complete()
            await pilot.pause()
            plan = str(screen.query_one("#answer-run-plan").render())
            assert "agentic, 1 sample: 6 runs to do · 0 already answered · 0 pairs refused" in plan
            status = str(screen.query_one("#answer-run-status").render())
            assert status.startswith("finished: 6/6 · 1 failed")
            lines = _results(screen)
            assert len(lines) == 6
            assert sum(line.startswith("✓") and "stored · 2 turns" in line for line in lines) == 5
            (failed,) = [line for line in lines if line.startswith("✗")]
            assert "#3 sample 0 · failed: " in failed and "turn limit" in failed
            # The highlighted run's trajectory is beside the list: a failed run's too, its turns literal.
            ol = screen.query_one("#answer-run-results")
            ol.highlighted = lines.index(failed)
            await pilot.pause()
            detail = str(screen.query_one("#answer-run-trajectory").render())
            assert detail.startswith("#3 sample 0 · failed: ") and "3 turns · tool calls: search 3" in detail
            assert "still looking [bold]x[/bold] ␛[31mred [@click=app.quit]q[/]" in detail and "\x1b" not in detail
            # enter on a stored result opens the inspector; t shows its trajectory, hostile text literal.
            ol.focus()
            ol.highlighted = 0
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, InspectorScreen)
            await pilot.press("t")
            await pilot.pause()
            shown = str(app.screen.query_one("#trajectory-text").render())
            assert "2 turns · tool calls: search 1, finish 1" in shown
            assert "citations: 1 resolving, 0 not" in shown  # resolved in the checkout when the run stored it
            assert "Looking. [bold]x[/bold] ␛[31mred [@click=app.quit]q[/]" in shown and "\x1b" not in shown
        answers = store.answers(model="agent-model", condition="agentic")
        assert len(answers) == 5 and all(a.source_format == "agent" for a in answers)
        assert {a.qa_pair_id for a in answers} == set(ids) - {ids[2]}
        runs = store.answer_runs(ids[2], "agent-model", "agentic")
        assert runs and not runs[-1].ok and "turn limit" in runs[-1].reason


def finisher(request):
    """Finish at once."""
    return Reply("", tool_calls=[("finish", {"answer": "See src/pkg/app.py: line 3."})])


# slow, to keep the default run short; main path: test_run_screen_runs_agent_and_lists_results
@pytest.mark.slow
async def test_run_screen_samples_refusals_and_nothing_to_do(project):
    db, ids = project
    _config(db)
    provider = ScriptedProvider(finisher)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: provider)
        async with app.run_test(size=(150, 50)) as pilot:
            screen = await _open(app, pilot)
            # code-only without a stripped copy: every pair refused, with the remedy; nothing is called.
            screen.query_one("#answer-run-condition").value = "code-only"
            await pilot.pause()
            assert "code-only: an agent explored the repository's code" in str(
                screen.query_one("#answer-run-plan").render())
            await pilot.press("ctrl+r")
            await app.workers.wait_for_complete()
            await pilot.pause()
            (refused,) = _results(screen)
            assert refused.startswith("✗ 6 refused (#1, #2, #3, #4, #5, #6): no code-only copy of pkg")
            assert "benchwright repos strip pkg" in refused
            assert provider.calls == []
            # A bad sample count is refused in the form.
            screen.query_one("#answer-run-condition").value = "documented"
            screen.query_one("#answer-run-samples").value = "0"
            await pilot.press("ctrl+r")
            await pilot.pause()
            assert "samples per pair must be a whole number from 1 to 100" in str(
                screen.query_one("#answer-run-status").render())
            # A typo's hundred thousand samples are refused too, before anything is planned.
            screen.query_one("#answer-run-samples").value = "100000"
            await pilot.press("ctrl+r")
            await pilot.pause()
            assert "not 100000" in str(screen.query_one("#answer-run-status").render()) and provider.calls == []
            # Two samples, then the same again: nothing left to do.
            screen.query_one("#answer-run-samples").value = "2"
            screen.query_one("#answer-run-samples").focus()
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert len(_results(screen)) == 12
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert "12 already answered" in str(screen.query_one("#answer-run-plan").render())
            assert "nothing to run" in str(screen.query_one("#answer-run-status").render())
        answers = store.answers(model="agent-model", condition="documented")
        assert sorted((a.qa_pair_id, a.sample_index) for a in answers) == sorted((p, s) for p in ids for s in (0, 1))


# slow, to keep the default run short; main path: test_run_screen_runs_agent_and_lists_results
@pytest.mark.slow
async def test_escape_mid_run_cancels_and_keeps_finished(project):
    db, ids = project
    _config(db)
    fast = 4  # two pairs: two turns each

    def slow(request):
        return Delay(0.01 if len(provider.calls) <= fast else 30, agent(request))

    provider = ScriptedProvider(slow, concurrency=1)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: provider)
        async with app.run_test(size=(150, 50)) as pilot:
            screen = await _open(app, pilot)
            await pilot.press("ctrl+r")
            await _wait(app, pilot, lambda: len(store.answers(condition="agentic")) == 2)
            await _wait(app, pilot, lambda: "2/6" in str(screen.query_one("#answer-run-status").render()))
            status = str(screen.query_one("#answer-run-status").render())
            assert "2/6 · 0 failed" in status
            bar = screen.query_one("#answer-run-progress")
            assert (bar.progress, bar.total) == (2, 6)
            await pilot.press("escape")  # cancels the run
            await pilot.pause()
            assert "cancelled; finished answers are stored" in str(screen.query_one("#answer-run-status").render())
            assert app.screen is screen  # the first escape cancels, it does not leave
            await app.workers.wait_for_complete()
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is not screen
        kept = store.answers(condition="agentic")
        assert {a.qa_pair_id for a in kept} == {ids[0], ids[1]}
        cancelled = [r for r in store.llm_calls() if str(r.status) == "cancelled"]
        assert len(cancelled) == 1


# slow, to keep the default run short; main path: test_run_screen_runs_agent_and_lists_results
@pytest.mark.slow
async def test_run_screen_says_what_is_missing(project, monkeypatch):
    """No model configured: the screen says so and a run is refused with the configuration error; a model but
    no API key: the plan is shown, then the run stops naming the variable to set. Nothing is stored."""
    db, _ids = project
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(db.parent / "no-user-config.toml"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(150, 50)) as pilot:
            screen = await _open(app, pilot)
            problem = screen.query_one("#answer-run-model-problem")
            assert problem.display and "no model configured for the generator role" in str(problem.render())
            await pilot.press("ctrl+r")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert "not run: no model configured for the generator role" in str(
                screen.query_one("#answer-run-status").render())
            screen.query_one("#answer-run-model").value = "some-model"
            await pilot.press("ctrl+r")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert "6 runs to do" in str(screen.query_one("#answer-run-plan").render())
            status = str(screen.query_one("#answer-run-status").render())
            assert status.startswith("not run: ") and "OPENAI_API_KEY" in status
            assert not screen.running
        assert store.answers(condition="agentic") == []


async def test_every_field_of_the_form_fits_an_80_column_terminal(project):
    db, _ids = project
    _config(db)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("M")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, AnswerRunScreen)
            for wid in ("#answer-run-model", "#answer-run-condition", "#answer-run-samples"):
                region = screen.query_one(wid).region
                assert region.width > 0 and region.right <= 80, (wid, region)


async def test_enter_on_a_stored_result_opens_the_inspector_on_that_answer(project):
    from benchwright.core.importers.answers import AnswerRecord

    db, ids = project
    _config(db, "[agent]\nmax_turns = 3\n")
    provider = ScriptedProvider(agent)
    with Store.open(db) as store:
        # Another answer of the pair that the inspector would show first (its model sorts first).
        store.import_answers([AnswerRecord(line=1, text="imported", pair_ref=ids[0])], model="aaa-imported",
                             condition="closed-book", created_by="t")
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: provider)
        async with app.run_test(size=(150, 50)) as pilot:
            await pilot.press("M")
            await pilot.pause()
            screen = app.screen
            await pilot.press("ctrl+r")
            await app.workers.wait_for_complete()
            await pilot.pause()
            ol = screen.query_one("#answer-run-results")
            (oid,) = [oid for oid, r in screen._results.items() if r.ok and r.pair_id == ids[0]]
            ol.focus()
            ol.highlighted = ol.get_option_index(oid)
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, InspectorScreen)
            assert app.screen.panel("a").answer_id == screen._results[oid].answer_id
