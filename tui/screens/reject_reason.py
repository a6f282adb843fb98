"""Why a pair is rejected: the review screen's ``x`` asks for one of the reject reasons (RepoProbe §3.2
"Quality Assurance": a failing criterion, or ``directly-answerable``)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from benchwright.core.review import Criteria, Verdict, decision_reason
from benchwright.core.vocabulary import REJECT_REASON_REGISTRY

from ..widgets import literal


class RejectReasonScreen(ModalScreen[str | None]):
    """Choose the reason of a reject: ``1``-``5`` pick one, ``enter`` the highlighted one (at first the first
    failing criterion), ``esc`` cancels (nothing is stored). A criterion the review marks as passing cannot be
    the reason and is shown disabled."""

    DEFAULT_CSS = """
    RejectReasonScreen { align: center middle; }
    #reject-dialog { width: 80%; height: auto; border: thick $error; background: $surface; padding: 1; }
    #reject-reasons { height: auto; max-height: 12; }
    """

    BINDINGS = [
        Binding("1", "pick(0)", "Reason 1", show=False, id="reject.r1"),
        Binding("2", "pick(1)", "Reason 2", show=False, id="reject.r2"),
        Binding("3", "pick(2)", "Reason 3", show=False, id="reject.r3"),
        Binding("4", "pick(3)", "Reason 4", show=False, id="reject.r4"),
        Binding("5", "pick(4)", "Reason 5", show=False, id="reject.r5"),
        Binding("escape", "cancel", "Cancel", id="reject.cancel"),
    ]

    def __init__(self, criteria: Criteria) -> None:
        super().__init__()
        self.terms = list(REJECT_REASON_REGISTRY)
        self.refused = {t.name for t in self.terms if criteria.verdicts.get(t.name) == Verdict.PASS}
        first = decision_reason("reject", criteria, None)
        allowed = [t.name for t in self.terms if t.name not in self.refused]
        self.default = first if first is not None else (allowed[0] if allowed else None)

    def compose(self) -> ComposeResult:
        options = []
        for i, term in enumerate(self.terms, start=1):
            label = Text(f"{i}  ", style="bold")
            label.append_text(literal(term.display, style="bold"))
            label.append_text(literal(f": {term.description}", style="dim"))
            if term.name in self.refused:
                label.append("  (marked pass)", style="italic")
            options.append(Option(label, id=term.name, disabled=term.name in self.refused))
        with Vertical(id="reject-dialog"):
            yield Label(Text("Why is this pair rejected?  1-5 or enter · esc cancels (nothing is stored)"))
            yield OptionList(*options, id="reject-reasons")

    def on_mount(self) -> None:
        options = self.query_one("#reject-reasons", OptionList)
        options.focus()
        if self.default is not None:
            options.highlighted = [t.name for t in self.terms].index(self.default)

    def action_pick(self, index: int) -> None:
        """Choose the reason numbered ``index + 1`` (a refused one is not chosen)."""
        if index < len(self.terms) and self.terms[index].name not in self.refused:
            self.dismiss(self.terms[index].name)

    @on(OptionList.OptionSelected, "#reject-reasons")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(str(event.option.id))

    def action_cancel(self) -> None:
        """Close without a reject."""
        self.dismiss(None)
