"""The notes dialog: free text about the current pair; Ctrl+S saves, Esc cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea


class NotesScreen(ModalScreen[str | None]):
    """Returns the edited text on Ctrl+S, or None on Esc (nothing saved)."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True, id="notes.save"),
        Binding("escape", "cancel", "Cancel", priority=True, id="notes.cancel"),
    ]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.initial = text

    def compose(self) -> ComposeResult:
        with Vertical(id="notes-dialog"):
            yield Label("Notes on this pair   ctrl+s save · esc cancel")
            yield TextArea(self.initial, id="notes-text", soft_wrap=True, show_line_numbers=False)

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)  # go on writing where the note ends

    def action_save(self) -> None:
        """Close the dialog, handing back the text."""
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        """Close the dialog without saving."""
        self.dismiss(None)
