"""Answers, judgments, score overrides and failure-mode labels: the domain model of judging.

A **judgment** is one judge's scoring of one answer in one run (RepoProbe §4.2 checklist judge; SWE-QA-Pro §4.1
and Code-QA-Bench "Evaluation" scalar judges; or scores imported from a file). Its scores are a list of
:class:`ScoreEntry` — THE CONTRACT of ``judgments.scores_json`` — one per checklist item or per dimension::

    {"key": str, "label": str, "kind": "knowledge" | "clarity" | "dimension",
     "score": int | float | null, "max": int, "allowed": [int, ...] | null, "rationale": str}

- checklist judge: ``key`` is the 1-based item number as a string ("1", "2", ...), ``label`` the item's key
  point, ``kind`` the item's kind, ``max`` its weight, ``allowed`` its rubric's scores.
- scalar judges: ``key`` is the dimension name (:data:`SWE_QA_PRO_DIMENSIONS`,
  :data:`CODE_QA_BENCH_DIMENSIONS`), ``kind`` is ``"dimension"``.
- imported scores: ``key`` is the file's dimension name, ``kind`` ``"dimension"``, ``max`` the scale the user
  gave (``--scale``), ``allowed`` null (any number in [0, max]).

The **score rate** of a judgment is in [0, 1] (:func:`score_rate_of`): checklist = total / 10 (RepoProbe
§5.1.3); swe-qa-pro = mean over dimensions / 10 (scores 1-10, SWE-QA-Pro §4.1); code-qa-bench = mean / 5
(the normalized mean of 0-5 scores, Code-QA-Bench "Evaluation"); imported = sum(score) / sum(max).

A **human override** (:class:`ScoreOverride`) replaces one entry's score with a reason; the original stays in
the judgment and the override is a new row. Reports use :func:`effective_entries` (the latest override per key
wins) and say how many overrides they used.

Nothing here touches the database; ``benchwright.db`` stores these records (``db/answers.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from .errors import BenchwrightError, Remedy, with_remedy
from .judges import CODE_QA_BENCH_DIMENSIONS, JUDGE_REGISTRY, JUDGES, SCALAR_SCALES, SWE_QA_PRO_DIMENSIONS
from .registry import UnknownNameError
from .vocabulary import CONDITIONS, ENTRY_KIND_REGISTRY, ENTRY_KINDS, FAILURE_MODES

JUDGMENT_STATUSES = ("scored", "unscored")
"""``unscored``: the judge's output was unusable after one repair turn; kept with ``reason`` and
``raw_text``, left out of aggregates and counted in reports."""

FAILURE_MODE_ORIGINS = ("llm", "annotator")
"""Who gave a failure-mode label: an LLM classifier or an annotator (a correction)."""

# The vocabularies are declared once, in their registries (core/judges.py, core/vocabulary.py); these names are
# kept for callers: CONDITIONS, JUDGES (imported included), ENTRY_KINDS, FAILURE_MODES, the scalar judges'
# dimensions and scales.


class JudgmentError(BenchwrightError):
    """A judgment, score entry, override or label breaks the contract (unknown key, score outside the allowed
    set, empty reason, override of an unscored judgment, ...); the message says which and why."""


Number = int | float


class ScoreEntry(BaseModel):
    """One scored checklist item or dimension of a judgment (one element of ``scores_json``).

    Attributes:
        key: checklist judge: the 1-based item number as a string; scalar and imported judges: the dimension
            name.
        label: checklist judge: the item's key point; otherwise the dimension name (or a readable form of it).
        kind: ``knowledge`` / ``clarity`` (checklist items) or ``dimension``.
        score: the points given, ``None`` when the judge gave none (only in unscored judgments).
        max: the most points the entry can get (item weight; 10 or 5 for scalar judges; the imported scale).
        allowed: the discrete scores allowed (a rubric's scores, or 1..10), or ``None`` for any number in
            [0, max].
        rationale: the judge's reasoning, written before the score (may be empty for imported scores).

    Raises (on construction):
        pydantic.ValidationError: a boolean or non-numeric score, ``max`` below 0, allowed scores outside
            [0, max], or a score not allowed (outside ``allowed`` or [0, max]).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=1)
    label: str = ""
    kind: Literal[ENTRY_KIND_REGISTRY.names()]  # type: ignore[valid-type]
    score: StrictInt | StrictFloat | None = None
    max: int = Field(ge=0, strict=True)
    allowed: list[int] | None = None
    rationale: str = ""

    @model_validator(mode="after")
    def _check_score(self) -> ScoreEntry:
        if self.allowed is not None:
            outside = [a for a in self.allowed if not 0 <= a <= self.max]
            if outside:
                raise ValueError(f"entry {self.key}: allowed scores {outside} are outside 0..{self.max}")
        if self.score is not None and not self.accepts(self.score):
            raise ValueError(f"entry {self.key}: score {self.score!r} is not {self.describe_allowed()}")
        return self

    def accepts(self, score: Any) -> bool:
        """True when ``score`` is a number (not a bool) in ``allowed``, or in [0, max] when ``allowed`` is None."""
        if isinstance(score, bool) or not isinstance(score, int | float) or score != score:  # NaN
            return False
        if self.allowed is not None:
            return score in self.allowed
        return 0 <= score <= self.max

    def describe_allowed(self) -> str:
        """The allowed scores as words, for messages: ``one of [0, 1, 3]`` or ``a number in [0, 20]``."""
        if self.allowed is not None:
            return f"one of {sorted(set(self.allowed))}"
        return f"a number in [0, {self.max}]"

    def with_score(self, score: Number) -> ScoreEntry:
        """A copy with ``score`` (validated like a new entry)."""
        return ScoreEntry.model_validate({**self.model_dump(), "score": score})


_ENTRIES = TypeAdapter(list[ScoreEntry])


def entries_to_json(entries: Sequence[ScoreEntry]) -> str:
    """The stored form of ``entries``: a JSON array, keys sorted, no extra spaces (stable, hashable)."""
    return json.dumps([e.model_dump(mode="json") for e in entries], sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))


def entries_from_json(text: str) -> list[ScoreEntry]:
    """Parse ``scores_json`` back into entries.

    Raises:
        pydantic.ValidationError: the text is not a list of valid entries.
    """
    return _ENTRIES.validate_json(text)


def entries_json_schema() -> dict:
    """The JSON Schema of ``scores_json`` (an array of :class:`ScoreEntry`)."""
    return _ENTRIES.json_schema()


# ----------------------------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Answer:
    """A model's answer to one Q&A pair under one condition, one sample of them (``answers`` table).

    Attributes:
        id: ``ans_`` + 16 hex digits, a content hash of pair id, model, condition and text, and the sample index
            for samples after the first (:func:`answer_id`).
        sample_index: which of the K samples of (pair, model, condition) this is, from 0 (imports: 0).
        trajectory: the agent's run trace as parsed JSON (a list or object), or ``None``.
        source_format: ``jsonl``, ``swe-qa-agent``, ``swe-qa-error-analysis`` (or a generator's name).
        source_line: 1-based line of the record in ``source_file``.
        extra: the record's other fields (e.g. ``rewriting_reason``, ``origin_question``, ``reference``).
    """

    id: str
    qa_pair_id: str
    model: str
    condition: str
    text: str
    trajectory: Any
    source_format: str
    source_file: str | None
    source_line: int | None
    extra: dict
    created_at: str
    created_by: str
    sample_index: int = 0

    @property
    def truncated(self) -> dict | None:
        """For an answer the model was cut off in at the token budget (stored flagged, never as complete):
        ``{"max_tokens": N or None, "reason": TEXT}``; else None."""
        cut = self.extra.get("truncated") if isinstance(self.extra, dict) else None
        return (cut if isinstance(cut, dict) else {"max_tokens": None, "reason": str(cut)}) if cut else None


@dataclass(frozen=True)
class Judgment:
    """One judge's scoring of one answer in one run (``judgments`` table; append-only).

    Attributes:
        id: row id (``judgment_id`` of overrides).
        judge: one of :data:`JUDGES`.
        judge_model: the model that judged (for imported scores: the name given by the user, default
            ``unknown``).
        run_index: 0-based repeat index (``--runs K`` gives 0..K-1); part of the LLM cache key.
        status: ``scored`` or ``unscored`` (then ``reason`` and ``raw_text`` say why).
        checklist_version: the checklist version judged against (checklist judge only).
        entries: the scores, see :class:`ScoreEntry`.
        score_rate: in [0, 1] (:func:`score_rate_of`), ``None`` when unscored.
        scale_max: the maximum per dimension (scalar and imported judges), ``None`` for checklists.
        seed: the seed that randomized the answer order (SWE-QA-Pro), or ``None``.
        critique: free-text assessment (e.g. SWE-QA's ``error_analysis``).
        call_ids: ids of the ``llm_calls`` rows behind the judgment.
    """

    id: int
    answer_id: str
    judge: str
    judge_model: str
    run_index: int
    status: str
    checklist_version: int | None
    entries: list[ScoreEntry]
    score_rate: float | None
    scale_max: int | None
    seed: int | None
    critique: str | None
    reason: str | None
    raw_text: str | None
    call_ids: list[int]
    created_at: str
    created_by: str

    @property
    def scored(self) -> bool:
        """True when the judgment counts in aggregates."""
        return self.status == "scored"

    def entry(self, key: str) -> ScoreEntry:
        """The entry ``key``.

        Raises:
            JudgmentError: no such key (the message lists the keys there are).
        """
        for e in self.entries:
            if e.key == key:
                return e
        keys = ", ".join(e.key for e in self.entries) or "none"
        raise JudgmentError(f"judgment {self.id} has no score {key!r}; its keys are: {keys}")


@dataclass(frozen=True)
class ScoreOverride:
    """An annotator's replacement of one entry's score (``score_overrides``; append-only, latest wins).

    Attributes:
        original_score: the judge's score of the entry when the override was made.
        score: the annotator's score (in the entry's allowed set, or [0, max]).
        reason: why (never empty).
    """

    id: int
    judgment_id: int
    key: str
    original_score: float | None
    score: float
    reason: str
    annotator: str
    created_at: str


@dataclass(frozen=True)
class FailureModeLabel:
    """A failure-mode label of an answer (RepoProbe §5.4, Table 7; ``failure_modes``, the latest row wins).

    Attributes:
        mode: one of :data:`FAILURE_MODES`.
        origin: ``llm`` (a classifier's label, with ``judge_model`` and ``call_ids``) or ``annotator``.
    """

    id: int
    answer_id: str
    mode: str
    rationale: str
    origin: str
    annotator: str | None
    judge_model: str | None
    call_ids: list[int] = field(default_factory=list)
    created_at: str = ""


# ------------------------------------------------------------------------------------------- functions
def answer_id(qa_pair_id: str, model: str, condition: str, text: str, sample_index: int = 0) -> str:
    """Stable id of an answer: ``ans_`` + the first 16 hex digits of a SHA-256 over pair id, model,
    condition and the text with white space at its ends stripped (re-importing adds nothing), and for a sample
    after the first (``sample_index`` > 0) the sample index too, so two samples with the same text are two
    answers; the ids of sample 0 are those of before samples existed."""
    h = hashlib.sha256()
    parts = (qa_pair_id, model, condition, text.strip()) + ((f"sample {sample_index}",) if sample_index else ())
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return "ans_" + h.hexdigest()[:16]


def score_rate_of(judge: str, entries: Sequence[ScoreEntry]) -> float | None:
    """The score rate in [0, 1] of ``entries`` under ``judge``'s protocol.

    checklist: sum of scores / 10 (RepoProbe §5.1.3, s / 10); swe-qa-pro: mean score / 10 (SWE-QA-Pro §4.1);
    code-qa-bench: mean score / 5, the normalized mean (Code-QA-Bench "Evaluation"); imported: sum of scores /
    sum of maxima.

    Returns:
        The rate, or ``None`` when some entry has no score (an unscored judgment).

    Raises:
        JudgmentError: unknown judge, no entries, or an imported judgment whose maxima sum to 0.
    """
    try:
        spec = JUDGE_REGISTRY.get(judge)
    except UnknownNameError as e:
        raise JudgmentError(str(e)) from None
    if not entries:
        raise JudgmentError("a judgment needs at least one score entry")
    scores = [e.score for e in entries]
    if any(s is None for s in scores):
        return None
    try:
        return spec.score_rate(scores, [e.max for e in entries])  # type: ignore[arg-type]
    except ValueError as e:
        raise JudgmentError(str(e)) from None


def effective_entries(
    judgment: Judgment, overrides: Iterable[ScoreOverride]
) -> tuple[list[ScoreEntry], int]:
    """The judgment's entries with human overrides applied: for each key, the latest override (highest id)
    replaces the judge's score.

    Overrides of other judgments, and of keys the judgment does not have, are ignored.

    Returns:
        ``(entries, used)``: the entries in the judgment's order, and how many of them an override changed
        the score of (one per overridden key, however many overrides it has).
    """
    latest: dict[str, ScoreOverride] = {}
    for o in overrides:
        if o.judgment_id != judgment.id:
            continue
        if o.key not in latest or o.id > latest[o.key].id:
            latest[o.key] = o
    out: list[ScoreEntry] = []
    used = 0
    for e in judgment.entries:
        o = latest.get(e.key)
        if o is None:
            out.append(e)
            continue
        score: Number = int(o.score) if float(o.score).is_integer() else o.score
        out.append(e.model_copy(update={"score": score}))
        used += 1
    return out, used


def effective_score_rate(judgment: Judgment, overrides: Iterable[ScoreOverride]) -> tuple[float | None, int]:
    """``(score_rate, overrides_used)`` with the overrides applied (``None`` for an unscored judgment)."""
    if not judgment.scored:
        return None, 0
    entries, used = effective_entries(judgment, overrides)
    return score_rate_of(judgment.judge, entries), used


def check_override(judgment: Judgment, key: str, score: Any, reason: str) -> ScoreEntry:
    """Check a human override of entry ``key`` of ``judgment``; returns the entry it replaces.

    Raises:
        JudgmentError: the judgment is unscored, has no entry ``key``, ``score`` is not a number in the
            entry's allowed set (or [0, max]), ``score`` is fractional while the judge's score of the entry is
            a whole number (imported scores are integers in their source files, so 7.5 on a 0-20 scale is a
            typo, not a score), or ``reason`` is empty.
    """
    if not judgment.scored:
        raise JudgmentError(
            f"judgment {judgment.id} is unscored ({judgment.reason or 'no reason recorded'}); "
            "there is no score to override: run the judge again"
        )
    entry = judgment.entry(key)
    if not entry.accepts(score):
        raise JudgmentError(
            f"judgment {judgment.id}, {key} ({entry.label or entry.kind}): score {score!r} is not "
            f"{entry.describe_allowed()}"
        )
    if _fractional(score) and not _fractional(entry.score):
        raise JudgmentError(
            f"judgment {judgment.id}, {key} ({entry.label or entry.kind}): score {score!r} is not a whole number, "
            f"and the judge's score ({entry.score!r}) is: give a whole number in [0, {entry.max}]"
        )
    if not reason or not reason.strip():
        raise with_remedy(JudgmentError("an override needs a reason: say why the judge's score is wrong"),
                          Remedy.GIVE_REASON)
    return entry


def _fractional(value: Any) -> bool:
    return isinstance(value, float) and not value.is_integer()


@dataclass(frozen=True)
class NewJudgment:
    """A judgment ready to store (one judge's scoring of one answer in one run), validated here so the store only
    writes it. Build it with :meth:`of` (the constructor checks nothing; ``of`` checks everything).

    Attributes:
        answer_id, judge, judge_model, run_index, status, checklist_version, scale_max, seed, critique, reason,
            raw_text, call_ids: the ``judgments`` columns of the same names (see :class:`Judgment`).
        entries: validated :class:`ScoreEntry` values, keys unique.
        score_rate: computed from the entries (:func:`score_rate_of`), ``None`` when unscored.
    """

    answer_id: str
    judge: str
    judge_model: str
    entries: tuple[ScoreEntry, ...]
    score_rate: float | None
    status: str = "scored"
    run_index: int = 0
    checklist_version: int | None = None
    scale_max: int | None = None
    seed: int | None = None
    critique: str | None = None
    reason: str | None = None
    raw_text: str | None = None
    call_ids: tuple[int, ...] = ()

    @classmethod
    def of(cls, answer_id: str, judge: str, judge_model: str, *, entries: Iterable[ScoreEntry | dict],
           status: str = "scored", run_index: int = 0, checklist_version: int | None = None,
           scale_max: int | None = None, seed: int | None = None, critique: str | None = None,
           reason: str | None = None, raw_text: str | None = None, call_ids: Iterable[int] = ()) -> NewJudgment:
        """The checked judgment. A ``scored`` judgment needs every entry scored and a rate in [0, 1]; an
        ``unscored`` one needs a ``reason`` (its entries may be partial or empty, and its rate is ``None``).

        Raises:
            JudgmentError: unknown judge (:data:`JUDGES`) or status, empty judge model, an invalid entry, repeated
                keys, a scored judgment with a missing score or a rate outside [0, 1], an unscored judgment
                without a reason, a negative run index.
        """
        check_choice(judge, JUDGES, "judge")
        check_choice(status, JUDGMENT_STATUSES, "judgment status")
        if not judge_model or not judge_model.strip():
            raise JudgmentError("a judgment needs the judge model's name")
        if isinstance(run_index, bool) or not isinstance(run_index, int) or run_index < 0:
            raise JudgmentError(f"run index must be a whole number of at least 0, not {run_index!r}")
        try:
            checked = tuple(e if isinstance(e, ScoreEntry) else ScoreEntry.model_validate(e) for e in entries)
        except ValidationError as e:
            raise JudgmentError(f"invalid score entry: {e.errors()[0]['msg']}") from None
        keys = [e.key for e in checked]
        if len(set(keys)) != len(keys):
            raise JudgmentError(f"score keys repeat: {sorted({k for k in keys if keys.count(k) > 1})}")
        if status == "scored":
            missing = [e.key for e in checked if e.score is None]
            if not checked or missing:
                raise JudgmentError(f"a scored judgment needs every score; missing: {missing or 'all'}")
            rate = score_rate_of(judge, checked)
            if rate is None or not 0 <= rate <= 1:
                raise JudgmentError(f"the score rate {rate} is outside [0, 1]: do the entries' maxima fit the judge?")
        else:
            if not reason or not reason.strip():
                raise JudgmentError("an unscored judgment needs the reason it could not be scored")
            rate = None
        return cls(answer_id=answer_id, judge=judge, judge_model=judge_model, entries=checked, score_rate=rate,
                   status=status, run_index=run_index, checklist_version=checklist_version, scale_max=scale_max,
                   seed=seed, critique=critique, reason=reason, raw_text=raw_text,
                   call_ids=tuple(int(c) for c in call_ids))


def check_choice(value: str, choices: Sequence[str], what: str) -> str:
    """``value`` if it is one of ``choices``, else JudgmentError naming them."""
    if value not in choices:
        raise JudgmentError(f"unknown {what} {value!r}; use one of {', '.join(choices)}")
    return value


__all__ = [
    "CODE_QA_BENCH_DIMENSIONS",
    "CONDITIONS",
    "ENTRY_KINDS",
    "FAILURE_MODES",
    "FAILURE_MODE_ORIGINS",
    "JUDGES",
    "JUDGMENT_STATUSES",
    "SCALAR_SCALES",
    "SWE_QA_PRO_DIMENSIONS",
    "Answer",
    "FailureModeLabel",
    "Judgment",
    "JudgmentError",
    "NewJudgment",
    "ScoreEntry",
    "ScoreOverride",
    "answer_id",
    "check_choice",
    "check_override",
    "effective_entries",
    "effective_score_rate",
    "entries_from_json",
    "entries_json_schema",
    "entries_to_json",
    "score_rate_of",
]
