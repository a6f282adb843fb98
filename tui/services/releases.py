"""Work that needs both the store (db) and the release writer (exports): the CLI and the app call these,
so neither front end owns logic of its own."""

from __future__ import annotations

import contextlib
import json
import re
from importlib import metadata
from pathlib import Path

from benchwright.core.errors import BenchwrightError, Remedy, with_remedy
from benchwright.core.models import utc_now
from benchwright.db import SCHEMA_VERSION, Store
from benchwright.db.releases import Preflight, ProbePreflight

from .probes import import_nitr_checkout


def _agreement_figures(store: Store, n_released: int) -> tuple[dict, str]:
    """The card's agreement figures and the sentence saying what they cover.

    Computed over every reviewed pair of the project (the pairs with two or more submitted reviews), not
    only the released ones: those are all accepted, so agreement among them alone is undefined.
    Figures are worded by :func:`benchwright.core.agreement.figure_text`."""
    from benchwright.core.agreement import agreement_report

    ratings = store.review_ratings()
    per_pair: dict[str, set[str]] = {}
    for r in ratings["decision"]:
        per_pair.setdefault(r.item, set()).add(r.annotator)
    n_reviewed = sum(1 for who in per_pair.values() if len(who) >= 2)
    out = {}
    for name, fa in agreement_report(ratings).items():
        observed = fa.krippendorff.observed_agreement
        out[name] = {
            "pairs": fa.krippendorff.n_items,
            "fleiss_kappa": fa.fleiss.text,
            "krippendorff_alpha": fa.krippendorff.text,
            "percent_agreement": "n/a" if observed is None else f"{100 * observed:.1f}%",
        }
    scope = (f"Computed over the {n_reviewed} reviewed pairs of the project (pairs with two or more submitted "
             f"reviews, whatever their decision), not only the {n_released} released pairs: those are all "
             "accepted, so agreement among them alone would be undefined. `pairs` counts the pairs each figure "
             "rests on; `percent_agreement` is the share of agreeing pairs of ratings.")
    return out, scope


def release_models(store: Store, pair_ids: list[str]) -> tuple[dict[str, int], list[dict]]:
    """The judge separation's provenance of a release (RepoProbe §5.1.3; the manifest's ``checklist_generators``
    and ``judges``): the models that generated the pairs' current checklists (``llm:MODEL`` authors) with the
    number of pairs each, and per judge and judge model that scored answers to the pairs (the current judgment
    of each run, scored ones) ``{"judge", "model", "answers", "runs", "self_judged"}``, where ``self_judged``
    counts the answers the judge model wrote or whose current checklist it generated (core's
    :func:`~benchwright.core.judges.self_judging`). Judges in report order, then by model.
    """
    from collections import Counter

    from benchwright.core.judges import JUDGES, checklist_generator, is_human_judge, self_judging

    from .llm import configured_providers

    authors: dict[str, str | None] = {}
    generators: Counter[str] = Counter()
    for pid in pair_ids:
        current = store.checklist_version(pid)
        authors[pid] = current.author if current is not None else None
        model = checklist_generator(authors[pid])
        if model is not None:
            generators[model] += 1
    answers = {a.id: a for a in store.answers() if a.qa_pair_id in authors}
    try:
        providers = configured_providers(store)
    except BenchwrightError:  # an unreadable benchwright.toml: compare the names as recorded
        providers = ()
    groups: dict[tuple[str, str], dict] = {}
    for j in store.judgments(latest_only=True):
        a = answers.get(j.answer_id)
        if a is None or not j.scored or is_human_judge(j.judge):  # annotators' scores are not a judge of the release
            continue
        g = groups.setdefault((j.judge, j.judge_model), {"answers": set(), "runs": 0, "self": set()})
        g["answers"].add(a.id)
        g["runs"] += 1
        if self_judging(j.judge_model, answer_model=a.model, checklist_author=authors[a.qa_pair_id],
                        providers=providers) is not None:
            g["self"].add(a.id)
    order = {name: i for i, name in enumerate(JUDGES)}
    judges = [{"judge": judge, "model": model, "answers": len(g["answers"]), "runs": g["runs"],
               "self_judged": len(g["self"])}
              for (judge, model), g in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], len(order)),
                                                                               kv[0][0], kv[0][1]))]
    return dict(sorted(generators.items())), judges


def release_scores(store: Store, pair_ids: list[str], axes: tuple[str, ...] | None = None) -> dict | None:
    """The card's Scores section and score figures of a release (the manifest's ``scores``): the released pairs'
    answers' score distribution and mean per model and judge, overall and per stratum of ``axes`` (default
    :data:`benchwright.core.release_scores.SCORE_AXES`), from the report's inputs (human overrides applied, human
    judgments left out): :func:`benchwright.core.release_scores.release_scores`. None when no answer to the pairs
    is scored (a release without judged answers keeps its bytes)."""
    from benchwright.core.release_scores import SCORE_AXES
    from benchwright.core.release_scores import release_scores as scores_of
    from benchwright.db.report import report_inputs

    return scores_of(report_inputs(store).runs, pair_ids, axes=SCORE_AXES if axes is None else axes)


def release_figures(figures: bool | str | list[str] | tuple[str, ...]) -> list[str] | None:
    """The ``ReleaseSpec.figures`` of a ``create_release(figures=...)``: True (or ``"all"``) every kind of
    :data:`benchwright.exports.figures.FIGURE_KINDS`, False none (no ``figures`` field: a release made before
    figures existed), ``"none"`` or an empty list none (recorded as ``[]``), a list (or ``releases create
    --figures``' comma-separated text) those kinds (in that order).

    Raises:
        BenchwrightError: an unknown kind (the kinds are listed).
    """
    from benchwright.exports.figures import FIGURE_KINDS

    if figures is True or figures == "all":
        return list(FIGURE_KINDS)
    if figures is False:
        return None
    if isinstance(figures, str):
        figures = [] if figures.strip() == "none" else [k.strip() for k in figures.split(",") if k.strip()]
    unknown = [k for k in figures if k not in FIGURE_KINDS]
    if unknown:
        raise BenchwrightError(f"unknown figure kind {unknown[0]!r}; use all, none or some of "
                               f"{', '.join(FIGURE_KINDS)}")
    return [k for k in FIGURE_KINDS if k in figures]


def release_rows(preflight: Preflight) -> list:
    """The release rows of the included pairs."""
    from benchwright.exports import ReleaseRow

    return [
        ReleaseRow.from_domain(c.pair, c.repository, c.checklist, c.final_decision, c.adjudicated, c.annotators,
                               text=c.text, original=c.original)
        for c in preflight.included
    ]


def release_probes(preflight: ProbePreflight) -> list:
    """The release probes (:class:`benchwright.exports.ReleaseProbe`) of the probe preflight's included probes."""
    from benchwright.exports import ReleaseProbe

    return [ReleaseProbe(probe=c.probe, variants=c.variants, fingerprint=c.fingerprint,
                         signed_off_by=c.signoff.annotator, signed_off_at=c.signoff.created_at,
                         sign_off_reason=c.signoff.reason, runs=c.runs) for c in preflight.included]


def create_release(
    store: Store, preflight: Preflight, name: str, version: str, out: Path, *, by: str,
    with_annotators: bool = False, license: str = "cc-by-4.0", created_at: str | None = None,
    record: bool = True, progress=None, previous_path: Path | None = None, notes: list[str] | None = None,
    with_probes: bool = True, probe_preflight: ProbePreflight | None = None, curation: dict | None = None, models: dict | None = None,
    methods: dict | None = None, figures: bool | str | list[str] | tuple[str, ...] = True,
    split_files: bool = True, provenance: dict | None = None,
) -> Path:
    """Write release ``name`` ``version`` of the preflight's included pairs under ``out`` and record it.

    ``provenance`` (``{"benchwright_version": ..., "schema_version": ...}``, a recorded manifest's) gives the tool
    and project-schema versions written in the manifest and the card's Provenance table instead of the running
    ones, so a rebuild after an upgrade or a schema migration reproduces the recorded bytes.

    The manifest and card name the checklist generators and the judges (:func:`release_models`); ``models``
    (``{"checklist_generators": ..., "judges": ...}``, a recorded manifest's) gives them instead, a value None
    leaving it out (a rebuild of a release made before they were recorded).

    The manifest and card count the released pairs by their latest difficulty calibration and item statistics
    (:func:`benchwright.tui.services.calibration.release_difficulty`); ``methods`` (``{"difficulty": ...}``, a
    recorded manifest's) gives them instead, None leaving them out (a rebuild reproduces the recorded figures).
    Likewise the scores of the released pairs' answers (:func:`release_scores`; ``methods["scores"]``).

    ``figures`` (:func:`release_figures`: True every kind, False none, or a list of kinds) are the PNG figures the
    card links (:mod:`benchwright.exports.figures`), each drawn where its data is in the release.

    ``split_files`` (``ReleaseSpec.split_files``): pairs with splits other than ``test`` are written one pair of
    data files per split (docs/releases.md, "Splits"); False writes every row to ``data/test.*``.

    The manifest and card carry the curation funnel and RepoProbe Table 2's figures
    (:func:`benchwright.tui.services.funnel.release_curation`); ``curation`` (``{"funnel": ...,
    "repository_statistics": ...}``, a recorded manifest's) gives them instead, so a rebuild reproduces them.

    With ``with_probes`` (the default) the signed-off probes of ``probe_preflight`` (default: the store's
    :meth:`~benchwright.db.Store.probe_release_preflight`) go in too, under ``probes/`` in NITR's layout; a
    release of probes only is allowed. The manifest has a ``probes`` field only when probes went in.

    ``created_at`` (default: now) is the only time written, so the same state and time give the same bytes.

    The record and the folder agree whatever happens (docs/releases.md, "Guarantees"): the release is recorded
    as pending before any file is written, and confirmed once the folder is in place. An attempt that died
    (killed, or the confirmation refused for a held write lock) is resumed by the next one: a folder of the
    pending record that verifies is adopted (recorded, not written again); a pending record whose folder never
    appeared is dropped with its ``.partial`` leftovers and the release is written afresh. ``notes`` (when
    given) receives a sentence about such a resumption.

    Raises:
        BenchwrightError: the version exists, the release would be empty, another process is writing it, a
            folder is in the way, or writing failed (nothing is left but, after a failed confirmation, the
            pending folder the next attempt records).
    """
    from pydantic import ValidationError

    from benchwright.exports import ReleaseSpec, write_release

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise BenchwrightError(f"release name {name!r}: use letters, digits, '.', '_' and '-' (no spaces or slashes)")
    if not re.fullmatch(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)", version):
        raise BenchwrightError(f"release version {version!r}: write it as X.Y.Z, e.g. 1.0.0")
    if record and store.release_exists(name, version):
        raise store.release_exists_error(name, version)
    stale = store.pending_release(name, version) if record else None
    if stale is not None:
        if stale.alive:
            raise BenchwrightError(f"release {name} {version} is being written by another process (since "
                                   f"{stale.started_at}, to {stale.path}); wait for it to finish")
        adopted = _adopt_pending(store, stale, with_annotators=with_annotators, license=license,
                                 with_probes=with_probes, selection=preflight.selection)
        if adopted is not None:
            if notes is not None:
                notes.append(f"recorded {adopted}: an interrupted attempt had written it at {stale.created_at} "
                             "(verified; not written again)")
            return adopted
    target = Path(out) / f"{name}-{version}"
    if record and (target.exists() or target.is_symlink()):
        raise BenchwrightError(
            f"{target} exists already, but this project has no record of release {name} {version}: it was made "
            "elsewhere or by hand; check it with benchwright releases verify, then move it away or choose a new "
            "version")
    if with_probes and probe_preflight is None:
        probe_preflight = store.probe_release_preflight()
    probes = release_probes(probe_preflight) if with_probes and probe_preflight is not None else []
    if not preflight.included and not probes:
        raise with_remedy(BenchwrightError("the release would be empty: no pair is accepted with a valid checklist"
                                           + (" and no probe is signed off" if with_probes else "")),
                          Remedy.SEE_PREFLIGHT)
    probe_options = {"probes": probes, "probes_excluded": probe_preflight.excluded if probes else ()}
    previous = store.previous_release(name, before_version=None if record else version)
    previous_dir = None
    if previous_path is not None:
        previous_dir = Path(previous_path)
    elif previous is not None:
        previous_dir = Path(previous["path"])
        if not previous_dir.is_dir():
            raise with_remedy(BenchwrightError(
                f"the previous release {name} {previous['version']} was written to {previous_dir}, which is gone, "
                "so the changelog cannot compare against it: restore it there"), Remedy.GIVE_PREVIOUS)
    agreement, agreement_scope = _agreement_figures(store, len(preflight.included))
    if curation is None:  # the funnel and RepoProbe Table 2's figures, computed now and kept in the manifest
        from .funnel import release_curation

        curation = release_curation(store, preflight)
    if models is None:
        generators, judges = release_models(store, [c.pair.id for c in preflight.included])
        models = {"checklist_generators": generators, "judges": judges}
    if methods is None:
        from .calibration import release_difficulty

        released = [c.pair.id for c in preflight.included]
        methods = {"difficulty": release_difficulty(store, released), "scores": release_scores(store, released)}
    figure_kinds = release_figures(figures)
    try:
        spec = ReleaseSpec(
            name=name, version=version, created_at=created_at or utc_now(), created_by=by,
            benchwright_version=(provenance or {}).get("benchwright_version") or metadata.version("benchwright"),
            schema_version=(provenance or {}).get("schema_version") or SCHEMA_VERSION, license=license,
            description=f"{name}: repository-level code-comprehension questions with weighted checklists, "
                        "made with benchwright.",
            prompt_hashes={}, judge_hashes={},
            agreement=agreement, agreement_scope=agreement_scope,
            excluded=preflight.excluded, pseudonym_salt=pseudonym_salt(store, by),
            funnel=curation.get("funnel"), repository_statistics=curation.get("repository_statistics"),
            include_dropped=preflight.include_dropped,
            selection=(None if preflight.selection is None
                       else preflight.selection.manifest_entry(len(preflight.included))),
            checklist_generators=models.get("checklist_generators"), judges=models.get("judges"),
            difficulty=methods.get("difficulty"), scores=methods.get("scores"), figures=figure_kinds,
            split_files=split_files,
        )
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
        raise BenchwrightError(f"cannot make release {name} {version}: {problems}") from None
    if not record:
        return write_release(release_rows(preflight), spec, out, previous_dir=previous_dir,
                             with_annotators=with_annotators, progress=progress, **probe_options)
    from benchwright.db.llm import claim_owner

    owner = claim_owner()
    taken = store.begin_release(name, version, created_at=spec.created_at, created_by=by,
                                path=str(target.resolve()), owner=owner)
    for folder in {target.parent, *([Path(taken.path).parent] if taken else [])}:
        _remove_partials(folder, f"{name}-{version}")  # left by attempts that died; this one owns the record now
    try:
        try:
            path = write_release(release_rows(preflight), spec, out, previous_dir=previous_dir,
                                 with_annotators=with_annotators, progress=progress, **probe_options)
        except BaseException as e:
            with contextlib.suppress(Exception):  # else the next attempt drops it (its folder never appeared)
                store.drop_pending_release(name, version, owner)
            if isinstance(e, OSError):  # a full disk, a folder that cannot be written: nothing was left
                raise BenchwrightError(f"cannot write release {name} {version} under {out}: {e}") from None
            raise
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        try:
            store.confirm_release(name, version, owner=owner, n_pairs=len(preflight.included), manifest=manifest)
        except BenchwrightError as e:
            raise BenchwrightError(f"wrote {path} but could not record it ({e}); run the same command again: "
                                   "it records the folder without writing it again") from None
    finally:
        store.end_release_attempt(owner)
    return path


def _remove_partials(folder: Path, folder_name: str) -> None:
    """Remove ``.<folder_name>.<random>.partial`` folders (a killed attempt's unfinished files)."""
    import shutil

    for p in folder.glob(f".{folder_name}.*.partial"):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)


def _adopt_pending(store: Store, pending, *, with_annotators: bool, license: str,
                   with_probes: bool = True, selection=None) -> Path | None:
    """Resume an attempt that died: record its folder when it is the intact release it started (same name,
    version and time, every checksum right) and return it; None when the folder never appeared.

    Raises:
        BenchwrightError: a folder is at the pending path but is not that release (damaged, or another), or
            it was written with other options than asked now.
    """
    from benchwright.exports import verify_release

    folder = Path(pending.path)
    if not (folder.exists() or folder.is_symlink()):
        return None
    report = verify_release(folder)
    manifest: dict = {}
    if report.ok:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    same = report.ok and all(manifest.get(k) == getattr(pending, k) for k in ("name", "version", "created_at"))
    if not same:
        why = "it does not verify" if not report.ok else "its manifest names another release or time"
        raise BenchwrightError(
            f"{folder} is where an interrupted attempt wrote release {pending.name} {pending.version}, but {why}: "
            "move it away and run the command again")
    named = manifest.get("annotators") == "named"
    recorded = manifest.get("selection") or {}
    wanted = (selection.name, selection.version) if selection is not None else (None, None)
    if (recorded.get("name"), recorded.get("version")) != wanted:
        was = f"from selection {recorded.get('name')} v{recorded.get('version')}" if recorded else "without --selection"
        raise BenchwrightError(
            f"{folder} was written by an interrupted attempt {was}; repeat that command to record it, or move the "
            "folder away to write it with these options")
    if "probes" in manifest and not with_probes:
        raise BenchwrightError(
            f"{folder} was written by an interrupted attempt with probes; repeat that command (without "
            "--without-probes) to record it, or move the folder away to write it without probes")
    if named != with_annotators or manifest.get("license") != license:
        raise BenchwrightError(
            f"{folder} was written by an interrupted attempt with license {manifest.get('license')} and "
            f"{'named' if named else 'pseudonymous'} annotators; repeat that command to record it, or move the "
            "folder away to write it with these options")
    store.confirm_release(pending.name, pending.version, owner=pending.owner, n_pairs=int(manifest["n_pairs"]),
                          manifest=manifest)
    return folder


def pseudonym_salt(store: Store, by: str) -> str:
    """The project's secret for pseudonymous annotator ids (made once, kept in the project's settings, never
    written into a release), so a pseudonym cannot be checked by guessing names."""
    import secrets

    salt = store.setting("pseudonym_salt")
    if salt is None:
        salt = secrets.token_hex(16)
        store.set_setting("pseudonym_salt", salt, by=by)
    return salt


def release_split_plan(preflight: Preflight, *, split_files: bool = True) -> tuple[dict[str, int] | None, str | None]:
    """``(rows per split's data files, or None for the one data/test.* pair; the reason the release would be
    refused, or None)`` of the preflight's included pairs (:func:`benchwright.exports.release.split_plan`), for
    ``releases preflight`` and ``releases create`` to show before anything is written."""
    from benchwright.exports.release import split_plan
    from benchwright.exports.rows import ReleaseError

    try:
        return split_plan([c.pair for c in preflight.included], split_files=split_files), None
    except ReleaseError as e:
        return None, str(e).removesuffix("; nothing was written")


def rebuild_release(store: Store, name: str, version: str, out: Path, *, by: str,
                    with_annotators: bool = False) -> Path:
    """Write a recorded release again from the current project state with its recorded time (to check that
    the state still gives the same bytes, or to restore a lost folder). Nothing is recorded. The checklist
    generators and judges are the recorded manifest's (judging the answers after the release changes no byte), and
    so are the benchwright and schema versions (an upgrade or a migration alone changes no byte: only a change of
    the data makes the rebuild refuse).

    Raises:
        BenchwrightError: no such release recorded.
    """
    record = store.release_record(name, version)
    if record is None:
        raise BenchwrightError(f"no release {name} {version} was made from this project")
    manifest = record["manifest"]
    selection = None
    if manifest.get("selection"):  # the version of the selection it was made from, not the latest of the name
        selection = store.selection(manifest["selection"]["name"], manifest["selection"]["version"])
    path = create_release(
        store, store.release_preflight(include_dropped=bool(manifest.get("include_dropped")), selection=selection),
        name, version, out,
        by=record["created_by"], curation={k: manifest.get(k) for k in ("funnel", "repository_statistics")},
        with_annotators=with_annotators, license=manifest.get("license", "cc-by-4.0"),
        created_at=record["created_at"], record=False, with_probes="probes" in manifest,
        models={k: manifest.get(k) for k in ("checklist_generators", "judges")},
        methods={"difficulty": manifest.get("difficulty"), "scores": manifest.get("scores")},
        figures=manifest.get("figures", False), split_files="splits" in manifest,
        provenance={k: manifest.get(k) for k in ("benchwright_version", "schema_version")},
    )
    rebuilt = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    if with_annotators == (manifest.get("annotators") == "named") and rebuilt.get("files") != manifest.get("files"):
        import shutil

        shutil.rmtree(path, ignore_errors=True)
        raise BenchwrightError(
            f"the project has changed since {name} {version} was released: rebuilding gives different files, so "
            "nothing was written; make a new version instead")
    return path


def import_release(store: Store, folder: Path, *, by: str, probes: list | None = None) -> tuple[int, int]:
    """Bring a release back into the project: its repositories, pairs (same ids; a pair shipped with a rewritten
    text comes in with its original text as version 1 and the text shipped as version 2, of the origin and model
    its row's ``source.text`` names), and checklists (origin ``imported``), and its probes that the project does not have (``probes/`` read as a NITR checkout, with its
    variants; their runs and sign-offs stay in the release's validation matrices: run and sign them off here; a
    probe of the same id is kept as it is). Verifies the folder first.
    Idempotent. Returns ``(pairs added, checklists added)``; ``probes`` (when given) receives the probes imported.

    Raises:
        BenchwrightError: the folder does not verify, a repository conflicts with one registered here, or a
            probe of the release cannot be read (``InputFileError``).
    """
    from benchwright.core.importers import ParseResult
    from benchwright.exports import read_release

    manifest, rows = read_release(folder)
    released = (manifest.get("probes") or {}).get("ids") or []
    new = [pid for pid in released if pid not in set(store.probe_ids())]
    if new:  # a probe the project has already is kept as it is (its runs and sign-offs refer to its own files)
        variants = Path(folder) / "probes" / "variants"
        imported, _ = import_nitr_checkout(store, Path(folder) / "probes", new,
                                           variants_dir=variants if variants.is_dir() else None, by=by)
        if probes is not None:
            probes.extend(imported)
    if not rows:
        return 0, 0
    domain = [row.to_domain() for row in rows]
    result = ParseResult(format="release", file=str(folder), read=len(rows))
    seen_repos = {}
    rewritten = {}
    for row, (pair, repo, _) in zip(rows, domain, strict=True):
        text = row.source.text
        if text is not None:  # the pair comes in as first imported; the text shipped becomes its next version
            rewritten[pair.id] = (text, pair.question, pair.reference_answer)
            pair = pair.model_copy(update={"question": text.original_question,
                                           "reference_answer": text.original_reference_answer})
        result.pairs.append(pair)
        seen_repos.setdefault(repo.name, repo)
    result.repositories = list(seen_repos.values())
    manifest_path = folder / "manifest.json"
    before = store.count_pairs()
    known = set(store.filtered_pair_ids(by)) if rewritten else set()
    store.apply_import(result, annotator=by, file_path=manifest_path,
                       options={"release": f"{manifest.get('name')} {manifest.get('version')}"})
    added_pairs = store.count_pairs() - before
    added = set(store.filtered_pair_ids(by)) - known if rewritten else set()
    for pid, (text, question, answer) in rewritten.items():
        if pid in added:
            store.save_text_version(pid, question, answer, origin=text.origin, by=by, model=text.model)
    entries = []
    for pair, _, checklist in domain:
        current = store.checklist_version(pair.id)
        if current is None or current.checklist.to_json() != checklist.to_json():
            entries.append((pair.id, checklist, "release"))
    store.import_checklists(entries, author=by)
    return added_pairs, len(entries)
