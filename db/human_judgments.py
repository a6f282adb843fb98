"""Human judgments and answer assignments in the store (issue 20 item 5; ``answer_assignments`` is m026).

A human judgment is a ``judgments`` row (append-only) with judge ``human`` and the annotator's name as
``judge_model`` (the rules: :mod:`benchwright.core.human`); the latest row per (answer, annotator) counts. Answers
are handed out to score like pairs (:func:`benchwright.core.assignment.assign_pairs`): ``answer_assignments``
holds the current plan, replaced as a whole by each ``assign --answers``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from benchwright.core.assignment import assign_pairs, sample_pairs
from benchwright.core.errors import BenchwrightError
from benchwright.core.human import human_scores, new_human_judgment, same_human_judgment
from benchwright.core.judges import HUMAN_JUDGE, checklist_problem
from benchwright.core.judgment import Judgment, JudgmentError
from benchwright.core.models import utc_now

from .locking import serialized

ANSWER_ASSIGNMENT_SETTING = "answer_assignment"
"""The setting that keeps the current answer assignments' parameters (JSON: annotators, overlap, seed, model,
sample, answers)."""


@dataclass(frozen=True)
class AnswerAssignment:
    """One answer handed to one annotator to score (``answer_assignments``).

    Attributes:
        answer_id, annotator: the answer and who scores it.
        assigned_at, assigned_by: when (UTC ISO 8601) and by whom.
        seed: the seed of the plan (``assign --seed``).
    """

    answer_id: str
    annotator: str
    assigned_at: str
    assigned_by: str
    seed: int | None


class HumanJudgmentStoreMixin:
    """Human-judgment and answer-assignment methods of :class:`benchwright.db.Store` (needs ``self.db``,
    ``self.write``, ``self.get_answer``, ``self.checklist_version``, ``self.save_judgment``, ``self.judgments``,
    ``self.set_setting``)."""

    # ------------------------------------------------------------------------------------ human judgments
    @serialized
    def save_human_judgment(self, answer_id: str, annotator: str, entries: Mapping[str, Any] | Iterable[Any], *,
                            checklist_version: int | None = None, uid: str | None = None,
                            skip_unchanged: bool = False) -> Judgment:
        """Append ``annotator``'s scores of ``answer_id`` against its pair's checklist as a human judgment
        (judge ``human``, ``judge_model`` and ``created_by`` the annotator, run 0, scored, score rate total/10 as
        the checklist judge's). Nothing is written when anything is wrong.

        Args:
            entries: ``{item key: score}`` or entries with ``key``, ``score`` and an optional ``rationale``
                (see :func:`benchwright.core.human.human_scores`); every item of the checklist needs a score.
            checklist_version: the checklist version scored against (None: the pair's current one).
            uid: makes the save idempotent (see :meth:`save_judgment`).
            skip_unchanged: when the annotator's latest judgment of the answer has the same checklist version,
                scores and rationales (:func:`benchwright.core.human.same_human_judgment`), write nothing and
                return that judgment (``judgments human --file`` imported twice adds nothing).

        Raises:
            NotFoundError: no such answer, or no such checklist version.
            JudgmentError: the pair has no checklist, or a draft or invalid one; an unknown item, a missing
                score, a score outside its item's allowed set (the message names the item); an empty annotator.
        """
        with self.write():  # the checklist read and the row written in one transaction
            answer = self.get_answer(answer_id)
            version = self.checklist_version(answer.qa_pair_id, checklist_version)
            problem = checklist_problem(version)
            if problem is not None:
                which = ("its current checklist" if checklist_version is None
                         else f"checklist version {checklist_version}")
                raise JudgmentError(f"answer {answer_id}: cannot score against {which}: {problem.value}")
            scores, rationales = human_scores(entries)
            new = new_human_judgment(answer_id, annotator, version.checklist, version.version, scores, rationales)
            if skip_unchanged:
                latest = self.human_judgments(answer_id, new.judge_model)
                if latest and same_human_judgment(latest[-1], new):
                    return latest[-1]
            return self.save_judgment(new, created_by=new.judge_model, uid=uid)

    @serialized
    def human_judgments(self, answer_id: str | None = None, annotator: str | None = None) -> list[Judgment]:
        """The human judgments that count: the latest per answer and annotator (``None``: any), oldest first."""
        clauses, params = ["judge = ?"], [HUMAN_JUDGE]
        for column, value in (("answer_id", answer_id), ("judge_model", annotator)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = " AND ".join(clauses)
        ids = [r[0] for r in self.db.conn.execute(
            f"SELECT max(id) FROM judgments WHERE {where} GROUP BY answer_id, judge_model", params)]
        return sorted((self.get_judgment(i) for i in ids), key=lambda j: j.id)

    @serialized
    def human_scored(self, annotator: str, answer_id: str) -> bool:
        """True when ``annotator`` has submitted a human judgment of ``answer_id`` (blind mode lifts then)."""
        return self.db.conn.execute(
            "SELECT 1 FROM judgments WHERE judge = ? AND judge_model = ? AND answer_id = ? LIMIT 1",
            [HUMAN_JUDGE, annotator, answer_id]).fetchone() is not None

    # --------------------------------------------------------------------------------- answer assignments
    @serialized
    def assign_answers(self, annotators: list[str], overlap: int, *, seed: int = 0, by: str,
                       model: str | None = None, sample: int | None = None,
                       answer_ids: Iterable[str] | None = None) -> dict[str, int]:
        """Hand the answers out to score, replacing earlier answer assignments: each to ``overlap`` annotators,
        loads balanced, reproducible from ``seed`` (:func:`benchwright.core.assignment.assign_pairs`). Only
        answers whose pair has a checklist that can be scored against are handed out. An overlap above 1 turns
        blind mode on (as ``assign`` does for pairs).

        Args:
            model: only answers of this model (``answers.model``, exact).
            sample: only a sample of N of them, drawn by ``seed`` (stratified by model,
                :func:`benchwright.core.assignment.sample_pairs`).
            answer_ids: only these answers (others are ignored).

        Returns:
            ``{annotator: answers assigned}``.

        Raises:
            BenchwrightError: bad annotators or overlap (see ``assign_pairs``), a negative sample, or no answer
                to hand out (nothing is written then).
        """
        if sample is not None and sample < 0:
            raise BenchwrightError(f"--sample is a number of answers, 0 or more, not {sample}")
        rows = self.db.conn.execute(
            """SELECT a.id, a.model FROM answers a
               JOIN checklist_current c ON c.qa_pair_id = a.qa_pair_id
               JOIN qa_pairs p ON p.id = a.qa_pair_id
               WHERE c.is_draft = 0 AND c.is_valid = 1""" + (" AND a.model = ?" if model else "")
            + " ORDER BY p.ordinal, a.model, a.condition, a.sample_index, a.id",
            [model] if model else []).fetchall()
        if answer_ids is not None:
            wanted = set(answer_ids)
            rows = [r for r in rows if r[0] in wanted]
        ids = [r[0] for r in rows]
        if sample is not None:
            ids = sample_pairs(ids, [r[1] for r in rows], sample, seed)
        if not ids:
            raise BenchwrightError("no answer to hand out" + (f" of model {model!r}" if model else "")
                                   + ": answers need a pair with a valid, non-draft checklist; the answer "
                                   "assignments were left as they were")
        try:
            plan = assign_pairs(ids, annotators, overlap, seed)
        except ValueError as e:
            raise BenchwrightError(str(e)) from None
        now = utc_now()
        with self.write() as db:
            db.conn.execute("DELETE FROM answer_assignments")
            db.conn.executemany(
                "INSERT INTO answer_assignments (answer_id, annotator, assigned_at, assigned_by, seed) "
                "VALUES (?, ?, ?, ?, ?)", [(aid, a, now, by, seed) for aid, names in plan.items() for a in names])
            loads = dict.fromkeys((a.strip() for a in annotators), 0)
            for names in plan.values():
                for a in names:
                    loads[a] += 1
            if overlap > 1:  # as for pairs: nobody sees the judges' or another's scores of an answer before theirs
                self.set_setting("blind_mode", "on", by=by)
            self.set_setting(ANSWER_ASSIGNMENT_SETTING, json.dumps(
                {"annotators": list(loads), "overlap": overlap, "seed": seed, "model": model, "sample": sample,
                 "answers": len(plan)}, sort_keys=True), by=by)
        return loads

    @serialized
    def answer_assignments(self, annotator: str | None = None,
                           answer_id: str | None = None) -> list[AnswerAssignment]:
        """The current answer assignments (``None``: any), in queue order of the answers' pairs."""
        clauses, params = [], []
        for column, value in (("s.annotator", annotator), ("s.answer_id", answer_id)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        rows = self.db.conn.execute(
            "SELECT s.answer_id, s.annotator, s.assigned_at, s.assigned_by, s.seed FROM answer_assignments s "
            "JOIN answers a ON a.id = s.answer_id JOIN qa_pairs p ON p.id = a.qa_pair_id"
            + (" WHERE " + " AND ".join(clauses) if clauses else "")
            + " ORDER BY p.ordinal, a.model, a.condition, a.sample_index, s.answer_id, s.annotator", params)
        return [AnswerAssignment(*r) for r in rows]

    @serialized
    def assigned_answers(self, annotator: str) -> list[tuple[str, bool]]:
        """``[(answer id, scored)]``: the answers assigned to ``annotator`` to score, in queue order, and whether
        they have submitted a human judgment of each."""
        return [(s.answer_id, self.human_scored(annotator, s.answer_id)) for s in self.answer_assignments(annotator)]


def merge_human_judgments(conn, theirs, version_map: dict[tuple[str, int], int], report) -> None:
    """``benchwright merge``: bring another copy's human judgments (judge ``human``, append-only, matched by uid)
    into this project, for answers this project has (answer ids are content hashes, the same in every copy);
    ``checklist_version`` numbered as merged (``version_map``: their (pair, version) -> version here). A judgment
    of an answer not here counts as ``unknown_pairs`` (its pair's answer is missing). Inside the merge's write."""
    known = {r[0] for r in conn.execute("SELECT uid FROM judgments WHERE judge = ?", [HUMAN_JUDGE])}
    pair_of = dict(conn.execute("SELECT id, qa_pair_id FROM answers"))
    columns = ("answer_id", "judge", "judge_model", "run_index", "status", "checklist_version", "scores_json",
               "score_rate", "scale_max", "seed", "critique", "reason", "raw_text", "call_ids_json", "created_at",
               "created_by", "uid")
    for r in theirs.execute("SELECT * FROM judgments WHERE judge = ? ORDER BY id", [HUMAN_JUDGE]):
        if r["uid"] in known:
            report.skipped_present["judgments"] = report.skipped_present.get("judgments", 0) + 1
            continue
        pid = pair_of.get(r["answer_id"])
        if pid is None:
            report.unknown_pairs += 1
            continue
        values = {c: r[c] for c in columns}
        v = values["checklist_version"]
        values["checklist_version"] = version_map.get((pid, v), v) if v is not None else None
        values["call_ids_json"] = "[]"  # ledger rows are not merged
        conn.execute(f"INSERT INTO judgments ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
                     [values[c] for c in columns])
        report.added["judgments"] = report.added.get("judgments", 0) + 1


__all__ = ["ANSWER_ASSIGNMENT_SETTING", "AnswerAssignment", "HumanJudgmentStoreMixin", "merge_human_judgments"]
