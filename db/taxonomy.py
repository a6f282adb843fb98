"""Versioned taxonomies in the store (``taxonomies``, ``taxonomy_nodes``, ``taxonomy_members``, m020) and pairs'
clusters (``cluster_assignments``; the m020 trigger copies the latest onto ``qa_pairs``). Every table is
append-only: a build, a label run and each edit is a new version (SWE-QA-Pro §2.1; docs/data-methods.md
"Taxonomy").

The clustering and the edits are pure functions in :mod:`benchwright.core.taxonomy`; the runs that embed, call
models and save live in :mod:`benchwright.tui.services.taxonomy`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from benchwright.core.embeddings import pack_vector, unpack_vectors
from benchwright.core.models import utc_now
from benchwright.core.taxonomy import (
    LabelChange,
    Member,
    Node,
    Taxonomy,
    TaxonomyError,
    TaxonomyVersion,
    label_history,
    node_sort_key,
)

from .locking import serialized

_VERSION_COLUMNS = ("id, lineage, parent_id, operation, operation_json, source, embedder_model, dimensions, "
                    "params_json, created_at, created_by")
_NODE_COLUMNS = ("node_id, parent_node, level, label, description, label_origin, label_model, label_call_ids_json, "
                 "label_by, label_at, size, centroid")


@dataclass(frozen=True)
class ClusterAssignment:
    """A cluster to give a pair: the leaf of a taxonomy version (``cluster_id`` is the leaf id ``L1.L2``,
    ``cluster_name`` its label) and the cosine distance to its centroid (None when a person chose it)."""

    qa_pair_id: str
    taxonomy_id: int | None
    node_id: str | None
    cluster_id: str | None
    cluster_name: str | None
    distance: float | None = None


@dataclass(frozen=True)
class AssignCounts:
    """What :meth:`TaxonomyStoreMixin.assign_clusters` did: ``assigned`` (a new cluster row), ``unchanged``
    (already on that cluster), ``kept_imported`` / ``kept_annotator`` (a cluster the import or a person set,
    left alone without ``force``)."""

    assigned: int = 0
    unchanged: int = 0
    kept_imported: int = 0
    kept_annotator: int = 0


class TaxonomyStoreMixin:
    """Store methods for taxonomies and pair clusters (mixed into :class:`benchwright.db.store.Store`)."""

    # ------------------------------------------------------------------------------------------ versions
    def save_taxonomy(self, taxonomy: Taxonomy, *, operation: str, source: str, embedder_model: str,
                      dimensions: int, by: str, parent_id: int | None = None, operation_args: dict | None = None,
                      params: dict | None = None) -> int:
        """Store ``taxonomy`` as a new version (the ``taxonomies`` row, its nodes and members) in one transaction.
        A build has no ``parent_id`` and starts a lineage (its own id); any other version names the version it
        was made from, which must still be the latest of its lineage (compare-and-set: an edit made meanwhile
        elsewhere is not silently overtaken). ``params`` defaults to ``taxonomy.params``.

        Returns:
            The new version's id.

        Raises:
            TaxonomyError: ``parent_id`` is unknown or no longer the latest version of its lineage.
        """
        now = utc_now()
        with self.write() as db:
            conn = db.conn
            new_id = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM taxonomies").fetchone()[0]
            if parent_id is None:
                lineage = new_id
            else:
                row = conn.execute("SELECT lineage FROM taxonomies WHERE id = ?", [parent_id]).fetchone()
                if row is None:
                    raise TaxonomyError(f"no taxonomy version {parent_id}")
                lineage = row[0]
                latest = conn.execute("SELECT max(id) FROM taxonomies WHERE lineage = ?", [lineage]).fetchone()[0]
                if latest != parent_id:
                    raise TaxonomyError(f"taxonomy version {parent_id} is no longer the latest of its lineage "
                                        f"(version {latest} was saved meanwhile); nothing was saved: edit version "
                                        f"{latest}")
            conn.execute(
                f"INSERT INTO taxonomies ({_VERSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [new_id, lineage, parent_id, operation, json.dumps(operation_args or {}, ensure_ascii=False,
                                                                    sort_keys=True),
                 source, embedder_model, dimensions,
                 json.dumps(taxonomy.params if params is None else params, ensure_ascii=False, sort_keys=True),
                 now, by])
            conn.executemany(
                f"INSERT INTO taxonomy_nodes (taxonomy_id, {_NODE_COLUMNS}) VALUES ({', '.join('?' * 13)})",
                [(new_id, n.node_id, n.parent, n.level, n.label, n.description, n.label_origin, n.label_model,
                  json.dumps(list(n.label_call_ids)) if n.label_call_ids else None, n.label_by, n.label_at, n.size,
                  pack_vector(n.centroid) if n.centroid is not None else None) for n in taxonomy.nodes])
            conn.executemany(
                "INSERT INTO taxonomy_members (taxonomy_id, item_id, node_id, distance) VALUES (?, ?, ?, ?)",
                [(new_id, m.item_id, m.node_id, m.distance) for m in taxonomy.members])
        return new_id

    @serialized
    def taxonomy_version(self, version: int | None = None) -> TaxonomyVersion | None:
        """Version ``version`` with its nodes and members (None: the latest version saved), or None when there
        is none (or no such version)."""
        conn = self.db.conn
        if version is None:
            row = conn.execute(f"SELECT {_VERSION_COLUMNS} FROM taxonomies ORDER BY id DESC LIMIT 1").fetchone()
        else:
            row = conn.execute(f"SELECT {_VERSION_COLUMNS} FROM taxonomies WHERE id = ?", [version]).fetchone()
        if row is None:
            return None
        head = _version(row)
        nodes = self._nodes_of(head.id, head.dimensions)
        members = tuple(Member(r[0], r[1], r[2]) for r in conn.execute(
            "SELECT item_id, node_id, distance FROM taxonomy_members WHERE taxonomy_id = ? ORDER BY item_id",
            [head.id]))
        return TaxonomyVersion(**{**head.__dict__, "taxonomy": Taxonomy(tuple(nodes), members, head.params)})

    def _nodes_of(self, version: int, dimensions: int) -> list[Node]:
        rows = self.db.conn.execute(
            f"SELECT {_NODE_COLUMNS} FROM taxonomy_nodes WHERE taxonomy_id = ?", [version]).fetchall()
        nodes = [Node(r[0], r[2], r[1], r[10],
                      unpack_vectors([r[11]], dimensions)[0] if r[11] is not None else None,
                      r[3], r[4], r[5], r[6], tuple(json.loads(r[7])) if r[7] else (), r[8], r[9]) for r in rows]
        return sorted(nodes, key=lambda n: node_sort_key(n.node_id))

    @serialized
    def taxonomy_versions(self, lineage: int | None = None) -> list[TaxonomyVersion]:
        """The versions of ``lineage`` (None: the lineage of the latest version), oldest first, without nodes."""
        conn = self.db.conn
        if lineage is None:
            row = conn.execute("SELECT lineage FROM taxonomies ORDER BY id DESC LIMIT 1").fetchone()
            if row is None:
                return []
            lineage = row[0]
        return [_version(r) for r in conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM taxonomies WHERE lineage = ? ORDER BY id", [lineage])]

    @serialized
    def taxonomy_label_history(self, version: int, node_id: str) -> list[LabelChange]:
        """The label changes of node ``node_id`` of ``version``, over the versions of its lineage up to it,
        oldest first (:func:`benchwright.core.taxonomy.label_history`).

        Raises:
            TaxonomyError: no such version, or no such node in it.
        """
        conn = self.db.conn
        row = conn.execute("SELECT lineage FROM taxonomies WHERE id = ?", [version]).fetchone()
        if row is None:
            raise TaxonomyError(f"no taxonomy version {version}")
        heads = [_version(r) for r in conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM taxonomies WHERE lineage = ? AND id <= ? ORDER BY id", [row[0], version])]
        by_version: dict[int, dict[str, Node]] = {h.id: {} for h in heads}
        for r in conn.execute(
                "SELECT n.taxonomy_id, n.node_id, n.parent_node, n.level, n.label, n.description, n.label_origin, "
                "n.label_model, n.label_by, n.label_at, n.size FROM taxonomy_nodes n JOIN taxonomies t "
                "ON t.id = n.taxonomy_id WHERE t.lineage = ? AND t.id <= ?", [row[0], version]):
            by_version[r[0]][r[1]] = Node(r[1], r[3], r[2], r[10], None, r[4], r[5], r[6], r[7], (), r[8], r[9])
        return label_history([(h, by_version[h.id]) for h in heads], node_id)

    # ------------------------------------------------------------------------------------------- members
    @serialized
    def taxonomy_item_texts(self, item_ids: Sequence[str]) -> dict[str, str]:
        """``{item id: text}``: an issue's text (``issues.text``) or a pair's current question; ids not found are
        absent."""
        out: dict[str, str] = {}
        ids = sorted(set(item_ids))
        for i in range(0, len(ids), 900):
            chunk = ids[i:i + 900]
            marks = ", ".join("?" * len(chunk))
            for table, column in (("issues", "text"), ("qa_pairs", "question")):
                out.update(self.db.conn.execute(
                    f"SELECT id, {column} FROM {table} WHERE id IN ({marks})", chunk).fetchall())
        return out

    def taxonomy_node_members(self, version: int, node_id: str, *, limit: int | None = None
                              ) -> list[tuple[Member, str | None]]:
        """Members of a leaf (or of every leaf under a level-1 node) of ``version`` with their texts, nearest
        to the centroid first (then by item id); at most ``limit``. A text no longer in the project is None."""
        with self._lock:
            clause = "node_id = ?" if "." in node_id else "(node_id = ? OR node_id LIKE ? || '.%')"
            params = [version, node_id] if "." in node_id else [version, node_id, node_id]
            rows = self.db.conn.execute(
                f"SELECT item_id, node_id, distance FROM taxonomy_members WHERE taxonomy_id = ? AND {clause} "
                f"ORDER BY distance IS NULL, distance, item_id" + (" LIMIT ?" if limit is not None else ""),
                [*params, *([limit] if limit is not None else [])]).fetchall()
        members = [Member(*r) for r in rows]
        texts = self.taxonomy_item_texts([m.item_id for m in members])
        return [(m, texts.get(m.item_id)) for m in members]

    @serialized
    def taxonomy_pairs(self, annotator: str, flt) -> list[tuple[str, str, str | None]]:
        """``(pair id, current question, repository)`` of the pairs ``flt`` (a :class:`~benchwright.db.QueueFilter`)
        lets through, in queue order: the items of a ``--source pairs`` build and of ``taxonomy assign``."""
        where, params = flt.sql(annotator)
        return [tuple(r) for r in self.db.conn.execute(
            f"""SELECT p.id, p.question, p.repository FROM qa_pairs p
                LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                WHERE {where} ORDER BY p.ordinal""", [annotator, *params])]

    # ---------------------------------------------------------------------------------------- assignment
    def assign_clusters(self, assignments: Sequence[ClusterAssignment], *, origin: str, by: str,
                        force: bool = False) -> AssignCounts:
        """Give each pair its cluster (``cluster_assignments`` rows, copied onto ``qa_pairs`` by trigger) in one
        transaction. With ``origin`` ``taxonomy`` a pair whose cluster the import (``imported``) or a person
        (``annotator``) set is left alone unless ``force``; with ``annotator`` (a person chose it) it is always
        set. A pair already on that cluster with that origin gets no new row.

        Raises:
            TaxonomyError: ``origin`` is not ``taxonomy`` or ``annotator``.
        """
        if origin not in ("taxonomy", "annotator"):
            raise TaxonomyError(f"unknown cluster origin {origin!r}")
        counts = {"assigned": 0, "unchanged": 0, "kept_imported": 0, "kept_annotator": 0}
        now = utc_now()
        with self.write() as db:
            conn = db.conn
            current: dict[str, tuple] = {}
            ids = sorted({a.qa_pair_id for a in assignments})
            for i in range(0, len(ids), 900):
                chunk = ids[i:i + 900]
                for r in conn.execute(
                        f"SELECT id, cluster_id, cluster_name, cluster_origin FROM qa_pairs WHERE id IN "
                        f"({', '.join('?' * len(chunk))})", chunk):
                    current[r[0]] = tuple(r[1:])
            rows = []
            for a in assignments:
                if a.qa_pair_id not in current:
                    raise TaxonomyError(f"no pair {a.qa_pair_id}")
                cid, cname, corigin = current[a.qa_pair_id]
                if corigin is None and (cid is not None or cname is not None):
                    corigin = "imported"  # set before origins were recorded: the import's
                if (cid, cname, corigin) == (a.cluster_id, a.cluster_name, origin):
                    counts["unchanged"] += 1
                    continue
                if origin == "taxonomy" and not force and corigin in ("imported", "annotator"):
                    counts[f"kept_{corigin}"] += 1
                    continue
                rows.append((a.qa_pair_id, a.taxonomy_id, a.node_id, a.cluster_id, a.cluster_name, origin,
                             a.distance, cid, cname, corigin, now, by))
                current[a.qa_pair_id] = (a.cluster_id, a.cluster_name, origin)
                counts["assigned"] += 1
            conn.executemany(
                "INSERT INTO cluster_assignments (qa_pair_id, taxonomy_id, node_id, cluster_id, cluster_name, origin, "
                "distance, previous_cluster_id, previous_cluster_name, previous_origin, created_at, created_by) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return AssignCounts(**counts)

    @serialized
    def cluster_history(self, pair_id: str) -> list[dict]:
        """Every cluster ``pair_id`` was given, oldest first: ``{cluster_id, cluster_name, origin, taxonomy_id,
        node_id, distance, previous_cluster_id, previous_origin, created_at, created_by}``."""
        cols = ("cluster_id", "cluster_name", "origin", "taxonomy_id", "node_id", "distance", "previous_cluster_id",
                "previous_origin", "created_at", "created_by")
        return [dict(zip(cols, r, strict=True)) for r in self.db.conn.execute(
            f"SELECT {', '.join(cols)} FROM cluster_assignments WHERE qa_pair_id = ? ORDER BY id", [pair_id])]


def _version(r: tuple) -> TaxonomyVersion:
    return TaxonomyVersion(id=r[0], lineage=r[1], parent_id=r[2], operation=r[3], operation_args=json.loads(r[4]),
                           source=r[5], embedder_model=r[6], dimensions=r[7], params=json.loads(r[8]),
                           created_at=r[9], created_by=r[10])
