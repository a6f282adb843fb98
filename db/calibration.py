"""Difficulty calibration and item statistics in the store (m020: ``calibration_runs`` / ``calibration_values``,
``item_stats_runs`` / ``item_stats``; docs/store.md), and their inputs: the judged answers per pair, model and
judge.

The inputs are read through :func:`benchwright.db.report.report_inputs` (the latest judgment per answer, judge,
judge model and run index, with human overrides applied) and averaged per answer by
:func:`benchwright.core.metrics.answer_scores`, so calibration, ``items`` and ``report`` agree on every score.
The arithmetic is in :mod:`benchwright.core.calibration` and :mod:`benchwright.core.item_stats`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from benchwright.core.calibration import (
    CalibrationResult,
    ModelScore,
    ModelStats,
    PairCalibration,
    ScoredAnswer,
)
from benchwright.core.item_stats import ItemStat, ItemStatsResult, ItemThresholds
from benchwright.core.metrics import answer_scores
from benchwright.core.models import utc_now
from benchwright.core.vocabulary import DIFFICULTY_DECISIONS, ITEM_FLAGS

from .locking import serialized


@dataclass(frozen=True)
class StoredCalibration:
    """A calibration run as stored: its row (``calibration_runs``) and its values as a
    :class:`~benchwright.core.calibration.CalibrationResult`."""

    id: int
    judge: str
    judge_model: str | None
    condition: str
    params: dict
    created_at: str
    created_by: str
    result: CalibrationResult


@dataclass(frozen=True)
class StoredItemStats:
    """An ``items`` run as stored: its row (``item_stats_runs``) and its rows as an
    :class:`~benchwright.core.item_stats.ItemStatsResult`."""

    id: int
    judge: str
    judge_model: str | None
    condition: str | None
    counts: dict
    created_at: str
    created_by: str
    result: ItemStatsResult
    params: dict = field(default_factory=dict)


class CalibrationStoreMixin:
    """Store methods for calibration and item statistics (mixed into :class:`benchwright.db.store.Store`)."""

    # ------------------------------------------------------------------------------------------ inputs
    def scored_answers(self, *, judge: str | None = None, judge_model: str | None = None,
                       models: Iterable[str] | None = None, conditions: Iterable[str] | None = None,
                       pair_ids: Iterable[str] | None = None) -> list[ScoredAnswer]:
        """Every answer with at least one scored current judgment, one
        :class:`~benchwright.core.calibration.ScoredAnswer` per answer, judge and judge model (its score the mean
        score rate, 0-1, over its scored runs), filtered (``None``: any). Sorted by model, condition, judge,
        judge model, then answer.

        Raises:
            BenchwrightError: an unknown judge, or a ``scores_json`` that cannot be read
                (:func:`benchwright.db.report.report_inputs`).
        """
        from .report import report_inputs

        inputs = report_inputs(self, models=None if models is None else list(models), judge=judge)  # type: ignore[arg-type]
        wanted_conditions = None if conditions is None else set(conditions)
        wanted_pairs = None if pair_ids is None else set(pair_ids)
        runs = [r for r in inputs.runs
                if (judge_model is None or r.judge_model == judge_model)
                and (wanted_conditions is None or r.condition in wanted_conditions)
                and (wanted_pairs is None or r.qa_pair_id in wanted_pairs)]
        pair_of = {r.answer_id: r.qa_pair_id for r in runs}
        with self._lock:  # type: ignore[attr-defined]
            samples = dict(self.db.conn.execute("SELECT id, sample_index FROM answers"))  # type: ignore[attr-defined]
        return [ScoredAnswer(qa_pair_id=pair_of[s.answer_id], model=s.key.model, condition=s.key.condition,
                             sample_index=samples.get(s.answer_id, 0), judge=s.key.judge,
                             judge_model=s.key.judge_model, score=s.score_rate, runs=s.runs)
                for s in answer_scores(runs)]

    # ----------------------------------------------------------------------------------- calibration
    def save_calibration(self, result: CalibrationResult, *, judge: str, judge_model: str | None, condition: str,
                         params: dict, created_by: str) -> int:
        """Append a calibration run and one ``calibration_values`` row per pair of ``result`` in one
        transaction; returns the run id. ``params`` (minimum models, ``--where``, the conditions pooled) goes
        to ``params_json``."""
        counts = result.counts
        with self.write() as db:  # type: ignore[attr-defined]
            cur = db.conn.execute(
                """INSERT INTO calibration_runs (models_json, judge, judge_model, condition, samples, rule,
                   threshold, params_json, model_stats_json, pair_count, too_easy_count, created_at, created_by)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (json.dumps(list(result.models), ensure_ascii=False), judge, judge_model, condition,
                 result.samples, result.rule, result.threshold,
                 json.dumps({"min_models": result.min_models, **params}, ensure_ascii=False, sort_keys=True),
                 json.dumps({m: s.to_dict() for m, s in result.model_stats.items()}, ensure_ascii=False),
                 len(result.pairs), counts["too-easy"], utc_now(), created_by))
            run_id = cur.lastrowid
            db.conn.executemany(
                "INSERT INTO calibration_values (run_id, qa_pair_id, scores_json, mean_z, min_z, decision) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(run_id, p.qa_pair_id, json.dumps({m: s.to_dict() for m, s in p.scores.items()}, ensure_ascii=False),
                  p.mean_z, p.min_z, p.decision) for p in result.pairs])
        return run_id

    @serialized
    def latest_calibration(self) -> StoredCalibration | None:
        """The latest calibration run with its values (pairs in queue order), or None when there is none."""
        row = self.db.conn.execute(  # type: ignore[attr-defined]
            """SELECT id, models_json, judge, judge_model, condition, samples, rule, threshold, params_json,
               model_stats_json, created_at, created_by FROM calibration_runs ORDER BY id DESC LIMIT 1""").fetchone()
        if row is None:
            return None
        (run_id, models_json, judge, judge_model, condition, samples, rule, threshold, params_json, stats_json,
         created_at, created_by) = row
        params = json.loads(params_json)
        stats = {m: ModelStats(m, d.get("mean"), d.get("sd"), d.get("n", 0)) for m, d in json.loads(stats_json).items()}
        pairs = []
        for pair_id, scores_json, mean_z, min_z, decision in self.db.conn.execute(  # type: ignore[attr-defined]
                """SELECT v.qa_pair_id, v.scores_json, v.mean_z, v.min_z, v.decision FROM calibration_values v
                   JOIN qa_pairs p ON p.id = v.qa_pair_id WHERE v.run_id = ? ORDER BY p.ordinal""", [run_id]):
            scores = {m: ModelScore(d["s"], d.get("z"), d.get("n", 0), d.get("runs", 0))
                      for m, d in json.loads(scores_json).items()}
            pairs.append(PairCalibration(pair_id, scores, mean_z, min_z,
                                         sum(1 for s in scores.values() if s.z is not None), decision))
        result = CalibrationResult(models=tuple(json.loads(models_json)), rule=rule, threshold=threshold,
                                   min_models=int(params.get("min_models", 1)), samples=samples,
                                   model_stats=stats, pairs=tuple(pairs))
        return StoredCalibration(run_id, judge, judge_model, condition, params, created_at, created_by, result)

    @serialized
    def difficulty_decisions(self, pair_ids: Iterable[str] | None = None) -> dict[str, str]:
        """``{pair id: decision}`` from each pair's latest calibration (the run that last included it; the rule
        of ``--where difficulty=``); pairs never calibrated are absent."""
        rows = self.db.conn.execute(  # type: ignore[attr-defined]
            """SELECT v.qa_pair_id, v.decision FROM calibration_values v
               WHERE v.run_id = (SELECT max(v2.run_id) FROM calibration_values v2
                                 WHERE v2.qa_pair_id = v.qa_pair_id)""").fetchall()
        wanted = None if pair_ids is None else set(pair_ids)
        return {p: d for p, d in rows if wanted is None or p in wanted}

    def difficulty_counts(self, pair_ids: Sequence[str]) -> dict[str, int] | None:
        """Per decision (:data:`~benchwright.core.vocabulary.DIFFICULTY_FILTERS`, ``uncalibrated`` last), how many
        of ``pair_ids`` have it in their latest calibration; None when no calibration run exists."""
        if self._one("SELECT 1 FROM calibration_runs LIMIT 1") is None:  # type: ignore[attr-defined]
            return None
        found = Counter(self.difficulty_decisions(pair_ids).values())
        out = {d: found.get(d, 0) for d in DIFFICULTY_DECISIONS}
        out["uncalibrated"] = len(set(pair_ids)) - sum(out.values())
        return out

    # ------------------------------------------------------------------------------------ item stats
    def save_item_stats(self, result: ItemStatsResult, *, judge: str, judge_model: str | None,
                        condition: str | None, created_by: str, params: dict | None = None) -> int:
        """Append an ``items`` run and one ``item_stats`` row per pair of ``result`` in one transaction; returns
        the run id. The thresholds (and ``params``: ``--where``, ``--samples``) go to ``thresholds_json``."""
        thresholds = {**result.thresholds.to_dict(), **(params or {})}
        with self.write() as db:  # type: ignore[attr-defined]
            cur = db.conn.execute(
                """INSERT INTO item_stats_runs (judge, judge_model, condition, models_json, thresholds_json,
                   pair_count, counts_json, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (judge, judge_model, condition, json.dumps(list(result.models), ensure_ascii=False),
                 json.dumps(thresholds, ensure_ascii=False, sort_keys=True), len(result.items),
                 json.dumps(result.counts), utc_now(), created_by))
            run_id = cur.lastrowid
            db.conn.executemany(
                """INSERT INTO item_stats (run_id, qa_pair_id, models, mean, sd, pass_share, discrimination,
                   flags_json, scores_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [(run_id, i.qa_pair_id, i.models, i.mean, i.sd, i.pass_share, i.discrimination,
                  json.dumps(list(i.flags)), json.dumps(dict(i.scores), ensure_ascii=False))
                 for i in result.items])
        return run_id

    @serialized
    def latest_item_stats(self) -> StoredItemStats | None:
        """The latest ``items`` run with its rows (pairs in queue order), or None when there is none."""
        row = self.db.conn.execute(  # type: ignore[attr-defined]
            """SELECT id, judge, judge_model, condition, models_json, thresholds_json, counts_json, created_at,
               created_by FROM item_stats_runs ORDER BY id DESC LIMIT 1""").fetchone()
        if row is None:
            return None
        run_id, judge, judge_model, condition, models_json, thresholds_json, counts_json, created_at, by = row
        params = json.loads(thresholds_json)
        thresholds = ItemThresholds(high=params.get("high", 0.9), low=params.get("low", 0.1),
                                    pass_bar=params.get("pass", 0.5),
                                    min_discrimination=params.get("min_discrimination", 0.2),
                                    min_models=params.get("min_models", 2))
        items = [ItemStat(pair_id, json.loads(scores_json), mean, sd, pass_share, disc, tuple(json.loads(flags)))
                 for pair_id, mean, sd, pass_share, disc, flags, scores_json in self.db.conn.execute(  # type: ignore[attr-defined]
                     """SELECT s.qa_pair_id, s.mean, s.sd, s.pass_share, s.discrimination, s.flags_json,
                        s.scores_json FROM item_stats s JOIN qa_pairs p ON p.id = s.qa_pair_id
                        WHERE s.run_id = ? ORDER BY p.ordinal""", [run_id])]
        result = ItemStatsResult(models=tuple(json.loads(models_json)), thresholds=thresholds, items=tuple(items))
        return StoredItemStats(run_id, judge, judge_model, condition, json.loads(counts_json), created_at, by,
                               result, params)

    @serialized
    def item_flag_counts(self, pair_ids: Sequence[str]) -> dict[str, int] | None:
        """Per flag (:data:`~benchwright.core.vocabulary.ITEM_FLAGS`, then ``unrated``), how many of ``pair_ids``
        carry it in their latest item statistics (the rule of ``--where item=``); None when no ``items`` run
        exists."""
        if self.db.conn.execute("SELECT 1 FROM item_stats_runs LIMIT 1").fetchone() is None:  # type: ignore[attr-defined]
            return None
        wanted = set(pair_ids)
        rows = self.db.conn.execute(  # type: ignore[attr-defined]
            """SELECT s.qa_pair_id, s.flags_json FROM item_stats s
               WHERE s.run_id = (SELECT max(s2.run_id) FROM item_stats s2 WHERE s2.qa_pair_id = s.qa_pair_id)"""
        ).fetchall()
        flags: Counter[str] = Counter()
        rated = 0
        for pair_id, flags_json in rows:
            if pair_id in wanted:
                rated += 1
                flags.update(json.loads(flags_json))
        out = {f: flags.get(f, 0) for f in ITEM_FLAGS}
        out["unrated"] = len(wanted) - rated
        return out
