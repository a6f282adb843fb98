"""Several annotators in the store: reviews with criteria and notes, undo, the stale-session check,
assignments and blind mode, parallel checklist lines, disagreements and adjudication, the audit trail,
append-only tables, agreement inputs, and pair references."""

from __future__ import annotations

import sqlite3

import pytest
from store_helpers import ALICE, BOB, IDS

from benchwright.core.agreement import Rating
from benchwright.core.checklist import Checklist, ChecklistItem, ItemKind, binary_rubric, clarity_item
from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.core.review import CRITERIA, Criteria, Verdict
from benchwright.db import ChecklistConflictError, QueueFilter, StaleReviewError, Store

CAROL = "carol"
P = IDS[0]


def checklist(*weights: int, tag: str = "") -> Checklist:
    return Checklist(items=[
        *(ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=f"point {n}{tag}", weight=w, rubric=binary_rubric(w))
          for n, w in enumerate(weights, start=1)),
        clarity_item(),
    ])


BASE = checklist(5, 4)
ALICE_EDIT = checklist(5, 4, tag=" (alice)")
BOB_EDIT = checklist(3, 3, 3, tag=" (bob)")


def crit(**verdicts: str) -> Criteria:
    c = Criteria()
    for name, v in verdicts.items():
        c.verdicts[name] = Verdict(v)
    return c


ALL_PASS = crit(**dict.fromkeys(CRITERIA, "pass"))


def count(store: Store, table: str, where: str = "1", *params) -> int:
    return store.db.conn.execute(f"SELECT count(*) FROM {table} WHERE {where}", params).fetchone()[0]


def snapshot(store: Store) -> dict[str, int]:
    return {t: count(store, t) for t in ("review_decisions", "review_state", "events", "checklist_versions",
                                          "adjudications", "assignments", "settings")}


# -------------------------------------------------------------------------------------------- reviews
def test_record_decision_keeps_criteria_and_notes(loaded):
    c = crit(qa_consistency="pass", checklist_quality="fail")
    c.notes["checklist_quality"] = "item 2 is two facts"
    loaded.record_decision(P, ALICE, "revise", criteria=c, notes="fix the checklist")
    r = loaded.reviews_of(P)[ALICE]
    assert (r.qa_pair_id, r.annotator, r.decision, r.notes) == (P, ALICE, "revise", "fix the checklist")
    assert r.criteria == c
    assert r.criteria.verdicts["checklist_quality"] is Verdict.FAIL
    assert r.criteria.notes == {"checklist_quality": "item 2 is two facts"}
    assert loaded.current_criteria(P, ALICE) == c
    assert loaded.current_criteria(P, BOB) == Criteria()


def test_reviews_of_returns_only_current_submitted_reviews(loaded):
    loaded.record_decision(P, ALICE, "accept", criteria=ALL_PASS)
    loaded.record_decision(P, BOB, "reject")
    loaded.record_decision(P, CAROL, "skip")  # skip does not submit
    loaded.record_decision(IDS[1], CAROL, "accept")  # another pair
    assert sorted(loaded.reviews_of(P)) == [ALICE, BOB]
    assert loaded.reviews_of(P)[BOB].decision == "reject" and loaded.reviews_of(P)[BOB].criteria == Criteria()
    assert loaded.has_submitted(P, ALICE) and not loaded.has_submitted(P, CAROL)
    # the current review only: alice changes her mind, then skips (which withdraws it)
    loaded.record_decision(P, ALICE, "revise")
    assert loaded.reviews_of(P)[ALICE].decision == "revise"
    loaded.record_decision(P, ALICE, "skip")
    assert sorted(loaded.reviews_of(P)) == [BOB]
    assert not loaded.has_submitted(P, ALICE)
    assert loaded.reviews_of(IDS[2]) == {}


def test_undo_restores_the_previous_decision_criteria_and_notes(loaded):
    first = crit(qa_consistency="pass")
    first.notes["qa_consistency"] = "fine"
    loaded.record_decision(P, ALICE, "accept", criteria=first, notes="first look")
    loaded.record_decision(P, ALICE, "reject", criteria=crit(qa_consistency="fail"), notes="second look")
    assert loaded.undo_last(ALICE) == P
    r = loaded.reviews_of(P)[ALICE]
    assert r.decision == "accept" and r.criteria == first and r.notes == "first look"
    assert loaded.current_criteria(P, ALICE) == first
    assert loaded.undo_last(ALICE) == P
    assert loaded.current_decision(P, ALICE) is None
    assert loaded.current_criteria(P, ALICE) == Criteria()
    assert loaded.reviews_of(P) == {}
    assert loaded.undo_last(ALICE) is None
    rows = loaded.decision_history(P)
    assert [(r["decision"], r["reverts_id"]) for r in rows] == [
        ("accept", None), ("reject", None), ("accept", rows[1]["id"]), (None, rows[0]["id"])]


def test_undo_is_per_annotator(loaded):
    loaded.record_decision(P, ALICE, "accept", criteria=ALL_PASS)
    loaded.record_decision(P, BOB, "reject")
    assert loaded.undo_last(ALICE) == P
    assert sorted(loaded.reviews_of(P)) == [BOB]


def test_stale_expected_state_writes_nothing(loaded):
    assert loaded.state_id(P, ALICE) is None
    first = loaded.record_decision(P, ALICE, "accept", expected_state=None)
    assert loaded.state_id(P, ALICE) == first
    # another terminal of alice's recorded meanwhile
    second = loaded.record_decision(P, ALICE, "reject", expected_state=first)
    before = snapshot(loaded)
    with pytest.raises(StaleReviewError, match="another session"):
        loaded.record_decision(P, ALICE, "revise", criteria=ALL_PASS, expected_state=first)
    with pytest.raises(StaleReviewError):
        loaded.record_decision(P, ALICE, "revise", expected_state=None)
    assert snapshot(loaded) == before
    assert loaded.current_decision(P, ALICE).value == "reject"
    # an undo moves the state too
    loaded.undo_last(ALICE)
    with pytest.raises(StaleReviewError, match="now: accept"):
        loaded.record_decision(P, ALICE, "revise", expected_state=second)
    # bob's decisions never make alice's view stale, and a fresh view works
    loaded.record_decision(P, BOB, "accept")
    loaded.record_decision(P, ALICE, "revise", expected_state=loaded.state_id(P, ALICE))
    assert loaded.current_decision(P, ALICE).value == "revise"


def test_unknown_decision_and_pair(loaded):
    with pytest.raises(ValueError):
        loaded.record_decision(P, ALICE, "maybe")
    with pytest.raises(NotFoundError):
        loaded.record_decision("qa_nope", ALICE, "accept")
    assert count(loaded, "review_decisions") == 0


# ------------------------------------------------------------------------------------ assignment
def test_assign_balances_and_turns_blind_mode_on_with_overlap(loaded):
    assert not loaded.blind_mode
    loads = loaded.assign(["ada", "bob", "cy"], 2, seed=3, by=CAROL)
    assert list(loads) == ["ada", "bob", "cy"] and sorted(loads.values()) == [5, 5, 6]
    for pid in IDS:
        assert len(loaded.assignees(pid)) == 2
    for who, n in loads.items():
        assert loaded.assigned_count(who) == n
        assert loaded.count_filtered(who, QueueFilter(assigned_to=who)) == n
        mine = [r.id for r in loaded.queue_page(who, QueueFilter(assigned_to=who))]
        assert all(who in loaded.assignees(pid) for pid in mine)
    assert loaded.blind_mode
    row = loaded.db.conn.execute("SELECT value, updated_by FROM settings WHERE key = 'blind_mode'").fetchone()
    assert row == ("on", CAROL)
    # reproducible: the same seed gives the same plan; assigning again replaces
    plan = {pid: loaded.assignees(pid) for pid in IDS}
    loaded.assign(["ada", "bob", "cy"], 2, seed=3, by=CAROL)
    assert {pid: loaded.assignees(pid) for pid in IDS} == plan
    assert count(loaded, "assignments") == 16
    loaded.assign(["dee"], 1, by=CAROL)
    assert count(loaded, "assignments") == 8 and loaded.assigned_count("ada") == 0
    assert loaded.blind_mode  # overlap 1 does not turn it off


def test_assign_with_overlap_one_leaves_blind_mode_off(loaded):
    loads = loaded.assign(["ada", "bob", "cy"], 1, by=CAROL)
    assert sorted(loads.values()) == [2, 3, 3]
    assert all(len(loaded.assignees(pid)) == 1 for pid in IDS)
    assert not loaded.blind_mode
    assert loaded.setting("blind_mode") is None


def test_bad_assignment_is_refused_and_keeps_the_old_one(loaded):
    loaded.assign(["ada", "bob"], 1, by=CAROL)
    before = {pid: loaded.assignees(pid) for pid in IDS}
    for names, overlap in ((["ada", "bob"], 3), ([], 1), (["ada", "ada"], 1), (["ada", ""], 1)):
        with pytest.raises(BenchwrightError):
            loaded.assign(names, overlap, by=CAROL)
    assert {pid: loaded.assignees(pid) for pid in IDS} == before
    assert not loaded.blind_mode


def test_assign_reports_annotators_without_pairs(store):
    assert store.assign(["ada", "bob"], 2, by=CAROL) == {"ada": 0, "bob": 0}


# ------------------------------------------------------------------------------------ blind mode
def test_blind_mode_hides_others_edits_until_my_review_is_submitted(loaded):
    loaded.save_checklist(P, BASE, author="generator", origin="generated")
    bob = loaded.save_checklist(P, BOB_EDIT, author=BOB, expected_version=1)
    loaded.record_decision(P, BOB, "reject")
    # blind mode off: everyone sees everything
    assert loaded.may_see_others(P, ALICE)
    assert loaded.visible_checklist_version(P, ALICE) == bob.version
    loaded.set_setting("blind_mode", "on", by=CAROL)
    assert loaded.blind_mode
    assert not loaded.may_see_others(P, ALICE)
    assert loaded.visible_checklist_version(P, ALICE) == 1  # bob's edit hidden
    assert loaded.visible_checklist_version(P, BOB) == bob.version  # his own
    # a generated (or imported) version is always visible, even when newer than an edit
    gen = loaded.save_checklist(P, checklist(4, 5), author="generator", origin="generated")
    assert loaded.visible_checklist_version(P, ALICE) == gen.version
    bob2 = loaded.save_checklist(P, BOB_EDIT, author=BOB)
    assert loaded.visible_checklist_version(P, ALICE) == gen.version
    # a skip does not submit
    loaded.record_decision(P, ALICE, "skip")
    assert not loaded.may_see_others(P, ALICE)
    assert loaded.visible_checklist_version(P, ALICE) == gen.version
    loaded.record_decision(P, ALICE, "accept")
    assert loaded.may_see_others(P, ALICE)
    assert loaded.visible_checklist_version(P, ALICE) == bob2.version
    # undoing the review hides them again
    loaded.undo_last(ALICE)
    assert not loaded.may_see_others(P, ALICE)
    loaded.set_setting("blind_mode", "off", by=CAROL)
    assert loaded.may_see_others(P, ALICE)


def test_visible_version_without_checklist_is_none(loaded):
    loaded.set_setting("blind_mode", "on", by=CAROL)
    assert loaded.visible_checklist_version(P, ALICE) is None
    loaded.save_checklist(P, BOB_EDIT, author=BOB)
    assert loaded.visible_checklist_version(P, ALICE) is None
    assert loaded.visible_checklist_version(P, BOB) == 1


def test_blind_mode_parallel_checklist_lines(loaded):
    loaded.save_checklist(P, BASE, author="generator", origin="generated")
    loaded.set_setting("blind_mode", "on", by=CAROL)
    a = loaded.save_checklist(P, ALICE_EDIT, author=ALICE, expected_version=1, visible_to=ALICE)
    b = loaded.save_checklist(P, BOB_EDIT, author=BOB, expected_version=1, visible_to=BOB)
    assert (a.version, a.parent_version, b.version, b.parent_version) == (2, 1, 3, 1)
    assert loaded.annotator_checklists(P) == {ALICE: 2, BOB: 3}
    # a stale save in alice's own line is refused, with nothing written
    n = count(loaded, "checklist_versions")
    with pytest.raises(ChecklistConflictError) as e:
        loaded.save_checklist(P, checklist(9), author=ALICE, expected_version=1, visible_to=ALICE)
    assert count(loaded, "checklist_versions") == n
    message = str(e.value)
    assert "version 2" in message and f"by {ALICE}" in message and "what changed" in message
    assert "point 1{+ (alice)+}" in message  # the diff shows alice's change
    assert BOB not in message  # and never reveals bob's hidden line
    a2 = loaded.save_checklist(P, checklist(9), author=ALICE, expected_version=2, visible_to=ALICE)
    assert (a2.version, a2.parent_version) == (4, 2)
    # without visible_to the whole history counts
    with pytest.raises(ChecklistConflictError):
        loaded.save_checklist(P, BOB_EDIT, author=BOB, expected_version=3)
    # once bob submits his review, his line is the shared one again
    loaded.record_decision(P, BOB, "accept")
    with pytest.raises(ChecklistConflictError):
        loaded.save_checklist(P, BOB_EDIT, author=BOB, expected_version=3, visible_to=BOB)


def test_conflict_message_names_who_changed_it_and_what(loaded):
    loaded.save_checklist(P, BASE, author="generator", origin="generated")
    loaded.save_checklist(P, ALICE_EDIT, author=ALICE, expected_version=1)
    with pytest.raises(ChecklistConflictError) as e:
        loaded.save_checklist(P, BOB_EDIT, author=BOB, expected_version=1, visible_to=BOB)
    message = str(e.value)
    assert "now at version 2" in message and f"by {ALICE}" in message and "UTC" in message
    assert "after you opened version 1" in message and "nothing was overwritten" in message
    assert "what changed:" in message and "point 1{+ (alice)+}" in message
    assert loaded.checklist_version(P).author == ALICE


# ----------------------------------------------------------------------- disagreements, adjudication
def test_disagreements_on_decision_criteria_and_checklist(loaded):
    p0, p1, p2, p3 = IDS[:4]
    loaded.record_decision(p0, ALICE, "accept", criteria=ALL_PASS)
    loaded.record_decision(p0, BOB, "reject", criteria=ALL_PASS)
    loaded.record_decision(p1, ALICE, "accept", criteria=ALL_PASS)
    loaded.record_decision(p1, BOB, "accept", criteria=crit(qa_consistency="pass", task_validity="fail"))
    loaded.record_decision(p2, ALICE, "accept", criteria=ALL_PASS)  # agree
    loaded.record_decision(p2, BOB, "accept", criteria=ALL_PASS)
    loaded.save_checklist(p3, BASE, author="generator", origin="generated")
    loaded.save_checklist(p3, ALICE_EDIT, author=ALICE)
    loaded.save_checklist(p3, BOB_EDIT, author=BOB)
    loaded.record_decision(IDS[4], ALICE, "reject")  # one review only
    found = {d.qa_pair_id: d for d in loaded.disagreements()}
    assert list(found) == [p0, p1, p3]  # queue order
    assert found[p0].fields == ("decision",) and found[p0].annotators == (ALICE, BOB)
    # only task validity has two different verdicts; an unjudged criterion disagrees with nothing
    assert found[p1].fields == ("task_validity",)
    assert found[p3].fields == ("checklist",) and found[p3].annotators == (ALICE, BOB)
    assert loaded.disagreement_of(p2) is None
    # the same edit by both is no disagreement
    loaded.save_checklist(p3, BOB_EDIT, author=ALICE)
    assert loaded.disagreement_of(p3) is None


def test_adjudication_settles_until_a_newer_review(loaded):
    loaded.record_decision(P, ALICE, "accept", criteria=ALL_PASS)
    loaded.record_decision(P, BOB, "reject", criteria=ALL_PASS)
    assert [d.qa_pair_id for d in loaded.disagreements()] == [P]
    adj = loaded.adjudicate(P, CAROL, "reject", "  the answer is wrong  ")
    assert (adj.qa_pair_id, adj.adjudicator, adj.decision, adj.reason, adj.checklist_version) == (
        P, CAROL, "reject", "the answer is wrong", None)
    assert loaded.adjudication_of(P) == adj
    assert loaded.disagreements() == []
    assert loaded.disagreement_of(P) is None
    loaded.record_decision(P, ALICE, "revise", criteria=ALL_PASS)  # newer than the adjudication
    assert [d.qa_pair_id for d in loaded.disagreements()] == [P]
    loaded.adjudicate(P, CAROL, "revise", "both points taken")
    assert loaded.disagreements() == []
    # a newer checklist edit reopens it too
    loaded.save_checklist(P, ALICE_EDIT, author=ALICE)
    loaded.save_checklist(P, BOB_EDIT, author=BOB)
    assert [d.fields for d in loaded.disagreements()] == [("decision", "checklist")]


def test_adjudicate_with_checklist_makes_an_adjudicated_version(loaded):
    loaded.save_checklist(P, BASE, author="generator", origin="generated")
    loaded.save_checklist(P, ALICE_EDIT, author=ALICE)
    loaded.save_checklist(P, BOB_EDIT, author=BOB)
    assert loaded.disagreement_of(P).fields == ("checklist",)
    adj = loaded.adjudicate(P, CAROL, "accept", "bob's items are finer", checklist=BOB_EDIT)
    current = loaded.checklist_version(P)
    assert (current.version, current.origin, current.author, current.parent_version) == (4, "adjudicated", CAROL, 3)
    assert current.checklist == BOB_EDIT
    assert adj.checklist_version == 4
    assert loaded.db.conn.execute(
        "SELECT adjudicator, decision, reason, checklist_version FROM adjudications WHERE qa_pair_id = ?", [P]
    ).fetchall() == [(CAROL, "accept", "bob's items are finer", 4)]
    assert loaded.annotator_checklists(P) == {ALICE: 2, BOB: 3}  # adjudicated versions are nobody's edit
    assert loaded.disagreement_of(P) is None


@pytest.mark.parametrize(("decision", "reason", "error"), [
    ("accept", "", "reason"), ("accept", "   \n", "reason"), ("skip", "why", "decision"), ("maybe", "why", "decision"),
])
def test_bad_adjudications_are_refused(loaded, decision, reason, error):
    before = snapshot(loaded)
    with pytest.raises(BenchwrightError, match=error):
        loaded.adjudicate(P, CAROL, decision, reason)
    assert snapshot(loaded) == before


def test_adjudication_of_unknown_pair_or_invalid_checklist_writes_nothing(loaded):
    before = snapshot(loaded)
    with pytest.raises(NotFoundError):
        loaded.adjudicate("qa_nope", CAROL, "accept", "why")
    with pytest.raises(BenchwrightError, match="rules"):
        loaded.adjudicate(P, CAROL, "accept", "why", checklist=checklist(5, 3))  # weights sum to 8
    assert snapshot(loaded) == before


def test_accept_unanimous_adjudicates_only_agreeing_pairs(loaded):
    agree, disagree, criteria_differ, single, checklists_differ, done = IDS[:6]
    for pid in (agree, criteria_differ, checklists_differ, done):
        loaded.record_decision(pid, ALICE, "accept", criteria=ALL_PASS)
        loaded.record_decision(pid, BOB, "accept", criteria=ALL_PASS)
    loaded.record_decision(disagree, ALICE, "accept")
    loaded.record_decision(disagree, BOB, "reject")
    loaded.record_decision(criteria_differ, BOB, "accept", criteria=crit(qa_consistency="fail"))
    loaded.record_decision(single, ALICE, "accept")
    loaded.save_checklist(checklists_differ, ALICE_EDIT, author=ALICE)
    loaded.save_checklist(checklists_differ, BOB_EDIT, author=BOB)
    loaded.adjudicate(done, CAROL, "revise", "earlier ruling")
    loaded.record_decision(IDS[6], ALICE, "reject")
    loaded.record_decision(IDS[6], BOB, "reject")  # agree on reject
    assert loaded.accept_unanimous(CAROL) == [agree, IDS[6]]
    assert loaded.adjudication_of(agree).decision == "accept"
    assert loaded.adjudication_of(agree).reason == "unanimous reviews (bulk)"
    assert loaded.adjudication_of(IDS[6]).decision == "reject"
    assert loaded.adjudication_of(done).decision == "revise"  # left alone
    for pid in (disagree, criteria_differ, single, checklists_differ):
        assert loaded.adjudication_of(pid) is None
    assert count(loaded, "adjudications") == 3
    assert loaded.accept_unanimous(CAROL) == []
    assert count(loaded, "adjudications") == 3


# -------------------------------------------------------------------------------------- audit trail
def test_events_of_has_one_event_per_change_with_before_and_after(loaded):
    c = crit(qa_consistency="pass")
    d1 = loaded.record_decision(P, ALICE, "accept", criteria=c, notes="ok")
    loaded.record_decision(P, ALICE, "skip")
    loaded.undo_last(ALICE)
    loaded.add_note(P, ALICE, "first note")
    loaded.add_note(P, ALICE, "second note")
    loaded.save_checklist(P, BASE, author="generator", origin="generated")
    loaded.save_checklist(P, ALICE_EDIT, author=ALICE, expected_version=1)
    loaded.adjudicate(P, CAROL, "accept", "fine", checklist=BOB_EDIT)
    loaded.record_decision(IDS[1], BOB, "reject")  # another pair: not in P's trail
    events = loaded.events_of(P)
    assert [(e["actor"], e["kind"]) for e in events] == [
        (ALICE, "review"), (ALICE, "skip"), (ALICE, "undo"), (ALICE, "note"), (ALICE, "note"),
        ("generator", "checklist"), (ALICE, "checklist"), (CAROL, "checklist"), (CAROL, "adjudication")]
    review, skip, undo, note1, note2, gen, edit, adj_version, adj = events
    assert review["before"] == {"decision": None}
    assert review["after"] == {"decision": "accept", "criteria": {
        c_: {"verdict": "pass" if c_ == "qa_consistency" else None, "note": ""} for c_ in CRITERIA},
        "notes": "ok", "reverts": None}
    assert skip["before"] == {"decision": "accept"} and skip["after"]["decision"] == "skip"
    assert undo["before"] == {"decision": "skip"}
    assert undo["after"]["decision"] == "accept" and undo["after"]["reverts"] == d1 + 1
    assert undo["after"]["notes"] == "ok"
    assert note1["before"] == {"text": None} and note1["after"] == {"text": "first note"}
    assert note2["before"] == {"text": "first note"} and note2["after"] == {"text": "second note"}
    assert gen["before"] == {"version": None}
    assert gen["after"] == {"version": 1, "origin": "generated", "draft": 0, "valid": 1, "restored_from": None}
    assert edit["before"] == {"version": 1} and edit["after"]["origin"] == "edited"
    assert adj_version["after"]["origin"] == "adjudicated" and adj_version["after"]["version"] == 3
    assert adj["before"] is None
    assert adj["after"] == {"decision": "accept", "reason": "fine", "checklist_version": 3}
    times = [e["created_at"] for e in events]
    assert times == sorted(times)
    assert len(loaded.events_of(IDS[1])) == 1


@pytest.mark.parametrize("table", ["events", "adjudications", "review_decisions", "review_notes",
                                   "checklist_versions"])
def test_append_only_tables_refuse_update_and_delete(loaded, table):
    loaded.record_decision(P, ALICE, "accept")
    loaded.add_note(P, ALICE, "n")
    loaded.save_checklist(P, BASE, author=ALICE)
    loaded.adjudicate(P, CAROL, "accept", "fine")
    n = count(loaded, table)
    assert n >= 1
    conn = loaded.db.conn
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute(f"UPDATE {table} SET created_at = 'x'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute(f"DELETE FROM {table}")
    if conn.in_transaction:
        conn.rollback()
    assert count(loaded, table) == n
    assert count(loaded, table, "created_at = 'x'") == 0


# ------------------------------------------------------------------------------------ agreement inputs
def test_review_ratings_shape(loaded):
    loaded.record_decision(P, ALICE, "accept", criteria=crit(qa_consistency="pass", code_relevance="fail"))
    loaded.record_decision(P, BOB, "revise", criteria=crit(qa_consistency="pass"))
    loaded.record_decision(IDS[1], BOB, "reject")
    loaded.record_decision(IDS[2], ALICE, "skip")  # not a review
    ratings = loaded.review_ratings()
    assert list(ratings) == ["decision", *CRITERIA]
    assert sorted(ratings["decision"], key=lambda r: (r.item, r.annotator)) == sorted([
        Rating(P, ALICE, "accept"), Rating(P, BOB, "revise"), Rating(IDS[1], BOB, "reject")],
        key=lambda r: (r.item, r.annotator))
    qa = {(r.item, r.annotator): r.value for r in ratings["qa_consistency"]}
    assert qa == {(P, ALICE): "pass", (P, BOB): "pass", (IDS[1], BOB): None}
    code = {(r.item, r.annotator): r.value for r in ratings["code_relevance"]}
    assert code == {(P, ALICE): "fail", (P, BOB): None, (IDS[1], BOB): None}
    assert all(isinstance(r.value, str | None) for rs in ratings.values() for r in rs)


def test_checklist_edits_shape(loaded):
    loaded.save_checklist(P, BASE, author="generator", origin="generated")
    loaded.save_checklist(P, checklist(9), author=ALICE)
    loaded.save_checklist(P, ALICE_EDIT, author=ALICE)  # alice's latest counts
    loaded.save_checklist(P, BOB_EDIT, author=BOB)
    loaded.save_checklist(IDS[1], BOB_EDIT, author=BOB)  # one editor only: left out
    assert loaded.checklist_edits() == {
        P: {ALICE: [("point 1 (alice)", 5), ("point 2 (alice)", 4)],
            BOB: [("point 1 (bob)", 3), ("point 2 (bob)", 3), ("point 3 (bob)", 3)]},
    }


def test_empty_project_inputs(store):
    assert store.review_ratings() == {"decision": [], **{c: [] for c in CRITERIA}}
    assert store.checklist_edits() == {}
    assert store.disagreements() == []
    assert store.accept_unanimous(CAROL) == []


# ----------------------------------------------------------------------------------- pair references
def test_resolve_pair(loaded):
    assert loaded.resolve_pair("#3") == IDS[2]
    assert loaded.resolve_pair("3") == IDS[2]
    assert loaded.resolve_pair(" #8 ") == IDS[7]
    assert loaded.resolve_pair(IDS[4]) == IDS[4]
    for ref in ("#999", "999", "#0", "qa_unknown"):
        with pytest.raises(NotFoundError):
            loaded.resolve_pair(ref)
    with pytest.raises(NotFoundError, match="position #999"):
        loaded.resolve_pair("#999")


def test_note_save_is_a_compare_and_set(tmp_path):
    """``add_note(expected=...)`` refuses when a newer note exists, and writes nothing."""
    import pytest

    from benchwright.core.importers import parse
    from benchwright.db import NoteConflictError, Store

    src = tmp_path / "p.jsonl"
    src.write_text('{"question": "Q1?", "answer": "A1."}\n', encoding="utf-8")
    with Store.open(tmp_path / "p.db", create=True) as s:
        s.apply_import(parse("jsonl", src), annotator="t", file_path=src)
        pid = s.queue_page("t", limit=1)[0].id
        assert s.current_note_version(pid, "ann") == (None, "")
        first = s.add_note(pid, "ann", "one", expected=None)
        with pytest.raises(NoteConflictError) as e:
            s.add_note(pid, "ann", "stale", expected=None)
        assert e.value.current_id == first and e.value.current == "one"
        assert s.current_note(pid, "ann") == "one"
        second = s.add_note(pid, "ann", "two", expected=first)
        assert s.current_note_version(pid, "ann") == (second, "two")
        s.add_note(pid, "ann", "three")  # no expectation: appends
        assert s.current_note(pid, "ann") == "three"
