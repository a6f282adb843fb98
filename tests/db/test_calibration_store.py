"""The calibration and item-statistics store mixin (db/calibration.py): judged answers read as the report reads
them (latest judgment per run, overrides applied, unscored runs left out, samples kept apart), runs saved in one
transaction and read back whole, append-only, and each pair's latest run deciding its filter value."""

from __future__ import annotations

import sqlite3

import pytest

from benchwright.core.calibration import ScoredAnswer, calibrate
from benchwright.core.item_stats import ItemThresholds, item_stats
from benchwright.db import QueueFilter

ENTRIES = [{"key": "correctness", "label": "Correctness", "kind": "dimension", "score": 6, "max": 10},
           {"key": "completeness", "label": "Completeness", "kind": "dimension", "score": 8, "max": 10}]


def _entries(a, b):
    return [{**ENTRIES[0], "score": a}, {**ENTRIES[1], "score": b}]


def _answer(store, pid, model, sample=0, condition="closed-book"):
    return store.add_generated_answer(pid, model, condition, f"{model} {sample}", extra={}, by="t",
                                      sample_index=sample)


def test_scored_answers_read_the_latest_judgment_with_overrides_and_skip_unscored(loaded):
    pid = loaded.filtered_pair_ids("x")[0]
    a0, a1 = _answer(loaded, pid, "m", 0), _answer(loaded, pid, "m", 1)
    loaded.save_judgment(a0, "swe-qa-pro", "j", entries=_entries(2, 2), created_by="t")
    latest = loaded.save_judgment(a0, "swe-qa-pro", "j", entries=_entries(6, 8), created_by="t")  # replaces run 0
    loaded.save_judgment(a0, "swe-qa-pro", "j", entries=_entries(10, 10), run_index=1, created_by="t")
    loaded.save_judgment(a1, "swe-qa-pro", "j", status="unscored", entries=[], reason="bad", created_by="t")
    loaded.add_override(latest.id, "correctness", 8, "the judge missed it", "lead")
    rows = loaded.scored_answers(judge="swe-qa-pro")
    assert len(rows) == 1  # a1 has no scored run
    r = rows[0]
    assert (r.qa_pair_id, r.model, r.condition, r.sample_index, r.judge_model, r.runs) == (pid, "m", "closed-book",
                                                                                           0, "j", 2)
    assert r.score == pytest.approx(((8 + 8) / 20 + 1.0) / 2)  # run 0 overridden to 8/10 + 8/10, run 1 full marks
    assert loaded.scored_answers(judge="checklist") == []
    assert loaded.scored_answers(conditions=["agentic"]) == []
    assert loaded.scored_answers(pair_ids=["nope"]) == []


def _answers(pairs, table):
    return [ScoredAnswer(p, m, "closed-book", 0, "imported", "j", s, 1)
            for m, col in table.items() for p, s in zip(pairs, col, strict=True)]


def test_a_calibration_run_round_trips_and_the_latest_run_of_each_pair_counts(loaded):
    pairs = loaded.filtered_pair_ids("x")
    table = {"A": [0.9, 0.1, 0.5, 0.5], "B": [0.8, 0.2, 0.5, 0.5]}
    assert loaded.difficulty_counts(pairs) is None and loaded.latest_calibration() is None
    first = calibrate(_answers(pairs[:4], table), ["A", "B"], rule="all-z", threshold=0.5)
    run1 = loaded.save_calibration(first, judge="imported", judge_model="j", condition="closed-book",
                                   params={"where": []}, created_by="t")
    stored = loaded.latest_calibration()
    assert stored.id == run1 and stored.judge == "imported" and stored.params == {"min_models": 2, "where": []}
    assert [p.qa_pair_id for p in stored.result.pairs] == pairs[:4]
    assert [p.decision for p in stored.result.pairs] == [p.decision for p in first.pairs]
    assert stored.result.pairs[0].scores["A"].z == pytest.approx(first.pairs[0].scores["A"].z)
    assert stored.result.model_stats["A"].sd == pytest.approx(first.model_stats["A"].sd)
    assert loaded.difficulty_decisions()[pairs[0]] == "too-easy"
    # a second run over pairs 2-4 only: pair 1 keeps its decision from run 1
    second = calibrate(_answers(pairs[1:4], {"A": [0.1, 0.9, 0.5], "B": [0.2, 0.8, 0.5]}), ["A", "B"],
                       rule="all-z", threshold=0.5)
    loaded.save_calibration(second, judge="imported", judge_model="j", condition="closed-book", params={},
                            created_by="t")
    decisions = loaded.difficulty_decisions()
    assert decisions[pairs[0]] == "too-easy" and decisions[pairs[2]] == "too-easy"
    assert loaded.filtered_pair_ids("x", QueueFilter(difficulty="too-easy")) == [pairs[0], pairs[2]]
    assert loaded.difficulty_counts(pairs) == {"too-easy": 2, "kept": 2, "insufficient": 0,
                                               "uncalibrated": len(pairs) - 4}
    with pytest.raises(sqlite3.DatabaseError):
        loaded.db.conn.execute("UPDATE calibration_values SET decision = 'kept'")
    with pytest.raises(sqlite3.DatabaseError):
        loaded.db.conn.execute("DELETE FROM calibration_runs")


def test_an_items_run_round_trips_with_its_thresholds(loaded):
    pairs = loaded.filtered_pair_ids("x")[:4]
    assert loaded.item_flag_counts(pairs) is None and loaded.latest_item_stats() is None
    table = {"S": [1.0, 0.0, 1.0, 0.8], "M": [1.0, 0.0, 0.5, 0.6], "W": [1.0, 0.0, 0.0, 0.2]}
    result = item_stats(_answers(pairs, table), ["S", "M", "W"], thresholds=ItemThresholds(high=0.95),
                        too_easy=[pairs[3]])
    run = loaded.save_item_stats(result, judge="imported", judge_model="j", condition="agentic", created_by="t",
                                 params={"where": ["split=test"], "samples": None})
    stored = loaded.latest_item_stats()
    assert stored.id == run and stored.condition == "agentic" and stored.result.thresholds.high == 0.95
    assert stored.params["where"] == ["split=test"]
    by = {i.qa_pair_id: i for i in stored.result.items}
    assert by[pairs[0]].flags == ("saturated",) and by[pairs[1]].flags == ("unsolved",)
    assert by[pairs[2]].discrimination == pytest.approx(result.items[2].discrimination)
    assert by[pairs[2]].scores == {"S": 1.0, "M": 0.5, "W": 0.0}
    counts = loaded.item_flag_counts(loaded.filtered_pair_ids("x"))
    assert counts["saturated"] == 1 and counts["closed-book-solvable"] == 1 and counts["unrated"] == 4
    assert loaded.filtered_pair_ids("x", QueueFilter(item="unsolved")) == [pairs[1]]
    with pytest.raises(sqlite3.DatabaseError):
        loaded.db.conn.execute("UPDATE item_stats SET flags_json = '[]'")
