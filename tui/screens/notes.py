"""The notes dialog: free text about the current pair; Ctrl+S saves, Esc cancels."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from ..widgets import LiteralTextArea, literal


class NotesScreen(ModalScreen[str | None]):
    """Returns the edited text on Ctrl+S, or None on Esc (nothing saved)."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="notes.save"),
        Binding("escape", "cancel", "Cancel", priority=True, id="notes.cancel"),
    ]

    def __init__(self, text: str, *, newer: str | None = None) -> None:
        """``text``: what the editor starts with; ``newer``: the note another session saved meanwhile, shown
        above the editor after a refused save (a second ctrl+s then saves this text over it)."""
        super().__init__()
        self.initial = text
        self.newer = newer

    def compose(self) -> ComposeResult:
        with Vertical(id="notes-dialog"):
            yield Label("Notes on this pair   ctrl+s save · esc cancel")
            if self.newer is not None:
                notice = Text("Not saved: another session saved this note meanwhile. Theirs:\n", style="bold")
                notice.append_text(literal(self.newer or "(empty)"))
                notice.append("\nctrl+s saves yours (below) over it; esc keeps theirs.", style="bold")
                yield Static(notice, id="notes-conflict")
            yield LiteralTextArea(self.initial, id="notes-text", soft_wrap=True, show_line_numbers=False)

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
