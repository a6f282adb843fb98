"""The evidence viewer: a cited file of the registered repository, highlighted, opened at the cited line."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from benchwright.core.errors import BenchwrightError
from benchwright.core.evidence import Evidence
from benchwright.core.models import Repository
from benchwright.core.repository import read_repository_file
from benchwright.core.text import printable

CONTEXT_LINES = 3
"""Lines shown above the cited line when the file opens."""


class EvidenceScreen(Screen):
    """Shows ``evidence.path`` from ``repository`` with syntax highlighting (pygments), the cited lines
    marked and scrolled into view. Unreadable or unsafe paths show the reason instead of the file."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="evidence.back"),
        Binding("q", "app.pop_screen", "Back", show=False),
        Binding("question_mark", "app.help", "Help", key_display="?", id="evidence.help"),
    ]

    def __init__(self, repository: Repository, evidence: Evidence) -> None:
        super().__init__()
        self.repository = repository
        self.evidence = evidence
        self.text: str | None = None
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="evidence-title")
        with ScrollableContainer(id="evidence-scroll"):
            yield Static(id="evidence-code")
        yield Footer()

    def on_mount(self) -> None:
        ev = self.evidence
        title = Text()
        title.append(f"{self.repository.pin}  ", style="bold")
        title.append(printable(ev.path or ev.citation.path))
        if ev.citation.start:
            title.append(f"  cited lines {ev.citation.start}-{ev.citation.end}", style="italic")
        if ev.status == "ambiguous":
            title.append(f"  ({len(ev.candidates)} files match '{ev.citation.path}'; showing the first)", style="yellow")
        self.query_one("#evidence-title", Static).update(title)
        code = self.query_one("#evidence-code", Static)
        try:
            if not self.repository.local_path or not ev.path:
                raise BenchwrightError("the repository has no local checkout here")
            self.text = read_repository_file(self.repository.local_path, ev.path)
        except BenchwrightError as e:
            self.error = str(e)
            code.update(Text(f"Cannot open: {e}", style="bold red"))
            return
        lines = self.text.count("\n") + 1
        start = ev.citation.start
        highlight = set()
        if start:
            end = min(ev.citation.end or start, lines)
            highlight = set(range(start, end + 1))
            if start > lines:
                title.append(f"  (the file has only {lines} lines)", style="bold red")
                self.query_one("#evidence-title", Static).update(title)
        syntax = Syntax(
            printable(self.text), Syntax.guess_lexer(ev.path, self.text[:4096]), line_numbers=True,
            highlight_lines=highlight, word_wrap=False, indent_guides=False, theme="ansi_dark",
        )
        code.update(syntax)
        if start:
            self.call_after_refresh(self._scroll_to, max(0, start - 1 - CONTEXT_LINES))

    def _scroll_to(self, y: int) -> None:
        self.query_one("#evidence-scroll").scroll_to(y=y, animate=False)
