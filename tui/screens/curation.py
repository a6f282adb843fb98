"""Curation in the app (RepoProbe §3.2): one pair's pipeline results with keys to run each step, and a run of
one step over the filtered queue with a progress bar. LLM calls run in an async worker, so the UI never
blocks; ``escape`` cancels a run and keeps every result that finished. A long refine diff is computed in a
thread worker (``computing diff…`` meanwhile); closing the screen cancels it.

``b`` sends the step's calls through the provider's batch API (issue 19, docs/batches.md; off by default): the
screen shows the batcher's progress line while it waits. Cancelling the run, closing the screen or quitting leaves
the batch running at the provider (it is kept in the project): ``benchwright batches resume`` collects it, or the
same step run again, which submits nothing twice."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState, get_current_worker

from benchwright.core.checklist_diff import DELETE, EQUAL, TextDiff, word_diff
from benchwright.core.curation import STEPS, StepSettings
from benchwright.core.errors import BenchwrightError
from benchwright.core.llm.jobs import JobProgress, describe_cost
from benchwright.core.steps import STEP_LABELS, STEP_REGISTRY  # step -> its label, from the step registry
from benchwright.core.text import plural, printable
from benchwright.core.text_diff import LONG_DIFF_CHARS, DiffCancelled
from benchwright.db import QueueFilter, Store

from ..services.views import curation_view
from ..widgets import error_text, literal, notify


def render_text_diff(diff: TextDiff) -> Text:
    """A word diff inline (deleted struck through in red, inserted underlined in green), shown literally;
    ``(approximate diff)`` or ``(normalization only)`` first when it applies."""
    t = Text()
    note = diff.note()
    if note:
        t.append(f"({note}) ", style="bold yellow" if diff.approximate else "dim italic")
    for s in diff.segments:
        if s.op == EQUAL:
            t.append(printable(s.text))
        elif s.op == DELETE:
            t.append(printable(s.text), style="bold red strike")
        else:
            t.append(printable(s.text), style="bold green underline")
    return t


def render_diff(old: str, new: str) -> Text:
    """:func:`render_text_diff` of the word diff of ``old`` -> ``new``."""
    return render_text_diff(word_diff(old, new))


def render_result(step: str, result, *, has_checklist: bool = False,
                  diff: Callable[[str, str], TextDiff | None] = word_diff) -> Text:
    """One step's current result as literal text (None: not run yet).

    ``diff(old, new)`` gives the refine step's word diffs; None from it shows ``computing diff…``.
    """
    t = Text()
    t.append(f"{STEP_LABELS[step]}\n", style="bold")
    if result is None:
        if step == "checklist" and has_checklist:
            t.append("  not generated: the pair has a checklist already (f, then 4, generates a new version)\n",
                     style="dim")
        else:
            t.append("  not run yet\n", style="dim")
        return t
    head = "failed" if result.status == "failed" else ("FLAGGED" if result.flagged else "ok")
    t.append(f"  {head}", style="bold red" if head != "ok" else "bold green")
    model = f" · {result.model}" if result.model else ""
    t.append(f"{model} · {result.created_at[:19]} · {plural(result.calls_made, 'call')}\n", style="dim")
    if result.status == "failed":
        t.append("  " + printable(result.reason or "") + "\n", style="red")
        if result.raw_text:
            t.append("  raw output: " + printable(result.raw_text[:600]) + "\n", style="dim")
        return t
    o = result.output
    if step == "images":
        reason = o.get("reason")
        t.append("  " + (f"relies on an image: {printable(str(reason))}" if reason else "relies on no image") + "\n")
    elif step == "classify":
        rel = "relevant" if o.get("code_understanding_relevant") else "NOT code-understanding relevant"
        t.append(f"  {rel} · {printable(str(o.get('category', '')))}\n")
        t.append("  " + printable(o.get("rationale", "")) + "\n", style="italic")
    elif step == "enrich":
        if not o.get("links"):
            t.append("  no external links: kept in its original form\n")
        for lk in o.get("links", []):
            t.append(f"  {lk['status']:<10} ", style="red" if lk["status"] == "unresolved" else "")
            t.append(printable(lk["url"]) + "\n")
            if lk.get("summary"):
                t.append("             " + printable(lk["summary"]) + "\n", style="italic")
        if o.get("integrated"):
            t.append("  summaries integrated into question and answer\n", style="green")
    elif step == "refine":
        t.append("  " + printable(o.get("changes", "")) + "\n", style="italic")
        for key in ("question", "answer"):
            t.append(f"  {key} (original → refined):\n  ", style="bold")
            d = diff(o.get(f"original_{key}", ""), o.get(key, ""))
            t.append_text(render_text_diff(d) if d is not None else Text("computing diff…", style="dim italic"))
            t.append("\n")
    elif step == "checklist":
        items = (o.get("checklist") or {}).get("items", [])
        for i, it in enumerate(items, 1):
            t.append(f"  {i}. [{it['weight']}] " + printable(it["key_point"]) + "\n")
    elif step == "verify":
        for key, label in (("self_contained", "self-contained"), ("answerable", "answerable"),
                           ("links", "external links resolved")):
            if key == "links" and "links" not in o:  # the link check is there only when a link was unresolved
                continue
            check = o.get(key, {})
            passed = check.get("passed")
            t.append(f"  {'✓' if passed else '✗'} {label}: ", style="green" if passed else "bold red")
            t.append(printable(check.get("rationale", "")) + "\n")
    return t


def _dropped_note(plan) -> str:
    """``N dropped pairs left out (x includes them)``: what a run left to the gating steps that dropped them."""
    n = sum(plan.dropped.values())
    return f"{n} dropped pair{'' if n == 1 else 's'} left out (x includes them)"


def _idle_status(step: str, plan) -> str:
    """Why a run from the queue has nothing to do, naming this screen's keys (``Selection.idle_reason``)."""
    from ..services.curation_runs import IdleReason

    reason = plan.idle_reason
    if reason is IdleReason.NO_MATCH:
        return f"{step}: no pair matches the filter"
    if reason is IdleReason.ONLY_HUMAN_CHECKLISTS:
        return (f"{step}: nothing to do; {plural(len(plan.human), 'pair')} {'has' if len(plan.human) == 1 else 'have'} "
                "a checklist a person made or edited")
    if reason is IdleReason.ALL_DROPPED:
        return f"{step}: nothing to do; every matching pair was dropped by an earlier gating step (x includes them)"
    return f"{step}: nothing to do (every matching pair is done; f runs them again)"


def progress_line(p: JobProgress) -> str:
    """``done/total · rate · eta · tokens · cost`` for the status line."""
    eta = f"{p.eta_s:.0f}s" if p.eta_s is not None else "-"
    tok = p.usage.input_tokens + p.usage.output_tokens
    left = f" · {p.skipped} left to another run" if p.skipped else ""
    return (f"{p.done}/{p.total} · {p.failed} failed{left} · {p.rate:.1f}/s · eta {eta} · {p.calls} call{'' if p.calls == 1 else 's'}, "
            f"{p.cached} cached · {tok:,} tokens · "
            f"{describe_cost(p.cost_usd, calls=p.calls, cost_unknown=p.cost_unknown, usage_missing=p.usage_missing, unanswered=p.unanswered)}")


def open_batch_ids(store: Store, batcher) -> list[int]:
    """The local ids of the batches ``batcher`` (a :class:`~benchwright.core.llm.batch.Batcher`) made or waited
    for that the project still holds open (their results not all back), in order."""
    from benchwright.core.llm.batch import OPEN_BATCH_STATUSES

    out = []
    for bid in sorted(batcher.progress.batches):
        b = store.batch(bid)
        if b is not None and b.status in OPEN_BATCH_STATUSES:
            out.append(bid)
    return out


def batch_left_running_line(batch_ids: list[int]) -> str:
    """What the app says when a step stops while its batches still run: ``batch #N keeps running; ...``."""
    ids = ", ".join(f"#{b}" for b in batch_ids)
    verb = "keeps" if len(batch_ids) == 1 else "keep"
    return (f"batch {ids} {verb} running at the provider (kept in the project); benchwright batches resume "
            "collects it, or run the step again (nothing is submitted twice)")


class _RunMixin:
    """Runs one step over pairs in a worker; subclasses show the progress."""

    running: bool = False
    batch: bool = False
    """``b``: send the step's calls through the provider's batch API."""
    batch_line: str = ""
    """The batcher's latest progress line (empty outside a batch run)."""
    run_error: str = ""
    """Why the latest :meth:`_run_step` could not start (a configuration error: no provider, no key), as shown."""

    def batch_command(self, step: str) -> list[str]:  # pragma: no cover - overridden
        """The ``benchwright`` command line that runs the same step (recorded with the batch, for ``batches
        resume``)."""
        return ["curation", "run", step, "--batch"]

    async def _run_step(self, step: str, pair_ids: list[str], force: bool) -> JobProgress | None:
        from benchwright.tui.services.curation_runs import run_curation

        from ..services.llm import STEP_ROLES, make_llm_client, project_dir_of

        store: Store = self.store
        client = None
        self.run_error = ""
        if STEP_ROLES[step] is None:  # a step that calls no model (images): no client, no API key
            settings = StepSettings(model="", project_dir=project_dir_of(store), force=force)
        else:
            batch = None
            if self.batch:
                from ..services.batches import BatchOptions

                batch = BatchOptions()
            try:
                client, role = make_llm_client(store, STEP_ROLES[step], None,
                                               provider_factory=getattr(self.app, "provider_factory", None),
                                               batch=batch)
            except BenchwrightError as e:
                message = error_text(e)
                self.run_error = message
                notify(self.app, message, title="cannot run " + step, severity="error", timeout=10)
                return None
            settings = StepSettings(model=role.model, params=role.params, project_dir=project_dir_of(store),
                                    force=force)
        batcher = client.batch if client is not None else None
        if batcher is not None:
            batcher.policy.command = self.batch_command(step)
            batcher.on_progress = self._batch_progress  # the batcher runs on the app's loop (an async worker)
        self.batch_line = ""
        try:
            return await run_curation(store, client, step, pair_ids, settings, by=self.annotator,
                                      on_progress=self.on_job_progress)
        except asyncio.CancelledError:
            running = open_batch_ids(store, batcher) if batcher is not None else []
            if running:
                notify(self.app, batch_left_running_line(running), title=f"{step}: batch still running",
                       severity="warning", timeout=15)
            raise
        finally:
            if batcher is not None:  # its pollers would go on polling on the app's loop
                await batcher.aclose()
            if client is not None:
                await client.provider.aclose()

    def _batch_progress(self, progress) -> None:
        """The batcher's report (a :class:`~benchwright.core.llm.batch.BatchProgress`): keep its line, show it."""
        self.batch_line = progress.line()
        self.on_batch_progress(self.batch_line)

    def on_batch_progress(self, line: str) -> None:  # pragma: no cover - overridden
        """Called with the batcher's progress line after each change of a batch run."""

    def on_job_progress(self, p: JobProgress) -> None:  # pragma: no cover - overridden
        """Called after each finished pair."""


class CurationScreen(_RunMixin, Screen):
    """One pair's curation results; run a step on it with 0-5, all steps with ``a``."""

    BINDINGS = [
        Binding("escape", "back", "Back / cancel", id="curation.back"),
        # 0-5: the steps in pipeline order (images, classify, enrich, refine, checklist, verify)
        *(Binding(str(i), f"run('{step}')", STEP_REGISTRY.get(step).title, id=f"curation.{step}")
          for i, step in enumerate(STEPS)),
        Binding("a", "run_all", "All steps", id="curation.all"),
        Binding("f", "toggle_force", "Force", id="curation.force"),
        Binding("x", "toggle_all", "Include dropped", id="curation.all_pairs"),
        Binding("b", "toggle_batch", "Batch", id="curation.batch"),
    ]

    def __init__(self, store: Store, pair_id: str, annotator: str) -> None:
        super().__init__()
        self.store = store
        self.pair_id = pair_id
        self.annotator = annotator
        self.force = False
        self.all_pairs = False  # x: also run on pairs an earlier gating step dropped (the CLI's --all)
        self._worker = None
        self._step = ""  # the step running
        self._diffs: dict[tuple[str, str], TextDiff] = {}  # the refine diffs shown, by (original, refined)
        self._wanted: list[tuple[str, str]] = []  # long ones not computed yet
        self._computing: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="curation-status")
        with VerticalScroll(id="curation-body"):
            for step in STEPS:
                yield Static(id=f"step-{step}", classes="curation-step")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_results()
        self._status("")

    def _status(self, message: str) -> None:
        n = self.store.ordinal_of(self.pair_id)
        force = " · force: on (ignores finished results and the cache)" if self.force else ""
        force += " · including dropped pairs" if self.all_pairs else ""
        force += " · batch: on (the provider's batch API)" if self.batch else ""
        try:
            self.query_one("#curation-status", Static).update(
                Text(f"Curation of pair #{n}{force}  {message}", no_wrap=False))
        except NoMatches:  # the screen is being taken down (the app quits while a batch waits)
            return

    def refresh_results(self) -> None:
        """Show the current result of every step."""
        view = curation_view(self.store, self.pair_id)
        current, has_checklist = view.results, view.has_checklist
        used: set[tuple[str, str]] = set()
        self._wanted = []
        for step in STEPS:
            self.query_one(f"#step-{step}", Static).update(render_result(
                step, current.get(step), has_checklist=has_checklist, diff=lambda a, b: self._diff_for(a, b, used)))
        self._diffs = {k: v for k, v in self._diffs.items() if k in used}
        if self._wanted and self._wanted != self._computing:
            self._computing = list(self._wanted)
            self._compute_diffs(self._computing)

    def _diff_for(self, old: str, new: str, used: set[tuple[str, str]]) -> TextDiff | None:
        """The word diff of ``old`` -> ``new``: computed at once when short, else None (``computing diff…``)
        until the worker has it."""
        key = (old, new)
        used.add(key)
        if key not in self._diffs and len(old) + len(new) <= LONG_DIFF_CHARS:
            self._diffs[key] = word_diff(old, new)
        if key not in self._diffs:
            self._wanted.append(key)
        return self._diffs.get(key)

    class DiffsComputed(Message):
        """Posted by the diff worker: word diffs by ``(old, new)``."""

        def __init__(self, diffs: dict[tuple[str, str], TextDiff]) -> None:
            super().__init__()
            self.diffs = diffs

    @work(thread=True, exclusive=True, group="curation-diff", exit_on_error=False)
    def _compute_diffs(self, keys: list[tuple[str, str]]) -> None:
        worker = get_current_worker()
        try:
            diffs = {k: word_diff(*k, cancelled=lambda: worker.is_cancelled) for k in keys}
        except DiffCancelled:
            return
        if not worker.is_cancelled:
            self.post_message(self.DiffsComputed(diffs))

    def on_unmount(self) -> None:
        """Closing the screen cancels a diff still computing (its thread stops at its next check)."""
        self.workers.cancel_group(self, "curation-diff")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A diff that failed says so (it never takes the app down) and may be computed again on the next
        refresh, instead of leaving ``computing diff…`` for good."""
        if event.worker.group == "curation-diff" and event.state == WorkerState.ERROR:
            self._computing = []
            notify(self, f"the diff failed: {event.worker.error}", severity="error", timeout=8)

    @on(DiffsComputed)
    def _diffs_computed(self, event: DiffsComputed) -> None:
        self._diffs.update(event.diffs)
        self._computing = []
        self.refresh_results()

    def action_toggle_force(self) -> None:
        """Toggle force: rerun finished steps and bypass the cache."""
        self.force = not self.force
        self._status("")

    def action_toggle_all(self) -> None:
        """Toggle running steps on the pair even when an earlier gating step dropped it."""
        self.all_pairs = not self.all_pairs
        self._status("")

    def action_toggle_batch(self) -> None:
        """Toggle sending the steps through the provider's batch API (half price, results within 24 hours)."""
        if self.running:
            notify(self, "A step is running; the batch setting applies to the next one.", timeout=3)
        self.batch = not self.batch
        self._status("")

    def batch_command(self, step: str) -> list[str]:
        """``curation run STEP --pair ID --as NAME --batch`` (and ``--force``, ``--all`` as set)."""
        return ["curation", "run", step, "--pair", self.pair_id, "--as", self.annotator, "--batch",
                *(["--force"] if self.force else []), *(["--all"] if self.all_pairs else [])]

    def on_batch_progress(self, line: str) -> None:
        """Show the batch's progress in the status line."""
        self._status(f"· {self._step} as a batch: {line} (escape stops waiting; the batch keeps running)")

    def action_run(self, step: str) -> None:
        """Run ``step`` on this pair (in the background)."""
        self._start([step])

    def action_run_all(self) -> None:
        """Run every step in order on this pair."""
        self._start(list(STEPS))

    def _start(self, steps: list[str]) -> None:
        if self.running:
            notify(self, "A step is running; escape cancels it.", timeout=3)
            return
        self._worker = self._run_steps(steps)

    @work(exclusive=True, group="curation")
    async def _run_steps(self, steps: list[str]) -> None:
        from benchwright.tui.services.curation_runs import plan_pairs

        self.running = True
        try:
            for step in steps:
                plan = plan_pairs(self.store, step, pair_ids=[self.pair_id], force=self.force,
                                  all_pairs=self.all_pairs)
                todo = plan.pair_ids
                if plan.dropped:
                    self._status(f"· {step}: not run, {next(iter(plan.dropped))} dropped the pair "
                                 "(x includes dropped pairs)")
                    continue
                if not todo:
                    self._status(f"· {step}: already done (f forces a rerun)")
                    continue
                self._step = step
                self._status(f"· running {step}" + (" as a batch" if self.batch else "") + "… (escape cancels)")
                final = await self._run_step(step, todo, self.force)
                self.refresh_results()
                if final is None:
                    self._status(f"· {step}: not run: {self.run_error or 'see the message'}")
                    return
                self._status(f"· {step}: {'failed' if final.failed else 'done'} ({plural(final.calls, 'call')}, "
                             f"{final.cached} cached)")
        except asyncio.CancelledError:
            self._status("· cancelled; finished steps are kept")
            raise
        finally:
            self.running = False
            self.refresh_results()

    def action_back(self) -> None:
        """Cancel a running step, or go back."""
        if self.running and self._worker is not None:
            self._worker.cancel()
            self.running = False
            self._status("· cancelled; finished steps are kept")
            return
        self.dismiss(self.pair_id)


class CurationRunScreen(_RunMixin, Screen):
    """Run one step over the pairs of the current queue filter, with a progress bar; ``escape`` cancels."""

    BINDINGS = [
        Binding("escape", "back", "Back / cancel", id="curation_run.back"),
        Binding("f", "toggle_force", "Force", id="curation_run.force"),
        Binding("x", "toggle_all", "Include dropped", id="curation_run.all_pairs"),
        Binding("b", "toggle_batch", "Batch", id="curation_run.batch"),
    ]

    def __init__(self, store: Store, annotator: str, flt: QueueFilter) -> None:
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.flt = flt
        self.force = False
        self.all_pairs = False  # x: also run on pairs an earlier gating step dropped (the CLI's --all)
        self._worker = None
        self._last = ""  # the run's latest figures (the batch line goes under them)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Run a curation step over the pairs of the current queue filter. Pairs already done "
                          "are skipped; finished calls are reused from the ledger."), id="run-intro")
        yield OptionList(*(Option(literal(STEP_LABELS[s]), id=s) for s in STEPS), id="run-steps")
        bar = ProgressBar(total=None, show_eta=False, id="run-progress")
        bar.display = False  # shown while a run moves it: an idle bar with no total would pulse (issue 20)
        yield bar
        yield Static(id="run-status")
        yield Footer()

    def _status(self, text: str) -> None:
        if self.batch_line:
            text += "\n" + self.batch_line
        try:
            self.query_one("#run-status", Static).update(Text(text))
        except NoMatches:  # the screen is being taken down (the app quits while a batch waits)
            return

    def action_toggle_force(self) -> None:
        """Toggle force: rerun finished pairs and bypass the cache."""
        self.force = not self.force
        self._status(f"force: {'on' if self.force else 'off'}")

    def action_toggle_all(self) -> None:
        """Toggle including the pairs an earlier gating step dropped."""
        self.all_pairs = not self.all_pairs
        self._status(f"including dropped pairs: {'on' if self.all_pairs else 'off'}")

    def action_toggle_batch(self) -> None:
        """Toggle sending the run's calls through the provider's batch API (half price, results within 24 hours)."""
        self.batch = not self.batch
        later = " (applies to the next run)" if self.running else ""
        self._status(f"batch: {'on' if self.batch else 'off'}{later}")

    def batch_command(self, step: str) -> list[str]:
        """``curation run STEP --where KEY=VALUE... --as NAME --batch`` (and ``--force``, ``--all`` as set): the
        queue's filter as the command line takes it."""
        from dataclasses import fields

        where = [x for f in fields(self.flt) if getattr(self.flt, f.name) is not None
                 for x in ("--where", f"{f.name}={getattr(self.flt, f.name)}")]
        return ["curation", "run", step, *where, "--as", self.annotator, "--batch",
                *(["--force"] if self.force else []), *(["--all"] if self.all_pairs else [])]

    def on_batch_progress(self, line: str) -> None:
        """Show the batch's progress under the run's figures."""
        self._status(self._last)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Start the chosen step."""
        if self.running:
            notify(self, "A run is in progress; escape cancels it.", timeout=3)
            return
        self._worker = self._run(str(event.option.id))

    def on_job_progress(self, p: JobProgress) -> None:
        """Move the bar and update the figures after each pair."""
        self.query_one("#run-progress", ProgressBar).update(total=p.total, progress=p.done)
        self._last = progress_line(p)
        self._status(self._last)

    @work(exclusive=True, group="curation-run")
    async def _run(self, step: str) -> None:
        import json

        from benchwright.tui.services.curation_runs import plan_pairs

        run_id = since = None
        if self.force:
            signature = json.dumps({"step": step, "filter": self.flt.__dict__, "from": "app",
                                    **({"all": True} if self.all_pairs else {})}, sort_keys=True)
            run_id, since, resumed = self.store.open_run(f"curation:{step}:force", signature, by=self.annotator)
            if not resumed:
                since = None
        plan = plan_pairs(self.store, step, where=self.flt, force=self.force, annotator=self.annotator, since=since,
                          all_pairs=self.all_pairs)
        ids = plan.pair_ids
        if not ids:
            if run_id is not None:
                self.store.finish_run(run_id)
            self._status(f"{self._batch_state()} · {_idle_status(step, plan)}")
            return
        notes = []
        if plan.resumed_done:
            notes.append(f"continuing the forced run started {since[11:19]} UTC ({plan.resumed_done} already done)")
        if plan.stale:
            notes.append(f"{plan.stale} stale results run again")
        if plan.human:
            notes.append(f"{len(plan.human)} human checklists left alone")
        if plan.dropped:
            notes.append(_dropped_note(plan))
        self.running = True
        self.batch_line = ""
        bar = self.query_one("#run-progress", ProgressBar)
        bar.display = True
        bar.update(total=len(ids), progress=0)
        self._last = (f"{step}: 0/{len(ids)}" + (" as a batch" if self.batch else "") + " (escape cancels)"
                      + (" · " + "; ".join(notes) if notes else ""))
        self._status(self._last)
        final = None
        try:
            final = await self._run_step(step, ids, self.force)
            if final is not None:
                if run_id is not None:
                    self.store.finish_run(run_id)
                self._status(f"{step} finished: " + progress_line(final)
                             + (" · " + _dropped_note(plan) if plan.dropped else ""))
            else:  # it could not start (no provider, no key): the error replaces the "0/N" line
                self._reset_progress()
                self._status(f"{self._batch_state()} · {step}: not run: {self.run_error or 'see the message'}")
        except asyncio.CancelledError:
            self._reset_progress(keep_bar=True)
            self._status(f"{step}: cancelled; finished pairs are saved. Run it again to continue.")
            raise
        except Exception as e:  # the worker's error is reported by Textual; the status must not say "0/N"
            self._reset_progress()
            self._status(f"{self._batch_state()} · {step}: stopped by an error: {e}")
            raise
        finally:
            self.running = False

    def _reset_progress(self, *, keep_bar: bool = False) -> None:
        """Forget the figures of a run that is no longer running (status line, batch line; the bar unless
        ``keep_bar``, which keeps how far a cancelled run got)."""
        self._last = ""
        self.batch_line = ""
        if not keep_bar:
            try:
                bar = self.query_one("#run-progress", ProgressBar)
            except NoMatches:
                return
            bar.update(total=None, progress=0)
            bar.display = False  # nothing runs: no pulsing "--%" bar

    def _batch_state(self) -> str:
        """``batch: on`` or ``batch: off``, kept in the status line after a run that did not start or failed (as
        the pair screen does)."""
        return f"batch: {'on' if self.batch else 'off'}"

    def action_back(self) -> None:
        """Cancel a running step, or go back to the queue."""
        if self.running and self._worker is not None:
            self._worker.cancel()
            self.running = False
            self._status("cancelled; finished pairs are saved. Run it again to continue.")
            return
        self.dismiss(None)
