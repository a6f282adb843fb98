"""Disagreement, adjudication and the final decision of a pair: pure rules over plain values.

RepoProbe §3.2 ("Quality Assurance"): pairs are reviewed by several annotators; where they disagree (on the
decision, a criterion, or their checklist edits) an adjudicator decides, with a reason. The store gathers the
inputs (``Store.disagreement_of``, ``Store.final_decision``) and calls these functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from .review import CRITERIA, Review
from .vocabulary import REOPEN_EVIDENCE

DECISIONS = ("accept", "reject", "revise")
"""Decisions that submit a review and that an adjudication may give (``skip`` submits nothing)."""


@dataclass(frozen=True)
class Disagreement:
    """A pair whose annotators disagree: on the decision, on criteria, or on their checklist edits.

    Attributes:
        qa_pair_id: the pair.
        fields: what differs: ``decision``, criterion names, ``checklist``.
        annotators: who reviewed or edited it.
    """

    qa_pair_id: str
    fields: tuple[str, ...]
    annotators: tuple[str, ...]


@dataclass(frozen=True)
class Adjudication:
    """The final decision on a pair, with its reason (and the adjudicated checklist version, if any)."""

    qa_pair_id: str
    adjudicator: str
    decision: str
    reason: str
    checklist_version: int | None
    created_at: str


@dataclass(frozen=True)
class ChecklistEdit:
    """One checklist version as the rules need it: ``text`` is its canonical JSON (``Checklist.to_json``)."""

    author: str
    version: int
    text: str
    created_at: str


def disagreement(
    pair_id: str, reviews: Mapping[str, Review], edits: Mapping[str, ChecklistEdit], *,
    adjudication: Adjudication | None = None, current: ChecklistEdit | None = None,
    settled: ChecklistEdit | None = None,
) -> Disagreement | None:
    """What the annotators of a pair disagree on, or None.

    Args:
        reviews: each annotator's current submitted review.
        edits: each annotator's latest own checklist edit (origin ``edited``).
        adjudication: the latest adjudication of the pair.
        current: the pair's current checklist version; ``settled``: the version the adjudication chose (both
            only needed when the adjudication chose one).

    Two different verdicts on a criterion disagree; an unjudged criterion disagrees with nothing. A checklist
    that came in after an adjudication that chose one (an import, a merge) and differs from it goes back to
    adjudication. Otherwise an adjudication newer than every review and edit settles the disagreement.
    """
    fields: list[str] = []
    if len(reviews) >= 2:
        rs = list(reviews.values())
        if len({r.decision for r in rs}) > 1:
            fields.append("decision")
        for c in CRITERIA:
            if len({r.criteria.verdicts.get(c) for r in rs} - {None}) > 1:
                fields.append(c)
    if len(edits) >= 2 and len({e.text for e in edits.values()}) > 1:
        fields.append("checklist")
    people = set(reviews) | set(edits)
    if (adjudication is not None and adjudication.checklist_version is not None and current is not None
            and settled is not None and current.version > settled.version and current.text != settled.text):
        fields.append("checklist")
        return Disagreement(pair_id, tuple(fields), tuple(sorted(people | {current.author})))
    if not fields:
        return None
    if adjudication is not None:
        latest = max([r.created_at for r in reviews.values()] + [e.created_at for e in edits.values()])
        if adjudication.created_at >= latest:
            return None
    return Disagreement(pair_id, tuple(fields), tuple(sorted(people)))


def may_adjudicate(adjudicator: str, dispute: Disagreement | None) -> bool:
    """False when ``adjudicator`` is one of the annotators of ``dispute`` (someone else must decide it)."""
    return dispute is None or adjudicator not in dispute.annotators


class Exclusion(StrEnum):
    """Why a pair stays out of a release (or has no final decision yet); the value describes it."""

    DROPPED_IMAGES = "dropped by images (relies on an image)"
    DROPPED_CLASSIFY = "dropped by classify (not code-understanding relevant)"
    DROPPED_VERIFY = "dropped by verify (failed the verifier)"
    NOT_REVIEWED = "not reviewed"
    REVIEWS_PENDING = "reviews pending"
    UNRESOLVED_DISAGREEMENT = "unresolved disagreement"
    TEXT_CHANGED = "text changed after review"
    EVIDENCE_STALE = "cited evidence changed after review (evidence-stale)"
    REJECTED = "not accepted (final decision: reject)"
    TO_REVISE = "not accepted (final decision: revise)"
    NO_CHECKLIST = "no checklist"
    DRAFT_CHECKLIST = "draft checklist"
    INVALID_CHECKLIST = "invalid checklist"
    STALE_CHECKLIST = "stale checklist (made from an older text of the pair)"
    NO_REFERENCE = "no reference answer"
    NO_COMMIT = "missing repository commit"

    @classmethod
    def dropped(cls, step: str) -> Exclusion:
        """The exclusion of a pair the gating step ``step`` dropped (:func:`benchwright.core.funnel.dropped_by`).

        Raises:
            ValueError: ``step`` is no gating step with an exclusion (every one of
                :func:`benchwright.core.steps.gating_steps` has one; tests/core/test_adjudication.py checks).
        """
        for member in cls:
            if member.value.startswith(f"dropped by {step} ("):
                return member
        raise ValueError(f"no release exclusion for a pair dropped by {step!r}")

    @classmethod
    def not_accepted(cls, decision: str) -> Exclusion:
        """The exclusion of a pair whose final decision is ``decision`` (``reject`` or ``revise``).

        Raises:
            ValueError: ``decision`` is not one that keeps a pair out.
        """
        if decision == "reject":
            return cls.REJECTED
        if decision == "revise":
            return cls.TO_REVISE
        raise ValueError(f"decision {decision!r} does not keep a pair out of a release")

    @classmethod
    def reopened(cls, reason: str | None) -> Exclusion:
        """The exclusion of a pair sent back to review for ``reason`` (``qa_pairs.reopened_reason``:
        :data:`~benchwright.core.vocabulary.REOPEN_EVIDENCE` gives :attr:`EVIDENCE_STALE`; a new text version,
        :data:`~benchwright.core.vocabulary.REOPEN_TEXT`, or an unknown reason gives :attr:`TEXT_CHANGED`)."""
        return cls.EVIDENCE_STALE if reason == REOPEN_EVIDENCE else cls.TEXT_CHANGED


class FinalDecision(NamedTuple):
    """A pair's final decision: ``decision`` (None when there is none yet, ``why_not`` says why) and whether
    an adjudication made it."""

    decision: str | None
    adjudicated: bool
    why_not: Exclusion | None


def final_decision(
    reviews: Mapping[str, Review], assignees: Sequence[str], *, adjudication: Adjudication | None,
    disagreement: Disagreement | None, reopened_at: str | None, reopened_reason: str | None = None,
) -> FinalDecision:
    """The final decision of a pair.

    The latest adjudication wins when nothing is in dispute; otherwise the reviews' decision when every
    assignee submitted one and every review agrees (no ``disagreement``). A decision made before
    ``reopened_at`` (``qa_pairs.reopened_at``: when the pair was last sent back to review, by a new text version
    (``import --update``, a curation rewrite, an edit) or by stale evidence (``repos move``); None when it never
    was) judged another text or other evidence: it is not final until the pair is reviewed (or adjudicated)
    again. The exclusion then names ``reopened_reason`` (:meth:`Exclusion.reopened`).
    """
    if adjudication is not None and disagreement is None:
        if reopened_at and adjudication.created_at < reopened_at:
            return FinalDecision(None, False, Exclusion.reopened(reopened_reason))
        return FinalDecision(adjudication.decision, True, None)
    if disagreement is not None:
        return FinalDecision(None, False, Exclusion.UNRESOLVED_DISAGREEMENT)
    if not reviews:
        return FinalDecision(None, False, Exclusion.NOT_REVIEWED)
    if any(a not in reviews for a in assignees):
        return FinalDecision(None, False, Exclusion.REVIEWS_PENDING)
    if reopened_at and any(r.created_at < reopened_at for r in reviews.values()):
        return FinalDecision(None, False, Exclusion.reopened(reopened_reason))
    return FinalDecision(next(iter(reviews.values())).decision, False, None)


def release_exclusion(
    final: FinalDecision, *, has_checklist: bool, draft_checklist: bool = False, valid_checklist: bool = True,
    stale_checklist: bool = False, needs_reference: bool = False, repository_pinned: bool = True,
    dropped_by: str | None = None,
) -> Exclusion | None:
    """Why a pair stays out of a release, or None when it goes in.

    First, a pair a gating curation step dropped (``dropped_by``: the step, RepoProbe §3.2's funnel) stays out
    (:meth:`Exclusion.dropped`); the store passes None for every pair when asked to include dropped pairs
    (``releases create --include-dropped``).

    A pair goes in when its final decision is ``accept``, its current checklist exists, is valid, not a
    draft and not stale (:func:`benchwright.core.models.checklist_stale`: made from an older text of the pair),
    it has a reference answer, and its repository is pinned (a commit or a version label). The first failing
    condition, in that order, is the reason.
    """
    if dropped_by is not None:
        return Exclusion.dropped(dropped_by)
    if final.decision is None:
        return final.why_not or Exclusion.NOT_REVIEWED
    if final.decision != "accept":
        return Exclusion.not_accepted(final.decision)
    if not has_checklist:
        return Exclusion.NO_CHECKLIST
    if draft_checklist:
        return Exclusion.DRAFT_CHECKLIST
    if not valid_checklist:
        return Exclusion.INVALID_CHECKLIST
    if stale_checklist:
        return Exclusion.STALE_CHECKLIST
    if needs_reference:
        return Exclusion.NO_REFERENCE
    if not repository_pinned:
        return Exclusion.NO_COMMIT
    return None
