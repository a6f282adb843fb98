"""The duplicates screen (``D`` on the queue or the review screen; SWE-QA-Pro §2.3 semantic dedup): the members
of one duplicate group side by side (question, reference answer, split, similarity), and keys to keep the
highlighted member, keep them all (not duplicates) or merge into the highlighted one; ``]`` / ``[`` walk the
unresolved groups. Nothing is deleted: a resolution says what is kept (``benchwright dedup resolve`` does the
same). Every text is shown literally."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalScroll, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from benchwright.core.dedup import StaleResolutionError
from benchwright.core.errors import BenchwrightError
from benchwright.db import Store
from benchwright.db.dedup import GroupMember, GroupView

from ..services.dedup import duplicates_view, neighbor_unresolved
from ..widgets import error_text, literal, notify

SHOWN_MEMBERS = 12
"""Members shown side by side at most (a low threshold can chain hundreds into one group); the others are counted
and ``benchwright dedup list`` lists them all."""

MEMBER_MIN_WIDTH = 44
"""Narrowest member column (cells). When the members do not fit side by side at this width, each column is this
wide and the row scrolls sideways: Textual would otherwise give every ``1fr`` column the whole screen's width,
one member at a time."""

SHOWN_CHARS = 20_000
"""Characters of a question or an answer the screen renders; the rest is counted (``dedup list`` and the review
screen show the pair)."""


def _cut(text: str | None, empty: str) -> Text:
    if text is None:
        return literal(empty, style="dim italic")
    shown = literal(text[:SHOWN_CHARS])
    if len(text) > SHOWN_CHARS:
        shown.append(f"\n… {len(text) - SHOWN_CHARS:,} more characters not shown", style="dim")
    return shown


class DuplicatesScreen(Screen):
    """One duplicate group of the latest dedup run, its members side by side; resolve it from the keyboard."""

    DEFAULT_CSS = """
    #dup-summary { height: auto; padding: 0 1; }
    #dup-members { height: 1fr; }
    .dup-member { width: 1fr; min-width: 44; border: round $panel; padding: 0 1; }
    .dup-member.-highlighted { border: heavy $accent; }
    #dup-status { height: auto; padding: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "back", "Back", id="duplicates.back"),
        Binding("left", "highlight(-1)", "Previous member", key_display="←", priority=True,
                id="duplicates.previous_member"),
        Binding("right", "highlight(1)", "Next member", key_display="→", priority=True,
                id="duplicates.next_member"),
        Binding("k", "keep", "Keep highlighted", id="duplicates.keep"),
        Binding("b", "keep_all", "Keep all", id="duplicates.keep_all"),
        Binding("m", "merge", "Merge into highlighted", id="duplicates.merge"),
        Binding("right_square_bracket", "group(1)", "Next unresolved", key_display="]", id="duplicates.next"),
        Binding("left_square_bracket", "group(-1)", "Previous unresolved", key_display="[",
                id="duplicates.previous"),
        Binding("question_mark", "app.help", "Help", key_display="?", id="duplicates.help"),
    ]

    def __init__(self, store: Store, annotator: str, *, pair_id: str | None = None,
                 group_id: int | None = None) -> None:
        """Opens on ``group_id``, else on the group of ``pair_id``, else on the first unresolved group."""
        super().__init__()
        self.store, self.annotator = store, annotator
        self._pair_id, self._group_id = pair_id, group_id
        self.group: GroupView | None = None
        self.highlighted = 0
        self.changed = False
        """True once this screen recorded a resolution."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="dup-summary")
        yield HorizontalScroll(id="dup-members")
        yield Static(id="dup-status")
        yield Footer()

    async def on_mount(self) -> None:
        self.title = "Duplicates"
        await self.show(group_id=self._group_id, pair_id=self._pair_id)

    # ------------------------------------------------------------------ display
    async def show(self, *, group_id: int | None = None, pair_id: str | None = None,
                   keep_highlight: bool = False) -> None:
        """Show the group ``group_id`` (or of ``pair_id``, or the first unresolved one) from the store."""
        view = duplicates_view(self.store, group_id=group_id, pair_id=pair_id)
        previous = self.group.id if self.group else None
        self.group = view.group
        if not (keep_highlight and previous == (view.group.id if view.group else None)):
            self.highlighted = 0
            if view.group is not None and pair_id in view.group.member_ids[:SHOWN_MEMBERS]:
                self.highlighted = view.group.member_ids.index(pair_id)
        summary = Text()
        if view.run is None:
            summary.append("No dedup run yet: run benchwright dedup on the command line.", style="bold")
        elif view.group is None:
            summary.append(f"Dedup run {view.run.id}: no unresolved duplicate group.", style="bold")
        else:
            g = view.group
            summary.append(f"Group {g.id}", style="bold")
            summary.append(f" of run {g.run_id} · {g.kind}")
            if g.scope_key:
                summary.append(" · ")
                summary.append_text(literal(g.scope_key))
            summary.append(f" · {len(g.members)} members · max similarity {g.max_score:.3f}")
            if len(g.members) > SHOWN_MEMBERS:
                summary.append(f" · the first {SHOWN_MEMBERS} shown (benchwright dedup list shows all)",
                               style="yellow")
            if g.run_id != view.run.id:
                summary.append(" · from an earlier run", style="yellow")
            summary.append(f"\n{view.unresolved} unresolved group{'' if view.unresolved == 1 else 's'} in run "
                           f"{view.run.id}", style="dim")
        self.query_one("#dup-summary", Static).update(summary)
        members = self.query_one("#dup-members", HorizontalScroll)
        await members.remove_children()
        if self.group is not None:
            await members.mount_all([self._column(m, i) for i, m in enumerate(self._members())])
            self._fit_columns(self.size.width)
        self._refresh_status()

    def on_resize(self, event) -> None:
        self._fit_columns(event.size.width)

    def _fit_columns(self, width: int) -> None:
        """``1fr`` columns while the members fit side by side at :data:`MEMBER_MIN_WIDTH`, else that fixed width."""
        columns = list(self.query(".dup-member"))
        fits = len(columns) * MEMBER_MIN_WIDTH <= width
        for column in columns:
            column.styles.width = "1fr" if fits else MEMBER_MIN_WIDTH

    def _members(self) -> tuple[GroupMember, ...]:
        return self.group.members[:SHOWN_MEMBERS] if self.group is not None else ()

    def _column(self, m: GroupMember, index: int) -> VerticalScroll:
        g = self.group
        head = Text(f"#{m.ordinal}", style="bold")
        head.append(" · split ")
        head.append_text(literal(m.split or "none"))
        head.append(f" · similarity {m.score:.3f}")
        if m.id == g.representative:
            head.append(" · first in queue", style="cyan")
        head.append("\n")
        head.append_text(literal(m.id, style="dim"))
        if m.repository:
            head.append(" · ", style="dim")
            head.append_text(literal(m.repository, style="dim"))
        column = VerticalScroll(
            Static(head, classes="dup-head"),
            Static(Text("Question", style="bold underline")),
            Static(_cut(m.question, "(no question)"), classes="dup-question"),
            Static(Text("\nReference answer", style="bold underline")),
            Static(_cut(m.answer, "(needs a reference answer)"), classes="dup-answer"),
            classes="dup-member" + (" -highlighted" if index == self.highlighted else ""),
            id=f"dup-member-{index}",
        )
        return column  # focused when highlighted: up / down / page keys scroll it

    def _refresh_status(self) -> None:
        status = Text()
        g = self.group
        if g is not None:
            for i, column in enumerate(self.query(".dup-member")):
                column.set_class(i == self.highlighted, "-highlighted")
                if i == self.highlighted:
                    column.focus(scroll_visible=True)
            r = g.resolution
            ordinal = {m.id: m.ordinal for m in g.members}
            if r is None:
                status.append("unresolved", style="bold yellow")
                status.append(f" · highlighted #{g.members[self.highlighted].ordinal}: k keeps it (drops the others), "
                              "m merges the others into it, b keeps all (not duplicates)")
            else:
                status.append(f"{r.decision}", style="bold green")
                status.append(" by ")
                status.append_text(literal(r.annotator))
                status.append(f" · kept {', '.join(f'#{ordinal.get(p, p)}' for p in r.kept)}")
                if r.dropped:
                    status.append(f" · dropped {', '.join(f'#{ordinal.get(p, p)}' for p in r.dropped)}")
                if r.note:
                    status.append(" · note: ")
                    status.append_text(literal(r.note[:200]))
                status.append(" · ] next unresolved group", style="dim")
        self.query_one("#dup-status", Static).update(status)

    # ------------------------------------------------------------------ actions
    def action_highlight(self, step: int) -> None:
        """Highlight the previous / next member."""
        if self.group is not None:
            self.highlighted = (self.highlighted + step) % len(self._members())
            self._refresh_status()

    def _highlighted_id(self) -> str | None:
        return self.group.members[self.highlighted].id if self.group is not None else None

    async def _resolve(self, decision: str, target: str | None) -> None:
        g = self.group
        if g is None:
            notify(self, "no duplicate group to resolve", severity="warning")
            return
        try:
            self.store.resolve_duplicate_group(g.id, decision, target, annotator=self.annotator,
                                               expected=g.resolution.id if g.resolution else None)
        except StaleResolutionError as e:
            notify(self, str(e), severity="warning", timeout=8)
        except BenchwrightError as e:
            notify(self, error_text(e), severity="error", timeout=8)
        else:
            self.changed = True
        await self.show(group_id=g.id, keep_highlight=True)

    async def action_keep(self) -> None:
        """Keep the highlighted member; the others are dropped as its duplicates (nothing is deleted)."""
        await self._resolve("keep-one", self._highlighted_id())

    async def action_keep_all(self) -> None:
        """Keep every member: they are not duplicates."""
        await self._resolve("keep-both", None)

    async def action_merge(self) -> None:
        """Keep the highlighted member and record the others as merged into it."""
        await self._resolve("merge", self._highlighted_id())

    async def action_group(self, step: int) -> None:
        """Go to the next (1) / previous (-1) unresolved group."""
        target = neighbor_unresolved(self.store, self.group, step)
        if target is None:
            notify(self, f"no {'next' if step > 0 else 'previous'} unresolved group", timeout=3)
            return
        await self.show(group_id=target.id)

    def action_back(self) -> None:
        """Back to where the screen was opened from."""
        self.dismiss(self.changed)
