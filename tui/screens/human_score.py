"""Scoring an answer against its checklist by hand (issue 20 item 5): the human judgment form, and the list of
answers handed to the annotator to score (``benchwright assign --answers``).

The form: every checklist item with its allowed scores; up/down move between items, a digit or left/right
chooses the score (only an allowed one), tab goes to the rationale of the current item (optional; enter goes back
to the items), ctrl+s or the Submit button stores it (``Store.save_human_judgment``, append-only, shown as
``human:NAME``), escape cancels. What was chosen and typed stays as a draft while the app runs (:func:`draft_of`):
escape and ``h`` again come back to it; a submitted form drops it. Drafts are not kept across a restart. All text
from data is shown literally.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from benchwright.core.text import printable

from ..services.human import ScoreForm
from ..widgets import LiteralInput, capped_literal, literal

Apply = Callable[[dict[str, int], dict[str, str]], str | None]
"""Stores the scores (item key -> score) and rationales; returns None, or why they were refused."""

_DRAFTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def draft_of(app, annotator: str, answer_id: str, version: int | None) -> dict:
    """The draft of ``annotator``'s scores of ``answer_id`` against checklist ``version`` in this app run: a dict
    ``{"scores": {key: score}, "rationales": {key: text}}`` the form fills as it goes (empty at first)."""
    return _DRAFTS.setdefault(app, {}).setdefault((annotator, answer_id, version), {})


def drop_draft(app, annotator: str, answer_id: str, version: int | None) -> None:
    """Forget the draft (the scores were stored)."""
    _DRAFTS.get(app, {}).pop((annotator, answer_id, version), None)


class ScoreItems(Static, can_focus=True):
    """The items of the form (focusable, without keys of its own: the screen's up/down/left/right/digits act)."""


class HumanScoreScreen(ModalScreen[bool]):
    """The scoring form of one answer; dismisses True once ``apply`` stored the scores, False when cancelled."""

    DEFAULT_CSS = """
    HumanScoreScreen { align: center middle; }
    #hs-dialog { width: 96%; height: 94%; padding: 0 1; border: thick $primary; background: $surface; }
    #hs-answer { height: 1fr; max-height: 12; border: round $panel; }
    #hs-items { height: 2fr; }
    #hs-buttons { height: auto; }
    #hs-error { height: auto; }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="human_score.cancel"),
        Binding("ctrl+s", "submit", "Submit", id="human_score.submit"),
        Binding("up", "move(-1)", "Previous item", show=False, id="human_score.up"),
        Binding("down", "move(1)", "Next item", show=False, id="human_score.down"),
        Binding("left", "step(-1)", "Lower score", show=False, id="human_score.left"),
        Binding("right", "step(1)", "Higher score", show=False, id="human_score.right"),
        *(Binding(str(d), f"digit({d})", show=False, id=f"human_score.digit{d}") for d in range(10)),
    ]

    def __init__(self, form: ScoreForm, annotator: str, apply: Apply, draft: dict | None = None) -> None:
        """``draft``: a dict the form keeps its choices in (:func:`draft_of`), resumed when it holds some."""
        super().__init__()
        self.form, self.annotator, self.apply = form, annotator, apply
        self.current = 0
        draft = {} if draft is None else draft
        self.scores: dict[str, int | None] = draft.setdefault("scores", {it.key: it.score for it in form.items})
        self.rationales: dict[str, str] = draft.setdefault("rationales",
                                                           {it.key: it.rationale for it in form.items})

    def compose(self) -> ComposeResult:
        f = self.form
        with Vertical(id="hs-dialog"):
            yield Label(literal(f"Score {f.title} as human:{self.annotator} (checklist v{f.version})", style="bold"))
            yield Static(literal(printable(f.question)[:300]), id="hs-question")
            with VerticalScroll(id="hs-answer"):
                yield Static(capped_literal(f.answer_text), id="hs-answer-text")
            with VerticalScroll(id="hs-items", can_focus=False):
                yield ScoreItems(id="hs-items-text")
            yield Label(id="hs-rationale-label")
            yield LiteralInput(placeholder="rationale of this item (optional; tab to type, enter to go back)",
                               id="hs-rationale")
            yield Static(id="hs-error")
            with Horizontal(id="hs-buttons"):
                yield Button("Submit (ctrl+s)", id="hs-submit", variant="primary")
                yield Button("Cancel (esc)", id="hs-cancel")

    def on_mount(self) -> None:
        self._redraw()
        self.query_one("#hs-items-text").focus()

    # ----------------------------------------------------------------------------------------- rendering
    def _redraw(self) -> None:
        out = Text()
        for i, it in enumerate(self.form.items):
            here = i == self.current
            chosen = self.scores.get(it.key)
            out.append("▶ " if here else "  ", style="bold")
            out.append_text(literal(f"{it.key}. {printable(it.label)}", style="bold" if here else ""))
            out.append(f"  ({it.kind}, weight {it.weight})  ", style="dim")
            for a in it.allowed:
                out.append(f" {a} ", style="reverse bold" if a == chosen else "")
            if chosen is None:
                out.append("  not scored", style="yellow")
            out.append("\n")
            if here and chosen is not None and it.criteria.get(chosen):
                out.append_text(literal(f"    {chosen}: {printable(it.criteria[chosen])}\n", style="italic"))
            if self.rationales.get(it.key):
                out.append_text(literal(f"    why: {printable(self.rationales[it.key])[:120]}\n", style="dim"))
        done = sum(v is not None for v in self.scores.values())
        out.append(f"\n{done} of {len(self.form.items)} items scored", style="bold" if done else "dim")
        self.query_one("#hs-items-text", Static).update(out)
        it = self.form.items[self.current] if self.form.items else None
        if it is not None:
            self.query_one("#hs-rationale-label", Label).update(literal(f"rationale of item {it.key}"))
            box = self.query_one("#hs-rationale", Input)
            if box.value != self.rationales.get(it.key, ""):
                with box.prevent(Input.Changed):
                    box.value = self.rationales.get(it.key, "")

    def _error(self, message: str) -> None:
        self.query_one("#hs-error", Static).update(literal(message, style="bold red") if message else "")

    # ------------------------------------------------------------------------------------------- actions
    def action_move(self, delta: int) -> None:
        """Go to the previous / next item."""
        if self.form.items:
            self.current = (self.current + delta) % len(self.form.items)
            self._redraw()

    def action_step(self, delta: int) -> None:
        """Choose the next lower / higher allowed score of the current item."""
        if not self.form.items:
            return
        it = self.form.items[self.current]
        chosen = self.scores.get(it.key)
        if chosen is None:
            index = 0 if delta > 0 else len(it.allowed) - 1
        else:
            index = max(0, min(len(it.allowed) - 1, it.allowed.index(chosen) + delta))
        self.scores[it.key] = it.allowed[index]
        self._error("")
        self._redraw()

    def action_digit(self, digit: int) -> None:
        """Choose score ``digit`` for the current item (refused when it is not an allowed score)."""
        if not self.form.items:
            return
        it = self.form.items[self.current]
        if digit not in it.allowed:
            self._error(f"item {it.key}: {digit} is not an allowed score ({', '.join(map(str, it.allowed))})")
            return
        self.scores[it.key] = digit
        self._error("")
        self._redraw()

    def action_submit(self) -> None:
        """Store the scores (every item needs one); a refusal is shown and the form stays open."""
        missing = [k for k, v in self.scores.items() if v is None]
        if missing:
            self._error(f"score every item first; not scored: {', '.join(missing)}")
            self.current = next(i for i, it in enumerate(self.form.items) if it.key == missing[0])
            self._redraw()
            self.query_one("#hs-items-text").focus()
            return
        problem = self.apply({k: v for k, v in self.scores.items() if v is not None},
                             {k: v for k, v in self.rationales.items() if v.strip()})
        if problem:
            self._error(problem)
            return
        self.dismiss(True)

    def action_cancel(self) -> None:
        """Close without storing anything."""
        self.dismiss(False)

    @on(Input.Changed, "#hs-rationale")
    def _typed(self, event: Input.Changed) -> None:
        if self.form.items:
            self.rationales[self.form.items[self.current].key] = event.value

    @on(Input.Submitted, "#hs-rationale")
    def _back_to_items(self, event: Input.Submitted) -> None:
        self._redraw()
        self.query_one("#hs-items-text").focus()

    @on(Button.Pressed, "#hs-submit")
    def _submit_pressed(self, event: Button.Pressed) -> None:
        self.action_submit()

    @on(Button.Pressed, "#hs-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        self.action_cancel()


class AssignedAnswersScreen(ModalScreen[str | None]):
    """The answers handed to the annotator to score (``assign --answers``), to do first; enter returns the
    chosen answer's id (None: escape)."""

    DEFAULT_CSS = """
    AssignedAnswersScreen { align: center middle; }
    #aa-dialog { width: 90%; height: 80%; padding: 0 1; border: thick $primary; background: $surface; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="assigned_answers.cancel")]

    def __init__(self, rows: list[tuple[str, str, bool]], annotator: str) -> None:
        """``rows``: ``(answer id, description, scored)`` in queue order."""
        super().__init__()
        self.rows, self.annotator = rows, annotator

    def compose(self) -> ComposeResult:
        todo = sum(1 for *_, done in self.rows if not done)
        with Vertical(id="aa-dialog"):
            yield Label(literal(f"Answers for {self.annotator} to score: {len(self.rows)} assigned, {todo} to do "
                                "(enter opens one in the judge inspector; h there scores it)", style="bold"))
            options = [Option(literal(("✓ scored  " if done else "· to do   ") + description), id=aid)
                       for aid, description, done in sorted(self.rows, key=lambda r: r[2])]
            yield OptionList(*(options or [Option(Text("nothing assigned: benchwright assign --answers "
                                                       "--annotators ...", style="dim"), disabled=True)]),
                             id="aa-list")

    def on_mount(self) -> None:
        self.query_one("#aa-list", OptionList).focus()

    @on(OptionList.OptionSelected, "#aa-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_id)

    def action_cancel(self) -> None:
        """Close."""
        self.dismiss(None)
