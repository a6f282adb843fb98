"""Merging an offline copy of a project: everything once, newest review wins, undo links kept, checklist
conflicts renumbered and reported (and then in the adjudication queue), idempotent, the other file untouched,
and clear errors for files that are not projects."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from store_helpers import ALICE, BOB, IDS, import_pairs, make_pair

from benchwright.core.checklist import Checklist, ChecklistItem, ItemKind, binary_rubric, clarity_item
from benchwright.core.errors import StoreError
from benchwright.core.importers import ParseResult
from benchwright.core.review import CRITERIA, Criteria, Verdict
from benchwright.db import Store
from benchwright.db.merge import copy_project, merge_project

CAROL = "carol"
TABLES = ("review_decisions", "review_notes", "checklist_versions", "adjudications")


def checklist(*weights: int, tag: str = "") -> Checklist:
    return Checklist(items=[
        *(ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=f"point {n}{tag}", weight=w, rubric=binary_rubric(w))
          for n, w in enumerate(weights, start=1)),
        clarity_item(),
    ])


def counts(store: Store) -> dict[str, int]:
    return {t: store.db.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in (*TABLES, "events", "review_state", "checklist_current")}


def uids(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[0] for r in conn.execute(f"SELECT uid FROM {table}")}


def reverts_by_uid(conn: sqlite3.Connection) -> dict[str, str | None]:
    """uid of every decision -> uid of the decision it undoes."""
    return dict(conn.execute(
        "SELECT d.uid, r.uid FROM review_decisions d LEFT JOIN review_decisions r ON r.id = d.reverts_id"))


def state(store: Store) -> dict[tuple[str, str], str | None]:
    return {(r[0], r[1]): r[2] for r in store.db.conn.execute("SELECT qa_pair_id, annotator, decision FROM review_state")}


@pytest.fixture
def scenario(loaded: Store, db_path: Path, tmp_path: Path):
    """The project (``loaded``) and an offline copy where bob (and alice, on a laptop) worked meanwhile,
    with different work done here. Returns (store, offline path)."""
    here = loaded
    p, q = IDS[0], IDS[3]
    # shared history, before the copy
    here.save_checklist(p, checklist(5, 4), author="generator", origin="generated")
    here.save_checklist(q, checklist(5, 4), author="generator", origin="generated")
    here.record_decision(p, ALICE, "accept", criteria=Criteria(verdicts={c: Verdict.PASS for c in CRITERIA}))
    here.record_decision(IDS[7], ALICE, "accept")
    here.add_note(p, ALICE, "shared note")
    offline_path = tmp_path / "offline #2?.db"  # '#' and '?' must not end a SQLite URI
    copy_project(db_path, offline_path)
    with Store.open(offline_path) as off:
        here.record_decision(IDS[1], ALICE, "reject")           # here only
        off.record_decision(p, BOB, "reject", criteria=Criteria(verdicts={c: Verdict.FAIL for c in CRITERIA}),
                            notes="offline review")
        off.record_decision(IDS[1], BOB, "reject")
        off.undo_last(BOB)                                       # undoes bob's IDS[1] (a row new in the copy)
        off.undo_last(ALICE)                                     # undoes alice's IDS[7] (a shared row)
        off.record_decision(IDS[5], BOB, "accept")               # older ...
        here.record_decision(IDS[5], BOB, "reject")              # ... than bob's review here
        here.record_decision(IDS[6], ALICE, "accept")            # older ...
        off.record_decision(IDS[6], ALICE, "revise")             # ... than alice's review offline
        off.add_note(p, BOB, "bob's offline note")
        here.add_note(p, ALICE, "alice's note here")
        here.save_checklist(p, checklist(4, 5, tag=" (alice)"), author=ALICE, expected_version=1)  # v2 here
        off.save_checklist(p, checklist(3, 3, 3, tag=" (bob)"), author=BOB, expected_version=1)    # v2 there
        off.save_checklist(p, checklist(6, 3, tag=" (bob)"), author=BOB, expected_version=2)       # v3 there
        here.save_checklist(q, checklist(2, 7, tag=" (alice)"), author=ALICE, expected_version=1)  # v2 here
        off.adjudicate(q, CAROL, "revise", "split item 1", checklist=checklist(3, 3, 3, tag=" (carol)"))  # v2 there
        here.adjudicate(IDS[4], CAROL, "reject", "off topic")
        off.add_note(IDS[2], BOB, "checked")
    return here, offline_path


def test_merge_brings_everything_once(scenario):
    here, other = scenario
    theirs = sqlite3.connect(other)
    before_here = {t: uids(here.db.conn, t) for t in TABLES}
    before = counts(here)
    report = merge_project(here, other)
    after = counts(here)
    new_there = {t: uids(theirs, t) - before_here[t] for t in TABLES}
    assert report.added == {
        "review_decisions": 6, "review_notes": 2, "checklist_versions": 3, "adjudications": 1}
    assert {t: len(new_there[t]) for t in TABLES} == report.added
    for t in TABLES:
        assert uids(here.db.conn, t) == before_here[t] | uids(theirs, t)  # everything present ...
        assert after[t] == before[t] + report.added[t]                     # ... once
    # every merged row has its event (written by the triggers)
    assert after["events"] == before["events"] + sum(report.added.values())
    assert report.unknown_pairs == 0
    assert report.skipped_present["review_decisions"] == 2  # the shared rows
    # rows keep their authors, times and content
    theirs_rows = set(theirs.execute(
        "SELECT uid, qa_pair_id, annotator, decision, created_at, criteria_json, notes FROM review_decisions"))
    here_rows = set(here.db.conn.execute(
        "SELECT uid, qa_pair_id, annotator, decision, created_at, criteria_json, notes FROM review_decisions"))
    assert theirs_rows <= here_rows
    assert here.current_note(IDS[2], BOB) == "checked"
    assert here.reviews_of(IDS[0])[BOB].notes == "offline review"


def test_review_state_follows_the_newest_review_by_time(scenario):
    here, other = scenario
    merge_project(here, other)
    s = state(here)
    assert s[(IDS[5], BOB)] == "reject"     # here was newer: kept
    assert s[(IDS[6], ALICE)] == "revise"   # offline was newer: taken
    assert s[(IDS[0], BOB)] == "reject"     # only offline
    assert s[(IDS[0], ALICE)] == "accept"   # only here
    assert s[(IDS[1], BOB)] is None         # bob's offline decision, undone offline
    assert s[(IDS[1], ALICE)] == "reject"
    assert s[(IDS[7], ALICE)] is None       # alice's shared decision, undone offline
    # the state always points at the newest row of that pair and annotator
    for (pid, who), _ in s.items():
        newest = here.db.conn.execute(
            "SELECT id FROM review_decisions WHERE qa_pair_id = ? AND annotator = ? ORDER BY created_at DESC, id DESC",
            [pid, who]).fetchone()[0]
        assert here.state_id(pid, who) == newest


def test_undo_rows_keep_pointing_at_the_rows_they_undo(scenario):
    here, other = scenario
    merge_project(here, other)
    theirs = reverts_by_uid(sqlite3.connect(other))
    ours = reverts_by_uid(here.db.conn)
    assert sum(v is not None for v in theirs.values()) == 2
    for uid, reverted in theirs.items():
        assert ours[uid] == reverted
    # and reverts_id is a real row of the same pair and annotator
    bad = here.db.conn.execute(
        """SELECT count(*) FROM review_decisions d JOIN review_decisions r ON r.id = d.reverts_id
           WHERE r.qa_pair_id != d.qa_pair_id OR r.annotator != d.annotator""").fetchone()[0]
    assert bad == 0


def test_checklist_conflicts_get_new_numbers_are_reported_and_queued(scenario):
    here, other = scenario
    p, q = IDS[0], IDS[3]
    report = merge_project(here, other)
    assert len(report.conflicts) == 2
    by_pair = {c.split(":")[0]: c for c in report.conflicts}
    assert set(by_pair) == {p, q}
    assert "their checklist version 2 by bob" in by_pair[p] and "added as version 3" in by_pair[p]
    assert "their checklist version 2 by carol" in by_pair[q] and "added as version 3" in by_pair[q]
    history = [(v.version, v.origin, v.author, v.parent_version, v.checklist.items[0].key_point)
               for v in here.checklist_history(p)]
    assert history == [
        (1, "generated", "generator", None, "point 1"),
        (2, "edited", ALICE, 1, "point 1 (alice)"),
        (3, "edited", BOB, 1, "point 1 (bob)"),
        (4, "edited", BOB, 3, "point 1 (bob)"),  # their v3, parent their v2 = v3 here
    ]
    assert here.checklist_version(p).version == 4
    # the adjudication points at the adjudicated checklist under its number here
    adj = here.adjudication_of(q)
    assert adj.checklist_version == 3
    v = here.checklist_version(q, adj.checklist_version)
    assert v.origin == "adjudicated" and v.author == CAROL and v.checklist.items[0].key_point == "point 1 (carol)"
    # the two annotators' differing edits now wait for adjudication
    d = here.disagreement_of(p)
    assert d is not None and "checklist" in d.fields and d.annotators == (ALICE, BOB)
    assert "decision" in d.fields  # alice accepted, bob rejected offline
    assert p in [x.qa_pair_id for x in here.disagreements()]
    # the same number with the same content is not a conflict
    assert here.annotator_checklists(p) == {ALICE: 2, BOB: 4}


def test_merging_again_adds_nothing(scenario):
    here, other = scenario
    merge_project(here, other)
    before, before_state = counts(here), state(here)
    history = [(v.version, v.author) for v in here.checklist_history(IDS[0])]
    report = merge_project(here, other)
    assert report.added == {} and report.conflicts == [] and report.unknown_pairs == 0
    assert report.skipped_present["review_decisions"] == 8  # 2 shared + 6 merged before
    assert counts(here) == before
    assert state(here) == before_state
    assert [(v.version, v.author) for v in here.checklist_history(IDS[0])] == history


def test_merging_both_ways_gives_both_copies_the_same_rows(scenario, db_path):
    here, other = scenario
    merge_project(here, other)
    with Store.open(other) as off:
        merge_project(off, db_path)
        for t in TABLES:
            assert uids(off.db.conn, t) == uids(here.db.conn, t)
        assert state(off) == state(here)


def test_the_other_file_is_never_modified(scenario):
    here, other = scenario
    data, mtime = other.read_bytes(), other.stat().st_mtime_ns
    merge_project(here, other)
    merge_project(here, other)
    assert other.read_bytes() == data and other.stat().st_mtime_ns == mtime
    # also while the other copy is open in another session (its WAL holding recent work)
    with Store.open(other) as off:
        off.record_decision(IDS[2], BOB, "accept")
        data, mtime = other.read_bytes(), other.stat().st_mtime_ns
        report = merge_project(here, other)
        assert report.added == {"review_decisions": 1}  # committed work in the WAL is seen
        assert other.read_bytes() == data and other.stat().st_mtime_ns == mtime
        off.record_decision(IDS[2], BOB, "reject")  # and the other session still works
    assert state(here)[(IDS[2], BOB)] == "accept"


def test_rows_about_pairs_missing_here_are_reported_not_merged(loaded, db_path, tmp_path):
    other = tmp_path / "copy.db"
    copy_project(db_path, other)
    extra = make_pair("A question only the copy has?", line=99)
    with Store.open(other) as off:
        import_pairs(off, tmp_path, [extra], name="extra.jsonl", annotator=BOB)
        off.record_decision(extra.id, BOB, "accept")
        off.add_note(extra.id, BOB, "n")
        off.save_checklist(extra.id, checklist(5, 4), author=BOB)
        off.adjudicate(extra.id, CAROL, "accept", "fine")
        off.record_decision(IDS[0], BOB, "accept")
    before = counts(loaded)
    report = merge_project(loaded, other)
    assert report.unknown_pairs == 4
    assert report.added == {"review_decisions": 1}
    assert counts(loaded)["review_decisions"] == before["review_decisions"] + 1
    assert loaded.db.conn.execute("SELECT count(*) FROM events WHERE qa_pair_id = ?", [extra.id]).fetchone()[0] == 0


def _sqlite_file(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x TEXT)")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("make", [
    lambda p: p.write_text("not a database at all\n" * 200) and p,
    lambda p: p.write_bytes(b"") or p,
    _sqlite_file,
], ids=["text", "empty", "other-sqlite"])
def test_merging_a_file_that_is_not_a_project_fails_naming_it(loaded, tmp_path, make):
    bad = tmp_path / "not-a-project.db"
    make(bad)
    data = bad.read_bytes()
    before = counts(loaded)
    with pytest.raises(StoreError, match=r"not-a-project\.db") as e:
        merge_project(loaded, bad)
    assert "not a benchwright project" in str(e.value)
    assert counts(loaded) == before
    assert bad.read_bytes() == data


def test_merging_a_missing_file_or_folder_fails(loaded, tmp_path):
    with pytest.raises(StoreError, match=r"gone\.db"):
        merge_project(loaded, tmp_path / "gone.db")
    with pytest.raises(StoreError, match="no such project file"):
        merge_project(loaded, tmp_path)


def test_copy_project_refuses_to_overwrite_and_to_copy_non_projects(loaded, db_path, tmp_path):
    dest = tmp_path / "laptop.db"
    copy_project(db_path, dest)
    with Store.open(dest, create=False) as copy:
        assert copy.count_pairs() == len(IDS)
    data = dest.read_bytes()
    with pytest.raises(StoreError, match="already exists"):
        copy_project(db_path, dest)
    assert dest.read_bytes() == data
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n" * 500)
    with pytest.raises(StoreError, match=r"notes\.txt"):
        copy_project(bad, tmp_path / "out.db")
    with pytest.raises(StoreError, match=r"missing\.db"):
        copy_project(tmp_path / "missing.db", tmp_path / "out.db")
    assert not (tmp_path / "out.db").exists()


def test_text_versions_recorded_offline_are_merged_once_and_conflicts_reported(loaded, db_path, tmp_path):
    """A re-import with ``--update`` in the offline copy adds a text version; the merge brings it (it becomes the
    current text), merging again adds nothing, and texts added on both sides are reported as a conflict."""
    from store_helpers import QUEUE

    first = QUEUE[0]
    offline_path = tmp_path / "offline.db"
    copy_project(db_path, offline_path)
    updated = make_pair(first.question, "Offline, better answer.")
    with Store.open(offline_path) as off:
        r = import_pairs(off, tmp_path, [updated], name="update.jsonl")
        assert not r.updated and len(r.possible_updates) == 1
        off.apply_import(ParseResult("jsonl", str(tmp_path / "update.jsonl"), read=1, pairs=[updated]),
                         annotator=BOB, file_path=tmp_path / "update.jsonl", update=True)
        assert [t.reference_answer for t in off.text_versions(first.id)][-1] == "Offline, better answer."
    report = merge_project(loaded, offline_path)
    assert report.added.get("pair_texts") == 1 and not report.conflicts
    texts = loaded.text_versions(first.id)
    assert [t.version for t in texts] == [1, 2] and texts[-1].reference_answer == "Offline, better answer."
    assert loaded.get_pair(first.id).reference_answer == "Offline, better answer."
    again = merge_project(loaded, offline_path)
    assert not again.added.get("pair_texts") and len(loaded.text_versions(first.id)) == 2
    # both copies add a text to the same pair: the merge keeps both and says which is current
    other_path = tmp_path / "other.db"
    copy_project(db_path, other_path)
    mine = make_pair(first.question, "Here, another answer.")
    for name in ("mine.jsonl", "theirs.jsonl"):
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    loaded.apply_import(ParseResult("jsonl", str(tmp_path / "mine.jsonl"), read=1, pairs=[mine]),
                        annotator=ALICE, file_path=tmp_path / "mine.jsonl", update=True)
    with Store.open(other_path) as other:
        theirs = make_pair(first.question, "There, a third answer.")
        other.apply_import(ParseResult("jsonl", str(tmp_path / "theirs.jsonl"), read=1, pairs=[theirs]),
                           annotator=CAROL, file_path=tmp_path / "theirs.jsonl", update=True)
    report = merge_project(loaded, other_path)
    assert [t.reference_answer for t in loaded.text_versions(first.id)][-2:] == [
        "Here, another answer.", "There, a third answer."]
    assert any("both copies recorded new texts" in c for c in report.conflicts), report.conflicts
