"""The audit trail of one pair: every event with who, when, before and after (append-only)."""

from __future__ import annotations

import json

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from benchwright.core.text import printable
from benchwright.db import Store

from ..widgets import literal, notify


def _short(value) -> str:
    if value is None:
        return ""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True) if not isinstance(value, str) else value
    return printable(text[:160])


class HistoryScreen(Screen):
    """Events of a pair, oldest first, as the store lets the viewer see them (``Store.events_of(pair,
    viewer=...)``: in blind mode, other annotators' own work stays hidden until the viewer has submitted a review
    of the pair)."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="history.back")]

    def __init__(self, store: Store, pair_id: str, annotator: str) -> None:
        super().__init__()
        self.store = store
        self.pair_id = pair_id
        self.annotator = annotator

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static(id="history")
        yield Footer()

    def on_mount(self) -> None:
        events = self.store.events_of(self.pair_id, viewer=self.annotator)
        table = Table(title=literal(f"History of pair #{self.store.ordinal_of(self.pair_id)}"), expand=True)
        for column in ("when (UTC)", "who", "what", "before", "after"):
            table.add_column(column, overflow="fold")
        for e in events:
            table.add_row(literal(e["created_at"][:19].replace("T", " ")), literal(e["actor"]), literal(e["kind"]),
                          literal(_short(e["before"])), literal(_short(e["after"])))
        if events.hidden:
            table.caption = literal(f"{events.hidden} events of other annotators are hidden until you submit your review "
                                    "(blind mode)")
            notify(self, table.caption, timeout=5)
        self.query_one("#history", Static).update(table)
