"""The inputs of judge calibration against humans (issue 20 item 5): each human judgment paired with the LLM judges'
latest runs of the same answer against the same checklist version, as
:class:`~benchwright.core.judge_calibration.PairedScore` values. Read-only; the arithmetic is in
:mod:`benchwright.core.judge_calibration` (not :mod:`benchwright.db.calibration`, which is the store side of the
*difficulty* calibration, ``benchwright calibrate``).

Which rows count:

- **humans**: the latest scored row per (answer, annotator) of a human pseudo-judge
  (:data:`benchwright.core.judges.HUMAN_JUDGES`: judge ``human``, ``judge_model`` the annotator).
- **LLM judges**: for each answer, LLM judge (:data:`~benchwright.core.judges.LLM_JUDGES`), judge model, checklist
  version and run index, the latest row (a run judged again counts with its newest result); only scored rows, and
  only those against the checklist version the human scored (an answer re-judged against a newer checklist keeps
  its pairing with the human's older scores through its older rows).
- the judge's own scores, not the human overrides of them (``score_overrides``): the question is how the judge
  scores, and an override is itself a human's score.

The items are paired by key (the 1-based item number of the checklist version both scored); an entry without a
score on either side is left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from benchwright.core.judge_calibration import PairedScore
from benchwright.core.judges import HUMAN_JUDGES, LLM_JUDGES
from benchwright.core.judgment import entries_from_json
from benchwright.core.metrics import STRATA, PairStrata

from .report import JUDGED_ANSWERS_SQL, STRATA_SQL

if TYPE_CHECKING:
    from .store import Store

_ROWS_SQL = f"""
SELECT j.id, j.answer_id, a.qa_pair_id, a.model, j.judge, j.judge_model, j.run_index, j.checklist_version,
       j.scores_json, {STRATA_SQL}
{JUDGED_ANSWERS_SQL}
WHERE j.id IN (SELECT MAX(id) FROM judgments WHERE judge IN ({{judges}}) GROUP BY {{key}})
  AND j.status = 'scored'{{where}}
ORDER BY p.ordinal, a.id, j.judge, j.judge_model, j.run_index
"""


def _marks(values: list[str]) -> str:
    return ", ".join("?" for _ in values) or "NULL"


def _rows(store: Store, judges: list[str], key: str, where: str, args: list) -> list[tuple]:
    sql = _ROWS_SQL.format(judges=_marks(judges), key=key, where=where)
    return store.db.conn.execute(sql, [*judges, *args]).fetchall()


def _strata(row: tuple) -> dict[str, str]:
    s = PairStrata(*row[9:18])
    return {axis: s.value(axis) for axis in STRATA}


def paired_scores(store: Store, *, judges: Iterable[str] | None = None,
                  models: Iterable[str] | None = None) -> list[PairedScore]:
    """Every (answer, checklist item, annotator, LLM judge and model) with a human score and the judge's scores.

    Args:
        store: an open project.
        judges: only these LLM judges (``judgments.judge`` names, e.g. ``checklist``); None: every LLM judge.
        models: only answers of these models (``answers.model``); None: all.

    Returns:
        :class:`~benchwright.core.judge_calibration.PairedScore` values in queue order (pair ordinal, answer,
        annotator, judge, item), ``judge_scores`` ordered by run index; empty when nobody scored an answer the
        judges scored.
    """
    llm = [j for j in LLM_JUDGES if judges is None or j in set(judges)]
    humans = list(HUMAN_JUDGES)
    where, args = "", []
    if models is not None:
        models = list(models)
        where, args = f" AND a.model IN ({_marks(models)})", models
    if not llm or not humans:
        return []
    runs: dict[tuple[str, int | None], dict[tuple[str, str], dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    for row in _rows(store, llm, "answer_id, judge, judge_model, checklist_version, run_index",
                     where + " AND j.checklist_version IS NOT NULL", args):
        per_item = runs[(row[1], row[7])][(row[4], row[5])]
        for e in entries_from_json(row[8]):
            if e.score is not None:
                per_item[e.key].append(e.score)
    out: list[PairedScore] = []
    for row in _rows(store, humans, "answer_id, judge, judge_model", where, args):
        answer_id, pair_id, model, annotator, version = row[1], row[2], row[3], row[5], row[7]
        judged = runs.get((answer_id, version))
        if not judged:
            continue
        strata = _strata(row)
        for e in entries_from_json(row[8]):
            if e.score is None:
                continue
            allowed = tuple(sorted(set(e.allowed))) if e.allowed is not None else tuple(range(e.max + 1))
            for (judge, judge_model), items in sorted(judged.items()):
                scores = items.get(e.key)
                if scores:
                    out.append(PairedScore(
                        answer_id=answer_id, qa_pair_id=pair_id, item=e.key, allowed=allowed, judge=judge,
                        judge_model=judge_model, judge_scores=tuple(scores), annotator=annotator,
                        human_score=e.score, answer_model=model, strata=strata, item_label=e.label,
                        item_kind=e.kind, checklist_version=version))
    return out


__all__ = ["paired_scores"]
