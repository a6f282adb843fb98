"""tui/services/taxonomy.py: a label run cancelled midway saves the labels that came back (a rerun labels only
what is left), leaves are labelled before their topics (which see the leaves' labels), a person's label is never
replaced, and edits and assignment embed nothing twice."""

from __future__ import annotations

import asyncio
import json

import pytest
from taxonomy_topics import planted

from benchwright.core.importers import parse
from benchwright.core.llm import Delay, LLMClient, ScriptedProvider
from benchwright.core.taxonomy import TaxonomyError
from benchwright.db import QueueFilter
from benchwright.tui.services.embeddings import EmbedderChoice
from benchwright.tui.services.taxonomy import assign_pairs, build_taxonomy, edit_taxonomy, label_taxonomy

HASHING = EmbedderChoice("builtin", "builtin", "hashing", 128)


@pytest.fixture
def built(project, tmp_path):
    store, _ = project
    data = tmp_path / "topics.jsonl"
    data.write_text("".join(json.dumps({"question": t, "answer": "a"}) + "\n" for _, t in planted(per_topic=12)))
    store.apply_import(parse("jsonl", data, repository="pkg"), annotator="lead", file_path=data)
    items = [(pid, q) for pid, q, _ in store.taxonomy_pairs("lead", QueueFilter())]
    result = build_taxonomy(store, items, source="pairs", k1=3, k2=6, seed=0, by="lead", choice=HASHING)
    return store, result.version


def _answer(request):
    text = request.messages[-1].content
    if "sub-topics of one topic" in text:
        return {"label": "Topic of " + text.split("<subtopic>\n", 1)[1].split(" (", 1)[0], "description": "t"}
    return {"label": "Leaf", "description": "l"}


def test_leaves_first_then_topics_from_their_labels(built):
    store, _ = built
    provider = ScriptedProvider(_answer)
    run = asyncio.run(label_taxonomy(store, LLMClient(provider, store), model="m", by="lead", sample=3))
    assert len(run.outcomes) == 9 and all("." in o.node_id for o in run.outcomes[:6])
    assert all("." not in o.node_id for o in run.outcomes[6:])
    new = store.taxonomy_version(run.new_version).taxonomy
    assert all(n.label == "Leaf" for n in new.leaves) and all(n.label == "Topic of Leaf" for n in new.level1)
    # each leaf prompt holds at most --sample member texts
    assert all(c.messages[0].content.count("<member>") <= 3 for c in provider.calls[:6])


def test_a_cancelled_run_saves_what_came_back_and_the_rerun_does_the_rest(built):
    store, tv = built
    answer = {"label": "Leaf", "description": "l"}
    # the first call answers at once, every other one hangs until the run is cancelled
    slow = ScriptedProvider(lambda r: answer if len(slow.calls) == 1 else Delay(30, answer), concurrency=6)
    done = []

    async def go():
        task = asyncio.ensure_future(label_taxonomy(store, LLMClient(slow, store), model="m", by="lead",
                                                    on_outcome=done.append))
        while not done:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    latest = store.taxonomy_version()
    assert latest.id == tv.id + 1 and latest.operation == "label"
    assert [n.node_id for n in latest.taxonomy.nodes if n.label] == [done[0].node_id]
    cancelled = store._one("SELECT count(*) FROM llm_calls WHERE status = 'cancelled'")[0]
    assert cancelled == 5  # the five leaves in flight, recorded as cancelled calls
    rest = ScriptedProvider(_answer)
    run = asyncio.run(label_taxonomy(store, LLMClient(rest, store), model="m", by="lead"))
    assert len(rest.calls) == len(latest.taxonomy.nodes) - 1
    assert all(n.label for n in store.taxonomy_version(run.new_version).taxonomy.nodes)


def test_a_persons_label_is_kept_and_force_relabels_the_llms(built):
    store, tv = built
    leaf = tv.taxonomy.leaves[0].node_id
    edit_taxonomy(store, "rename", by="ada", node=leaf, label="Mine")
    asyncio.run(label_taxonomy(store, LLMClient(ScriptedProvider(_answer), store), model="m", by="lead"))
    forced = ScriptedProvider(lambda r: {"label": "Again", "description": "d"})
    run = asyncio.run(label_taxonomy(store, LLMClient(forced, store), model="m", by="lead", force=True))
    assert run.kept_human == [leaf]
    with pytest.raises(TaxonomyError, match="not the latest of its lineage"):
        asyncio.run(label_taxonomy(store, LLMClient(forced, store), model="m", by="lead", version=tv.id))
    tax = store.taxonomy_version().taxonomy
    assert tax.node(leaf).label == "Mine" and {n.label for n in tax.nodes if n.node_id != leaf} == {"Again"}


def test_edits_and_assign_embed_nothing_twice(built):
    store, tv = built
    before = store.embedding_counts()
    edit_taxonomy(store, "split", by="ada", node=tv.taxonomy.leaves[0].node_id, k=2)
    result = assign_pairs(store, annotator="lead", by="lead")
    assert (result.embedding.computed, result.embedding.cached) == (0, 39)
    assert result.counts.assigned == result.pairs == 39
    assert store.embedding_counts() == before
