"""The release screen: the preflight (what is included, what is excluded and why), then create the release
in a worker with progress. The files are written by :mod:`benchwright.exports` through
:func:`benchwright.tui.services.releases.create_release`, the same path as ``benchwright releases create``."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, ProgressBar, Select, Static

from benchwright.core.errors import BenchwrightError
from benchwright.core.text import plural
from benchwright.db import Store

from ..services.views import release_view
from ..widgets import LiteralInput, error_text, literal, literal_options, notify


class ReleaseScreen(Screen):
    """Preflight and create a release; ``ctrl+s`` creates it, ``esc`` goes back.

    The release is written in a thread worker, which only posts messages (:class:`Progress`, :class:`Created`,
    :class:`Failed`); their handlers update the screen and own its state.
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="release.back"),
        Binding("ctrl+s", "create", "Create release", id="release.create"),
        Binding("ctrl+g", "toggle_dropped", "Include dropped", id="release.include_dropped"),
    ]

    class Progress(Message):
        """Posted by the worker as files are written: ``done`` of ``total`` steps."""

        def __init__(self, done: int, total: int) -> None:
            super().__init__()
            self.done = done
            self.total = total

        def can_replace(self, message: Message) -> bool:
            """A newer count replaces one not handled yet (the bar shows the latest)."""
            return isinstance(message, ReleaseScreen.Progress)

    class Created(Message):
        """Posted by the worker once the release is written and recorded: its ``path``, ``notes`` to say."""

        def __init__(self, path: Path, notes: list[str]) -> None:
            super().__init__()
            self.path = path
            self.notes = notes

    class Failed(Message):
        """Posted by the worker when no release was made: the ``reason``."""

        def __init__(self, reason: str) -> None:
            super().__init__()
            self.reason = reason

    def __init__(self, store: Store, annotator: str, out: Path | None = None) -> None:
        """``out``: where releases are written (default: ``releases/`` beside the project file)."""
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.out = out if out is not None else Path(store.path).resolve().parent / "releases"
        self.preflight = None
        self.split_note = ""
        """The preflight's per-split data files or the problem that would refuse them (shown under its table)."""
        self.include_dropped = False
        self.selection: str | None = None
        """The selection the release is restricted to (``--selection``), chosen in the Select; None: every pair."""
        self.created: Path | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="release-form"):
            yield Label("name ")
            yield LiteralInput(placeholder="e.g. flask-qa", id="release-name")
            yield Label(" version ")
            yield LiteralInput(placeholder="X.Y.Z", id="release-version")
            names = self.store.selection_names()
            if names:  # only a project with selections shows the choice (sample --name NAME)
                yield Select(literal_options(names), prompt="every pair (no selection)", id="release-selection")
        yield ProgressBar(total=100, show_eta=False, id="release-progress")
        with VerticalScroll():
            yield Static(id="release-preflight")
        yield Footer()

    def on_mount(self) -> None:
        self.show_preflight()
        self.query_one("#release-name", Input).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        """Restrict the release to the chosen selection, or to none (every pair) when the choice is cleared."""
        if event.select.id == "release-selection":
            self.selection = event.value if isinstance(event.value, str) else None  # cleared: Select's null value
            self.show_preflight()

    def action_toggle_dropped(self) -> None:
        """Include pairs a gating curation step dropped, or leave them out again (the default)."""
        self.include_dropped = not self.include_dropped
        self.show_preflight()

    def show_preflight(self) -> None:
        """Run the preflight (with or without the dropped pairs) and show what it includes and excludes."""
        view = release_view(self.store, include_dropped=self.include_dropped, selection=self.selection)
        pre = self.preflight = view.preflight
        dropped = ("; pairs dropped by a gating curation step are included (ctrl+g leaves them out)"
                   if self.include_dropped else "")
        chosen = (f"; only the {plural(pre.selection.size, 'pair')} of selection {pre.selection.label}"
                  if pre.selection is not None else "")
        table = Table(title=literal(f"Preflight: {plural(len(pre.included), 'pair')} included, {len(pre.excluded)} excluded"
                                    + chosen + dropped), expand=True)
        table.add_column("excluded because")
        table.add_column("pairs", justify="right")
        table.add_column("first of them")
        for group in view.excluded:
            table.add_row(literal(group.reason), literal(len(group.pair_ids)),
                          literal(", ".join(f"#{n}" for n in group.first_ordinals)))
        from ..services.releases import release_split_plan

        plan, problem = release_split_plan(pre)  # per-split data files (docs/releases.md, "Splits")
        self.split_note = (f"Problem: {problem}" if problem else "Data files per split: " + ", ".join(
            f"data/{s}.* ({plural(n, 'pair')})" for s, n in plan.items()) if plan else "")
        if self.split_note:
            table.caption = literal(self.split_note)
        self.query_one("#release-preflight", Static).update(table)

    def action_create(self) -> None:
        """Create the release (refused when empty, or when the version exists)."""
        name = self.query_one("#release-name", Input).value.strip()
        version = self.query_one("#release-version", Input).value.strip()
        if not name or not version:
            notify(self, "Give the release a name and a version (X.Y.Z).", severity="warning")
            return
        self._create(name, version)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _create(self, name: str, version: str) -> None:
        """Write the release (in a thread: touches no widget, posts messages)."""
        from ..services.releases import create_release

        def progress(done: int, total: int) -> None:
            self.post_message(self.Progress(done, total))

        notes: list[str] = []
        try:
            path = create_release(self.store, self.preflight, name, version, self.out, by=self.annotator,
                                  progress=progress, notes=notes)
        except (BenchwrightError, ValueError) as e:
            self.post_message(self.Failed(error_text(e)))
            return
        self.post_message(self.Created(path, notes))

    def on_release_screen_progress(self, message: Progress) -> None:
        self.query_one("#release-progress", ProgressBar).update(total=max(message.total, 1), progress=message.done)

    def on_release_screen_failed(self, message: Failed) -> None:
        notify(self, message.reason, title="No release", severity="error", timeout=10)

    def on_release_screen_created(self, message: Created) -> None:
        self.created = message.path
        notify(self, " ".join(message.notes) or f"Wrote {message.path}", title="Release created", timeout=8)
        self._done(message.path)

    def _done(self, path: Path) -> None:
        t = Text(f"Release written to {path}\n", style="bold green")
        t.append("Check it any time with: benchwright releases verify " + str(path), style="dim")
        self.query_one("#release-preflight", Static).update(t)
