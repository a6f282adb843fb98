"""The help dialog: the keys of the screen below it, and how decisions are kept."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ..widgets import literal

INTRO = (
    "Decisions are stored the moment you press a key: quitting or a crash loses nothing, and reopening\n"
    "resumes at the first pair you have not decided. Undo (backspace) appends a new record; history is\n"
    "never overwritten. Ctrl+P opens the command palette, which reaches every action."
)


class HelpScreen(ModalScreen[None]):
    """Lists every key binding of ``screen`` with its description."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.target = screen

    def compose(self) -> ComposeResult:
        table = Table(title=literal(f"Keys: {type(self.target).__name__.removesuffix('Screen').lower()}"), expand=True)
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("action")
        for binding in self.target.BINDINGS:
            if isinstance(binding, Binding) and binding.description:
                key = binding.key_display or binding.key
                table.add_row(Text(key), Text(binding.description))
        table.add_row("ctrl+p", "command palette")
        table.add_row("ctrl+q", "quit")
        with VerticalScroll(id="help-dialog"):
            yield Static(Text(INTRO))
            yield Static(table)
            yield Static(Text("esc closes this help", style="dim"))
