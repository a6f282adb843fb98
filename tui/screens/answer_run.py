"""Agent answers in the app (issue 15, SWE-QA-Pro §3.1): the answering model explores each pair's repository with
read-only tools, over the pairs of the current queue filter, with a progress bar. Choose the model (the answer
role's from benchwright.toml, or type another), a condition that gives the agent a repository (core's condition
registry: ``documented`` and ``agentic`` on the registered checkout, ``code-only`` on its stripped copy) and the
number of samples, then ``enter`` (or ``ctrl+r``) runs. The run is an async worker on the app's loop, so the UI
never blocks; ``escape`` cancels it and keeps every answer that finished (a cancelled pair's finished turns are in
the ledger, so running again goes on from there). Finished runs are listed (stored, or failed with the reason);
the highlighted one's trajectory is shown beside the list (a failed run's too: the inspector shows answers only),
and ``enter`` on a stored one opens the judge inspector. All text is literal."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, OptionList, ProgressBar, Select, Static
from textual.widgets.option_list import Option

from benchwright.core.errors import BenchwrightError
from benchwright.core.llm.jobs import JobProgress
from benchwright.core.text import plural
from benchwright.db import QueueFilter, Store

from ..services.views import (
    AnswerRunResult,
    AnswerRunView,
    answer_run_result,
    answer_run_view,
    refusal_groups,
    run_trajectory_view,
)
from ..widgets import LiteralInput, error_text, literal, literal_options, notify
from .curation import progress_line


def render_run_result(r: AnswerRunResult) -> Text:
    """A result line: ``✓ #N sample S · stored · T turns, C calls`` or ``✗ #N sample S · failed: REASON``."""
    head = f"#{r.ordinal} sample {r.sample_index} · "
    if r.ok:
        t = Text("✓ ", style="bold green")
        t.append_text(literal(f"{head}stored · {r.turns} turn{'' if r.turns == 1 else 's'}, "
                              f"{r.calls} call{'' if r.calls == 1 else 's'} sent"))
        return t
    if r.status == "skipped":
        t = Text("· ", style="dim")
        t.append_text(literal(f"{head}skipped: {r.reason or 'done elsewhere'}", style="dim"))
        return t
    t = Text("✗ ", style="bold red")
    t.append_text(literal(f"{head}failed: {r.reason or 'no reason recorded'}", style="red"))
    return t


class AnswerRunScreen(Screen):
    """Run the agent over the pairs of the queue filter; see the module docstring for the keys."""

    BINDINGS = [
        Binding("escape", "back", "Back / cancel", id="answer_run.back"),
        Binding("ctrl+r", "run", "Run", id="answer_run.run"),
    ]

    def __init__(self, store: Store, annotator: str, flt: QueueFilter) -> None:
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.flt = flt
        self.running = False
        self._worker = None
        self._results: dict[str, AnswerRunResult] = {}  # result option id -> the finished run
        self._running_as: tuple[str, str] = ("", "")  # (model, condition) of the current run
        self.view: AnswerRunView  # read in compose

    def compose(self) -> ComposeResult:
        view = self.view = answer_run_view(self.store, self.annotator, self.flt)
        yield Header()
        yield Static(literal(
            f"Agent answers over the {view.matching} pairs of the current queue filter: the model explores each "
            "pair's repository with read-only tools (search, view, command line) and finishes with an answer. "
            "Pairs already answered are skipped; finished turns are reused from the ledger."), id="answer-run-intro")
        with Horizontal(id="answer-run-form"):
            yield Label("model")
            yield LiteralInput(value=view.model, placeholder="MODEL or PROVIDER:MODEL", id="answer-run-model")
            yield Label("condition")
            yield Select(literal_options([(title, name) for name, title, _ in view.conditions]),
                         value=_default_condition(view),
                         allow_blank=not view.conditions, id="answer-run-condition")
            yield Label("samples")
            yield Input(value="1", type="integer", id="answer-run-samples")
        yield Static(literal(view.model_problem or "", style="yellow"), id="answer-run-model-problem")
        yield Static(id="answer-run-plan")
        yield ProgressBar(total=None, show_eta=False, id="answer-run-progress")
        yield Static(literal("enter or ctrl+r runs · escape cancels a run, else goes back", style="dim"),
                     id="answer-run-status")
        with Horizontal(id="answer-run-body"):
            yield OptionList(id="answer-run-results")
            with VerticalScroll(id="answer-run-detail"):
                yield Static(id="answer-run-trajectory")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#answer-run-model", Input).focus()
        self.query_one("#answer-run-model-problem").display = bool(self.view.model_problem)
        self._describe()

    @on(Select.Changed, "#answer-run-condition")
    def _describe(self) -> None:
        """Say what the chosen condition lets the model read (until a run plans)."""
        chosen = self.query_one("#answer-run-condition", Select).value
        about = next((d for name, _, d in self.view.conditions if name == chosen), "")
        self.query_one("#answer-run-plan", Static).update(literal(f"{chosen}: {about}" if about else "", style="dim"))

    def _status(self, text: str) -> None:
        self.query_one("#answer-run-status", Static).update(literal(text))

    def _choices(self) -> tuple[str, str, int] | None:
        """``(model, condition, samples)`` from the form, or None (with the problem shown)."""
        model = self.query_one("#answer-run-model", Input).value.strip()
        condition = self.query_one("#answer-run-condition", Select).value
        raw = self.query_one("#answer-run-samples", Input).value.strip()
        if condition is Select.NULL:
            self._status("choose a condition")
            return None
        from benchwright.core.judging import samples_problem

        problem = samples_problem(int(raw)) if raw.isdigit() else samples_problem(raw)
        if problem:
            self._status(problem)
            return None
        return model, str(condition), int(raw)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_run()

    def action_run(self) -> None:
        """Plan and start the run chosen in the form (in the background)."""
        if self.running:
            notify(self, "A run is in progress; escape cancels it.", timeout=3)
            return
        choices = self._choices()
        if choices is not None:
            self._worker = self._run(*choices)

    def on_job_progress(self, p: JobProgress) -> None:
        """Move the bar and update the figures after each finished run (called on the app's loop)."""
        self.query_one("#answer-run-progress", ProgressBar).update(total=p.total, progress=p.done)
        self._status(progress_line(p) + " · escape cancels")

    def on_outcome(self, outcome) -> None:
        """List one finished run (stored, or failed with its reason)."""
        result = answer_run_result(self.store, outcome, *self._running_as)
        results = self.query_one("#answer-run-results", OptionList)
        option_id = f"r{results.option_count}"
        self._results[option_id] = result
        results.add_option(Option(render_run_result(result), id=option_id))
        if results.highlighted is None:
            results.highlighted = results.get_option_index(option_id)

    def _show_plan(self, plan, condition: str, samples: int) -> None:
        groups = refusal_groups(self.store, plan.refused)
        line = (f"{condition}, {samples} sample{'' if samples == 1 else 's'}: {plural(len(plan.targets), 'run')} to do · "
                f"{plan.already_answered} already answered · {plural(len(plan.refused), 'pair')} refused")
        self.query_one("#answer-run-plan", Static).update(literal(line))
        results = self.query_one("#answer-run-results", OptionList)
        for g in groups:
            where = ", ".join(f"#{n}" for n in g.first_ordinals) + (" …" if len(g.pair_ids) > len(g.first_ordinals) else "")
            text = Text("✗ ", style="bold yellow")
            text.append_text(literal(f"{len(g.pair_ids)} refused ({where}): {g.reason}", style="yellow"))
            results.add_option(Option(text, disabled=True))

    @work(exclusive=True, group="answer-run")
    async def _run(self, model: str, condition: str, samples: int) -> None:
        from ..services.agent_runs import plan_agent_answers, run_agent_answers
        from ..services.llm import ANSWER_ROLE, client_for_role, llm_role

        self.query_one("#answer-run-results", OptionList).clear_options()
        self.query_one("#answer-run-trajectory", Static).update("")
        self._results = {}
        try:
            config, role = llm_role(self.store, ANSWER_ROLE, model or None)
            plan = plan_agent_answers(self.store, role.model, condition, samples=samples, where=self.flt,
                                      annotator=self.annotator)
        except BenchwrightError as e:
            self._status("not run: " + error_text(e))
            return
        self._show_plan(plan, condition, samples)
        if not plan.targets:
            self._status("nothing to run" + (" (every matching pair is answered)" if plan.already_answered else ""))
            return
        try:
            client = client_for_role(self.store, config, role,
                                     provider_factory=getattr(self.app, "provider_factory", None))
        except BenchwrightError as e:
            self._status("not run: " + error_text(e))
            return
        self.running = True
        self._running_as = (role.model, condition)
        self.query_one("#answer-run-progress", ProgressBar).update(total=len(plan.targets), progress=0)
        self._status(f"0/{len(plan.targets)} · escape cancels")
        try:
            final = await run_agent_answers(self.store, client, plan, _settings(self.store, config, role),
                                            condition=condition, by=self.annotator,
                                            on_progress=self.on_job_progress, on_outcome=self.on_outcome)
            self._status("finished: " + progress_line(final))
        except asyncio.CancelledError:
            self._status("cancelled; finished answers are stored. Run again to continue.")
            raise
        except BenchwrightError as e:
            self._status("stopped: " + error_text(e))
        finally:
            self.running = False
            await client.provider.aclose()

    @on(OptionList.OptionHighlighted, "#answer-run-results")
    def _show_trajectory(self, event: OptionList.OptionHighlighted) -> None:
        """Show the highlighted run's trajectory (a failed run's too: the inspector shows answers only)."""
        from .inspector import render_trajectory

        result = self._results.get(event.option_id or "")
        if result is None:
            return
        head = f"#{result.ordinal} sample {result.sample_index} · " + (
            "stored" if result.ok else f"{result.status}: {result.reason or ''}")
        self.query_one("#answer-run-trajectory", Static).update(
            render_trajectory(run_trajectory_view(self.store, result), head))

    @on(OptionList.OptionSelected, "#answer-run-results")
    def _open(self, event: OptionList.OptionSelected) -> None:
        result = self._results.get(event.option_id or "")
        if result is not None and result.ok:
            from .inspector import InspectorScreen

            self.app.push_screen(InspectorScreen(self.store, result.pair_id, self.annotator, result.answer_id))

    def action_back(self) -> None:
        """Cancel a running run (finished answers stay), or go back."""
        if self.running and self._worker is not None:
            self._worker.cancel()
            self.running = False
            self._status("cancelled; finished answers are stored. Run again to continue.")
            return
        self.dismiss(None)


def _settings(store: Store, config, role):
    """The agent's settings for ``role`` (the service's :func:`agent_settings`, as the CLI uses)."""
    from ..services.agent_runs import agent_settings
    from ..services.llm import project_dir_of

    return agent_settings(config, role, project_dir=project_dir_of(store))


def _default_condition(view: AnswerRunView):
    """The condition chosen first: core's default for agent runs (agentic) when offered, else the first one."""
    from benchwright.core.vocabulary import DEFAULT_AGENT_CONDITION

    names = [name for name, _, _ in view.conditions]
    return DEFAULT_AGENT_CONDITION if DEFAULT_AGENT_CONDITION in names else (names[0] if names else Select.NULL)
