"""The human QA pass in numbers (RepoProbe §3.2 "Quality Assurance": a subset of the verifier's survivors is
inspected on four orthogonal criteria; more than half were discarded, mostly as directly answerable without
repository understanding): accepted and rejected, by criterion, by repository, by reject reason and by
annotator, with the discard rate."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .review import CRITERIA, Review, Verdict
from .vocabulary import REJECT_REASONS

UNSPECIFIED = "unspecified"
"""The reason of a reject that records none (made before reasons were kept, or with no failing criterion)."""

NOT_REVIEWED = "not reviewed"
"""Why an annotator's assigned pair is undecided when they have not reviewed it."""

UNSET = "unset"
"""A criterion the review left unjudged."""

VERDICTS = (Verdict.PASS.value, Verdict.FAIL.value, UNSET)
"""The verdict columns of the criterion table."""

OUTCOMES = ("accept", "reject", "revise")
"""Decisions a review or a final decision can have."""

ALL, SAMPLE = "all", "sample"
"""Scope names of the two overall tallies: every pair in the report, and the QA sample (assigned pairs)."""


@dataclass(frozen=True)
class QAItem:
    """One pair as the QA report needs it.

    Attributes:
        pair_id, repository, category: the pair (None: no value).
        assignees: annotators it is assigned to (empty: not in the QA sample).
        decision: its final decision (:func:`benchwright.core.adjudication.final_decision`), None if none yet.
        pending: why there is none yet (the exclusion's wording, e.g. ``reviews pending``), else None.
        reviews: each annotator's current submitted review that still counts.
        stale: annotators whose review was made before the pair was sent back to review
            (``qa_pairs.reopened_at``), with why, as the exclusion words it: undecided again.
    """

    pair_id: str
    repository: str | None
    category: str | None
    assignees: Sequence[str]
    decision: str | None
    pending: str | None
    reviews: Mapping[str, Review]
    stale: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Tally:
    """Counts of one scope.

    ``units`` are pairs (overall, sample, per repository: decisions are final decisions) or an annotator's
    pairs (assigned to them or reviewed by them: decisions are their reviews'). ``reasons``: rejects by
    reason (a rejected pair counts once under each distinct reason its reject reviews give; :data:`UNSPECIFIED`
    when none does). ``criteria``: ``{criterion: {verdict: {decision: reviews}}}`` over the scope's reviews.
    ``pending``: undecided units by why.
    """

    units: int = 0
    accepted: int = 0
    rejected: int = 0
    to_revise: int = 0
    undecided: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    criteria: dict[str, dict[str, dict[str, int]]] = field(
        default_factory=lambda: {c: {v: dict.fromkeys(OUTCOMES, 0) for v in VERDICTS} for c in CRITERIA})
    pending: dict[str, int] = field(default_factory=dict)

    @property
    def decided(self) -> int:
        """Units with a decision: accepted + rejected + to revise."""
        return self.accepted + self.rejected + self.to_revise

    @property
    def discard_rate(self) -> float | None:
        """rejected / decided (a pair to revise is decided and kept), None when nothing is decided."""
        return self.rejected / self.decided if self.decided else None

    def _count(self, decision: str | None, reasons: Iterable[str | None], pending: str | None) -> None:
        self.units += 1
        if decision is None:
            self.undecided += 1
            if pending:
                self.pending[pending] = self.pending.get(pending, 0) + 1
            return
        attr = {"accept": "accepted", "reject": "rejected", "revise": "to_revise"}[decision]
        setattr(self, attr, getattr(self, attr) + 1)
        if decision == "reject":
            for r in sorted({r or UNSPECIFIED for r in reasons} or {UNSPECIFIED}):
                self.reasons[r] = self.reasons.get(r, 0) + 1

    def _criteria(self, reviews: Iterable[Review]) -> None:
        for review in reviews:
            for c in CRITERIA:
                v = review.criteria.verdicts.get(c)
                self.criteria[c][v.value if v else UNSET][review.decision] += 1

    def as_dict(self) -> dict:
        """JSON-ready: every count, ``decided`` and ``discard_rate``; reasons in registry order."""
        return {"units": self.units, "accepted": self.accepted, "rejected": self.rejected,
                "to_revise": self.to_revise, "decided": self.decided, "undecided": self.undecided,
                "discard_rate": self.discard_rate, "reasons": _ordered_reasons(self.reasons),
                "criteria": self.criteria, "pending": dict(sorted(self.pending.items()))}


def _ordered_reasons(reasons: Mapping[str, int]) -> dict[str, int]:
    order = [*REJECT_REASONS, UNSPECIFIED]
    return {r: reasons[r] for r in sorted(reasons, key=lambda r: (order.index(r) if r in order else len(order), r))}


@dataclass
class QAReport:
    """The QA report: ``overall`` (every pair in the QA sample or reviewed by anyone), ``sample`` (the
    assigned pairs), ``by_repository`` (pairs, None as ``""``) and ``by_annotator`` (each annotator's
    reviews; undecided: assigned and not reviewed)."""

    overall: Tally
    sample: Tally
    by_repository: dict[str, Tally]
    by_annotator: dict[str, Tally]

    def as_dict(self) -> dict:
        """JSON-ready form of every tally."""
        return {ALL: self.overall.as_dict(), SAMPLE: self.sample.as_dict(),
                "by_repository": {k: t.as_dict() for k, t in self.by_repository.items()},
                "by_annotator": {k: t.as_dict() for k, t in self.by_annotator.items()}}

    def reasons(self) -> list[str]:
        """Every reject reason some scope counts, in registry order (:data:`UNSPECIFIED` last)."""
        return list(_ordered_reasons({r: 0 for _, _, t in self.scopes() for r in t.reasons}))

    def scopes(self) -> list[tuple[str, str, Tally]]:
        """``(kind, name, tally)`` of every tally in table order: ``("all", "", ...)``, ``("sample", "",
        ...)``, then ``("repository", name, ...)`` and ``("annotator", name, ...)``, names sorted."""
        return ([(ALL, "", self.overall), (SAMPLE, "", self.sample)]
                + [("repository", k, t) for k, t in self.by_repository.items()]
                + [("annotator", k, t) for k, t in self.by_annotator.items()])

    def summary_rows(self) -> list[dict]:
        """One row per scope: kind, name, units, accepted, rejected, to_revise, decided, undecided,
        discard_rate (None when nothing is decided)."""
        return [{"scope": kind, "name": name, **{k: v for k, v in t.as_dict().items()
                                                  if k not in ("reasons", "criteria", "pending")}}
                for kind, name, t in self.scopes()]

    def criterion_rows(self) -> list[dict]:
        """One row per scope, criterion and verdict: reviews by decision (accept, reject, revise) and total."""
        return [{"scope": kind, "name": name, "criterion": c, "verdict": v, **counts, "total": sum(counts.values())}
                for kind, name, t in self.scopes() for c in CRITERIA for v, counts in t.criteria[c].items()]

    def reason_rows(self) -> list[dict]:
        """One row per scope and reject reason that occurs: the count."""
        return [{"scope": kind, "name": name, "reason": r, "rejected": n}
                for kind, name, t in self.scopes() for r, n in _ordered_reasons(t.reasons).items()]


def qa_report(items: Iterable[QAItem]) -> QAReport:
    """Tally the QA pass over ``items``: the pairs in the QA sample (assigned), every reviewed pair and every pair
    with a final decision (an adjudication of a pair nobody reviewed counts, as in the funnel and the release);
    other items are left out.

    A pair's outcome is its final decision (accept, reject, revise) or undecided (``QAItem.pending`` says
    why); an annotator's is their own review, undecided when a pair assigned to them has none or only one
    made before the pair was sent back to review (``QAItem.stale``). The discard
    rate is rejected / decided, where decided counts accepted, rejected and to-revise units.
    """
    overall, sample = Tally(), Tally()
    repos: dict[str, Tally] = {}
    annotators: dict[str, Tally] = {}
    for item in items:
        if not item.assignees and not item.reviews and not item.stale and item.decision is None:
            continue
        reviews = list(item.reviews.values())
        rejects = [r.reason for r in reviews if r.decision == "reject"]
        tallies = [overall, repos.setdefault(item.repository or "", Tally())]
        if item.assignees:
            tallies.append(sample)
        for t in tallies:
            t._count(item.decision, rejects, item.pending)
            t._criteria(reviews)
        for who in sorted({*item.assignees, *item.reviews, *item.stale}):
            t = annotators.setdefault(who, Tally())
            review = item.reviews.get(who)
            if review is None:
                t._count(None, (), item.stale.get(who, NOT_REVIEWED))
                continue
            t._count(review.decision, [review.reason], None)
            t._criteria([review])
    return QAReport(overall, sample, dict(sorted(repos.items())), dict(sorted(annotators.items())))
