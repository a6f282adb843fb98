"""Probe work for the front ends: read a probe from disk into the store, run its oracle against its variants."""

from __future__ import annotations

from pathlib import Path

from benchwright.core.errors import BenchwrightError
from benchwright.db import Store


def _probe_and_variants(store: Store, probe_id: str):
    from benchwright.core.probes import Probe, Variant

    record = store.probe_record(probe_id)
    return Probe.model_validate(record["probe"]), [Variant.model_validate(v) for v in record["variants"]], record


def import_probe(store: Store, case_dir: Path, evaluator_dir: Path, *, spec=None, variants_dir=None, by: str):
    """Read a probe and its variants from disk (NITR layout) and store them with their fingerprint."""
    from benchwright.core.probes import probe_fingerprint, read_probe, read_variants

    probe = read_probe(case_dir, evaluator_dir, spec)
    folder = Path(variants_dir) if variants_dir else next(
        (d for d in (case_dir / "variants", evaluator_dir / "variants", case_dir.parent / "variants") if d.is_dir()),
        None)
    variants = read_variants(folder) if folder else []
    store.save_probe(probe, variants, probe_fingerprint(probe, variants), by=by)
    return probe, variants


def run_probe_variants(store: Store, probe_id: str, names: list[str] | None, *, timeout_s: float, by: str,
                       progress=None, cancel=None) -> list:
    """Run the probe against the named variants (default: all), store every run, return them.

    Raises:
        BenchwrightError: an unknown variant name, or the probe's files changed on disk since import
            (re-import it first, so runs and sign-offs refer to what was run).
    """
    from benchwright.core.probes import chain_for, probe_fingerprint, run_probe

    probe, variants, record = _probe_and_variants(store, probe_id)
    if probe_fingerprint(probe, variants) != record["fingerprint"]:
        raise BenchwrightError(f"probe {probe_id}: its files changed since it was imported; import it again first")
    by_name = {v.name: v for v in variants}
    unknown = [n for n in (names or []) if n not in by_name]
    if unknown:
        raise BenchwrightError(f"probe {probe_id} has no variant {', '.join(unknown)}; it has {', '.join(by_name)}")
    from benchwright.core.probes.runner import final_variants

    chosen = [by_name[n] for n in names] if names else final_variants(probe, variants)
    runs = []
    for variant in chosen or [None]:
        if cancel is not None and cancel.is_set():
            break
        before = chain_for(variant, variants) if variant is not None else []
        run = run_probe(probe, variant, before=before, timeout_s=timeout_s, cancel=cancel, progress=progress)
        store.record_run(run, fingerprint=record["fingerprint"], by=by)
        runs.append(run)
    return runs


def import_results(store: Store, csv_path: Path, *, docs_dir: Path | None = None, by: str, update: bool = False):
    """Import NITR's pass matrix (``docs/model_case_pass_matrix.csv``) with the case descriptions of the
    checkout's ``docs/`` (``design_matrix.md``, ``cases.md``): ``docs_dir``, by default the CSV's own folder.
    Returns the :class:`~benchwright.core.probes.results.ResultsImport` and the documentation files read.

    Raises:
        InputFileError: the CSV or a documentation file cannot be read (nothing is written).
        BenchwrightError: ``docs_dir`` is not a folder.
    """
    from benchwright.core.probes.results import read_case_docs, read_pass_matrix

    matrix = read_pass_matrix(csv_path)
    folder = Path(docs_dir) if docs_dir is not None else Path(csv_path).parent
    if not folder.is_dir():
        raise BenchwrightError(f"{folder}: not a folder (give the NITR checkout's docs/ folder)")
    cases = read_case_docs(folder)
    read = [str(folder / n) for n in ("design_matrix.md", "cases.md") if (folder / n).is_file()]
    return store.import_model_results(matrix, csv_path, cases, by=by, update=update), read


def results_report(store: Store, *, all_cases: bool = False):
    """NITR's aggregate tables (Table 3) over the project's current model verdicts, each case described by the
    imported documentation, else by the imported probe of that case number
    (:func:`benchwright.core.probes.results.merge_case_infos`)."""
    from benchwright.core.probes.results import merge_case_infos
    from benchwright.core.probes.results import results_report as build

    cases, notes = merge_case_infos(store.result_cases(), store.probe_case_infos())
    return build(store.model_results(), cases, all_cases=all_cases, notes=notes)
