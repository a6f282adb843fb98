"""Human judgments: an annotator's scores of an answer against its pair's checklist (issue 20 item 5, the
annotator side of judge calibration against humans).

A human judgment is stored like an LLM checklist judge's (RepoProbe §4.2 entries, :mod:`benchwright.core.judgment`)
so the two compare item by item: judge ``human`` (:data:`~benchwright.core.judges.HUMAN_JUDGE`), ``judge_model``
the annotator's name, ``run_index`` 0, status ``scored``, one :class:`~benchwright.core.judgment.ScoreEntry` per
checklist item (``key`` the 1-based item number as a string, ``label`` its key point, ``kind``, ``max`` its
weight, ``allowed`` its rubric's scores, the annotator's ``rationale``), score rate total / 10 (RepoProbe
§5.1.3). Rows are append-only; the latest per (answer, annotator) counts (:func:`latest_per_annotator`).

Pure functions, no store: the store (``db/human_judgments.py``) reads the checklist version and writes the row.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from .annotator_names import annotator_name, annotator_name_problem
from .checklist import Checklist
from .judges import HUMAN_JUDGE, human_label
from .judgment import Judgment, JudgmentError, NewJudgment, ScoreEntry
from .text import repair_text


def human_scores(entries: Mapping[str, Any] | Iterable[Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``(scores, rationales)`` by item key from what a caller gives: a mapping ``{key: score}``, or entries
    (:class:`ScoreEntry` or dicts with ``key``, ``score`` and an optional ``rationale``; other fields are
    ignored: label, kind, max and allowed always come from the checklist).

    Raises:
        JudgmentError: an entry without a key, or a key given twice.
    """
    if isinstance(entries, Mapping):
        return {str(k).strip(): v for k, v in entries.items()}, {}
    scores: dict[str, Any] = {}
    rationales: dict[str, str] = {}
    for n, e in enumerate(entries, 1):
        data = e.model_dump() if isinstance(e, ScoreEntry) else e
        if not isinstance(data, Mapping) or not str(data.get("key", "")).strip():
            raise JudgmentError(f"human score {n}: give the checklist item's key (its number) and a score")
        key = str(data["key"]).strip()
        if key in scores:
            raise JudgmentError(f"human scores: item {key} is given twice")
        scores[key] = data.get("score")
        rationales[key] = str(data.get("rationale") or "")
    return scores, rationales


def human_entries(checklist: Checklist, scores: Mapping[str, Any],
                  rationales: Mapping[str, str] | None = None) -> list[ScoreEntry]:
    """The entries of a human judgment of ``checklist``: one per item, in checklist order, in the checklist
    judge's shape (:func:`benchwright.core.judging.checklist_entries`), with the annotator's score and rationale.

    Args:
        scores: item key (``"1"``, ``"2"``, ...) -> score; every item needs one, from its allowed set, written
            as an integer (an integer string such as ``"2"`` is read as 2; a float, even 4.0 or JSON ``1e0``, is
            refused, as ``--score 1=4.0`` is; nothing is rounded or clamped).
        rationales: item key -> the annotator's reason (optional, empty by default).

    Raises:
        JudgmentError: a key that is not an item of the checklist, an item without a score, or a score not in
            its item's allowed scores (the message names the item and its key point).
    """
    rationales = rationales or {}
    keys = [str(n) for n in range(1, len(checklist.items) + 1)]
    unknown = sorted(set(scores) - set(keys), key=lambda k: (len(k), k))
    if unknown:
        raise JudgmentError(f"the checklist has no item {', '.join(unknown)}; its items are 1 to {len(keys)}")
    missing = [k for k in keys if scores.get(k) is None]
    if missing:
        raise JudgmentError(f"every checklist item needs a score; missing: item {', '.join(missing)}")
    out = []
    for key, item in zip(keys, checklist.items, strict=True):
        score = _as_int(scores[key])
        if score is None or score not in item.allowed_scores:
            given = scores[key]
            shown = given.strip() if isinstance(given, str) and given.strip() else repr(given)
            raise JudgmentError(f"item {key} ({item.key_point}): score {shown} is not one of the allowed "
                                f"scores {item.allowed_scores}")
        out.append(ScoreEntry(key=key, label=item.key_point, kind=item.kind.value, score=score, max=item.weight,
                              allowed=item.allowed_scores, rationale=str(rationales.get(key, "")).strip()))
    return out


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    # no float, even an integral one (JSON 1.0, 1e0): one rule with --score 1=4.0, which is refused too
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def new_human_judgment(answer_id: str, annotator: str, checklist: Checklist, checklist_version: int,
                       scores: Mapping[str, Any], rationales: Mapping[str, str] | None = None) -> NewJudgment:
    """The checked human judgment of ``answer_id`` by ``annotator`` against ``checklist`` (version
    ``checklist_version``), ready to store (:meth:`NewJudgment.of`: judge ``human``, run 0, scored).

    Raises:
        JudgmentError: an annotator name the project's rule refuses
            (:func:`benchwright.core.annotator_names.annotator_name`), or what :func:`human_entries` refuses.
    """
    problem = annotator_name_problem(annotator)
    if problem is not None:
        raise JudgmentError(f"a human judgment needs the annotator's name: {problem}")
    entries = human_entries(checklist, scores, rationales)
    return NewJudgment.of(answer_id, HUMAN_JUDGE, annotator_name(annotator, "annotator"), entries=entries,
                          status="scored",
                          run_index=0, checklist_version=checklist_version)


def same_human_judgment(old: Judgment, new: NewJudgment) -> bool:
    """True when ``new`` would repeat ``old``: the same answer, annotator and checklist version and, item by item,
    the same scores and rationales (an import of the same file twice is then skipped, not appended). A lone
    surrogate in ``new`` compares as the U+FFFD it is stored as (:func:`benchwright.core.text.repair_text`)."""
    def items(entries):
        return [(e.key, e.score, repair_text(e.rationale or "")[0]) for e in entries]
    return (old.answer_id == new.answer_id and old.judge == new.judge and old.judge_model == new.judge_model
            and old.checklist_version == new.checklist_version and items(old.entries) == items(new.entries))


def parse_score_args(values: Iterable[str]) -> dict[str, str]:
    """``["1=2", "2=0"]`` (the CLI's ``--score KEY=VALUE``) -> ``{"1": "2", "2": "0"}``.

    Raises:
        JudgmentError: a value without ``=``, an empty key, or a key given twice.
    """
    out: dict[str, str] = {}
    for v in values:
        key, sep, score = v.partition("=")
        if not sep or not key.strip():
            raise JudgmentError(f"--score {v!r}: write ITEM=SCORE, e.g. --score 1=2")
        if key.strip() in out:
            raise JudgmentError(f"--score: item {key.strip()} is given twice")
        out[key.strip()] = score.strip()
    return out


def latest_per_annotator(judgments: Iterable[Judgment]) -> list[Judgment]:
    """The human judgments that count: the latest (highest id) per answer and annotator, oldest first. Other
    judges' judgments are ignored."""
    latest: dict[tuple[str, str], Judgment] = {}
    for j in judgments:
        if j.judge != HUMAN_JUDGE:
            continue
        key = (j.answer_id, j.judge_model)
        if key not in latest or j.id > latest[key].id:
            latest[key] = j
    return sorted(latest.values(), key=lambda j: j.id)


def judges_hidden(*, blind: bool, scored: bool, viewer: str, assignees: Collection[str] = ()) -> bool:
    """True when ``viewer`` may not yet see the judges' scores and rationales of an answer, nor other
    annotators' human judgments of it: blind mode is on (:mod:`benchwright.core.blind`, ``benchwright blind
    on``), the answer was handed to them to score (``assignees``: ``assign --answers``) and they have not
    submitted a human judgment of it (``scored``). Keeps human scores independent of the LLM's (issue 20 item 5),
    so agreement with the judge means something.

    Our choice where the issue is silent: an answer nobody was handed (or handed to others only: a lead looking)
    shows everything, so blind mode kept for pair reviews does not hide the judges from everyone in the
    inspector; ``assign --answers`` with an overlap above 1 turns blind mode on, as ``assign`` does for pairs."""
    if not blind or scored:
        return False
    return viewer in assignees


__all__ = [
    "HUMAN_JUDGE",
    "human_entries",
    "human_label",
    "human_scores",
    "judges_hidden",
    "latest_per_annotator",
    "new_human_judgment",
    "parse_score_args",
    "same_human_judgment",
]
