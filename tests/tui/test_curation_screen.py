"""The curation screens driven with Pilot over a scripted provider: results shown literally, steps stored,
the refine diff, a run over the queue with progress, and cancellation keeping finished work."""

from __future__ import annotations

import asyncio

from benchwright.core.llm import Delay, ScriptedProvider
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.curation import CurationRunScreen, CurationScreen

CHECKLIST = {"items": [
    {"kind": "knowledge", "key_point": "Names app.py", "weight": 9,
     "rubric": [{"score": 0, "criterion": "no"}, {"score": 9, "criterion": "yes"}]},
    {"kind": "clarity", "key_point": "Clarity & Organization", "weight": 1,
     "rubric": [{"score": 0, "criterion": "bad"}, {"score": 1, "criterion": "good"}]},
]}


def answer(request):
    name = request.schema_name
    if name == "classification":
        return {"rationale": "About [bold]code[/bold]", "code_understanding_relevant": False,
                "category": "Business Logic"}
    if name == "refined_pair":
        return {"question": "Which module defines line_120?", "answer": "src/pkg/app.py defines it.",
                "changes": "made it self-contained"}
    if name == "checklist":
        return CHECKLIST
    if name == "verification":
        return {"self_contained": {"rationale": "fine", "passed": True},
                "answerable": {"rationale": "needs the docs", "passed": False}}
    raise AssertionError(name)


def _config(db):
    (db.parent / "benchwright.toml").write_text(
        '[roles.generator]\nprovider = "openai"\nmodel = "gen-model"\n'
        '[roles.verifier]\nprovider = "openai"\nmodel = "ver-model"\n'
    )


async def test_curation_screen_runs_steps_and_shows_results(project, monkeypatch):
    db, ids = project
    _config(db)
    provider = ScriptedProvider(answer)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: provider)
        async with app.run_test(size=(140, 50)) as pilot:
            await app.push_screen(CurationScreen(store, ids[1], "ann"))
            await pilot.pause()
            for key in ("1", "3"):
                await pilot.press(key)
                await app.workers.wait_for_complete()
                await pilot.pause()
            # classify dropped the pair: refine leaves it alone until x includes dropped pairs
            assert "refine: not run, classify dropped the pair" in str(app.screen.query_one("#curation-status").render())
            assert "refine" not in store.curation_current(ids[1])
            for key in ("x", "3", "4", "5"):
                await pilot.press(key)
                await app.workers.wait_for_complete()
                await pilot.pause()
            screen = app.screen
            classify = str(screen.query_one("#step-classify").render())
            assert "NOT code-understanding relevant" in classify
            assert "[bold]code[/bold]" in classify  # shown literally, not as markup
            refine = screen.query_one("#step-refine").render()
            deleted = "".join(refine.plain[s.start:s.end] for s in refine.spans if "strike" in str(s.style))
            inserted = "".join(refine.plain[s.start:s.end] for s in refine.spans if "underline" in str(s.style))
            assert "Question number 2" in deleted and "Which module defines line_120" in inserted
            verify = str(screen.query_one("#step-verify").render())
            assert "✗ answerable: needs the docs" in verify
        current = store.curation_current(ids[1])
        assert current["classify"].flagged and current["verify"].flagged
        assert current["checklist"].status == "ok"
        assert store.checklist_version(ids[1]).origin == "generated"
        # The checklist step was given the refined text.
        sent = next(r for r in provider.calls if r.schema_name == "checklist").messages[0].content
        assert "Which module defines line_120?" in sent
        assert [r.model for r in provider.calls] == ["gen-model"] * 3 + ["ver-model"]


async def test_curation_screen_reports_missing_model(project):
    db, ids = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: ScriptedProvider(answer))
        async with app.run_test(size=(140, 50)) as pilot:
            await app.push_screen(CurationScreen(store, ids[0], "ann"))
            await pilot.press("1")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert any("no model configured for the generator role" in n.message for n in app._notifications)
        assert store.curation_current(ids[0]) == {}


async def test_queue_run_with_progress_and_cancel_keeps_finished(project):
    db, ids = project
    _config(db)
    done_fast = {ids[0], ids[1]}

    def slow(request):
        return Delay(0.01 if len(provider.calls) <= 2 else 30, answer(request))

    provider = ScriptedProvider(slow, concurrency=1)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: provider)
        async with app.run_test(size=(140, 50)) as pilot:
            screen = CurationRunScreen(store, "ann", app.screen.flt)
            await app.push_screen(screen)
            await pilot.pause()
            await pilot.press("down", "enter")  # the second option: classify (images comes first)
            for _ in range(200):
                await asyncio.sleep(0.02)
                if len(store.curation_current(ids[0])) + len(store.curation_current(ids[1])) == 2:
                    break
            await pilot.pause()
            status = str(screen.query_one("#run-status").render())
            assert "/6" in status
            await pilot.press("escape")  # cancels the run
            await pilot.pause()
            assert "cancelled" in str(screen.query_one("#run-status").render())
        finished = {pid for pid in ids if store.curation_current(pid)}
        assert finished == done_fast
        cancelled = [r for r in store.llm_calls() if str(r.status) == "cancelled"]
        assert len(cancelled) == 1


async def test_flagged_pairs_are_marked_in_the_queue(project):
    db, ids = project
    with Store.open(db) as store:
        store.save_curation_result(ids[2], "verify", status="ok", flagged=True,
                                   output={"self_contained": {"rationale": "r", "passed": False},
                                           "answerable": {"rationale": "r", "passed": True}}, by="t")
        rows = {r.id: r for r in store.queue_page("ann")}
        assert rows[ids[2]].flags == "verify" and rows[ids[1]].flags is None
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            table = app.screen.query_one("DataTable")
            assert "⚑" in str(table.get_row(ids[2])[1]) and "⚑" not in str(table.get_row(ids[1])[1])



# ------------------------------------------------------------------------------------- the refine diff
def _refine(store, pair_id, original: str, refined: str) -> None:
    store.save_curation_result(pair_id, "refine", status="ok", by="ann", output={
        "original_question": original, "question": refined,
        "original_answer": "Answer 2.", "answer": "Answer 2, 👨\u200d👩\u200d👦.", "changes": "rewrote it"})


def _huge_pair() -> tuple[str, str]:
    import random

    rng = random.Random(5)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "🇫🇷", "café"]
    old = [rng.choice(words) for _ in range(20_000)]
    new = [w if k % 3 else rng.choice(words) for k, w in enumerate(old)]
    return " ".join(old), " ".join(new)


async def test_a_huge_refine_diff_leaves_keys_answered_and_escape_closes_the_screen(project, monkeypatch):
    import threading

    from textual import events

    from benchwright.core import text_diff
    from benchwright.core.text_diff import DiffCancelled
    from benchwright.tui.screens import curation

    ended, how = threading.Event(), []

    def watched(old, new, **kw):
        if len(old) < 1000:  # the short answer's diff, computed at once
            return real(old, new, **kw)
        try:
            return real(old, new, **kw)
        except DiffCancelled:
            how.append("cancelled")
            raise
        finally:
            ended.set()

    real = curation.word_diff
    monkeypatch.setattr(curation, "word_diff", watched)
    monkeypatch.setattr(text_diff, "DEFAULT_TIMEOUT_S", 120)  # it would run for minutes if not cancelled
    db, ids = project
    old, new = _huge_pair()
    with Store.open(db) as store:
        _refine(store, ids[1], old, new)
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(140, 50)):
            screen = CurationScreen(store, ids[1], "ann")
            await app.push_screen(screen)
            refine = str(screen.query_one("#step-refine").render())
            assert "computing diff…" in refine
            worker = next(w for w in app.workers if w.group == "curation-diff")
            assert not worker.is_finished  # the huge diff runs in its thread meanwhile
            answered_while_computing = []
            back = screen.action_back
            monkeypatch.setattr(screen, "action_back", lambda: (answered_while_computing.append(not ended.is_set()),
                                                                back()))
            app.post_message(events.Key("escape", None))  # as the terminal sends it (no waiting for idle)
            for _ in range(1000):
                if app.screen is not screen:
                    break
                await asyncio.sleep(0.01)
            assert app.screen is not screen
            assert answered_while_computing == [True]  # the key was answered while the diff computed
            for _ in range(1000):
                if worker.is_cancelled:
                    break
                await asyncio.sleep(0.01)
            assert worker.is_cancelled
            assert await asyncio.to_thread(ended.wait, 30) and how == ["cancelled"]  # the thread stopped too


async def test_a_long_refine_diff_arrives_from_the_worker_and_says_approximate(project, monkeypatch):
    from benchwright.core import text_diff

    db, ids = project
    old = " ".join(["alpha", "beta", "gamma"][k % 3] for k in range(700))
    new = " ".join(w if k % 5 else "omega" for k, w in enumerate(old.split(" ")))
    monkeypatch.setattr(text_diff, "DEFAULT_TIMEOUT_S", 1e-6)  # what a long diff meets at 1 s
    with Store.open(db) as store:
        _refine(store, ids[1], old, new)
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(140, 50)) as pilot:
            screen = CurationScreen(store, ids[1], "ann")
            await app.push_screen(screen)
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            refine = screen.query_one("#step-refine").render()
            assert "computing diff…" not in refine.plain
            assert "(approximate diff) " in refine.plain
            inserted = "".join(refine.plain[s.start:s.end] for s in refine.spans if "underline" in str(s.style))
            assert ", 👨\u200d👩\u200d👦" in inserted  # the short answer diff, emoji whole


async def test_a_refine_diff_that_fails_is_said_and_does_not_stay_computing(monkeypatch):
    """The diff worker raising (not a cancel) resets the screen's state and says so, instead of 'computing diff…'
    for good (the handler is the screen's; its worker runs with exit_on_error=False)."""
    from textual.worker import WorkerState

    from benchwright.tui.screens.curation import CurationScreen

    class _Worker:
        group, error = "curation-diff", RuntimeError("boom")

    class _Event:
        worker, state = _Worker(), WorkerState.ERROR

    screen = CurationScreen.__new__(CurationScreen)
    screen._computing = [("a", "b")]
    said = []
    monkeypatch.setattr("benchwright.tui.screens.curation.notify", lambda target, msg, **kw: said.append(msg))
    screen.on_worker_state_changed(_Event())
    assert screen._computing == [] and said == ["the diff failed: boom"]


async def test_the_images_step_runs_without_a_model_and_gates_the_next_steps(project):
    """No benchwright.toml at all: images (the first option) calls no model; a pair it dropped is left out of
    classify until x includes dropped pairs."""
    db, ids = project
    with Store.open(db) as store:
        store.save_text_version(ids[0], "See ![shot](https://x.org/a.png) [bold]x[/]", "answer", origin="imported",
                                by="t")
        provider = ScriptedProvider(answer)
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: provider)
        async with app.run_test(size=(140, 50)) as pilot:
            screen = CurationRunScreen(store, "ann", app.screen.flt)
            await app.push_screen(screen)
            await pilot.pause()
            await pilot.press("enter")  # images
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert "images finished: 6/6 · 0 failed" in str(screen.query_one("#run-status").render())
            assert store.curation_current(ids[0])["images"].flagged
            assert not store.curation_current(ids[1])["images"].flagged
            assert provider.calls == []
        _config(db)
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda c, r: provider)
        async with app.run_test(size=(140, 50)) as pilot:
            screen = CurationRunScreen(store, "ann", app.screen.flt)
            await app.push_screen(screen)
            await pilot.pause()
            await pilot.press("down", "enter")  # classify
            await app.workers.wait_for_complete()
            await pilot.pause()
            status = str(screen.query_one("#run-status").render())
            assert "classify finished: 5/5" in status
            assert "1 dropped pair left out (x includes them)" in status  # still said when the run is over
            assert "classify" not in store.curation_current(ids[0])
            assert len(provider.calls) == 5
