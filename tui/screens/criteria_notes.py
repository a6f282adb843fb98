"""A dialog for the optional note of each of the four QA criteria."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from benchwright.core.review import CRITERIA, CRITERION_HELP, CRITERION_LABELS

from ..widgets import LiteralInput, literal


class CriteriaNotesScreen(ModalScreen[dict[str, str] | None]):
    """Edit one note per criterion; ctrl+s keeps them (saved with the next decision), esc cancels."""

    BINDINGS = [
        Binding("ctrl+s", "keep", "Keep"),
        Binding("escape", "cancel", "Cancel", priority=True),
    ]

    def __init__(self, notes: dict[str, str]) -> None:
        super().__init__()
        self.notes = notes

    def compose(self) -> ComposeResult:
        with Vertical(id="criteria-dialog"):
            yield Label("Criterion notes   ctrl+s keep (saved with your next decision) · esc cancel")
            for name in CRITERIA:
                yield Label(literal(f"{CRITERION_LABELS[name]}: {CRITERION_HELP[name]}"), classes="section-title")
                yield LiteralInput(self.notes.get(name, ""), id=f"note-{name}")

    def action_keep(self) -> None:
        self.dismiss({name: self.query_one(f"#note-{name}", Input).value for name in CRITERIA})

    def action_cancel(self) -> None:
        self.dismiss(None)
