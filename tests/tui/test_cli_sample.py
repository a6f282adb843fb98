"""``benchwright sample`` / ``selections`` through the CLI, ``--where selection=``, and releases made from a
selection: only its pairs (the preflight still applies), recorded in the manifest, named on the card, rebuilt
byte for byte; a release without --selection is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.db import Store
from benchwright.tui.cli import main

HOSTILE = "[bold]x[/] [@click=quit] \x1b[31mred"


def run(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args])


def checklist() -> Checklist:
    return Checklist(items=[ChecklistItem(key_point="Names the module", weight=5, rubric=binary_rubric(5)),
                            ChecklistItem(key_point="Explains the order", weight=4, rubric=binary_rubric(4)),
                            clarity_item()])


@pytest.fixture
def project(tmp_path, monkeypatch):
    """24 pairs in 3 clusters (one named with hostile text), QA types cycling; the first 16 accepted by two
    annotators with a valid checklist."""
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "p.db"
    code = tmp_path / "code"
    code.mkdir()
    assert run(db, "init").exit_code == 0
    assert run(db, "repos", "add", "demo", str(code), "--version", "1.0").exit_code == 0
    data = tmp_path / "pairs.jsonl"
    names = ["routing", "config", HOSTILE]
    data.write_text("".join(json.dumps({
        "question": f"Question {i}?", "answer": f"Answer {i}.", "cluster_id": f"{i % 3}.0",
        "cluster_name": names[i % 3], "qa_type": ("What", "Why", "How", "Where")[i % 4]}) + "\n" for i in range(24)))
    r = run(db, "pairs", "import", "jsonl", str(data), "--repo", "demo", "--map", "cluster_id=cluster_id",
            "--map", "cluster_name=cluster_name", "--map", "qa_type=qa_type")
    assert r.exit_code == 0, r.output
    with Store.open(db) as store:
        ids = store.filtered_pair_ids("x")
        for pid in ids[:16]:
            store.save_checklist(pid, checklist(), author="llm", origin="generated")
            store.record_decision(pid, "ada", "accept")
            store.record_decision(pid, "bob", "accept")
    return db, ids, tmp_path


def test_sample_prints_coverage_and_shortfalls_and_stores_a_selection(project):
    db, _ids, _ = project
    r = run(db, "sample", "--name", "bench", "--per-cluster", "4..9", "--total", "12", "--seed", "1")
    assert r.exit_code == 0, r.output
    assert "candidates: 24 pairs in 3 clusters" in r.output
    assert "routing" in r.output and all(part in r.output for part in ("[bold]x[/]", "[@click=quit]", "␛[31mred"))
    assert "\x1b" not in r.output
    assert "drawn: 12 pairs" in r.output and "no shortfall" in r.output
    assert "selection bench: version 1 stored, 12 pairs" in r.output
    assert "releases create RELEASE --version 1.0.0 --selection bench" in r.output
    with Store.open(db) as store:
        sel = store.selection("bench")
        assert sel.size == 12 and sel.seed == 1 and sel.params["per_cluster"] == [4, 9]
        assert all(sum(row.values()) == 4 for row in sel.coverage.values())
    # the same seed draws the same members; a name used again is a new version, the old one kept
    r = run(db, "sample", "--name", "bench", "--total", "12", "--seed", "1")
    assert "version 2 stored" in r.output and "(version 1 kept)" in r.output
    with Store.open(db) as store:
        one, two = (store.selection_members(store.selection("bench", v).id) for v in (1, 2))
        assert [m["qa_pair_id"] for m in one] == [m["qa_pair_id"] for m in two]


def test_shortfalls_dry_run_and_refusals(project):
    db, _, _ = project
    r = run(db, "sample", "--per-cluster", "9..12", "--total", "40", "--dry-run")
    assert r.exit_code == 0, r.output
    assert "cluster 0.0: 8 drawn, 1 short of the minimum 9: it has only 8 candidates" in r.output
    assert "total: 24 drawn, 16 short of --total 40" in r.output and "dry run: nothing was stored" in r.output
    r = run(db, "selections", "list")
    assert r.exit_code == 0 and "no selection yet" in r.output
    r = run(db, "sample", "--total", "5")
    assert r.exit_code == 2 and "--name" in r.output
    for bad in (["--name", "a b"], ["--name", "x", "--per-cluster", "9..4"]):
        r = run(db, "sample", *bad)
        assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    r = run(db, "sample", "--name", "none", "--where", "qa_type=Why", "--where", "status=rejected")
    assert r.exit_code == 1 and "no candidate pair" in r.output


def test_a_newline_in_a_cluster_id_does_not_break_a_shortfall_line(project):
    db, _, tmp_path = project
    data = tmp_path / "nl.jsonl"
    data.write_text("".join(json.dumps({"question": f"Odd cluster {i}?", "answer": "A.", "cluster_id": "odd\n# fake",
                                        "qa_type": "What"}) + "\n" for i in range(2)))
    assert run(db, "pairs", "import", "jsonl", str(data), "--repo", "demo", "--map", "cluster_id=cluster_id",
               "--map", "qa_type=qa_type").exit_code == 0
    for args in (["sample", "--name", "nl", "--seed", "1"], ["selections", "show", "nl"]):
        r = run(db, *args)
        assert r.exit_code == 0, r.output
        assert "  cluster odd # fake: 2 drawn, 2 short of the minimum 4: it has only 2 candidates" in r.output
        assert "\n# fake" not in r.output


def test_a_seed_beyond_64_bits_is_refused_before_anything_is_drawn(project):
    db, _, _ = project
    r = run(db, "sample", "--name", "big", "--seed", str(2**63))
    assert r.exit_code == 2 and "--seed" in r.output and "Traceback" not in r.output, r.output
    assert "no selection yet" in run(db, "selections", "list").output
    r = run(db, "sample", "--name", "big", "--seed", str(2**63 - 1))
    assert r.exit_code == 0 and "selection big: version 1 stored" in r.output, r.output


def test_where_selection_filters_and_refuses_an_unknown_name(project):
    db, _, _ = project
    assert run(db, "sample", "--name", "bench", "--per-cluster", "2..2", "--seed", "3").exit_code == 0
    r = run(db, "assign", "--annotators", "ada", "--overlap", "1", "--sample", "3", "--where", "selection=nope")
    assert r.exit_code == 1 and "no selection of that name; selections: bench" in r.output
    r = run(db, "assign", "--annotators", "ada", "--overlap", "1", "--sample", "6", "--where", "selection=bench")
    assert r.exit_code == 0, r.output
    with Store.open(db) as store:
        members = {m["qa_pair_id"] for m in store.selection_members(store.selection("bench").id)}
        assigned = {pid for pid in store.filtered_pair_ids("ada") if store.assignees(pid)}
        assert assigned == members
    # a sample drawn from a selection
    r = run(db, "sample", "--name", "sub", "--per-cluster", "1..1", "--where", "selection=bench")
    assert r.exit_code == 0 and "candidates: 6 pairs in 3 clusters" in r.output, r.output


def test_selections_show_and_json(project):
    db, _, tmp = project
    assert run(db, "sample", "--name", "bench", "--total", "9", "--seed", "2", "--as", "ada").exit_code == 0
    r = run(db, "selections", "show", "bench", "--json", str(tmp / "s.json"))
    assert r.exit_code == 0, r.output
    assert "selection bench v1: 9 pairs" in r.output and "by ada" in r.output and "Members (draw order)" in r.output
    data = json.loads((tmp / "s.json").read_text())
    assert data["size"] == 9 and [m["position"] for m in data["members"]] == list(range(1, 10))
    r = run(db, "selections", "list")
    assert r.exit_code == 0 and "bench" in r.output
    r = run(db, "selections", "show", "other")
    assert r.exit_code == 1 and "selections: bench" in r.output


def test_release_of_a_selection_ships_only_its_pairs_and_rebuilds_identically(project):
    db, ids, tmp = project
    assert run(db, "sample", "--name", "bench", "--per-cluster", "3..3", "--seed", "5").exit_code == 0
    with Store.open(db) as store:
        sel = store.selection("bench")
        members = {m["qa_pair_id"] for m in store.selection_members(sel.id)}
    releasable = members & set(ids[:16])
    assert 0 < len(releasable) < len(members)  # some members are not reviewed: the preflight still applies
    r = run(db, "releases", "preflight", "--selection", "bench")
    assert r.exit_code == 0 and "selection bench v1: 9 pairs" in r.output
    assert f"included: {len(releasable)} pairs" in r.output and f"excluded: {9 - len(releasable)} pairs" in r.output
    out = tmp / "rel"
    r = run(db, "releases", "create", "demo", "--version", "1.0.0", "--out", str(out), "--selection", "bench")
    assert r.exit_code == 0, r.output
    folder = out / "demo-1.0.0"
    rows = [json.loads(x) for x in (folder / "data/test.jsonl").read_text().splitlines()]
    assert {row["id"] for row in rows} == releasable
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["selection"]["name"] == "bench" and manifest["selection"]["version"] == 1
    assert manifest["selection"]["released"] == len(releasable) and manifest["selection"]["size"] == 9
    assert sum(manifest["excluded"].values()) == 9 - len(releasable)  # members only
    card = (folder / "README.md").read_text()
    assert "### Selection" in card and "selection `bench` version 1" in card
    assert manifest["selection"]["shortfalls"] == [] and "fell short" not in card
    assert run(db, "releases", "verify", str(folder)).exit_code == 0
    # a newer version of the name does not change what the release was made from
    assert run(db, "sample", "--name", "bench", "--per-cluster", "2..2", "--seed", "9").exit_code == 0
    r = run(db, "releases", "rebuild", "demo", "--version", "1.0.0", "--out", str(tmp / "again"))
    assert r.exit_code == 0, r.output
    again = tmp / "again" / "demo-1.0.0"
    for f in sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file()):
        assert (folder / f).read_bytes() == (again / f).read_bytes(), f
    r = run(db, "releases", "create", "demo", "--version", "2.0.0", "--out", str(out), "--selection", "nope")
    assert r.exit_code == 1 and "no selection called 'nope'" in r.output


def test_a_release_without_selection_is_unchanged(project):
    db, _ids, tmp = project
    assert run(db, "releases", "create", "demo", "--version", "1.0.0", "--out", str(tmp / "a")).exit_code == 0
    assert run(db, "sample", "--name", "bench", "--per-cluster", "3..3").exit_code == 0  # a selection exists now
    r = run(db, "releases", "rebuild", "demo", "--version", "1.0.0", "--out", str(tmp / "b"))
    assert r.exit_code == 0, r.output
    a, b = tmp / "a" / "demo-1.0.0", tmp / "b" / "demo-1.0.0"
    manifest = json.loads((a / "manifest.json").read_text())
    assert "selection" not in manifest and manifest["n_pairs"] == 16
    assert "### Selection" not in (a / "README.md").read_text()
    for f in sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file()):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


async def test_release_screen_offers_the_selections_and_releases_one(project):
    from textual.widgets import Input, Select

    from benchwright.tui.app import BenchwrightApp

    db, ids, _ = project
    assert run(db, "sample", "--name", "bench", "--per-cluster", "3..3", "--seed", "5").exit_code == 0
    with Store.open(db) as store:
        members = {m["qa_pair_id"] for m in store.selection_members(store.selection("bench").id)}
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            await pilot.press("R")
            await pilot.pause()
            screen = app.screen
            assert len(screen.preflight.included) == 16 and screen.preflight.selection is None
            screen.query_one("#release-selection", Select).value = "bench"
            await pilot.pause()
            assert screen.preflight.selection.name == "bench"
            assert {c.pair.id for c in screen.preflight.included} == members & set(ids[:16])
            screen.query_one("#release-name", Input).value = "picked"
            screen.query_one("#release-version", Input).value = "1.0.0"
            await pilot.press("ctrl+s")
            await app.workers.wait_for_complete()
            await pilot.pause()
            manifest = json.loads((screen.created / "manifest.json").read_text())
            assert manifest["selection"]["name"] == "bench"
            assert manifest["n_pairs"] == len(members & set(ids[:16]))
            screen.query_one("#release-selection", Select).clear()
            await pilot.pause()
            assert screen.preflight.selection is None and len(screen.preflight.included) == 16


def test_card_selection_paragraph_lists_the_shortfalls_literally():
    from benchwright.exports.card import selection_lines
    from benchwright.exports.rows import ReleaseSpec

    base = {"name": "x", "version": "1.0.0", "created_at": "2026-12-02T06:00:00+00:00", "created_by": "a",
            "schema_version": 1}
    assert selection_lines(ReleaseSpec(**base)) == []
    sel = {"name": "bench", "version": 2, "size": 9, "released": 4, "seed": 1, "per_cluster": [4, 9],
           "balance": "qa-type", "total": 20, "shortfalls": ["cluster a|b\nc: 2 drawn, 2 short of the minimum 4"]}
    lines = selection_lines(ReleaseSpec(**base, selection=sel))
    text = "\n".join(lines)
    assert "version 2" in text and "9 pairs drawn, 4 released" in text and "total 20, seed 1" in text
    assert lines[-1] == "- cluster a\\|b c: 2 drawn, 2 short of the minimum 4"  # one line, the pipe escaped
