"""Probe validation (NITR): probes with their validation state; for a probe, the matrix of variants by
modules and overall result, expected against actual, mismatches marked; the log and matched rules of any
cell; runs in a cancellable worker with live progress; the oracle signed off (or not, with a reason)."""

from __future__ import annotations

import threading

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from benchwright.core.errors import BenchwrightError
from benchwright.core.probes import ExpectationCheck, OracleRun
from benchwright.core.probes.counts import TestCounts
from benchwright.core.text import printable
from benchwright.db import Store

from ..widgets import LiteralInput, literal, notify

_CHECK_CELLS = {
    ExpectationCheck.AS_EXPECTED: ("✓ as expected", "green"),
    ExpectationCheck.MISMATCH: ("✗ MISMATCH", "bold red"),
    ExpectationCheck.COMPILER_CAUGHT: ("✗ not the oracle", "bold yellow"),  # the compiler caught it
}
"""The "vs expected" cell of a run (:attr:`benchwright.core.probes.OracleRun.expectation_check`)."""

_STATE_STYLE = {"separating": "green", "signed off": "bold green", "not separating": "red", "stale sign-off": "yellow",
                "not signed off": "red", "incomplete": "yellow", "not run": "dim"}
MAX_LOG_CHARS = 20_000
STARTER_ROW = "(starter)"
"""Row key of the starter code's run in the matrix (shown last, when it was run: ``a`` on a probe without
variants runs it)."""


def _module_cell(module: dict | None) -> Text:
    """A matrix cell: ✓ / ✗ (with the number of tests that passed for a unit_test module), · when not run."""
    if module is None:
        return Text("·", style="dim")
    mark = Text("✓", style="green") if module.get("passed") else Text("✗", style="red")
    if module.get("tests"):
        mark.append(f" {module['tests']['passed']}")
    return mark


class ReasonScreen(ModalScreen[str | None]):
    """Asks for a reason; enter keeps it, esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, prompt: str) -> None:
        super().__init__()
        self.prompt = prompt

    def compose(self) -> ComposeResult:
        with Vertical(id="reason-dialog"):
            yield Label(literal(self.prompt))
            yield LiteralInput(id="reason-input")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ProbesScreen(Screen):
    """Validate probe oracles. Keys: ``r`` run the highlighted variant, ``a`` run all, ``x`` cancel,
    ``s`` sign off, ``n`` not signed off (with a reason), ``e`` source rules editor."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="probes.back"),
        Binding("r", "run_one", "Run variant", id="probes.run"),
        Binding("a", "run_all", "Run all", id="probes.run_all"),
        Binding("x", "cancel", "Cancel run", id="probes.cancel"),
        Binding("s", "sign(True)", "Sign off", id="probes.signoff"),
        Binding("n", "sign(False)", "Not signed off", id="probes.not_signoff"),
        Binding("e", "rules", "Rules editor", id="probes.rules"),
    ]

    def __init__(self, store: Store, annotator: str) -> None:
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.probe_id: str | None = None
        self.record: dict | None = None
        self.module_names: list[str] = []
        self.cancel_event = threading.Event()
        self.running = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="probes-body"):
            with Vertical(id="probes-left"):
                yield Label("Probes", classes="section-title")
                yield OptionList(id="probes-list")
            with Vertical(id="probes-right"):
                yield Static(id="probe-title")
                yield DataTable(id="probe-matrix", cursor_type="cell", zebra_stripes=True)
                yield Static(id="probe-progress")
                with VerticalScroll(id="probe-detail-scroll"):
                    yield Static(id="probe-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.reload_list()

    def reload_list(self, keep: str | None = None) -> None:
        """Refill the probe list with validation states."""
        options = self.query_one("#probes-list", OptionList)
        options.clear_options()
        ids = self.store.probe_ids()
        for pid in ids:
            state = self.store.validation_state(pid)
            label = literal(pid + "  ", style="bold")
            label.append(state, style=_STATE_STYLE.get(state, ""))
            options.add_option(Option(label, id=pid))
        if not ids:
            self.query_one("#probe-title", Static).update(
                Text("No probes yet: benchwright probes import CASE_DIR EVALUATOR_DIR (or probes new).", style="italic"))
            return
        target = keep if keep in ids else ids[0]
        options.highlighted = ids.index(target)
        self.show(target)

    @on(OptionList.OptionHighlighted, "#probes-list")
    def _picked(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_id and event.option_id != self.probe_id:
            self.show(event.option_id)

    def show(self, probe_id: str) -> None:
        """Show a probe's matrix from its latest runs under the current fingerprint."""
        self.probe_id = probe_id
        rec = self.record = self.store.probe_record(probe_id)
        probe = rec["probe"]
        state = self.store.validation_state(probe_id)
        t = literal(f"{probe_id}: ", style="bold")
        t.append(printable(rec["title"]))
        t.append_text(literal(f"\n{probe.get('primary_dimension')} · {probe.get('granularity')} · "))
        t.append(state, style=_STATE_STYLE.get(state, ""))
        shortfall = self.store.family_shortfall(probe_id)
        if shortfall:
            t.append_text(literal(f"\n{shortfall}", style="yellow"))
            if not rec["variants"]:
                t.append_text(literal("; give variants with probes import ... --variants DIR, or press a to run "
                                      "the starter code", style="yellow"))
        signoff = self.store.latest_signoff(probe_id)
        if signoff:
            t.append_text(literal(f"\nlast verdict: {signoff.verdict} by {signoff.annotator}: "))
            t.append(printable(signoff.reason or "-"))
        self.query_one("#probe-title", Static).update(t)
        self.module_names = [m["name"] for m in probe["pipeline"]["modules"]]
        table = self.query_one("#probe-matrix", DataTable)
        table.clear(columns=True)
        table.add_columns("variant", "kind", "expected", *(literal(n) for n in self.module_names), "overall",
                          "vs expected")
        runs = {k: v for k, v in self.store.latest_runs(probe_id).items() if v["fingerprint"] == rec["fingerprint"]}
        for v in rec["variants"]:
            run = runs.get(v["name"])
            cells: list = [literal(v["name"], style="bold"), literal(v["kind"]), literal(v["expected"])]
            by_module = {m["name"]: m for m in (run["run"].get("modules", []) if run else [])}
            for name in self.module_names:
                cells.append(_module_cell(by_module.get(name)))
            if run is None:
                cells += [Text("not run", style="dim"), Text("")]
            else:
                result = OracleRun.model_validate(run["run"])
                cells.append(Text(result.verdict, style={"pass": "green", "fail": "red"}.get(result.verdict, "yellow")))
                label, style = _CHECK_CELLS.get(result.expectation_check, _CHECK_CELLS[ExpectationCheck.MISMATCH])
                cells.append(Text(label, style=style))
            table.add_row(*cells, key=v["name"])
        starter = runs.get(None)
        if starter is not None:  # the starter code's run, last (it does not count in the validation state)
            result = OracleRun.model_validate(starter["run"])
            by_module = {m["name"]: m for m in starter["run"].get("modules", [])}
            table.add_row(Text("(starter)", style="bold dim"), Text("starter", style="dim"), Text("-", style="dim"),
                          *(_module_cell(by_module.get(name)) for name in self.module_names),
                          Text(result.verdict, style={"pass": "green", "fail": "red"}.get(result.verdict, "yellow")),
                          Text(""), key=STARTER_ROW)
        self.query_one("#probe-detail", Static).update(Text("select a cell to see its log and matched rules", style="dim"))

    @on(DataTable.CellHighlighted, "#probe-matrix")
    def _cell(self, event: DataTable.CellHighlighted) -> None:
        if self.record is None:
            return
        if event.coordinate.row < len(self.record["variants"]):
            variant = self.record["variants"][event.coordinate.row]
        elif event.coordinate.row == len(self.record["variants"]):
            variant = {"name": "(starter)", "run_key": None}
        else:
            return
        run = self.store.latest_runs(self.probe_id).get(variant.get("run_key", variant["name"]))
        detail = Text()
        if run is None:
            detail.append_text(literal(f"{variant['name']}: not run yet (r runs it)", style="dim"))
        else:
            col = event.coordinate.column - 3
            modules = run["run"].get("modules", [])
            chosen = [m for m in modules if 0 <= col < len(self.module_names) and m["name"] == self.module_names[col]]
            if run["run"].get("apply_error"):
                detail.append("variant not applied: ", style="bold red")
                detail.append(printable(run["run"]["apply_error"]) + "\n")
            for m in chosen or modules:
                detail.append_text(literal(f"{m['name']} ({m['module_name']}): ", style="bold"))
                detail.append("passed" if m.get("passed") else "failed", style="green" if m.get("passed") else "red")
                if m.get("reason"):
                    detail.append(" · " + printable(m["reason"]))
                detail.append("\n")
                if m.get("tests"):
                    detail.append("  tests: " + TestCounts.model_validate(m["tests"]).text() + "\n")
                for hit in m.get("matches", []):
                    detail.append(printable(f"  {hit.get('rule_id')}: {hit.get('relative_path')}:{hit.get('line') or ''} "),
                                  style="yellow")
                    detail.append(printable(hit.get("message") or hit.get("text") or "") + "\n")
                if chosen:
                    detail.append(printable((m.get("log") or "")[-MAX_LOG_CHARS:]), style="dim")
                    detail.append("\n")
        self.query_one("#probe-detail", Static).update(detail)

    # --------------------------------------------------------------------- runs
    def _selected_variant(self) -> str | None:
        table = self.query_one("#probe-matrix", DataTable)
        if self.record is None or not self.record["variants"]:
            return None
        if table.cursor_row >= len(self.record["variants"]):
            return None  # the starter row: a runs it (with every variant)
        return self.record["variants"][table.cursor_row]["name"]

    def action_run_one(self) -> None:
        """Run the highlighted variant."""
        name = self._selected_variant()
        if name:
            self._run([name])
        elif self.record is not None:
            notify(self, "Pick a variant's row; a runs every variant (the starter code when there are none).",
                   severity="warning")

    def action_run_all(self) -> None:
        """Run every variant of the probe."""
        if self.record:
            self._run(None)

    def action_cancel(self) -> None:
        """Stop the run in progress (its process group is killed; finished runs are kept)."""
        if self.running:
            self.cancel_event.set()
            notify(self, "Cancelling…", timeout=2)

    def _run(self, names: list[str] | None) -> None:
        if self.running:
            notify(self, "A run is in progress (x cancels it).", severity="warning")
            return
        self.running = True
        self.cancel_event.clear()
        self._run_worker(self.probe_id, names)

    class RunProgress(Message):
        """Posted by the run worker: a progress line (``done`` False) or the run's last word (``done`` True;
        ``text`` None when the run died of an unexpected error, which the worker reports)."""

        def __init__(self, probe_id: str, text: str | None, *, done: bool = False) -> None:
            super().__init__()
            self.probe_id = probe_id
            self.text = text
            self.done = done

    @work(thread=True, exclusive=True, exit_on_error=False, group="probe-run")
    def _run_worker(self, probe_id: str, names: list[str] | None) -> None:
        """Run the variants (in a thread: touches no widget, posts :class:`RunProgress` messages)."""
        from ..services.probes import run_probe_variants

        def report(message: str) -> None:
            self.post_message(self.RunProgress(probe_id, message))

        try:
            runs = run_probe_variants(self.store, probe_id, names, timeout_s=300.0, by=self.annotator,
                                      progress=report, cancel=self.cancel_event)
            note = f"ran {len(runs)} variant{'s' if len(runs) != 1 else ''}"
            if self.cancel_event.is_set():
                note += " (cancelled)"
        except BenchwrightError as e:
            note = f"not run: {e}"
        except BaseException:
            self.post_message(self.RunProgress(probe_id, None, done=True))  # no run is in progress any more
            raise
        self.post_message(self.RunProgress(probe_id, note, done=True))

    def on_probes_screen_run_progress(self, message: RunProgress) -> None:
        progress = self.query_one("#probe-progress", Static)
        if not message.done:
            progress.update(literal(printable(message.text or "")[:300], style="italic"))
            return
        self.running = False
        if message.text is None:
            return
        progress.update(literal(message.text))
        self.reload_list(message.probe_id)

    # ------------------------------------------------------------------ sign-off
    def action_sign(self, signed: bool) -> None:
        """Sign the oracle off (or record why not)."""
        if self.probe_id is None:
            return
        probe_id = self.probe_id

        def done(reason: str | None) -> None:
            if reason is None:
                return
            try:
                self.store.sign_off(probe_id, self.annotator, "signed-off" if signed else "not-signed-off", reason)
            except BenchwrightError as e:
                notify(self, str(e), severity="error")
                return
            self.reload_list(probe_id)

        prompt = ("Sign the oracle off: a note (optional), enter to confirm" if signed
                  else "Why is the oracle not signed off? (required)")
        self.app.push_screen(ReasonScreen(prompt), done)

    def action_rules(self) -> None:
        """Open the source rules editor on this probe."""
        from .rules_editor import RulesEditorScreen

        if self.probe_id:
            self.app.push_screen(RulesEditorScreen(self.store, self.probe_id, self.annotator),
                                 lambda _: self.reload_list(self.probe_id))
