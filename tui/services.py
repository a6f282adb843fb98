"""Work that needs both the store (db) and the release writer (exports): the CLI and the app call these,
so neither front end owns logic of its own."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

from benchwright.core.errors import BenchwrightError
from benchwright.core.models import utc_now
from benchwright.db import SCHEMA_VERSION, Store
from benchwright.db.releases import Preflight


def _agreement_figures(store: Store, pair_ids: set[str]) -> dict:
    from benchwright.core.agreement import agreement_report

    ratings = {f: [r for r in rs if r.item in pair_ids] for f, rs in store.review_ratings().items()}
    out = {}
    for name, fa in agreement_report(ratings).items():
        out[name] = {
            "pairs": fa.n_items,
            "fleiss_kappa": fa.fleiss.value,
            "krippendorff_alpha": fa.krippendorff.value,
        }
    return out


def release_rows(preflight: Preflight) -> list:
    """The release rows of the included pairs."""
    from benchwright.exports import ReleaseRow

    return [
        ReleaseRow.from_domain(c.pair, c.repository, c.checklist, c.final_decision, c.adjudicated, c.annotators)
        for c in preflight.included
    ]


def create_release(
    store: Store, preflight: Preflight, name: str, version: str, out: Path, *, by: str,
    with_annotators: bool = False, license: str = "cc-by-4.0", created_at: str | None = None,
    record: bool = True, progress=None,
) -> Path:
    """Write release ``name`` ``version`` of the preflight's included pairs under ``out`` and record it.

    ``created_at`` (default: now) is the only time written, so the same state and time give the same bytes.

    Raises:
        BenchwrightError: the version exists, the release would be empty, or writing failed (nothing is left).
    """
    from benchwright.exports import ReleaseSpec, write_release

    if record and store.release_exists(name, version):
        raise BenchwrightError(f"release {name} {version} exists already; choose a new version")
    if not preflight.included:
        raise BenchwrightError("the release would be empty: no pair is accepted with a valid checklist "
                               "(see benchwright release preflight --list)")
    previous = store.previous_release(name)
    previous_dir = Path(previous["path"]) if previous and Path(previous["path"]).is_dir() else None
    spec = ReleaseSpec(
        name=name, version=version, created_at=created_at or utc_now(), created_by=by,
        benchwright_version=metadata.version("benchwright"), schema_version=SCHEMA_VERSION, license=license,
        description=f"{name}: repository-level code-comprehension questions with weighted checklists, made with benchwright.",
        prompt_hashes={}, judge_hashes={},
        agreement=_agreement_figures(store, {c.pair.id for c in preflight.included}),
        excluded=preflight.excluded,
    )
    path = write_release(release_rows(preflight), spec, out, previous_dir=previous_dir,
                         with_annotators=with_annotators, progress=progress)
    if record:
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        store.record_release(name, version, created_at=spec.created_at, created_by=by, path=str(path.resolve()),
                             n_pairs=len(preflight.included), manifest=manifest)
    return path
