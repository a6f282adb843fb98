"""The human QA pass in the store (RepoProbe §3.2 "Quality Assurance"): reject reasons stored, defaulted,
refused and undone; a sampled, stratified assignment; the QA report's numbers on known decisions."""

from __future__ import annotations

import json

import pytest
from store_helpers import ALICE, BOB, IDS, QUEUE

from benchwright.core.errors import BenchwrightError
from benchwright.core.qa_report import UNSPECIFIED, qa_report
from benchwright.core.review import Criteria, Verdict
from benchwright.db import QueueFilter

CY = "cy"


def _criteria(**verdicts: str) -> Criteria:
    c = Criteria()
    for name, v in verdicts.items():
        c.verdicts[name] = Verdict(v)
    return c


def _reason(store, pair_id, annotator):
    return store.reviews_of(pair_id)[annotator].reason


# ------------------------------------------------------------------------------------------- reasons
def test_a_reject_stores_its_reason(loaded):
    loaded.record_decision(IDS[0], ALICE, "reject", criteria=_criteria(), reason="directly-answerable")
    assert _reason(loaded, IDS[0], ALICE) == "directly-answerable"
    row = loaded.db.conn.execute("SELECT reason FROM review_decisions WHERE qa_pair_id = ?", [IDS[0]]).fetchone()
    assert row[0] == "directly-answerable"


def test_a_reject_without_a_reason_takes_the_first_failing_criterion(loaded):
    loaded.record_decision(IDS[0], ALICE, "reject",
                           criteria=_criteria(qa_consistency="pass", task_validity="fail", code_relevance="fail"))
    assert _reason(loaded, IDS[0], ALICE) == "task_validity"
    loaded.record_decision(IDS[1], ALICE, "reject", criteria=_criteria(qa_consistency="pass"))
    assert _reason(loaded, IDS[1], ALICE) is None  # nothing fails: no reason to guess
    loaded.record_decision(IDS[2], ALICE, "accept", criteria=_criteria(task_validity="fail"))
    assert _reason(loaded, IDS[2], ALICE) is None  # an accept has none


@pytest.mark.parametrize(("decision", "criteria", "reason", "message"), [
    ("accept", _criteria(), "task_validity", "reject only"),
    ("revise", _criteria(), "directly-answerable", "reject only"),
    ("skip", None, "code_relevance", "reject only"),
    ("reject", _criteria(), "too-easy", "unknown reject reason"),
    ("reject", _criteria(task_validity="pass"), "task_validity", "marks as passing"),
])
def test_a_reason_that_does_not_fit_is_refused_and_nothing_is_written(loaded, decision, criteria, reason, message):
    with pytest.raises(BenchwrightError, match=message):
        loaded.record_decision(IDS[0], ALICE, decision, criteria=criteria, reason=reason)
    assert loaded.db.conn.execute("SELECT count(*) FROM review_decisions").fetchone()[0] == 0


def test_undo_restores_the_earlier_reject_with_its_reason(loaded):
    loaded.record_decision(IDS[0], ALICE, "reject", criteria=_criteria(), reason="checklist_quality")
    loaded.record_decision(IDS[0], ALICE, "accept", criteria=_criteria())
    assert _reason(loaded, IDS[0], ALICE) is None
    assert loaded.undo_last(ALICE) == IDS[0]
    assert loaded.current_decision(IDS[0], ALICE).value == "reject"
    assert _reason(loaded, IDS[0], ALICE) == "checklist_quality"
    assert loaded.undo_last(ALICE) == IDS[0]
    assert loaded.current_decision(IDS[0], ALICE) is None


# ------------------------------------------------------------------------------------------- the sample
def test_a_sampled_assignment_assigns_only_the_sample_and_keeps_its_parameters(loaded):
    sample = loaded.assign_sample([ALICE, BOB], 2, seed=4, by="lead", size=4, stratify_by="repository")
    assert sample.pool == 8
    assert len(sample.pair_ids) == 4
    assert sample.strata == {"click": (1, 1), "flask": (7, 3)}  # quotas 0.5 / 3.5: one each at least
    assigned = {r[0] for r in loaded.db.conn.execute("SELECT qa_pair_id FROM assignments")}
    assert assigned == set(sample.pair_ids)
    assert sample.loads == {ALICE: 4, BOB: 4}
    assert loaded.blind_mode
    params = loaded.assignment_parameters()
    assert params["seed"] == 4 and params["overlap"] == 2
    assert params["sample"] == {"size": 4, "fraction": None, "stratify_by": "repository", "where": [],
                                "pool": 8, "sampled": 4}
    seeds = {r[0] for r in loaded.db.conn.execute("SELECT seed FROM assignments")}
    assert seeds == {4}
    again = loaded.assign_sample([ALICE, BOB], 2, seed=4, by="lead", size=4, stratify_by="repository")
    assert again.pair_ids == sample.pair_ids  # reproducible
    loaded.assign([ALICE, BOB], 1, seed=0, by="lead")  # a full assignment replaces the sample
    assert loaded.assignment_parameters()["sample"] is None


def test_the_sample_is_drawn_from_the_pairs_where_selects(loaded):
    sample = loaded.assign_sample([ALICE], 1, seed=1, by="lead", fraction=1.0, stratify_by="category",
                                  where=QueueFilter(qa_type="How"), where_text=("qa_type=How",))
    assert sample.pool == 2 and sample.pair_ids == [IDS[3], IDS[4]]
    assert sample.strata == {"Implementation Details": (2, 2)}
    assert loaded.assignment_parameters()["sample"]["where"] == ["qa_type=How"]
    # a pair without a category is its own stratum, named ""
    where = QueueFilter(qa_type="Where")
    assert loaded.assign_sample([ALICE], 1, seed=1, by="lead", size=9, stratify_by="category",
                                where=where).strata == {"": (1, 1), "Project Architecture": (1, 1)}


@pytest.mark.parametrize("kw", [{"size": -1}, {"fraction": 2.0}, {}, {"size": 2, "stratify_by": "qa_type"},
                                {"size": 0}, {"fraction": 0.0},
                                {"size": 3, "where": QueueFilter(repository="no-such-repository")}])
def test_bad_sample_parameters_change_nothing(loaded, kw):
    loaded.assign([ALICE, BOB], 1, seed=0, by="lead")
    with pytest.raises(BenchwrightError):
        loaded.assign_sample([ALICE, BOB], 1, seed=1, by="lead", **kw)
    assert loaded.db.conn.execute("SELECT count(*) FROM assignments").fetchone()[0] == 8
    assert loaded.assignment_parameters()["sample"] is None


# ------------------------------------------------------------------------------------------- the report
def known_decisions(store):
    """A QA pass with known outcomes: pairs 0-5 sampled for alice and bob, pair 7 reviewed outside it.

    pair 0 (flask): both reject, reasons directly-answerable / task_validity   -> rejected
    pair 1 (flask): both accept                                                 -> accepted
    pair 2 (flask): alice reject (default: code_relevance), bob reject (same)   -> rejected
    pair 3 (flask): alice accept, bob reject directly-answerable                -> disagreement (undecided)
    pair 4 (flask): alice revise, bob nothing yet                               -> reviews pending
    pair 5 (click): nobody                                                      -> not reviewed
    pair 7 (flask, not sampled): cy reject directly-answerable                  -> rejected
    """
    store.db.conn.execute("DELETE FROM assignments")
    store.db.conn.executemany(
        "INSERT INTO assignments (qa_pair_id, annotator, assigned_at, assigned_by, seed) VALUES (?, ?, 't', 'lead', 0)",
        [(IDS[i], a) for i in range(6) for a in (ALICE, BOB)])
    store.db.conn.commit()
    ok = _criteria(qa_consistency="pass", checklist_quality="pass", task_validity="pass", code_relevance="pass")
    d = store.record_decision
    d(IDS[0], ALICE, "reject", criteria=_criteria(qa_consistency="pass"), reason="directly-answerable")
    d(IDS[0], BOB, "reject", criteria=_criteria(task_validity="fail"))
    d(IDS[1], ALICE, "accept", criteria=ok)
    d(IDS[1], BOB, "accept", criteria=ok)
    d(IDS[2], ALICE, "reject", criteria=_criteria(code_relevance="fail"))
    d(IDS[2], BOB, "reject", criteria=_criteria(code_relevance="fail"), reason="code_relevance")
    d(IDS[3], ALICE, "accept", criteria=ok)
    d(IDS[3], BOB, "reject", criteria=_criteria(), reason="directly-answerable")
    d(IDS[4], ALICE, "revise", criteria=_criteria(checklist_quality="fail"))
    d(IDS[7], CY, "reject", criteria=_criteria(), reason="directly-answerable")


def test_the_qa_report_counts_a_known_pass_exactly(loaded):
    known_decisions(loaded)
    report = qa_report(loaded.qa_items())
    overall = report.overall
    assert (overall.units, overall.accepted, overall.rejected, overall.to_revise, overall.undecided) == (7, 1, 3, 0, 3)
    assert overall.discard_rate == pytest.approx(3 / 4)
    assert overall.pending == {"not reviewed": 1, "reviews pending": 1, "unresolved disagreement": 1}
    assert overall.reasons == {"directly-answerable": 2, "task_validity": 1, "code_relevance": 1}
    sample = report.sample
    assert (sample.units, sample.accepted, sample.rejected, sample.undecided) == (6, 1, 2, 3)
    assert sample.discard_rate == pytest.approx(2 / 3)
    assert sample.reasons == {"directly-answerable": 1, "task_validity": 1, "code_relevance": 1}
    assert set(report.by_repository) == {"flask", "click"}
    flask, click = report.by_repository["flask"], report.by_repository["click"]
    assert (flask.units, flask.accepted, flask.rejected, flask.undecided) == (6, 1, 3, 2)
    assert (click.units, click.undecided, click.discard_rate) == (1, 1, None)
    alice, bob, cy = (report.by_annotator[a] for a in (ALICE, BOB, CY))
    assert (alice.units, alice.accepted, alice.rejected, alice.to_revise, alice.undecided) == (6, 2, 2, 1, 1)
    assert alice.discard_rate == pytest.approx(2 / 5)
    assert alice.reasons == {"directly-answerable": 1, "code_relevance": 1}
    assert (bob.units, bob.accepted, bob.rejected, bob.undecided) == (6, 1, 3, 2)
    assert bob.reasons == {"task_validity": 1, "code_relevance": 1, "directly-answerable": 1}
    assert (cy.units, cy.rejected, cy.discard_rate) == (1, 1, 1.0)
    # criteria over the reviews: task validity passes in 3 accepts, fails in 1 reject, is unset in the rest
    tv = overall.criteria["task_validity"]
    assert tv["pass"] == {"accept": 3, "reject": 0, "revise": 0}
    assert tv["fail"] == {"accept": 0, "reject": 1, "revise": 0}
    assert tv["unset"] == {"accept": 0, "reject": 5, "revise": 1}
    assert overall.criteria["code_relevance"]["fail"]["reject"] == 2


def test_an_old_reject_without_a_reason_counts_as_unspecified(loaded):
    loaded.record_decision(IDS[0], ALICE, "reject", criteria=_criteria())
    report = qa_report(loaded.qa_items())
    assert report.overall.reasons == {UNSPECIFIED: 1}
    assert report.sample.units == 0  # nothing is assigned: no sample
    assert json.loads(json.dumps(report.as_dict()))["all"]["reasons"] == {UNSPECIFIED: 1}


def test_an_unreviewed_unassigned_pair_is_not_in_the_report(loaded):
    assert qa_report(loaded.qa_items()).overall.units == 0
    assert len(QUEUE) == 8


def test_a_pair_only_adjudicated_counts_with_its_final_decision(loaded):
    # a lead may decide a pair nobody reviewed (the funnel and the release count it): so does the QA report
    loaded.adjudicate(QUEUE[3].id, "lead", "accept", "checked it myself")
    report = qa_report(loaded.qa_items())
    assert (report.overall.units, report.overall.accepted) == (1, 1)


def test_a_review_made_before_the_pair_was_reopened_is_undecided_again(loaded):
    loaded.db.conn.executemany(
        "INSERT INTO assignments (qa_pair_id, annotator, assigned_at, assigned_by, seed) VALUES (?, ?, 't', 'lead', 0)",
        [(IDS[0], ALICE), (IDS[0], BOB)])
    loaded.db.conn.commit()
    loaded.record_decision(IDS[0], ALICE, "reject", criteria=_criteria(), reason="directly-answerable")
    loaded.record_decision(IDS[0], BOB, "reject", criteria=_criteria(), reason="directly-answerable")
    assert qa_report(loaded.qa_items()).overall.rejected == 1
    pair = loaded.get_pair(IDS[0])
    loaded.save_text_version(IDS[0], pair.question + " (in flask)", pair.reference_answer, origin="refined",
                             by="gen", model="m")  # a rewrite after the reviews sends the pair back to review
    loaded.record_decision(IDS[0], BOB, "accept", criteria=_criteria())
    report = qa_report(loaded.qa_items())
    assert (report.overall.rejected, report.overall.undecided) == (0, 1)
    assert report.overall.pending == {"text changed after review": 1}
    alice, bob = report.by_annotator[ALICE], report.by_annotator[BOB]
    assert (alice.rejected, alice.undecided, alice.pending) == (0, 1, {"text changed after review": 1})
    assert (bob.accepted, bob.undecided) == (1, 0)
    assert report.overall.criteria["qa_consistency"]["unset"] == {"accept": 1, "reject": 0, "revise": 0}


def test_undo_after_the_text_changed_does_not_revive_a_review_of_the_old_text(loaded):
    loaded.record_decision(IDS[0], ALICE, "accept", criteria=_criteria())
    loaded.save_text_version(IDS[0], "A rewritten question?", "A rewritten answer.", origin="edited", by=BOB)
    assert loaded.reopened(IDS[0], ALICE)  # the accept judged the old text
    loaded.record_decision(IDS[0], ALICE, "reject", criteria=_criteria(), reason="directly-answerable")
    assert loaded.undo_last(ALICE) == IDS[0]
    # the earlier state: the old accept no longer counts, so the pair is undecided, not accepted for the new text
    assert loaded.current_decision(IDS[0], ALICE) is None
    assert loaded.progress(ALICE).mine == 0
