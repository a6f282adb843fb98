"""benchwright.db: the SQLite project store (sqlite-utils), its schema and migrations."""

from .checklists import CHECKLIST_FILTERS, ChecklistConflictError, ChecklistVersion, InvalidChecklistError
from .migrations import SCHEMA_VERSION, migrations
from .reviews import Adjudication, Disagreement
from .store import (
    CURATION_FILTERS,
    STATUSES,
    NoteConflictError,
    Progress,
    QueueFilter,
    QueueRow,
    StaleReviewError,
    Store,
)

__all__ = [
    "CHECKLIST_FILTERS",
    "CURATION_FILTERS",
    "SCHEMA_VERSION",
    "STATUSES",
    "Adjudication",
    "ChecklistConflictError",
    "ChecklistVersion",
    "Disagreement",
    "InvalidChecklistError",
    "NoteConflictError",
    "Progress",
    "QueueFilter",
    "QueueRow",
    "StaleReviewError",
    "Store",
    "migrations",
]
