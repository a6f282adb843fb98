"""Streamed imports (``parse(..., stream=True)`` into ``Store.apply_import``): the file is read line by line and
written in chunks, with the same all-or-nothing rule, errors, counts and idempotency as an import read whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_helpers import ALICE, FLASK

from benchwright.core.errors import InputFileError
from benchwright.core.importers import parse
from benchwright.db import Store
from benchwright.db import store as store_module


def _records(n: int) -> list[dict]:
    return [{"question": f"How does step {i} work?", "answer": f"It calls helper_{i}() in src/app.py."}
            for i in range(1, n + 1)]


def _write(path: Path, records: list[dict], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail, encoding="utf-8")
    return path


def _import(store: Store, path: Path, *, stream: bool = True, fmt: str = "swe-qa", **kw):
    result = parse(fmt, path, repository="flask", stream=stream)
    return store.apply_import(result, annotator=ALICE, file_path=path, repository="flask", **kw), result


def _count(store: Store, table: str) -> int:
    return store.db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.fixture
def flask(store: Store) -> Store:
    store.add_repository(FLASK, ALICE)
    return store


def test_stream_is_lazy_and_parse_without_it_reads_everything(tmp_path):
    path = _write(tmp_path / "b.jsonl", _records(3))
    streamed = parse("swe-qa", path, repository="flask", stream=True)
    assert streamed.pending is not None and streamed.pairs == [] and streamed.read == 0
    whole = parse("swe-qa", path, repository="flask")
    assert whole.pending is None and len(whole.pairs) == 3 and whole.read == 3
    assert [p.id for p in streamed.pending] == [p.id for p in whole.pairs] and streamed.read == 3


def test_an_invalid_last_line_of_5000_leaves_the_project_unchanged(flask, tmp_path):
    path = _write(tmp_path / "b.jsonl", _records(4999), '{"question": "Last?"}\n')
    with pytest.raises(InputFileError) as e:
        _import(flask, path)
    assert str(e.value) == (f"1 problem in the input; nothing was imported:\n  {path}, line 5000, field 'answer': "
                            "required field is missing")
    assert _count(flask, "qa_pairs") == _count(flask, "pair_texts") == _count(flask, "import_batches") == 0


def test_a_line_that_is_not_utf8_at_the_end_rolls_back_with_the_message_of_a_whole_read(flask, tmp_path):
    path = tmp_path / "b.jsonl"
    good = "".join(json.dumps(r) + "\n" for r in _records(2500)).encode()
    path.write_bytes(good + b'{"question": "caf\xe9?", "answer": "a"}\n')
    with pytest.raises(InputFileError) as whole:
        parse("swe-qa", path, repository="flask")
    with pytest.raises(InputFileError) as streamed:
        _import(flask, path)
    assert str(streamed.value) == str(whole.value)
    assert f"line 2501: not valid UTF-8 (byte 0xe9 at offset {len(good) + 17})" in str(streamed.value)
    assert _count(flask, "qa_pairs") == 0


def test_a_bom_and_whitespace_only_files_read_as_a_whole_read_does(flask, tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_records(1)[0]).encode() + b"\r\n\n")
    rep, _ = _import(flask, path)
    assert rep.added == 1 and rep.read == 1
    blank = tmp_path / "blank.jsonl"
    blank.write_text(" \u3000\n\n\u2028 \n", encoding="utf-8")  # white space, but not ASCII white space
    with pytest.raises(InputFileError) as whole:
        parse("swe-qa", blank, repository="flask")
    with pytest.raises(InputFileError) as streamed:
        _import(flask, blank)
    assert str(streamed.value) == str(whole.value) and "the file is empty" in str(whole.value)


@pytest.mark.parametrize("chunk", [1000, 7])
def test_chunks_across_boundaries_give_the_counts_and_order_of_a_whole_import(tmp_path, monkeypatch, chunk):
    """Repeats of a record in later chunks, within one chunk, and a new question of an existing pair across a
    chunk boundary: the streamed import, written chunk by chunk, reports and stores what the whole import does."""
    monkeypatch.setattr(store_module, "IMPORT_CHUNK", chunk)
    first = _records(30)
    base = _write(tmp_path / "base.jsonl", first[:10])
    records = _records(2500)
    records[1000] = records[0]                                  # in the project before: already present
    records[1001] = records[998]                                # repeat across the boundary
    records[2000] = records[2000 - 1]                           # repeat within one chunk (chunk 1000)
    records[1500] = {"question": first[3]["question"], "answer": "Another answer."}   # possible update
    records[1700] = {"question": first[3]["question"], "answer": "Another answer."}   # and its repeat
    path = _write(tmp_path / "b.jsonl", records)
    reports, orders = [], []
    for stream in (False, True):
        with Store.open(tmp_path / f"p{stream}.db") as s:
            s.add_repository(FLASK, ALICE)
            _import(s, base, stream=stream)
            rep, _ = _import(s, path, stream=stream)
            reports.append((rep.read, rep.added, rep.already_present, rep.duplicates_in_file,
                            [(u.line, u.pair_ids) for u in rep.possible_updates]))
            orders.append(s.db.conn.execute(
                "SELECT p.id, p.ordinal, p.source_line, p.import_batch_id, t.import_batch_id, t.identity_key "
                "FROM qa_pairs p JOIN pair_texts t ON t.qa_pair_id = p.id ORDER BY p.ordinal").fetchall())
            batch = s.db.conn.execute(
                "SELECT read_count, added_count, already_present_count, duplicate_count, possible_update_count "
                "FROM import_batches ORDER BY id DESC LIMIT 1").fetchone()
            assert batch == (rep.read, rep.added, rep.already_present, rep.duplicates_in_file, 1)
    assert reports[0] == reports[1]
    assert reports[1][:4] == (2500, 2500 - 11 - 3 - 1, 11, 3)
    assert orders[0] == orders[1]
    assert [o[1] for o in orders[1]] == list(range(1, len(orders[1]) + 1))


def test_reimport_streamed_adds_nothing_and_no_batch(flask, tmp_path):
    path = _write(tmp_path / "b.jsonl", _records(2100))
    rep, _ = _import(flask, path)
    assert rep.added == 2100 and rep.batch_id is not None
    again, _ = _import(flask, path)
    assert (again.added, again.already_present, again.batch_id) == (0, 2100, None)
    assert _count(flask, "qa_pairs") == 2100 and _count(flask, "import_batches") == 1


def test_skip_invalid_streamed_keeps_every_problem_and_the_valid_pairs(flask, tmp_path):
    records = _records(2200)
    for i in (5, 1500, 2199):
        records[i] = {"question": records[i]["question"], "answer": 3}
    path = _write(tmp_path / "b.jsonl", records)
    rep, _ = _import(flask, path, skip_invalid=True)
    assert rep.added == 2197 and [p.line for p in rep.skipped] == [6, 1501, 2200]
    assert flask.db.conn.execute("SELECT skipped_count FROM import_batches").fetchone()[0] == 3


def test_a_repaired_line_of_a_streamed_import_is_flagged(flask, tmp_path):
    records = _records(1500)
    path = tmp_path / "b.jsonl"
    lines = [json.dumps(r) for r in records]
    lines[1200] = '{"question": "Why \\udc81?", "answer": "Because."}'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rep, result = _import(flask, path)
    assert rep.added == 1500 and result.repaired_lines == [1201]
    assert flask.flag_import_repairs(result, rep.batch_id) == [1201]
    assert _count(flask, "text_repairs") == 1


def test_cli_import_streams_and_fails_whole(tmp_path):
    from click.testing import CliRunner

    from benchwright.tui.cli import main as cli

    db = tmp_path / "p.db"
    with Store.open(db) as s:
        s.add_repository(FLASK, ALICE)
    bad = _write(tmp_path / "bad.jsonl", _records(2999), "not json\n")
    run = CliRunner().invoke(cli, ["--db", str(db), "pairs", "import", "swe-qa", str(bad), "--repo", "flask",
                                   "--as", ALICE])
    assert run.exit_code != 0 and f"{bad}, line 3000: invalid JSON" in run.output
    with Store.open(db) as s:
        assert _count(s, "qa_pairs") == 0
    good = _write(tmp_path / "good.jsonl", _records(2999))
    run = CliRunner().invoke(cli, ["--db", str(db), "pairs", "import", "swe-qa", str(good), "--repo", "flask",
                                   "--as", ALICE])
    assert run.exit_code == 0, run.output
    assert f"{good}: read 2999 records, added 2999 Q&A pairs" in run.output


def test_a_failing_streamed_import_keeps_the_first_problems_and_counts_all(flask, tmp_path, monkeypatch):
    import benchwright.core.importers as importers

    monkeypatch.setattr(importers, "KEPT_PROBLEMS", 50)
    path = _write(tmp_path / "b.jsonl", _records(100), "not json\n" * 300)
    result = parse("swe-qa", path, repository="flask", stream=True, keep_problems=True)
    with pytest.raises(InputFileError) as e:
        flask.apply_import(result, annotator=ALICE, file_path=path, repository="flask")
    assert len(e.value.problems) == 50 and result.problem_count == 300 and e.value.total == 300
    assert str(e.value).startswith(f"300 problems in the input; nothing was imported:\n  {path}, line 101: invalid JSON")
    assert str(e.value).endswith("\n  ... and 280 more")
    assert _count(flask, "qa_pairs") == 0
