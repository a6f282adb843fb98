"""The demo project: a bundled sample about click (pairs, checklists, answers, judgments, probes), seeded once in a
folder and reused. The CLI's ``benchwright demo`` and the tests call :func:`prepare_demo`."""

from __future__ import annotations

from pathlib import Path

from benchwright.core import demo as demo_mod
from benchwright.core.checklist import is_valid
from benchwright.core.importers import parse
from benchwright.db import QueueFilter, Store


def prepare_demo(folder: Path) -> Path:
    """Create (or reuse) the demo project in ``folder``; return the project file. Idempotent."""
    folder.mkdir(parents=True, exist_ok=True)
    repository = demo_mod.demo_repository()
    # One project per click version, so upgrading click never leaves a demo pinned to another version.
    db_path = folder / f"demo-click-{repository.version_label}.db"
    sample = demo_mod.prepare_demo_sample(folder / f"demo-click-{repository.version_label}.jsonl")
    with Store.open(db_path) as store:
        store.add_repository(repository, "benchwright-demo")
        result = parse("jsonl", sample, repository=demo_mod.DEMO_REPOSITORY, mapping=demo_mod.DEMO_MAPPING)
        store.apply_import(result, annotator="benchwright-demo", file_path=sample,
                           repository=demo_mod.DEMO_REPOSITORY)
        _demo_probes(store)
        for question_start, checklist in demo_mod.demo_checklists():
            pair_ids = [
                row.id for row in store.queue_page("benchwright-demo", QueueFilter(text=question_start), limit=2)
            ]
            if pair_ids and store.checklist_version(pair_ids[0]) is None:
                store.save_checklist(pair_ids[0], checklist, author="benchwright-demo", origin="generated",
                                     draft=not is_valid(checklist))
        _demo_answers(store)
    return db_path


def _demo_answers(store: Store) -> None:
    """Sample answers and judgments so the judge inspector (``j``) has something to show (idempotent)."""
    from benchwright.core.importers.answers import AnswerRecord

    for i, rec in enumerate(demo_mod.demo_answers()):
        rows = store.queue_page("benchwright-demo", QueueFilter(text=rec["question_startswith"]), limit=1)
        if not rows:
            continue
        pair_id = rows[0].id
        store.import_answers([AnswerRecord(line=i + 1, text=rec["answer"], pair_ref=pair_id)], model=rec["model"],
                             condition=rec["condition"], created_by="benchwright-demo", source_format="demo")
        (answer,) = store.answers(pair_id=pair_id, model=rec["model"], condition=rec["condition"])
        version = store.checklist_version(pair_id)
        for j in rec["judgments"]:
            store.save_judgment(answer.id, j["judge"], j["judge_model"], entries=j["entries"],
                                run_index=j["run_index"], checklist_version=version.version if version else None,
                                created_by="benchwright-demo", uid=f"demo-{answer.id}-{j['judge']}-{j['run_index']}")
        fm = rec.get("failure_mode")
        if fm and store.failure_mode(answer.id) is None:
            store.add_failure_mode(answer.id, fm["mode"], fm["rationale"], "llm", judge_model="sample-judge")


def _demo_probes(store: Store) -> None:
    """Import the demo probes shipped with benchwright (once; a newer benchwright's probes replace them)."""
    from benchwright.core.probes import probe_fingerprint, read_probe_folder, sample_probe_dirs

    known = set(store.probe_ids())
    for folder in sample_probe_dirs():
        probe_obj, variants = read_probe_folder(folder)
        fingerprint = probe_fingerprint(probe_obj, variants)
        if probe_obj.id in known and store.probe_record(probe_obj.id)["fingerprint"] == fingerprint:
            continue
        store.save_probe(probe_obj, variants, fingerprint, by="benchwright-demo")

