"""benchwright.db: the SQLite project store (sqlite-utils), its schema and migrations."""

from .checklists import CHECKLIST_FILTERS, ChecklistConflictError, ChecklistVersion, InvalidChecklistError
from .migrations import SCHEMA_VERSION, migrations
from .store import STATUSES, Progress, QueueFilter, QueueRow, Store

__all__ = [
    "CHECKLIST_FILTERS", "SCHEMA_VERSION", "STATUSES", "ChecklistConflictError", "ChecklistVersion",
    "InvalidChecklistError", "Progress", "QueueFilter", "QueueRow", "Store", "migrations"]
