"""The benchwright Textual app: queue and review screens over one project store."""

from __future__ import annotations

import gc
from collections.abc import AsyncGenerator, Iterable
from contextlib import asynccontextmanager
from functools import partial

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from benchwright.db import Store

from .screens import HelpScreen, QueueScreen
from .widgets import plain

FREEZE_AFTER_S = 2.5
"""Seconds after the start at which the objects alive then (modules, styles, both screens' widgets, the queue's
first rows: built once, kept to the end) are moved out of the garbage collector's sight with :func:`gc.freeze`,
after the queue has prepared itself (:data:`~benchwright.tui.screens.queue.PREPARE_AFTER_S`); 0 turns it off."""


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
        self._heap_frozen = False
        self._heap_released = False

    def on_mount(self) -> None:
        if FREEZE_AFTER_S > 0:
            self.set_timer(FREEZE_AFTER_S, self._freeze_heap)
        first = self.store.first_undecided(self.annotator) if self.resume else None
        queue = QueueScreen(self.store, self.annotator, start_at=first, under_review=bool(first))
        self.push_screen(queue)
        if first:
            queue.open_pair(first)

    def _freeze_heap(self) -> None:
        """Freeze the heap of the start (once): CPython's full collections walk every object the process holds, a
        few hundred thousand after the start (Textual, Rich, the stylesheets, both screens), so each took 120-170
        ms, a stall of the key pressed then; frozen objects are skipped, so later full collections walk only what
        was made since. The objects are given back when the app ends, however it ends (:meth:`_release_heap`), so
        an app run in process (tests, ``serve``) leaves nothing behind; an app that is ending or has ended does not
        freeze at all."""
        if not self._heap_frozen and not self._heap_released and not self._exit:
            gc.freeze()
            self._heap_frozen = True

    def _release_heap(self) -> None:
        """Give the frozen heap back to the collector (:func:`gc.unfreeze`), once, and freeze no more."""
        self._heap_released = True
        if self._heap_frozen:
            gc.unfreeze()
            self._heap_frozen = False

    def on_unmount(self) -> None:
        self._release_heap()

    async def run_async(self, *args, **kwargs):
        """:meth:`textual.app.App.run_async` (which :meth:`~textual.app.App.run` calls), giving the frozen heap
        back in any case: Textual skips the app's Unmount when closing a screen raised."""
        try:
            return await super().run_async(*args, **kwargs)
        finally:
            self._release_heap()

    @asynccontextmanager
    async def run_test(self, *args, **kwargs) -> AsyncGenerator:
        """:meth:`textual.app.App.run_test`, giving the frozen heap back in any case, like :meth:`run_async`."""
        try:
            async with super().run_test(*args, **kwargs) as pilot:
                yield pilot
        finally:
            self._release_heap()

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
