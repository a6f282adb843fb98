"""Issue 16 item 1, store side: a new text version after a review sends the pair back to review (queue status,
progress, final decision), a checklist made from an older text is stale (filter, preflight), edits are
compare-and-set, reverts and acceptances are recorded."""

from __future__ import annotations

import pytest
from store_helpers import ALICE, BOB

from benchwright.core.adjudication import Exclusion
from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.models import PairText, TextOrigin, checklist_stale
from benchwright.core.vocabulary import REOPEN_EVIDENCE
from benchwright.db import QueueFilter, Store
from benchwright.db.texts import TextConflictError


def good_checklist() -> Checklist:
    return Checklist(items=[
        ChecklistItem(key_point="It registers the rule with `add_url_rule`", weight=5, rubric=binary_rubric(5)),
        ChecklistItem(key_point="The view function is stored in `view_functions`", weight=4,
                      rubric=binary_rubric(4)),
        clarity_item()])


def status_of(store: Store, annotator: str, pid: str) -> set[str]:
    return {s for s in ("undecided", "accepted", "rejected", "to-revise", "skipped")
            if pid in store.filtered_pair_ids(annotator, QueueFilter(status=s))}


@pytest.fixture
def pid(loaded: Store) -> str:
    return loaded.queue_page(ALICE)[0].id


def test_a_rewrite_after_an_accept_reopens_the_pair_for_that_annotator(loaded: Store, pid: str):
    loaded.record_decision(pid, ALICE, "accept")
    loaded.record_decision(pid, BOB, "reject")
    assert status_of(loaded, ALICE, pid) == {"accepted"} and status_of(loaded, BOB, pid) == {"rejected"}
    before = loaded.progress(ALICE)
    assert loaded.final_decision(pid).why_not is Exclusion.UNRESOLVED_DISAGREEMENT
    loaded.save_text_version(pid, "How does Flask register a URL rule, step by step?", "In two steps.",
                             origin=TextOrigin.REFINED, by="runner", model="fake:m", call_ids=[7])
    assert status_of(loaded, ALICE, pid) == {"undecided"} and status_of(loaded, BOB, pid) == {"undecided"}
    assert loaded.reopened(pid, ALICE) == "text"
    after = loaded.progress(ALICE)
    assert (after.decided, after.mine) == (before.decided - 1, before.mine - 1)
    row = next(r for r in loaded.queue_page(ALICE) if r.id == pid)
    assert (row.decision, row.reopened) == (None, "text")
    assert loaded.first_undecided(ALICE) == pid
    # a review of the new text counts again, only for the one who made it
    loaded.record_decision(pid, ALICE, "accept")
    assert status_of(loaded, ALICE, pid) == {"accepted"} and loaded.reopened(pid, ALICE) is None
    assert status_of(loaded, BOB, pid) == {"undecided"}
    assert loaded.progress(ALICE).mine == before.mine


def test_final_decision_ignores_reviews_before_the_reopening_and_names_its_reason(loaded: Store, pid: str):
    loaded.record_decision(pid, ALICE, "accept")
    assert loaded.final_decision(pid).decision == "accept"
    loaded.save_text_version(pid, "A refined question?", "An answer.", origin="refined", by="runner")
    assert loaded.final_decision(pid).why_not is Exclusion.TEXT_CHANGED
    loaded.record_decision(pid, ALICE, "accept")
    assert loaded.final_decision(pid).decision == "accept"
    # the evidence engineer's `repos move` sets reopened_at with the evidence-stale reason
    with loaded.write() as db:
        db.conn.execute("UPDATE qa_pairs SET reopened_at = '9999-01-01', reopened_reason = ? WHERE id = ?",
                        [REOPEN_EVIDENCE, pid])
    assert loaded.final_decision(pid).why_not is Exclusion.EVIDENCE_STALE
    assert loaded.reopened(pid, ALICE) == REOPEN_EVIDENCE
    assert status_of(loaded, ALICE, pid) == {"undecided"}


def test_a_checklist_made_from_an_older_text_is_stale_filtered_and_excluded(loaded: Store, pid: str):
    loaded.save_checklist(pid, good_checklist(), author=ALICE)
    loaded.record_decision(pid, ALICE, "accept")
    assert loaded.stale_checklist(pid) is None
    assert pid in {c.pair.id for c in loaded.release_preflight().included}
    loaded.save_text_version(pid, "A refined question?", "A refined answer.", origin="refined", by="runner")
    assert loaded.stale_checklist(pid) == (1, 2)
    assert loaded.filtered_pair_ids(ALICE, QueueFilter(checklist="stale-checklist")) == [pid]
    loaded.record_decision(pid, ALICE, "accept")
    assert dict(loaded.release_preflight().excluded)[pid] is Exclusion.STALE_CHECKLIST
    # a revert to the text it was made from makes it fit again; a new checklist too
    loaded.revert_text(pid, by=ALICE)
    assert loaded.stale_checklist(pid) is None
    assert loaded.filtered_pair_ids(ALICE, QueueFilter(checklist="stale-checklist")) == []
    loaded.save_text_version(pid, "Another question?", None, origin="edited", by=ALICE)
    assert loaded.stale_checklist(pid) == (1, 4)
    assert loaded.save_checklist(pid, good_checklist(), author=ALICE).text_version == 4
    assert loaded.stale_checklist(pid) is None


def test_the_stale_filter_agrees_with_the_core_rule(loaded: Store):
    ids = [r.id for r in loaded.queue_page(ALICE)][:4]
    for n, p in enumerate(ids):
        loaded.save_checklist(p, good_checklist(), author=ALICE)
        for k in range(n):  # 0, 1, 2, 3 later versions: each a new question, the third only re-spaced
            q = loaded.text_version(p).question
            loaded.save_text_version(p, q + ("  " if k == 2 else f" ({k})"), "A.", origin="edited", by=ALICE)
            if n == 3 and k == 1:  # pair 3's checklist is made from its version 3; version 4 re-spaces it
                loaded.save_checklist(p, good_checklist(), author=ALICE)
    by_sql = set(loaded.filtered_pair_ids(ALICE, QueueFilter(checklist="stale-checklist")))
    by_rule = set()
    for p in ids:
        v = loaded.checklist_version(p).text_version
        made_from: PairText = loaded.text_version(p, v)
        if checklist_stale(made_from, loaded.text_version(p)):
            by_rule.add(p)
    assert by_sql == by_rule == set(ids[1:3])


def test_edit_is_compare_and_set_and_acceptances_are_recorded(loaded: Store, pid: str):
    v2 = loaded.save_text_version(pid, "Refined?", "Refined.", origin="refined", by="runner", model="fake:m")
    assert loaded.accept_text(pid, ALICE) == v2.version
    with pytest.raises(TextConflictError, match="version 2"):
        loaded.save_text_version(pid, "My edit?", "Mine.", origin="edited", by=BOB, expected_version=1)
    assert loaded.text_version(pid).version == 2
    v3 = loaded.save_text_version(pid, "My edit?", "Mine.", origin="edited", by=BOB, expected_version=2)
    assert loaded.text_acceptances(pid) == {2: [ALICE]}
    back = loaded.revert_text(pid, by=BOB, to_version=2, expected_version=v3.version)
    assert (back.version, back.restored_from, back.question) == (4, 2, "Refined?")
    assert loaded.get_pair(pid).question == "Refined?"


def test_merge_brings_acceptances_once_with_text_versions_renumbered(loaded: Store, db_path, tmp_path, pid: str):
    from benchwright.db.merge import copy_project, merge_project

    offline = tmp_path / "offline.db"
    copy_project(db_path, offline)
    with Store.open(offline) as off:
        off.save_text_version(pid, "Refined offline?", "Refined.", origin="refined", by="runner", model="fake:m")
        off.accept_text(pid, BOB)
        off.save_checklist(pid, good_checklist(), author=BOB)
    loaded.save_text_version(pid, "Edited here?", "Here.", origin="edited", by=ALICE)  # takes version 2 here
    report = merge_project(loaded, offline)
    assert report.added["text_acceptances"] == 1
    assert loaded.text_version(pid, 3).question == "Refined offline?"
    assert loaded.text_acceptances(pid) == {3: [BOB]}  # their version 2 is version 3 here
    assert loaded.checklist_version(pid).text_version == 3 and loaded.stale_checklist(pid) is None
    again = merge_project(loaded, offline)
    assert not again.added.get("text_acceptances") and again.skipped_present["text_acceptances"] == 1


def test_statistics_progress_does_not_count_a_review_of_an_earlier_text(loaded: Store, pid: str):
    loaded.record_decision(pid, ALICE, "accept")
    assert dict((a, done) for a, _, done in loaded.annotator_progress())[ALICE] == 1
    loaded.save_text_version(pid, "Refined?", "Refined.", origin="refined", by="runner")
    assert dict((a, done) for a, _, done in loaded.annotator_progress()).get(ALICE, 0) == 0


def test_reviews_of_an_earlier_text_disagree_with_nothing(loaded: Store, pid: str):
    loaded.record_decision(pid, ALICE, "accept")
    loaded.record_decision(pid, BOB, "reject")
    assert loaded.disagreement_of(pid) is not None and pid in {d.qa_pair_id for d in loaded.disagreements()}
    loaded.save_text_version(pid, "Refined?", "Refined.", origin="refined", by="runner")
    assert loaded.disagreement_of(pid) is None and pid not in {d.qa_pair_id for d in loaded.disagreements()}
    assert loaded.final_decision(pid).why_not is Exclusion.TEXT_CHANGED
    loaded.record_decision(pid, ALICE, "accept")  # bob's reject was of the earlier text: no dispute, bob pending
    assert loaded.disagreement_of(pid) is None
    assert loaded.final_decision(pid).why_not is Exclusion.TEXT_CHANGED
    loaded.record_decision(pid, BOB, "reject")  # both on the new text, disagreeing: adjudication again
    assert loaded.disagreement_of(pid).fields == ("decision",)
