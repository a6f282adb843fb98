"""Reviews: one annotator's judgment of one Q&A pair under the four QA criteria (RepoProbe §3.2
"Quality Assurance"): QA consistency, checklist quality, task validity, code relevance, each pass or fail
with an optional note, plus a decision (accept / reject / revise) and notes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum

from .vocabulary import REJECT_REASON_NAMES, REJECT_REASONS

CRITERIA = ("qa_consistency", "checklist_quality", "task_validity", "code_relevance")
"""The four orthogonal validation criteria, in the order of their digit keys 1-4."""

CRITERION_LABELS = {
    "qa_consistency": "QA consistency",
    "checklist_quality": "checklist quality",
    "task_validity": "task validity",
    "code_relevance": "code relevance",
}
CRITERION_HELP = {
    "qa_consistency": "the answer directly and non-contradictorily answers the question",
    "checklist_quality": "checklist items are correct, granular enough and not conflated",
    "task_validity": "the question needs repository context, not generic knowledge",
    "code_relevance": "the evidence is in the repository's code",
}


class Verdict(StrEnum):
    """A criterion's verdict."""

    PASS = "pass"
    FAIL = "fail"


def next_verdict(v: Verdict | None) -> Verdict | None:
    """Cycle used by the digit keys: unset → pass → fail → unset."""
    return {None: Verdict.PASS, Verdict.PASS: Verdict.FAIL, Verdict.FAIL: None}[v]


@dataclass
class Criteria:
    """Verdicts (None = not judged yet) and optional notes of the four criteria."""

    verdicts: dict[str, Verdict | None] = field(default_factory=lambda: dict.fromkeys(CRITERIA))
    notes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        """Stable JSON: ``{"qa_consistency": {"verdict": "pass", "note": ""}, ...}``."""
        return json.dumps(
            {c: {"verdict": (self.verdicts.get(c).value if self.verdicts.get(c) else None),
                 "note": self.notes.get(c, "")} for c in CRITERIA},
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str | None) -> Criteria:
        """Parse :meth:`to_json` output; None or empty gives unjudged criteria.

        Raises:
            ValueError: unknown criterion or verdict.
        """
        out = cls()
        if not text:
            return out
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"criteria must be a JSON object, not {type(data).__name__}")
        for name, value in data.items():
            if name not in CRITERIA:
                raise ValueError(f"unknown criterion {name!r}")
            verdict = value.get("verdict") if isinstance(value, dict) else value
            out.verdicts[name] = Verdict(verdict) if verdict else None
            if isinstance(value, dict) and value.get("note"):
                out.notes[name] = value["note"]
        return out

    def differs_from(self, other: Criteria) -> list[str]:
        """Criteria whose verdicts differ (both judged or not)."""
        return [c for c in CRITERIA if self.verdicts.get(c) != other.verdicts.get(c)]


@dataclass(frozen=True)
class Review:
    """One annotator's current review of one pair."""

    qa_pair_id: str
    annotator: str
    decision: str
    criteria: Criteria
    notes: str | None
    created_at: str
    reason: str | None = None
    """Why a reject rejects (:func:`decision_reason`); None for other decisions and older rejects."""


def decision_reason(decision: str, criteria: Criteria | None, reason: str | None) -> str | None:
    """The reject reason stored with a decision (RepoProbe §3.2 "Quality Assurance": the four criteria, and
    the dominant cause of discards, direct answerability without repository understanding).

    A reject keeps ``reason`` (one of :data:`benchwright.core.vocabulary.REJECT_REASONS`); without one it
    takes the first failing criterion in :data:`CRITERIA` order, or None when none fails. A reason naming a
    criterion the review marks as passing contradicts it.

    Raises:
        ValueError: a reason with a decision other than ``reject``, an unknown reason, or a criterion
            reason whose criterion is marked pass.
    """
    if decision != "reject":
        if reason is not None:
            raise ValueError(f"a reason is given with a reject only, not with {decision!r}")
        return None
    verdicts = criteria.verdicts if criteria is not None else {}
    if reason is None:
        return next((c for c in CRITERIA if verdicts.get(c) == Verdict.FAIL), None)
    if reason not in REJECT_REASONS:
        raise ValueError(f"unknown reject reason {reason!r}; reasons are {', '.join(REJECT_REASONS)}")
    if verdicts.get(reason) == Verdict.PASS:
        raise ValueError(f"the reason {REJECT_REASON_NAMES[reason]!r} is a criterion this review marks as "
                         "passing; mark it failing or give another reason")
    return reason
