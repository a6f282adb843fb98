"""Read-only queries that gather the inputs of ``benchwright report`` (see benchwright.core.metrics).

Reads the tables of migration m009 directly (``answers``, ``judgments``, ``score_overrides``,
``failure_modes``) with ``qa_pairs`` and ``repositories`` for the strata, and the trajectories of ``answers`` and
``answer_runs`` (m018) for the tool-usage section. Nothing is written.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from benchwright.core.agent_metrics import TrajectoryRecord
from benchwright.core.errors import BenchwrightError
from benchwright.core.judges import HUMAN_JUDGES
from benchwright.core.metrics import JUDGES, EffectiveScore, FailureLabel, JudgedRun, PairStrata, ReportInputs
from benchwright.core.vocabulary import ENTRY_KINDS

if TYPE_CHECKING:
    from .store import Store

STRATA_SQL = """COALESCE(NULLIF(p.language, ''), r.language), p.category, COALESCE(NULLIF(p.theme, ''), r.theme),
       p.qa_type, p.cluster_id, p.cluster_name, p.repository, p.qa_subtype, p.task_set"""
"""The nine columns of :class:`~benchwright.core.metrics.PairStrata`, in its field order, from ``qa_pairs p`` and
``repositories r`` (:data:`JUDGED_ANSWERS_SQL`); language and theme fall back to the repository's."""

JUDGED_ANSWERS_SQL = """FROM judgments j
JOIN answers a ON a.id = j.answer_id
JOIN qa_pairs p ON p.id = a.qa_pair_id
LEFT JOIN repositories r ON r.name = p.repository"""
"""Judgments with their answers (``a``), pairs (``p``) and repositories (``r``), for :data:`STRATA_SQL`."""

# The current judgments: for each answer, judge, judge model and run index the latest row (highest id) wins,
# so a run judged again (e.g. after an unscored attempt) counts once, with its newest result.
_RUNS_SQL = f"""
SELECT j.id, j.answer_id, a.qa_pair_id, a.model, a.condition, j.judge, j.judge_model, j.run_index, j.status,
       j.scores_json, j.reason,
       {STRATA_SQL}
{JUDGED_ANSWERS_SQL}
WHERE j.id IN (SELECT MAX(id) FROM judgments GROUP BY answer_id, judge, judge_model, run_index)
{{where}}
ORDER BY a.model, a.condition, j.judge, j.judge_model, a.qa_pair_id, j.run_index
"""

# The latest override per judgment and key replaces that entry's score (score_overrides is append-only).
_OVERRIDES_SQL = """
SELECT o.judgment_id, o.key, o.score FROM score_overrides o
WHERE o.id IN (SELECT MAX(id) FROM score_overrides GROUP BY judgment_id, key)
"""

# The latest failure-mode row per answer is its label (an annotator's correction is a newer row).
_LABELS_SQL = """
SELECT f.answer_id, a.model, a.condition, f.mode, f.origin FROM failure_modes f
JOIN answers a ON a.id = f.answer_id
WHERE f.id IN (SELECT MAX(id) FROM failure_modes GROUP BY answer_id)
{where}
ORDER BY a.model, a.condition, f.answer_id
"""

# Trajectories for the tool-usage section (SWE-QA-Pro Figure 4): every stored answer's, and the latest run of each
# sample that has no answer when that run failed (the latest answer_runs row of a sample is its state; an earlier
# failed attempt is a prefix of the run that finished, so counting it would count its calls twice).
_ANSWER_TRAJECTORIES_SQL = """
SELECT a.model, a.condition, a.trajectory_json FROM answers a WHERE a.trajectory_json IS NOT NULL{where}
ORDER BY a.model, a.condition, a.id
"""

_FAILED_RUNS_SQL = """
SELECT a.model, a.condition, a.trajectory_json, a.reason FROM answer_runs a
WHERE a.id IN (SELECT MAX(id) FROM answer_runs GROUP BY qa_pair_id, model, condition, sample_index)
  AND a.status != 'ok'
  AND NOT EXISTS (SELECT 1 FROM answers x WHERE x.qa_pair_id = a.qa_pair_id AND x.model = a.model
                  AND x.condition = a.condition AND x.sample_index = a.sample_index){where}
ORDER BY a.model, a.condition, a.id
"""


def _json_or_text(text: str | None):
    """A stored trajectory parsed, or the text itself when it is not JSON (then counted as not ours)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _number(value, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BenchwrightError(f"{where}: expected a number, got {value!r}")
    return float(value)


def parse_entries(scores_json: str, *, judgment_id: int) -> list[EffectiveScore]:
    """The entries of one ``judgments.scores_json`` (a JSON list of ``{key, label, kind, score, max, ...}``).

    Raises BenchwrightError naming the judgment, entry and field when the JSON is not such a list: not JSON,
    not a list, an entry without a string ``key``, an unknown ``kind``, a missing or non-positive ``max``,
    a ``score`` that is not a number or null, or a key given twice."""
    where = f"judgments row {judgment_id}, scores_json"
    try:
        data = json.loads(scores_json or "[]")
    except json.JSONDecodeError as e:
        raise BenchwrightError(f"{where}: not JSON ({e.msg} at character {e.pos})") from None
    if not isinstance(data, list):
        raise BenchwrightError(f"{where}: expected a list of score entries, got {type(data).__name__}")
    entries, seen = [], set()
    for i, item in enumerate(data):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise BenchwrightError(f"{at}: expected an object, got {type(item).__name__}")
        key = item.get("key")
        if not isinstance(key, str) or not key:
            raise BenchwrightError(f"{at}, field 'key': expected a non-empty string, got {key!r}")
        if key in seen:
            raise BenchwrightError(f"{at}, field 'key': {key!r} appears twice")
        seen.add(key)
        kind = item.get("kind")
        if kind not in ENTRY_KINDS:
            raise BenchwrightError(f"{at}, field 'kind': expected one of {', '.join(ENTRY_KINDS)}, got {kind!r}")
        top = _number(item.get("max"), f"{at}, field 'max'")
        if top is None or top <= 0:
            raise BenchwrightError(f"{at}, field 'max': expected a positive number, got {item.get('max')!r}")
        score = _number(item.get("score"), f"{at}, field 'score'")
        label = item.get("label")
        entries.append(EffectiveScore(key=key, label=label if isinstance(label, str) else key, kind=kind,
                                  score=score, max=top))
    return entries


def _in(column: str, values: Iterable[str] | None) -> tuple[str, list]:
    if values is None:
        return "", []
    values = list(values)
    return f" AND {column} IN ({', '.join('?' for _ in values)})", values


def report_inputs(store: Store, *, models: Iterable[str] | None = None, judge: str | None = None) -> ReportInputs:
    """Read everything ``benchwright report`` needs, with human overrides applied.

    Args:
        store: an open project.
        models: only answers of these models (``answers.model``, exact); ``None`` for all.
        judge: only judgments of this judge (one of ``checklist``, ``swe-qa-pro``, ``code-qa-bench``,
            ``imported``, ``human``); ``None`` for all but the human judgments (``human``: annotators' scores,
            counted only when asked for by name).

    Returns:
        :class:`~benchwright.core.metrics.ReportInputs`: one :class:`JudgedRun` per current judgment (the latest
        row per answer, judge, judge model and run index), its entries' scores replaced by the latest override
        per key (``overrides_used`` counts them; an override of a key the judgment lacks is ignored), the pair's
        strata (language and theme fall back to the repository's when the pair has none); the latest failure
        label per answer; the number of answers per model and condition; and one
        :class:`~benchwright.core.agent_metrics.TrajectoryRecord` per answer with a trajectory (``ok``) and per
        sample without an answer whose latest ``answer_runs`` row failed (``failed``, with its reason). A
        trajectory that is not JSON is passed on as its text (the report counts it as not ours).

    Raises:
        BenchwrightError: an unknown ``judge``; a ``scores_json`` that cannot be read (see
        :func:`parse_entries`).
    """
    if judge is not None and judge not in JUDGES:
        raise BenchwrightError(f"unknown judge {judge!r}; use one of {', '.join(JUDGES)}")
    model_sql, model_args = _in("a.model", models)
    if judge is None:  # human judgments (judge calibration, issue 20) are counted only when asked for by name
        human = list(HUMAN_JUDGES)
        judge_sql = f" AND j.judge NOT IN ({', '.join('?' for _ in human)})" if human else ""
        judge_args = human
    else:
        judge_sql, judge_args = " AND j.judge = ?", [judge]
    conn = store.db.conn

    overrides: dict[int, dict[str, float]] = defaultdict(dict)
    for judgment_id, key, score in conn.execute(_OVERRIDES_SQL):
        overrides[judgment_id][key] = float(score)

    runs = []
    for row in conn.execute(_RUNS_SQL.format(where=model_sql + judge_sql), model_args + judge_args):
        (jid, answer_id, pair_id, model, condition, judge_name, judge_model, run_index, status, scores_json,
         reason, language, category, theme, qa_type, cluster_id, cluster_name, repository, qa_subtype, task_set) = row
        entries = parse_entries(scores_json, judgment_id=jid)
        mine = overrides.get(jid, {})
        used = 0
        effective = []
        for e in entries:
            if e.key in mine:
                used += 1
                e = EffectiveScore(e.key, e.label, e.kind, mine[e.key], e.max, overridden=True)
            effective.append(e)
        runs.append(JudgedRun(
            judgment_id=jid, answer_id=answer_id, qa_pair_id=pair_id, model=model, condition=condition,
            judge=judge_name, judge_model=judge_model, run_index=run_index, status=status,
            entries=tuple(effective), overrides_used=used, reason=reason,
            strata=PairStrata(language=language, category=category, theme=theme, qa_type=qa_type,
                              cluster_id=cluster_id, cluster_name=cluster_name, repository=repository,
                              qa_subtype=qa_subtype, task_set=task_set),
        ))

    label_sql, label_args = _in("a.model", models)
    labels = [FailureLabel(*row) for row in conn.execute(_LABELS_SQL.format(where=label_sql), label_args)]

    count_sql, count_args = _in("model", models)
    counts = {
        (m, c): n for m, c, n in conn.execute(
            f"SELECT model, condition, COUNT(*) FROM answers WHERE 1 = 1{count_sql} GROUP BY model, condition",
            count_args,
        )
    }
    trajectories = [
        TrajectoryRecord(model, condition, "ok", _json_or_text(text))
        for model, condition, text in conn.execute(_ANSWER_TRAJECTORIES_SQL.format(where=label_sql), label_args)
    ]
    trajectories += [
        TrajectoryRecord(model, condition, "failed", _json_or_text(text), reason)
        for model, condition, text, reason in conn.execute(_FAILED_RUNS_SQL.format(where=label_sql), label_args)
    ]
    return ReportInputs(runs=tuple(runs), failure_labels=tuple(labels), answer_counts=counts,
                        trajectories=tuple(trajectories))
