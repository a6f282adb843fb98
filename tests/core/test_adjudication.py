"""Disagreement, the final decision and release exclusion (core/adjudication.py) as pure functions."""

from __future__ import annotations

import pytest

from benchwright.core.adjudication import (
    Adjudication,
    ChecklistEdit,
    Disagreement,
    Exclusion,
    FinalDecision,
    disagreement,
    final_decision,
    may_adjudicate,
    release_exclusion,
)
from benchwright.core.review import Criteria, Review, Verdict

P = "qa_1"


def review(who: str, decision: str, at: str = "2026-01-01T10:00:00", **verdicts: str) -> Review:
    c = Criteria(verdicts={**Criteria().verdicts, **{k: Verdict(v) for k, v in verdicts.items()}})
    return Review(P, who, decision, c, None, at)


def adj(decision="accept", at="2026-01-02T00:00:00", version=None) -> Adjudication:
    return Adjudication(P, "lead", decision, "why", version, at)


def edit(who, version, text, at="2026-01-01T11:00:00") -> ChecklistEdit:
    return ChecklistEdit(who, version, text, at)


def test_disagreement_on_decision_criteria_and_checklist():
    rs = {"ada": review("ada", "accept", qa_consistency="pass", task_validity="pass"),
          "bob": review("bob", "reject", qa_consistency="fail")}
    d = disagreement(P, rs, {"ada": edit("ada", 2, "A"), "bob": edit("bob", 3, "B")})
    assert d.fields == ("decision", "qa_consistency", "checklist") and d.annotators == ("ada", "bob")
    # an unjudged criterion disagrees with nothing; equal edits agree
    assert disagreement(P, {"ada": review("ada", "accept", task_validity="pass"), "bob": review("bob", "accept")},
                        {"ada": edit("ada", 2, "A"), "bob": edit("bob", 3, "A")}) is None
    assert disagreement(P, {"ada": rs["ada"]}, {}) is None  # one review disagrees with nobody


def test_an_adjudication_settles_until_newer_work_or_a_differing_later_checklist():
    rs = {"ada": review("ada", "accept"), "bob": review("bob", "reject")}
    assert disagreement(P, rs, {}, adjudication=adj()) is None
    assert disagreement(P, rs, {}, adjudication=adj(at="2025-12-31T00:00:00")).fields == ("decision",)
    settled, later = edit("lead", 3, "S"), edit("carl", 4, "T")
    d = disagreement(P, {}, {}, adjudication=adj(version=3), current=later, settled=settled)
    assert d.fields == ("checklist",) and d.annotators == ("carl",)
    assert disagreement(P, {}, {}, adjudication=adj(version=3), current=edit("carl", 4, "S"), settled=settled) is None


@pytest.mark.parametrize(("kw", "expected"), [
    ({"reviews": {}}, FinalDecision(None, False, Exclusion.NOT_REVIEWED)),
    ({"assignees": ["ada", "bob"]}, FinalDecision(None, False, Exclusion.REVIEWS_PENDING)),
    ({}, FinalDecision("accept", False, None)),
    ({"reopened_at": "2026-01-01T12:00:00"}, FinalDecision(None, False, Exclusion.TEXT_CHANGED)),
    ({"disagreement": object()}, FinalDecision(None, False, Exclusion.UNRESOLVED_DISAGREEMENT)),
    ({"adjudication": adj("reject")}, FinalDecision("reject", True, None)),
    ({"adjudication": adj(), "reopened_at": "2026-01-03T00:00:00"},
     FinalDecision(None, False, Exclusion.TEXT_CHANGED)),
    ({"adjudication": adj(), "disagreement": object()}, FinalDecision(None, False, Exclusion.UNRESOLVED_DISAGREEMENT)),
    ({"reopened_at": "2026-01-01T12:00:00", "reopened_reason": "evidence-stale"},
     FinalDecision(None, False, Exclusion.EVIDENCE_STALE)),
    ({"adjudication": adj(), "reopened_at": "2026-01-03T00:00:00", "reopened_reason": "evidence-stale"},
     FinalDecision(None, False, Exclusion.EVIDENCE_STALE)),
    ({"reopened_at": "2026-01-01T12:00:00", "reopened_reason": "text"},
     FinalDecision(None, False, Exclusion.TEXT_CHANGED)),
])
def test_final_decision(kw, expected):
    args = {"reviews": {"ada": review("ada", "accept")}, "assignees": ["ada"], "adjudication": None,
            "disagreement": None, "reopened_at": None, **kw}
    assert final_decision(args.pop("reviews"), args.pop("assignees"), **args) == expected


def test_release_exclusion_in_order_and_worded_as_before():
    ok = FinalDecision("accept", False, None)
    assert release_exclusion(ok, has_checklist=True) is None
    assert release_exclusion(FinalDecision(None, False, Exclusion.REVIEWS_PENDING), has_checklist=True) == \
        "reviews pending"
    assert release_exclusion(FinalDecision("reject", True, None), has_checklist=True) == \
        "not accepted (final decision: reject)"
    assert release_exclusion(FinalDecision("revise", False, None), has_checklist=False) is Exclusion.TO_REVISE
    assert release_exclusion(ok, has_checklist=False, needs_reference=True) is Exclusion.NO_CHECKLIST
    assert release_exclusion(ok, has_checklist=True, draft_checklist=True, valid_checklist=False) is \
        Exclusion.DRAFT_CHECKLIST
    assert release_exclusion(ok, has_checklist=True, valid_checklist=False) is Exclusion.INVALID_CHECKLIST
    assert release_exclusion(ok, has_checklist=True, needs_reference=True, repository_pinned=False) is \
        Exclusion.NO_REFERENCE
    assert release_exclusion(ok, has_checklist=True, repository_pinned=False) == "missing repository commit"
    assert release_exclusion(ok, has_checklist=True, stale_checklist=True) is Exclusion.STALE_CHECKLIST
    assert release_exclusion(ok, has_checklist=True, valid_checklist=False, stale_checklist=True) is \
        Exclusion.INVALID_CHECKLIST
    with pytest.raises(ValueError, match="accept"):
        Exclusion.not_accepted("accept")


def test_an_annotator_of_a_dispute_does_not_adjudicate_it():
    dispute = Disagreement(P, ("decision",), ("ada", "bob"))
    assert not may_adjudicate("ada", dispute) and may_adjudicate("lead", dispute) and may_adjudicate("ada", None)
