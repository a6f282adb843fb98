"""The benchwright Textual app: queue and review screens over one project store."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from benchwright.db import Store

from .screens import HelpScreen, QueueScreen
from .widgets import plain


class BenchwrightApp(App):
    """Review Q&A pairs of ``store`` as ``annotator``.

    On start the queue is shown and, when ``resume`` is true and a pair is left undecided, the review
    screen opens on the first one (where work stopped).
    """

    CSS_PATH = "app.tcss"
    TITLE = "benchwright"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="app.quit")]

    def __init__(self, store: Store, annotator: str, *, resume: bool = True, title: str | None = None,
                 provider_factory=None) -> None:
        super().__init__()
        self.provider_factory = provider_factory
        """Replaces the configured LLM providers (tests, demos): ``(config, role_config) -> Provider``."""
        self.store = store
        self.annotator = annotator
        self.resume = resume
        self.sub_title = plain(f"{title or store.path.name} · annotator: {annotator}")

    def on_mount(self) -> None:
        first = self.store.first_undecided(self.annotator) if self.resume else None
        queue = QueueScreen(self.store, self.annotator, start_at=first, under_review=bool(first))
        self.push_screen(queue)
        if first:
            queue.open_pair(first)

    def action_help(self) -> None:
        """Show the keys of the current screen."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette offers every described key binding of the current screen, plus Textual's own."""
        yield from super().get_system_commands(screen)
        for binding in getattr(screen, "BINDINGS", []):
            if isinstance(binding, Binding) and binding.description:
                key = binding.key_display or binding.key
                yield SystemCommand(
                    binding.description, f"key: {key}", partial(self._run_on_screen, screen, binding.action)
                )

    async def _run_on_screen(self, screen: Screen, action: str) -> None:
        await screen.run_action(action)
