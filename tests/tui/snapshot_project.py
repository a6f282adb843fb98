"""The seeded project the screenshot tests (tests/tui/test_snapshots.py) open every screen on: the pairs of
``conftest.make_project`` plus checklists, two annotators' reviews that disagree (blind mode on), notes, an
answer judged twice with runs that disagree, an override, a failure mode, curation results and a probe with
recorded runs and a sign-off. Everything in it is fixed: ids are content hashes, every store time comes from
:func:`frozen_clock`, and names, texts and scores are constants, so a screenshot changes only when the screen
does."""

from __future__ import annotations

import itertools
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchwright.core import models
from benchwright.core.checklist import Checklist, ChecklistItem, RubricTier, clarity_item
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.probes import probe_fingerprint, read_probe_folder, scaffold_probe
from benchwright.core.probes.runner import ModuleResult, OracleRun
from benchwright.core.review import CRITERIA, Criteria, Verdict
from benchwright.db import Store

VIEWER, OTHER, LEAD = "ann", "bob", "lead"
"""The annotator the app runs as, the second annotator of blind mode, and the adjudicator."""

CLOCK_START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def frozen_clock(monkeypatch) -> None:
    """Make ``core.models.utc_now`` (and every benchwright module's copy of it) return 2026-03-02 09:00:00 UTC
    plus one second per call, so stored times are the same on every run and keep their order."""
    ticks = itertools.count()

    def utc_now() -> str:
        return (CLOCK_START + timedelta(seconds=next(ticks))).isoformat(timespec="microseconds")

    # every benchwright module first: one imported later (lazily, by a command or a screen) would keep the real
    # clock, and whether it was imported already depends on the tests run before in the same process
    import importlib
    import pkgutil

    for top in ("core", "db", "exports", "tui"):
        package = importlib.import_module(f"benchwright.{top}")
        for info in pkgutil.walk_packages(package.__path__, f"benchwright.{top}."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)
    real = models.utc_now
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("benchwright") and getattr(module, "utc_now", None) is real:
            monkeypatch.setattr(module, "utc_now", utc_now)


def _checklist(first: str, second: str) -> Checklist:
    return Checklist(items=[
        ChecklistItem(key_point=first, weight=5, rubric=[
            RubricTier(score=5, criterion="names the module and the function"),
            RubricTier(score=2, criterion="names the module only"),
            RubricTier(score=0, criterion="neither")]),
        ChecklistItem(key_point=second, weight=4, rubric=[
            RubricTier(score=4, criterion="says it"), RubricTier(score=0, criterion="does not")]),
        clarity_item(),
    ])


def _criteria(verdict: Verdict, note: str) -> Criteria:
    criteria = Criteria()
    for name in CRITERIA:
        criteria.verdicts[name] = verdict
    criteria.notes[CRITERIA[0]] = note
    return criteria


def _entries(first: int, second: int) -> list[dict]:
    return [
        {"key": "1", "label": "Names line_120 in src/pkg/app.py", "kind": "knowledge", "score": first, "max": 5,
         "allowed": [0, 2, 5], "rationale": "The answer cites src/pkg/app.py:120 and says what it sets."},
        {"key": "2", "label": "Says the value is an int", "kind": "knowledge", "score": second, "max": 4,
         "allowed": [0, 4], "rationale": "It says the value is a number, not that it is an int."},
        {"key": "3", "label": "Clarity & Organization", "kind": "clarity", "score": 1, "max": 1,
         "allowed": [0, 1], "rationale": "Short and in order."},
    ]


def make_snapshot_project(tmp_path: Path, make_project) -> dict:
    """Build the project in ``tmp_path`` on the pairs of ``make_project`` (the ``project_factory`` fixture);
    call :func:`frozen_clock` first. Returns ``db`` (path), ``ids`` (pair ids in queue order), ``answer_id`` and
    ``probe_id``."""
    db, ids = make_project(tmp_path)
    with Store.open(db) as store:
        store.assign([VIEWER, OTHER], 2, seed=7, by=LEAD)  # blind mode on, both review every pair
        for n, pid in enumerate(ids):
            store.save_checklist(pid, _checklist(f"Names line_{n + 120} in src/pkg/app.py", "Says the value is an int"),
                                 author="generator", origin="generated")
        store.save_checklist(ids[0], _checklist("Names line_120 and its module", "Says the value is an int"),
                             author=VIEWER, expected_version=1, visible_to=VIEWER)
        store.save_checklist(ids[0], _checklist("Names line_120 in src/pkg/app.py", "Says it is the int 120"),
                             author=OTHER, expected_version=1, visible_to=OTHER)
        store.record_decision(ids[0], OTHER, "reject", criteria=_criteria(Verdict.FAIL, "The answer cites a file that is gone."),
                              notes="src/pkg/gone.py does not exist.")
        store.record_decision(ids[0], VIEWER, "accept", criteria=_criteria(Verdict.PASS, "Matches line 120."),
                              notes="Cited line checked.")
        store.add_note(ids[0], VIEWER, "Check the cited line again after the next import.")
        for who in (VIEWER, OTHER):
            store.record_decision(ids[1], who, "accept", criteria=_criteria(Verdict.PASS, ""))
        store.save_curation_result(ids[0], "classify", status="ok", by="generator", model="gen-model",
                                   output={"rationale": "Asks where a value is set in the code.",
                                           "code_understanding_relevant": True, "category": "Implementation Details"})
        store.save_curation_result(ids[0], "verify", status="ok", flagged=True, by="generator", model="ver-model",
                                   output={"self_contained": {"rationale": "Names the file.", "passed": True},
                                           "answerable": {"rationale": "src/pkg/gone.py is not in the repository.",
                                                          "passed": False}})

        store.import_answers([AnswerRecord(line=1, pair_ref=ids[0],
                                           text="line_120 is set in `src/pkg/app.py:120`; it holds the number 120.")],
                             model="model-a", condition="closed-book", created_by="setup")
        (answer,) = store.answers(pair_id=ids[0])
        first = store.save_judgment(answer.id, "checklist", "judge-model", entries=_entries(5, 0), run_index=0,
                                    checklist_version=1, critique="Close; misses the type.", created_by="setup")
        store.save_judgment(answer.id, "checklist", "judge-model", entries=_entries(2, 0), run_index=1,
                            checklist_version=1, created_by="setup")
        store.add_override(first.id, "2", 4, "It does say int, in other words.", VIEWER)
        store.add_failure_mode(answer.id, "shallow-explanation", "Names the line, not why.", "annotator",
                               annotator=VIEWER)

        # the probe `probes new` writes (its text is in the code), not a bundled sample that grows variants
        probe, variants = read_probe_folder(scaffold_probe(tmp_path / "probe", "greeting"))
        fingerprint = probe_fingerprint(probe, variants)
        store.save_probe(probe, variants, fingerprint, by="setup")
        module = probe.pipeline.modules[0]
        for variant in variants[:2]:
            passed = variant.expected == "pass"
            store.record_run(OracleRun(
                probe_id=probe.id, variant=variant, outcome="pass" if passed else "fail", expected=variant.expected,
                matches_expectation=True, duration_s=1.5, started_at="2026-03-02T09:00:00+00:00",
                modules=[ModuleResult(name=module.name, module_name=module.module_name, passed=passed,
                                      reason="exit code 0" if passed else "exit code 1", log="$ make test\nok\n",
                                      duration_s=1.5)],
            ), fingerprint=fingerprint, by="setup")
        store.sign_off(probe.id, VIEWER, "not-signed-off", "Two variants are not run yet.")
    return {"db": db, "ids": ids, "answer_id": answer.id, "probe_id": probe.id}
