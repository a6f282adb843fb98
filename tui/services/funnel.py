"""The curation funnel of a project (RepoProbe §3.2): the store's facts through :mod:`benchwright.core.funnel`,
with the pairs of the latest release read from its folder."""

from __future__ import annotations

import json
from pathlib import Path

from benchwright.core.funnel import Stage, funnel, funnel_by_repository
from benchwright.db import Store


def release_pair_ids(folder: str | Path) -> set[str] | None:
    """The pair ids in a release folder's ``data/test.jsonl`` (the ``id`` of each line), or None when the file
    is gone or cannot be read (the funnel then marks ``released`` unknown)."""
    path = Path(folder) / "data" / "test.jsonl"
    try:
        with path.open(encoding="utf-8") as f:
            return {json.loads(line)["id"] for line in f if line.strip()}
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
