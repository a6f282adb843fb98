"""Leakage checks recorded after a rewrite (issue 17 item 8): an ok enrich / refine outcome that becomes the current
text (save_outcome), an annotator's edit and revert (edit_text, revert_text), a new checklist of a rewritten text;
the latest check of the current version, the queue filter leakage=, counts, and ``check_rewritten``."""

from __future__ import annotations

import sqlite3

import pytest
from services_helpers import checklist

from benchwright.core.curation import StepOutcome
from benchwright.core.errors import BenchwrightError
from benchwright.db import QueueFilter
from benchwright.tui.services.curation_runs import save_outcome
from benchwright.tui.services.leakage import check_leakage, check_rewritten, repository_terms
from benchwright.tui.services.texts import edit_text, revert_text

LEAKY = "Where in src/pkg/app.py is the app made?"


def spans(check) -> list[tuple[str, str, str]]:
    return [(s.text, s.kind, s.source) for s in check.spans]


def leaked_ids(store) -> list[str]:
    return store.filtered_pair_ids("lead", QueueFilter(leakage="leaked"))


def test_an_edit_is_checked_and_the_filter_finds_it_a_revert_is_checked_clean(project):
    store, ids = project
    pid = ids[0]
    assert store.leakage_check(pid) is None and leaked_ids(store) == []
    saved = edit_text(store, pid, LEAKY, None, by="ann", expected_version=1)
    check = store.leakage_check(pid)
    assert (check.text_version, check.status, check.created_by) == (saved.version, "leaked", "ann")
    assert spans(check) == [("src/pkg/app.py", "path", "reference answer")]
    assert LEAKY[check.spans[0].start:check.spans[0].end] == "src/pkg/app.py"
    assert leaked_ids(store) == [pid]
    assert store.filtered_pair_ids("lead", QueueFilter(leakage="clean")) == []
    assert pid not in store.filtered_pair_ids("lead", QueueFilter(leakage="unchecked"))
    assert store.leakage_counts() == {"leaked": 1, "clean": 0, "unchecked": 0}
    # a revert to the original is a new version, checked: clean
    back = revert_text(store, pid, by="ann", to_version=1)
    check = store.leakage_check(pid)
    assert (check.text_version, check.status, check.spans) == (back.version, "clean", ())
    assert leaked_ids(store) == [] and store.filtered_pair_ids("lead", QueueFilter(leakage="clean")) == [pid]
    # the check of the older version is kept (append-only) and readable by version
    assert store.leakage_check(pid, saved.version).status == "leaked"


def test_an_ok_refine_outcome_that_becomes_the_text_is_checked(project):
    store, ids = project
    pid = ids[0]
    outcome = StepOutcome("refine", "ok", output={"question": "Where does `src/pkg/gone.py` make the app?",
                                                  "answer": "In `src/pkg/app.py:12` and `src/pkg/gone.py`."},
                          model="m1", call_ids=[])
    save_outcome(store, pid, outcome, by="runner")
    check = store.leakage_check(pid)
    assert check is not None and check.text_version == 2 and check.created_by == "runner"
    assert spans(check) == [("src/pkg/gone.py", "path", "reference answer")]
    # the same text again writes no version and no check
    save_outcome(store, pid, outcome, by="runner")
    assert store.text_version(pid).version == 2 and store.leakage_check(pid).id == check.id
    # a failed rewrite changes nothing
    save_outcome(store, ids[1], StepOutcome("enrich", "failed", reason="x", model="m1"), by="runner")
    assert store.leakage_check(ids[1]) is None


def test_a_new_checklist_of_a_rewritten_text_checks_it_again_with_its_key_points(project):
    store, ids = project
    pid = ids[1]
    edit_text(store, pid, "Question 2: how are the deferred setup functions kept?", None, by="ann",
              expected_version=1)
    assert store.leakage_check(pid).status == "clean"
    save_outcome(store, pid, StepOutcome("checklist", "ok", model="g", checklist=checklist(
        "Keeps the deferred setup functions in a list")), by="runner")
    check = store.leakage_check(pid)
    assert check.status == "leaked"
    assert spans(check) == [("deferred setup functions", "key-point", "checklist")]
    # a checklist of a pair still at its original text records nothing
    save_outcome(store, ids[2], StepOutcome("checklist", "ok", model="g", checklist=checklist()), by="runner")
    assert store.leakage_check(ids[2]) is None


def test_check_rewritten_checks_what_was_never_checked_and_rechecks_on_request(project):
    store, ids = project
    # a text version written without the hook (as an older benchwright did): unchecked until asked
    store.save_text_version(ids[0], LEAKY, None, origin="refined", by="old", model="m")
    store.save_text_version(ids[2], "Question 3, asked again?", None, origin="edited", by="old")
    assert store.leakage_counts() == {"leaked": 0, "clean": 0, "unchecked": 2}
    rows = check_rewritten(store, by="lead")
    assert [(r.pair_id, r.check.status, r.checked_now) for r in rows] == [(ids[0], "leaked", True),
                                                                           (ids[2], "clean", True)]
    again = check_rewritten(store, by="lead")
    assert [r.checked_now for r in again] == [False, False] and again[0].check.id == rows[0].check.id
    fresh = check_rewritten(store, [ids[2]], by="lead", recheck=True)
    assert [(r.pair_id, r.checked_now) for r in fresh] == [(ids[2], True)] and fresh[0].check.id > rows[1].check.id
    assert store.leakage_counts() == {"leaked": 1, "clean": 1, "unchecked": 0}
    assert check_leakage(store, ids[1], by="lead") is None  # an original text is not checked


def test_the_repository_name_is_not_a_leak_and_rows_are_append_only(project):
    store, ids = project
    assert repository_terms("pallets/flask") == ["pallets/flask", "pallets", "flask"] and repository_terms(None) == []
    edit_text(store, ids[0], "Where is the app of `pkg` made?", None, by="ann", expected_version=1)
    assert store.leakage_check(ids[0]).status == "clean"  # `pkg` is in the answer's path, but it is the repository
    edit_text(store, ids[0], "Where is the app of `src` made?", None, by="ann", expected_version=2)
    assert spans(store.leakage_check(ids[0])) == [("src", "identifier", "reference answer")]
    with pytest.raises(sqlite3.DatabaseError):
        store.db.conn.execute("UPDATE leakage_checks SET status = 'clean'")
    with pytest.raises(sqlite3.DatabaseError):
        store.db.conn.execute("DELETE FROM leakage_checks")
    with pytest.raises(BenchwrightError, match="no text version 9"):
        store.record_leakage_check(ids[1], 9, [], by="x")
