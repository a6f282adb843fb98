"""Answers, judgments, score overrides and failure-mode labels in the store (tables of migration m009).

Answers are keyed by a content hash (:func:`benchwright.core.judgment.answer_id`) and unique per
(pair, model, condition, sample index); imported answers are sample 0. Runs of a model on a sample (agent runs in a
repository, finished or failed) are ``answer_runs`` rows (append-only, m018). Judgments, overrides and failure-mode labels are append-only: a new row, never an
update; "current" is the latest row (highest id). The domain model and the scores contract live in
``benchwright.core.judgment``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchwright.core.errors import (
    BenchwrightError,
    InputFileError,
    InputProblem,
    NotFoundError,
    Remedy,
    with_remedy,
)
from benchwright.core.importers.answers import AnswerParseResult, AnswerRecord
from benchwright.core.judgment import (
    CONDITIONS,
    FAILURE_MODE_ORIGINS,
    FAILURE_MODES,
    Answer,
    FailureModeLabel,
    Judgment,
    JudgmentError,
    NewJudgment,
    ScoreEntry,
    ScoreOverride,
    check_choice,
    check_override,
    entries_from_json,
    entries_to_json,
)
from benchwright.core.judgment import answer_id as make_answer_id
from benchwright.core.models import ANSWER_RUN_STATUSES, AnswerRun, utc_now

from .locking import serialized


class AnswerConflictError(BenchwrightError):
    """The file gives a pair a different answer than the project (or an earlier line) has for the same model
    and condition, or gives an answer different imported scores (other scores, scale or critique) than the
    project has from the same judge model; ``conflicts`` lists them (``line N: ...``). Nothing was imported."""

    def __init__(self, file: str, conflicts: list[str]):
        self.conflicts = conflicts
        shown = "\n".join(f"  {c}" for c in conflicts[:20])
        more = f"\n  ... and {len(conflicts) - 20} more" if len(conflicts) > 20 else ""
        scores = any("imported scores" in c for c in conflicts)
        answers = any("imported scores" not in c for c in conflicts)
        what = " and ".join(w for w, on in (("answers", answers), ("imported scores", scores)) if on)
        super().__init__(
            f"{file}: {len(conflicts)} record{' conflicts' if len(conflicts) == 1 else 's conflict'} with {what} the project already has for the same pair, "
            f"model and condition; nothing was imported:\n{shown}{more}"
        )
        self.remedy = Remedy.IMPORT_SCORES_UNDER_OTHER_NAMES if scores else Remedy.IMPORT_UNDER_OTHER_NAMES


@dataclass
class AnswerImportReport:
    """What an answer import did, for the CLI and the app to print.

    Attributes:
        read: records read (valid or not).
        added: new answers written.
        already_present: matched answers the project already had (same pair, model, condition and text).
        duplicates_in_file: records repeating an earlier record of the file (written once).
        matched_by: how many records matched a pair, by what: ``qa_pair_id``, ``origin_question``, ``question``.
        unmatched: ``line N: 'question...' (why)`` for every record no pair matched (not imported).
        ambiguous: the same for records whose question several pairs have (not imported).
        conflicts: records left out under ``--skip-invalid`` because their pair already has a different answer
            (the record is not imported), or their answer already has different imported scores from the same
            judge model (the answer is kept, the scores are not imported).
        warnings: ``line N: ...`` notes on records that were imported but deserve a look: a pair id naming
            another pair than the record's question, an id that names no pair (matched by question instead),
            two answer fields with different texts.
        skipped: invalid records left out under ``--skip-invalid``.
        judgments_added / judgments_present: imported-score judgments written / already in the project.
        answer_ids: ids of the matched answers, in file order.
    """

    file: str
    format: str
    model: str
    condition: str
    read: int = 0
    added: int = 0
    already_present: int = 0
    duplicates_in_file: int = 0
    matched_by: dict[str, int] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[InputProblem] = field(default_factory=list)
    judgments_added: int = 0
    judgments_present: int = 0
    answer_ids: list[str] = field(default_factory=list)

    @property
    def matched(self) -> int:
        """Records that matched exactly one pair."""
        return sum(self.matched_by.values())


_ANSWER_COLUMNS = (
    "id, qa_pair_id, model, condition, text, trajectory_json, source_format, source_file, source_line, "
    "extra_json, created_at, created_by, sample_index"
)
_RUN_COLUMNS = (
    "id, qa_pair_id, model, condition, sample_index, repository, status, reason, answer_id, turns, trajectory_json, "
    "call_ids_json, input_tokens, output_tokens, cost_usd, settings_json, created_at, created_by"
)
_JUDGMENT_COLUMNS = (
    "id, answer_id, judge, judge_model, run_index, status, checklist_version, scores_json, score_rate, scale_max, "
    "seed, critique, reason, raw_text, call_ids_json, created_at, created_by"
)


class AnswerStoreMixin:
    """Answer and judgment methods of :class:`benchwright.db.Store` (needs ``self.db``, ``self.write``)."""

    # ---------------------------------------------------------------------------------------- answers
    @serialized
    def import_answers(
        self, records: AnswerParseResult | Sequence[AnswerRecord], *, model: str, condition: str, created_by: str,
        judge_model: str = "unknown", skip_invalid: bool = False, source_format: str = "jsonl",
        source_file: str | None = None, scale: int | None = None,
    ) -> AnswerImportReport:
        """Match answers to Q&A pairs and write them in one transaction (all or nothing); idempotent.

        A record matches by pair id when it names an existing pair, else by the exact text of each of its
        candidate questions in turn (white space at the ends ignored, as :meth:`find_pairs_by_question`).
        Unmatched and ambiguous records are reported, not imported. A record whose pair already has a
        *different* answer for ``model`` and ``condition`` (in the project or earlier in the file) is a
        conflict. Records with scores also get an ``imported`` judgment (``judge_model``, entries of kind
        ``dimension`` with max = the scale, critique, score rate sum / sum of maxima); importing the same
        scores, scale and critique again adds nothing, and *different* ones for an answer that already has
        imported scores from ``judge_model`` (or twice in the file) are a conflict too: a re-import never
        silently replaces the scores reports use.

        Args:
            records: a parse result (its problems, format, file and scale are used) or plain records.
            scale: the maximum per dimension, for plain records with scores (a parse result brings its own).
            skip_invalid: leave out invalid records and conflicts (listed in the report) instead of refusing.

        Raises:
            InputFileError: the parse result has problems and not ``skip_invalid``.
            AnswerConflictError: conflicts (answers or imported scores) and not ``skip_invalid``.
            JudgmentError: unknown condition, empty model or judge model, scores without a scale.
        """
        if isinstance(records, AnswerParseResult):
            result = records
            recs, problems, fmt, file, scale = result.records, result.problems, result.format, result.file, result.scale
            read = result.read
        else:
            recs, problems, fmt, file, read = list(records), [], source_format, source_file or "", len(records)
        check_choice(condition, CONDITIONS, "condition")
        if not model or not model.strip():
            raise with_remedy(JudgmentError("an answer needs a model name"), Remedy.NAME_ANSWER_MODEL)
        if not judge_model or not judge_model.strip():
            raise with_remedy(JudgmentError("imported scores need a judge model name"), Remedy.NAME_JUDGE_MODEL)
        if problems and not skip_invalid:
            raise InputFileError(problems)
        if scale is None and any(r.scores for r in recs):
            raise with_remedy(JudgmentError(f"{file}: the answers carry scores but no scale was given"),
                              Remedy.GIVE_SCALE)
        report = AnswerImportReport(file, fmt, model, condition, read=read, skipped=list(problems) if skip_invalid else [])
        now = utc_now()
        with self.write() as db:
            by_question: dict[str, list[str]] = {}
            ordinals: dict[str, int] = {}
            for pid, question, ordinal in db.conn.execute("SELECT id, question, ordinal FROM qa_pairs ORDER BY ordinal"):
                by_question.setdefault(question.strip(), []).append(pid)
                ordinals[pid] = ordinal
            conflicts: list[str] = []
            in_file: dict[str, tuple[str, int]] = {}
            planned: list[tuple[AnswerRecord, str, str, bool]] = []  # record, pair, answer id, is new
            for r in recs:
                report.warnings.extend(r.notes)
                pid = self._match_answer(db, r, by_question, ordinals, report)
                if pid is None:
                    continue
                aid = make_answer_id(pid, model, condition, r.text)
                if pid in in_file:
                    first_aid, first_line = in_file[pid]
                    if first_aid == aid:
                        report.duplicates_in_file += 1
                        planned.append((r, pid, aid, False))
                    else:
                        conflicts.append(f"{r.describe()}: a different answer to pair {pid} than line {first_line}")
                    continue
                row = db.conn.execute(
                    "SELECT id FROM answers WHERE qa_pair_id = ? AND model = ? AND condition = ? AND sample_index = 0",
                    [pid, model, condition],
                ).fetchone()
                if row is not None and row[0] != aid:
                    conflicts.append(
                        f"{r.describe()}: pair {pid} already has a different answer by {model} under "
                        f"{condition} ({row[0]})"
                    )
                    continue
                in_file[pid] = (aid, r.line)
                planned.append((r, pid, aid, row is None))
                if row is not None:
                    report.already_present += 1
            scored: dict[str, tuple[str, int]] = {}  # answer id -> (judgment uid, line) planned in this file
            score_conflicts: set[int] = set()
            for r, _pid, aid, _new in planned:
                if not r.scores:
                    continue
                uid = _imported_uid(aid, judge_model, scale, r)
                why = self._imported_conflict(db, aid, judge_model, uid, scale, r, scored)
                if why:
                    conflicts.append(f"{r.describe()}: {why}")
                    score_conflicts.add(id(r))
                else:
                    scored.setdefault(aid, (uid, r.line))
            if conflicts and not skip_invalid:
                raise AnswerConflictError(file, sorted(conflicts, key=_line_of))
            report.conflicts = sorted(conflicts, key=_line_of)
            for r, pid, aid, new in planned:
                if new:
                    cur = db.conn.execute(
                        f"INSERT INTO answers ({_ANSWER_COLUMNS}) VALUES ({', '.join('?' * 13)})",
                        (aid, pid, model, condition, r.text, _dumps(r.trajectory) if r.trajectory is not None else None,
                         fmt, file, r.line, _dumps(r.extra), now, created_by, 0),
                    )
                    if getattr(r, "text_repaired", False):
                        self.flag_text_repair("answers", cur.lastrowid, "text", f"import line {r.line}")
                    report.added += 1
                report.answer_ids.append(aid)
                if r.scores and id(r) not in score_conflicts:
                    entries = _imported_entries(r, scale)
                    uid = _imported_uid(aid, judge_model, scale, r)
                    judgment = NewJudgment.of(aid, "imported", judge_model, entries=entries, scale_max=scale,
                                              critique=r.critique)
                    _, added = self._insert_judgment(db, judgment, created_by=created_by, uid=uid)
                    if added:
                        report.judgments_added += 1
                    else:
                        report.judgments_present += 1
        return report

    def _imported_conflict(self, db, aid: str, judge_model: str, uid: str, scale: int | None, r: AnswerRecord,
                           scored: dict[str, tuple[str, int]]) -> str | None:
        """Why record ``r``'s imported scores conflict with the project's (or an earlier line's), or None."""
        if aid in scored:
            first_uid, first_line = scored[aid]
            return None if first_uid == uid else (
                f"different imported scores for answer {aid} than line {first_line} (scores, scale or critique differ)"
            )
        if db.conn.execute("SELECT 1 FROM judgments WHERE uid = ?", [uid]).fetchone():
            return None
        row = db.conn.execute(
            "SELECT id, scale_max, scores_json, critique FROM judgments WHERE answer_id = ? AND judge = 'imported'"
            " AND judge_model = ? ORDER BY id DESC LIMIT 1", [aid, judge_model],
        ).fetchone()
        if row is None:
            return None
        jid, old_scale, old_json, old_critique = row
        old = {e.key: e.score for e in entries_from_json(old_json)}
        new = dict(r.scores or {})
        differs = []
        if old_scale != scale:
            differs.append(f"scale 0-{old_scale} there, --scale {scale} here")
        changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        if changed:
            shown = ", ".join(f"{k} {_num(old.get(k))} -> {_num(new.get(k))}" for k in changed[:5])
            differs.append(f"scores differ ({shown}{', ...' if len(changed) > 5 else ''})")
        if (old_critique or "") != (r.critique or ""):
            differs.append("the critique differs")
        return (f"answer {aid} already has imported scores by judge model {judge_model} (judgment {jid}) and "
                f"these differ: {'; '.join(differs) or 'entries differ'}")

    def _match_answer(self, db, r: AnswerRecord, by_question: dict[str, list[str]], ordinals: dict[str, int],
                      report: AnswerImportReport) -> str | None:
        why = "no Q&A pair has this question"
        not_an_id = None
        if r.pair_ref:
            if db.conn.execute("SELECT 1 FROM qa_pairs WHERE id = ?", [r.pair_ref]).fetchone():
                report.matched_by["qa_pair_id"] = report.matched_by.get("qa_pair_id", 0) + 1
                for _how, question in r.questions:
                    others = [p for p in by_question.get(question.strip(), []) if p != r.pair_ref]
                    if others and r.pair_ref not in by_question.get(question.strip(), []):
                        theirs = ", ".join(f"#{ordinals[p]}" for p in others)
                        report.warnings.append(
                            f"line {r.line}: {r.pair_field} names #{ordinals[r.pair_ref]} but its question is "
                            f"{theirs}'s; matched by id"
                        )
                        break
                return r.pair_ref
            if r.pair_ref.startswith("#") or r.pair_ref.isdigit():
                not_an_id = (f"{r.pair_field} {r.pair_ref!r} is not a pair id (it looks like a queue position; "
                             "pair ids look like qa_...)")
            else:
                not_an_id = f"no Q&A pair with id {r.pair_ref}"
            why = not_an_id + (", nor this question" if r.questions else "")
        ambiguous: list[str] = []
        for how, question in r.questions:
            found = by_question.get(question.strip(), [])
            if len(found) == 1:
                report.matched_by[how] = report.matched_by.get(how, 0) + 1
                if not_an_id:
                    report.warnings.append(f"line {r.line}: {not_an_id}; matched by {how}")
                return found[0]
            if len(found) > 1 and not ambiguous:
                ambiguous = [f"{how} is the question of {len(found)} pairs: {', '.join(found)}"]
        if ambiguous:
            report.ambiguous.append(f"{r.describe()} ({ambiguous[0]}; give qa_pair_id)")
        else:
            tried = ", ".join(how for how, _ in r.questions)
            report.unmatched.append(f"{r.describe()} ({why}{f'; tried {tried}' if tried else ''})")
        return None

    @serialized
    def answers(self, pair_id: str | None = None, model: str | None = None,
                condition: str | None = None, sample_index: int | None = None) -> list[Answer]:
        """Answers, filtered by pair, model, condition and sample index (``None``: any), in queue order, then
        model, condition and sample index."""
        clauses, params = [], []
        for column, value in (("a.qa_pair_id", pair_id), ("a.model", model), ("a.condition", condition),
                              ("a.sample_index", sample_index)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = " AND ".join(clauses) or "1"
        cols = ", ".join(f"a.{c.strip()}" for c in _ANSWER_COLUMNS.split(","))
        rows = self.db.conn.execute(
            f"""SELECT {cols} FROM answers a JOIN qa_pairs p ON p.id = a.qa_pair_id WHERE {where}
                ORDER BY p.ordinal, a.model, a.condition, a.sample_index""", params,
        ).fetchall()
        return [_answer(r) for r in rows]

    @serialized
    def get_answer(self, answer_id: str) -> Answer:
        """The answer ``answer_id``.

        Raises:
            NotFoundError: no such answer.
        """
        row = self.db.conn.execute(f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE id = ?", [answer_id]).fetchone()
        if row is None:
            raise NotFoundError(f"no answer with id {answer_id}; list them with: benchwright answers list")
        return _answer(row)

    @serialized
    def answer_models(self) -> list[tuple[str, str, int]]:
        """``(model, condition, number of answers)`` for every model and condition with answers, sorted."""
        return [tuple(r) for r in self.db.conn.execute(
            "SELECT model, condition, count(*) FROM answers GROUP BY model, condition ORDER BY model, condition"
        )]

    @serialized
    def answer_ids_with_prefix(self, prefix: str, limit: int = 6) -> list[str]:
        """Ids of answers starting with ``prefix`` (taken literally: ``%`` and ``_`` are no wildcards), sorted,
        at most ``limit``."""
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return [r[0] for r in self.db.conn.execute(
            "SELECT id FROM answers WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?", [like, limit])]

    def add_generated_answer(self, pair_id: str, model: str, condition: str, text: str, *, extra: dict,
                             by: str, sample_index: int = 0, trajectory: Any = None,
                             source_format: str = "direct-answer") -> str:
        """Insert sample ``sample_index`` of the answers ``model`` generated here under ``condition`` (source
        format ``direct-answer``, or ``agent`` for the agent's, with its ``trajectory`` as JSON; ``extra`` stored
        as JSON) with the id :func:`benchwright.core.judgment.answer_id` gives; returns the id. The same answer
        again changes nothing.

        Raises:
            BenchwrightError: the pair already has a different answer by ``model`` under ``condition`` for this
                sample, or ``sample_index`` is negative.
            JudgmentError: unknown condition.
        """
        check_choice(condition, CONDITIONS, "condition")
        if sample_index < 0:
            raise BenchwrightError(f"a sample index counts from 0, not {sample_index}")
        aid = make_answer_id(pair_id, model, condition, text, sample_index)
        with self.write() as db:
            row = db.conn.execute(
                "SELECT id FROM answers WHERE qa_pair_id = ? AND model = ? AND condition = ? AND sample_index = ?",
                [pair_id, model, condition, sample_index]).fetchone()
            if row is not None:
                if row[0] == aid:
                    return aid
                sample = f" (sample {sample_index})" if sample_index else ""
                raise BenchwrightError(f"pair {pair_id} already has an answer by {model} under {condition}{sample} "
                                       f"({row[0]})")
            db.conn.execute(
                f"INSERT INTO answers ({_ANSWER_COLUMNS}) VALUES ({', '.join('?' * 13)})",
                (aid, pair_id, model, condition, text, _dumps(trajectory) if trajectory is not None else None,
                 source_format, None, None, json.dumps(extra), utc_now(), by, sample_index),
            )
        return aid

    # ------------------------------------------------------------------------------------ answer runs
    def record_answer_run(
        self, pair_id: str, model: str, condition: str, *, status: str, by: str, sample_index: int = 0,
        repository: str | None = None, reason: str | None = None, answer_id: str | None = None, turns: int = 0,
        trajectory: Any = None, call_ids: Sequence[int] = (), input_tokens: int = 0, output_tokens: int = 0,
        cost_usd: float | None = None, settings: dict | None = None,
    ) -> AnswerRun:
        """Append one run of ``model`` on sample ``sample_index`` of pair ``pair_id`` under ``condition``
        (``answer_runs``): ``ok`` with the ``answer_id`` it stored, or ``failed`` with its ``reason`` (and no
        answer). Returns the row as stored.

        Raises:
            BenchwrightError: an unknown status, an ok run without its answer, a failed run without a reason or
                with an answer, a negative sample index.
            NotFoundError: no such pair, or ``answer_id`` names no answer.
            JudgmentError: unknown condition.
        """
        check_choice(condition, CONDITIONS, "condition")
        if status not in ANSWER_RUN_STATUSES:
            raise BenchwrightError(f"unknown run status {status!r}; use one of {', '.join(ANSWER_RUN_STATUSES)}")
        if status == "ok" and not answer_id:
            raise BenchwrightError("a finished run names the answer it stored")
        if status != "ok" and (answer_id or not (reason or "").strip()):
            raise BenchwrightError("a failed run says why it failed and stores no answer")
        if sample_index < 0:
            raise BenchwrightError(f"a sample index counts from 0, not {sample_index}")
        with self.write() as db:
            if db.conn.execute("SELECT 1 FROM qa_pairs WHERE id = ?", [pair_id]).fetchone() is None:
                raise NotFoundError(f"no Q&A pair with id {pair_id}")
            if answer_id and db.conn.execute("SELECT 1 FROM answers WHERE id = ?", [answer_id]).fetchone() is None:
                raise NotFoundError(f"no answer with id {answer_id}")
            cur = db.conn.execute(
                f"INSERT INTO answer_runs ({_RUN_COLUMNS}) VALUES (NULL{', ?' * 17})",
                (pair_id, model, condition, sample_index, repository, status, reason, answer_id, turns,
                 _dumps(trajectory) if trajectory is not None else None, json.dumps([int(c) for c in call_ids]),
                 input_tokens, output_tokens, cost_usd, _dumps(settings or {}), utc_now(), by),
            )
            return self._answer_runs("id = ?", [cur.lastrowid])[0]

    def _answer_runs(self, where: str, params: list) -> list[AnswerRun]:
        rows = self.db.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM answer_runs WHERE {where} ORDER BY id", params).fetchall()
        return [_answer_run(r) for r in rows]

    @serialized
    def answer_runs(self, pair_id: str | None = None, model: str | None = None, condition: str | None = None,
                    sample_index: int | None = None, *, latest_only: bool = False) -> list[AnswerRun]:
        """Runs, filtered by pair, model, condition and sample index (``None``: any), oldest first.
        ``latest_only`` keeps the latest run of each (pair, model, condition, sample): its state."""
        clauses, params = [], []
        for column, value in (("qa_pair_id", pair_id), ("model", model), ("condition", condition),
                              ("sample_index", sample_index)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if latest_only:
            clauses.append("id = (SELECT max(r2.id) FROM answer_runs r2 WHERE r2.qa_pair_id = answer_runs.qa_pair_id"
                           " AND r2.model = answer_runs.model AND r2.condition = answer_runs.condition"
                           " AND r2.sample_index = answer_runs.sample_index)")
        return self._answer_runs(" AND ".join(clauses) or "1", params)

    @serialized
    def answer_run_for(self, answer_id: str) -> AnswerRun | None:
        """The run that stored answer ``answer_id`` (its latest), or None (an imported or direct answer)."""
        runs = self._answer_runs("answer_id = ?", [answer_id])
        return runs[-1] if runs else None

    # -------------------------------------------------------------------------------------- judgments
    @serialized
    def save_judgment(
        self, judgment: NewJudgment | str, judge: str | None = None, judge_model: str | None = None, *,
        created_by: str, uid: str | None = None, **fields: Any,
    ) -> Judgment:
        """Append ``judgment`` (a :class:`~benchwright.core.judgment.NewJudgment`, validated in core) in one
        transaction; returns it as stored, with its id. ``uid`` makes the save idempotent: when a judgment with this
        uid exists it is returned unchanged (default: a fresh random uid).

        The older form ``save_judgment(answer_id, judge, judge_model, entries=..., status=..., ...)`` builds the
        value with :meth:`NewJudgment.of <benchwright.core.judgment.NewJudgment.of>` (same checks).

        Raises:
            NotFoundError: no such answer.
            JudgmentError: the checks of ``NewJudgment.of`` (unknown judge or status, a missing score, ...).
        """
        if not isinstance(judgment, NewJudgment):
            judgment = NewJudgment.of(judgment, judge, judge_model, **fields)  # type: ignore[arg-type]
        with self.write() as db:
            jid, _ = self._insert_judgment(db, judgment, created_by=created_by, uid=uid)
            return self.get_judgment(jid)

    def _insert_judgment(self, db, j: NewJudgment, *, created_by: str, uid: str | None) -> tuple[int, bool]:
        uid = uid or uuid.uuid4().hex
        row = db.conn.execute("SELECT id FROM judgments WHERE uid = ?", [uid]).fetchone()
        if row is not None:
            return row[0], False
        if db.conn.execute("SELECT 1 FROM answers WHERE id = ?", [j.answer_id]).fetchone() is None:
            raise NotFoundError(f"no answer with id {j.answer_id}")
        cur = db.conn.execute(
            """INSERT INTO judgments (answer_id, judge, judge_model, run_index, status, checklist_version,
               scores_json, score_rate, scale_max, seed, critique, reason, raw_text, call_ids_json, created_at,
               created_by, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (j.answer_id, j.judge, j.judge_model, j.run_index, j.status, j.checklist_version,
             entries_to_json(j.entries), j.score_rate, j.scale_max, j.seed, j.critique, j.reason, j.raw_text,
             json.dumps(list(j.call_ids)), utc_now(), created_by, uid),
        )
        return cur.lastrowid, True

    @serialized
    def get_judgment(self, judgment_id: int) -> Judgment:
        """The judgment ``judgment_id``.

        Raises:
            NotFoundError: no such judgment.
        """
        row = self.db.conn.execute(
            f"SELECT {_JUDGMENT_COLUMNS} FROM judgments WHERE id = ?", [judgment_id]
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no judgment with id {judgment_id}")
        return _judgment(row)

    @serialized
    def judgments(self, answer_id: str | None = None, judge: str | None = None, judge_model: str | None = None,
                  *, latest_only: bool = False) -> list[Judgment]:
        """Judgments, filtered (``None``: any), oldest first. ``latest_only`` keeps the latest judgment per
        answer, judge, judge model and run index (a re-judged run replaces the earlier one in reports)."""
        clauses, params = [], []
        for column, value in (("answer_id", answer_id), ("judge", judge), ("judge_model", judge_model)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = " AND ".join(clauses) or "1"
        if latest_only:
            where += (" AND id = (SELECT max(j2.id) FROM judgments j2 WHERE j2.answer_id = judgments.answer_id"
                      " AND j2.judge = judgments.judge AND j2.judge_model = judgments.judge_model"
                      " AND j2.run_index = judgments.run_index)")
        rows = self.db.conn.execute(
            f"SELECT {_JUDGMENT_COLUMNS} FROM judgments WHERE {where} ORDER BY id", params
        ).fetchall()
        return [_judgment(r) for r in rows]

    @serialized
    def latest_judgment(self, answer_id: str, judge: str, judge_model: str, run_index: int = 0) -> Judgment | None:
        """The latest judgment of ``answer_id`` by ``judge`` / ``judge_model`` in run ``run_index``, or None."""
        row = self.db.conn.execute(
            f"""SELECT {_JUDGMENT_COLUMNS} FROM judgments WHERE answer_id = ? AND judge = ? AND judge_model = ?
                AND run_index = ? ORDER BY id DESC LIMIT 1""", [answer_id, judge, judge_model, run_index],
        ).fetchone()
        return _judgment(row) if row else None

    # -------------------------------------------------------------------------------------- overrides
    @serialized
    def add_override(self, judgment_id: int, key: str, score: int | float, reason: str,
                     annotator: str) -> ScoreOverride:
        """Append ``annotator``'s override of entry ``key`` of a judgment; the judgment keeps its original
        score, recorded again as ``original_score``. The latest override of a key wins.

        Raises:
            NotFoundError: no such judgment.
            JudgmentError: an unscored judgment, an unknown key, a score outside the entry's allowed set (or
                [0, max]), an empty reason or annotator.
        """
        if not annotator or not annotator.strip():
            raise JudgmentError("an override needs the annotator's name")
        with self.write() as db:
            judgment = self.get_judgment(judgment_id)
            entry = check_override(judgment, key, score, reason)
            cur = db.conn.execute(
                """INSERT INTO score_overrides (judgment_id, key, original_score, score, reason, annotator,
                   created_at, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                (judgment_id, key, entry.score, score, reason.strip(), annotator, utc_now(), uuid.uuid4().hex),
            )
            return self._override_by_id(cur.lastrowid)

    def _override_by_id(self, oid: int) -> ScoreOverride:
        row = self.db.conn.execute(
            "SELECT id, judgment_id, key, original_score, score, reason, annotator, created_at "
            "FROM score_overrides WHERE id = ?", [oid],
        ).fetchone()
        return ScoreOverride(*row)

    @serialized
    def overrides(self, judgment_id: int | None = None) -> list[ScoreOverride]:
        """Overrides of one judgment (``None``: of every judgment), oldest first."""
        sql = "SELECT id, judgment_id, key, original_score, score, reason, annotator, created_at FROM score_overrides"
        params: list[Any] = []
        if judgment_id is not None:
            sql += " WHERE judgment_id = ?"
            params.append(judgment_id)
        return [ScoreOverride(*r) for r in self.db.conn.execute(sql + " ORDER BY id", params)]

    # ---------------------------------------------------------------------------------- failure modes
    @serialized
    def add_failure_mode(
        self, answer_id: str, mode: str, rationale: str, origin: str, *, annotator: str | None = None,
        judge_model: str | None = None, call_ids: Sequence[int] = (),
    ) -> FailureModeLabel:
        """Append a failure-mode label of an answer (RepoProbe §5.4, Table 7); the latest label wins.

        Raises:
            NotFoundError: no such answer.
            JudgmentError: unknown mode or origin; origin ``annotator`` without an annotator's name, origin
                ``llm`` without the classifier's model.
        """
        check_choice(mode, FAILURE_MODES, "failure mode")
        check_choice(origin, FAILURE_MODE_ORIGINS, "label origin")
        if origin == "annotator" and not (annotator and annotator.strip()):
            raise JudgmentError("an annotator's label needs the annotator's name")
        if origin == "llm" and not (judge_model and judge_model.strip()):
            raise JudgmentError("an LLM's label needs the model's name")
        with self.write() as db:
            self.get_answer(answer_id)
            cur = db.conn.execute(
                """INSERT INTO failure_modes (answer_id, mode, rationale, origin, annotator, judge_model,
                   call_ids_json, created_at, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (answer_id, mode, rationale or "", origin, annotator, judge_model,
                 json.dumps([int(c) for c in call_ids]), utc_now(), uuid.uuid4().hex),
            )
            return self._failure_modes("id = ?", [cur.lastrowid])[0]

    def _failure_modes(self, where: str, params: list) -> list[FailureModeLabel]:
        rows = self.db.conn.execute(
            "SELECT id, answer_id, mode, rationale, origin, annotator, judge_model, call_ids_json, created_at "
            f"FROM failure_modes WHERE {where} ORDER BY id", params,
        ).fetchall()
        return [FailureModeLabel(*r[:7], call_ids=json.loads(r[7]), created_at=r[8]) for r in rows]

    @serialized
    def failure_mode(self, answer_id: str) -> FailureModeLabel | None:
        """The answer's current (latest) failure-mode label, or None."""
        labels = self._failure_modes("answer_id = ?", [answer_id])
        return labels[-1] if labels else None

    @serialized
    def failure_mode_history(self, answer_id: str) -> list[FailureModeLabel]:
        """Every failure-mode label of the answer, oldest first (LLM labels and annotators' corrections)."""
        return self._failure_modes("answer_id = ?", [answer_id])


# ----------------------------------------------------------------------------------------------- helpers
def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _imported_entries(r: AnswerRecord, scale: int | None) -> list[ScoreEntry]:
    return [ScoreEntry(key=k, label=k, kind="dimension", score=v, max=scale) for k, v in (r.scores or {}).items()]


def _imported_uid(aid: str, judge_model: str, scale: int | None, r: AnswerRecord) -> str:
    """The idempotency key of an imported judgment: answer, judge model, scale, entries and critique."""
    return _digest("imported", aid, judge_model, str(scale), entries_to_json(_imported_entries(r, scale)),
                   r.critique or "")


def _num(value: Any) -> str:
    return "none" if value is None else f"{value:g}"


def _line_of(conflict: str) -> int:
    head = conflict.split(":", 1)[0]
    return int(head[5:]) if head.startswith("line ") and head[5:].isdigit() else 0


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:32]


def _answer(r: tuple) -> Answer:
    return Answer(
        id=r[0], qa_pair_id=r[1], model=r[2], condition=r[3], text=r[4],
        trajectory=json.loads(r[5]) if r[5] is not None else None, source_format=r[6], source_file=r[7],
        source_line=r[8], extra=json.loads(r[9]), created_at=r[10], created_by=r[11], sample_index=r[12],
    )


def _answer_run(r: tuple) -> AnswerRun:
    return AnswerRun(
        id=r[0], qa_pair_id=r[1], model=r[2], condition=r[3], sample_index=r[4], repository=r[5], status=r[6],
        reason=r[7], answer_id=r[8], turns=r[9], trajectory=json.loads(r[10]) if r[10] is not None else None,
        call_ids=json.loads(r[11]), input_tokens=r[12], output_tokens=r[13], cost_usd=r[14],
        settings=json.loads(r[15]), created_at=r[16], created_by=r[17],
    )


def _judgment(r: tuple) -> Judgment:
    return Judgment(
        id=r[0], answer_id=r[1], judge=r[2], judge_model=r[3], run_index=r[4], status=r[5],
        checklist_version=r[6], entries=entries_from_json(r[7]), score_rate=r[8], scale_max=r[9], seed=r[10],
        critique=r[11], reason=r[12], raw_text=r[13], call_ids=json.loads(r[14]), created_at=r[15],
        created_by=r[16],
    )
