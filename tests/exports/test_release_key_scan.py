"""API keys of the environment are looked for in the encoded rows (issue 19 item 4): a block whose JSON lines hold
a key (or whose annotators' names do) is scrubbed and encoded again, so the release is byte for byte the release
of the rows with the key replaced by ``***``; blocks without one are written as encoded."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_release import row, spec

from benchwright.exports import release, write_release

KEY = "sk-proj-SCANKEY-0123456789abcdef"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(release, "_ROWS_PER_BLOCK", 2)  # 5 rows: 3 blocks, the key in the middle one only


@pytest.mark.parametrize("with_annotators", [False, True])
def test_a_key_in_a_row_or_an_annotator_gives_the_release_of_the_scrubbed_rows(
        tmp_path: Path, monkeypatch, small_blocks, with_annotators: bool):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for var in ("ANTHROPIC_API_KEY", "OPENAI_ADMIN_KEY"):
        monkeypatch.delenv(var, raising=False)
    clean = [row(0), row(1), row(2, question="Why is *** here?", annotators=["ada", "bob ***"]), row(3), row(4)]
    expected = _files(write_release(clean, spec(), tmp_path / "expected", with_annotators=with_annotators))

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    leaked = [row(0), row(1), row(2, question=f"Why is {KEY} here?", annotators=["ada", f"bob {KEY}"]), row(3),
              row(4)]
    got = _files(write_release(leaked, spec(), tmp_path / "got", with_annotators=with_annotators))
    assert got == expected
    assert not any(KEY.encode() in data for data in got.values())


def test_a_key_only_in_an_annotator_name_is_scrubbed_before_the_pseudonym(tmp_path: Path, monkeypatch, small_blocks):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = write_release([row(0), row(1, annotators=[f"cy {KEY}"])], spec(), tmp_path)
    jsonl = (folder / "data" / "test.jsonl").read_bytes()
    assert release.pseudonymize("cy ***", "flask-qa").encode() in jsonl
    assert release.pseudonymize(f"cy {KEY}", "flask-qa").encode() not in jsonl
