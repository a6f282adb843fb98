"""Model results on NITR cases in the store: verdicts per configuration and case, and the cases' dimensions.

``model_results`` is append-only: a verdict that changes (a corrected pass matrix imported with ``update``, a
new attempt) is a new row and the latest row per configuration and case counts. ``result_cases`` holds each
case's dimension and granularity as the checkout's documentation gives them (re-read on every import).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from benchwright.core.errors import StoreError
from benchwright.core.models import utc_now
from benchwright.core.probes.results import (
    OUTCOMES,
    REGIMES,
    CaseInfo,
    CaseResult,
    PassMatrix,
    ResultsImport,
    case_number,
)

from .locking import serialized

RESULTS_FORMAT = "nitr-pass-matrix"
"""``import_batches.format`` of a pass-matrix import."""

_LATEST = """SELECT configuration, model, regime, case_number, outcome, source_line, id FROM model_results m
             WHERE id = (SELECT max(id) FROM model_results x
                         WHERE x.configuration = m.configuration AND x.case_number = m.case_number)"""


def _check(result: CaseResult) -> None:
    if result.regime not in REGIMES:
        raise StoreError(f"regime {result.regime!r} is not one of {', '.join(REGIMES)}")
    if result.outcome not in OUTCOMES:
        raise StoreError(f"outcome {result.outcome!r} is not one of {', '.join(OUTCOMES)}")


class ResultStoreMixin:
    """Model-result methods of :class:`benchwright.db.Store`."""

    def import_model_results(self, matrix: PassMatrix, file_path: str | Path,
                             cases: Mapping[str, CaseInfo] | None = None, *, by: str,
                             update: bool = False) -> ResultsImport:
        """Record a pass matrix's verdicts (and the case descriptions ``cases``) in one transaction.

        A verdict the project already has for that configuration and case is counted, not written again, so
        importing the same file twice adds nothing. A verdict that differs from the current one is listed in
        ``changed`` and recorded (as a new row; the earlier one stays) only with ``update``. One
        ``import_batches`` row (format ``nitr-pass-matrix``) records an import that wrote something.
        """
        report = ResultsImport(file=matrix.file, read=len(matrix.results),
                               configurations=len(matrix.configurations))
        path = Path(file_path)
        now = utc_now()
        for r in matrix.results:
            _check(r)
        with self.write() as db:
            current = {(r[0], r[3]): r[4] for r in db.conn.execute(_LATEST)}
            new: list[CaseResult] = []
            for r in matrix.results:
                before = current.get((r.configuration, r.case))
                if before == r.outcome:
                    report.already_present += 1
                elif before is None:
                    new.append(r)
                else:
                    report.changed.append(f"line {r.line}: {r.configuration}, case {r.case}: {before} -> {r.outcome}")
                    if update:
                        new.append(r)
                        report.updated += 1
            report.added = len(new) - report.updated
            known = {row[0]: row[1:] for row in db.conn.execute(
                "SELECT case_number, case_id, primary_dimension, granularity, source FROM result_cases")}
            case_rows = [(c.case, c.case_id, c.primary_dimension, c.granularity, c.source)
                         for c in (cases or {}).values()
                         if known.get(c.case) != (c.case_id, c.primary_dimension, c.granularity, c.source)]
            report.cases = len(case_rows)
            if not new and not case_rows:
                return report
            cursor = db.conn.execute(
                """INSERT INTO import_batches (format, file_name, file_path, file_sha256, options_json, read_count,
                   added_count, already_present_count, duplicate_count, skipped_count, skipped_json, created_at,
                   created_by, updated_count, possible_update_count, possible_updates_json)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, '[]', ?, ?, ?, ?, ?)""",
                (RESULTS_FORMAT, path.name, str(path.resolve()), matrix.sha256,
                 json.dumps({"update": update}), report.read, report.added, report.already_present, now, by,
                 report.updated, len(report.changed) - report.updated,
                 json.dumps([] if update else report.changed)),
            )
            report.batch_id = cursor.lastrowid
            db.conn.executemany(
                """INSERT INTO model_results (configuration, model, regime, case_number, outcome, origin,
                   import_batch_id, source_line, created_at, created_by) VALUES (?, ?, ?, ?, ?, 'imported', ?, ?, ?, ?)""",
                [(r.configuration, r.model, r.regime, r.case, r.outcome, report.batch_id, r.line, now, by)
                 for r in new],
            )
            db.conn.executemany(
                """INSERT INTO result_cases (case_number, case_id, primary_dimension, granularity, source, updated_at,
                   updated_by) VALUES (?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (case_number) DO UPDATE SET case_id = excluded.case_id,
                     primary_dimension = excluded.primary_dimension, granularity = excluded.granularity,
                     source = excluded.source, updated_at = excluded.updated_at, updated_by = excluded.updated_by""",
                [(*row, now, by) for row in case_rows],
            )
        return report

    def record_model_result(self, result: CaseResult, *, by: str, oracle_run_id: int | None = None) -> int:
        """Append one verdict of a configuration on a case (an attempt's), optionally pointing at the oracle run
        that decided it; returns the row id. It becomes the current verdict for that configuration and case.

        Raises:
            StoreError: an unknown regime or outcome.
        """
        _check(result)
        with self.write() as db:
            cur = db.conn.execute(
                """INSERT INTO model_results (configuration, model, regime, case_number, outcome, origin,
                   oracle_run_id, created_at, created_by) VALUES (?, ?, ?, ?, ?, 'attempt', ?, ?, ?)""",
                (result.configuration, result.model, result.regime, result.case, result.outcome, oracle_run_id,
                 utc_now(), by),
            )
            return cur.lastrowid

    @serialized
    def model_results(self) -> list[CaseResult]:
        """The current verdict of every configuration on every case it has one for, configurations in the order
        they were first recorded, cases in number order."""
        first = {r[0]: r[1] for r in self.db.conn.execute(
            "SELECT configuration, min(id) FROM model_results GROUP BY configuration")}
        rows = [CaseResult(r[0], r[1], r[2], r[3], r[4], r[5]) for r in self.db.conn.execute(_LATEST)]
        return sorted(rows, key=lambda r: (first[r.configuration], len(r.case), r.case))

    @serialized
    def result_cases(self) -> dict[str, CaseInfo]:
        """``{case number: CaseInfo}`` as recorded by the latest import that described the case."""
        return {r[0]: CaseInfo(*r) for r in self.db.conn.execute(
            "SELECT case_number, case_id, primary_dimension, granularity, source FROM result_cases "
            "ORDER BY case_number")}

    @serialized
    def probe_case_infos(self) -> list[CaseInfo]:
        """The imported probes whose id starts with a NITR case number (``021.inline-filter-entrypoint-reuse``),
        as :class:`CaseInfo` with the dimension of their SPEC.md and the granularity of their task files."""
        out = []
        for pid, dimension, probe_json in self.db.conn.execute(
                "SELECT id, primary_dimension, probe_json FROM probes ORDER BY id"):
            number = case_number(pid)
            if number is None:
                continue
            granularity = json.loads(probe_json).get("granularity")
            out.append(CaseInfo(number, pid, dimension, granularity, f"probe {pid}"))
        return out
