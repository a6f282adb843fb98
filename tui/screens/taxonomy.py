"""The taxonomy screen (``X`` from the queue; SWE-QA-Pro §2.1): the latest taxonomy version as a tree of topics
and leaves with their sizes and labels; for the highlighted node its sample members (nearest to the centroid
first, literal text) and its label history (who, when, origin, model). ``e`` renames the node: a new version with
the annotator and the time, as ``taxonomy edit rename`` makes."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Label, Static, Tree

from benchwright.core.errors import BenchwrightError
from benchwright.core.taxonomy import Node, TaxonomyVersion
from benchwright.db import Store

from ..services.taxonomy import edit_taxonomy, node_detail
from ..widgets import LiteralInput, error_text, literal, notify, plain

SAMPLE = 8
"""Members shown for the highlighted node."""
MEMBER_CHARS = 400
"""Characters of each member's text shown (an issue text reaches 16 KB)."""


def node_label(node: Node) -> Text:
    """A tree row: id, size, label (or ``(unlabelled)``), shown literally."""
    text = Text(f"{node.node_id}  ", style="bold")
    text.append(f"({node.size})  ", style="dim")
    text.append_text(literal(node.label) if node.label else Text("(unlabelled)", style="italic dim"))
    return text


class TaxonomyScreen(Screen):
    """The tree of the latest taxonomy version, the highlighted node's members and label history."""

    DEFAULT_CSS = """
    #taxonomy-head { height: auto; padding: 0 1; }
    #taxonomy-tree { width: 45%; }
    #taxonomy-detail { width: 55%; padding: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="taxonomy.back"),
        Binding("e", "rename", "Rename node", id="taxonomy.rename"),
        Binding("r", "reload", "Refresh", id="taxonomy.refresh"),
        Binding("question_mark", "app.help", "Help", key_display="?", id="taxonomy.help"),
    ]

    def __init__(self, store: Store, annotator: str) -> None:
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.version: TaxonomyVersion | None = None
        self.current: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="taxonomy-head")
        with Horizontal(id="taxonomy-body"):
            yield Tree(Text("taxonomy"), id="taxonomy-tree")
            with VerticalScroll(id="taxonomy-detail"):
                yield Static(id="taxonomy-node")
                yield Static(id="taxonomy-members")
                yield Static(id="taxonomy-history")
        yield Footer()

    def on_mount(self) -> None:
        self.title = plain("Taxonomy")
        self.load()

    def load(self, select: str | None = None) -> None:
        """Read the latest version and rebuild the tree (keeping ``select`` highlighted when it is there)."""
        self.version = self.store.taxonomy_version()
        tree = self.query_one("#taxonomy-tree", Tree)
        tree.clear()
        head = self.query_one("#taxonomy-head", Static)
        if self.version is None:
            head.update(Text("No taxonomy yet. Build one: benchwright taxonomy build (--source issues or pairs)"))
            for part in ("node", "members", "history"):
                self.query_one(f"#taxonomy-{part}", Static).update("")
            return
        v = self.version
        head.update(literal(f"version {v.id} ({v.operation}, lineage {v.lineage}) · source {v.source} · "
                            f"{len(v.taxonomy.members)} items · {v.embedder_model} ({v.dimensions}) · by "
                            f"{v.created_by} {v.created_at[:19]} UTC"))
        tree.root.set_label(literal(f"taxonomy version {v.id}"))
        tree.root.expand()
        target = None
        for top in v.taxonomy.level1:
            branch = tree.root.add(node_label(top), data=top.node_id, expand=True)
            target = branch if top.node_id == select else target
            for leaf in v.taxonomy.children(top.node_id):
                added = branch.add_leaf(node_label(leaf), data=leaf.node_id)
                target = added if leaf.node_id == select else target
        tree.focus()
        if target is not None:
            tree.move_cursor(target)
        self.show((select if target is not None else None) or v.taxonomy.level1[0].node_id)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        if event.node.data is not None:
            self.show(event.node.data)

    def show(self, node_id: str) -> None:
        """Fill the detail pane with ``node_id``'s label, sample members and label history."""
        if self.version is None:
            return
        self.current = node_id
        d = node_detail(self.store, self.version, node_id, sample=SAMPLE)
        n = d.node
        head = Text(f"node {n.node_id}", style="bold")
        head.append(f"  level {n.level} · {n.size} members\n")
        head.append_text(literal(n.label) if n.label else Text("(unlabelled)", style="italic"))
        if n.description:
            head.append("\n")
            head.append_text(literal(n.description))
        self.query_one("#taxonomy-node", Static).update(head)
        members = Text("\nSample members (nearest the centroid first)\n", style="bold")
        for item_id, text, distance in d.members:
            body = " ".join((text or "(no longer in the project)").split())
            members.append(f"{item_id}  {distance:.3f}  " if distance is not None else f"{item_id}  ", style="dim")
            members.append_text(literal(body[:MEMBER_CHARS] + ("…" if len(body) > MEMBER_CHARS else "")))
            members.append("\n")
        self.query_one("#taxonomy-members", Static).update(members)
        hist = Text("\nLabel history\n", style="bold")
        for c in d.history:
            hist.append(f"version {c.version} ({c.operation}) as {c.node_id}: ", style="dim")
            hist.append_text(literal(c.label) if c.label else Text("(unlabelled)", style="italic"))
            who = " · ".join(x for x in (c.origin, c.model, c.by, f"{c.at[:19]} UTC" if c.at else None) if x)
            if who:
                hist.append("  ")
                hist.append_text(literal(who, "dim"))
            hist.append("\n")
        self.query_one("#taxonomy-history", Static).update(hist)

    def action_reload(self) -> None:
        """Read the latest version again (another session may have edited it)."""
        self.load(self.current)

    def action_rename(self) -> None:
        """Rename the highlighted node (a new version by you, now)."""
        if self.version is None or self.current is None:
            notify(self, "no taxonomy to edit", severity="warning")
            return
        node = self.version.taxonomy.node(self.current)
        base = self.version.id

        def done(result: tuple[str, str] | None) -> None:
            if result is None:
                return
            label, description = result
            try:
                new = edit_taxonomy(self.store, "rename", by=self.annotator, node=node.node_id, label=label,
                                    description=description or None, version=base)
            except BenchwrightError as e:
                notify(self, error_text(e), title="Not renamed", severity="error", timeout=8)
                return
            notify(self, f"renamed {node.node_id}: version {new.id}")
            self.load(node.node_id)

        self.app.push_screen(RenameNodeScreen(node), done)


class RenameNodeScreen(ModalScreen[tuple[str, str] | None]):
    """Asks for a node's new label and description; returns them on enter, None on esc."""

    DEFAULT_CSS = """
    RenameNodeScreen { align: center middle; }
    #rename-node-dialog { width: 80%; height: auto; border: thick $primary; background: $surface; padding: 1; }
    """

    BINDINGS = [
        Binding("enter", "save", "Save", priority=True, id="rename_node.save"),
        Binding("escape", "cancel", "Cancel", priority=True, id="rename_node.cancel"),
    ]

    def __init__(self, node: Node) -> None:
        super().__init__()
        self.node = node

    def compose(self) -> ComposeResult:
        with Vertical(id="rename-node-dialog"):
            yield Label(literal(f"Rename node {self.node.node_id}   enter save · esc cancel"))
            yield LiteralInput(value=self.node.label or "", placeholder="label", id="rename-label")
            yield LiteralInput(value=self.node.description or "", placeholder="description", id="rename-description")

    def on_mount(self) -> None:
        self.query_one("#rename-label", LiteralInput).focus()

    def action_save(self) -> None:
        """Hand back the label and description (an empty label is refused)."""
        label = self.query_one("#rename-label", LiteralInput).value
        if not label.strip():
            notify(self, "a label cannot be empty", severity="warning")
            return
        self.dismiss((label, self.query_one("#rename-description", LiteralInput).value))

    def action_cancel(self) -> None:
        """Close without renaming."""
        self.dismiss(None)
