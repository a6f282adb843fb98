"""The curation funnel of a project (RepoProbe §3.2): the store's facts through :mod:`benchwright.core.funnel`,
with the pairs of the latest release read from its folder."""

from __future__ import annotations

import json
from pathlib import Path

from benchwright.core.funnel import Stage, funnel, funnel_by_repository
from benchwright.db import Store


def release_pair_ids(folder: str | Path) -> set[str] | None:
    """The pair ids in a release folder's ``data/test.jsonl`` (the ``id`` of each line; of every split's
    ``data/<split>.jsonl`` in a release written per split, as its manifest lists them), or None when a file is
    gone or cannot be read (the funnel then marks ``released`` unknown)."""
    from benchwright.exports.release import MANIFEST, release_data_files

    root = Path(folder)
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8")) if (root / MANIFEST).is_file() else {}
        ids: set[str] = set()
        for jsonl, _ in release_data_files(manifest if isinstance(manifest, dict) else {}).values():
            with (root / jsonl).open(encoding="utf-8") as f:
                ids |= {json.loads(line)["id"] for line in f if line.strip()}
        return ids
    except (OSError, ValueError, KeyError, TypeError):
        return None


def project_funnel(store: Store, *, by_repository: bool = False,
                   released: set[str] | bool | None = True) -> tuple[list[Stage], dict[str, list[Stage]] | None, dict | None]:
    """``(stages, stages by repository or None, the release counted)`` of the project.

    ``released``: True (default) counts the pairs of the latest release (:meth:`Store.latest_release_record`,
    read from its folder; none when no release was made); a set gives the released pair ids (a release being
    made: its included pairs).
    """
    record = None
    if released is True:
        record = store.latest_release_record()
        released = release_pair_ids(record["path"]) if record is not None else set()
    pairs, filtered, imported = store.funnel_facts(released=released)
    stages = funnel(pairs, filtered, imported)
    per_repo = funnel_by_repository(pairs, filtered, imported) if by_repository else None
    return stages, per_repo, record


def release_curation(store: Store, preflight) -> dict:
    """What a release being made records of its curation (the manifest's ``funnel`` and
    ``repository_statistics``): the funnel with the preflight's included pairs as released, and RepoProbe
    Table 2's figures over them, files and lines counted from each repository's checkout
    (:func:`benchwright.core.code_stats.code_size`; a checkout that cannot be read is not counted)."""
    from collections import Counter

    from benchwright.core.code_stats import code_size, repository_statistics

    ids = {c.pair.id for c in preflight.included}
    stages, _, _ = project_funnel(store, released=ids)
    per_repo: Counter[str] = Counter(c.repository.name for c in preflight.included)
    repos = {c.repository.name: c.repository for c in preflight.included}
    sizes = {}
    for name, repo in sorted(repos.items()):
        try:
            sizes[name] = code_size(repo.local_path) if repo.local_path else None
        except OSError:
            sizes[name] = None
    languages = {name: repo.language or next((c.pair.language for c in preflight.included
                                              if c.repository.name == name and c.pair.language), None)
                 for name, repo in repos.items()}
    stats = repository_statistics(per_repo, sizes, languages, len(ids & store.merged_context_pairs()))
    return {"funnel": [s.to_dict() for s in stages], "repository_statistics": stats}
