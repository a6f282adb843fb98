"""The judge inspector (issue "Judging", part 8): why a judge scored an answer, and whether its runs agree.

For one Q&A pair: choose an answer (model, condition) and a judge; the answer is on the left, the judge's
entries (checklist items or scalar dimensions) on the right with one column per run, the spread over runs
and the selected cell's rationale. Entries where runs disagree stand out. ``v`` compares two judges or two
answers side by side; ``o`` overrides the selected score with a reason (the original stays); cited files in
the answer or the rationales open in the evidence viewer. ``h`` scores the answer against its checklist by hand
(a human judgment, ``human:NAME``), ``c`` shows every judge run and every annotator's scores side by side, item by
item, and ``l`` lists the answers handed to the annotator to score (issue 20 item 5). In blind mode an annotator
who has not scored the answer sees neither the judges' scores nor other annotators' until they submit theirs
(the panel says why). All data is shown literally.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from benchwright.core.errors import BenchwrightError
from benchwright.core.evidence import gather_evidence
from benchwright.core.inspection import JudgmentGrid
from benchwright.core.text import printable
from benchwright.db import Store

from ..services.human import BLIND_NOTE, hidden_for, score_form, side_by_side
from ..services.views import (
    InspectorView,
    TrajectoryView,
    inspector_view,
    judge_runs_view,
    judges_of,
    trajectory_view,
)
from ..widgets import SHOWN_CHARS, LiteralInput, LiteralMarkdown, error_text, literal, literal_options, notify


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    return str(int(v)) if float(v).is_integer() else f"{v:.2f}"


def render_cell(row, run: int) -> Text:
    """A grid cell: the effective score; an overridden one as ``judge→human*``."""
    if row.overridden[run]:
        return Text(f"{_fmt(row.scores[run])}→{_fmt(row.effective[run])}*", style="bold cyan")
    return Text(_fmt(row.effective[run]))


def render_trajectory(view: TrajectoryView, title: str) -> Text:
    """An answer's trajectory as literal text: a summary line, then per turn a header (number, tokens, context,
    cached), the model's text and each tool call (arguments on one line, the output capped with ``N more lines``,
    refused calls and elisions marked); a trajectory in another format as its JSON."""
    out = literal(title + "\n", style="bold")
    if view.turns is None:
        out.append_text(literal(view.raw or "(no trajectory)", style="" if view.raw else "dim"))
        return out
    calls = ", ".join(f"{name} {n}" for name, n in view.tool_counts.items()) or "none"
    head = f"{len(view.turns)} turn{'' if len(view.turns) == 1 else 's'} · tool calls: {calls}"
    head += f" · {view.refused} refused or failed · {view.elisions} elided"
    if view.citations_resolving is not None or view.citations_not is not None:
        head += f" · citations: {view.citations_resolving or 0} resolving, {view.citations_not or 0} not"
    if view.confinement:
        head += f" · commands {view.confinement}"
    out.append_text(literal(head + "\n"))
    if view.unresolved:
        out.append_text(literal("not resolving: " + "; ".join(view.unresolved) + "\n", style="yellow"))
    for turn in view.turns:
        line = (f"\n── turn {turn.index} · {turn.input_tokens:,} in / {turn.output_tokens:,} out tokens"
                f" · context ≈{turn.context_tokens:,}")
        out.append(line, style="bold")
        out.append(" · cached" if turn.cached else "", style="dim")
        out.append("\n")
        if turn.elided:
            out.append_text(literal(f"[{len(turn.elided)} earlier output(s) elided before this turn: "
                                    f"{', '.join(turn.elided)}]\n", style="yellow"))
        if turn.text.strip():
            out.append_text(literal(turn.text.rstrip() + "\n"))
        for use in turn.tool_uses:
            out.append("  ✓ " if use.ok else "  ✗ ", style="green" if use.ok else "bold red")
            out.append_text(literal(use.name, style="bold"))
            out.append(" ")
            out.append_text(literal(use.arguments, style="cyan"))
            if not use.ok:
                out.append("  refused or failed", style="bold red")
            if use.truncated:
                out.append("  (output cut)", style="dim")
            out.append("\n")
            for text in use.output:
                out.append_text(literal("    " + text + "\n", style="" if use.ok else "red"))
            if use.more_lines:
                out.append(f"    … {use.more_lines} more line{'' if use.more_lines == 1 else 's'}\n", style="dim")
            if use.elided_at_turn is not None:
                out.append(f"    [output elided from the context at turn {use.elided_at_turn}]\n", style="yellow")
    return out


class OverrideScreen(ModalScreen[tuple[float, str] | None]):
    """Ask for the new score and the reason; returns ``(score, reason)`` once ``apply`` accepts them, or None.

    ``apply(score, reason)`` stores the override and returns None, or returns why it was refused; then the
    dialog stays open with the message and what was typed, so nothing has to be typed again."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="override.cancel")]

    def __init__(self, what: str, allowed: str, current: str, apply=None) -> None:
        super().__init__()
        self.what, self.allowed, self.current, self.apply = what, allowed, current, apply

    def compose(self) -> ComposeResult:
        with Vertical(id="override-dialog"):
            yield Label(literal(f"Override {self.what}", style="bold"))
            yield Label(literal(f"judge gave {self.current}; allowed scores: {self.allowed}"))
            yield Label("new score")
            yield Input(placeholder="score", id="override-score")
            yield Label("reason (required; enter saves, esc cancels)")
            yield LiteralInput(placeholder="why the judge's score is wrong", id="override-reason")
            yield Static(id="override-error")

    def on_mount(self) -> None:
        self.query_one("#override-score", Input).focus()

    def _error(self, message: str) -> None:
        self.query_one("#override-error", Static).update(literal(message, style="bold red"))

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        if event.input.id == "override-score" and not self.query_one("#override-reason", Input).value.strip():
            self.query_one("#override-reason", Input).focus()
            return
        raw = self.query_one("#override-score", Input).value.strip()
        reason = self.query_one("#override-reason", Input).value.strip()
        try:
            score = float(raw)
        except ValueError:
            self._error(f"{raw!r} is not a number")
            score_input = self.query_one("#override-score", Input)
            score_input.value = ""
            score_input.focus()
            return
        if not reason:
            self._error("give a reason")
            self.query_one("#override-reason", Input).focus()
            return
        value = int(score) if score.is_integer() else score
        if self.apply is not None:
            problem = self.apply(value, reason)
            if problem:
                self._error(problem)
                score_input = self.query_one("#override-score", Input)
                score_input.value = ""  # the refused score is in the message; type the next one afresh
                score_input.focus()
                return
        self.dismiss((value, reason))

    def action_cancel(self) -> None:
        """Close without overriding."""
        self.dismiss(None)


class FailureModeScreen(ModalScreen[tuple[str, str] | None]):
    """Choose a failure mode (RepoProbe §5.4 Table 7) and give a reason; returns ``(mode, reason)`` or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="failure_mode.cancel")]

    def __init__(self, current: str | None) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        from benchwright.core.metrics import FAILURE_MODE_NAMES

        with Vertical(id="override-dialog"):
            yield Label(literal(f"Failure mode of this answer (now: {self.current or 'none'}); choose, then give a reason"))
            yield OptionList(*(Option(literal(name), id=mode) for mode, name in FAILURE_MODE_NAMES.items()), id="fm-modes")
            yield LiteralInput(placeholder="reason (required)", id="fm-reason")
            yield Static(id="fm-error")

    def on_mount(self) -> None:
        self.query_one("#fm-modes", OptionList).focus()

    @on(OptionList.OptionSelected, "#fm-modes")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#fm-reason", Input).focus()

    @on(Input.Submitted, "#fm-reason")
    def _submit(self, event: Input.Submitted) -> None:
        modes = self.query_one("#fm-modes", OptionList)
        if modes.highlighted is None:
            self.query_one("#fm-error", Static).update(Text("choose a mode", style="red"))
            return
        reason = event.value.strip()
        if not reason:
            self.query_one("#fm-error", Static).update(Text("give a reason", style="red"))
            return
        self.dismiss((str(modes.get_option_at_index(modes.highlighted).id), reason))

    def action_cancel(self) -> None:
        """Close without a label."""
        self.dismiss(None)


class JudgePanel(Vertical):
    """An answer and judge selector with the grid of that judge's runs and the selected cell's rationale."""

    def __init__(self, store: Store, view: InspectorView, side: str, annotator: str = "") -> None:
        super().__init__(id=f"panel-{side}", classes="judge-panel")
        self.store = store
        self.annotator = annotator
        self.side_by_side = False
        """Show every judge run and every annotator's human judgment side by side (``c``) instead of one judge."""
        self.comparison = None
        self.pair_id = view.pair.id
        self.side = side
        self.grid: JudgmentGrid | None = None
        self.judge_values: list[str] = []
        self.answers = dict(view.answers)

    def compose(self) -> ComposeResult:
        with Horizontal(classes="panel-selectors"):
            yield Select(literal_options([(f"{a.model} · {a.condition}" + (f" · sample {a.sample_index}"
                                                                   if getattr(a, "sample_index", 0) else ""), a.id)
                                            for a in self.answers.values()]),
                         prompt="answer", allow_blank=not self.answers, id=f"answer-{self.side}")
            yield Select([], prompt="judge", id=f"judge-{self.side}")
        yield Static(id=f"summary-{self.side}")
        yield DataTable(id=f"grid-{self.side}", cursor_type="cell", zebra_stripes=True)
        with VerticalScroll(classes="cell-detail"):
            yield Static(id=f"detail-{self.side}")

    @property
    def answer_id(self) -> str | None:
        v = self.query_one(f"#answer-{self.side}", Select).value
        return None if v is Select.NULL else str(v)

    @property
    def judge_key(self) -> tuple[str, str] | None:
        v = self.query_one(f"#judge-{self.side}", Select).value
        if v is Select.NULL:
            return None
        judge, _, model = str(v).partition("\x1f")
        return judge, model

    def select(self, answer_id: str | None = None, judge: tuple[str, str] | None = None) -> None:
        """Choose the answer and judge shown (defaults: first ones)."""
        sel = self.query_one(f"#answer-{self.side}", Select)
        if answer_id is not None:
            sel.value = answer_id
        self.refresh_judges(judge)

    def refresh_judges(self, prefer: tuple[str, str] | None = None) -> None:
        """Offer the judges that judged the chosen answer."""
        aid = self.answer_id
        combos = list(judges_of(self.store, aid)) if aid else []
        self.judge_values = ["\x1f".join(c) for c in combos]
        sel = self.query_one(f"#judge-{self.side}", Select)
        with self.prevent(Select.Changed):
            sel.set_options(literal_options([(f"{j} · {m}", f"{j}\x1f{m}") for j, m in combos]))
            if combos:
                sel.value = "\x1f".join(prefer if prefer in combos else combos[0])
        self.refresh_grid()

    def refresh_grid(self) -> None:
        """Rebuild the grid from the store (after a selection or an override)."""
        table = self.query_one(f"#grid-{self.side}", DataTable)
        table.clear(columns=True)
        summary = self.query_one(f"#summary-{self.side}", Static)
        aid, jk = self.answer_id, self.judge_key
        self.comparison = None
        if aid and hidden_for(self.store, aid, self.annotator):
            self.grid = None
            summary.update(literal(BLIND_NOTE, style="bold magenta"))
            self.query_one(f"#detail-{self.side}", Static).update("")
            if not self.side_by_side:
                return
        if aid and self.side_by_side:
            self._show_side_by_side(aid, table, summary)
            return
        if not aid or not jk:
            self.grid = None
            summary.update(Text("no judgments of this answer yet" if aid else "this pair has no answers yet",
                                style="dim"))
            self.query_one(f"#detail-{self.side}", Static).update("")
            return
        runs = judge_runs_view(self.store, aid, jk[0], jk[1])
        grid = self.grid = runs.grid
        # The entry column takes what the run columns leave of half the screen (each panel is half wide).
        room = self.app.size.width // 2 - 4 - 5 - 8 * len(grid.runs) - 8
        width = max([12, *(len(printable(r.label)[:60]) + len(r.key) + 2 for r in grid.rows)])
        table.add_column("entry", key="entry", width=max(16, min(width, room, 64)))
        table.add_column("max", key="max")
        for k, j in enumerate(grid.runs):
            table.add_column(literal(f"run {j.run_index + 1}"), key=f"run{k}")
        table.add_column("spread", key="spread")
        for row in grid.rows:
            style = "bold yellow" if row.disagree else ""
            label = literal(f"{row.key}. " if row.kind != "dimension" else "", style=style)
            label.append_text(literal(printable(row.label)[:60], style=style))
            spread = Text(f"Δ{_fmt(row.spread)}", style="bold yellow") if row.disagree else Text("")
            table.add_row(label, Text(str(row.max)), *(render_cell(row, k) for k in range(len(grid.runs))), spread,
                          key=row.key)
        rates = " · ".join(
            f"run {j.run_index + 1}: " + (f"{r:.0%}" if r is not None else f"unscored ({printable(j.reason or '')[:80]})")
            for j, r in zip(grid.runs, grid.rates, strict=True))
        head = literal(f"{jk[0]} judge · {jk[1]} · {len(grid.runs)} runs · ", style="bold")
        head.append(rates)
        if grid.disagreeing:
            what = "entry" if grid.disagreeing == 1 else "entries"
            head.append(f" · runs disagree on {grid.disagreeing} {what}", style="bold yellow")
        if runs.self_judged is not None:
            head.append_text(literal(f"\nself-judged: {runs.self_judged} (judged with --allow-self-judge; "
                                     "RepoProbe §5.1.3 keeps a model from judging itself)", style="bold red"))
        fm = runs.failure_mode
        if fm is not None:
            who = fm.annotator if fm.origin == "annotator" else f"llm {fm.judge_model or ''}".strip()
            head.append_text(literal(f"\nfailure mode: {fm.mode} ({who}): ", style="bold magenta"))
            head.append(printable(fm.rationale)[:200])
        summary.update(head)
        if grid.rows and grid.runs:
            table.move_cursor(row=0, column=2)
        self.show_detail()

    def _show_side_by_side(self, aid: str, table: DataTable, summary: Static) -> None:
        """Every judge run and every annotator's scores of the answer, one column each, a row per item."""
        self.grid = None
        view = self.comparison = side_by_side(self.store, aid, self.annotator)
        table.add_column("item", key="entry", width=max(16, min(40, self.app.size.width // 2 - 12 * len(view.columns))))
        table.add_column("max", key="max")
        for k, col in enumerate(view.columns):
            table.add_column(literal(col.label[:24], style="bold green" if col.human else ""), key=f"col{k}")
        for key, label, most in view.rows:
            cells = []
            values = {col.scores.get(key) for col in view.columns if col.scores.get(key) is not None}
            for col in view.columns:
                v = col.scores.get(key)
                cells.append(Text(_fmt(v), style="bold yellow" if len(values) > 1 else ""))
            table.add_row(literal(f"{key}. {printable(label)[:60]}"), Text(str(most)), *cells, key=key)
        table.add_row(Text("score rate", style="bold"), Text(""),
                      *(Text("–" if c.rate is None else f"{c.rate:.0%}", style="bold") for c in view.columns),
                      key="\x1frate")
        head = literal(f"side by side (c): {len(view.columns)} column(s): judge runs and human:NAME; "
                       "items where they differ in yellow", style="bold")
        if view.hidden:
            head.append_text(literal("\n" + view.hidden, style="bold magenta"))
        if not view.columns and view.hidden:
            head.append_text(literal("\nthe judge runs and other annotators' judgments of this answer are hidden "
                                     "until you submit yours (h)", style="dim"))
        elif not view.columns:
            head.append_text(literal("\nno judge run or human judgment of this answer scores its checklist yet",
                                     style="dim"))
        summary.update(head)
        self._show_comparison_detail()

    def _show_comparison_detail(self) -> None:
        view = self.comparison
        out = Text()
        table = self.query_one(f"#grid-{self.side}", DataTable)
        r = table.cursor_coordinate.row
        if view is not None and 0 <= r < len(view.rows):
            key, label, _ = view.rows[r]
            out.append_text(literal(f"{key}. {printable(label)}\n", style="bold"))
            for col in view.columns:
                out.append_text(literal(f"{col.label}: {_fmt(col.scores.get(key))}", style="bold"))
                out.append_text(literal(f" (checklist v{col.version})\n" if col.version is not None else "\n",
                                        style="dim"))
                out.append_text(literal(printable(col.rationales.get(key) or "(no rationale)") + "\n"))
        self.query_one(f"#detail-{self.side}", Static).update(out)

    def selected(self) -> tuple[int, int] | None:
        """``(row index, run index)`` of the selected cell, or None off the run columns."""
        if self.grid is None or not self.grid.rows:
            return None
        table = self.query_one(f"#grid-{self.side}", DataTable)
        r, c = table.cursor_coordinate.row, table.cursor_coordinate.column - 2
        if not (0 <= c < len(self.grid.runs)) or not (0 <= r < len(self.grid.rows)):
            return None
        return r, c

    def show_detail(self) -> None:
        """Show the selected cell's rationale (or every run's, off the run columns)."""
        if self.comparison is not None:
            self._show_comparison_detail()
            return
        out = Text()
        if self.grid is not None and self.grid.rows:
            table = self.query_one(f"#grid-{self.side}", DataTable)
            r = min(table.cursor_coordinate.row, len(self.grid.rows) - 1)
            row = self.grid.rows[r]
            sel = self.selected()
            runs = [sel[1]] if sel else range(len(self.grid.runs))
            out.append(printable(f"{row.key}. {row.label}") + "\n", style="bold")
            allowed = row.allowed if row.allowed is not None else f"0..{row.max}"
            out.append(f"allowed: {allowed}\n", style="dim")
            for k in runs:
                j = self.grid.runs[k]
                out.append(f"run {j.run_index + 1}: {_fmt(row.scores[k])}", style="bold")
                if row.overridden[k]:
                    out.append(f" → {_fmt(row.effective[k])} (override)", style="bold cyan")
                out.append("\n" + printable(row.rationales[k] or "(no rationale)") + "\n")
                if not j.scored:
                    out.append("unscored: " + printable(j.reason or "") + "\n", style="red")
                    if j.raw_text:
                        out.append("raw output: " + printable(j.raw_text[:800]) + "\n", style="dim")
            critique = next((j.critique for j in self.grid.runs if j.critique), None)
            if critique:
                out.append("\ncritique:\n", style="bold")
                out.append(printable(critique) + "\n")
        self.query_one(f"#detail-{self.side}", Static).update(out)

    @on(Select.Changed)
    def _selection(self, event: Select.Changed) -> None:
        event.stop()
        if event.select.id == f"answer-{self.side}":
            self.refresh_judges(self.judge_key)
            self.post_message(InspectorScreen.AnswerChanged(self.side))
        else:
            self.refresh_grid()

    @on(DataTable.CellHighlighted)
    def _moved(self, event: DataTable.CellHighlighted) -> None:
        event.stop()
        self.show_detail()


class InspectorScreen(Screen):
    """Inspect judgments of the answers to one pair; see the module docstring for the keys."""

    from textual.message import Message

    class AnswerChanged(Message):
        """The answer of a panel changed (the left text follows panel ``a``)."""

        def __init__(self, side: str) -> None:
            super().__init__()
            self.side = side

    class EvidenceFound(Message):
        """The cited files of a long text, found in a thread worker (:meth:`InspectorScreen._list_evidence`)."""

        def __init__(self, text: str, evidence: list) -> None:
            super().__init__()
            self.text = text
            self.evidence = evidence

    BINDINGS = [
        Binding("escape", "back", "Back", id="inspector.back"),
        Binding("v", "compare", "Compare", id="inspector.compare"),
        Binding("o", "override", "Override", id="inspector.override"),
        Binding("e", "focus_evidence", "Evidence", id="inspector.evidence"),
        Binding("t", "trajectory", "Trajectory", id="inspector.trajectory"),
        Binding("s", "next_judge", "Next judge", id="inspector.next_judge"),
        Binding("m", "failure_mode", "Failure mode", id="inspector.failure_mode"),
        Binding("h", "human_score", "Score by hand", id="inspector.human_score"),
        Binding("c", "side_by_side", "Humans vs judges", id="inspector.side_by_side"),
        Binding("l", "assigned_answers", "To score", id="inspector.assigned_answers"),
    ]

    def __init__(self, store: Store, pair_id: str, annotator: str, answer_id: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.initial_answer = answer_id
        self.pair_id = pair_id
        self.annotator = annotator
        self.comparing = False
        self.show_trajectory = False
        self._openable: dict[str, object] = {}
        self._evidence_text = ""  # the text whose cited files are listed (or being found)
        self.view: InspectorView  # read in compose

    def compose(self) -> ComposeResult:
        view = self.view = inspector_view(self.store, self.pair_id)
        yield Header()
        yield Static(literal(f"#{view.ordinal} {printable(view.pair.question)[:150]}"), id="inspector-question")
        with Horizontal(id="inspector-body"):
            with VerticalScroll(id="inspector-answer"):
                yield LiteralMarkdown(id="answer-text")
                yield Static(id="trajectory-text")
            yield JudgePanel(self.store, view, "b", self.annotator)
            yield JudgePanel(self.store, view, "a", self.annotator)
        yield Label("Cited files (enter opens)", id="inspector-evidence-title")
        yield OptionList(id="inspector-evidence")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#panel-b").display = False
        a = self.query_one("#panel-a", JudgePanel)
        first = self.initial_answer if self.initial_answer in a.answers else next(iter(a.answers), None)
        a.select(first)
        self.query_one("#panel-b", JudgePanel).select(first)
        self.show_answer()
        self.query_one("#grid-a", DataTable).focus()

    def panel(self, side: str = "a") -> JudgePanel:
        return self.query_one(f"#panel-{side}", JudgePanel)

    def on_inspector_screen_answer_changed(self, event: AnswerChanged) -> None:
        if event.side == "a":
            self.show_answer()

    def show_answer(self) -> None:
        """Show panel a's answer (or its trajectory) and list the files it and the rationales cite."""
        aid = self.panel("a").answer_id
        md = self.query_one("#answer-text", LiteralMarkdown)
        traj = self.query_one("#trajectory-text", Static)
        md.display, traj.display = not (self.show_trajectory and aid), bool(self.show_trajectory and aid)
        if not aid:
            md.show("No answers to this pair yet. Import them with `benchwright answers import FILE "
                    "--model NAME --condition C`, or generate direct answers with `benchwright answers generate --model M`.")
            self._list_evidence("")
            return
        ans = self.view.answers[aid]
        if self.show_trajectory:
            sample = getattr(ans, "sample_index", 0)
            title = f"Trajectory of {ans.model} · {ans.condition}" + (f" · sample {sample}" if sample else "")
            traj.update(render_trajectory(trajectory_view(ans), title))
        else:
            md.show(ans.text)
        grid = self.panel("a").grid
        rationales = "\n".join(r for row in (grid.rows if grid else []) for r in row.rationales)
        self._list_evidence(ans.text + "\n" + rationales)

    def _evidence_repository(self):
        """Where panel a's answer's cited files are found: the repository the agent read (a code-only answer's
        stripped copy, named in the answer's ``repository``), else the pair's repository."""
        aid = self.panel("a").answer_id
        ans = self.view.answers.get(aid) if aid else None
        name = (ans.extra or {}).get("repository") if ans is not None else None
        original = self.view.repository
        if isinstance(name, str) and original is not None and name != original.name:
            copy = self.store.get_repository(name, missing_ok=True)
            if copy is not None and copy.derived_from == original.name:
                return copy
        return original

    def _list_evidence(self, text: str) -> None:
        """List the files ``text`` cites. A text longer than the answer view renders at once
        (:data:`~benchwright.tui.widgets.SHOWN_CHARS`: a 1 MB answer took seconds to scan) is scanned in a thread
        worker, the list saying so meanwhile (issue 19 testers' finding)."""
        repo = self._evidence_repo = self._evidence_repository()
        root = repo.local_path if repo is not None else None
        self._evidence_text = text
        if len(text) > SHOWN_CHARS:
            self._openable = {}
            ol = self.query_one("#inspector-evidence", OptionList)
            ol.clear_options()
            ol.add_options([Option(Text("finding the cited files…", style="dim"), disabled=True)])
            self._gather_in_thread(root, text)
            return
        self._show_evidence(gather_evidence(root, text) if text.strip() else [])

    @work(thread=True, exclusive=True, group="inspector-evidence")
    def _gather_in_thread(self, root, text: str) -> None:
        self.post_message(self.EvidenceFound(text, gather_evidence(root, text)))

    @on(EvidenceFound)
    def _evidence_found(self, event: EvidenceFound) -> None:
        if event.text is self._evidence_text:  # not an answer left meanwhile
            self._show_evidence(event.evidence)

    def _show_evidence(self, evidence: list) -> None:
        options: list[Option] = []
        self._openable = {}
        for i, ev in enumerate(evidence):
            mark = "✓" if ev.openable else "✗"
            options.append(Option(literal(f"{mark} {ev.citation}"), id=f"ev{i}"))
            if ev.openable:
                self._openable[f"ev{i}"] = ev
        ol = self.query_one("#inspector-evidence", OptionList)
        ol.clear_options()
        ol.add_options(options or [Option(Text("no cited files", style="dim"), disabled=True)])
        first = next((i for i, o in enumerate(options) if o.id in self._openable), None)
        if first is not None:
            ol.highlighted = first

    @on(OptionList.OptionSelected, "#inspector-evidence")
    def _open_evidence(self, event: OptionList.OptionSelected) -> None:
        from .evidence import EvidenceScreen

        ev = self._openable.get(event.option_id or "")
        if ev is None:
            return
        self.app.push_screen(EvidenceScreen(getattr(self, "_evidence_repo", self.view.repository), ev))

    def action_focus_evidence(self) -> None:
        """Move to the list of cited files."""
        self.query_one("#inspector-evidence", OptionList).focus()

    def action_trajectory(self) -> None:
        """Toggle the answer text and the agent's trajectory."""
        self.show_trajectory = not self.show_trajectory
        self.show_answer()

    def action_compare(self) -> None:
        """Toggle side-by-side comparison: a second panel (its own answer and judge) replaces the answer text."""
        self.comparing = not self.comparing
        self.query_one("#inspector-answer").display = not self.comparing
        self.query_one("#panel-b").display = self.comparing
        if self.comparing:
            self.panel("b").refresh_grid()

    def action_override(self) -> None:
        """Override the selected score of the focused panel, with a reason."""
        panel = self.panel(self._focused_side())
        sel = panel.selected()
        if sel is None:
            notify(self, "Select a run's score in the grid first.", timeout=3)
            return
        r, k = sel
        row, judgment = panel.grid.rows[r], panel.grid.runs[k]
        if not judgment.scored:
            notify(self, "This run is unscored; there is no score to override.", severity="warning", timeout=4)
            return
        allowed = str(row.allowed) if row.allowed is not None else f"0..{row.max}"
        table = panel.query_one(f"#grid-{panel.side}", DataTable)
        cursor = table.cursor_coordinate

        def apply(score, reason) -> str | None:
            try:
                self.store.add_override(judgment.id, row.key, score, reason, self.annotator)
            except BenchwrightError as e:
                return error_text(e)
            return None

        def done(result) -> None:
            if result is None:
                return
            panel.refresh_grid()
            panel.query_one(f"#grid-{panel.side}", DataTable).move_cursor(row=cursor.row, column=cursor.column)
            panel.show_detail()
            notify(self, f"Overridden: {row.key} in run {judgment.run_index + 1} is now {_fmt(result[0])}.",
                        timeout=3)

        self.app.push_screen(OverrideScreen(printable(f"{row.key}. {row.label}")[:70], allowed,
                                            _fmt(row.scores[k]), apply), done)

    def _focused_side(self) -> str:
        return "b" if self.comparing and self.panel("b").has_focus_within else "a"

    def action_next_judge(self) -> None:
        """Switch the focused panel to the next judge of its answer (checklist, scalar, imported)."""
        side = self._focused_side()
        sel = self.query_one(f"#judge-{side}", Select)
        values = self.panel(side).judge_values
        if len(values) < 2:
            notify(self, "Only one judge has judged this answer.", timeout=3)
            return
        i = values.index(sel.value) if sel.value in values else -1
        sel.value = values[(i + 1) % len(values)]

    def action_failure_mode(self) -> None:
        """Label (or correct the label of) the focused panel's answer with a failure mode and a reason."""
        aid = self.panel(self._focused_side()).answer_id
        if aid is None:
            notify(self, "No answer selected.", timeout=3)
            return
        current = self.store.failure_mode(aid)

        def done(result) -> None:
            if result is None:
                return
            mode, reason = result
            try:
                self.store.add_failure_mode(aid, mode, reason, "annotator", annotator=self.annotator)
            except BenchwrightError as e:
                notify(self, error_text(e), title="label refused", severity="error", timeout=8)
                return
            for side in ("a", "b"):
                self.panel(side).refresh_grid()
            notify(self, f"Failure mode set to {mode}.", timeout=3)

        self.app.push_screen(FailureModeScreen(current.mode if current else None), done)

    def action_human_score(self) -> None:
        """Score the focused panel's answer against its checklist by hand (a human judgment)."""
        from .human_score import HumanScoreScreen, draft_of, drop_draft

        panel = self.panel(self._focused_side())
        aid = panel.answer_id
        if aid is None:
            notify(self, "No answer selected.", timeout=3)
            return
        form = score_form(self.store, aid, self.annotator)
        if form.problem is not None:
            notify(self, f"This answer cannot be scored by hand: {form.problem}.", severity="warning", timeout=5)
            return

        def apply(scores, rationales) -> str | None:
            try:
                entries = [{"key": k, "score": v, "rationale": rationales.get(k, "")} for k, v in scores.items()]
                self.store.save_human_judgment(aid, self.annotator, entries, checklist_version=form.version)
            except BenchwrightError as e:
                return error_text(e)
            return None

        def done(saved: bool | None) -> None:
            if not saved:
                return
            drop_draft(self.app, self.annotator, aid, form.version)
            for side in ("a", "b"):
                self.panel(side).refresh_grid()
            notify(self, f"Scored as human:{self.annotator}.", timeout=3)

        draft = draft_of(self.app, self.annotator, aid, form.version)
        self.app.push_screen(HumanScoreScreen(form, self.annotator, apply, draft), done)

    def action_side_by_side(self) -> None:
        """Toggle the focused panel between one judge's runs and every judge run and annotator side by side."""
        panel = self.panel(self._focused_side())
        panel.side_by_side = not panel.side_by_side
        panel.refresh_grid()

    def action_assigned_answers(self) -> None:
        """The answers handed to this annotator to score; enter opens the chosen one here."""
        from .human_score import AssignedAnswersScreen

        rows = []
        for aid, done in self.store.assigned_answers(self.annotator):
            a = self.store.get_answer(aid)
            pair = self.store.get_pair(a.qa_pair_id)
            rows.append((aid, f"#{self.store.ordinal_of(pair.id)} {a.model} · {a.condition} · "
                              f"{printable(pair.question)[:70]}", done))

        def chosen(aid: str | None) -> None:
            if not aid:
                return
            pair_id = self.store.get_answer(aid).qa_pair_id
            if pair_id == self.pair_id:
                self.panel("a").select(aid)
                self.show_answer()
            else:
                self.app.switch_screen(InspectorScreen(self.store, pair_id, self.annotator, aid))

        self.app.push_screen(AssignedAnswersScreen(rows, self.annotator), chosen)

    def action_back(self) -> None:
        """Back to the review screen."""
        self.dismiss(self.pair_id)
