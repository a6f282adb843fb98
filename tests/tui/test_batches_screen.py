"""Batch mode in the app (issue 19): the batches screen (``B`` on the queue) lists the project's batches with their
counts and the highlighted one's details, literally, refreshes while open and cancels a batch at its provider after
a confirmation; the curation screens' ``b`` sends a step through the provider's batch API (the scripted provider's
batch backend here), shows the batcher's progress, says the batch keeps running when the run stops, and shows the
error of a provider without a batch API."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time

from hostile_project import HOSTILE, LITERAL_MARKS
from test_literal_text import screen_text, toasts
from textual.widgets import DataTable, OptionList

from benchwright.core.llm import ScriptedProvider
from benchwright.core.llm.base import LLMError
from benchwright.core.llm.batch import BatchItem, BatchStatus, NewRequest, ResultKind
from benchwright.core.text import printable
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.batches import BatchesScreen, CancelBatchScreen
from benchwright.tui.screens.curation import CurationRunScreen, CurationScreen

SIZE = (160, 50)
_n = itertools.count(1)


def add_batch(store: Store, *, requests: int = 3, provider: str = "openai", command: list[str] | None = None,
              status: BatchStatus = BatchStatus.PENDING) -> tuple[int, list[str]]:
    """A batch of ``requests`` made-up requests committed to the project; ``(its id, its custom_ids)``."""
    reqs = []
    for _ in range(requests):
        k = next(_n)
        cid = f"bw-test{k:08d}"
        reqs.append(NewRequest(cid, f"hash-{k}", 0, "classify", None, {"custom_id": cid, "params": {"k": k}}))
    batch_id, dropped = store.create_batch(
        label=f"benchwright-test{next(_n)}", provider=provider, provider_kind="openai", base_url=None,
        endpoint="/v1/chat/completions", owner="test:1:x", requests=reqs, status=status,
        command=command if command is not None else ["curation", "run", "classify", "--batch"])
    assert batch_id is not None and not dropped
    return batch_id, [r.custom_id for r in reqs]


def collect(store: Store, batch_id: int, custom_ids: list[str], kinds: list[ResultKind]) -> None:
    """Store one result per ``custom_id`` (of ``kinds``) and mark the batch collected (the rest missing)."""
    store.batch_submitted(batch_id, f"batch_{batch_id}")
    store.store_batch_results(batch_id, [BatchItem(c, k, {"custom_id": c}) for c, k in zip(custom_ids, kinds,
                                                                                             strict=False)])
    store.batch_collected(batch_id)


def _config(db, monkeypatch, extra: str = "") -> None:
    """The project's benchwright.toml (two roles on "openai", then ``extra``); no user configuration read."""
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(db.parent / "no-config.toml"))
    (db.parent / "benchwright.toml").write_text(
        '[roles.generator]\nprovider = "openai"\nmodel = "gen-model"\n'
        '[roles.verifier]\nprovider = "openai"\nmodel = "ver-model"\n' + extra)


def _table_rows(screen) -> list[list[str]]:
    table = screen.query_one("#batches-table", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _detail(screen) -> str:
    return str(screen.query_one("#batches-detail").render())


async def _until(pilot, done, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


@contextlib.asynccontextmanager
async def _classify_as_batch(store: Store, pair_id: str, provider, *, until_submitted: bool = False):
    """The app on ``pair_id``'s curation screen, ``b`` (batch on) and ``1`` (classify) pressed: ``(app, pilot)``;
    with ``until_submitted``, once the batch is at the provider."""
    app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda config, role: provider)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(CurationScreen(store, pair_id, "ann"))
        await pilot.pause()
        await pilot.press("b", "1")
        if until_submitted:
            await _until(pilot, lambda: [b.status for b in store.batches()] == [BatchStatus.SUBMITTED],
                         "the batch submitted")
        yield app, pilot


def _never_ending(db, monkeypatch) -> ScriptedProvider:
    """A scripted "openai" whose batches never end, polled every 0.05 s (benchwright.toml written)."""
    _config(db, monkeypatch, "[batch]\npoll_interval_s = 0.05\ngather_s = 0.01\n")
    provider = ScriptedProvider(classify, name="openai")
    provider.batch.polls = 10**9
    return provider


def classify(request):
    assert request.schema_name == "classification", request.schema_name
    return {"rationale": "reads the code", "code_understanding_relevant": True, "category": "Business Logic"}


# ------------------------------------------------------------------------------------------ the batches screen
async def test_b_on_the_queue_lists_the_batches_with_counts_and_details(project, monkeypatch):
    db, _ids = project
    _config(db, monkeypatch, "[batch]\npoll_interval_s = 0.1\n")
    with Store.open(db) as store:
        done, done_ids = add_batch(store, requests=4)
        collect(store, done, done_ids, [ResultKind.SUCCEEDED, ResultKind.SUCCEEDED, ResultKind.ERRORED])
        running, _ = add_batch(store, requests=2, command=["judge", "run", "--batch"])
        store.batch_submitted(running, "msgbatch_running")
        store.batch_state(running, status=BatchStatus.SUBMITTED, provider_status="in_progress",
                          counts={"processing": 2})
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("B")
            await _until(pilot, lambda: isinstance(app.screen, BatchesScreen), "the batches screen")
            await pilot.pause()
            screen = app.screen
            rows = _table_rows(screen)
            # newest first; back = succeeded + errored + expired + cancelled + missing; "not done" counts the
            # missing one
            assert [r[:10] for r in rows] == [
                [str(running), "openai", "submitted", "in_progress", "2", "0", "0", "0", "2", "0"],
                [str(done), "openai", "collected", "-", "4", "4", "1", "1", "0", "0"],
            ]
            assert "2 batches, 1 open" in str(screen.query_one("#batches-head").render())
            assert "every 0.1 s ([batch] poll_interval_s)" in str(screen.query_one("#batches-head").render())
            detail = _detail(screen)
            assert "provider batch id: msgbatch_running" in detail
            assert "command: benchwright judge run --batch" in detail
            assert "provider counts: processing 2" in detail
            assert "benchwright batches resume" in detail
            await pilot.press("down")
            await pilot.pause()
            detail = _detail(screen)
            assert f"batch #{done}" in detail and "succeeded 2, errored 1, missing 1" in detail
            assert "command: benchwright curation run classify --batch" in detail

            # the list re-reads the project on its own (here every 0.1 s, the poll interval being shorter than 2 s)
            # and keeps the highlighted batch highlighted
            newer, _ = add_batch(store, requests=1)
            await _until(pilot, lambda: len(_table_rows(screen)) == 3, "the new batch in the list")
            assert _table_rows(screen)[0][0] == str(newer)
            assert screen.current == done and f"batch #{done}" in _detail(screen)
            await pilot.press("escape")
            await pilot.pause()
            assert type(app.screen).__name__ == "QueueScreen"


async def test_text_from_the_project_is_shown_literally(project, monkeypatch):
    db, _ids = project
    _config(db, monkeypatch)
    with Store.open(db) as store:
        bid, _ = add_batch(store, provider=HOSTILE, command=["curation", "run", HOSTILE, "--batch"])
        store.batch_submitted(bid, "batch_1")
        store.batch_state(bid, status=BatchStatus.FAILED, provider_status=HOSTILE, error=f"refused: {HOSTILE}")
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=(220, 60)) as pilot:
            await app.push_screen(BatchesScreen(store, "ann"))
            await pilot.pause()
            text = screen_text(app)
            for mark in LITERAL_MARKS:
                assert text.count(mark) >= 3, mark  # provider, provider status, command, error
            assert "error: refused: " in text
            await pilot.press("c")  # a failed batch cannot be cancelled: said, literally, no dialog
            await pilot.pause()
            assert not isinstance(app.screen, CancelBatchScreen)
            assert any("only a submitted batch can be cancelled" in t for t in toasts(app))
            assert app.is_running


async def test_c_cancels_the_highlighted_batch_at_its_provider_after_a_confirmation(project, monkeypatch):
    db, _ids = project
    _config(db, monkeypatch)
    provider = ScriptedProvider(classify, name="openai")
    with Store.open(db) as store:
        bid, cids = add_batch(store, requests=2)
        remote_id = await provider.batch.submit([{"custom_id": c, "params": {}} for c in cids], label="x")
        store.batch_submitted(bid, remote_id)
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda config, role: provider)
        async with app.run_test(size=SIZE) as pilot:
            await app.push_screen(BatchesScreen(store, "ann"))
            await pilot.pause()
            await pilot.press("c")
            await pilot.pause()
            assert isinstance(app.screen, CancelBatchScreen)
            await pilot.press("n")  # kept running: nothing asked of the provider
            await pilot.pause()
            assert isinstance(app.screen, BatchesScreen)
            assert provider.batch.batches[remote_id]["cancelled"] is False
            await pilot.press("c")
            await pilot.pause()
            await pilot.press("y")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert provider.batch.batches[remote_id]["cancelled"] is True
            assert provider.closed
            stored = store.batch(bid)
            assert stored.status is BatchStatus.SUBMITTED and stored.provider_status == "canceling"
            assert any(f"batch #{bid}: cancellation asked; the provider says canceling" in t for t in toasts(app))
            assert _table_rows(app.screen)[0][3] == "canceling"


async def test_a_cancellation_the_provider_refuses_is_a_readable_literal_toast(project, monkeypatch):
    db, _ids = project
    _config(db, monkeypatch)
    provider = ScriptedProvider(classify, name="openai")

    async def refuse(batch_id):
        raise LLMError(f"the provider said no: {HOSTILE}")

    provider.batch.cancel = refuse
    with Store.open(db) as store:
        bid, _ = add_batch(store, requests=1)
        store.batch_submitted(bid, "fakebatch-9")
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda config, role: provider)
        async with app.run_test(size=SIZE) as pilot:
            await app.push_screen(BatchesScreen(store, "ann"))
            await pilot.pause()
            await pilot.press("c", "y")
            await app.workers.wait_for_complete()
            await pilot.pause()
            shown = [t for t in toasts(app) if "not cancelled" in t]
            assert shown and "the provider said no: " + printable(HOSTILE) in shown[0]
            assert store.batch(bid).status is BatchStatus.SUBMITTED
            assert app.is_running


# ------------------------------------------------------------------------------------------ curation as a batch
async def test_b_in_the_curation_screen_sends_the_step_as_a_batch_with_progress(project, monkeypatch):
    db, ids = project
    _config(db, monkeypatch, "[batch]\npoll_interval_s = 0.05\ngather_s = 0.01\n")
    provider = ScriptedProvider(classify, name="openai")
    provider.batch.polls = 2
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda config, role: provider)
        async with app.run_test(size=SIZE) as pilot:
            screen = CurationScreen(store, ids[1], "ann")
            await app.push_screen(screen)
            await pilot.pause()
            shown: list[str] = []
            real = screen._status
            monkeypatch.setattr(screen, "_status", lambda m: (shown.append(m), real(m))[1])
            await pilot.press("b")
            assert "batch: on" in str(screen.query_one("#curation-status").render())
            await pilot.press("1")
            await app.workers.wait_for_complete()
            await pilot.pause()
        assert provider.calls == []  # nothing online: the one request went through the batch API
        assert provider.batch.submissions == 1 and len(provider.batch.answered) == 1
        assert store.curation_current(ids[1])["classify"].status == "ok"
        [batch] = store.batches()
        assert batch.status is BatchStatus.COLLECTED and batch.request_count == 1
        assert batch.command == ["curation", "run", "classify", "--pair", ids[1], "--as", "ann", "--batch"]
        progress = [m for m in shown if "as a batch: batch #" in m]
        assert any("in_progress" in m for m in progress), shown
        assert "classify: done" in shown[-1]


async def test_a_run_over_the_queue_as_a_batch_puts_every_pair_in_one_batch(project, monkeypatch):
    db, ids = project
    _config(db, monkeypatch, "[batch]\npoll_interval_s = 0.05\ngather_s = 0.05\n")
    provider = ScriptedProvider(classify, name="openai")
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann", resume=False, provider_factory=lambda config, role: provider)
        async with app.run_test(size=SIZE) as pilot:
            screen = CurationRunScreen(store, "ann", app.screen.flt)
            await app.push_screen(screen)
            await pilot.pause()
            await pilot.press("b")
            options = screen.query_one("#run-steps", OptionList)
            options.focus()
            options.highlighted = 1  # classify
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            status = str(screen.query_one("#run-status").render())
            assert "classify finished" in status and f"batch #1 ended {len(ids)}/{len(ids)}" in status
        assert provider.calls == [] and provider.batch.submissions == 1
        [batch] = store.batches()
        assert batch.request_count == len(ids) and batch.command[:3] == ["curation", "run", "classify"]
        assert all(store.curation_current(p)["classify"].status == "ok" for p in ids)


async def test_leaving_while_the_batch_waits_leaves_it_running_and_says_how_to_collect_it(project, monkeypatch):
    db, ids = project
    provider = _never_ending(db, monkeypatch)
    with Store.open(db) as store:
        async with _classify_as_batch(store, ids[1], provider, until_submitted=True) as (app, pilot):
            await pilot.press("escape")  # stops waiting
            await pilot.pause(0.2)
            await asyncio.sleep(0)
            said = [t for t in toasts(app) if "batch still running" in t]
            assert said and "batch #1 keeps running at the provider" in said[0]
            assert "benchwright batches resume collects it, or run the step again" in said[0]
            (remote,) = provider.batch.batches.values()
            polls = remote["polls"]
            await pilot.pause(0.3)  # 6 poll intervals: the app's loop no longer polls a batch nobody waits for
            assert remote["polls"] == polls
        [batch] = store.batches()
        assert batch.status is BatchStatus.SUBMITTED  # kept: a rerun or batches resume collects it
        assert provider.batch.batches[batch.provider_batch_id]["cancelled"] is False
        assert "classify" not in store.curation_current(ids[1])


async def test_a_provider_without_a_batch_api_says_so_literally(project, monkeypatch):
    db, ids = project
    _config(db, monkeypatch)

    class NoBatchProvider(ScriptedProvider):
        batch_backend = None

    provider = NoBatchProvider(classify, name=f"plain {HOSTILE}")
    with Store.open(db) as store:
        async with _classify_as_batch(store, ids[1], provider) as (app, pilot):
            await app.workers.wait_for_complete()
            await pilot.pause()
            shown = [t for t in toasts(app) if "cannot run classify" in t]
            assert shown and f"provider 'plain {printable(HOSTILE)}' (kind fake) has no batch API" in shown[0]
        assert provider.calls == [] and store.batches() == []
        assert "classify" not in store.curation_current(ids[1])


async def test_quitting_while_the_batch_waits_ends_the_app_and_keeps_the_batch(project, monkeypatch):
    db, ids = project
    provider = _never_ending(db, monkeypatch)
    with Store.open(db) as store:
        async with _classify_as_batch(store, ids[1], provider, until_submitted=True) as (app, pilot):
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert app.return_code in (None, 0) and app._exception is None
        [batch] = store.batches()
        assert batch.status is BatchStatus.SUBMITTED
        assert provider.batch.batches[batch.provider_batch_id]["cancelled"] is False


def test_a_cancelled_batch_does_not_read_expired():
    """Issue 20 tester finding: the column lumping expired, cancelled and missing is labelled "not done" (with a
    legend in the head line), never "expired"."""
    from benchwright.tui.screens.batches import COLUMNS, NOT_DONE_LEGEND, batch_cells

    row = {"id": 7, "provider": "openai", "status": "cancelled", "provider_status": "cancelled", "requests": 48,
           "succeeded": 0, "errored": 0, "expired": 0, "cancelled": 48, "missing": 0, "waiting": 0, "used": 0,
           "created_at": None, "ended_at": None, "collected_at": None}
    cells = dict(zip(COLUMNS, (c.plain for c in batch_cells(row)), strict=True))
    assert "expired" not in COLUMNS and cells["not done"] == "48" and cells["back"] == "48"
    assert "cancelled" in NOT_DONE_LEGEND and "expired" in NOT_DONE_LEGEND
