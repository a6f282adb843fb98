"""Judge calibration against humans for the front ends (``benchwright calibration``, the statistics screen): the
store's paired scores (:func:`benchwright.db.judge_calibration.paired_scores`) through the arithmetic of
:func:`benchwright.core.judge_calibration.judge_calibration`. Not the difficulty calibration
(:mod:`benchwright.tui.services.calibration`, ``benchwright calibrate``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from benchwright.core.judge_calibration import (
    CalibrationOptions,
    CalibrationReport,
    judge_calibration,
    select_judge,
)
from benchwright.db.judge_calibration import paired_scores

if TYPE_CHECKING:
    from benchwright.db import Store


def calibration_report(store: Store, options: CalibrationOptions | None = None, *, judge: str | None = None,
                       models: Iterable[str] | None = None, viewer: str | None = None) -> CalibrationReport:
    """Every LLM judge (or the one ``judge`` names) against the humans' scores of the same answers.

    Args:
        store: an open project (read only).
        options: weights, runs and humans modes, groupings, how many disagreements to list (default
            :class:`~benchwright.core.judge_calibration.CalibrationOptions`: linear, mean, each, by model, 10).
        judge: a judge label (``checklist:gpt-4o``), a judge name (``checklist``) or a judge model (``gpt-4o``);
            None: every LLM judge.
        models: only answers of these models; None: all.
        viewer: who looks; in blind mode the answers assigned to them that they have not scored yet are left
            out of the worst-disagreements lists (:func:`benchwright.tui.services.human.hidden_for`; they still
            count in the figures, which name nobody). None: nothing withheld.

    Returns:
        The :class:`~benchwright.core.judge_calibration.CalibrationReport` (``judges`` empty when no human has
        scored an answer an LLM judge scored against the same checklist version).

    Raises:
        JudgeCalibrationError: ``judge`` names no judge with paired scores.
    """
    scores = select_judge(paired_scores(store, models=models), judge)
    withheld: set[str] = set()
    if viewer is not None and store.blind_mode:
        from .human import hidden_for

        withheld = {s.answer_id for s in store.answer_assignments(viewer) if hidden_for(store, s.answer_id, viewer)}
    return judge_calibration(scores, options, withheld=withheld)


__all__ = ["calibration_report"]
