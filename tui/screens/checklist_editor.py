"""The checklist editor: knowledge items, weights and rubrics, checked on every keystroke.

RepoProbe §4.1 rules come from :mod:`benchwright.core.checklist`; the screen only edits text fields and
shows what the core finds. Ctrl chords work while a text field has focus.
"""

from __future__ import annotations

import contextlib
import copy
import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Input, Label, Static

from benchwright.core.checklist import (
    MAX_KNOWLEDGE_ITEMS,
    Checklist,
    ItemKind,
    Origin,
    Violation,
    binary_rubric,
    checklist_from_form,
    checklist_to_form,
    normalize_weights,
    starter_checklist,
)
from benchwright.core.errors import BenchwrightError
from benchwright.core.models import stale_checklist_note
from benchwright.db import Store

from ..services.views import checklist_editor_view
from ..widgets import LiteralInput, literal, notify

UNDO_COALESCE_S = 1.0
"""Keystrokes in the same field within this many seconds are undone together."""


class ItemForm(Vertical):
    """The fields of one knowledge item: key point, weight, and one (score, criterion) row per tier."""

    def __init__(self, index: int, number: int, item: dict) -> None:
        super().__init__(classes="item-form", id=f"item-{index}")
        self.index = index
        self.number = number
        self.item = item

    def compose(self) -> ComposeResult:
        it, i = self.item, self.index
        scores = sorted({t["score"] for t in it["rubric"]})
        shape = "binary" if len(it["rubric"]) == 2 and scores in (["0", it["weight"]], [it["weight"], "0"]) else "multi-tier"
        yield Label(Text(f"Knowledge item {self.number}  ·  {shape}", style="bold"), classes="item-title")
        with Horizontal(classes="item-head"):
            yield LiteralInput(it["key_point"], placeholder="key point: one atomic fact of the reference answer",
                        id=f"kp-{i}", classes="key-point")
            yield Input(it["weight"], placeholder="weight", id=f"w-{i}", classes="weight", type="integer")
        for j, tier in enumerate(it["rubric"]):
            with Horizontal(classes="tier"):
                yield Input(tier["score"], placeholder="score", id=f"s-{i}-{j}", classes="score", type="integer")
                yield LiteralInput(tier["criterion"], placeholder="criterion for this score", id=f"c-{i}-{j}", classes="criterion")


class NormalizeScreen(ModalScreen[bool]):
    """Shows the proposed weights (largest remainder) and rescaled rubrics; enter applies, esc cancels."""

    BINDINGS = [Binding("enter", "apply", "Apply"), Binding("escape", "cancel", "Cancel")]

    def __init__(self, before: Checklist, after: Checklist) -> None:
        super().__init__()
        self.before, self.after = before, after

    def compose(self) -> ComposeResult:
        t = Text("Normalize weights to sum to 9 (largest remainder)\n\n", style="bold")
        for a, b in zip(self.before.items, self.after.items, strict=True):
            if a.kind is ItemKind.CLARITY:
                continue
            t.append_text(literal(a.key_point[:70] or "(no key point)"))
            t.append(f"\n   weight {a.weight} → {b.weight}   scores {a.allowed_scores} → {b.allowed_scores}\n")
        t.append("\nenter applies · esc cancels", style="dim")
        with Vertical(id="normalize-dialog"):
            yield Static(t)

    def action_apply(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class LeaveScreen(ModalScreen[str]):
    """Asks what to do with unsaved edits: s save, o keep as draft, x discard, esc stay."""

    BINDINGS = [
        Binding("s", "choose('save')", "Save"), Binding("o", "choose('draft')", "Keep draft"),
        Binding("x", "choose('discard')", "Discard"), Binding("escape", "choose('stay')", "Stay"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="leave-dialog"):
            yield Static(Text("The checklist has unsaved edits.\n\n"
                              "s  save a new version\no  keep it as a draft\nx  discard the edits\nesc  stay in the editor"))

    def action_choose(self, what: str) -> None:
        self.dismiss(what)


class ChecklistEditorScreen(Screen[object]):
    """Edit the current checklist of one pair; dismisses with the saved version number (or None)."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="checklist.save"),
        Binding("ctrl+o", "save_draft", "Keep draft", id="checklist.draft"),
        Binding("ctrl+z", "undo", "Undo", priority=True, id="checklist.undo"),
        Binding("ctrl+shift+z,ctrl+y", "redo", "Redo", priority=True, id="checklist.redo"),
        Binding("ctrl+n", "add_item", "Add item", priority=True, id="checklist.add"),
        Binding("ctrl+r", "remove_item", "Remove item", priority=True, id="checklist.remove"),
        Binding("ctrl+up,alt+up", "move_item(-1)", "Move up", priority=True, id="checklist.up"),
        Binding("ctrl+down,alt+down", "move_item(1)", "Move down", priority=True, id="checklist.down"),
        Binding("ctrl+b", "toggle_binary", "Binary/tiers", priority=True, id="checklist.binary"),
        Binding("ctrl+t", "add_tier", "Add tier", priority=True, id="checklist.tier"),
        Binding("ctrl+g", "normalize", "Normalize", priority=True, id="checklist.normalize"),
        Binding("escape", "leave", "Leave", priority=True, id="checklist.leave"),
    ]

    def __init__(
        self, store: Store, annotator: str, pair_id: str, *, initial: Checklist | None = None,
        compose_only: bool = False,
    ) -> None:
        """``compose_only``: nothing is saved; ctrl+s hands the (valid) checklist back to the caller
        (the adjudication screen), esc hands back None."""
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.pair_id = pair_id
        self.compose_only = compose_only
        # In blind mode the editor starts from what this annotator may see (never another's edit).
        self.view = checklist_editor_view(store, pair_id, annotator)
        current = self.view.base
        self.base_version: int | None = current.version if current else None
        # the text the editor shows: a text saved meanwhile elsewhere leaves the saved checklist stale
        try:
            self.text_version: int | None = store.text_version(pair_id).version
        except BenchwrightError:  # no text versions: the save takes the current text
            self.text_version = None
        start = initial or (current.checklist if current else starter_checklist())
        self.form: list[dict] = checklist_to_form(start)
        self.saved_form = copy.deepcopy(self.form)
        self.undo_stack: list[list[dict]] = []
        self.redo_stack: list[list[dict]] = []
        self._last_field: str | None = None
        self._last_time = 0.0
        self.saved_version: int | None = None
        self.violations: list[Violation] = []

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="checklist-title")
        yield Static(id="validation")
        yield VerticalScroll(id="checklist-items")
        yield Static(id="clarity")
        yield Footer()

    async def on_mount(self) -> None:
        pair = self.view.pair
        title = Text(f"Checklist of pair #{self.view.ordinal}  ", style="bold")
        title.append(f"(editing version {self.base_version})" if self.base_version else "(new checklist)", style="italic")
        if self.view.stale:
            title.append(f"  stale: {stale_checklist_note(*self.view.stale)} (saving a version makes it fit the "
                         "current text)", style="bold yellow")
        title.append("\n")
        title.append_text(literal(pair.question[:300]))
        self.query_one("#checklist-title", Static).update(title)
        await self.rebuild()

    @property
    def dirty(self) -> bool:
        """True when the form differs from what was loaded or last saved."""
        return self.form != self.saved_form

    def _knowledge_indices(self) -> list[int]:
        return [i for i, it in enumerate(self.form) if it["kind"] == "knowledge"]

    async def rebuild(self, focus: str | None = None) -> None:
        """Re-create the item forms from ``self.form`` and re-validate."""
        container = self.query_one("#checklist-items", VerticalScroll)
        await container.remove_children()
        forms = [ItemForm(i, n, self.form[i]) for n, i in enumerate(self._knowledge_indices(), start=1)]
        await container.mount_all(forms)
        clarity = next((it for it in self.form if it["kind"] == "clarity"), None)
        t = Text("Clarity item (fixed): ", style="bold")
        if clarity:
            t.append_text(literal(f"{clarity['key_point']} · weight {clarity['weight']} · scores "
                                  f"{', '.join(r['score'] for r in clarity['rubric'])}"))
        self.query_one("#clarity", Static).update(t)
        self.revalidate()
        target = focus or (f"kp-{forms[0].index}" if forms else None)
        if target:
            try:
                self.query_one(f"#{target}", Input).focus()
            except NoMatches:  # the field no longer exists (item removed)
                if forms:
                    self.query_one(f"#kp-{forms[0].index}", Input).focus()

    def revalidate(self) -> None:
        """Validate the form and show every violation in the bar."""
        checklist, self.violations = checklist_from_form(self.form)
        bar = Text()
        weights = sum(it.weight for it in checklist.knowledge_items)
        if not self.violations:
            bar.append("✓ valid", style="bold green")
        else:
            bar.append(f"✗ {len(self.violations)} problem{'s' if len(self.violations) > 1 else ''}", style="bold red")
        bar.append(f"   knowledge weights {weights}/9 · {len(checklist.knowledge_items)} knowledge items")
        if self.dirty:
            bar.append("   · unsaved edits", style="yellow")
        elif self.saved_version:
            bar.append(f"   · saved as version {self.saved_version}", style="green")
        for v in self.violations:
            bar.append("\n  • ")
            bar.append_text(literal(str(v)))
        self.query_one("#validation", Static).update(bar)

    # ------------------------------------------------------------------ edits
    def _snapshot(self, field: str | None = None) -> None:
        now = time.monotonic()
        if field is not None and field == self._last_field and now - self._last_time < UNDO_COALESCE_S:
            self._last_time = now
            return
        self.undo_stack.append(copy.deepcopy(self.form))
        self.redo_stack.clear()
        self._last_field, self._last_time = field, now

    @on(Input.Changed)
    def field_changed(self, event: Input.Changed) -> None:
        """Copy a text field into the form (ignoring programmatic echoes) and re-validate."""
        field = event.input.id or ""
        parts = field.split("-")
        if len(parts) < 2 or not parts[1].isdigit():
            return
        i = int(parts[1])
        if i >= len(self.form):
            return
        item = self.form[i]
        if parts[0] == "kp":
            key, target = "key_point", item
        elif parts[0] == "w":
            key, target = "weight", item
        elif parts[0] in ("s", "c") and len(parts) == 3 and int(parts[2]) < len(item["rubric"]):
            key, target = ("score" if parts[0] == "s" else "criterion"), item["rubric"][int(parts[2])]
        else:
            return
        if target[key] == event.value:
            return
        self._snapshot(field)
        previous = target[key]
        target[key] = event.value
        if key == "weight" and _is_binary_form(item, previous):
            # a binary rubric follows its weight: {0, weight}
            for j, tier in enumerate(item["rubric"]):
                if tier["score"] == previous:
                    tier["score"] = event.value
                    with contextlib.suppress(NoMatches):
                        self.query_one(f"#s-{i}-{j}", Input).value = event.value
        self.revalidate()

    def _focused_item(self) -> int | None:
        focused = self.focused
        if focused is None or not focused.id:
            return None
        parts = focused.id.split("-")
        return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else None

    async def action_add_item(self) -> None:
        """Add a knowledge item after the focused one (never more than 4)."""
        if len(self._knowledge_indices()) >= MAX_KNOWLEDGE_ITEMS:
            notify(self, "A checklist has at most 4 knowledge items.", severity="warning")
            return
        self._snapshot()
        at = self._focused_item()
        pos = (at + 1) if at is not None else len(self._knowledge_indices())
        self.form.insert(pos, {"kind": "knowledge", "key_point": "", "weight": "1",
                               "rubric": [{"score": str(t.score), "criterion": t.criterion} for t in binary_rubric(1)]})
        await self.rebuild(focus=f"kp-{pos}")

    async def action_remove_item(self) -> None:
        """Remove the focused knowledge item."""
        at = self._focused_item()
        if at is None or self.form[at]["kind"] != "knowledge":
            notify(self, "Put the cursor in the knowledge item to remove.", severity="warning")
            return
        self._snapshot()
        del self.form[at]
        await self.rebuild(focus=f"kp-{max(0, at - 1)}")

    async def action_move_item(self, step: int) -> None:
        """Move the focused knowledge item up (-1) or down (+1)."""
        at = self._focused_item()
        knowledge = self._knowledge_indices()
        if at is None or at not in knowledge:
            return
        k = knowledge.index(at)
        if not 0 <= k + step < len(knowledge):
            return
        self._snapshot()
        other = knowledge[k + step]
        self.form[at], self.form[other] = self.form[other], self.form[at]
        focused = self.focused.id.split("-") if self.focused and self.focused.id else ["kp"]
        await self.rebuild(focus="-".join([focused[0], str(other), *focused[2:]]))

    async def action_toggle_binary(self) -> None:
        """Switch the focused item between a binary rubric {0, weight} and three tiers (full, half, none)."""
        at = self._focused_item()
        if at is None or self.form[at]["kind"] != "knowledge":
            return
        self._snapshot()
        item = self.form[at]
        w = item["weight"].strip() or "0"
        weight = int(w) if w.lstrip("-").isdigit() else 0
        if _is_binary_form(item):
            half = max(1, weight // 2) if weight > 1 else weight
            by_score = {t["score"]: t["criterion"] for t in item["rubric"]}
            item["rubric"] = [
                {"score": str(weight), "criterion": by_score.get(str(weight), "Fully correct.")},
                {"score": str(half), "criterion": "Partially correct."},
                {"score": "0", "criterion": by_score.get("0", "Incorrect or missing.")},
            ] if weight > 1 else item["rubric"]
        else:
            by_score = {t["score"]: t["criterion"] for t in item["rubric"]}
            item["rubric"] = [
                {"score": str(weight), "criterion": by_score.get(str(weight), "Covers the key point.")},
                {"score": "0", "criterion": by_score.get("0", "Does not cover it, or gets it wrong.")},
            ]
        await self.rebuild(focus=f"w-{at}")

    async def action_add_tier(self) -> None:
        """Add an empty rubric tier to the focused item."""
        at = self._focused_item()
        if at is None or self.form[at]["kind"] != "knowledge":
            return
        self._snapshot()
        self.form[at]["rubric"].append({"score": "", "criterion": ""})
        await self.rebuild(focus=f"s-{at}-{len(self.form[at]['rubric']) - 1}")

    def action_normalize(self) -> None:
        """Propose weights summing to 9 in proportion to the current ones; apply on confirmation."""
        checklist, problems = checklist_from_form(self.form)
        if any(p.rule in ("weight-not-integer", "score-not-integer") for p in problems):
            notify(self, "Fix the weights and scores that are not whole numbers first.", severity="warning")
            return
        try:
            proposal = normalize_weights(checklist)
        except ValueError as e:
            notify(self, str(e), severity="warning")
            return

        async def apply(ok: bool | None) -> None:
            if ok:
                self._snapshot()
                self.form = checklist_to_form(proposal)
                await self.rebuild()

        self.app.push_screen(NormalizeScreen(checklist, proposal), apply)

    async def action_undo(self) -> None:
        """Undo the last edit in the editor."""
        if not self.undo_stack:
            notify(self, "Nothing to undo.", timeout=2)
            return
        self.redo_stack.append(copy.deepcopy(self.form))
        self.form = self.undo_stack.pop()
        self._last_field = None
        await self.rebuild(focus=self.focused.id if self.focused else None)

    async def action_redo(self) -> None:
        """Redo the last undone edit."""
        if not self.redo_stack:
            notify(self, "Nothing to redo.", timeout=2)
            return
        self.undo_stack.append(copy.deepcopy(self.form))
        self.form = self.redo_stack.pop()
        self._last_field = None
        await self.rebuild(focus=self.focused.id if self.focused else None)

    # ------------------------------------------------------------------ saving
    def _save(self, *, draft: bool) -> bool:
        checklist, problems = checklist_from_form(self.form)
        if problems and not draft:
            notify(self, f"Not saved: {len(problems)} problem(s) listed above. Fix them, or keep a draft with ctrl+o.",
                        title="Invalid checklist", severity="error")
            return False
        if any(p.rule in ("weight-not-integer", "score-not-integer") for p in problems):
            notify(self, "Weights and scores must be whole numbers, even in a draft.", severity="error")
            return False
        if self.compose_only:
            if draft:
                notify(self, "An adjudicated checklist must be valid; drafts cannot be kept here.", severity="error")
                return False
            self.saved_form = copy.deepcopy(self.form)
            self.dismiss(checklist)
            return True
        try:
            saved = self.store.save_checklist(
                self.pair_id, checklist, author=self.annotator, origin=Origin.EDITED,
                expected_version=self.base_version, draft=draft, visible_to=self.annotator,
                text_version=self.text_version,
            )
        except BenchwrightError as e:
            notify(self, str(e), title="Not saved", severity="error", timeout=10)
            return False
        self.base_version = self.saved_version = saved.version
        self.saved_form = copy.deepcopy(self.form)
        self.revalidate()
        notify(self, f"Saved version {saved.version}{' as a draft' if draft else ''}.", timeout=3)
        return True

    def action_save(self) -> None:
        """Save a new version (refused while the checklist breaks a rule)."""
        self._save(draft=False)

    def action_save_draft(self) -> None:
        """Keep the checklist as a draft version, even if it breaks rules (drafts are never released)."""
        self._save(draft=True)

    def action_leave(self) -> None:
        """Leave the editor, asking first when there are unsaved edits."""
        if not self.dirty or self.compose_only:
            self.dismiss(None if self.compose_only else self.saved_version)
            return

        def chosen(what: str | None) -> None:
            if what == "discard" or (what in ("save", "draft") and self._save(draft=what == "draft")):
                self.dismiss(self.saved_version)

        self.app.push_screen(LeaveScreen(), chosen)


def _is_binary_form(item: dict, weight: str | None = None) -> bool:
    """True when the item's rubric is {0, weight} (``weight`` defaults to the item's own)."""
    scores = sorted(t["score"] for t in item["rubric"])
    w = item["weight"] if weight is None else weight
    return len(scores) == 2 and scores == sorted(["0", w]) and w != "0"
