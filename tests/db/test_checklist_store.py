"""Checklist versions in the store: numbering, provenance, validity gate, drafts, compare-and-set between two
stores on one file, restore, append-only history, the current-version table, queue filters, imports."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from store_helpers import ALICE, BOB, FLASK, IDS, QUEUE, import_pairs, make_pair

from benchwright.core.checklist import (
    Checklist,
    ChecklistItem,
    ItemKind,
    Origin,
    binary_rubric,
    clarity_item,
    validate,
)
from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.db import (
    CHECKLIST_FILTERS,
    ChecklistConflictError,
    InvalidChecklistError,
    QueueFilter,
    Store,
)


def checklist(*weights: int, tag: str = "") -> Checklist:
    return Checklist(items=[
        *(ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=f"point {n}{tag}", weight=w, rubric=binary_rubric(w))
          for n, w in enumerate(weights, start=1)),
        clarity_item(),
    ])


VALID = checklist(5, 4)
OTHER = checklist(3, 3, 3, tag=" (edited)")
INVALID = checklist(5, 3)  # weights sum to 8


def rows(store: Store, sql: str, *params) -> list[tuple]:
    return store.db.conn.execute(sql, params).fetchall()


def count_versions(store: Store) -> int:
    return rows(store, "SELECT count(*) FROM checklist_versions")[0][0]


# --------------------------------------------------------------------------------------------- saving
def test_versions_are_numbered_per_pair_with_provenance(loaded):
    before = datetime.now(UTC)
    v1 = loaded.save_checklist(IDS[0], VALID, author=ALICE, origin="generated", expected_version=None)
    v2 = loaded.save_checklist(IDS[0], OTHER, author=BOB, expected_version=1)
    v3 = loaded.save_checklist(IDS[0], VALID, author=ALICE, origin=Origin.ADJUDICATED)  # "any": no check
    other_pair = loaded.save_checklist(IDS[1], OTHER, author=BOB, origin="imported", source_format="rubberduck")
    assert [(v.version, v.parent_version, v.origin, v.author) for v in (v1, v2, v3)] == [
        (1, None, "generated", ALICE), (2, 1, "edited", BOB), (3, 2, "adjudicated", ALICE)]
    assert (other_pair.version, other_pair.parent_version, other_pair.source_format) == (1, None, "rubberduck")
    assert v1.checklist == VALID and v2.checklist == OTHER
    assert all(v.is_valid and not v.is_draft and v.violations == [] and v.restored_from is None for v in (v1, v2, v3))
    for v in (v1, v2, v3):
        at = datetime.fromisoformat(v.created_at)
        assert at.utcoffset() == timedelta(0)  # UTC
        assert before - timedelta(seconds=1) <= at <= datetime.now(UTC)
    assert v1.created_at <= v2.created_at <= v3.created_at
    assert loaded.checklist_version(IDS[0]) == v3
    assert loaded.checklist_version(IDS[0], 2) == v2
    assert [v.version for v in loaded.checklist_history(IDS[0])] == [1, 2, 3]
    assert loaded.first_version_of_origin(IDS[0]) == v1
    assert loaded.first_version_of_origin(IDS[0], "edited") == v2
    assert loaded.first_version_of_origin(IDS[0], "imported") is None


def test_unknown_origin_and_pair_are_refused_without_writing(loaded):
    with pytest.raises(ValueError):
        loaded.save_checklist(IDS[0], VALID, author=ALICE, origin="guessed")
    with pytest.raises(NotFoundError):
        loaded.save_checklist("qa_nope", VALID, author=ALICE)
    assert count_versions(loaded) == 0
    assert loaded.checklist_version(IDS[0]) is None
    assert loaded.checklist_history(IDS[0]) == []
    with pytest.raises(NotFoundError, match="no checklist version 1"):
        loaded.checklist_version(IDS[0], 1)


def test_an_invalid_checklist_is_refused_unless_it_is_a_draft(loaded):
    with pytest.raises(InvalidChecklistError) as info:
        loaded.save_checklist(IDS[0], INVALID, author=ALICE)
    assert [v.rule for v in info.value.violations] == ["weight-sum"]
    assert "only be kept as a draft" in str(info.value) and "sum to 8" in str(info.value)
    assert isinstance(info.value, BenchwrightError)
    assert count_versions(loaded) == 0 and rows(loaded, "SELECT count(*) FROM checklist_current")[0][0] == 0

    draft = loaded.save_checklist(IDS[0], INVALID, author=ALICE, draft=True)
    assert (draft.version, draft.is_draft, draft.is_valid) == (1, True, False)
    assert draft.violations == [str(v) for v in validate(INVALID)] == ["knowledge weights sum to 8; they must sum to 9"]
    assert draft.checklist == INVALID  # kept as it was: nothing rescaled
    valid_draft = loaded.save_checklist(IDS[0], VALID, author=ALICE, draft=True)
    assert (valid_draft.version, valid_draft.is_draft, valid_draft.is_valid) == (2, True, True)


# ----------------------------------------------------------------------------------- compare-and-set
def test_a_save_based_on_a_stale_version_is_refused(loaded, db_path):
    loaded.save_checklist(IDS[0], VALID, author=ALICE, expected_version=None)
    with Store.open(db_path) as first, Store.open(db_path) as second:
        base_first = first.checklist_version(IDS[0]).version
        base_second = second.checklist_version(IDS[0]).version
        assert base_first == base_second == 1
        saved = first.save_checklist(IDS[0], OTHER, author=ALICE, expected_version=base_first)
        assert saved.version == 2
        with pytest.raises(ChecklistConflictError) as info:
            second.save_checklist(IDS[0], checklist(9, tag=" bob"), author=BOB, expected_version=base_second)
        assert "now at version 2" in str(info.value) and "opened version 1" in str(info.value)
        assert [v.version for v in second.checklist_history(IDS[0])] == [1, 2]
        assert second.checklist_version(IDS[0]).checklist == OTHER
        # reloading and applying the edit again works
        again = second.save_checklist(IDS[0], checklist(9, tag=" bob"), author=BOB, expected_version=2)
        assert (again.version, again.parent_version, again.author) == (3, 2, BOB)
    assert count_versions(loaded) == 3


def test_expected_none_means_no_checklist_yet(loaded):
    loaded.save_checklist(IDS[0], VALID, author=ALICE, expected_version=None)
    with pytest.raises(ChecklistConflictError):
        loaded.save_checklist(IDS[0], OTHER, author=BOB, expected_version=None)
    with pytest.raises(ChecklistConflictError):
        loaded.save_checklist(IDS[0], OTHER, author=BOB, expected_version=7)
    assert count_versions(loaded) == 1


# ------------------------------------------------------------------------------------------- restore
def test_restore_appends_a_copy_as_a_new_version(loaded):
    loaded.save_checklist(IDS[0], VALID, author=ALICE, origin="generated")
    loaded.save_checklist(IDS[0], OTHER, author=BOB)
    restored = loaded.restore_checklist(IDS[0], 1, author=BOB, expected_version=2)
    assert (restored.version, restored.restored_from, restored.parent_version, restored.origin, restored.author) == (
        3, 1, 2, "edited", BOB)
    assert restored.checklist == VALID and restored.is_valid and not restored.is_draft
    assert [v.version for v in loaded.checklist_history(IDS[0])] == [1, 2, 3]
    assert loaded.checklist_version(IDS[0], 2).checklist == OTHER  # nothing rewritten
    with pytest.raises(ChecklistConflictError):
        loaded.restore_checklist(IDS[0], 2, author=BOB, expected_version=2)
    with pytest.raises(NotFoundError):
        loaded.restore_checklist(IDS[0], 9, author=BOB)
    with pytest.raises(NotFoundError):
        loaded.restore_checklist(IDS[1], 1, author=BOB)
    assert count_versions(loaded) == 3


def test_a_restored_draft_stays_a_draft(loaded):
    loaded.save_checklist(IDS[0], INVALID, author=ALICE, draft=True)
    loaded.save_checklist(IDS[0], VALID, author=ALICE)
    restored = loaded.restore_checklist(IDS[0], 1, author=ALICE)
    assert (restored.version, restored.is_draft, restored.is_valid, restored.checklist) == (3, True, False, INVALID)


def test_versions_survive_close_and_reopen(loaded, db_path):
    saved = [loaded.save_checklist(IDS[0], c, author=ALICE, draft=True) for c in (VALID, INVALID, OTHER)]
    loaded.close()
    with Store.open(db_path) as again:
        assert again.checklist_history(IDS[0]) == saved
        assert again.checklist_version(IDS[0]) == saved[-1]


# ------------------------------------------------------------------------------------ append-only log
@pytest.mark.parametrize("sql", [
    "UPDATE checklist_versions SET author = 'mallory'",
    "UPDATE checklist_versions SET items_json = '{}' WHERE version = 1",
    "DELETE FROM checklist_versions",
    "DELETE FROM checklist_versions WHERE version = 2",
])
def test_checklist_versions_refuse_update_and_delete(loaded, db_path, sql):
    loaded.save_checklist(IDS[0], VALID, author=ALICE)
    loaded.save_checklist(IDS[0], OTHER, author=ALICE)
    with sqlite3.connect(db_path) as conn, pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute(sql)
    assert [(v.version, v.author) for v in loaded.checklist_history(IDS[0])] == [(1, ALICE), (2, ALICE)]


def test_checklist_current_follows_the_latest_version(loaded):
    def current():
        return rows(loaded, "SELECT version, origin, is_draft, is_valid FROM checklist_current WHERE qa_pair_id = ?",
                    IDS[0])

    assert current() == []
    loaded.save_checklist(IDS[0], VALID, author=ALICE, origin="generated")
    assert current() == [(1, "generated", 0, 1)]
    loaded.save_checklist(IDS[0], INVALID, author=ALICE, draft=True)
    assert current() == [(2, "edited", 1, 0)]
    loaded.restore_checklist(IDS[0], 1, author=ALICE)
    assert current() == [(3, "edited", 0, 1)]
    version_id = rows(loaded, "SELECT id FROM checklist_versions WHERE qa_pair_id = ? AND version = 3", IDS[0])[0][0]
    assert rows(loaded, "SELECT version_id FROM checklist_current WHERE qa_pair_id = ?", IDS[0]) == [(version_id,)]
    assert [(pid, v.version) for pid, v in loaded.current_checklists()] == [(IDS[0], 3)]


# -------------------------------------------------------------------------------------- queue filters
def test_queue_filters_on_the_current_checklist(loaded):
    assert QUEUE[5].repository == "click"
    loaded.save_checklist(IDS[1], VALID, author=ALICE)                      # valid
    loaded.save_checklist(IDS[2], INVALID, author=ALICE, draft=True)        # invalid draft
    loaded.save_checklist(IDS[3], VALID, author=ALICE, draft=True)          # valid, but kept as a draft
    loaded.save_checklist(IDS[4], INVALID, author=ALICE, draft=True)
    loaded.save_checklist(IDS[4], VALID, author=ALICE)                      # draft fixed: now valid
    loaded.save_checklist(IDS[5], VALID, author=ALICE)
    loaded.save_checklist(IDS[5], INVALID, author=ALICE, draft=True)        # valid, then a draft on top

    def ids(name: str) -> list[str]:
        flt = QueueFilter(checklist=name)
        got = [r.id for r in loaded.queue_page(ALICE, flt)]
        assert loaded.count_filtered(ALICE, flt) == len(got)
        return got

    assert ids("no-checklist") == [IDS[0], IDS[6], IDS[7]]
    assert ids("valid-checklist") == [IDS[1], IDS[4]]
    assert ids("invalid-checklist") == [IDS[2], IDS[5]]
    assert ids("draft-checklist") == [IDS[2], IDS[3], IDS[5]]
    assert set(CHECKLIST_FILTERS) == {"no-checklist", "invalid-checklist", "draft-checklist", "valid-checklist",
                                      "stale-checklist"}
    # combined with other filters, and in the previous/next walk
    assert [r.id for r in loaded.queue_page(ALICE, QueueFilter(checklist="invalid-checklist", repository="click"))] \
        == [IDS[5]]
    assert loaded.count_filtered(ALICE, QueueFilter(checklist="no-checklist", repository="click")) == 0
    assert loaded.neighbor(IDS[0], ALICE, QueueFilter(checklist="no-checklist")) == IDS[6]
    assert loaded.first_undecided(ALICE, QueueFilter(checklist="valid-checklist")) == IDS[1]
    with pytest.raises(BenchwrightError, match="unknown checklist filter"):
        loaded.queue_page(ALICE, QueueFilter(checklist="broken"))


# -------------------------------------------------------------------------------------------- imports
def test_import_checklists_is_all_or_nothing(loaded):
    loaded.save_checklist(IDS[0], VALID, author=ALICE)
    entries = [(IDS[0], OTHER, "benchwright"), (IDS[1], INVALID, "rubberduck"), ("qa_unknown", VALID, None)]
    with pytest.raises(NotFoundError):
        loaded.import_checklists(entries, author=BOB)
    assert count_versions(loaded) == 1
    assert loaded.checklist_version(IDS[0]).checklist == VALID
    assert loaded.checklist_version(IDS[1]) is None

    saved = loaded.import_checklists([*entries[:2], (IDS[1], VALID, "checkeval")], author=BOB)
    assert saved == [(IDS[0], 2), (IDS[1], 1), (IDS[1], 2)]
    first, second = loaded.checklist_history(IDS[1])
    assert (first.origin, first.is_draft, first.is_valid, first.source_format, first.author) == (
        "imported", True, False, "rubberduck", BOB)
    assert first.violations == ["knowledge weights sum to 8; they must sum to 9"]
    assert (second.origin, second.is_draft, second.is_valid, second.parent_version) == ("imported", False, True, 1)
    assert loaded.checklist_version(IDS[0]).parent_version == 1


def test_find_pairs_by_question_ignores_white_space_at_the_ends(store, tmp_path):
    store.add_repository(FLASK, ALICE)
    pairs = [make_pair("How are routes registered?\n", "By decorators.", line=1),
             make_pair("  How are routes registered?", "Lazily.", line=2),
             make_pair("How are routes registered? Really?", "Yes.", line=3),
             make_pair("\tWhere is the CLI?\t", "In cli.py.", line=4)]
    import_pairs(store, tmp_path, pairs)
    assert store.find_pairs_by_question(" How are routes registered?  ") == [pairs[0].id, pairs[1].id]
    assert store.find_pairs_by_question("Where is the CLI?") == [pairs[3].id]
    assert store.find_pairs_by_question("where is the cli?") == []
    assert store.find_pairs_by_question("   ") == []

