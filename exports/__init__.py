"""benchwright.exports: releases and export formats. Takes domain objects from core, writes files.

A release (:func:`write_release`) is a folder with data/test.jsonl, data/test.parquet, a dataset card
(README.md), CHANGELOG.md and manifest.json; :func:`verify_release` checks one and :func:`read_release`
reads one back; signed-off probes go under probes/ in NITR's layout (:mod:`.probes`). See docs/releases.md.
"""

from .card import dataset_card, size_category
from .probes import ReleaseProbe
from .release import (
    RELEASE_FORMAT,
    VerifyReport,
    changelog,
    pseudonymize,
    read_release,
    verify_release,
    write_release,
)
from .rows import (
    PARQUET_SCHEMA,
    ReleaseError,
    ReleaseRepository,
    ReleaseRow,
    ReleaseSource,
    ReleaseSpec,
    ReleaseText,
    extra_field_counts,
    parquet_schema,
    release_format_of,
    rows_to_table,
)

__all__ = [
    "PARQUET_SCHEMA",
    "RELEASE_FORMAT",
    "ReleaseError",
    "ReleaseProbe",
    "ReleaseRepository",
    "ReleaseRow",
    "ReleaseSource",
    "ReleaseSpec",
    "ReleaseText",
    "VerifyReport",
    "changelog",
    "dataset_card",
    "extra_field_counts",
    "parquet_schema",
    "pseudonymize",
    "read_release",
    "release_format_of",
    "rows_to_table",
    "size_category",
    "verify_release",
    "write_release",
]
