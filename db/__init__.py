"""benchwright.db: the SQLite project store (sqlite-utils), its schema and migrations."""

from .migrations import SCHEMA_VERSION, migrations
from .store import STATUSES, Progress, QueueFilter, QueueRow, Store

__all__ = ["SCHEMA_VERSION", "STATUSES", "Progress", "QueueFilter", "QueueRow", "Store", "migrations"]
