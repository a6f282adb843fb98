"""Issue 20 item 4: a release whose pairs have splits writes one pair of data files per split
(data/<split>.jsonl, data/<split>.parquet), lists them in the manifest (``splits``, checksums) and in the card's
``configs``/``data_files``, so ``datasets`` and the Hub show a train row as train. A release without splits (or
``ReleaseSpec.split_files`` off) keeps data/test.* (tests/exports/test_release_golden.py)."""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner
from test_release import ROWS, offline_hf, reseal, row, spec  # noqa: F401  (offline_hf: a fixture)

from benchwright.exports.release import read_release, verify_release, write_release
from benchwright.exports.rows import ReleaseError

SPLITS = ("train", "train", "test", "train", None)


def split_rows():
    return [row(i, task_set="code-derivable", split=s) for i, s in enumerate(SPLITS)]


def split_release(tmp_path: Path, name: str = "out") -> Path:
    return write_release(split_rows(), spec(split_files=True), tmp_path / name)


def front(folder: Path) -> dict:
    text = (folder / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text[4:text.index("\n---\n", 4)])


def test_a_train_test_release_has_one_pair_of_files_per_split(tmp_path):
    folder = split_release(tmp_path)
    data = sorted(p.name for p in (folder / "data").iterdir())
    assert data == ["test.jsonl", "test.parquet", "train.jsonl", "train.parquet", "unassigned.jsonl",
                    "unassigned.parquet"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["splits"] == {"test": 1, "train": 3, "unassigned": 1} and manifest["n_pairs"] == 5
    assert {f"data/{s}.{x}" for s in manifest["splits"] for x in ("jsonl", "parquet")} <= set(manifest["files"])
    by_split = {s: [json.loads(x)["id"] for x in (folder / f"data/{s}.jsonl").read_text().splitlines()]
                for s in manifest["splits"]}
    want = {s or "unassigned": sorted(r.id for r in split_rows() if r.split == s) for s in set(SPLITS)}
    assert by_split == want
    assert pq.read_table(folder / "data/train.parquet").column("split").to_pylist() == ["train"] * 3
    assert pq.read_table(folder / "data/unassigned.parquet").column("split").to_pylist() == [None]
    assert front(folder)["configs"] == [{"config_name": "default", "data_files": [
        {"split": s, "path": f"data/{s}.parquet"} for s in ("test", "train", "unassigned")]}]
    card = (folder / "README.md").read_text()
    assert 'data_files={"test": "data/test.parquet", "train": "data/train.parquet"' in card
    assert 'split="test")  # this folder' not in card
    report = verify_release(folder)
    assert report.ok, report.problems
    assert report.n_pairs == 5 and report.files_checked == 8


def test_verify_fails_on_a_tampered_split_file(tmp_path):
    folder = split_release(tmp_path)
    p = folder / "data/train.jsonl"
    data = bytearray(p.read_bytes())
    data[12] ^= 1
    p.write_bytes(bytes(data))
    report = verify_release(folder)
    assert not report.ok and any(x.startswith("data/train.jsonl: sha256 is") for x in report.problems)
    # a row moved to another split's file, resealed, is still caught
    folder = split_release(tmp_path, "two")
    train = (folder / "data/train.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "data/train.jsonl").write_bytes(b"".join(train[1:]))
    test = sorted((folder / "data/test.jsonl").read_bytes().splitlines(keepends=True) + train[:1])
    (folder / "data/test.jsonl").write_bytes(b"".join(test))
    for name in ("data/train.jsonl", "data/test.jsonl"):
        reseal(folder, name)
    problems = verify_release(folder).problems
    assert "data/train.jsonl: 2 rows, the manifest says 3" in problems
    assert any(x.startswith("data/test.jsonl: pair ") and "has the split 'train', not 'test'" in x for x in problems)
    # a split file left out of the manifest
    folder = split_release(tmp_path, "three")
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["files"]["data/train.parquet"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    problems = verify_release(folder).problems
    assert "manifest.json does not list data/train.parquet" in problems
    assert "data/train.parquet: not listed in the manifest" in problems


def test_datasets_loads_each_split_with_its_rows(tmp_path, offline_hf):  # noqa: F811
    datasets, cache = offline_hf
    folder = split_release(tmp_path)
    ds = datasets.load_dataset(str(folder), cache_dir=cache)  # the card's configs name the files
    assert {s: ds[s].num_rows for s in ds} == {"test": 1, "train": 3, "unassigned": 1}
    assert set(ds["train"]["split"]) == {"train"}


def test_rebuild_is_byte_identical_and_read_back(tmp_path):
    a, b = split_release(tmp_path, "a"), split_release(tmp_path, "b")
    files = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    manifest, rows = read_release(a)
    assert manifest["splits"]["train"] == 3
    assert [(r.id, r.split) for r in rows] == sorted((r.id, r.split) for r in split_rows())
    _, unverified = read_release(a, verify=False)
    assert unverified == rows


def test_without_split_files_or_other_splits_the_layout_is_the_old_one(tmp_path):
    old = write_release(split_rows(), spec(), tmp_path / "old")  # split_files off: every row in data/test.*
    assert sorted(p.name for p in (old / "data").iterdir()) == ["test.jsonl", "test.parquet"]
    assert "splits" not in json.loads((old / "manifest.json").read_text())
    tests = [row(i, task_set="code-derivable", split="test") for i in range(3)]
    one = write_release(tests, spec(split_files=True), tmp_path / "one")
    same = write_release(tests, spec(), tmp_path / "same")
    assert all((one / f).read_bytes() == (same / f).read_bytes()
               for f in ("manifest.json", "README.md", "data/test.jsonl", "data/test.parquet"))
    plain = write_release(ROWS, spec(split_files=True), tmp_path / "plain")  # no task set: format 2, no split
    assert sorted(p.name for p in (plain / "data").iterdir()) == ["test.jsonl", "test.parquet"]


@pytest.mark.parametrize(("bad", "message"), [
    ("my split", "split 'my split' is not a valid split name for Hugging Face datasets"),
    ("train/../x", "split 'train/../x' is not a valid split name"),
])
def test_a_bad_split_name_is_refused_naming_it(tmp_path, bad, message):
    rows = [row(0, task_set="code-derivable", split=bad), row(1, task_set="code-derivable", split="test")]
    with pytest.raises(ReleaseError, match="pairs ") as e:
        write_release(rows, spec(split_files=True), tmp_path / "out")
    assert message in str(e.value) and rows[0].id in str(e.value)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_splits_differing_in_case_or_a_literal_unassigned_are_refused(tmp_path):
    rows = [row(0, task_set="code-derivable", split="Train"), row(1, task_set="code-derivable", split="train")]
    with pytest.raises(ReleaseError, match="differ only in case"):
        write_release(rows, spec(split_files=True), tmp_path / "out")
    rows = [row(0, task_set="code-derivable", split="unassigned"), row(1, task_set="code-derivable")]
    with pytest.raises(ReleaseError, match="have no split"):
        write_release(rows, spec(split_files=True), tmp_path / "out")


def test_push_of_a_split_release_uploads_every_split_file(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from benchwright.tui.cli import main
    from benchwright.tui.services import hub

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hub_server import FakeHub

    token = "hf_good_test_token_0123456789"
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("HF_TOKEN", token)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # read at import time, maybe under the datasets test
    monkeypatch.setattr(hub.time, "sleep", lambda s: None)
    db = tmp_path / "p.db"
    assert CliRunner().invoke(main, ["--db", str(db), "init"]).exit_code == 0
    folder = split_release(tmp_path)
    with FakeHub(tokens={token}) as fake:
        r = CliRunner().invoke(main, ["--db", str(db), "releases", "push", str(folder), "--repo-id", "acme/splits",
                                      "--endpoint", fake.url, "--as", "ada"])
        assert r.exit_code == 0, r.output
        landed = fake.files("acme/splits")
    local = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert landed == local
    assert {"data/train.parquet", "data/test.parquet", "data/unassigned.parquet", "data/train.jsonl"} <= set(landed)


def run(db: Path, *args: str):
    from benchwright.tui.cli import main

    return CliRunner().invoke(main, ["--db", str(db), *args])


def split_project(tmp_path: Path, monkeypatch, splits=("train", "train", "test", "dev")) -> tuple[Path, list[str]]:
    """A project whose pairs (task set code-derivable, one per split of ``splits``) are accepted with valid
    checklists: the database and the pair ids."""
    from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
    from benchwright.db import Store

    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db, code, data = tmp_path / "p.db", tmp_path / "checkout", tmp_path / "split-pairs.jsonl"
    code.mkdir()
    data.write_text("".join(json.dumps({"question": f"Q {i}?", "answer": f"A {i}.", "ts": "code-derivable",
                                        "sp": s}) + "\n" for i, s in enumerate(splits)))
    for args in (["init"], ["repos", "add", "demo", str(code), "--version", "1.0"],
                 ["pairs", "import", "jsonl", str(data), "--repo", "demo", "--map", "task_set=ts", "--map", "split=sp"]):
        r = run(db, *args)
        assert r.exit_code == 0, r.output
    checklist = Checklist(items=[ChecklistItem(key_point="Names the module", weight=5, rubric=binary_rubric(5)),
                                 ChecklistItem(key_point="Explains the order", weight=4, rubric=binary_rubric(4)),
                                 clarity_item()])
    with Store.open(db) as store:
        ids = [p.id for p in store.queue_page("x", limit=10)]
        for pid in ids:
            store.save_checklist(pid, checklist, author="llm", origin="generated")
            store.record_decision(pid, "ada", "accept")
    return db, ids


def test_cli_create_rebuild_and_import_of_a_split_release(tmp_path, monkeypatch):
    """Through the project: `releases create` writes per split, `releases rebuild` gives the same bytes,
    `releases import` brings every split's pairs back with their splits."""
    db, _ids = split_project(tmp_path, monkeypatch)
    out = tmp_path / "rel"
    r = run(db, "releases", "preflight")
    assert "data files per split: data/dev.* (1 pair), data/test.* (1 pair), data/train.* (2 pairs)" in r.output
    r = run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out), "--as", "lead")
    assert r.exit_code == 0, r.output
    folder = out / "demo-qa-1.0.0"
    assert json.loads((folder / "manifest.json").read_text())["splits"] == {"dev": 1, "test": 1, "train": 2}
    assert run(db, "releases", "verify", str(folder)).exit_code == 0
    r = run(db, "releases", "rebuild", "demo-qa", "--version", "1.0.0", "--out", str(tmp_path / "again"))
    assert r.exit_code == 0, r.output
    again = tmp_path / "again" / "demo-qa-1.0.0"
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert "data/train.parquet" in files
    assert files == sorted(p.relative_to(again).as_posix() for p in again.rglob("*") if p.is_file())
    assert all((folder / f).read_bytes() == (again / f).read_bytes() for f in files)
    fresh = tmp_path / "fresh.db"
    assert run(fresh, "init").exit_code == 0
    r = run(fresh, "releases", "import", str(folder))
    assert r.exit_code == 0 and "added 4 Q&A pairs" in r.output, r.output
    def splits(path: Path) -> dict:
        with closing(sqlite3.connect(path)) as con:
            return dict(con.execute("SELECT id, split FROM qa_pairs"))

    assert splits(fresh) == splits(db) and sorted(splits(fresh).values()) == ["dev", "test", "train", "train"]


def test_the_funnel_counts_the_pairs_of_every_split_file(tmp_path):
    from benchwright.tui.services.funnel import release_pair_ids

    assert release_pair_ids(split_release(tmp_path)) == {r.id for r in split_rows()}
    assert release_pair_ids(write_release(ROWS, spec(), tmp_path / "plain")) == {r.id for r in ROWS}


def test_cli_refuses_a_bad_split_name_and_one_data_file_keeps_the_old_layout(tmp_path, monkeypatch):
    db, _ids = split_project(tmp_path, monkeypatch, splits=("train", "my split", "test"))
    out = tmp_path / "rel"
    r = run(db, "releases", "preflight")
    assert "problem: split 'my split' is not a valid split name" in r.output and "--one-data-file" in r.output
    r = run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out))
    assert r.exit_code == 1
    assert "split 'my split' is not a valid split name" in r.output and "nothing was written" in r.output
    assert not (out / "demo-qa-1.0.0").exists() and not list(out.glob(".*partial"))
    r = run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out), "--one-data-file")
    assert r.exit_code == 0, r.output  # the failed attempt left no record in the way
    folder = out / "demo-qa-1.0.0"
    assert sorted(p.name for p in (folder / "data").iterdir()) == ["test.jsonl", "test.parquet"]
    assert "splits" not in json.loads((folder / "manifest.json").read_text())
    r = run(db, "releases", "rebuild", "demo-qa", "--version", "1.0.0", "--out", str(tmp_path / "again"))
    assert r.exit_code == 0, r.output  # rebuilt in the recorded (one-file) layout
    assert (tmp_path / "again/demo-qa-1.0.0/data/test.parquet").read_bytes() == (folder / "data/test.parquet").read_bytes()


async def test_the_release_screen_shows_the_split_plan(tmp_path, monkeypatch):
    from benchwright.db import Store
    from benchwright.tui.app import BenchwrightApp
    from benchwright.tui.screens.release import ReleaseScreen

    db, _ids = split_project(tmp_path, monkeypatch, splits=("train", "test", "a-b"))
    with Store.open(db) as store:
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test() as pilot:
            await app.push_screen(screen := ReleaseScreen(store, "lead"))
            await pilot.pause()
            note = screen.split_note
    assert note.startswith("Problem: split 'a-b' is not a valid split name") and "pairs qa_" in note
