"""Several annotators in the store: reviews, assignments, blind mode, adjudication, the audit trail."""

from __future__ import annotations

import json
from dataclasses import dataclass

from benchwright.core.adjudication import (
    DECISIONS,
    Adjudication,
    ChecklistEdit,
    Disagreement,
    Exclusion,
    disagreement,
    may_adjudicate,
)
from benchwright.core.assignment import NO_STRATUM, STRATIFY_BY, assign_pairs, sample_pairs, sample_size
from benchwright.core.blind import Sight, Visible, visible
from benchwright.core.checklist import Checklist, Origin
from benchwright.core.errors import BenchwrightError
from benchwright.core.models import utc_now
from benchwright.core.qa_report import QAItem
from benchwright.core.review import CRITERIA, Criteria, Review

from .locking import serialized
from .texts import REOPENED_SQL

SUBMITTED = DECISIONS
"""Decisions that submit a review (``skip`` does not)."""

ASSIGNMENT_SETTING = "assignment"
"""The setting that keeps the current assignments' parameters (JSON; :meth:`ReviewStoreMixin.assignment_parameters`)."""

__all__ = ["ASSIGNMENT_SETTING", "SUBMITTED", "Adjudication", "AgreementInputsMixin", "Disagreement", "QASample",
           "ReviewStoreMixin"]


@dataclass(frozen=True)
class QASample:
    """A QA sample drawn by :meth:`ReviewStoreMixin.assign_sample`.

    Attributes:
        pool: pairs it was drawn from; pair_ids: the sampled pairs, in queue order;
        strata: ``{stratum: (pairs in the pool, pairs sampled)}`` (``""``: no value; one stratum unstratified);
        loads: pairs per annotator.
    """

    pool: int
    pair_ids: list[str]
    strata: dict[str, tuple[int, int]]
    loads: dict[str, int]


class ReviewStoreMixin:
    """Review, assignment and adjudication methods of :class:`benchwright.db.Store`."""

    # ------------------------------------------------------------------ settings
    @serialized
    def setting(self, key: str, default: str | None = None) -> str | None:
        """A project setting (``blind_mode``: ``on`` / ``off``), or ``default``."""
        row = self.db.conn.execute("SELECT value FROM settings WHERE key = ?", [key]).fetchone()
        return row[0] if row else default

    def set_setting(self, key: str, value: str, *, by: str) -> None:
        """Set a project setting (who and when are kept)."""
        with self.write() as db:
            db.conn.execute(
                """INSERT INTO settings (key, value, updated_at, updated_by) VALUES (?, ?, ?, ?)
                   ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
                   updated_by = excluded.updated_by""",
                (key, value, utc_now(), by),
            )

    @property
    def blind_mode(self) -> bool:
        """True when annotators may not see each other's work on a pair before submitting their own."""
        return self.setting("blind_mode", "off") == "on"

    # ------------------------------------------------------------------- reviews
    @serialized
    def reviews_of(self, pair_id: str) -> dict[str, Review]:
        """Each annotator's current submitted review of ``pair_id`` (accept, reject or revise)."""
        rows = self.db.conn.execute(
            """SELECT d.annotator, d.decision, d.criteria_json, d.notes, d.created_at, d.reason
               FROM review_state s JOIN review_decisions d ON d.id = s.decision_id
               WHERE s.qa_pair_id = ? AND s.decision IN ('accept', 'reject', 'revise') ORDER BY d.annotator""",
            [pair_id],
        ).fetchall()
        return {r[0]: Review(pair_id, r[0], r[1], Criteria.from_json(r[2]), r[3], r[4], r[5]) for r in rows}

    @serialized
    def current_criteria(self, pair_id: str, annotator: str) -> Criteria:
        """``annotator``'s criteria on ``pair_id``: a draft marked since their latest decision, else as last
        recorded with a decision (unjudged when none)."""
        row = self.db.conn.execute(
            """SELECT d.criteria_json, s.updated_at FROM review_state s JOIN review_decisions d ON d.id = s.decision_id
               WHERE s.qa_pair_id = ? AND s.annotator = ?""",
            [pair_id, annotator],
        ).fetchone()
        draft = self.db.conn.execute(
            "SELECT criteria_json, updated_at FROM review_drafts WHERE qa_pair_id = ? AND annotator = ?",
            [pair_id, annotator],
        ).fetchone()
        if draft and (row is None or draft[1] > row[1]):
            return Criteria.from_json(draft[0])
        return Criteria.from_json(row[0] if row else None)

    def save_criteria_draft(self, pair_id: str, annotator: str, criteria: Criteria) -> None:
        """Keep criteria marked before the decision (committed at once; replaced by the next draft)."""
        with self.write() as db:
            db.conn.execute(
                """INSERT INTO review_drafts (qa_pair_id, annotator, criteria_json, updated_at) VALUES (?, ?, ?, ?)
                   ON CONFLICT (qa_pair_id, annotator) DO UPDATE SET criteria_json = excluded.criteria_json,
                   updated_at = excluded.updated_at""",
                (pair_id, annotator, criteria.to_json(), utc_now()),
            )

    @serialized
    def has_submitted(self, pair_id: str, annotator: str) -> bool:
        """True when ``annotator``'s current decision on ``pair_id`` is accept, reject or revise."""
        row = self.db.conn.execute(
            "SELECT decision FROM review_state WHERE qa_pair_id = ? AND annotator = ?", [pair_id, annotator]
        ).fetchone()
        return bool(row and row[0] in SUBMITTED)

    @serialized
    def sight(self, pair_id: str, viewer: str) -> Sight:
        """The facts of the blind-mode rule (:class:`benchwright.core.blind.Sight`) for ``viewer`` on ``pair_id``."""
        blind = self.blind_mode
        submitted = self.has_submitted(pair_id, viewer)
        if not blind or submitted:
            return Sight(viewer, blind, submitted)
        worked_on = self.db.conn.execute(
            """SELECT 1 FROM review_decisions WHERE qa_pair_id = ? AND annotator = ?
               UNION ALL SELECT 1 FROM checklist_versions WHERE qa_pair_id = ? AND author = ? LIMIT 1""",
            [pair_id, viewer, pair_id, viewer],
        ).fetchone() is not None
        annotators = None
        if self.db.conn.execute("SELECT 1 FROM assignments LIMIT 1").fetchone() is not None:
            # only the pair's checklist authors are asked about (one index lookup each, not a scan of assignments)
            annotators = frozenset(r[0] for r in self.db.conn.execute(
                """SELECT DISTINCT author FROM checklist_versions v WHERE qa_pair_id = ?
                   AND EXISTS (SELECT 1 FROM assignments a WHERE a.annotator = v.author)""", [pair_id]))
        return Sight(viewer, blind, submitted, frozenset(self.assignees(pair_id)), worked_on, annotators)

    def may_see_others(self, pair_id: str, annotator: str) -> bool:
        """True when ``annotator`` may see everyone's work on ``pair_id`` (the rule of
        :attr:`benchwright.core.blind.Sight.sees_others`)."""
        return self.sight(pair_id, annotator).sees_others

    @serialized
    def visible_checklist_versions(self, pair_id: str, annotator: str) -> Visible:
        """Version numbers of the pair's checklist that ``annotator`` may see, oldest first (``hidden``: how many
        blind mode holds back; :meth:`benchwright.core.blind.Sight.may_see_checklist`)."""
        sight = self.sight(pair_id, annotator)
        rows = self.db.conn.execute(
            "SELECT version, author, origin FROM checklist_versions WHERE qa_pair_id = ? ORDER BY version", [pair_id])
        return _numbers(visible(rows, lambda r: sight.may_see_checklist(r[1], r[2])))

    def visible_checklist_version(self, pair_id: str, annotator: str) -> int | None:
        """The checklist version ``annotator`` sees: the current one, or in blind mode before their review
        the latest version that is not another annotator's own work."""
        versions = self.visible_checklist_versions(pair_id, annotator)
        return versions[-1] if versions else None

    def others_reviews(self, pair_id: str, viewer: str) -> Visible:
        """The current submitted reviews of ``pair_id`` by annotators other than ``viewer`` that ``viewer`` may
        see (:class:`benchwright.core.review.Review`, by annotator name; ``hidden``: how many blind mode holds
        back)."""
        sight = self.sight(pair_id, viewer)
        others = [r for a, r in self.reviews_of(pair_id).items() if a != viewer]
        return visible(others, lambda r: sight.may_see_review(r.annotator))

    # --------------------------------------------------------------- assignment
    def assign(self, annotators: list[str], overlap: int, *, seed: int = 0, by: str) -> dict[str, int]:
        """Give every pair to ``overlap`` annotators (balanced, reproducible; see
        :func:`benchwright.core.assignment.assign_pairs`), replacing earlier assignments. Turns blind mode on
        when ``overlap > 1``. Returns pairs per annotator.

        Raises:
            BenchwrightError: bad annotators or overlap.
        """
        with self.write() as db:
            # Read the pairs inside the write transaction: a pair imported meanwhile is not left unassigned.
            pair_ids = [r[0] for r in db.conn.execute("SELECT id FROM qa_pairs ORDER BY ordinal")]
            return self._assign(db, pair_ids, annotators, overlap, seed, by, None)

    def assign_sample(
        self, annotators: list[str], overlap: int, *, seed: int, by: str, size: int | None = None,
        fraction: float | None = None, stratify_by: str | None = None, where=None, where_text: tuple[str, ...] = (),
    ) -> QASample:
        """Draw a QA sample (RepoProbe §3.2 "Quality Assurance") and give each of its pairs to ``overlap``
        annotators, replacing earlier assignments: the sample is the set of assigned pairs.

        The pool is the pairs ``where`` (a :class:`benchwright.db.QueueFilter`, judged for ``by``; None: every
        pair) lets through; :func:`benchwright.core.assignment.sample_size` says how many (``size`` or
        ``fraction``), :func:`benchwright.core.assignment.sample_pairs` which (stratified by ``stratify_by``,
        one of ``STRATIFY_BY``, or not). The parameters are kept in the ``assignment`` setting (JSON).

        Raises:
            BenchwrightError: bad annotators, overlap, size, fraction or stratifying field, or a sample that holds
                no pair (nothing is written: the earlier assignments stay).
        """
        if stratify_by is not None and stratify_by not in STRATIFY_BY:
            raise BenchwrightError(f"cannot stratify by {stratify_by!r}; use one of {', '.join(STRATIFY_BY)}")
        with self.write() as db:
            clause, params = where.sql(by) if where is not None else ("1", [])
            rows = db.conn.execute(
                f"""SELECT p.id, {"p." + stratify_by if stratify_by else "NULL"} FROM qa_pairs p
                    LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
                    WHERE {clause} ORDER BY p.ordinal""", [by, *params]).fetchall()
            pool = [r[0] for r in rows]
            try:
                n = sample_size(len(pool), size=size, fraction=fraction)
                chosen = sample_pairs(pool, [r[1] for r in rows] if stratify_by else None, n, seed)
            except ValueError as e:
                raise BenchwrightError(str(e)) from None
            if not chosen:  # an empty sample would replace the assignments with none
                raise BenchwrightError(
                    f"the QA sample would hold no pair ({len(pool)} pairs match"
                    + (f" --where {' '.join(where_text)}" if where_text else "")
                    + "); the assignments were left as they were")
            strata = {r[0]: r[1] or NO_STRATUM for r in rows} if stratify_by else dict.fromkeys(pool, NO_STRATUM)
            per_stratum: dict[str, list[int]] = {}
            for pid in pool:
                per_stratum.setdefault(strata[pid], [0, 0])[0] += 1
            for pid in chosen:
                per_stratum[strata[pid]][1] += 1
            parameters = {"size": size, "fraction": fraction, "stratify_by": stratify_by, "where": list(where_text),
                          "pool": len(pool), "sampled": len(chosen)}
            loads = self._assign(db, chosen, annotators, overlap, seed, by, parameters)
        return QASample(len(pool), chosen, {k: (v[0], v[1]) for k, v in sorted(per_stratum.items())}, loads)

    def _assign(self, db, pair_ids: list[str], annotators: list[str], overlap: int, seed: int, by: str,
                sample: dict | None) -> dict[str, int]:
        """Replace the assignments by ``pair_ids`` given out by :func:`assign_pairs` (inside ``db``'s write);
        pairs per annotator."""
        try:
            plan = assign_pairs(pair_ids, annotators, overlap, seed)
        except ValueError as e:
            raise BenchwrightError(str(e)) from None
        now = utc_now()
        db.conn.execute("DELETE FROM assignments")
        db.conn.executemany(
            "INSERT INTO assignments (qa_pair_id, annotator, assigned_at, assigned_by, seed) VALUES (?, ?, ?, ?, ?)",
            [(pid, a, now, by, seed) for pid, names in plan.items() for a in names],
        )
        if overlap > 1:
            self.set_setting("blind_mode", "on", by=by)
        loads: dict[str, int] = dict.fromkeys(a.strip() for a in annotators)
        for names in plan.values():
            for a in names:
                loads[a] = (loads[a] or 0) + 1
        loads = {a: n or 0 for a, n in loads.items()}
        self.set_setting(ASSIGNMENT_SETTING, json.dumps(
            {"annotators": list(loads), "overlap": overlap, "seed": seed, "pairs": len(plan), "sample": sample},
            sort_keys=True), by=by)
        return loads

    def assignment_parameters(self) -> dict | None:
        """The parameters of the current assignments (the ``assignment`` setting: annotators, overlap, seed,
        pairs, and ``sample``: None when every pair was assigned, else size, fraction, stratify_by, where,
        pool, sampled), or None when none was recorded."""
        text = self.setting(ASSIGNMENT_SETTING)
        return json.loads(text) if text else None

    @serialized
    def qa_items(self) -> list[QAItem]:
        """The inputs of :func:`benchwright.core.qa_report.qa_report`: every pair assigned to someone, with a
        submitted review or with an adjudication (a lead may decide a pair nobody reviewed; the funnel and the
        release count it), in queue order, with its final decision (``Store.final_decision``) and reviews (a
        review made before the pair was sent back to review is in ``stale``, not in ``reviews``)."""
        rows = self.db.conn.execute(
            """SELECT p.id, p.repository, p.category FROM qa_pairs p
               WHERE EXISTS (SELECT 1 FROM assignments a WHERE a.qa_pair_id = p.id)
                  OR EXISTS (SELECT 1 FROM review_state s WHERE s.qa_pair_id = p.id
                             AND s.decision IN ('accept', 'reject', 'revise'))
                  OR EXISTS (SELECT 1 FROM adjudications j WHERE j.qa_pair_id = p.id)
               ORDER BY p.ordinal""").fetchall()
        out = []
        for pid, repository, category in rows:
            final = self.final_decision(pid)
            reopened_at, why = self.reopening(pid)
            reviews = self.reviews_of(pid)
            stale = {a: Exclusion.reopened(why).value for a, r in reviews.items()
                     if reopened_at and r.created_at < reopened_at}
            out.append(QAItem(pid, repository, category, tuple(self.assignees(pid)), final.decision,
                              final.why_not.value if final.decision is None and final.why_not else None,
                              {a: r for a, r in reviews.items() if a not in stale}, stale))
        return out

    @serialized
    def assigned_count(self, annotator: str) -> int:
        """Number of pairs assigned to ``annotator``."""
        return self.db.conn.execute("SELECT count(*) FROM assignments WHERE annotator = ?", [annotator]).fetchone()[0]

    @serialized
    def assignees(self, pair_id: str) -> list[str]:
        """Annotators ``pair_id`` is assigned to."""
        return [r[0] for r in self.db.conn.execute(
            "SELECT annotator FROM assignments WHERE qa_pair_id = ? ORDER BY annotator", [pair_id])]

    # ------------------------------------------------------------- adjudication
    @serialized
    def annotator_checklists(self, pair_id: str) -> dict[str, int]:
        """``{author: latest version}`` of the annotators' own checklist edits (origin ``edited``)."""
        rows = self.db.conn.execute(
            """SELECT author, max(version) FROM checklist_versions
               WHERE qa_pair_id = ? AND origin = 'edited' GROUP BY author ORDER BY author""",
            [pair_id],
        ).fetchall()
        return {r[0]: r[1] for r in rows}

    @serialized
    def adjudication_of(self, pair_id: str) -> Adjudication | None:
        """The latest adjudication of ``pair_id``, or None."""
        r = self.db.conn.execute(
            """SELECT qa_pair_id, adjudicator, decision, reason, checklist_version, created_at FROM adjudications
               WHERE qa_pair_id = ? ORDER BY created_at DESC, id DESC LIMIT 1""",
            [pair_id],
        ).fetchone()
        return Adjudication(*r) if r else None

    @serialized
    def disagreement_of(self, pair_id: str) -> Disagreement | None:
        """What the annotators of ``pair_id`` disagree on, or None (the rule of
        :func:`benchwright.core.adjudication.disagreement`, fed from the store). Reviews made before the pair was
        last sent back to review (``qa_pairs.reopened_at``) judged another text or other evidence: they disagree
        with nothing (the final decision waits for them to be made again)."""
        reopened_at, _ = self.reopening(pair_id)
        reviews = {who: r for who, r in self.reviews_of(pair_id).items()
                   if not reopened_at or r.created_at >= reopened_at}
        edits = {who: self._checklist_edit(pair_id, v) for who, v in self.annotator_checklists(pair_id).items()}
        adj = self.adjudication_of(pair_id)
        current = settled = None
        if adj is not None and adj.checklist_version is not None:
            current = self._checklist_edit(pair_id, None)
            settled = self._checklist_edit(pair_id, adj.checklist_version)
        return disagreement(pair_id, reviews, edits, adjudication=adj, current=current, settled=settled)

    def _checklist_edit(self, pair_id: str, version: int | None) -> ChecklistEdit:
        v = self.checklist_version(pair_id, version)
        return ChecklistEdit(v.author, v.version, v.checklist.to_json(), v.created_at)

    @serialized
    def disagreements(self, *, viewer: str | None = None) -> list[Disagreement]:
        """Every pair awaiting adjudication, in queue order; with ``viewer``, only those ``viewer`` may
        adjudicate: not among the annotators who disagree, and allowed by blind mode to see the pair's work."""
        candidates = [r[0] for r in self.db.conn.execute(
            """SELECT p.id FROM qa_pairs p WHERE
                 (SELECT count(*) FROM review_state s WHERE s.qa_pair_id = p.id
                  AND s.decision IN ('accept', 'reject', 'revise')) >= 2
                 OR (SELECT count(DISTINCT author) FROM checklist_versions v
                     WHERE v.qa_pair_id = p.id AND v.origin = 'edited') >= 2
               ORDER BY p.ordinal""")]
        out = []
        for pid in candidates:
            d = self.disagreement_of(pid)
            if d and (viewer is None or (may_adjudicate(viewer, d) and self.may_see_others(pid, viewer))):
                out.append(d)
        return out

    def adjudicate(
        self, pair_id: str, adjudicator: str, decision: str, reason: str, *, checklist: Checklist | None = None
    ) -> Adjudication:
        """Record the final decision on ``pair_id`` with its reason; a given checklist becomes a new version
        with origin ``adjudicated``. One transaction.

        Raises:
            BenchwrightError: empty reason, unknown decision, or (InvalidChecklistError) an invalid checklist.
        """
        if decision not in SUBMITTED:
            raise BenchwrightError(f"decision must be accept, reject or revise, not {decision!r}")
        if not reason.strip():
            raise BenchwrightError("an adjudication needs a reason")
        if not may_adjudicate(adjudicator, self.disagreement_of(pair_id)):
            raise BenchwrightError(f"{adjudicator} is one of the annotators who disagree on this pair; "
                                   "someone else must adjudicate it")
        with self.write() as db:
            self.ordinal_of(pair_id)
            version = None
            if checklist is not None:
                version = self.save_checklist(pair_id, checklist, author=adjudicator, origin=Origin.ADJUDICATED).version
            db.conn.execute(
                """INSERT INTO adjudications (qa_pair_id, adjudicator, decision, reason, checklist_version, created_at)
                   VALUES (?, ?, ?, ?, ?, ?)""",
                (pair_id, adjudicator, decision, reason.strip(), version, utc_now()),
            )
        return self.adjudication_of(pair_id)

    @serialized
    def accept_unanimous(self, adjudicator: str) -> list[str]:
        """Adjudicate in bulk every pair with at least two reviews that agree on the decision and all
        criteria, with no checklist conflict and no adjudication yet. Returns their ids."""
        done = []
        with self.write() as db:
            # Chosen inside the write transaction, so a pair another process adjudicates meanwhile is not
            # adjudicated twice.
            pairs = [r[0] for r in db.conn.execute(
                """SELECT p.id FROM qa_pairs p WHERE (SELECT count(*) FROM review_state s WHERE s.qa_pair_id = p.id
                   AND s.decision IN ('accept', 'reject', 'revise')) >= 2
                   AND NOT EXISTS (SELECT 1 FROM adjudications a WHERE a.qa_pair_id = p.id) ORDER BY p.ordinal""")]
            for pid in pairs:
                if self.disagreement_of(pid) is None:
                    decision = next(iter(self.reviews_of(pid).values())).decision
                    self.adjudicate(pid, adjudicator, decision, "unanimous reviews (bulk)")
                    done.append(pid)
        return done

    @serialized
    def annotator_progress(self) -> list[tuple[str, int, int]]:
        """``[(annotator, assigned pairs, submitted reviews)]`` sorted by name; a review made before its pair was
        sent back to review (``qa_pairs.reopened_at``) is not counted, as :meth:`Store.progress` does not."""
        rows = self.db.conn.execute(
            f"""SELECT who, sum(assigned), sum(done) FROM (
                   SELECT annotator AS who, 1 AS assigned, 0 AS done FROM assignments
                   UNION ALL
                   SELECT s.annotator, 0, 1 FROM review_state s JOIN qa_pairs p ON p.id = s.qa_pair_id
                   WHERE s.decision IN ('accept', 'reject', 'revise') AND NOT coalesce({REOPENED_SQL}, 0))
               GROUP BY who ORDER BY who"""
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    # -------------------------------------------------------------- audit trail
    @serialized
    def events_of(self, pair_id: str, *, viewer: str | None = None) -> Visible:
        """The pair's audit trail, oldest first: ``{id, actor, kind, before, after, created_at}``; with
        ``viewer``, only the events blind mode lets them see (``hidden``: how many it holds back;
        :meth:`benchwright.core.blind.Sight.may_see_event`)."""
        import json

        events = [
            {"id": r[0], "actor": r[1], "kind": r[2], "before": json.loads(r[3]) if r[3] else None,
             "after": json.loads(r[4]) if r[4] else None, "created_at": r[5]}
            for r in self.db.conn.execute(
                "SELECT id, actor, kind, before_json, after_json, created_at FROM events "
                "WHERE qa_pair_id = ? ORDER BY created_at, id", [pair_id])
        ]
        if viewer is None:
            return Visible(events)
        return visible(events, self.sight(pair_id, viewer).may_see_event)


class AgreementInputsMixin:
    """Builds the inputs of :mod:`benchwright.core.agreement` from the store."""

    @serialized
    def review_ratings(self) -> dict[str, list]:
        """``{field: [Rating]}`` for ``decision`` and the four criteria, from every annotator's current
        submitted review (unjudged criteria are missing values)."""
        from benchwright.core.agreement import Rating

        out: dict[str, list] = {"decision": [], **{c: [] for c in CRITERIA}}
        rows = self.db.conn.execute(
            """SELECT s.qa_pair_id, s.annotator, d.decision, d.criteria_json
               FROM review_state s JOIN review_decisions d ON d.id = s.decision_id
               WHERE s.decision IN ('accept', 'reject', 'revise') ORDER BY s.qa_pair_id, s.annotator"""
        ).fetchall()
        for pair_id, who, decision, criteria_json in rows:
            out["decision"].append(Rating(pair_id, who, decision))
            verdicts = Criteria.from_json(criteria_json).verdicts
            for c in CRITERIA:
                v = verdicts.get(c)
                out[c].append(Rating(pair_id, who, v.value if v else None))
        return out

    @serialized
    def checklist_edits(self) -> dict[str, dict[str, list[tuple[str, float]]]]:
        """``{pair: {author: [(key point, weight)]}}`` of knowledge items in each annotator's latest
        edited checklist, for pairs edited by two or more annotators."""
        out: dict[str, dict[str, list[tuple[str, float]]]] = {}
        pairs = [r[0] for r in self.db.conn.execute(
            """SELECT qa_pair_id FROM checklist_versions WHERE origin = 'edited'
               GROUP BY qa_pair_id HAVING count(DISTINCT author) >= 2""")]
        for pid in pairs:
            out[pid] = {
                who: [(it.key_point, it.weight) for it in self.checklist_version(pid, v).checklist.knowledge_items]
                for who, v in self.annotator_checklists(pid).items()
            }
        return out


def _numbers(rows: Visible) -> Visible:
    return Visible((r[0] for r in rows), rows.hidden)
