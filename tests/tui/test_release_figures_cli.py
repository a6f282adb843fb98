"""Issue 20 item 3 through the CLI: `releases create` of a project with judged answers writes the card's Scores
section and its figures (from the report's numbers), `releases verify` passes and fails on a tampered PNG,
`releases rebuild` reproduces every byte (also after the answers are judged again), `--figures` chooses them, and
a release recorded before figures existed rebuilds without any."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.importers.answers import AnswerRecord
from benchwright.db import Store
from benchwright.tui.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from test_release_models import _judge  # one checklist judgment: the knowledge score, clarity 1

CHECKLIST = Checklist(items=[ChecklistItem(key_point="Names it", weight=9, rubric=binary_rubric(9)), clarity_item()])


def run(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args])


def contents(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def project(project_factory, tmp_path, monkeypatch):
    """Three accepted pairs; model m1 answered all three, judged 10, 1 and 10 points by j1 (70 %)."""
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db, _ = project_factory(tmp_path, n=3)
    with Store.open(db) as store:
        ids = [r.id for r in store.queue_page("x", limit=10)]
        for pid in ids:
            store.save_checklist(pid, CHECKLIST, author="ada", origin="edited")
            store.record_decision(pid, "ada", "accept")
        store.import_answers([AnswerRecord(line=i + 1, text=f"a{i}", pair_ref=pid) for i, pid in enumerate(ids)],
                             model="m1", condition="closed-book", created_by="setup")
        for a, points in zip(store.answers(model="m1"), (9, 0, 9), strict=True):
            _judge(store, a.id, "j1", score=points)
    return db, tmp_path


def test_create_writes_scores_and_figures_verify_and_rebuild(project):
    db, tmp = project
    out = tmp / "releases"
    r = run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out), "--as", "lead")
    assert r.exit_code == 0, r.output
    folder = out / "demo-qa-1.0.0"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    [group] = manifest["scores"]["groups"]
    assert (group["model"], group["judge_model"], group["answers"], group["overall_pct"]) == ("m1", "j1", 3, 70.0)
    assert group["histogram"] == [0, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    figures = sorted(k for k in manifest["files"] if k.startswith("figures/"))
    assert "figures/score-distribution.png" in figures and "figures/curation-funnel.png" in figures
    assert "figures/scores-by-qa-type.png" in figures  # the fixture's pairs have QA types
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "| m1 | closed-book | checklist | j1 | 3 | 3 | 70.0% |" in card
    for name in figures:
        assert f"]({name})" in card
    # the card's numbers are the report's (overall and per QA type)
    r = run(db, "report", "--by", "qa-type", "--json", str(tmp / "report.json"))
    assert r.exit_code == 0, r.output
    report = (tmp / "report.json").read_text(encoding="utf-8")
    assert '"overall_pct": 70.0' in report
    [qa_types] = [e["rows"] for e in manifest["scores"]["strata"] if e["axis"] == "qa_type"]
    for row in qa_types:
        assert f'"overall_pct": {row["overall_pct"]}' in report
        assert f"| {row['stratum']} | m1 | closed-book | checklist | j1 | {row['answers']} | " in card
    assert run(db, "releases", "verify", str(folder)).exit_code == 0

    # judged again after the release: the rebuild uses the recorded scores, every byte the same
    with Store.open(db) as store:
        _judge(store, store.answers(model="m1")[1].id, "j1", run_index=1, score=9)
    r = run(db, "releases", "rebuild", "demo-qa", "--version", "1.0.0", "--out", str(tmp / "again"))
    assert r.exit_code == 0, r.output
    assert contents(tmp / "again" / "demo-qa-1.0.0") == contents(folder)

    png = folder / figures[0]
    png.write_bytes(png.read_bytes()[:-1] + b"\x00")
    r = run(db, "releases", "verify", str(folder))
    assert r.exit_code != 0 and f"{figures[0]}: sha256 is" in r.output


def test_the_figures_option(project):
    db, tmp = project
    out = tmp / "r"
    r = run(db, "releases", "create", "a", "--version", "1.0.0", "--out", str(out), "--figures", "none")
    assert r.exit_code == 0, r.output
    assert not (out / "a-1.0.0" / "figures").exists()
    assert "](figures/" not in (out / "a-1.0.0" / "README.md").read_text(encoding="utf-8")
    assert json.loads((out / "a-1.0.0" / "manifest.json").read_text())["figures"] == []
    r = run(db, "releases", "create", "b", "--version", "1.0.0", "--out", str(out), "--figures", "funnel,scores")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (out / "b-1.0.0" / "figures").iterdir()) == [
        "curation-funnel.png", "score-distribution.png"]
    r = run(db, "releases", "create", "c", "--version", "1.0.0", "--out", str(out), "--figures", "pie")
    assert r.exit_code != 0
    assert "unknown figure kind 'pie'; use all, none or some of scores, strata, agreement, funnel" in r.output
    assert not (out / "c-1.0.0").exists()


def test_a_release_recorded_before_figures_rebuilds_without_them(project):
    db, tmp = project
    from benchwright.tui.services.releases import create_release, rebuild_release

    with Store.open(db) as store:
        path = create_release(store, store.release_preflight(), "old-qa", "1.0.0", tmp / "r", by="lead",
                              created_at="2026-01-01T00:00:00+00:00", figures=False,
                              methods={"difficulty": None, "scores": None})
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        assert "figures" not in manifest and "scores" not in manifest and not (path / "figures").exists()
        again = rebuild_release(store, "old-qa", "1.0.0", tmp / "again", by="lead")
    assert contents(again) == contents(path)
