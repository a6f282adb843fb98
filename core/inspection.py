"""What the judge inspector shows: one judge's runs on one answer as a grid of entries x runs, with the
spread of each entry over the runs (RepoProbe §5.3: repeated runs should agree; where they do not, the
annotator looks at the rationales)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .judgment import Judgment, ScoreOverride, effective_entries


@dataclass
class GridRow:
    """One checklist item or dimension across runs.

    Attributes:
        scores: the judge's score per run (None: that run is unscored or lacks the entry).
        effective: the score per run after human overrides.
        overridden: per run, whether an override replaced the judge's score.
        rationales: the judge's rationale per run ("" when none).
        spread: max - min of the effective scores over the runs that scored it (None with fewer than 2).
    """

    key: str
    label: str
    kind: str
    max: int
    allowed: list[int] | None
    scores: list[float | None] = field(default_factory=list)
    effective: list[float | None] = field(default_factory=list)
    overridden: list[bool] = field(default_factory=list)
    rationales: list[str] = field(default_factory=list)

    @property
    def spread(self) -> float | None:
        """Range of the effective scores over the runs that have one."""
        vals = [v for v in self.effective if v is not None]
        return (max(vals) - min(vals)) if len(vals) >= 2 else None

    @property
    def disagree(self) -> bool:
        """True when runs gave different scores."""
        return bool(self.spread)


@dataclass
class JudgmentGrid:
    """A judge's runs on one answer: ``runs`` ordered by run index (latest judgment per run), and rows."""

    runs: list[Judgment]
    rows: list[GridRow]
    rates: list[float | None]
    """Effective score rate per run (None: unscored)."""

    @property
    def disagreeing(self) -> int:
        """Number of entries the runs disagree on."""
        return sum(r.disagree for r in self.rows)


def judgment_grid(judgments: Iterable[Judgment], overrides: Iterable[ScoreOverride]) -> JudgmentGrid:
    """Build the grid from one judge's judgments of one answer (any order; the latest per run index is used)
    and the overrides of those judgments. Entries are keyed by ``key`` in first-seen order."""
    from .judgment import score_rate_of

    latest: dict[int, Judgment] = {}
    for j in judgments:
        if j.run_index not in latest or j.id > latest[j.run_index].id:
            latest[j.run_index] = j
    runs = [latest[k] for k in sorted(latest)]
    overrides = list(overrides)
    rows: dict[str, GridRow] = {}
    per_run: list[dict[str, tuple]] = []
    rates: list[float | None] = []
    for j in runs:
        eff, _ = effective_entries(j, overrides)
        orig = {e.key: e for e in j.entries}
        cells = {}
        for e in eff:
            o = orig[e.key]
            if e.key not in rows:
                rows[e.key] = GridRow(e.key, e.label, e.kind, e.max, e.allowed)
            cells[e.key] = (o.score, e.score if j.scored else None, e.score != o.score, o.rationale)
        per_run.append(cells)
        rates.append(score_rate_of(j.judge, eff) if j.scored else None)
    for row in rows.values():
        for cells in per_run:
            s, eff_s, over, why = cells.get(row.key, (None, None, False, ""))
            row.scores.append(s)
            row.effective.append(eff_s)
            row.overridden.append(over)
            row.rationales.append(why)
    return JudgmentGrid(runs=runs, rows=list(rows.values()), rates=rates)
