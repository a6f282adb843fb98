"""Read-only queries for the statistics screen's plots (the arithmetic is in :mod:`benchwright.core.plot_data`).

Reads ``review_state`` (m002) with ``qa_pairs.reopened_at``; nothing is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .texts import REOPENED_SQL

if TYPE_CHECKING:
    from .store import Store

# The reviews Store.annotator_progress counts as submitted: each annotator's current accept / reject / revise,
# unless it was made before the pair was sent back to review. updated_at is the UTC ISO time of that decision.
_DECISION_DAYS_SQL = f"""
SELECT s.annotator, substr(s.updated_at, 1, 10) FROM review_state s JOIN qa_pairs p ON p.id = s.qa_pair_id
WHERE s.decision IN ('accept', 'reject', 'revise') AND NOT coalesce({REOPENED_SQL}, 0)
ORDER BY s.annotator, s.updated_at
"""


def decision_days(store: Store) -> list[tuple[str, str]]:
    """``[(annotator, day)]``: one row per submitted review counted by ``Store.annotator_progress``, with the UTC
    day (``YYYY-MM-DD``) of its current decision; input of :func:`benchwright.core.plot_data.progress_over_time`.
    Holds the store's lock (the app calls it from a worker thread)."""
    with store._lock:
        return [(who, day) for who, day in store.db.conn.execute(_DECISION_DAYS_SQL)]
