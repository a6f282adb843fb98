"""Issue 18 item 3: the task-set vocabulary (Code-QA-Bench's dual task set) and the importers' use of it."""

from __future__ import annotations

import json

import pytest

from benchwright.core.importers import parse
from benchwright.core.vocabulary import TASK_SETS, normalize_task_set


def test_the_vocabulary_and_its_spellings():
    assert list(TASK_SETS) == ["code-derivable", "doc-dependent"]
    assert normalize_task_set("Code_Derivable") == "code-derivable"
    assert normalize_task_set("  doc dependent ") == "doc-dependent"
    assert normalize_task_set(None) is None and normalize_task_set("  ") is None
    with pytest.raises(ValueError, match="a split such as train or test goes to --map split=COL"):
        normalize_task_set("Test")
    with pytest.raises(ValueError, match="expected code-derivable or doc-dependent"):
        normalize_task_set("hard")


def test_map_task_set_outside_the_vocabulary_names_the_line(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in (
        {"question": "q1?", "answer": "a1", "ts": "Code-Derivable", "sp": "test"},
        {"question": "q2?", "answer": "a2", "ts": "train"},
        {"question": "q3?", "answer": "a3"},
    )) + "\n", encoding="utf-8")
    result = parse("jsonl", f, repository=None, mapping=["task_set=ts", "split=sp"])
    [problem] = result.problems
    assert (problem.line, problem.field) == (2, "ts") and "unknown task set 'train'" in problem.message
    assert [(p.task_set, p.split) for p in result.pairs] == [("code-derivable", "test"), (None, None)]


def test_where_task_set_filters_pairs_and_refuses_other_values(tmp_path):
    from benchwright.core.errors import BenchwrightError
    from benchwright.db import Store
    from benchwright.tui.cli.common import parse_where

    f = tmp_path / "p.jsonl"
    f.write_text("".join(json.dumps({"question": f"q{i}?", "answer": "a", "ts": ts}) + "\n"
                         for i, ts in enumerate(("code-derivable", "doc-dependent", "doc-dependent", ""))))
    flt = parse_where(("task-set=Doc_Dependent",))
    assert flt.task_set == "doc-dependent"
    with pytest.raises(BenchwrightError, match="unknown task set 'test'"):
        parse_where(("task_set=test",))
    with Store.open(tmp_path / "p.db") as store:
        store.apply_import(parse("jsonl", f, repository=None, mapping=["task_set=ts"]), annotator="t", file_path=f)
        assert sorted(p.question for p in store.queue_page("t", flt, limit=10)) == ["q1?", "q2?"]
