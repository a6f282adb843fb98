"""``benchwright dedup`` / ``dedup list`` / ``dedup resolve`` end to end (SWE-QA-Pro §2.3): near-duplicate and
paraphrase fixtures through the hashing embedder, scopes, splits, the cache on a rerun, hostile text printed
literally, exit codes; and (slow) SWE-QA-Pro's train split against its test rows with the built-in embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import QueueFilter, Store
from benchwright.tui.cli import main

HOSTILE = "[bold]x[/] [@click=app.quit]q[/] \x1b[31mred"
ROWS = [  # (repository, split, question)
    ("demo", "train", f"Where does the router register blueprints on the app object? {HOSTILE}"),
    ("demo", "test", f"Where does the router register blueprints on the app object ? {HOSTILE}"),
    ("demo", "train", "How does the config loader read environment variables?"),
    ("demo", "train", "How does the config loader read the environment variables?"),
    ("demo", "train", "What does the session interface sign, and how is the key rotated?"),
    ("demo", "test", "Which licence does the project use?"),
    ("other", "train", "How does the config loader read environment variables?"),
]
HASHING = ("--model", "builtin:hashing", "--dimensions", "1024")


@pytest.fixture
def tester(cli_env, monkeypatch):
    """The CLI environment of tests/tui/conftest.py, the annotator ``tester``."""
    monkeypatch.setenv("BENCHWRIGHT_ANNOTATOR", "tester")
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def project(tmp_path, tester) -> Path:
    db = tmp_path / "project.db"
    with Store.open(db, create=True) as store:
        for repo in ("demo", "other"):
            store.add_repository(Repository(name=repo, version_label="1"), "setup")
            src = tmp_path / f"{repo}.jsonl"
            src.write_text("".join(json.dumps({"question": q, "answer": f"answer {i}", "split": sp}) + "\n"
                                   for i, (r, sp, q) in enumerate(ROWS) if r == repo), encoding="utf-8")
            store.apply_import(parse("jsonl", src, repository=repo, mapping=["split=split"]), annotator="setup",
                               file_path=src)
    return db


def cli(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def ids_where(db: Path, **flt) -> list[int]:
    with Store.open(db, create=False) as store:
        return [store.ordinal_of(p) for p in store.filtered_pair_ids("x", QueueFilter(**flt))]


def test_dedup_within_repository_and_split_then_the_cache_on_a_rerun(project):
    r = cli(project, "dedup", "--threshold", "0.8", *HASHING)
    assert r.exit_code == 0, r.output
    assert "compared 7 questions (scope repository, within each split, threshold 0.8) with hashing" in r.output
    assert "6 embedded, 0 from the cache, 0 calls" in r.output  # #3 and #7 share a text
    # #3/#4 (demo, train); #1/#2 are train vs test, #7 is in another repository
    assert "1 duplicate group (2 pairs)" in r.output
    assert "1 multi-query question" in r.output
    assert "next: benchwright dedup list --unresolved" in r.output
    assert ids_where(project, dedup="any") == [3, 4]
    assert ids_where(project, dedup="multi-query") == [5]
    again = cli(project, "dedup", "--threshold", "0.8", *HASHING)
    assert "0 embedded, 6 from the cache, 0 calls" in again.output


def test_scope_global_and_across_splits_report_cross_split_groups_apart(project):
    r = cli(project, "dedup", "--threshold", "0.8", "--scope", "global", "--across-splits", *HASHING)
    assert r.exit_code == 0, r.output
    assert "1 duplicate group (3 pairs)" in r.output  # #3, #4 and #7 (other repository)
    assert "1 cross-split group (train vs test):" in r.output
    assert "group of #1 (train) vs #2 (test), similarity" in r.output
    assert ids_where(project, dedup="cross-split") == [1, 2]
    assert ids_where(project, dedup="any") == [1, 2, 3, 4, 7]
    listed = cli(project, "dedup", "list", "--cross-split")
    assert "cross-split" in listed.output and listed.output.count("\ngroup ") == 1
    # the question is printed as it is: markup not parsed, the escape made visible
    assert "[bold]x[/] [@click=app.quit]q[/] ␛[31mred" in listed.output and "\x1b" not in listed.output


def test_where_limits_the_pairs_compared(project):
    r = cli(project, "dedup", "--threshold", "0.8", "--scope", "global", "--across-splits", "--where", "split=test",
            *HASHING)
    assert "compared 2 questions" in r.output and "0 duplicate groups" in r.output
    # a narrowed run is the latest: the command says what that means for the pairs it left out
    assert "note: this run covers 2 of the project's" in " ".join(r.output.split())
    full = cli(project, "dedup", "--threshold", "0.8", *HASHING)
    assert "note: this run covers" not in full.output


def test_list_and_resolve(project):
    cli(project, "dedup", "--threshold", "0.8", "--scope", "global", *HASHING)
    listed = cli(project, "dedup", "list", "--unresolved")
    assert "dedup run 1" in listed.output and "unresolved" in listed.output
    with Store.open(project, create=False) as store:
        (group,) = store.duplicate_groups()
    assert f"resolve: benchwright dedup resolve {group.id} --keep #3" in listed.output
    r = cli(project, "dedup", "resolve", str(group.id), "--keep", "#4", "--note", "clearer", "--as", "ada")
    assert r.exit_code == 0, r.output
    assert f"group {group.id}: keep-one by ada; kept #4; dropped #3, #7" in r.output
    assert ids_where(project, dedup="dropped") == [3, 7] and ids_where(project, dedup="kept") == [4]
    assert "showing 0" in cli(project, "dedup", "list", "--unresolved").output
    shown = cli(project, "dedup", "list").output
    assert "keep-one by ada" in shown and "note: clearer" in shown
    merged = cli(project, "dedup", "resolve", str(group.id), "--merge-into", "#7")
    assert "merge by tester; kept #7; dropped #3, #4" in merged.output
    both = cli(project, "dedup", "resolve", str(group.id), "--keep-both")
    assert "keep-both by tester; kept #3, #4, #7; dropped none" in both.output
    assert ids_where(project, dedup="not-duplicate") == [3, 4, 7]


@pytest.mark.parametrize("args, code, message", [
    ((), 2, "give exactly one of --keep PAIR, --keep-both, --merge-into PAIR"),
    (("--keep", "#3", "--keep-both"), 2, "(got --keep, --keep-both)"),
    (("--keep", "#1"), 1, "is not a member of this group"),
    (("--keep", "#99"), 1, "no Q&A pair at position #99"),
])
def test_resolve_errors(project, args, code, message):
    cli(project, "dedup", "--threshold", "0.8", "--scope", "global", *HASHING)
    with Store.open(project, create=False) as store:
        (group,) = store.duplicate_groups()
    r = cli(project, "dedup", "resolve", str(group.id), *args)
    assert r.exit_code == code and message in r.output and "Traceback" not in r.output
    assert cli(project, "dedup", "resolve", "999", "--keep-both").output.startswith("error: no duplicate group 999")


def test_dedup_errors(project):
    assert cli(project, "dedup", "--threshold", "0", *HASHING).exit_code == 1
    assert cli(project, "dedup", "--threshold", "nan", *HASHING).exit_code == 2
    r = cli(project, "dedup", "--where", "split=dev", *HASHING)
    assert r.exit_code == 1 and "no pair to compare matches the filter" in r.output
    r = cli(project, "dedup", "--model", "builtin:nope")
    assert r.exit_code == 1 and "no built-in embedder 'nope'" in r.output
    assert "no dedup run yet" in cli(project, "dedup", "list").output


SWE_QA_PRO = Path("/work/shared/data/swe-qa-pro")


@pytest.mark.slow
@pytest.mark.skipif(not (SWE_QA_PRO / "train.parquet").is_file(), reason="needs ../shared/data/swe-qa-pro")
def test_swe_qa_pro_train_against_test_with_the_built_in_embedder(tmp_path, tester):
    """The real cross-split check: SWE-QA-Pro's 464 training questions against its 11 test rows, every repository
    compared with every other (--scope global --across-splits). None of the test questions is within 0.9 (or 0.95)
    of a training question with wordllama; a test question planted in train, lightly reworded, is found."""
    db = tmp_path / "p.db"
    assert cli(db, "init").exit_code == 0
    for name in ("train.parquet", "test.rows-0-10.parquet"):
        assert cli(db, "pairs", "import", "swe-qa-pro", str(SWE_QA_PRO / name)).exit_code == 0
    assert ids_where(db, split="train").__len__() == 464 and len(ids_where(db, split="test")) == 11
    for threshold in ("0.9", "0.95"):
        r = cli(db, "dedup", "--scope", "global", "--across-splits", "--threshold", threshold)
        assert r.exit_code == 0, r.output
        assert "compared 475 questions" in r.output and "0 cross-split groups (train vs test)" in r.output
        assert "0 duplicate groups" in r.output
    with Store.open(db, create=False) as store:
        test_id = store.filtered_pair_ids("x", QueueFilter(split="test"))[0]
        pair = store.get_pair(test_id)
        store.add_repository(Repository(name="planted", version_label="1"), "setup")
    src = tmp_path / "planted.jsonl"
    src.write_text(json.dumps({"question": pair.question.replace("How does", "In what way does").rstrip("?") + " ?",
                               "answer": "x", "split": "train"}) + "\n", encoding="utf-8")
    assert cli(db, "pairs", "import", "jsonl", str(src), "--repo", "planted", "--map", "split=split").exit_code == 0
    r = cli(db, "dedup", "--scope", "global", "--across-splits", "--threshold", "0.9")
    assert "1 cross-split group (train vs test):" in r.output and "1 embedded, 475 from the cache" in r.output
    assert ids_where(db, dedup="cross-split") == [store_ordinal(db, test_id), 476]


def store_ordinal(db: Path, pair_id: str) -> int:
    with Store.open(db, create=False) as store:
        return store.ordinal_of(pair_id)
