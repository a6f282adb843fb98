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
    """Read a probe and its variants from disk (NITR layout) and store them with their fingerprint.

    ``case_dir`` and ``evaluator_dir`` inside a NITR checkout (``ROOT/cases/ID``, ``ROOT/evaluator/ID``, the spec
    at ``ROOT/docs/ID/SPEC.md`` or not given) import that case exactly as ``probes import ROOT --case ID`` does
    (:func:`import_nitr_checkout`: NITR's spec layouts, the checkout's shared run-time files).
    """
    from benchwright.core.probes import probe_fingerprint, read_probe, read_variants

    nitr = _nitr_case_of(Path(case_dir), Path(evaluator_dir), spec)
    if nitr is not None:
        probes, _ = import_nitr_checkout(store, nitr[0], [nitr[1]], variants_dir=variants_dir, by=by)
        record = store.probe_record(probes[0].id)
        from benchwright.core.probes import Variant

        return probes[0], [Variant.model_validate(v) for v in record["variants"]]
    probe = read_probe(case_dir, evaluator_dir, spec)
    folder = Path(variants_dir) if variants_dir else next(
        (d for d in (case_dir / "variants", evaluator_dir / "variants", case_dir.parent / "variants") if d.is_dir()),
        None)
    variants = read_variants(folder) if folder else []
    store.save_probe(probe, variants, probe_fingerprint(probe, variants), by=by)
    return probe, variants


def _nitr_case_of(case_dir: Path, evaluator_dir: Path, spec) -> tuple[Path, str] | None:
    """``(checkout, case id)`` when the two folders are one case of a NITR checkout, else None."""
    from benchwright.core.probes.nitr import is_nitr_checkout

    case, evaluator = case_dir.resolve(), evaluator_dir.resolve()
    root = case.parent.parent
    if case.parent.name != "cases" or evaluator != root / "evaluator" / case.name or not is_nitr_checkout(root):
        return None
    if spec is not None and Path(spec).resolve() not in (root / "docs" / case.name / "SPEC.md", case / "SPEC.md"):
        return None
    return root, case.name


def import_nitr_checkout(store: Store, checkout: Path, case_ids=(), *, variants_dir: Path | None = None,
                         by: str, skip_invalid: bool = False) -> tuple[list, dict]:
    """Import every case of a NITR checkout (or those of ``case_ids``) as probes, in one go (all or nothing:
    the cases and their variants are all read first, :func:`benchwright.core.probes.nitr.read_nitr_checkout`).

    Variants come from ``variants_dir``: its ``<case id>/`` sub-folder for each case (the variants layout of
    :func:`~benchwright.core.probes.read_variants`), or, when one case is imported, the folder itself. A case
    with no variants there keeps those it had; its runs and sign-offs stay (a changed fingerprint makes
    sign-offs stale). With ``skip_invalid`` the cases that read are imported and the others left out. Returns
    ``(probes, skipped)``: skipped is case id -> its problems (empty unless ``skip_invalid``).

    Raises:
        InputFileError: see :func:`~benchwright.core.probes.nitr.read_nitr_checkout` and ``read_variants``.
    """
    from benchwright.core.errors import InputFileError
    from benchwright.core.probes import Variant, probe_fingerprint, read_variants
    from benchwright.core.probes.nitr import read_nitr_cases

    probes, skipped = read_nitr_cases(checkout, case_ids)
    if skipped and not skip_invalid:
        raise InputFileError([p for problems in skipped.values() for p in problems])
    given: dict[str, list] = {}
    if variants_dir is not None:
        folder = Path(variants_dir)
        for probe in probes:
            own = folder / probe.id
            if own.is_dir():
                given[probe.id] = read_variants(own)
        if not given and len(probes) == 1:
            given[probes[0].id] = read_variants(folder)
        if not given:
            raise BenchwrightError(f"{folder}: no variants for the imported cases (a <case id>/ folder for each, "
                                   "or the variants of one case imported with --case)")
    known = set(store.probe_ids())
    for probe in probes:
        variants = given.get(probe.id)
        if variants is None:
            variants = ([Variant.model_validate(v) for v in store.probe_record(probe.id)["variants"]]
                        if probe.id in known else [])
        store.save_probe(probe, variants, probe_fingerprint(probe, variants), by=by)
    return probes, skipped


def _with_settings(probe, settings: dict[str, str] | None):
    """``probe`` with pipeline variables set (``probes run --set KEY=VALUE``)."""
    if not settings:
        return probe
    try:
        return probe.model_copy(update={"pipeline": probe.pipeline.with_variables(settings)})
    except ValueError as error:
        raise BenchwrightError(f"probe {probe.id}: {error}") from None


def run_probe_variants(store: Store, probe_id: str, names: list[str] | None, *, timeout_s: float, by: str,
                       progress=None, cancel=None, repeat: int = 1, settings: dict[str, str] | None = None) -> list:
    """Run the probe against the named variants (default: all), each ``repeat`` times in a fresh workspace,
    store every run (not those with ``settings``: pipeline variables set for this run), return them (repeats of
    a variant follow each other; see :func:`benchwright.core.probes.separation` for what differing repeats mean).

    Raises:
        BenchwrightError: an unknown variant name, or the probe's files changed on disk since import
            (re-import it first, so runs and sign-offs refer to what was run).
    """
    from benchwright.core.probes import chain_for, probe_fingerprint, run_probe

    probe, variants, record = _probe_and_variants(store, probe_id)
    if probe_fingerprint(probe, variants) != record["fingerprint"]:
        raise BenchwrightError(f"probe {probe_id}: its files changed since it was imported; import it again first")
    probe = _with_settings(probe, settings)
    by_name = {v.name: v for v in variants}
    unknown = [n for n in (names or []) if n not in by_name]
    if unknown:
        raise BenchwrightError(f"probe {probe_id} has no variant {', '.join(unknown)}; it has {', '.join(by_name)}")
    from benchwright.core.probes.runner import final_variants

    chosen = [by_name[n] for n in names] if names else final_variants(probe, variants)
    if repeat < 1:
        raise BenchwrightError(f"--repeat must be at least 1, not {repeat}")
    runs = []
    for variant in chosen or [None]:
        before = chain_for(variant, variants) if variant is not None else []
        for _ in range(repeat):
            if cancel is not None and cancel.is_set():
                return runs
            run = run_probe(probe, variant, before=before, timeout_s=timeout_s, cancel=cancel, progress=progress)
            if not settings:  # a run with variables set is not the probe's oracle as imported: not stored
                store.record_run(run, fingerprint=record["fingerprint"], by=by)
            runs.append(run)
    return runs


def import_results(store: Store, csv_path: Path, *, docs_dir: Path | None = None, by: str, update: bool = False):
    """Import NITR's pass matrix (``docs/model_case_pass_matrix.csv``) with the case descriptions of the
    checkout's ``docs/`` (``design_matrix.md``, ``cases.md``): ``docs_dir``, by default the CSV's own folder.
    ``csv_path`` may also be the checkout's root (its ``docs/model_case_pass_matrix.csv`` is read). Returns the
    :class:`~benchwright.core.probes.results.ResultsImport` and the documentation files read.

    Raises:
        InputFileError: the CSV or a documentation file cannot be read (nothing is written).
        BenchwrightError: ``docs_dir`` is not a folder.
    """
    from benchwright.core.probes.results import PASS_MATRIX_IN_CHECKOUT, read_case_docs, read_pass_matrix

    csv_path = Path(csv_path)
    if csv_path.is_dir() and (csv_path / PASS_MATRIX_IN_CHECKOUT).is_file():
        csv_path = csv_path / PASS_MATRIX_IN_CHECKOUT
    matrix = read_pass_matrix(csv_path)
    folder = Path(docs_dir) if docs_dir is not None else Path(csv_path).parent
    if not folder.is_dir():
        raise BenchwrightError(f"{folder}: not a folder (give the NITR checkout's docs/ folder)")
    cases = read_case_docs(folder)
    read = [str(folder / n) for n in ("design_matrix.md", "cases.md") if (folder / n).is_file()]
    return store.import_model_results(matrix, csv_path, cases, by=by, update=update), read


def results_report(store: Store, *, all_cases: bool = False, configurations=None, only_cases=None):
    """NITR's aggregate tables (Table 3) over the project's current model verdicts, each case described by the
    imported documentation, else by the imported probe of that case number
    (:func:`benchwright.core.probes.results.merge_case_infos`); ``configurations`` and ``only_cases`` select
    (see :func:`benchwright.core.probes.results.results_report`)."""
    from benchwright.core.probes.results import merge_case_infos
    from benchwright.core.probes.results import results_report as build

    cases, notes = merge_case_infos(store.result_cases(), store.probe_case_infos())
    return build(store.model_results(), cases, all_cases=all_cases, notes=notes, configurations=configurations,
                 only_cases=only_cases)


def run_probe_submission(store: Store, probe_id: str, submission: Path, *, timeout_s: float, progress=None,
                         cancel=None, settings: dict[str, str] | None = None):
    """The oracle of a stored probe on a submission folder (a whole case tree; see ``run_probe(submission=)``),
    not recorded (a submission is no variant of the probe). Returns the run.

    Raises:
        BenchwrightError: the probe's files changed since it was imported.
    """
    from benchwright.core.probes import probe_fingerprint, run_probe

    probe, variants, record = _probe_and_variants(store, probe_id)
    if probe_fingerprint(probe, variants) != record["fingerprint"]:
        raise BenchwrightError(f"probe {probe_id}: its files changed since it was imported; import it again first")
    return run_probe(_with_settings(probe, settings), None, submission=submission, timeout_s=timeout_s, cancel=cancel,
                     progress=progress)


def default_attempt_folder(store: Store, probe_id: str, configuration: str) -> Path:
    """``attempts/<probe>/<configuration>-<UTC time>`` beside the project file (names made safe for a path)."""
    from datetime import UTC, datetime

    def safe(text: str) -> str:
        return "".join(c if c.isalnum() or c in "._-" else "_" for c in text).strip("._") or "x"

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path(store.path).resolve().parent / "attempts" / safe(probe_id) / f"{safe(configuration)}-{stamp}"


def attempt_probe(store: Store, probe_id: str, *, model: str, regime: str, folder: Path | None = None,
                  agent_command: str | None = None, submission: Path | None = None, timeout_s: float,
                  step_timeout_s: float = 3600.0, by: str, progress=None, cancel=None):
    """A model's attempt at a stored probe (:func:`benchwright.core.probes.attempt.make_attempt`): the tasks
    handed to ``agent_command`` in order (or ``submission`` taken as the final tree), every tree kept in
    ``folder`` (each step stopped after ``step_timeout_s``), then the oracle run on the final tree (commands
    stopped after ``timeout_s``) and stored; a pass or fail is recorded as the
    configuration's verdict on the case (``model_results``, origin ``attempt``). Returns ``(attempt, run)``;
    ``run`` is None when the attempt stopped before its final tree (``attempt.error`` says why).

    Raises:
        AttemptError: see ``make_attempt``.
        BenchwrightError: the probe's files changed since it was imported.
        NotFoundError: no such probe.
    """
    from benchwright.core.probes import probe_fingerprint, run_probe
    from benchwright.core.probes.attempt import attempt_variant, make_attempt
    from benchwright.core.probes.results import CaseResult, case_number, configuration_name

    probe, variants, record = _probe_and_variants(store, probe_id)
    if probe_fingerprint(probe, variants) != record["fingerprint"]:
        raise BenchwrightError(f"probe {probe_id}: its files changed since it was imported; import it again first")
    folder = folder or default_attempt_folder(store, probe_id, configuration_name(model, regime))
    attempt = make_attempt(probe, model=model, regime=regime, folder=folder, agent_command=agent_command,
                           submission=submission, timeout_s=step_timeout_s, cancel=cancel, progress=progress)
    if attempt.error is not None:
        return attempt, None
    if progress:
        progress("evaluating the final tree")
    run = run_probe(probe, attempt_variant(attempt), timeout_s=timeout_s, cancel=cancel, progress=progress)
    attempt.verdict = run.outcome
    if not run.cancelled:
        attempt.oracle_run_id = store.record_run(run, fingerprint=record["fingerprint"], by=by)
        if run.outcome in ("pass", "fail"):
            store.record_model_result(
                CaseResult(attempt.configuration, attempt.model, attempt.regime, case_number(probe.id) or probe.id,
                           run.outcome), by=by, oracle_run_id=attempt.oracle_run_id)
    attempt.save()
    return attempt, run


EDITED_EVALUATORS = "evaluators"
"""Folder beside the project file where the rules editor keeps edited copies of evaluators it may not write
(those of a NITR checkout, which is only read): ``evaluators/<case id>/``."""


def _file_as_stored(path: Path, probe) -> dict | None:
    """``path`` (a ``pipeline.json``) decoded, when it still reads as ``probe``'s stored pipeline; else None."""
    import json

    from benchwright.core.errors import InputFileError
    from benchwright.core.probes.pipeline import pipeline_from_dict

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if pipeline_from_dict(data, source=path).to_json() == probe.pipeline.to_json():
            return data
    except (OSError, ValueError, InputFileError):
        pass
    return None


def editable_pipeline(store: Store, probe_id: str) -> tuple[dict, Path]:
    """The probe's ``pipeline.json`` as decoded JSON, for an editor to change and give back to
    :func:`save_edited_pipeline`, and its path. The file's own text is used (key order and spelling kept) when
    it still reads as the stored probe's pipeline; else the stored pipeline's JSON shape.

    Raises:
        NotFoundError: no such probe.
    """
    probe, _variants, _record = _probe_and_variants(store, probe_id)
    path = Path(probe.evaluator_dir) / "pipeline.json"
    data = _file_as_stored(path, probe)
    return (data if data is not None else probe.pipeline.to_json()), path


def save_edited_pipeline(store: Store, probe_id: str, data: dict, *, by: str) -> tuple[Path, bool]:
    """Write an edited pipeline (decoded ``pipeline.json``, e.g. from :func:`editable_pipeline`) as the probe's
    evaluator pipeline and store the probe again with it: its variants stay; the fingerprint changes, so an
    earlier sign-off becomes stale. ``data`` is written as given (every key of every module and rule kept),
    after it validates as :func:`~benchwright.core.probes.pipeline.pipeline_from_dict` reads it.

    An evaluator inside a NITR checkout is never written (the checkout is only read): the first save copies
    the evaluator folder to ``evaluators/<case id>/`` beside the project file (:data:`EDITED_EVALUATORS`; a
    new ``evaluators/<UTC time>/<case id>/`` when that folder holds an earlier copy the probe no longer uses)
    and the probe uses the copy from then on; importing the case from the checkout again goes back to the
    checkout's evaluator (the copy stays on disk). Returns ``(the pipeline.json written, whether a copy was
    made now)``.

    Raises:
        InputFileError: ``data`` is not a valid pipeline (every problem, with its JSON path).
        BenchwrightError: the probe is one shipped with benchwright (copy its folder and import the copy),
            or its ``pipeline.json`` changed on disk since it was imported (import it again first).
        NotFoundError: no such probe.
        OSError: a file cannot be written.
    """
    import json
    import shutil
    from datetime import UTC, datetime

    from benchwright.core.probes import probe_fingerprint, sample_probe_dirs
    from benchwright.core.probes.pipeline import pipeline_from_dict

    probe, variants, _record = _probe_and_variants(store, probe_id)
    evaluator = Path(probe.evaluator_dir)
    path = evaluator / "pipeline.json"
    if any(d.resolve() in path.resolve().parents for d in sample_probe_dirs()):
        raise BenchwrightError(f"probe {probe_id} is shipped with benchwright; copy its folder, import the copy, "
                               "and edit that")
    pipeline = pipeline_from_dict(data, source=path)
    if _file_as_stored(path, probe) is None:
        raise BenchwrightError(f"{path} changed since probe {probe_id} was imported; import it again before "
                               "editing its rules (nothing was saved)")
    copied = False
    checkout = Path(probe.checkout_root).resolve() if probe.checkout_root else None
    if checkout is not None and evaluator.resolve().is_relative_to(checkout):
        base = Path(store.path).resolve().parent / EDITED_EVALUATORS
        target = base / evaluator.name
        if target.exists():
            target = base / datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ") / evaluator.name
        shutil.copytree(evaluator, target, symlinks=True)
        evaluator, path, copied = target, target / "pipeline.json", True
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    probe = probe.model_copy(update={"pipeline": pipeline, "evaluator_dir": str(evaluator)})
    store.save_probe(probe, variants, probe_fingerprint(probe, variants), by=by)
    return path, copied
