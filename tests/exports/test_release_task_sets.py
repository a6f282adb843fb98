"""Issue 18 item 3: the task set and split in release rows (release format 4). A release whose pairs have neither
stays format 2 or 3 byte for byte (tests/exports/test_release.py's byte-identity tests); this one checks format 4."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from test_release import ROWS, row, spec

from benchwright.exports.release import read_release, verify_release, write_release
from benchwright.exports.rows import release_format_of


def test_rows_with_a_task_set_are_format_4_and_round_trip(tmp_path):
    rows = [row(0, task_set="code-derivable", split="test"), row(1, task_set="doc-dependent"), *ROWS[2:]]
    assert release_format_of(rows) == 4 and release_format_of(ROWS) in (2, 3)
    out = write_release(rows, spec(), tmp_path / "out")
    assert verify_release(out).ok
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["release_format"] == 4
    table = pq.read_table(out / "data/test.parquet")
    by_id = dict(zip(table.column("id").to_pylist(), table.column("task_set").to_pylist(), strict=True))
    assert by_id[rows[0].id] == "code-derivable" and by_id[rows[1].id] == "doc-dependent" and by_id[ROWS[2].id] is None
    lines = {json.loads(x)["id"]: json.loads(x) for x in (out / "data/test.jsonl").read_text().splitlines()}
    assert lines[rows[0].id]["split"] == "test" and "task_set" not in lines[ROWS[2].id]  # None is left out
    card = (out / "README.md").read_text()
    assert "| `task_set` | string |" in card and "### By task set" in card and "| code-derivable | 1 |" in card
    _, back = read_release(out)
    got = {r.id: (r.task_set, r.split) for r in back}
    assert got[rows[0].id] == ("code-derivable", "test") and got[ROWS[3].id] == (None, None)
    assert back[0].to_domain()[0].task_set == next(r for r in rows if r.id == back[0].id).task_set


def test_a_release_without_task_sets_has_no_such_column(tmp_path):
    assert release_format_of([row(0, split="test"), *ROWS[1:]]) == release_format_of(ROWS)  # a split alone: as before
    out = write_release(ROWS, spec(), tmp_path / "out")
    split_only = write_release([row(0, split="test"), *ROWS[1:]], spec(), tmp_path / "split")
    assert (split_only / "data/test.jsonl").read_bytes() == (out / "data/test.jsonl").read_bytes()
    assert (split_only / "data/test.parquet").read_bytes() == (out / "data/test.parquet").read_bytes()
    assert "task_set" not in pq.read_table(out / "data/test.parquet").column_names
    assert "task_set" not in (out / "README.md").read_text()
