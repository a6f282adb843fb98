"""A stamp of a project's data that moves on every change, for caches of counts over the whole project."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import Store


def change_stamp(store: Store) -> tuple[int, int]:
    """``(rows this connection changed, PRAGMA data_version)`` of ``store``: SQLite moves the second on every commit
    made by another connection (another terminal, another process) and the first on every write of this one (rows
    not committed yet included). Equal stamps: nothing changed in between, so a count made at the first still holds.
    Costs one PRAGMA (microseconds)."""
    with store._lock:  # the connection is shared between threads (db/locking.py)
        conn = store.db.conn
        return conn.total_changes, conn.execute("PRAGMA data_version").fetchone()[0]


def in_transaction(store: Store) -> bool:
    """True while ``store``'s connection holds rows not committed yet (another connection does not see them)."""
    return store.db.conn.in_transaction
