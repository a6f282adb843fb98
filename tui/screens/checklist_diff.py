"""Two checklist versions side by side: key points and criteria as word diffs, weight and rubric changes
called out (diff-match-patch via :mod:`benchwright.core.checklist_diff`)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Select, Static

from benchwright.core.checklist_diff import DELETE, EQUAL, INSERT, diff_checklists
from benchwright.core.text import printable
from benchwright.db import Store

_DEL = "bold red strike"
_INS = "bold green underline"


def _side(diffs, side: int) -> Text:
    """Render one side of a word diff: the old side shows deletions, the new side insertions."""
    t = Text()
    for op, text in diffs:
        if op == EQUAL:
            t.append(printable(text))
        elif op == DELETE and side == 0:
            t.append(printable(text), style=_DEL)
        elif op == INSERT and side == 1:
            t.append(printable(text), style=_INS)
    return t


def render_side(changes, side: int) -> Text:
    """All item changes as seen from the old (0) or new (1) version."""
    out = Text()
    for c in changes:
        present = c.old_index is not None if side == 0 else c.new_index is not None
        kind = c.kind[side] or c.kind[1 - side]
        if not present:
            out.append(f"({'added' if side == 0 else 'removed'} {kind} item)\n\n", style="dim italic")
            continue
        head_style = {"added": "green", "removed": "red", "changed": "yellow"}.get(c.status, "")
        out.append(f"{kind} item · weight {c.weight[side]}", style=f"bold {head_style}")
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
        history = store.checklist_history(pair_id)
        if viewer is not None:
            allowed = set(store.visible_checklist_versions(pair_id, viewer))
            history = [v for v in history if v.version in allowed]
        self.versions = {v.version: v for v in history}
        generated = store.first_version_of_origin(pair_id, "generated")
        if generated is not None and generated.version not in self.versions:
            generated = None
        self.left = left or (generated.version if generated else (history[0].version if history else None))
        self.right = right or (history[-1].version if history else None)

    def compose(self) -> ComposeResult:
        options = [(f"v{v.version} {v.origin}{' draft' if v.is_draft else ''} · {v.author}", v.version)
                   for v in self.versions.values()]
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
        if event.value is Select.NULL:
            return
        if event.select.id == "diff-left":
            self.left = int(event.value)
        else:
            self.right = int(event.value)
        self.render_diff()

    def render_diff(self) -> None:
        """Show the current pair of versions."""
        old, new = self.query_one("#diff-old", Static), self.query_one("#diff-new", Static)
        if not self.versions:
            old.update(Text("This pair has no checklist yet.", style="italic"))
            new.update("")
            return
        a, b = self.versions[self.left], self.versions[self.right]
        changes = diff_checklists(a.checklist, b.checklist)
        old.update(Text(f"version {a.version} ({a.origin})\n\n", style="bold") + render_side(changes, 0))
        new.update(Text(f"version {b.version} ({b.origin})\n\n", style="bold") + render_side(changes, 1))
