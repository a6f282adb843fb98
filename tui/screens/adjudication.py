"""The adjudication screen: pairs whose reviews or checklist edits disagree, the reviews side by side per
criterion (differences marked), two annotators' checklists side by side with word diffs, per item a choice
of A's or B's (or an edit), and the final decision with its reason (RepoProbe §3.2, SWE-QA-Pro §2.4). Long
checklists are compared in a thread worker (``computing diff…`` meanwhile; nothing is recorded until it is shown)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState, get_current_worker

from benchwright.core.checklist import Checklist, ItemKind, clarity_item, validate
from benchwright.core.checklist_diff import ItemChange, checklist_text_size, diff_checklists
from benchwright.core.errors import BenchwrightError
from benchwright.core.review import CRITERIA, CRITERION_LABELS, Verdict
from benchwright.core.text_diff import LONG_DIFF_CHARS, DiffCancelled
from benchwright.core.vocabulary import REJECT_REASON_NAMES
from benchwright.db import Store

from ..services.views import adjudication_queue, adjudication_view
from ..widgets import LiteralInput, literal, notify
from .checklist_diff import render_side

_MARK = {None: ("·", "dim"), Verdict.PASS: ("pass", "green"), Verdict.FAIL: ("fail", "red")}


class AdjudicationScreen(Screen):
    """Adjudicate disagreements one pair at a time.

    Keys: up/down pick a pair; ``a``/``x``/``r`` set the final decision; ``j``/``k`` move between checklist
    items; ``[`` takes annotator A's item, ``]`` B's; ``e`` edits the composed checklist; ``tab`` reaches
    the reason; ``ctrl+s`` records the adjudication; ``u`` accepts every unanimous pair in bulk.
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="adjudication.back"),
        Binding("a", "final('accept')", "Accept", id="adjudication.accept"),
        Binding("x", "final('reject')", "Reject", id="adjudication.reject"),
        Binding("r", "final('revise')", "Revise", id="adjudication.revise"),
        Binding("j", "item(1)", "Next item", id="adjudication.next_item"),
        Binding("k", "item(-1)", "Prev item", id="adjudication.prev_item"),
        Binding("left_square_bracket", "take(0)", "Take A", key_display="[", id="adjudication.take_a"),
        Binding("right_square_bracket", "take(1)", "Take B", key_display="]", id="adjudication.take_b"),
        Binding("e", "edit", "Edit checklist", id="adjudication.edit"),
        Binding("ctrl+s", "record", "Record", id="adjudication.record"),
        Binding("u", "unanimous", "Accept unanimous", id="adjudication.unanimous"),
    ]

    def __init__(self, store: Store, adjudicator: str) -> None:
        super().__init__()
        self.store = store
        self.adjudicator = adjudicator
        self.pair_id: str | None = None
        self.final: str | None = None
        self.annotators: list[str] = []
        self.changes: list[ItemChange] = []
        self.choices: list[int | None] = []
        self.item_cursor = 0
        self.computing = False
        self.names: list[str] = []
        self.edited: Checklist | None = None
        self.sides: list[Checklist] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="adj-body"):
            with Vertical(id="adj-left"):
                yield Label("Awaiting adjudication", classes="section-title")
                yield OptionList(id="adj-queue")
            with VerticalScroll(id="adj-right", can_focus=False):
                yield Static(id="adj-question")
                yield Static(id="adj-reviews")
                with Horizontal(id="adj-checklists"):
                    yield Static(id="adj-side-a", classes="diff-side")
                    yield Static(id="adj-side-b", classes="diff-side")
                yield Static(id="adj-compose")
                yield Static(id="adj-final")
                yield LiteralInput(placeholder="reason for the final decision (required)", id="adj-reason")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    def reload(self) -> None:
        """Refill the queue of disagreements and show the first one."""
        queue = self.query_one("#adj-queue", OptionList)
        queue.clear_options()
        # an annotator never adjudicates a disagreement of their own, nor sees pairs still blind to them
        rows = adjudication_queue(self.store, self.adjudicator)
        items = [row.disagreement for row in rows]
        for row in rows:
            d = row.disagreement
            label = Text(f"#{row.ordinal} ", style="bold")
            label.append(", ".join(CRITERION_LABELS.get(f, f) for f in d.fields), style="yellow")
            label.append_text(literal(f"  {', '.join(d.annotators)}", style="dim"))
            queue.add_option(Option(label, id=d.qa_pair_id))
        if items:
            queue.highlighted = 0
            self.show(items[0].qa_pair_id)
        else:
            self.pair_id = None
            self.query_one("#adj-question", Static).update(Text("Nothing awaits adjudication.", style="italic"))
            for w in ("#adj-reviews", "#adj-side-a", "#adj-side-b", "#adj-compose", "#adj-final"):
                self.query_one(w, Static).update("")
        queue.focus()

    @on(OptionList.OptionHighlighted, "#adj-queue")
    def _picked(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_id and event.option_id != self.pair_id:
            self.show(event.option_id)

    def show(self, pair_id: str) -> None:
        """Show one pair's reviews and checklists."""
        self.pair_id, self.final, self.edited, self.item_cursor = pair_id, None, None, 0
        view = adjudication_view(self.store, pair_id)
        pair = view.pair
        q = Text(f"#{view.ordinal} ", style="bold")
        q.append_text(literal(pair.question[:400]))
        self.query_one("#adj-question", Static).update(q)
        reviews = view.reviews
        self.annotators = list(view.annotators)
        table = Table(title="Reviews", expand=False)
        table.add_column("")
        for who in self.annotators:
            table.add_column(literal(who))
        table.add_column("")
        rows = [("decision", {w: reviews[w].decision if w in reviews else None for w in self.annotators})]
        for c in CRITERIA:
            rows.append((CRITERION_LABELS[c], {w: reviews[w].criteria.verdicts.get(c) if w in reviews else None
                                               for w in self.annotators}))
        rows.append(("reject reason", {w: REJECT_REASON_NAMES.get(reviews[w].reason, "unknown")
                                       if w in reviews and reviews[w].reason else None for w in self.annotators}))
        for label, values in rows:
            differ = len({v for v in values.values()}) > 1
            cells = []
            for w in self.annotators:
                v = values[w]
                if isinstance(v, Verdict) or v is None:
                    mark, style = _MARK[v]
                else:
                    mark, style = v, {"accept": "green", "reject": "red", "revise": "magenta"}.get(v, "red")
                cells.append(Text(mark, style=style))
            table.add_row(Text(label, style="bold"), *cells, Text("≠" if differ else "", style="bold yellow"))
        notes = [(w, reviews[w].notes) for w in self.annotators if w in reviews and reviews[w].notes]
        if notes:
            table.caption = literal(" · ".join(f"{w}: {n[:80]}" for w, n in notes))
        self.reviews_table = table
        self.query_one("#adj-reviews", Static).update(table)
        # checklists of the first two annotators with edits (or the current one when only one edited)
        versions = view.sides
        self.sides = [v.checklist for v in versions]
        names = [f"{v.author} v{v.version}" for v in versions]
        self.names = names
        self.workers.cancel_group(self, "adjudication-diff")
        self.computing = False
        if len(self.sides) == 2:
            a, b = self.sides
            if checklist_text_size(a) + checklist_text_size(b) <= LONG_DIFF_CHARS:
                self._show_sides(pair_id, diff_checklists(a, b))
            else:  # long checklists: compared in a thread worker, keys answered meanwhile
                self.computing = True
                self.changes, self.choices = [], []
                self.query_one("#adj-side-a", Static).update(literal(f"A: {names[0]}\n\ncomputing diff…",
                                                                     style="bold"))
                self.query_one("#adj-side-b", Static).update(literal(f"B: {names[1]}\n\ncomputing diff…",
                                                                     style="bold"))
                self._compute(pair_id, a, b)
        else:
            self.changes, self.choices = [], []
            self.query_one("#adj-side-a", Static).update(Text("no conflicting checklist edits", style="dim"))
            self.query_one("#adj-side-b", Static).update("")
        self.query_one("#adj-reason", Input).value = ""
        self._show_compose()
        self._show_final()

    def _show_sides(self, pair_id: str, changes: list[ItemChange]) -> None:
        self.changes, self.computing = changes, False
        self.query_one("#adj-side-a", Static).update(literal(f"A: {self.names[0]}\n\n", style="bold")
                                                     + render_side(changes, 0))
        self.query_one("#adj-side-b", Static).update(literal(f"B: {self.names[1]}\n\n", style="bold")
                                                     + render_side(changes, 1))
        self.choices = [1 if c.new_index is not None else 0 for c in changes]

    class Computed(Message):
        """Posted by the diff worker: the item changes between the two sides of ``pair_id``."""

        def __init__(self, pair_id: str, changes: list[ItemChange]) -> None:
            super().__init__()
            self.pair_id, self.changes = pair_id, changes

    @work(thread=True, exclusive=True, group="adjudication-diff", exit_on_error=False)
    def _compute(self, pair_id: str, a: Checklist, b: Checklist) -> None:
        worker = get_current_worker()
        try:
            changes = diff_checklists(a, b, cancelled=lambda: worker.is_cancelled)
        except DiffCancelled:
            return
        if not worker.is_cancelled:
            self.post_message(self.Computed(pair_id, changes))

    @on(Computed)
    def _computed(self, event: Computed) -> None:
        if event.pair_id == self.pair_id and self.computing:
            self._show_sides(event.pair_id, event.changes)
            self._show_compose()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A diff that failed says so in place of the diff (it never takes the app down)."""
        if event.worker.group == "adjudication-diff" and event.state == WorkerState.ERROR:
            self.computing = False
            self.query_one("#adj-side-a", Static).update(literal(f"the diff failed: {event.worker.error}",
                                                                 style="bold red"))

    def on_unmount(self) -> None:
        """Closing the screen cancels a diff still computing (its thread stops at its next check)."""
        self.workers.cancel_group(self, "adjudication-diff")

    def composed(self) -> Checklist | None:
        """The checklist made of the chosen side of each item (or the edited one)."""
        if self.edited is not None:
            return self.edited
        if not self.changes:
            return None
        items = []
        for change, choice in zip(self.changes, self.choices, strict=True):
            index = change.old_index if choice == 0 else change.new_index
            if index is not None:
                items.append(self.sides[choice].items[index])
        if not any(i.kind is ItemKind.CLARITY for i in items):
            items.append(clarity_item())
        return Checklist(items=items)

    def _show_compose(self) -> None:
        t = Text("Adjudicated checklist ([ A · ] B · j/k item · e edit)\n", style="bold")
        if self.computing:
            self.query_one("#adj-compose", Static).update(t + Text("computing diff…", style="dim"))
            return
        result = self.composed()
        if result is None:
            self.query_one("#adj-compose", Static).update(Text("no checklist to adjudicate", style="dim"))
            return
        if self.edited is not None:
            t.append("edited by you\n", style="italic")
        for n, (change, choice) in enumerate(zip(self.changes, self.choices, strict=True)):
            pointer = "▶ " if n == self.item_cursor and self.edited is None else "  "
            side = "AB"[choice]
            item = self.sides[choice].items[i] if (i := (change.old_index if choice == 0 else change.new_index)) is not None else None
            t.append(pointer)
            t.append(f"[{side}] ", style="bold cyan")
            if item is None:
                t.append(f"(left out: {side} has no such item)\n", style="dim")
            else:
                t.append(f"{item.weight} ", style="bold")
                t.append_text(literal(item.key_point[:90]))
                t.append("\n")
        problems = validate(result)
        t.append_text(literal("✓ valid" if not problems else "✗ " + "; ".join(str(p) for p in problems[:3]),
                              style="green" if not problems else "red"))
        self.query_one("#adj-compose", Static).update(t)

    def _show_final(self) -> None:
        t = Text("Final decision: ", style="bold")
        t.append(self.final or "(press a, x or r)", style="bold green" if self.final else "dim")
        self.query_one("#adj-final", Static).update(t)

    # ------------------------------------------------------------------ actions
    def action_final(self, decision: str) -> None:
        """Choose the final decision."""
        self.final = decision
        self._show_final()

    def action_item(self, step: int) -> None:
        """Move the item cursor."""
        if self.changes:
            self.item_cursor = max(0, min(len(self.changes) - 1, self.item_cursor + step))
            self._show_compose()

    def action_take(self, side: int) -> None:
        """Take annotator A's (0) or B's (1) version of the item under the cursor."""
        if self.changes:
            self.edited = None
            self.choices[self.item_cursor] = side
            self._show_compose()

    def action_edit(self) -> None:
        """Edit the composed checklist; the edit becomes the adjudicated checklist."""
        from .checklist_editor import ChecklistEditorScreen

        start = self.composed()
        if self.pair_id is None or start is None or self.computing:
            return

        def done(result) -> None:
            if isinstance(result, Checklist):
                self.edited = result
                self._show_compose()

        self.app.push_screen(ChecklistEditorScreen(self.store, self.adjudicator, self.pair_id, initial=start,
                                                   compose_only=True), done)

    def action_record(self) -> None:
        """Record the adjudication: final decision, reason, and the composed checklist (origin adjudicated)."""
        if self.pair_id is None:
            return
        reason = self.query_one("#adj-reason", Input).value
        if not self.final:
            notify(self, "Choose the final decision first (a, x or r).", severity="warning")
            return
        if self.computing:
            notify(self, "The checklists are still being compared; record once the diff is shown.",
                   severity="warning")
            return
        checklist = self.composed()
        try:
            self.store.adjudicate(self.pair_id, self.adjudicator, self.final, reason, checklist=checklist)
        except BenchwrightError as e:
            notify(self, str(e), title="Not recorded", severity="error", timeout=8)
            return
        notify(self, f"Adjudicated #{self.store.ordinal_of(self.pair_id)}: {self.final}.", timeout=3)
        self.reload()

    def action_unanimous(self) -> None:
        """Adjudicate every pair whose reviews all agree, in bulk."""
        done = self.store.accept_unanimous(self.adjudicator)
        notify(self, f"Adjudicated {len(done)} unanimous pairs.", timeout=4)
        self.reload()
