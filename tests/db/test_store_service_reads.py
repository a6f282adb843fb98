"""Store reads and writes the services use instead of SQL of their own (no SQL runs outside db/)."""

from __future__ import annotations

import pytest
from store_helpers import ALICE, IDS

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.errors import BenchwrightError
from benchwright.db import QueueFilter


def _checklist() -> Checklist:
    return Checklist(items=[ChecklistItem(key_point="k", weight=9, rubric=binary_rubric(9)), clarity_item()])


def test_filtered_pair_ids_in_queue_order(loaded):
    assert loaded.filtered_pair_ids(ALICE) == IDS
    assert loaded.filtered_pair_ids(ALICE, QueueFilter(repository="click")) == [IDS[5]]
    loaded.record_decision(IDS[1], ALICE, "accept")
    assert loaded.filtered_pair_ids(ALICE, QueueFilter(status="accepted")) == [IDS[1]]
    assert IDS[1] not in loaded.filtered_pair_ids(ALICE, QueueFilter(status="undecided"))


def test_fill_category_never_overwrites(loaded):
    assert loaded.get_pair(IDS[6]).category is None
    loaded.fill_category(IDS[6], "Business Logic")
    assert loaded.get_pair(IDS[6]).category == "Business Logic"
    loaded.fill_category(IDS[6], "Project Architecture")
    assert loaded.get_pair(IDS[6]).category == "Business Logic"


def test_current_checklist_origins(loaded):
    assert loaded.current_checklist_origins() == {}
    loaded.save_checklist(IDS[0], _checklist(), author=ALICE, origin="imported")
    loaded.save_checklist(IDS[0], _checklist(), author=ALICE, expected_version=1)
    loaded.save_checklist(IDS[2], _checklist(), author=ALICE, origin="generated")
    assert loaded.current_checklist_origins() == {IDS[0]: "edited", IDS[2]: "generated"}


def test_pairs_with_step_result_since_counts_failures_too(loaded):
    loaded.save_curation_result(IDS[0], "classify", status="ok", output={}, by=ALICE)
    since = loaded.curation_current(IDS[0])["classify"].created_at
    loaded.save_curation_result(IDS[1], "classify", status="failed", reason="no JSON", by=ALICE)
    assert loaded.pairs_with_step_result_since("classify", since) == {IDS[0], IDS[1]}
    assert loaded.pairs_with_step_result_since("classify", "9999") == set()
    assert loaded.pairs_with_step_result_since("enrich", since) == set()


def test_release_record(loaded):
    assert loaded.release_record("qa", "1.0.0") is None
    loaded.record_release("qa", "1.0.0", created_at="2026-01-01T00:00:00+00:00", created_by=ALICE, path="/r",
                          n_pairs=3, manifest={"license": "mit"})
    assert loaded.release_record("qa", "1.0.0") == {
        "created_at": "2026-01-01T00:00:00+00:00", "created_by": ALICE, "path": "/r", "n_pairs": 3,
        "manifest": {"license": "mit"}}


def test_generated_answers_and_their_prefixes(loaded):
    aid = loaded.add_generated_answer(IDS[0], "m1", "direct", "An answer.", extra={"k": 1}, by=ALICE)
    assert loaded.add_generated_answer(IDS[0], "m1", "direct", "An answer.", extra={}, by=ALICE) == aid
    with pytest.raises(BenchwrightError, match="already has an answer by m1 under direct"):
        loaded.add_generated_answer(IDS[0], "m1", "direct", "Another.", extra={}, by=ALICE)
    answer = loaded.get_answer(aid)
    assert answer.text == "An answer." and answer.source_format == "direct-answer"
    assert loaded.answer_ids_with_prefix(aid[:8]) == [aid]
    assert loaded.answer_ids_with_prefix(aid[:3] + "%") == []  # '%' is taken literally
    assert loaded.answer_ids_with_prefix("zzzz") == []
