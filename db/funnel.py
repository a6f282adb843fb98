"""What the curation funnel counts, read from the store: each pair's current curation results, final decision
and reject reason, the records the imports filtered out, and which pairs gating steps dropped. The rules are in
:mod:`benchwright.core.funnel`; nothing here decides, and nothing is written."""

from __future__ import annotations

import json

from benchwright.core.funnel import FilteredImport, PairFacts, StepFact
from benchwright.core.steps import gating_steps

from .locking import serialized


class FunnelStoreMixin:
    """Funnel reads of :class:`benchwright.db.Store`."""

    @serialized
    def dropped_pairs(self, steps: tuple[str, ...] | list[str] | None = None) -> dict[str, str]:
        """``{pair id: gating step}`` of the pairs a gating step dropped (its current result ok and flagged:
        :func:`benchwright.core.funnel.dropped_by`), the first such step in pipeline order; only the steps in
        ``steps`` (gating steps) are looked at when given."""
        from benchwright.core.funnel import dropped_by

        names = list(gating_steps() if steps is None else steps)
        if not names:
            return {}
        results: dict[str, dict[str, tuple[str, bool]]] = {}
        for pid, step in self.db.conn.execute(
                f"SELECT qa_pair_id, step FROM curation_current WHERE status = 'ok' AND flagged = 1 "
                f"AND step IN ({', '.join('?' * len(names))})", names):
            results.setdefault(pid, {})[step] = ("ok", True)
        out = {}
        for pid, r in results.items():
            step = dropped_by(r, names)
            if step is not None:
                out[pid] = step
        return out

    @serialized
    def funnel_facts(self, released: set[str] | None = None) -> tuple[list[PairFacts], list[FilteredImport],
                                                                        list[tuple[str | None, str]]]:
        """``(pairs, filtered records, imported ids)`` for :func:`benchwright.core.funnel.funnel`.

        ``pairs``: one :class:`~benchwright.core.funnel.PairFacts` per pair in queue order, with its current
        curation results (the output only of a flagged ok result of a gating step), its final decision
        (:meth:`final_decision`, asked only of pairs with a review or an adjudication) and, when rejected, the
        latest reason its current reject reviews recorded (``review_decisions.reason``); ``released`` is
        membership in ``released`` (None: unknown). ``filtered``: every record of ``import_batches.filtered_json``
        (batch order) with the batch's repository; a record without an id is named by its url, else its place.
        ``imported ids``: ``(repository, source_upstream_id)`` of the pairs that have one.
        """
        conn = self.db.conn
        gating = set(gating_steps())
        steps: dict[str, dict[str, StepFact]] = {}
        for pid, step, status, flagged, output in conn.execute(
                """SELECT c.qa_pair_id, c.step, c.status, c.flagged,
                          CASE WHEN c.status = 'ok' AND c.flagged = 1 THEN r.output_json END
                   FROM curation_current c LEFT JOIN curation_results r ON r.id = c.result_id"""):
            out = json.loads(output) if output and step in gating else None
            steps.setdefault(pid, {})[step] = StepFact(status, bool(flagged), out if isinstance(out, dict) else None)
        reviewed = {r[0] for r in conn.execute(
            """SELECT qa_pair_id FROM review_state WHERE decision IN ('accept', 'reject', 'revise')
               UNION SELECT qa_pair_id FROM adjudications""")}
        pairs = []
        imported: list[tuple[str | None, str]] = []
        rows = conn.execute("SELECT id, repository, source_upstream_id FROM qa_pairs ORDER BY ordinal").fetchall()
        for pid, repo, upstream in rows:
            decision = reason = None
            if pid in reviewed:
                decision = self.final_decision(pid).decision
                if decision == "reject":
                    r = conn.execute(
                        """SELECT d.reason FROM review_state s JOIN review_decisions d ON d.id = s.decision_id
                           WHERE s.qa_pair_id = ? AND d.decision = 'reject' AND d.reason IS NOT NULL
                           AND trim(d.reason) <> '' ORDER BY d.id DESC LIMIT 1""", [pid]).fetchone()
                    reason = r[0] if r else None
            pairs.append(PairFacts(pid, repo, steps.get(pid, {}), decision, reason,
                                   None if released is None else pid in released))
            if upstream:
                imported.append((repo, str(upstream)))
        filtered = []
        for batch, repo, text in conn.execute(
                "SELECT id, repository, filtered_json FROM import_batches WHERE filtered_count > 0 "
                "AND format != 'github-issues' ORDER BY id"):  # issue texts are no pairs (db/issues.py)
            try:
                records = json.loads(text or "[]")
            except ValueError:
                continue
            for i, rec in enumerate(records if isinstance(records, list) else []):
                if not isinstance(rec, dict):
                    continue
                rid = next((rec[k] for k in ("upstream_id", "id", "url") if rec.get(k) not in (None, "")), None)
                filtered.append(FilteredImport(repo, str(rid) if rid not in (None, "") else f"batch {batch} #{i + 1}",
                                               str(rec.get("reason") or "filtered")))
        return pairs, filtered, imported

    @serialized
    def latest_release_record(self) -> dict | None:
        """The latest release made from this project (any name): ``{name, version, path, n_pairs}``, or None."""
        r = self.db.conn.execute(
            "SELECT name, version, path, n_pairs FROM releases ORDER BY id DESC LIMIT 1").fetchone()
        return None if r is None else {"name": r[0], "version": r[1], "path": r[2], "n_pairs": r[3]}

    @serialized
    def merged_context_pairs(self) -> set[str]:
        """Pairs whose current ``enrich`` result is ok and integrated external context into the text
        (``output.integrated`` true; RepoProbe Table 2's "merged external context")."""
        return {r[0] for r in self.db.conn.execute(
            """SELECT c.qa_pair_id FROM curation_current c JOIN curation_results r ON r.id = c.result_id
               WHERE c.step = 'enrich' AND c.status = 'ok' AND json_extract(r.output_json, '$.integrated') = 1""")}
