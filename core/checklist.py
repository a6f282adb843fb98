"""Weighted scoring checklists: the RepoProbe Checklist-Based Verification Protocol.

Structure (RepoProbe §4.1 "Checklist Structure"): a checklist has 1-4 knowledge items and exactly one
clarity item. Each item has a key point, an integer score weight and a rubric: the discrete scores a judge
may give, each with its criterion. Knowledge weights are integers summing to 9; the clarity item
("Clarity & Organization") is worth 1 with allowed scores {0, 1}. Every item's allowed scores are its
rubric's scores; they include 0 and the weight and are integers within [0, weight]. A binary rubric is
{0, weight}; a multi-tier rubric has one criterion per score.

The models here accept any shape (so drafts and imported checklists can be stored and fixed);
:func:`validate` lists every rule a checklist breaks. Scoring (:func:`score`) follows RepoProbe §5.1.3.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from math import floor

from pydantic import BaseModel, ConfigDict, Field

from .canonical import canonical_json
from .errors import BenchwrightError

KNOWLEDGE_POINTS = 9
"""Sum of the knowledge items' weights (RepoProbe §4.1)."""
CLARITY_POINTS = 1
"""Weight of the clarity item (RepoProbe §4.1)."""
TOTAL_POINTS = KNOWLEDGE_POINTS + CLARITY_POINTS
MIN_KNOWLEDGE_ITEMS, MAX_KNOWLEDGE_ITEMS = 1, 4

CLARITY_KEY_POINT = "Clarity & Organization"
CLARITY_RUBRIC = (
    (0, "Severe hallucination, or an incoherent, disorganized answer."),
    (1, "Clear, well-organized answer without severe hallucination."),
)


class ItemKind(StrEnum):
    """Knowledge items carry the reference answer's facts; the clarity item judges the presentation."""

    KNOWLEDGE = "knowledge"
    CLARITY = "clarity"


class Origin(StrEnum):
    """Where a checklist version came from."""

    GENERATED = "generated"
    EDITED = "edited"
    IMPORTED = "imported"
    ADJUDICATED = "adjudicated"


class RubricTier(BaseModel):
    """One allowed score of an item and the criterion for giving it."""

    model_config = ConfigDict(extra="forbid")

    score: int = Field(strict=True, description="Points given when the criterion is met; an integer in [0, weight].")
    criterion: str = Field(description="When this score applies, in one sentence.")


class ChecklistItem(BaseModel):
    """A checklist item: key point, score weight and evaluating rubric (RepoProbe §4.1)."""

    model_config = ConfigDict(extra="forbid")

    kind: ItemKind = ItemKind.KNOWLEDGE
    key_point: str = Field(description="A precise, atomic aspect of the reference answer.")
    weight: int = Field(strict=True, description="Maximum points for this item.")
    rubric: list[RubricTier] = Field(description="The allowed discrete scores, each with its criterion.")

    @property
    def allowed_scores(self) -> list[int]:
        """The rubric's scores, sorted and without repeats."""
        return sorted({t.score for t in self.rubric})

    @property
    def is_binary(self) -> bool:
        """True when the rubric has exactly the scores {0, weight}."""
        return self.allowed_scores == sorted({0, self.weight})


class Checklist(BaseModel):
    """A scoring checklist: knowledge items and the clarity item, in display order."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"title": "benchwright checklist"})

    items: list[ChecklistItem]

    @property
    def knowledge_items(self) -> list[ChecklistItem]:
        """The knowledge items in order."""
        return [i for i in self.items if i.kind is ItemKind.KNOWLEDGE]

    @property
    def clarity_item(self) -> ChecklistItem | None:
        """The (first) clarity item, if any."""
        return next((i for i in self.items if i.kind is ItemKind.CLARITY), None)

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, no extra spaces): the stored and hashed form."""
        return canonical_json(self.model_dump(mode="json"))


def clarity_item() -> ChecklistItem:
    """The fixed clarity item: weight 1, scores {0, 1}."""
    return ChecklistItem(
        kind=ItemKind.CLARITY, key_point=CLARITY_KEY_POINT, weight=CLARITY_POINTS,
        rubric=[RubricTier(score=s, criterion=c) for s, c in CLARITY_RUBRIC],
    )


def binary_rubric(weight: int, key_point: str = "") -> list[RubricTier]:
    """A binary rubric {0, weight}: full credit when the key point is covered, else zero."""
    return [
        RubricTier(score=weight, criterion=f"Covers the key point{': ' + key_point if key_point else ''}."),
        RubricTier(score=0, criterion="Does not cover it, or gets it wrong."),
    ]


def checklist_json_schema() -> dict:
    """The JSON Schema of :class:`Checklist` (published by ``benchwright checklists schema``)."""
    schema = Checklist.model_json_schema()
    # The files benchwright reads and writes carry the checklist with its record fields.
    schema["properties"].update({
        "qa_pair_id": {"type": "string", "description": "The Q&A pair the checklist belongs to."},
        "question": {"type": "string", "description": "Alternative to qa_pair_id: the pair's exact question."},
        "version": {"type": "integer", "description": "Version number (export only; ignored on import)."},
        "origin": {"enum": ["generated", "edited", "imported", "adjudicated"], "description": "Export only."},
        "draft": {"type": "boolean", "description": "A draft may break the rules; it is never released."},
        "valid": {"type": "boolean", "description": "Export only: whether the rules hold."},
    })
    schema["description"] = (
        "A RepoProbe-style weighted checklist (RepoProbe §4.1): 1-4 knowledge items whose integer weights "
        "sum to 9, and one clarity item of weight 1 with scores {0, 1}. Allowed scores of an item are its "
        "rubric's scores: integers in [0, weight] including 0 and the weight."
    )
    return schema


# ------------------------------------------------------------------------------------------ validation
@dataclass(frozen=True)
class Violation:
    """A broken rule.

    Attributes:
        rule: a stable identifier (``knowledge-count``, ``weight-sum``, ``rubric-missing-zero`` ...).
        message: a sentence a user can act on.
        item: 0-based index into ``Checklist.items``, or None for a rule about the whole checklist.
    """

    rule: str
    message: str
    item: int | None = None

    def __str__(self) -> str:
        return self.message if self.item is None else f"item {self.item + 1}: {self.message}"


RULES = (
    "knowledge-count", "clarity-count", "weight-sum", "weight-positive", "clarity-weight", "clarity-scores",
    "rubric-empty", "rubric-missing-zero", "rubric-missing-weight", "rubric-out-of-range",
    "rubric-duplicate-score", "criterion-empty", "key-point-empty", "key-point-duplicate",
)
"""Every rule :func:`validate` checks, by identifier."""


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def validate(checklist: Checklist) -> list[Violation]:
    """Every rule of RepoProbe §4.1 that ``checklist`` breaks, in item order; [] when it is valid."""
    out: list[Violation] = []
    knowledge = [(i, it) for i, it in enumerate(checklist.items) if it.kind is ItemKind.KNOWLEDGE]
    clarity = [(i, it) for i, it in enumerate(checklist.items) if it.kind is ItemKind.CLARITY]
    n = len(knowledge)
    if not MIN_KNOWLEDGE_ITEMS <= n <= MAX_KNOWLEDGE_ITEMS:
        out.append(Violation("knowledge-count", f"there are {n} knowledge items; there must be 1 to 4"))
    if len(clarity) != 1:
        out.append(Violation("clarity-count", f"there are {len(clarity)} clarity items; there must be exactly 1"))
    total = sum(it.weight for _, it in knowledge)
    if n and total != KNOWLEDGE_POINTS:
        out.append(Violation("weight-sum", f"knowledge weights sum to {total}; they must sum to {KNOWLEDGE_POINTS}"))
    seen_points: dict[str, int] = {}
    for i, it in enumerate(checklist.items):
        if not it.key_point.strip():
            out.append(Violation("key-point-empty", "the key point is empty", i))
        else:
            key = _norm(it.key_point)
            if key in seen_points:
                out.append(Violation("key-point-duplicate", f"the key point repeats item {seen_points[key] + 1}", i))
            else:
                seen_points[key] = i
        if it.kind is ItemKind.CLARITY:
            if it.weight != CLARITY_POINTS:
                out.append(Violation("clarity-weight", f"the clarity item is worth {it.weight}; it must be worth 1", i))
            if it.allowed_scores != [0, 1]:
                out.append(Violation("clarity-scores", f"the clarity item allows {it.allowed_scores}; it must allow exactly [0, 1]", i))
        elif it.weight < 1:
            out.append(Violation("weight-positive", f"the weight is {it.weight}; it must be a whole number of at least 1", i))
        if not it.rubric:
            out.append(Violation("rubric-empty", "the rubric has no scores", i))
            continue
        scores = [t.score for t in it.rubric]
        # The clarity item's scores are fixed ({0, 1}: clarity-scores); checking them against its stated
        # weight as well would give contradicting advice ("add score 2") when that weight is wrong.
        if it.kind is not ItemKind.CLARITY:
            if 0 not in scores:
                out.append(Violation("rubric-missing-zero", "the rubric has no score 0", i))
            if it.weight not in scores:
                out.append(Violation("rubric-missing-weight", f"the rubric has no score {it.weight} (the full weight)", i))
            outside = sorted({s for s in scores if not 0 <= s <= max(it.weight, 0)})
            if outside:
                out.append(Violation("rubric-out-of-range", f"scores {outside} are outside 0..{it.weight}", i))
        dupes = sorted({s for s in scores if scores.count(s) > 1})
        if dupes:
            out.append(Violation("rubric-duplicate-score", f"score {', '.join(map(str, dupes))} has more than one criterion", i))
        if any(not t.criterion.strip() for t in it.rubric):
            out.append(Violation("criterion-empty", "a rubric score has an empty criterion", i))
    return out


def is_valid(checklist: Checklist) -> bool:
    """True when :func:`validate` finds nothing."""
    return not validate(checklist)


# ---------------------------------------------------------------------------------------------- scoring
class ScoreError(BenchwrightError):
    """A score is missing or not in its item's allowed set (never rounded or clamped)."""


@dataclass(frozen=True)
class ChecklistScore:
    """Points of one answer under one checklist (RepoProbe §5.1.3).

    Attributes:
        total: s in [0, 10]; knowledge: s_kn in [0, 9]; clarity: s_cl in {0, 1}.
    """

    total: int
    knowledge: int
    clarity: int

    @property
    def overall(self) -> float:
        """s / 10, in [0, 1]."""
        return self.total / TOTAL_POINTS

    @property
    def knowledge_rate(self) -> float:
        """s_kn / 9, in [0, 1]."""
        return self.knowledge / KNOWLEDGE_POINTS

    @property
    def perfect(self) -> bool:
        """True when s = 10 (counts toward the Perfect Solve Rate)."""
        return self.total == TOTAL_POINTS


def score(checklist: Checklist, scores: list[int]) -> ChecklistScore:
    """Total, knowledge and clarity points for one score per item (in ``checklist.items`` order).

    Raises:
        ScoreError: the checklist is invalid, the number of scores differs from the number of items,
            or a score is not in its item's allowed scores.
    """
    problems = validate(checklist)
    if problems:
        raise ScoreError(f"cannot score with an invalid checklist: {problems[0]}")
    if len(scores) != len(checklist.items):
        raise ScoreError(f"{len(scores)} scores for {len(checklist.items)} items")
    kn = cl = 0
    for i, (it, s) in enumerate(zip(checklist.items, scores, strict=True)):
        if isinstance(s, bool) or not isinstance(s, int) or s not in it.allowed_scores:
            raise ScoreError(f"item {i + 1}: score {s!r} is not one of the allowed scores {it.allowed_scores}")
        if it.kind is ItemKind.CLARITY:
            cl += s
        else:
            kn += s
    return ChecklistScore(total=kn + cl, knowledge=kn, clarity=cl)


# -------------------------------------------------------------------------------------- normalization
def largest_remainder(weights: list[int], total: int = KNOWLEDGE_POINTS) -> list[int]:
    """Integer weights summing to ``total``, proportional to ``weights`` (largest remainder method).

    Each result is at least 1 when ``total >= len(weights)``; ties in remainders go to the earlier item.
    Negative weights count as 0; all-zero input is split as evenly as possible. Quotas are exact
    fractions, so equal remainders really tie. An item whose quota rounds to 0 gets 1 point, taken from
    the item furthest above its quota (so a larger weight never ends up with fewer points).

    Raises:
        ValueError: no weights, or more weights than ``total`` points.
    """
    if not weights:
        raise ValueError("no weights to normalize")
    if len(weights) > total:
        raise ValueError(f"{len(weights)} items cannot each get at least 1 of {total} points")
    base = [max(w, 0) for w in weights]
    if sum(base) == 0:
        base = [1] * len(weights)
    quotas = [Fraction(w * total, sum(base)) for w in base]
    result = [floor(q) for q in quotas]
    order = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - result[i]), i))
    for i in order[: total - sum(result)]:
        result[i] += 1
    # every item keeps at least one point: take it from the item furthest above its quota
    for i, r in enumerate(result):
        if r == 0:
            donor = max((j for j in range(len(result)) if result[j] > 1),
                        key=lambda j: (result[j] - quotas[j], result[j], -j))
            result[donor] -= 1
            result[i] = 1
    return result


def rescale_item(item: ChecklistItem, weight: int) -> ChecklistItem:
    """``item`` with a new weight; rubric scores scaled proportionally (rounded), keeping 0 and the weight."""
    if item.weight == weight:
        return item
    if item.is_binary or item.weight <= 0:
        # full credit maps to full credit and 0 to 0; a side the old rubric cannot tell gets the default
        tiers = {t.score: t.criterion for t in binary_rubric(weight, item.key_point)}
        for t in item.rubric:
            if item.weight > 0 and t.score == item.weight:
                tiers[weight] = t.criterion
            elif t.score == 0:
                tiers[0] = t.criterion
    else:
        tiers = {}
        for t in sorted(item.rubric, key=lambda t: -t.score):
            s = round(t.score * weight / item.weight)
            s = weight if t.score == item.weight else 0 if t.score == 0 else min(max(s, 1), weight - 1) if weight > 1 else s
            tiers.setdefault(s, t.criterion)
        tiers.setdefault(0, "Does not cover it, or gets it wrong.")
        tiers.setdefault(weight, f"Covers the key point: {item.key_point}")
    rubric = [RubricTier(score=s, criterion=c) for s, c in sorted(tiers.items(), reverse=True)]
    return item.model_copy(update={"weight": weight, "rubric": rubric})


def normalize_weights(checklist: Checklist) -> Checklist:
    """A proposal: knowledge weights made to sum to 9 in proportion to the current ones (largest
    remainder), rubrics rescaled with them. The input is not changed.

    Raises:
        ValueError: no knowledge items, or more than 9.
    """
    knowledge = [i for i, it in enumerate(checklist.items) if it.kind is ItemKind.KNOWLEDGE]
    new = largest_remainder([checklist.items[i].weight for i in knowledge])
    items = list(checklist.items)
    for i, w in zip(knowledge, new, strict=True):
        items[i] = rescale_item(items[i], w)
    return Checklist(items=items)


# ------------------------------------------------------------------------------------------- form text
def checklist_from_form(items: list[dict]) -> tuple[Checklist, list[Violation]]:
    """Build a checklist from editor text fields and validate it.

    ``items`` are ``{"kind", "key_point", "weight": str, "rubric": [{"score": str, "criterion": str}]}``.
    A weight or score that is not a whole number is a violation (``weight-not-integer``,
    ``score-not-integer``) and counts as 0 in the returned checklist. The rest is validated at once, so
    every problem shows, without rules that only the placeholder would break: a rubric tier whose score
    is not a number is left out of the checks, and an item whose weight is not a number is not checked
    against its weight (nor are the knowledge weights summed).

    Returns:
        ``(checklist, violations)``: violations of the text fields first, then :func:`validate`'s.
    """
    problems: list[Violation] = []
    built: list[ChecklistItem] = []
    checked: list[ChecklistItem] = []  # ``built`` without the tiers whose score did not parse

    def as_int(text: str | int, rule: str, what: str, index: int) -> int:
        if isinstance(text, int) and not isinstance(text, bool):
            return text
        t = str(text).strip()
        try:
            return int(t)
        except ValueError:
            problems.append(Violation(rule, f"{what} {t!r} is not a whole number" if t else f"{what} is empty", index))
            return 0

    for i, raw in enumerate(items):
        weight = as_int(raw.get("weight", ""), "weight-not-integer", "the weight", i)
        tiers: list[RubricTier] = []
        parsed: list[RubricTier] = []
        for t in raw.get("rubric", []):
            before = len(problems)
            tier = RubricTier(score=as_int(t.get("score", ""), "score-not-integer", "a rubric score", i),
                              criterion=str(t.get("criterion", "")))
            tiers.append(tier)
            if len(problems) == before:
                parsed.append(tier)
        item = ChecklistItem(kind=ItemKind(raw.get("kind", "knowledge")), key_point=str(raw.get("key_point", "")),
                             weight=weight, rubric=tiers)
        built.append(item)
        checked.append(item.model_copy(update={"rubric": parsed}))
    bad_weight = {p.item for p in problems if p.rule == "weight-not-integer"}
    bad_score = {p.item for p in problems if p.rule == "score-not-integer"}
    weight_rules = {"weight-positive", "clarity-weight", "rubric-missing-weight", "rubric-out-of-range"}
    rest = [
        v for v in validate(Checklist(items=checked))
        if not (v.item in bad_weight and v.rule in weight_rules)
        and not (v.item in bad_score and v.rule == "rubric-empty")
        and not (v.rule == "weight-sum" and any(built[i].kind is ItemKind.KNOWLEDGE for i in bad_weight))
    ]
    return Checklist(items=built), problems + rest


def checklist_to_form(checklist: Checklist) -> list[dict]:
    """The editor's text-field form of ``checklist`` (inverse of :func:`checklist_from_form`)."""
    return [
        {"kind": it.kind.value, "key_point": it.key_point, "weight": str(it.weight),
         "rubric": [{"score": str(t.score), "criterion": t.criterion} for t in it.rubric]}
        for it in checklist.items
    ]


def starter_checklist() -> Checklist:
    """A new checklist to edit: one binary knowledge item of weight 9 and the clarity item (valid but for
    its empty key point)."""
    return Checklist(items=[
        ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point="", weight=KNOWLEDGE_POINTS, rubric=binary_rubric(KNOWLEDGE_POINTS)),
        clarity_item(),
    ])
