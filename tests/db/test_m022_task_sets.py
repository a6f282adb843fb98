"""Migration m022 (issue 18): a split written into ``qa_pairs.task_set`` (the SWE-QA-Pro importer did before) is
cleared where m020 copied it into ``split``; task sets and other values stay."""

from __future__ import annotations

import sqlite_utils

from benchwright.db import Store
from benchwright.db.migrations import migrations


def test_m022_clears_splits_from_task_set_and_keeps_the_rest(tmp_path):
    path = tmp_path / "p.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m020_data_methods")
    for i, task_set in enumerate(("Test", "code-derivable", "hard", None), start=1):
        db.conn.execute(
            "INSERT INTO qa_pairs (id, ordinal, repository, question, reference_answer, source_format, source_file, "
            "source_line, extra_json, created_at, task_set) VALUES (?, ?, NULL, ?, 'a', 'jsonl', 'f.jsonl', ?, '{}', "
            "'2025-01-01', ?)", (f"p{i}", i, f"q{i}?", i, task_set))
    db.conn.commit()
    db.conn.close()
    with Store.open(path) as store:
        rows = store.db.conn.execute("SELECT id, task_set, split FROM qa_pairs ORDER BY id").fetchall()
    assert rows == [("p1", None, "test"), ("p2", "code-derivable", None), ("p3", "hard", None), ("p4", None, None)]
