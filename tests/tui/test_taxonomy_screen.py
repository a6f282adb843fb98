"""The taxonomy screen: ``X`` from the queue opens it; the tree with sizes and labels, the highlighted node's
members and label history, all literal (hostile labels and questions); ``e`` renames a node as a new version by
the annotator; without a taxonomy it says how to build one."""

from __future__ import annotations

import numpy as np
from conftest import TRICKY_QUESTION
from textual.widgets import Tree

from benchwright.core import taxonomy as tx
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.queue import QueueScreen
from benchwright.tui.screens.taxonomy import RenameNodeScreen, TaxonomyScreen
from benchwright.tui.services.taxonomy import edit_taxonomy

SIZE = (160, 48)
HOSTILE_LABEL = "[bold]Routing[/] [@click=app.quit]go [link=https://x.test]l[/link] \x1b[31mred"


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def _with_taxonomy(db):
    """A built taxonomy of the project's pairs (hand-made vectors: the fixture's questions differ by a digit) with
    a hostile label on its first leaf."""
    with Store.open(db) as store:
        ids = store.filtered_pair_ids("x")
        vectors = np.random.default_rng(0).normal(size=(len(ids), 16)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.save_taxonomy(tx.build(vectors, ids, 2, 3, 0), operation="build", source="pairs",
                            embedder_model="hand", dimensions=16, by="setup")
        leaf = store.taxonomy_version().taxonomy.leaves[0].node_id
        edit_taxonomy(store, "rename", by="setup", node=leaf, label=HOSTILE_LABEL, description="[/] desc")
    return leaf


async def _open(app, pilot):
    while not isinstance(app.screen, QueueScreen):
        await pilot.press("escape")
        await pilot.pause()
    await pilot.press("X")
    await pilot.pause()
    assert isinstance(app.screen, TaxonomyScreen)


async def test_x_opens_the_tree_with_literal_labels_members_and_history(project):
    db, _ = project
    leaf = _with_taxonomy(db)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await _open(app, pilot)
            screen = app.screen
            tree = screen.query_one(Tree)
            labels = [n.label.plain for n in tree.root.children]
            assert len(labels) == 2 and all("(" in label for label in labels)
            screen.show(leaf)
            await pilot.pause()
            text = screen_text(app)
            assert "[bold]Routing[/] [@click=app.quit]go [link=https://x.test]l[/link] ␛[31mred" in text
            assert "Label history" in text and "annotator · setup" in text
            # the member texts, literally (the tricky question is in one of the leaves)
            for node in screen.version.taxonomy.leaves:
                screen.show(node.node_id)
                await pilot.pause()
                if "stay plain" in screen_text(app):
                    break
            text = screen_text(app)
            assert "Why does [bold]this[/bold] stay plain and ␛[31mthis␛[0m" in text and "<module> too" in text
            assert app.is_running
    assert TRICKY_QUESTION  # the fixture's hostile question is the one looked for above


async def test_e_renames_the_highlighted_node_as_a_new_version(project):
    db, _ = project
    leaf = _with_taxonomy(db)
    with Store.open(db) as store:
        before = store.taxonomy_version().id
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await _open(app, pilot)
            app.screen.show(leaf)
            await pilot.press("e")
            await pilot.pause()
            assert isinstance(app.screen, RenameNodeScreen)
            label = app.screen.query_one("#rename-label")
            label.value = ""
            await pilot.press(*"Blueprints", "enter")
            await pilot.pause()
            assert isinstance(app.screen, TaxonomyScreen)
            assert "Blueprints" in screen_text(app)
        tv = store.taxonomy_version()
        assert tv.id == before + 1 and tv.operation == "rename" and tv.created_by == "ann"
        node = tv.taxonomy.node(leaf)
        assert (node.label, node.label_origin, node.label_by, node.description) == ("Blueprints", "annotator",
                                                                                   "ann", "[/] desc")


async def test_without_a_taxonomy_it_says_how_to_build_one(project):
    db, _ = project
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await _open(app, pilot)
            assert "No taxonomy yet. Build one: benchwright taxonomy build" in screen_text(app)
            await pilot.press("e")
            await pilot.pause()
            assert isinstance(app.screen, TaxonomyScreen)


async def test_a_rename_on_a_version_edited_meanwhile_is_refused(project):
    db, _ = project
    leaf = _with_taxonomy(db)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await _open(app, pilot)
            app.screen.show(leaf)
            meanwhile = edit_taxonomy(store, "rename", by="bob", node=leaf, label="Bob's")
            await pilot.press("e")
            await pilot.pause()
            await pilot.press(*"x", "enter")
            await pilot.pause()
            assert isinstance(app.screen, TaxonomyScreen) and app.is_running
        tv = store.taxonomy_version()
        assert tv.id == meanwhile.id and tv.taxonomy.node(leaf).label == "Bob's"
