"""The embedding cache in the store (``embeddings``, m020): one vector per (text SHA-256, model, dimensions),
append-only, so a rerun of dedup or a taxonomy build embeds nothing it embedded before.

Vectors are computed in :mod:`benchwright.tui.services.embeddings`; the format is in
:mod:`benchwright.core.embeddings`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from benchwright.core.embeddings import pack_vector, unpack_vectors
from benchwright.core.models import utc_now


class EmbeddingStoreMixin:
    """Store methods for the embedding cache (mixed into :class:`benchwright.db.store.Store`)."""

    def cached_vectors(self, hashes: Sequence[str], model: str, dimensions: int) -> dict[str, np.ndarray]:
        """``{text_sha256: vector (dimensions,) float32}`` for the hashes of ``hashes`` cached for ``model`` at
        ``dimensions`` (the others are absent)."""
        found: dict[str, np.ndarray] = {}
        wanted = sorted(set(hashes))
        with self._lock:
            for i in range(0, len(wanted), 900):
                chunk = wanted[i:i + 900]
                rows = self.db.conn.execute(
                    f"SELECT text_sha256, vector FROM embeddings WHERE model = ? AND dimensions = ? "
                    f"AND text_sha256 IN ({', '.join('?' * len(chunk))})", [model, dimensions, *chunk]).fetchall()
                if rows:
                    vecs = unpack_vectors([r[1] for r in rows], dimensions)
                    found.update({r[0]: vecs[k] for k, r in enumerate(rows)})
        return found

    def save_vectors(self, items: Iterable[tuple[str, np.ndarray]], *, model: str, dimensions: int, provider: str,
                     call_id: int | None = None) -> int:
        """Cache ``(text_sha256, vector)`` items for ``model`` at ``dimensions`` in one transaction; a key already
        cached is left as it is. ``call_id`` is the ledger row of the call that produced them (None for a
        built-in embedder). Returns how many rows were added."""
        now = utc_now()
        rows = [(h, model, dimensions, pack_vector(v), provider, call_id, now) for h, v in items]
        with self.write() as db:
            before = db.conn.total_changes
            db.conn.executemany(
                "INSERT OR IGNORE INTO embeddings (text_sha256, model, dimensions, vector, provider, call_id, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            return db.conn.total_changes - before

    def embedding_counts(self) -> list[tuple[str, int, int]]:
        """``(model, dimensions, vectors cached)`` per model and dimensions, most vectors first."""
        with self._lock:
            return [tuple(r) for r in self.db.conn.execute(
                "SELECT model, dimensions, count(*) FROM embeddings GROUP BY model, dimensions "
                "ORDER BY count(*) DESC, model")]

    def native_embedding_dimensions(self, model: str, provider: str) -> int | None:
        """The dimensions ``model`` on ``provider`` answered with when no ``dimensions`` was sent (its own), as the
        cache and the ledger recorded it; None when never seen."""
        with self._lock:
            r = self.db.conn.execute(
                """SELECT e.dimensions FROM embeddings e JOIN llm_calls c ON c.id = e.call_id
                   WHERE e.model = ? AND e.provider = ? AND json_extract(c.params_json, '$.dimensions') IS NULL
                   ORDER BY e.id DESC LIMIT 1""", [model, provider]).fetchone()
        return None if r is None else r[0]

    def embedding_source_texts(self, source: str, pair_ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """``[(id, text)]`` embedded for ``source``: ``pairs`` (each pair's current question, queue order; only
        ``pair_ids`` when given, in that order) or ``issues`` (each issue text, import order).

        Raises:
            ValueError: another source.
        """
        if source == "issues":
            return self.issue_texts()
        with self._lock:
            if source != "pairs":
                raise ValueError(f"unknown embedding source {source!r}")
            rows = {r[0]: r[1] for r in self.db.conn.execute("SELECT id, question FROM qa_pairs ORDER BY ordinal")}
        if pair_ids is None:
            return list(rows.items())
        return [(i, rows[i]) for i in pair_ids if i in rows]
