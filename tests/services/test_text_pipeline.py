"""Text versions end to end (issue 16 item 1): refine through the scripted fake writes a refined version, an
annotator edits it and reverts, the pair goes back to review at each new text, a stale checklist keeps it out of
the release, and the release ships the current text with the original in the row's source (format 3), verifies,
and imports back."""

from __future__ import annotations

import asyncio
import json

import pyarrow.parquet as pq
from services_helpers import checklist

from benchwright.core.adjudication import Exclusion
from benchwright.core.curation import StepSettings
from benchwright.core.llm import LLMClient, ScriptedProvider
from benchwright.db import QueueFilter, Store
from benchwright.exports import parquet_schema, read_release, verify_release
from benchwright.tui.services.curation_runs import run_curation
from benchwright.tui.services.releases import create_release, import_release
from benchwright.tui.services.texts import edit_text

CREATED = "2026-12-01T10:00:00.000000+00:00"


def refine(store: Store, pid: str, question: str, answer: str) -> None:
    p = ScriptedProvider([{"question": question, "answer": answer, "changes": "made it self-contained"}])
    asyncio.run(run_curation(store, LLMClient(p, store), "refine", [pid], StepSettings(model="gen-1"), by="runner"))


def undecided(store: Store, who: str) -> list[str]:
    return store.filtered_pair_ids(who, QueueFilter(status="undecided"))


def test_refine_edit_revert_and_release(project, tmp_path):
    store, ids = project
    pid, plain = ids[0], ids[1]
    original = store.get_pair(pid)
    for p in (pid, plain):
        store.save_checklist(p, checklist(), author="ada")
        store.record_decision(p, "ada", "accept")
    assert pid not in undecided(store, "ada")
    # refine: the rewrite is the current text, the pair is back in review, its checklist stale
    refine(store, pid, "Where in the pkg package is the app object made?", "In `src/pkg/app.py:12`.")
    t = store.text_version(pid)
    assert (t.version, t.origin, t.model) == (2, "refined", "gen-1") and t.call_ids
    assert pid in undecided(store, "ada") and plain not in undecided(store, "ada")
    assert store.final_decision(pid).why_not is Exclusion.TEXT_CHANGED
    assert store.stale_checklist(pid) == (1, 2)
    # an edit, then a revert of the edit (to the refined text): versions 3 and 4
    edit_text(store, pid, "Where is the pkg app object made?", t.reference_answer, by="ada", expected_version=2)
    store.revert_text(pid, by="ada", to_version=2)
    assert [v.origin for v in store.text_versions(pid)] == ["original", "refined", "edited", "edited"]
    store.record_decision(pid, "ada", "accept")
    pre = store.release_preflight()
    assert dict(pre.excluded)[pid] is Exclusion.STALE_CHECKLIST
    store.save_checklist(pid, checklist("Names the module of the refined text"), author="ada")
    pre = store.release_preflight()
    assert {c.pair.id for c in pre.included} == {pid, plain}
    out = create_release(store, pre, "pkg-qa", "1.0.0", tmp_path / "out", by="lead", created_at=CREATED)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["release_format"] == 3
    rows = {r["id"]: r for r in map(json.loads, (out / "data/test.jsonl").read_text().splitlines())}
    shipped = rows[pid]
    assert shipped["question"] == "Where in the pkg package is the app object made?"
    assert shipped["source"]["text"] == {
        "version": 4, "origin": "edited", "model": None, "original_question": original.question,
        "original_reference_answer": original.reference_answer}
    assert "text" not in rows[plain]["source"]  # a pair shipped as imported keeps its row as it was
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "### Shipped text" in card and "1 of 2 pairs ship a text other than the one imported (edited 1)" in card
    assert pq.read_schema(out / "data/test.parquet").remove_metadata().equals(parquet_schema(3))
    assert verify_release(out).ok, verify_release(out).problems
    _, read = read_release(out)
    assert next(r for r in read if r.id == pid).source.text.original_question == original.question
    # into the project it came from: nothing new (the shipped text is one of the pair's versions)
    n = store.count_pairs()
    assert import_release(store, out, by="lead")[0] == 0 and store.count_pairs() == n
    assert store.text_version(pid).version == 4
    # and back into a new project: the pair with the shipped text
    with Store.open(tmp_path / "other.db") as other:
        assert import_release(other, out, by="lead")[0] == 2
        assert other.get_pair(pid).question == shipped["question"]
        versions = other.text_versions(pid)  # the original first, then the text shipped, its origin kept
        assert [(v.version, v.origin) for v in versions] == [(1, "original"), (2, "edited")]
        assert versions[0].question == original.question and other.stale_checklist(pid) is None
        assert len(other.text_versions(plain)) == 1
        assert import_release(other, out, by="lead") == (0, 0)  # again: nothing
        assert len(other.text_versions(pid)) == 2


def test_a_release_of_pairs_all_as_imported_is_format_2(project, tmp_path):
    store, ids = project
    store.save_checklist(ids[1], checklist(), author="ada")
    store.record_decision(ids[1], "ada", "accept")
    # a rewrite that came back to the original text (a revert) ships as imported
    store.save_text_version(ids[1], "Rewritten?", "Yes.", origin="refined", by="runner", model="m")
    store.revert_text(ids[1], by="ada")
    store.record_decision(ids[1], "ada", "accept")
    out = create_release(store, store.release_preflight(), "pkg-qa", "1.0.0", tmp_path / "out", by="lead",
                         created_at=CREATED)
    assert json.loads((out / "manifest.json").read_text())["release_format"] == 2
    assert pq.read_schema(out / "data/test.parquet").remove_metadata().equals(parquet_schema(2))
    assert '"text"' not in (out / "data/test.jsonl").read_text()
    assert "Shipped text" not in (out / "README.md").read_text(encoding="utf-8")
    assert verify_release(out).ok


def test_enrich_without_links_keeps_an_annotators_edit(project):
    """enrich of a pair without links changes nothing: its output is the text it was given, which is no new text
    version (it replaced the annotator's edit with the source's text, and hid a leak the edit had)."""
    store, ids = project
    pid = ids[0]
    edited = edit_text(store, pid, "Where is `make_app` defined?", store.get_pair(pid).reference_answer, by="ada",
                       expected_version=1)
    no_calls = ScriptedProvider([])
    asyncio.run(run_curation(store, LLMClient(no_calls, store), "enrich", [pid], StepSettings(model="gen-1"),
                             by="runner"))
    assert store.curation_current(pid)["enrich"].status == "ok"
    now = store.text_version(pid)
    assert (now.version, now.origin, now.question) == (edited.version, "edited", "Where is `make_app` defined?")
