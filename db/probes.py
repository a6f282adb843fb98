"""NITR probes in the store: probes and variants, oracle runs with their logs, and sign-offs.

A probe's ``fingerprint`` covers every file of its case, evaluator and variants; a sign-off records the
fingerprint it was given under, so any later change to the probe marks it stale (NITR §3, oracle validation).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from benchwright.core.errors import BenchwrightError, NotFoundError
from benchwright.core.models import utc_now
from benchwright.core.probes import OracleRun

from .locking import serialized

VALIDATION_STATES = ("not run", "incomplete", "separating", "not separating", "signed off", "stale sign-off",
                     "not signed off")

MIN_VARIANTS_SETTING = "probe_min_variants_per_family"
"""The project setting (``settings`` table) holding how many intended and how many shortcut variants a probe
needs before its stored state can be ``separating`` (``benchwright probes min-variants N``); unset: the
default of :data:`benchwright.core.probes.runner.DEFAULT_MIN_VARIANTS_PER_FAMILY` (2, NITR's "stably
separating" a solution *family*)."""


def to_json(obj) -> str:
    """JSON of a pydantic model or a dataclass (sorted keys)."""
    if hasattr(obj, "model_dump"):
        data = obj.model_dump(mode="json")
    elif dataclasses.is_dataclass(obj):
        data = dataclasses.asdict(obj)
    else:
        data = obj
    return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class SignOff:
    """An annotator's verdict on a probe's oracle, with the probe fingerprint it was given under."""

    annotator: str
    verdict: str
    reason: str
    fingerprint: str
    created_at: str


class ProbeStoreMixin:
    """Probe methods of :class:`benchwright.db.Store`."""

    def save_probe(self, probe, variants: list, fingerprint: str, *, by: str) -> None:
        """Insert or replace a probe and its variants (a re-import replaces them; runs and sign-offs stay,
        and a changed fingerprint makes earlier sign-offs stale)."""
        with self.write() as db:
            db.conn.execute("DELETE FROM probe_variants WHERE probe_id = ?", [probe.id])
            db.conn.execute(
                """INSERT INTO probes (id, title, primary_dimension, probe_json, fingerprint, imported_at, imported_by)
                   VALUES (?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (id) DO UPDATE SET title = excluded.title,
                     primary_dimension = excluded.primary_dimension, probe_json = excluded.probe_json,
                     fingerprint = excluded.fingerprint, imported_at = excluded.imported_at,
                     imported_by = excluded.imported_by""",
                (probe.id, probe.title, probe.primary_dimension, to_json(probe), fingerprint, utc_now(), by),
            )
            names = set()
            for v in variants:
                if v.name in names:
                    raise BenchwrightError(f"probe {probe.id}: variant {v.name!r} appears twice")
                names.add(v.name)
                db.conn.execute(
                    "INSERT INTO probe_variants (probe_id, name, kind, expected, variant_json) VALUES (?, ?, ?, ?, ?)",
                    (probe.id, v.name, v.kind, v.expected, to_json(v)),
                )

    @serialized
    def probe_ids(self) -> list[str]:
        """Every probe id, sorted."""
        return [r[0] for r in self.db.conn.execute("SELECT id FROM probes ORDER BY id")]

    @serialized
    def probe_record(self, probe_id: str) -> dict:
        """``{id, title, primary_dimension, probe (dict), fingerprint, variants: [dict]}``.

        Raises:
            NotFoundError: no such probe.
        """
        r = self.db.conn.execute(
            "SELECT id, title, primary_dimension, probe_json, fingerprint FROM probes WHERE id = ?", [probe_id]
        ).fetchone()
        if r is None:
            near = [row[0] for row in self.db.conn.execute(
                "SELECT id FROM probes WHERE substr(id, 1, length(?) + 1) = ? || '.' ORDER BY id", [probe_id, probe_id])]
            if near:  # a NITR case named by its number, as `probes import --case 021` allows
                raise NotFoundError(f"no probe {probe_id!r}; did you mean {', '.join(map(repr, near))}?")
            raise NotFoundError(f"no probe {probe_id!r}; import it with: benchwright probes import CASE_DIR EVALUATOR_DIR")
        variants = [json.loads(v[0]) for v in self.db.conn.execute(
            "SELECT variant_json FROM probe_variants WHERE probe_id = ? ORDER BY name", [probe_id])]
        return {"id": r[0], "title": r[1], "primary_dimension": r[2], "probe": json.loads(r[3]),
                "fingerprint": r[4], "variants": variants}

    def record_run(self, run, *, fingerprint: str, by: str) -> int:
        """Append an oracle run (its per-module results and logs); returns the row id."""
        variant = getattr(run, "variant", None)
        name = getattr(variant, "name", None) if variant is not None else None
        with self.write() as db:
            cur = db.conn.execute(
                """INSERT INTO oracle_runs (probe_id, variant, outcome, expected, fingerprint, run_json, duration_s,
                   created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (run.probe_id, name, run.outcome, getattr(run, "expected", None), fingerprint, to_json(run),
                 float(getattr(run, "duration_s", 0.0) or 0.0), utc_now(), by),
            )
            return cur.lastrowid

    @serialized
    def latest_runs(self, probe_id: str) -> dict[str | None, dict]:
        """``{variant name (None: the starter code): run dict}`` of the latest run of each variant, each with
        ``outcome``, ``expected``, ``fingerprint``, ``created_at`` and the run's JSON under ``run``."""
        rows = self.db.conn.execute(
            """SELECT variant, outcome, expected, fingerprint, run_json, created_at, created_by FROM oracle_runs o
               WHERE probe_id = ? AND id = (SELECT max(id) FROM oracle_runs x WHERE x.probe_id = o.probe_id
                                            AND x.variant IS o.variant)""",
            [probe_id],
        ).fetchall()
        return {r[0]: {"outcome": r[1], "expected": r[2], "fingerprint": r[3], "run": json.loads(r[4]),
                       "created_at": r[5], "created_by": r[6]} for r in rows}

    def _flaky_variants(self, probe_id: str, fingerprint: str) -> set[str]:
        """Variants whose runs under ``fingerprint`` (the same probe files) ended in more than one outcome
        (``probes run --repeat N``; :attr:`benchwright.core.probes.Separation.flaky`). A run that could not
        run here (a missing toolchain) is no verdict of the oracle and does not count."""
        rows = self.db.conn.execute(
            """SELECT variant FROM oracle_runs WHERE probe_id = ? AND fingerprint = ? AND variant IS NOT NULL
                 AND NOT (outcome = 'error' AND COALESCE(json_extract(run_json, '$.error'), '') LIKE 'cannot run here%')
               GROUP BY variant HAVING COUNT(DISTINCT outcome) > 1""",
            [probe_id, fingerprint],
        ).fetchall()
        return {r[0] for r in rows}

    def min_variants_per_family(self) -> int:
        """How many final intended and how many final shortcut variants a probe needs for ``separating``: the
        project setting :data:`MIN_VARIANTS_SETTING`, else ``DEFAULT_MIN_VARIANTS_PER_FAMILY`` (2). A stored
        value that is not a whole number of at least 1 counts as unset."""
        from benchwright.core.probes.runner import DEFAULT_MIN_VARIANTS_PER_FAMILY

        value = self.setting(MIN_VARIANTS_SETTING)
        try:
            number = int(value) if value is not None else DEFAULT_MIN_VARIANTS_PER_FAMILY
        except ValueError:
            return DEFAULT_MIN_VARIANTS_PER_FAMILY
        return number if number >= 1 else DEFAULT_MIN_VARIANTS_PER_FAMILY

    def set_min_variants_per_family(self, count: int, *, by: str) -> None:
        """Set :meth:`min_variants_per_family` for the project (who and when are kept).

        Raises:
            BenchwrightError: ``count`` is below 1.
        """
        if int(count) < 1:
            raise BenchwrightError(f"the minimum number of variants per family must be at least 1 (got {count})")
        self.set_setting(MIN_VARIANTS_SETTING, str(int(count)), by=by)

    def family_shortfall(self, probe_id: str) -> str | None:
        """Why the probe has too few variants for ``separating`` (a sentence naming the counts and the
        minimum), or None when it has at least :meth:`min_variants_per_family` final intended and final
        shortcut variants."""
        record = self.probe_record(probe_id)
        need = self.min_variants_per_family()
        steps = len(record["probe"].get("steps") or [1])
        final = [v for v in record["variants"] if v.get("step") in (None, steps)]
        counts = {kind: sum(1 for v in final if v["kind"] == kind) for kind in ("intended", "shortcut")}
        if all(count >= need for count in counts.values()):
            return None
        return (f"{counts['intended']} intended and {counts['shortcut']} shortcut variant"
                f"{'s' if counts['shortcut'] != 1 else ''}; stable separation needs {need} of each "
                f"(project setting {MIN_VARIANTS_SETTING}: benchwright probes min-variants N)")

    def sign_off(self, probe_id: str, annotator: str, verdict: str, reason: str) -> None:
        """Record an annotator's verdict on the probe's oracle (``signed-off`` or ``not-signed-off``).

        Raises:
            BenchwrightError: unknown verdict, or an empty reason for ``not-signed-off``.
        """
        if verdict not in ("signed-off", "not-signed-off"):
            raise BenchwrightError("verdict must be signed-off or not-signed-off")
        if verdict == "not-signed-off" and not reason.strip():
            raise BenchwrightError("say why the oracle is not signed off")
        if verdict == "signed-off":
            state = self.run_state(probe_id)
            if state != "separating":
                raise BenchwrightError(f"probe {probe_id} is {state}: run every variant until the oracle separates "
                                       "intended from shortcut variants before signing it off")
        record = self.probe_record(probe_id)
        with self.write() as db:
            db.conn.execute(
                """INSERT INTO oracle_signoffs (probe_id, annotator, verdict, reason, fingerprint, created_at)
                   VALUES (?, ?, ?, ?, ?, ?)""",
                (probe_id, annotator, verdict, reason.strip(), record["fingerprint"], utc_now()),
            )

    @serialized
    def latest_signoff(self, probe_id: str) -> SignOff | None:
        """The latest sign-off of the probe, or None."""
        r = self.db.conn.execute(
            """SELECT annotator, verdict, reason, fingerprint, created_at FROM oracle_signoffs
               WHERE probe_id = ? ORDER BY id DESC LIMIT 1""", [probe_id]
        ).fetchone()
        return SignOff(*r) if r else None

    def validation_state(self, probe_id: str) -> str:
        """One of :data:`VALIDATION_STATES`: sign-off state first (stale when the probe changed since), else
        :meth:`run_state`."""
        record = self.probe_record(probe_id)
        signoff = self.latest_signoff(probe_id)
        if signoff is not None:
            if signoff.fingerprint != record["fingerprint"]:
                return "stale sign-off"
            return "signed off" if signoff.verdict == "signed-off" else "not signed off"
        return self.run_state(probe_id)

    def run_state(self, probe_id: str) -> str:
        """What the latest runs under the current fingerprint say: ``incomplete`` (fewer than
        :meth:`min_variants_per_family` intended or shortcut variants, :meth:`family_shortfall`; or one not
        run), ``not run``, ``not separating`` (an intended variant not passing,
        a shortcut not failing or failing only to build, any run ending in error, or a variant whose runs under
        the current fingerprint ended in different outcomes: a flaky oracle) or ``separating``
        (the rule of :func:`benchwright.core.probes.separation`)."""
        record = self.probe_record(probe_id)
        names = {None} | {v["name"] for v in record["variants"]}  # the starter and the variants, not model attempts
        runs = {k: v for k, v in self.latest_runs(probe_id).items()
                if v["fingerprint"] == record["fingerprint"] and k in names}
        steps = len(record["probe"].get("steps") or [1])
        # only variants that reach the end of the task sequence are judged (earlier steps are building blocks)
        final = [v for v in record["variants"] if v.get("step") in (None, steps)]
        kinds = {v["kind"] for v in final}
        if "intended" not in kinds or "shortcut" not in kinds or self.family_shortfall(probe_id):
            return "incomplete"  # stable separation needs a family of intended and of shortcut variants
        if not runs:
            return "not run"
        if not {v["name"] for v in final} <= set(runs):
            return "incomplete"
        if self._flaky_variants(probe_id, record["fingerprint"]) & {v["name"] for v in final}:
            return "not separating"  # the same files gave a variant different outcomes: a flaky oracle
        for v in final:
            outcome = runs[v["name"]]["outcome"]
            if outcome == "error":
                return "not separating"  # a variant that did not apply or build tells nothing
            if v["kind"] == "intended" and outcome != "pass":
                return "not separating"
            if v["kind"] == "shortcut" and outcome != "fail":
                return "not separating"
            if OracleRun.model_validate(runs[v["name"]]["run"]).shortcut_failed_to_build:
                return "not separating"  # it failed to build: the compiler caught it, not the oracle
        return "separating"
