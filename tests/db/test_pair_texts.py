"""Pair identity and text versions (issue 12 item 14): white space never makes a twin of a pair, a record with a
known question and another answer is a possible update (listed, not added), ``update=True`` records it as a new
text version (origin ``imported``), and a project made before text versions existed still knows its pairs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils
from store_helpers import ALICE, BOB, FLASK, make_pair

import benchwright.db.store as store_module
from benchwright.core.errors import ImportReport
from benchwright.core.importers import ParseResult
from benchwright.core.models import QAPair, TextOrigin, utc_now
from benchwright.db import Store
from benchwright.db.migrations import migrations

ANSWER = "The app registers it in two steps:\nfirst the rule,\nthen the view function."
# The same answer as a re-export writes it: trailing spaces at the end of an inner line, CRLF line ends.
ANSWER_SPACED = "The app registers it in two steps:   \r\nfirst the rule,\t\r\nthen the view function.\r\n"
QUESTION = "How does Flask register a URL rule?"

_OLD_PAIR_COLUMNS = store_module._PAIR_COLUMNS.replace(", split, cluster_origin", "")
"""The pair columns before m020 (split, cluster_origin), for projects written by older code."""


def imp(store: Store, folder: Path, pairs: list[QAPair], *, name: str = "input.jsonl", update: bool = False,
        annotator: str = ALICE) -> ImportReport:
    """Apply the pairs as if read from ``folder/name`` (lines numbered by position)."""
    f = folder / name
    f.write_text("".join(json.dumps({"question": p.question}) + "\n" for p in pairs), encoding="utf-8")
    pairs = [p.model_copy(update={"source": p.source.model_copy(update={"file": str(f), "line": n})})
             for n, p in enumerate(pairs, start=1)]
    result = ParseResult("jsonl", str(f), read=len(pairs), pairs=pairs)
    return store.apply_import(result, annotator=annotator, file_path=f, repository="flask", update=update)


@pytest.fixture
def flask(store: Store) -> Store:
    store.add_repository(FLASK, ALICE)
    return store


def rows(store: Store, sql: str, *params) -> list[tuple]:
    return store.db.conn.execute(sql, params).fetchall()


# ------------------------------------------------------------------------------------------- white space
def test_trailing_spaces_inside_an_answer_do_not_make_a_twin_of_a_reviewed_pair(flask, tmp_path):
    imp(flask, tmp_path, [make_pair(QUESTION, ANSWER)])
    [pair] = flask.queue_page(ALICE)
    flask.record_decision(pair.id, ALICE, "accept")
    spaced = make_pair(QUESTION, ANSWER_SPACED)
    assert spaced.id != pair.id  # the id hashes the text stripped only at its ends ...
    report = imp(flask, tmp_path, [spaced], name="again.jsonl")
    assert (report.added, report.already_present, report.possible_updates) == (0, 1, [])  # ... identity does not
    assert flask.count_pairs() == 1
    assert flask.current_decision(pair.id, ALICE).value == "accept"


def test_white_space_twins_in_one_file_are_one_pair(flask, tmp_path):
    report = imp(flask, tmp_path, [make_pair(QUESTION, ANSWER), make_pair(QUESTION + "  ", ANSWER_SPACED)])
    assert (report.added, report.duplicates_in_file) == (1, 1)


# ---------------------------------------------------------------------------------------- possible updates
def test_a_known_question_with_another_answer_is_a_possible_update_not_a_new_pair(flask, tmp_path):
    imp(flask, tmp_path, [make_pair(QUESTION, ANSWER), make_pair("Why blueprints?", "To group views.")])
    first, _ = flask.queue_page(ALICE)
    flask.record_decision(first.id, BOB, "reject")
    flask.save_checklist(first.id, _checklist(), author=BOB)
    report = imp(flask, tmp_path, [make_pair("Why blueprints?", "To group views."),
                                   make_pair("How does Flask register  a URL rule?", "With add_url_rule.")],
                 name="v2.jsonl")
    assert (report.added, report.already_present, report.updated) == (0, 1, [])
    [u] = report.possible_updates
    assert (u.where, u.pair_ids, u.ordinals) == (f"{tmp_path / 'v2.jsonl'}, line 2", [first.id], [1])
    assert (u.version, u.refused, u.reviewed_by, u.has_checklist) == (None, None, [BOB], True)
    assert flask.count_pairs() == 2 and len(flask.text_versions(first.id)) == 1
    assert flask.get_pair(first.id).reference_answer == ANSWER  # nothing changed
    assert report.batch_id is None  # nothing was written


def test_update_records_a_new_text_version_and_the_pair_shows_it(flask, tmp_path):
    imp(flask, tmp_path, [make_pair(QUESTION, None)])
    [pair] = flask.queue_page(ALICE)
    assert pair.needs_reference
    flask.record_decision(pair.id, BOB, "revise")
    new_file = [make_pair(QUESTION, "With add_url_rule.")]
    report = imp(flask, tmp_path, new_file, name="v2.jsonl", update=True, annotator="carol")
    assert report.possible_updates == []
    [u] = report.updated
    assert (u.version, u.pair_ids, u.reviewed_by, u.line) == (2, [pair.id], [BOB], 1)
    # the current text is the latest version; the id and the review stay
    current = flask.get_pair(pair.id)
    assert (current.question, current.reference_answer, current.needs_reference) == (QUESTION, "With add_url_rule.",
                                                                                     False)
    assert flask.current_decision(pair.id, BOB).value == "revise"
    v1, v2 = flask.text_versions(pair.id)
    assert (v1.version, v1.origin, v1.reference_answer, v1.created_by) == (1, TextOrigin.ORIGINAL, None, ALICE)
    assert (v2.version, v2.origin, v2.reference_answer, v2.created_by) == (2, TextOrigin.IMPORTED,
                                                                           "With add_url_rule.", "carol")
    assert v2.source == "v2.jsonl line 1"
    assert flask.text_version_counts() == {"pairs": 1, "versions": 1, "imported": 1}
    [event] = [e for e in flask.events_of(pair.id) if e["kind"] == "text"]
    assert event["actor"] == "carol" and event["before"]["version"] == 1 and event["after"]["origin"] == "imported"
    [(updated, possible)] = rows(flask, "SELECT updated_count, possible_update_count FROM import_batches "
                                        "WHERE id = ?", report.batch_id)
    assert (updated, possible) == (1, 0)
    # re-importing either file adds nothing: each text is a version of the pair
    for name, pairs in (("v2.jsonl", new_file), ("input.jsonl", [make_pair(QUESTION, None)])):
        again = imp(flask, tmp_path, pairs, name=name, update=True)
        assert (again.added, again.already_present, again.updated, again.possible_updates) == (0, 1, [], [])
    assert len(flask.text_versions(pair.id)) == 2


def test_update_is_refused_when_the_question_is_ambiguous(flask, tmp_path):
    imp(flask, tmp_path, [make_pair(QUESTION, "One answer."), make_pair(QUESTION, "Another answer."),
                          make_pair("Why blueprints?", "To group views.")])
    report = imp(flask, tmp_path, [make_pair(QUESTION, "A third answer."),
                                   make_pair("Why blueprints?", "To group related views."),
                                   make_pair("Why blueprints?", "For reuse.")], name="v2.jsonl", update=True)
    assert report.updated == [] and flask.text_version_counts()["pairs"] == 0
    first, second, third = report.possible_updates
    assert first.refused == "2 pairs have this question (#1, #2); not recorded"
    assert second.refused == third.refused == ("several records of this file (lines 2, 3) are new texts of this "
                                               "pair; not recorded")


def test_text_versions_are_append_only_and_origins_are_checked_on_write(flask, tmp_path):
    imp(flask, tmp_path, [make_pair(QUESTION, ANSWER)])
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        flask.db.conn.execute("UPDATE pair_texts SET question = 'x'")
    pid = flask.queue_page(ALICE)[0].id
    with pytest.raises(ValueError, match="not a valid TextOrigin"):
        flask._insert_text_version(flask.db, pid, "q", "a", "generated", ALICE, utc_now())


# ------------------------------------------------------------------------- a project made by the old code
def _project_before_text_versions(path: Path) -> list[str]:
    """A project as benchwright wrote it before m013: schema up to it, pairs inserted as the old import did
    (``qa_pairs`` rows only, ids over the text stripped at its ends), a review. Returns the pair ids."""
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m013_pair_texts")
    now = utc_now()
    db.conn.execute("INSERT INTO repositories (name, version_label, commit_verified, created_at, created_by) "
                    "VALUES ('flask', '3.1.1', 0, ?, 'alice')", [now])
    cur = db.conn.execute(
        "INSERT INTO import_batches (format, file_name, file_path, file_sha256, repository, options_json, read_count, "
        "added_count, already_present_count, duplicate_count, skipped_count, skipped_json, created_at, created_by) "
        "VALUES ('jsonl', 'old.jsonl', '/x/old.jsonl', 'ab', 'flask', '{}', 2, 2, 0, 0, 0, '[]', ?, 'alice')", [now])
    pairs = [make_pair(QUESTION, ANSWER, line=1), make_pair("Why blueprints?", "To group views.", line=2)]
    db.conn.executemany(
        f"INSERT INTO qa_pairs ({_OLD_PAIR_COLUMNS}, import_batch_id, created_at) "
        f"VALUES ({', '.join('?' * (len(_OLD_PAIR_COLUMNS.split(',')) + 2))})",
        [(*store_module._pair_values(p, n, "old.jsonl")[:-2], cur.lastrowid, now) for n, p in enumerate(pairs, start=1)])
    db.conn.execute("INSERT INTO review_decisions (qa_pair_id, annotator, decision, created_at) "
                    "VALUES (?, 'alice', 'accept', ?)", [pairs[0].id, now])
    db.conn.commit()
    db.close()
    return [p.id for p in pairs]


def test_a_project_made_before_text_versions_recognises_its_pairs_on_re_import(tmp_path):
    path = tmp_path / "old.db"
    ids = _project_before_text_versions(path)
    with Store.open(path) as store:  # upgrades in place
        assert [p.id for p in store.queue_page(ALICE)] == ids  # every stored id stays valid
        assert [(t.version, t.origin, t.created_by) for t in store.text_versions(ids[0])] == [(1, "original", "alice")]
        report = imp(store, tmp_path, [make_pair(QUESTION, ANSWER_SPACED), make_pair("Why blueprints?", "For reuse.")],
                     name="reexport.jsonl")
        assert (report.added, report.already_present) == (0, 1)
        [u] = report.possible_updates
        assert (u.pair_ids, u.reviewed_by) == ([ids[1]], [])
        assert store.count_pairs() == 2
        assert store.current_decision(ids[0], ALICE).value == "accept"


def _checklist():
    from benchwright.core.checklist import Checklist, ChecklistItem, RubricTier, clarity_item

    item = ChecklistItem(key_point="add_url_rule", weight=9,
                         rubric=[RubricTier(score=9, criterion="yes"), RubricTier(score=0, criterion="no")])
    return Checklist(items=[item, clarity_item()])
