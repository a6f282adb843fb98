"""Named selections in the store (``selections`` / ``selection_members``, m020): balanced samples over the
taxonomy (SWE-QA-Pro §2.4, :mod:`benchwright.core.sampling`), append-only. Re-using a name adds a new version of
it; the latest version of a name is the selection (``--where selection=NAME``, ``releases create --selection``).
"""

from __future__ import annotations

import json

from benchwright.core.errors import NotFoundError
from benchwright.core.models import utc_now
from benchwright.core.sampling import Candidate, Sample, Selection, check_selection_name

from .data_filters import CALIBRATION_SURVIVOR_PARAMS, CALIBRATION_SURVIVOR_SQL, DEDUP_SURVIVOR_SQL
from .locking import serialized

_SELECTION_COLUMNS = ("id, name, (SELECT count(*) FROM selections o WHERE o.name = s.name AND o.id <= s.id), "
                      "params_json, seed, size, coverage_json, shortfalls_json, created_at, created_by")


def _selection(row: tuple) -> Selection:
    return Selection(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], json.loads(row[6]),
                     json.loads(row[7]), row[8], row[9])


class SelectionStoreMixin:
    """Store methods for selections (mixed into :class:`benchwright.db.store.Store`)."""

    @serialized
    def sample_candidates(self, annotator: str, flt=None, *, survivors: bool = True) -> tuple[list[Candidate],
                                                                                             dict[str, str], dict]:
        """The pairs a sample draws from: those ``flt`` (a :class:`~benchwright.db.store.QueueFilter`, judged for
        ``annotator``) lets through and, with ``survivors``, that survive dedup and calibration
        (:data:`~benchwright.db.data_filters.DEDUP_SURVIVOR_SQL`, ``CALIBRATION_SURVIVOR_SQL``). A pair's cluster is
        its ``cluster_id``, else its ``cluster_name``; when imported pairs and pairs placed by a taxonomy (or an
        annotator) share a cluster id, the imported ones are in the cluster ``"ID (imported)"``: they are different
        clusters that happen to be numbered alike.

        Returns:
            ``(candidates, names, counts)``: the candidates in queue order; ``names`` ``{cluster: cluster_name}``
            (the name most of its candidates carry); ``counts`` ``{"matching", "duplicates", "too_easy"}``: pairs
            the filter let through and, of them, those left out as duplicates and as too easy (0 without
            ``survivors``; a pair both counts as a duplicate).

        Raises:
            BenchwrightError: an unknown filter value.
        """
        from .store import QueueFilter

        where, params = (flt or QueueFilter()).sql(annotator)
        rows = self.db.conn.execute(
            f"""SELECT p.id, coalesce(p.cluster_id, p.cluster_name), p.cluster_name, p.qa_type, p.ordinal,
                       {DEDUP_SURVIVOR_SQL}, {CALIBRATION_SURVIVOR_SQL}, p.cluster_origin = 'imported'
                FROM qa_pairs p LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                WHERE {where} ORDER BY p.ordinal""",
            [*CALIBRATION_SURVIVOR_PARAMS, annotator, *params]).fetchall()
        counts = {"matching": len(rows), "duplicates": 0, "too_easy": 0}
        out: list[Candidate] = []
        votes: dict[str, dict[str, int]] = {}
        # An imported cluster id can look like a taxonomy leaf's (SWE-QA-Pro's "1.1" next to leaf 1.1 after
        # taxonomy assign kept the imported clusters): when one id has both, the imported one is told apart.
        origins: dict[str, set[bool]] = {}
        for r in rows:
            if r[1] is not None:
                origins.setdefault(r[1], set()).add(bool(r[7]))
        clashing = {c for c, kinds in origins.items() if len(kinds) > 1}
        for pid, cluster, name, qa_type, ordinal, unique, hard, imported in rows:
            if cluster in clashing and imported:
                cluster = f"{cluster} (imported)"
            if survivors and not (unique and hard):
                counts["duplicates" if not unique else "too_easy"] += 1
                continue
            out.append(Candidate(pid, cluster, qa_type, ordinal))
            if cluster is not None and name is not None:
                tally = votes.setdefault(cluster, {})
                tally[name] = tally.get(name, 0) + 1
        names = {c: max(sorted(t), key=t.__getitem__) for c, t in votes.items()}
        return out, names, counts

    def save_selection(self, name: str, sample: Sample, *, params: dict, seed: int | None, by: str) -> Selection:
        """Store ``sample`` as a new version of the selection ``name`` (the selection and its members in one
        transaction; earlier versions stay). ``params``: the sampling parameters (:class:`Selection`).

        Raises:
            BenchwrightError: an invalid name (:data:`benchwright.core.sampling.SELECTION_NAME`).
        """
        check_selection_name(name)
        with self.write() as db:
            cur = db.conn.execute(
                """INSERT INTO selections (name, params_json, seed, size, coverage_json, shortfalls_json,
                   created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                (name, json.dumps(params, sort_keys=True), seed, len(sample.members),
                 json.dumps(sample.coverage, sort_keys=True), json.dumps([s.to_dict() for s in sample.shortfalls]),
                 utc_now(), by))
            sid = cur.lastrowid
            db.conn.executemany(
                "INSERT INTO selection_members (selection_id, qa_pair_id, position, cluster_id, qa_type) "
                "VALUES (?, ?, ?, ?, ?)",
                [(sid, c.pair_id, i, c.cluster, c.qa_type) for i, c in enumerate(sample.members, 1)])
            row = db.conn.execute(f"SELECT {_SELECTION_COLUMNS} FROM selections s WHERE id = ?", [sid]).fetchone()
        return _selection(row)

    @serialized
    def selection(self, name: str, version: int | None = None) -> Selection:
        """The latest version of the selection ``name`` (or its ``version``, 1 the first).

        Raises:
            NotFoundError: no such selection or version (the message lists the names there are).
        """
        rows = self.db.conn.execute(f"SELECT {_SELECTION_COLUMNS} FROM selections s WHERE name = ? ORDER BY id",
                                    [name]).fetchall()
        if not rows:
            names = self.selection_names()
            raise NotFoundError(f"no selection called {name[:80]!r}; selections: "
                                f"{', '.join(names) if names else 'none yet (make one with benchwright sample)'}")
        if version is None:
            return _selection(rows[-1])
        if not 1 <= version <= len(rows):
            raise NotFoundError(f"selection {name} has versions 1 to {len(rows)}, not {version}")
        return _selection(rows[version - 1])

    @serialized
    def selection_names(self) -> list[str]:
        """The names of the project's selections, sorted."""
        return [r[0] for r in self.db.conn.execute("SELECT DISTINCT name FROM selections ORDER BY name")]

    @serialized
    def selections(self) -> list[Selection]:
        """The latest version of every selection, by name."""
        return [_selection(r) for r in self.db.conn.execute(
            f"SELECT {_SELECTION_COLUMNS} FROM selections s WHERE id = (SELECT max(id) FROM selections o "
            "WHERE o.name = s.name) ORDER BY name")]

    @serialized
    def selection_members(self, selection_id: int) -> list[dict]:
        """The members of the selection ``selection_id`` in draw order: ``{position, qa_pair_id, ordinal,
        cluster_id, cluster_name, qa_type, question}`` (cluster and QA type as drawn, the name and question as
        the pair has them now)."""
        cols = ("position", "qa_pair_id", "ordinal", "cluster_id", "cluster_name", "qa_type", "question")
        return [dict(zip(cols, r, strict=True)) for r in self.db.conn.execute(
            """SELECT m.position, m.qa_pair_id, p.ordinal, m.cluster_id, p.cluster_name, m.qa_type, p.question
               FROM selection_members m JOIN qa_pairs p ON p.id = m.qa_pair_id WHERE m.selection_id = ?
               ORDER BY m.position""", [selection_id])]

    @serialized
    def selection_member_ids(self, selection_id: int) -> set[str]:
        """The pair ids of the selection ``selection_id``."""
        return {r[0] for r in self.db.conn.execute(
            "SELECT qa_pair_id FROM selection_members WHERE selection_id = ?", [selection_id])}
