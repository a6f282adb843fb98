"""The project store: append-only history, decisions and undo, notes, the queue, imports, repositories,
and two annotators (threads or processes) sharing one file."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from store_helpers import ALICE, BOB, FLASK, IDS, QUEUE, import_pairs, make_pair

import benchwright.db.store as store_module
from benchwright.core.errors import (
    BenchwrightError,
    InputFileError,
    InputProblem,
    NotFoundError,
    RepositoryError,
    StoreError,
)
from benchwright.core.models import Decision, Repository
from benchwright.db import STATUSES, Progress, QueueFilter, Store

SHA = "85c5d93cbd049c4bd0679c36fd1ddcae8c37b642"


def _count(store: Store, table: str) -> int:
    return store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


# ------------------------------------------------------------------------------------- append-only history
@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE review_decisions SET decision = 'reject'",
        "DELETE FROM review_decisions",
        "UPDATE review_notes SET text = 'rewritten'",
        "DELETE FROM review_notes",
    ],
)
def test_history_tables_refuse_update_and_delete(loaded, sql):
    loaded.record_decision(IDS[0], ALICE, "accept")
    loaded.add_note(IDS[0], ALICE, "original")
    before = (
        loaded.db.execute("SELECT * FROM review_decisions").fetchall(),
        loaded.db.execute("SELECT * FROM review_notes").fetchall(),
    )
    with pytest.raises(sqlite3.DatabaseError, match="append-only: add a new row instead"):
        loaded.db.conn.execute(sql)
    loaded.db.conn.rollback()
    after = (
        loaded.db.execute("SELECT * FROM review_decisions").fetchall(),
        loaded.db.execute("SELECT * FROM review_notes").fetchall(),
    )
    assert after == before


# --------------------------------------------------------------------------------------------- decisions
def test_record_decision_returns_the_row_and_sets_the_current_decision(loaded):
    assert loaded.current_decision(IDS[0], ALICE) is None
    first = loaded.record_decision(IDS[0], ALICE, Decision.ACCEPT)
    second = loaded.record_decision(IDS[0], ALICE, "reject")
    assert second > first
    assert loaded.current_decision(IDS[0], ALICE) is Decision.REJECT
    history = loaded.decision_history(IDS[0])
    assert [(h["id"], h["decision"], h["previous_decision"]) for h in history] == [
        (first, "accept", None),
        (second, "reject", "accept"),
    ]
    assert all(h["annotator"] == ALICE and h["reverts_id"] is None for h in history)


def test_decisions_are_per_annotator(loaded):
    loaded.record_decision(IDS[0], ALICE, "accept")
    loaded.record_decision(IDS[0], BOB, "reject")
    assert loaded.current_decision(IDS[0], ALICE) is Decision.ACCEPT
    assert loaded.current_decision(IDS[0], BOB) is Decision.REJECT
    assert loaded.current_decision(IDS[1], BOB) is None


def test_record_decision_on_an_unknown_pair_or_with_an_unknown_decision_writes_nothing(loaded):
    with pytest.raises(NotFoundError, match="qa_nope"):
        loaded.record_decision("qa_nope", ALICE, "accept")
    with pytest.raises(ValueError):
        loaded.record_decision(IDS[0], ALICE, "maybe")
    assert _count(loaded, "review_decisions") == 0
    assert _count(loaded, "review_state") == 0


def test_a_decision_is_committed_when_record_decision_returns(loaded, db_path):
    loaded.record_decision(IDS[0], ALICE, "accept")
    with sqlite3.connect(db_path) as other:
        assert other.execute(
            "SELECT decision FROM review_state WHERE qa_pair_id = ? AND annotator = ?", [IDS[0], ALICE]
        ).fetchone() == ("accept",)


# ------------------------------------------------------------------------------------------------- undo
def test_undo_with_nothing_to_undo_returns_none(loaded):
    assert loaded.undo_last(ALICE) is None
    loaded.record_decision(IDS[0], BOB, "accept")
    assert loaded.undo_last(ALICE) is None  # bob's decision is not alice's to undo
    assert loaded.current_decision(IDS[0], BOB) is Decision.ACCEPT
    assert _count(loaded, "review_decisions") == 1


def test_undos_in_sequence_walk_back_through_every_decision(loaded):
    loaded.record_decision(IDS[0], ALICE, "accept")
    loaded.record_decision(IDS[1], ALICE, "reject")
    loaded.record_decision(IDS[2], ALICE, "skip")
    assert loaded.undo_last(ALICE) == IDS[2]
    assert loaded.current_decision(IDS[2], ALICE) is None
    assert loaded.current_decision(IDS[1], ALICE) is Decision.REJECT
    assert loaded.undo_last(ALICE) == IDS[1]
    assert loaded.current_decision(IDS[1], ALICE) is None
    assert loaded.current_decision(IDS[0], ALICE) is Decision.ACCEPT
    assert loaded.undo_last(ALICE) == IDS[0]
    assert loaded.current_decision(IDS[0], ALICE) is None
    assert loaded.undo_last(ALICE) is None
    # Undo rows are appended, never rewritten: 3 decisions + 3 undos, each naming what it reverts.
    rows = loaded.db.execute("SELECT id, decision, reverts_id FROM review_decisions ORDER BY id").fetchall()
    assert len(rows) == 6
    assert [r[2] for r in rows[3:]] == [rows[2][0], rows[1][0], rows[0][0]]
    assert loaded.progress(ALICE) == Progress(total=len(QUEUE), decided=0, mine=0)


def test_undo_after_redeciding_restores_each_earlier_state(loaded):
    loaded.record_decision(IDS[0], ALICE, "accept")
    loaded.record_decision(IDS[0], ALICE, "reject")
    loaded.record_decision(IDS[0], ALICE, "skip")
    assert loaded.undo_last(ALICE) == IDS[0]
    assert loaded.current_decision(IDS[0], ALICE) is Decision.REJECT
    assert loaded.undo_last(ALICE) == IDS[0]
    assert loaded.current_decision(IDS[0], ALICE) is Decision.ACCEPT
    # Deciding again after an undo, then undoing, returns to the state before the new decision.
    loaded.record_decision(IDS[0], ALICE, "reject")
    assert loaded.undo_last(ALICE) == IDS[0]
    assert loaded.current_decision(IDS[0], ALICE) is Decision.ACCEPT
    assert loaded.undo_last(ALICE) == IDS[0]
    assert loaded.current_decision(IDS[0], ALICE) is None
    assert loaded.undo_last(ALICE) is None


def test_undo_only_touches_the_annotator_who_undoes(loaded):
    loaded.record_decision(IDS[0], ALICE, "accept")
    loaded.record_decision(IDS[0], BOB, "reject")
    assert loaded.undo_last(ALICE) == IDS[0]
    assert loaded.current_decision(IDS[0], ALICE) is None
    assert loaded.current_decision(IDS[0], BOB) is Decision.REJECT


def test_undo_works_across_closing_and_reopening_the_store(loaded, db_path):
    loaded.record_decision(IDS[0], ALICE, "accept")
    loaded.record_decision(IDS[1], ALICE, "accept")
    loaded.record_decision(IDS[1], ALICE, "reject")
    loaded.close()
    with Store.open(db_path) as again:
        assert again.undo_last(ALICE) == IDS[1]
        assert again.current_decision(IDS[1], ALICE) is Decision.ACCEPT
    with Store.open(db_path) as third:
        assert third.undo_last(ALICE) == IDS[1]
        assert third.current_decision(IDS[1], ALICE) is None
        assert third.undo_last(ALICE) == IDS[0]
        assert third.undo_last(ALICE) is None


# ------------------------------------------------------------------------------------------------ notes
def test_notes_latest_wins_per_annotator(loaded):
    assert loaded.current_note(IDS[0], ALICE) == ""
    first = loaded.add_note(IDS[0], ALICE, "first thought")
    second = loaded.add_note(IDS[0], ALICE, "second thought")
    loaded.add_note(IDS[0], BOB, "bob's note")
    assert second > first
    assert loaded.current_note(IDS[0], ALICE) == "second thought"
    assert loaded.current_note(IDS[0], BOB) == "bob's note"
    assert loaded.current_note(IDS[1], ALICE) == ""
    assert _count(loaded, "review_notes") == 3  # earlier notes are kept


def test_note_on_an_unknown_pair_raises_and_writes_nothing(loaded):
    with pytest.raises(NotFoundError):
        loaded.add_note("qa_nope", ALICE, "lost")
    assert _count(loaded, "review_notes") == 0


# ------------------------------------------------------------------------------------------------ queue
def _ids(rows) -> list[str]:
    return [r.id for r in rows]


def test_queue_page_lists_pairs_in_import_order_with_labels(loaded):
    rows = loaded.queue_page(ALICE)
    assert _ids(rows) == IDS
    assert [r.ordinal for r in rows] == list(range(1, len(QUEUE) + 1))
    r0 = rows[0]
    assert (r0.question, r0.repository, r0.qa_type, r0.category, r0.needs_reference, r0.decision) == (
        QUEUE[0].question, "flask", "What", "Implementation Details", False, None,
    )
    assert rows[6].needs_reference is True
    assert rows[5].repository == "click"


def test_queue_page_pages_with_after_ordinal_and_limit(loaded):
    page1 = loaded.queue_page(ALICE, limit=3)
    page2 = loaded.queue_page(ALICE, after_ordinal=page1[-1].ordinal, limit=3)
    page3 = loaded.queue_page(ALICE, after_ordinal=page2[-1].ordinal, limit=3)
    assert _ids(page1 + page2 + page3) == IDS
    assert len(page3) == 2
    assert loaded.queue_page(ALICE, after_ordinal=len(QUEUE)) == []


def test_queue_rows_show_the_asking_annotators_decision(loaded):
    loaded.record_decision(IDS[0], ALICE, "accept")
    loaded.record_decision(IDS[0], BOB, "reject")
    assert loaded.queue_page(ALICE, limit=1)[0].decision == "accept"
    assert loaded.queue_page(BOB, limit=1)[0].decision == "reject"
    assert loaded.queue_page("carol", limit=1)[0].decision is None


@pytest.fixture
def decided(loaded):
    """alice: #1 accepted, #2 rejected, #3 skipped, #4 accepted then undone; bob accepted #5."""
    loaded.record_decision(IDS[0], ALICE, "accept")
    loaded.record_decision(IDS[1], ALICE, "reject")
    loaded.record_decision(IDS[2], ALICE, "skip")
    loaded.record_decision(IDS[3], ALICE, "accept")
    loaded.undo_last(ALICE)
    loaded.record_decision(IDS[4], BOB, "accept")
    return loaded


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (QueueFilter(), IDS),
        (QueueFilter(status="undecided"), [IDS[2], IDS[3], IDS[4], IDS[5], IDS[6], IDS[7]]),
        (QueueFilter(status="accepted"), [IDS[0]]),
        (QueueFilter(status="rejected"), [IDS[1]]),
        (QueueFilter(status="skipped"), [IDS[2]]),
        (QueueFilter(status="needs-reference"), [IDS[6]]),
        (QueueFilter(repository="click"), [IDS[5]]),
        (QueueFilter(repository="nope"), []),
        (QueueFilter(qa_type="How"), [IDS[3], IDS[4]]),
        (QueueFilter(qa_type="Where"), [IDS[5], IDS[6]]),
        (QueueFilter(category="Business Logic"), [IDS[2], IDS[7]]),
        (QueueFilter(text="ensure_ascii"), [IDS[0], IDS[7]]),  # case-insensitive
        (QueueFilter(text="unicode"), [IDS[7]]),  # found in the reference answer
        (QueueFilter(text="provider.py"), [IDS[0]]),
        (QueueFilter(text="100%"), [IDS[1]]),  # % is literal: "100 percent" does not match
        (QueueFilter(text="snake_case"), [IDS[3]]),  # _ is literal: "snakeXcase" does not match
        (QueueFilter(text="%"), [IDS[1]]),
        (QueueFilter(text="_"), [IDS[0], IDS[3], IDS[7]]),
        (QueueFilter(text="C:\\paths"), [IDS[6]]),  # a backslash is literal too
        (QueueFilter(text=""), IDS),
        (QueueFilter(status="accepted", repository="flask", qa_type="What", category="Implementation Details",
                     text="ensure"), [IDS[0]]),
        (QueueFilter(status="rejected", qa_type="What"), []),
    ],
    ids=repr,
)
def test_queue_filters(decided, flt, expected):
    assert _ids(decided.queue_page(ALICE, flt)) == expected
    assert decided.count_filtered(ALICE, flt) == len(expected)
    # Walking the filtered queue with neighbor visits the same pairs, forwards and backwards.
    if expected:
        walk = [expected[0]]
        while (nxt := decided.neighbor(walk[-1], ALICE, flt, step=1)) is not None:
            walk.append(nxt)
        assert walk == expected
        back = [expected[-1]]
        while (prev := decided.neighbor(back[-1], ALICE, flt, step=-1)) is not None:
            back.append(prev)
        assert back == expected[::-1]


def test_status_filters_are_judged_for_the_asking_annotator(decided):
    assert _ids(decided.queue_page(BOB, QueueFilter(status="accepted"))) == [IDS[4]]
    assert decided.count_filtered(BOB, QueueFilter(status="undecided")) == len(QUEUE) - 1
    assert decided.count_filtered("carol", QueueFilter(status="undecided")) == len(QUEUE)


def test_every_documented_status_is_accepted_and_an_unknown_one_is_refused(loaded):
    for status in STATUSES:
        loaded.count_filtered(ALICE, QueueFilter(status=status))
    with pytest.raises(BenchwrightError, match="unknown status 'done'"):
        loaded.queue_page(ALICE, QueueFilter(status="done"))


def test_neighbor_from_a_pair_outside_the_filter_and_at_the_ends(decided):
    flt = QueueFilter(qa_type="How")  # pairs #4 and #5
    assert decided.neighbor(IDS[0], ALICE, flt, step=1) == IDS[3]
    assert decided.neighbor(IDS[7], ALICE, flt, step=-1) == IDS[4]
    assert decided.neighbor(IDS[0], ALICE, step=-1) is None
    assert decided.neighbor(IDS[-1], ALICE, step=1) is None
    with pytest.raises(NotFoundError):
        decided.neighbor("qa_nope", ALICE)


def test_first_undecided_prefers_unseen_pairs_then_skipped_ones(loaded):
    assert loaded.first_undecided(ALICE) == IDS[0]
    loaded.record_decision(IDS[0], ALICE, "skip")
    assert loaded.first_undecided(ALICE) == IDS[1]
    for pid in IDS[1:]:
        loaded.record_decision(pid, ALICE, "accept")
    assert loaded.first_undecided(ALICE) == IDS[0]  # only the skipped one is left
    assert loaded.first_undecided(ALICE, QueueFilter(repository="click")) is None
    loaded.record_decision(IDS[0], ALICE, "reject")
    assert loaded.first_undecided(ALICE) is None
    assert loaded.first_undecided(BOB) == IDS[0]
    assert loaded.first_undecided(BOB, QueueFilter(repository="click")) == IDS[5]


def test_first_undecided_on_an_empty_project_is_none(store):
    assert store.first_undecided(ALICE) is None
    assert store.queue_page(ALICE) == []
    assert store.progress(ALICE) == Progress(0, 0, 0)


def test_progress_counts_decided_pairs_and_mine(loaded):
    assert loaded.progress(ALICE) == Progress(total=8, decided=0, mine=0)
    loaded.record_decision(IDS[0], ALICE, "accept")
    loaded.record_decision(IDS[1], ALICE, "skip")  # a skip is not a decision
    loaded.record_decision(IDS[0], BOB, "reject")  # same pair: decided counts it once
    loaded.record_decision(IDS[2], BOB, "accept")
    assert loaded.progress(ALICE) == Progress(total=8, decided=2, mine=1)
    assert loaded.progress(BOB) == Progress(total=8, decided=2, mine=2)
    loaded.record_decision(IDS[0], ALICE, "reject")  # changing one's mind counts once
    assert loaded.progress(ALICE) == Progress(total=8, decided=2, mine=1)
    loaded.undo_last(BOB)
    assert loaded.progress(BOB) == Progress(total=8, decided=1, mine=1)


def test_facets_list_distinct_labels(loaded):
    assert loaded.facets() == {
        "repository": ["click", "flask"],
        "qa_type": ["How", "What", "Where", "Why"],
        "category": ["Business Logic", "Implementation Details", "Project Architecture"],
        "selection": [],
    }


def test_get_pair_round_trips_fields_and_provenance(loaded):
    pair = loaded.get_pair(IDS[0])
    assert pair == QUEUE[0].model_copy(update={"source": pair.source})
    assert pair.source.format == "jsonl" and pair.source.line == 1 and pair.source.upstream_id == "u1"
    assert loaded.ordinal_of(IDS[5]) == 6
    with pytest.raises(NotFoundError, match="qa_nope"):
        loaded.get_pair("qa_nope")


# ---------------------------------------------------------------------------------------------- imports
def test_importing_the_same_file_twice_adds_nothing_the_second_time(loaded, tmp_path):
    again = import_pairs(loaded, tmp_path, QUEUE)
    assert (again.added, again.already_present, again.batch_id) == (0, len(QUEUE), None)
    assert loaded.count_pairs() == len(QUEUE)
    assert _count(loaded, "import_batches") == 1


def test_import_report_and_batch_row(store, tmp_path):
    store.add_repository(FLASK, ALICE)
    pairs = [make_pair("q1?", line=1), make_pair("q1?", line=2), make_pair("q2?", None, line=3)]
    report = import_pairs(store, tmp_path, pairs, repository="flask")
    assert (report.read, report.added, report.duplicates_in_file, report.already_present) == (3, 2, 1, 0)
    assert report.needs_reference == [pairs[2].id]
    [batch] = list(store.db.query("SELECT * FROM import_batches"))
    assert batch["id"] == report.batch_id
    assert batch["file_sha256"] == hashlib.sha256((tmp_path / "input.jsonl").read_bytes()).hexdigest()
    assert batch["file_path"] == str((tmp_path / "input.jsonl").resolve())
    assert (batch["read_count"], batch["added_count"], batch["duplicate_count"], batch["repository"]) == (
        3, 2, 1, "flask",
    )
    assert batch["created_by"] == ALICE
    assert {r[0] for r in store.db.execute("SELECT import_batch_id FROM qa_pairs")} == {report.batch_id}


def test_a_second_import_continues_the_queue_order(loaded, tmp_path):
    more = [make_pair("later 1?"), QUEUE[0], make_pair("later 2?")]
    report = import_pairs(loaded, tmp_path, more, name="more.jsonl")
    assert (report.added, report.already_present) == (2, 1)
    assert _ids(loaded.queue_page(ALICE))[-2:] == [more[0].id, more[2].id]
    assert loaded.ordinal_of(more[2].id) == len(QUEUE) + 2


def test_import_with_problems_writes_nothing_unless_skip_invalid(store, tmp_path):
    store.add_repository(FLASK, ALICE)
    problem = InputProblem("input.jsonl", 2, "question", "required field is missing")
    with pytest.raises(InputFileError, match="required field is missing"):
        import_pairs(store, tmp_path, [make_pair("ok?")], problems=(problem,))
    assert store.count_pairs() == 0
    assert _count(store, "import_batches") == 0
    report = import_pairs(store, tmp_path, [make_pair("ok?")], problems=(problem,), skip_invalid=True)
    assert report.added == 1 and report.skipped == [problem]
    row = store.db.execute("SELECT skipped_count, skipped_json FROM import_batches").fetchone()
    assert row[0] == 1 and json.loads(row[1]) == [str(problem)]


def test_import_of_a_file_with_no_records_is_refused(store, tmp_path):
    with pytest.raises(InputFileError, match="contains no records"):
        import_pairs(store, tmp_path, [], read=0)


def test_import_naming_an_unregistered_repository_writes_nothing(store, tmp_path):
    store.add_repository(FLASK, ALICE)
    newcomer = Repository(name="acme/newcomer", commit="abc123")
    pairs = [make_pair("fine?"), make_pair("ghostly?", repository="ghost")]
    with pytest.raises(NotFoundError, match="'ghost' is not registered"):
        import_pairs(store, tmp_path, pairs, repositories=(newcomer,))
    assert store.count_pairs() == 0
    assert _count(store, "import_batches") == 0
    assert [r.name for r in store.repositories()] == ["flask"]  # the file's repositories were not registered


def test_import_registers_the_repositories_the_file_names(store, tmp_path):
    repo = Repository(name="acme/widget", url="https://github.com/acme/widget", commit="abc1234def")
    report = import_pairs(store, tmp_path, [make_pair("w?", repository="acme/widget")], repositories=(repo,))
    assert report.repositories_added == ["acme/widget"]
    assert store.get_repository("acme/widget") == repo
    again = import_pairs(store, tmp_path, [make_pair("w?", repository="acme/widget")], repositories=(repo,))
    assert again.repositories_added == [] and again.added == 0


def test_import_naming_a_registered_repository_at_another_commit_is_refused(store, tmp_path):
    store.add_repository(Repository(name="acme/widget", commit="abc1234"), ALICE)
    other = Repository(name="acme/widget", commit="fff9999")
    with pytest.raises(RepositoryError, match="fff9999") as info:
        import_pairs(store, tmp_path, [make_pair("w?", repository="acme/widget")], repositories=(other,))
    assert "abc1234" in str(info.value)
    assert store.count_pairs() == 0
    # The same commit, given in full or in another case, is the same pin.
    same = Repository(name="acme/widget", commit="ABC1234FFFF")
    report = import_pairs(store, tmp_path, [make_pair("w?", repository="acme/widget")], repositories=(same,))
    assert report.added == 1
    assert store.get_repository("acme/widget").commit == "abc1234"


def test_import_naming_a_commit_of_a_repository_registered_by_version_only_is_refused(store, tmp_path):
    """A version label cannot be checked against a commit: the pairs might be about other code."""
    store.add_repository(Repository(name="acme/widget", version_label="9.9", local_path=str(tmp_path)), ALICE)
    pinned = Repository(name="acme/widget", commit="abc1234")
    with pytest.raises(RepositoryError, match=r"acme/widget@9\.9"):
        import_pairs(store, tmp_path, [make_pair("w?", repository="acme/widget")], repositories=(pinned,))
    assert store.count_pairs() == 0
    # A file that names the repository without a commit has nothing to contradict.
    unpinned = Repository(name="acme/widget")
    report = import_pairs(store, tmp_path, [make_pair("w?", repository="acme/widget")], repositories=(unpinned,))
    assert report.added == 1


def test_a_failure_half_way_through_an_import_rolls_back_everything(store, tmp_path, monkeypatch):
    newcomer = Repository(name="acme/newcomer", commit="abc123")
    pairs = [make_pair(f"q{i}?", repository="acme/newcomer") for i in range(5)]
    real = store_module._pair_values

    def explode_on_the_fourth(p, ordinal, file_name):
        if ordinal == 4:
            raise sqlite3.OperationalError("disk I/O error")
        return real(p, ordinal, file_name)

    monkeypatch.setattr(store_module, "_pair_values", explode_on_the_fourth)
    with pytest.raises(sqlite3.OperationalError):
        import_pairs(store, tmp_path, pairs, repositories=(newcomer,))
    assert store.count_pairs() == 0
    assert _count(store, "import_batches") == 0
    assert store.repositories() == []
    monkeypatch.setattr(store_module, "_pair_values", real)
    assert import_pairs(store, tmp_path, pairs, repositories=(newcomer,)).added == 5


# ------------------------------------------------------------------------------------------ repositories
def test_adding_the_same_repository_twice_is_a_no_op(store):
    assert store.add_repository(FLASK, ALICE) == FLASK
    assert store.add_repository(FLASK, BOB) == FLASK
    assert store.repositories() == [FLASK]
    assert store.db.execute("SELECT created_by FROM repositories").fetchall() == [(ALICE,)]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (Repository(name="r", commit=SHA), Repository(name="r", commit="1234567")),
        (Repository(name="r", commit="abc1234"), Repository(name="r", commit="abc1235")),
        (Repository(name="r", version_label="3.1.1"), Repository(name="r", version_label="3.1.2")),
    ],
)
def test_registering_a_name_again_with_another_pin_is_refused(store, first, second):
    store.add_repository(first, ALICE)
    with pytest.raises(RepositoryError) as info:
        store.add_repository(second, ALICE)
    assert first.pin in str(info.value) and second.pin in str(info.value)
    assert store.repositories() == [first]


def test_a_short_commit_matches_the_full_one_in_either_case(store):
    store.add_repository(Repository(name="r", commit=SHA), ALICE)
    assert store.add_repository(Repository(name="r", commit=SHA[:7].upper()), ALICE).commit == SHA


def test_an_entry_without_a_checkout_gains_the_local_path_later(store, tmp_path):
    store.add_repository(Repository(name="flask", commit=SHA[:7]), ALICE)  # declared, e.g. by an import
    local = Repository(name="flask", commit=SHA, local_path=str(tmp_path), commit_verified=True,
                       url="https://github.com/pallets/flask", language="Python")
    saved = store.add_repository(local, BOB)
    assert saved.local_path == str(tmp_path)
    assert (saved.commit, saved.commit_verified) == (SHA, True)
    assert (saved.url, saved.language) == ("https://github.com/pallets/flask", "Python")
    assert store.get_repository("flask") == saved
    # The same checkout again is a no-op; another path is refused.
    assert store.add_repository(local, BOB) == saved
    elsewhere = local.model_copy(update={"local_path": str(tmp_path / "other")})
    with pytest.raises(RepositoryError, match="already registered at"):
        store.add_repository(elsewhere, BOB)
    assert store.get_repository("flask").local_path == str(tmp_path)


def test_unknown_repository_is_not_found_unless_missing_ok(store):
    with pytest.raises(NotFoundError, match="benchwright repos add nope"):
        store.get_repository("nope")
    assert store.get_repository("nope", missing_ok=True) is None


# ---------------------------------------------------------------------------------- sharing the project
def test_two_annotators_on_one_file_see_each_others_decisions(loaded, db_path):
    with Store.open(db_path) as bobs:
        for i, pid in enumerate(IDS[:4]):
            loaded.record_decision(pid, ALICE, "accept" if i % 2 else "reject")
            bobs.record_decision(pid, BOB, "skip" if i % 2 else "accept")
            assert bobs.current_decision(pid, ALICE) is (Decision.ACCEPT if i % 2 else Decision.REJECT)
            assert loaded.current_decision(pid, BOB) is (Decision.SKIP if i % 2 else Decision.ACCEPT)
        bobs.add_note(IDS[0], BOB, "from bob")
        assert loaded.current_note(IDS[0], BOB) == "from bob"
        assert loaded.progress(ALICE) == bobs.progress(ALICE) == Progress(8, 4, 4)
        assert bobs.undo_last(BOB) == IDS[3]
        assert loaded.current_decision(IDS[3], BOB) is None
        assert loaded.current_decision(IDS[3], ALICE) is Decision.ACCEPT


def test_two_stores_writing_at_the_same_time_from_threads_both_succeed(loaded, db_path):
    """Each write waits for the other's instead of failing with 'database is locked'."""
    errors: list[BaseException] = []

    def annotate(store: Store, who: str) -> None:
        try:
            for _ in range(10):
                for pid in IDS:
                    store.record_decision(pid, who, "accept")
        except BaseException as e:
            errors.append(e)

    with Store.open(db_path) as bobs:
        threads = [threading.Thread(target=annotate, args=a) for a in ((loaded, ALICE), (bobs, BOB))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert _count(loaded, "review_decisions") == 2 * 10 * len(IDS)


def test_threads_sharing_one_store_can_read_while_another_writes(loaded):
    """The app's worker threads share one Store: reads must not break a write transaction, or vice versa."""
    errors: list[BaseException] = []
    stop = time.monotonic() + 1.0
    writes = 0

    def reader():
        try:
            while time.monotonic() < stop:
                loaded.get_repository("flask")
                loaded.repositories()
                loaded.decision_history(IDS[0])
                loaded.queue_page(ALICE, limit=3)
        except BaseException as e:
            errors.append(e)

    def writer():
        nonlocal writes
        try:
            while time.monotonic() < stop:
                loaded.record_decision(IDS[writes % len(IDS)], ALICE, "accept")
                writes += 1
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=reader), threading.Thread(target=reader), threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert writes > 0
    assert _count(loaded, "review_decisions") == writes
    assert loaded.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


_HOLD_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute(
    "INSERT INTO review_decisions (qa_pair_id, annotator, decision, created_at) VALUES (?, 'bob', 'reject', 'x')",
    [sys.argv[2]],
)
print("locked", flush=True)
time.sleep(float(sys.argv[3]))
conn.execute("COMMIT")
"""


def _hold_write_lock(db_path: Path, pair_id: str, seconds: float) -> subprocess.Popen:
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(db_path), pair_id, str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "locked"
    return child


def test_a_write_waits_for_another_process_holding_the_write_lock(loaded, db_path):
    child = _hold_write_lock(db_path, IDS[1], 0.7)
    try:
        started = time.monotonic()
        loaded.record_decision(IDS[0], ALICE, "accept")
        waited = time.monotonic() - started
    finally:
        assert child.wait(timeout=30) == 0
    assert waited > 0.3  # it waited for the child's commit...
    assert loaded.current_decision(IDS[0], ALICE) is Decision.ACCEPT  # ...then succeeded
    assert loaded.current_decision(IDS[1], BOB) is Decision.REJECT  # and sees the child's write


def test_a_write_blocked_for_longer_than_the_busy_timeout_raises_store_error(db_path, monkeypatch, tmp_path):
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.2)
    with Store.open(db_path) as store:
        store.add_repository(FLASK, ALICE)
        import_pairs(store, tmp_path, QUEUE[:2])
        child = _hold_write_lock(db_path, IDS[1], 0.8)
        try:
            with pytest.raises(StoreError, match="another process held the project"):
                store.record_decision(IDS[0], ALICE, "accept")
        finally:
            assert child.wait(timeout=30) == 0
        assert store.current_decision(IDS[0], ALICE) is None
        store.record_decision(IDS[0], ALICE, "accept")  # the store is usable afterwards
        assert store.current_decision(IDS[0], ALICE) is Decision.ACCEPT


_DECIDE_FOREVER = """
import sys
from benchwright.db import Store
store = Store.open(sys.argv[1])
ids = sys.argv[2:]
i = 0
while True:
    row = store.record_decision(ids[i % len(ids)], "alice", ("accept", "reject", "skip")[i % 3])
    print(row, flush=True)
    i += 1
"""


def test_every_decision_returned_before_a_kill_9_survives(loaded, db_path):
    loaded.close()
    child = subprocess.Popen(
        [sys.executable, "-c", _DECIDE_FOREVER, str(db_path), *IDS], stdout=subprocess.PIPE, text=True
    )
    printed: list[int] = []
    try:
        while len(printed) < 150:
            line = child.stdout.readline()
            assert line, "the child stopped early"
            printed.append(int(line))
    finally:
        os.kill(child.pid, signal.SIGKILL)
        rest, _ = child.communicate(timeout=30)
    # Lines the child printed before the kill count too; a torn last line (no newline) is not an id.
    printed += [int(x) for x in rest.split("\n")[:-1]]
    assert child.returncode == -signal.SIGKILL
    with Store.open(db_path) as store:
        assert store.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        in_db = {r[0] for r in store.db.execute("SELECT id FROM review_decisions")}
        assert set(printed) <= in_db
        # review_state still agrees with the log for every pair.
        for pid in IDS:
            latest = store.db.execute(
                "SELECT decision FROM review_decisions WHERE qa_pair_id = ? AND annotator = 'alice' "
                "ORDER BY id DESC LIMIT 1", [pid],
            ).fetchone()
            current = store.current_decision(pid, ALICE)
            assert (current.value if current else None) == (latest[0] if latest else None)
        store.record_decision(IDS[0], ALICE, "accept")  # and the project takes new work
