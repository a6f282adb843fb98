"""Two checklist versions side by side: key points and criteria as word diffs, weight and rubric changes
called out (:func:`benchwright.core.text_diff.word_diff` via :mod:`benchwright.core.checklist_diff`). Long
checklists are compared in a thread worker (``computing diff…`` meanwhile; closing the screen cancels it)."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Select, Static
from textual.worker import Worker, WorkerState, get_current_worker

from benchwright.core.checklist_diff import (
    APPROXIMATE,
    DELETE,
    EQUAL,
    NORMALIZATION_ONLY,
    ItemChange,
    TextDiff,
    checklist_text_size,
    diff_checklists,
)
from benchwright.core.text import printable
from benchwright.core.text_diff import LONG_DIFF_CHARS, DiffCancelled
from benchwright.db import Store

from ..services.views import checklist_diff_view
from ..widgets import literal, literal_options

_DEL = "bold red strike"
_INS = "bold green underline"


_NOTE_STYLE = {APPROXIMATE: "bold yellow", NORMALIZATION_ONLY: "dim italic"}


def _side(diff: TextDiff, side: int) -> Text:
    """Render one side of a word diff: the old side shows deletions, the new side insertions, each text
    in its own form; ``(approximate diff)`` or ``(normalization only)`` follows when it applies."""
    t = Text()
    for op, text in diff.side(side):
        if op == EQUAL:
            t.append(printable(text))
        elif op == DELETE:
            t.append(printable(text), style=_DEL)
        else:
            t.append(printable(text), style=_INS)
    note = diff.note()
    if note:
        t.append(f"  ({note})", style=_NOTE_STYLE[note])
    return t


def render_side(changes, side: int) -> Text:
    """All item changes as seen from the old (0) or new (1) version."""
    out = Text()
    if any(c.approximate for c in changes):
        out.append(f"{APPROXIMATE}: a comparison took too long, so some unchanged text may be shown as removed "
                   "and added\n\n", style="bold yellow")
    for c in changes:
        present = c.old_index is not None if side == 0 else c.new_index is not None
        kind = c.kind[side] or c.kind[1 - side]
        if not present:
            out.append(f"({'added' if side == 0 else 'removed'} {kind} item)\n\n", style="dim italic")
            continue
        head_style = {"added": "green", "removed": "red", "changed": "yellow"}.get(c.status, "")
        out.append(f"{kind} item · weight {c.weight[side]}", style=f"bold {head_style}")
        if c.status == NORMALIZATION_ONLY:
            out.append(f"  ({NORMALIZATION_ONLY}: the same text after Unicode NFC)", style="dim italic")
        if c.weight_changed:
            out.append(f"  (weight {c.weight[0]} → {c.weight[1]})", style="bold yellow")
        out.append("\n  ")
        out.append_text(_side(c.key_point, side))
        out.append("\n")
        for tier in c.rubric:
            if (tier.status == "added" and side == 0) or (tier.status == "removed" and side == 1):
                out.append(f"    {tier.score}: ", style="dim")
                out.append(f"(score {tier.status})\n", style="dim italic")
                continue
            style = {"added": "green", "removed": "red", "changed": "yellow"}.get(tier.status, "")
            out.append(f"    {tier.score}: ", style=f"bold {style}")
            out.append_text(_side(tier.criterion, side))
            out.append("\n")
        out.append("\n")
    return out


class ChecklistDiffScreen(Screen):
    """Compare two versions of a pair's checklist (default: the generated or first version against the
    current one); choose either side's version with the selectors."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="diff.back")]

    def __init__(self, store: Store, pair_id: str, left: int | None = None, right: int | None = None,
                 *, viewer: str | None = None) -> None:
        """``viewer``: in blind mode, only the versions this annotator may see are offered."""
        super().__init__()
        self.store = store
        self.pair_id = pair_id
        view = checklist_diff_view(store, pair_id, viewer)
        self.versions = dict(view.versions)
        self.left = left or view.left
        self.right = right or view.right

    def compose(self) -> ComposeResult:
        options = literal_options([(f"v{v.version} {v.origin}{' draft' if v.is_draft else ''} · {v.author}", v.version)
                                   for v in self.versions.values()])
        yield Header()
        with Horizontal(id="diff-selectors"):
            yield Select(options, value=self.left if self.left else Select.NULL, id="diff-left", prompt="old version")
            yield Select(options, value=self.right if self.right else Select.NULL, id="diff-right", prompt="new version")
        with Horizontal(id="diff-body"):
            with VerticalScroll(classes="diff-side"):
                yield Static(id="diff-old")
            with VerticalScroll(classes="diff-side"):
                yield Static(id="diff-new")
        yield Footer()

    def on_mount(self) -> None:
        self.render_diff()

    @on(Select.Changed)
    def _chosen(self, event: Select.Changed) -> None:
        if event.value is Select.NULL or event.value == (self.left if event.select.id == "diff-left" else self.right):
            return  # nothing new (the selectors report their first value too)
        if event.select.id == "diff-left":
            self.left = int(event.value)
        else:
            self.right = int(event.value)
        self.render_diff()

    class Computed(Message):
        """Posted by the diff worker: the changes between versions ``left`` and ``right``."""

        def __init__(self, left: int, right: int, changes: list[ItemChange]) -> None:
            super().__init__()
            self.left, self.right, self.changes = left, right, changes

    def render_diff(self) -> None:
        """Show the current pair of versions: at once when their texts are short, else ``computing diff…``
        while a thread worker compares them (a new choice of versions replaces it)."""
        old, new = self.query_one("#diff-old", Static), self.query_one("#diff-new", Static)
        if not self.versions:
            old.update(Text("This pair has no checklist yet.", style="italic"))
            new.update("")
            return
        a, b = self.versions[self.left], self.versions[self.right]
        if checklist_text_size(a.checklist) + checklist_text_size(b.checklist) <= LONG_DIFF_CHARS:
            self.workers.cancel_group(self, "checklist-diff")
            self._show(self.left, self.right, diff_checklists(a.checklist, b.checklist))
            return
        old.update(literal(f"version {a.version} ({a.origin})\n\ncomputing diff…", style="bold"))
        new.update(literal(f"version {b.version} ({b.origin})\n\ncomputing diff…", style="bold"))
        self._compute(self.left, self.right)

    @work(thread=True, exclusive=True, group="checklist-diff", exit_on_error=False)
    def _compute(self, left: int, right: int) -> None:
        worker = get_current_worker()
        a, b = self.versions[left], self.versions[right]
        try:
            changes = diff_checklists(a.checklist, b.checklist, cancelled=lambda: worker.is_cancelled)
        except DiffCancelled:
            return
        if not worker.is_cancelled:
            self.post_message(self.Computed(left, right, changes))

    def on_unmount(self) -> None:
        """Closing the screen cancels a diff still computing (its thread stops at its next check)."""
        self.workers.cancel_group(self, "checklist-diff")

    @on(Computed)
    def _computed(self, event: Computed) -> None:
        if (event.left, event.right) == (self.left, self.right):
            self._show(event.left, event.right, event.changes)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A diff that failed says so in place of the diff (it never takes the app down)."""
        if event.worker.group == "checklist-diff" and event.state == WorkerState.ERROR:
            self.query_one("#diff-old", Static).update(Text(printable(f"the diff failed: {event.worker.error}"),
                                                            style="bold red"))

    def _show(self, left: int, right: int, changes: list[ItemChange]) -> None:
        a, b = self.versions[left], self.versions[right]
        old, new = self.query_one("#diff-old", Static), self.query_one("#diff-new", Static)
        old.update(literal(f"version {a.version} ({a.origin})\n\n", style="bold") + render_side(changes, 0))
        new.update(literal(f"version {b.version} ({b.origin})\n\n", style="bold") + render_side(changes, 1))
