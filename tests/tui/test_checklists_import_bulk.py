"""``benchwright checklists import`` of thousands of checklists (issue 19 testers' finding): streamed, written in
chunks with a few SQL lookups per chunk (not per checklist), one transaction (a bad line anywhere rolls back
everything, naming the file and line), and a summary instead of a line per checklist."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.checklist import clarity_item
from benchwright.core.importers.checklists import stream_checklists
from benchwright.db import Store
from benchwright.tui.cli import main

N = 2_500
"""Pairs and checklists: three chunks of :data:`benchwright.db.checklists.CHECKLIST_IMPORT_CHUNK`."""


def checklist(pair_id: str | None = None, question: str | None = None, weights=(5, 4)) -> dict:
    items = [{"kind": "knowledge", "key_point": f"Point {n}", "weight": w,
              "rubric": [{"score": w, "criterion": f"States point {n}"}, {"score": 0, "criterion": "Does not"}]}
             for n, w in enumerate(weights, start=1)]
    ref = {"qa_pair_id": pair_id} if pair_id else {"question": question} if question else {}
    return {**ref, "items": [*items, clarity_item().model_dump(mode="json")]}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> tuple[Path, list[str], list[str]]:
    root = tmp_path_factory.mktemp("bulk")
    (root / "src").mkdir()
    db = root / "base.db"
    run = CliRunner().invoke
    assert run(main, ["--db", str(db), "init"]).exit_code == 0
    assert run(main, ["--db", str(db), "repos", "add", "r", str(root / "src"), "--version", "1"]).exit_code == 0
    pairs = root / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"question": f"  Question number {i}?\n", "answer": f"Answer {i}."}) + "\n"
                             for i in range(N)), encoding="utf-8")
    r = run(main, ["--db", str(db), "pairs", "import", "jsonl", str(pairs), "--repo", "r", "--as", "setup"])
    assert r.exit_code == 0, r.output
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, question FROM qa_pairs ORDER BY ordinal").fetchall()
    return db, [r[0] for r in rows], [r[1] for r in rows]


@pytest.fixture
def project(base, tmp_path):
    db, ids, questions = base
    copy = tmp_path / "project.db"
    copy.write_bytes(db.read_bytes())
    return copy, ids, questions


def write(path: Path, docs: list) -> Path:
    path.write_text("".join((d if isinstance(d, str) else json.dumps(d)) + "\n" for d in docs), encoding="utf-8")
    return path


def versions(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM checklist_versions").fetchone()[0]


def imp(db: Path, path: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), "checklists", "import", str(path), "--as", "tester", *args])


def test_thousands_print_a_summary_not_a_line_each(project, tmp_path):
    db, ids, questions = project
    # by id, and by question (the stored questions have spaces and a newline at the ends)
    docs = [checklist(pid) if i % 2 else checklist(question=questions[i].strip()) for i, pid in enumerate(ids)]
    docs[7] = checklist(ids[7], weights=(5, 3))  # a draft
    r = imp(db, write(tmp_path / "many.jsonl", docs))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert f"imported {N} checklists (1 draft to fix in the editor)" in lines
    assert len(lines) < 10, lines[:20]
    assert not any(line.startswith("qa_") for line in lines)
    assert versions(db) == N
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM checklist_current WHERE is_draft = 1").fetchone()[0] == 1
        assert conn.execute("SELECT count(DISTINCT qa_pair_id) FROM checklist_versions").fetchone()[0] == N


def test_verbose_prints_a_line_per_checklist(project, tmp_path):
    db, ids, _ = project
    r = imp(db, write(tmp_path / "some.jsonl", [checklist(pid) for pid in ids[:30]]), "--verbose")
    assert r.exit_code == 0, r.output
    assert sum(line.startswith("qa_") for line in r.stdout.splitlines()) == 30


def test_a_bad_line_in_the_last_chunk_rolls_back_everything(project, tmp_path):
    db, ids, _ = project
    docs = [checklist(pid) for pid in ids]
    docs[2_300] = checklist("qa_0000000000000000")
    r = imp(db, write(tmp_path / "bad_id.jsonl", docs))
    assert r.exit_code == 1
    assert "bad_id.jsonl, line 2301: no Q&A pair with id qa_0000000000000000; nothing was imported" in r.output
    assert versions(db) == 0
    docs[2_300] = '{"qa_pair_id": "broken'
    r = imp(db, write(tmp_path / "bad_json.jsonl", docs))
    assert r.exit_code == 1 and "bad_json.jsonl" in r.output and "line 2301" in r.output, r.output
    assert versions(db) == 0


def test_a_question_no_pair_has(project, tmp_path):
    db, ids, _ = project
    r = imp(db, write(tmp_path / "q.jsonl", [checklist(ids[0]), checklist(question="Question number 999999?")]))
    assert r.exit_code == 1 and "q.jsonl, line 2: no pair has exactly this question" in r.output, r.output
    assert versions(db) == 0


def test_the_same_pair_twice_makes_two_versions(project, tmp_path):
    db, ids, _ = project
    r = imp(db, write(tmp_path / "twice.jsonl", [checklist(ids[3]), checklist(ids[3], weights=(6, 3))]))
    assert r.exit_code == 0, r.output
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version, parent_version FROM checklist_versions WHERE qa_pair_id = ? "
                            "ORDER BY version", [ids[3]]).fetchall() == [(1, None), (2, 1)]
        assert conn.execute("SELECT version FROM checklist_current WHERE qa_pair_id = ?", [ids[3]]).fetchone() == (2,)


def test_lookups_are_per_chunk_not_per_checklist(project, tmp_path):
    """The store matches a chunk of 1,000 checklists with a few statements (before: several per checklist)."""
    db, ids, questions = project
    path = write(tmp_path / "count.jsonl",
                 [checklist(pid) if i % 2 else checklist(question=questions[i]) for i, pid in enumerate(ids)])
    stream = stream_checklists(path)
    assert stream.total == N
    statements: list[str] = []
    with Store.open(db) as store:
        store.db.conn.set_trace_callback(statements.append)
        report = store.import_checklist_records(stream.records, author="tester", file=str(path))
        store.db.conn.set_trace_callback(None)
    assert len(report.saved) == N
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) < 20, len(selects)
