"""Releases: a versioned folder a benchmark is published as.

Layout of ``<out_dir>/<name>-<version>/``::

    data/test.jsonl     one JSON object per pair, sorted by id (keys sorted, compact, UTF-8, "\\n" line ends)
    data/test.parquet   the same rows, explicit nested Arrow schema (:data:`PARQUET_SCHEMA`)
                        (a release written per split, ``ReleaseSpec.split_files``, has data/<split>.jsonl and
                        data/<split>.parquet for each split instead, listed in the manifest's ``splits``)
    README.md           dataset card: Hugging Face YAML front matter, then statistics (see card.py)
    CHANGELOG.md        against the previous release (pairs added, removed, edited; checklist changes)
    figures/*.png       the card's figures, when the release asks for them and has their data (see figures.py)
    manifest.json       sha256 and size of every other file, versions, prompt and judge hashes

:func:`write_release` writes everything into a hidden temporary sibling folder and renames it into place
at the end, so an interrupted release leaves nothing that looks like a release. The only time written is
``ReleaseSpec.created_at`` (from the release record): the same rows and spec give byte-identical files
(with the same versions of benchwright, pyarrow and orjson). :func:`verify_release` checks a folder against its
manifest and the schema; :func:`read_release` reads one back for ``import release``.

Annotator names are replaced by :func:`pseudonymize` ids unless ``with_annotators`` is given.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from operator import attrgetter
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ValidationError

from benchwright.core.checklist import Checklist, validate
from benchwright.core.checklist_diff import diff_checklists, render_diff_text, render_word_diff, word_diff
from benchwright.core.importers import paused_gc
from benchwright.core.llm.scrub import env_secrets, scrub_value
from benchwright.core.vocabulary import UNASSIGNED_SPLIT, release_split_problem

from .card import dataset_card
from .probes import PROBES_INDEX, ReleaseProbe, check_probes, probe_files, probes_changelog, probes_summary
from .probes import read_index as _previous_probes
from .rows import (
    ReleaseError,
    ReleaseRow,
    ReleaseSpec,
    encode_rows,
    parquet_schema,
    rows_to_table,
)

RELEASE_FORMAT = 4
"""The newest version of the release layout and row schema (``release_format`` in manifest.json). Format 2 added
the ``extra`` field, format 3 the row's ``source.text`` (the text version shipped and the original, for pairs whose
text is not the imported one), format 4 the row's ``task_set`` and ``split``; a release whose pairs have no task set
is written as format 3, and one whose pairs also all ship the imported text as format 2
(:func:`~benchwright.exports.rows.release_format_of`). :func:`verify_release` and :func:`read_release` read all."""
READABLE_FORMATS = (1, 2, 3, 4)
"""Release formats this version verifies and reads."""

DATA_JSONL = "data/test.jsonl"
DATA_PARQUET = "data/test.parquet"
CARD = "README.md"
CHANGELOG = "CHANGELOG.md"
MANIFEST = "manifest.json"
RELEASE_FILES = (CHANGELOG, CARD, DATA_JSONL, DATA_PARQUET)
"""Every file a release holds besides manifest.json (which lists them); a release written per split holds
:func:`split_data_files` of each split in place of the two ``data/test.*`` files."""


def split_data_files(split: str) -> tuple[str, str]:
    """The JSONL and Parquet file of ``split`` in a release written per split: ``data/<split>.jsonl``,
    ``data/<split>.parquet`` (``split`` a valid name, :func:`~benchwright.core.vocabulary.release_split_problem`)."""
    return f"data/{split}.jsonl", f"data/{split}.parquet"


def release_data_files(manifest: dict) -> dict[str | None, tuple[str, str]]:
    """The data files of a release by split, from its manifest: ``{split: (jsonl, parquet)}`` for a release
    written per split (the manifest's ``splits``, ``{split: rows}``), else ``{None: (DATA_JSONL, DATA_PARQUET)}``."""
    splits = manifest.get("splits")
    if isinstance(splits, dict) and splits:
        return {s: split_data_files(s) for s in splits}
    return {None: (DATA_JSONL, DATA_PARQUET)}


def split_plan(pairs: Sequence, *, split_files: bool = True) -> dict[str, int] | None:
    """The data files a release of ``pairs`` (objects with ``id``, ``task_set`` and ``split``: release rows or the
    project's pairs) writes: ``{split: rows}`` when written per split (:func:`_split_layout`), None for the one
    ``data/test.*`` pair. For the preflight, before anything is written.

    Raises:
        ReleaseError: a split name ``datasets`` does not accept, and the other refusals of :func:`_split_layout`.
    """
    fmt = 4 if any(p.task_set is not None for p in pairs) else 3
    layout = _split_layout(sorted(pairs, key=attrgetter("id")), fmt, split_files)
    return None if layout is None else {split: len(indexes) for split, indexes in layout.items()}


def _split_layout(rows: Sequence[ReleaseRow], release_format: int, split_files: bool) -> dict[str, list[int]] | None:
    """The indexes of ``rows`` by the split whose data files they go to (sorted by split name), or None when the
    release writes every row to ``data/test.*``: without ``split_files``, before release format 4, or when no row
    has a split or every row's split is ``test``. Rows without a split go to :data:`UNASSIGNED_SPLIT`.

    Raises:
        ReleaseError: a split is no valid ``datasets`` split name, two splits differ only in case (one file on
            a case-insensitive disk), or some rows have no split while others have the split ``unassigned``
            (naming the split and some of its pairs; nothing is written).
    """
    if not split_files or release_format < 4:
        return None
    splits = [r.split for r in rows]
    if all(x is None for x in splits) or all(x == "test" for x in splits):
        return None
    layout: dict[str, list[int]] = {}
    for i, x in enumerate(splits):
        layout.setdefault(UNASSIGNED_SPLIT if x is None else x, []).append(i)

    def pairs(split: str | None) -> str:
        ids = [rows[i].id for i, x in enumerate(splits) if x == split]
        return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")

    for split in sorted(x for x in set(splits) if x is not None):
        problem = release_split_problem(split)
        if problem:
            raise ReleaseError(f"{problem}: pairs {pairs(split)}; rename the split (or release without per-split "
                               "files: releases create --one-data-file); nothing was written")
    if None in splits and UNASSIGNED_SPLIT in splits:
        raise ReleaseError(f"pairs {pairs(None)} have no split and pairs {pairs(UNASSIGNED_SPLIT)} have the split "
                           f"{UNASSIGNED_SPLIT!r}, the data file pairs without a split go to: give them a split; "
                           "nothing was written")
    folded: dict[str, str] = {}
    for split in sorted(layout):
        other = folded.setdefault(split.casefold(), split)
        if other != split:
            raise ReleaseError(f"splits {other!r} and {split!r} differ only in case (one data file on some disks): "
                               f"pairs {pairs(other)} and {pairs(split)}; give them one spelling; nothing was written")
    return dict(sorted(layout.items()))

MANIFEST_FIELDS = (
    "name", "version", "created_at", "created_by", "benchwright_version", "schema_version", "release_format",
    "license", "n_pairs", "annotators", "prompt_hashes", "judge_hashes", "excluded", "previous_release", "files",
)
"""Keys every manifest.json has."""

PARQUET_OPTIONS: dict = {
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "1.0",
    "version": "2.6",
    "row_group_size": 4096,
}
"""The fixed settings every release's Parquet file is written with."""


def pseudonymize(name: str, salt: str) -> str:
    """A stable pseudonymous id of an annotator: ``annotator-`` + 8 hex digits of sha256(salt + name)."""
    return "annotator-" + hashlib.sha256((salt + name).encode("utf-8")).hexdigest()[:8]


# ------------------------------------------------------------------------------------------ changelog
_TRACKED_FIELDS = (
    "repository", "category", "qa_type", "qa_subtype", "cluster_id", "cluster_name", "language", "theme",
    "task_set", "split", "final_decision", "adjudicated",
)


def _fenced(text: str, info: str = "text") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _one_line(text: str, limit: int = 100) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def _value(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}={v[k]}" for k in v if v[k] is not None) or "none"
    return "none" if v is None else str(v)


def changelog(
    previous_rows: Sequence[ReleaseRow] | None, rows: Sequence[ReleaseRow], *, label: str = "",
    previous_label: str = "",
) -> str:
    """A Markdown changelog of ``rows`` against ``previous_rows`` (None for a first release).

    Lists added and removed pair ids, pairs whose question or reference answer changed (word diffs),
    other field changes (repository pin, category, QA type...) and checklist changes
    (:func:`benchwright.core.checklist_diff.diff_checklists`, rendered as text per pair).
    """
    title = f"## {label}" if label else "## This release"
    out = ["# Changelog", ""]
    if previous_rows is None:
        out += [title, "", f"First release: {len(rows)} pairs.", ""]
        return "\n".join(out)
    out += [title + (f" against {previous_label}" if previous_label else " against the previous release"), ""]
    old = {r.id: r for r in previous_rows}
    new = {r.id: r for r in rows}
    added = sorted(new.keys() - old.keys())
    removed = sorted(old.keys() - new.keys())
    kept = sorted(new.keys() & old.keys())
    edited = [i for i in kept if (old[i].question, old[i].reference_answer) != (new[i].question, new[i].reference_answer)]
    fields: list[tuple[str, list[str]]] = []
    for i in kept:
        a, b = old[i], new[i]
        changed = [f for f in _TRACKED_FIELDS if getattr(a, f) != getattr(b, f)]
        lines = [f"{f}: {_value(_dump(getattr(a, f)))} -> {_value(_dump(getattr(b, f)))}" for f in changed]
        if a.extra != b.extra:  # names only: extra values may be long texts or nested objects
            names = sorted(k for k in a.extra.keys() | b.extra.keys() if a.extra.get(k) != b.extra.get(k))
            lines.append("extra fields changed: " + ", ".join(names))
        if lines:
            fields.append((i, lines))
    checklists = [i for i in kept if old[i].checklist != new[i].checklist]
    out += [
        "| | pairs |", "|---|---:|",
        f"| previous release | {len(old)} |", f"| this release | {len(new)} |",
        f"| added | {len(added)} |", f"| removed | {len(removed)} |",
        f"| question or answer edited | {len(edited)} |", f"| other fields changed | {len(fields)} |",
        f"| checklist changed | {len(checklists)} |", "",
    ]
    if added:
        out += [f"### Added ({len(added)})", ""] + [f"- `{i}` {_one_line(new[i].question)}" for i in added] + [""]
    if removed:
        out += [f"### Removed ({len(removed)})", ""] + [f"- `{i}` {_one_line(old[i].question)}" for i in removed] + [""]
    if edited:
        out += [f"### Edited ({len(edited)})", "", "Word diffs: `[-removed-]`, `{+added+}`.", ""]
        for i in edited:
            a, b = old[i], new[i]
            out += [f"#### `{i}`", ""]
            for what, x, y in (("question", a.question, b.question), ("reference answer", a.reference_answer, b.reference_answer)):
                if x != y:
                    out += [f"{what}:", "", _fenced(render_word_diff(word_diff(x, y))), ""]
    if fields:
        out += [f"### Other field changes ({len(fields)})", ""]
        out += [f"- `{i}`: " + "; ".join(changes) for i, changes in fields] + [""]
    if checklists:
        out += [f"### Checklist changes ({len(checklists)})", ""]
        for i in checklists:
            diff = diff_checklists(Checklist(items=list(old[i].checklist)), Checklist(items=list(new[i].checklist)))
            out += [f"#### `{i}`", "", _fenced(render_diff_text(diff)), ""]
    if not (added or removed or edited or fields or checklists):
        out += ["No pair changed.", ""]
    return "\n".join(out)


def _dump(v):
    return v.model_dump(mode="json") if isinstance(v, BaseModel) else v


# ----------------------------------------------------------------------------------------- the writer
def _sha256_entry(data: bytes) -> dict:
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def _write_bytes(path: Path, data: bytes) -> dict:
    """Write ``data`` to ``path`` (fsynced); returns its manifest entry."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return _sha256_entry(data)


class _JsonlFile:
    """data/test.jsonl written as :func:`~benchwright.exports.rows.encode_rows` hands over its lines: each chunk
    is written and hashed by one worker thread, in order (the write and sha256 run without the GIL, beside the
    encoding). :meth:`close` waits for the writes, fsyncs the file and returns its manifest entry."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("wb", buffering=0)
        self._digest = hashlib.sha256()
        self._size = 0
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="release-jsonl")
        self._pending: list = []
        self._finished = False

    def _append(self, chunk: bytes) -> None:
        self._file.write(chunk)
        self._digest.update(chunk)
        self._size += len(chunk)

    def write(self, chunk: bytes) -> None:
        """Queue ``chunk`` (whole lines) to be written after the chunks before it."""
        self._pending.append(self._writer.submit(self._append, chunk))

    def _sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def finish(self) -> None:
        """Queue the file's fsync after the last chunk (the worker waits for the disk while the card is built)."""
        self._pending.append(self._writer.submit(self._sync))
        self._finished = True

    def close(self) -> dict:
        """Wait for every chunk (and the fsync :meth:`finish` queued; without it, fsync here) and close the
        file; its ``{"sha256", "size"}`` (raises a write's error)."""
        try:
            for done in self._pending:
                done.result()
            if not self._finished:
                self._sync()
            self._pending.clear()
        finally:
            self.abandon()
        return {"sha256": self._digest.hexdigest(), "size": self._size}

    def abandon(self) -> None:
        """Stop writing (after an error): wait for the worker, close the file."""
        self._writer.shutdown(wait=True, cancel_futures=True)
        self._file.close()


def _write_jsonl(path: Path) -> _JsonlFile:
    """data/test.jsonl, open for :func:`~benchwright.exports.rows.encode_rows` to write its lines into."""
    return _JsonlFile(path)


_ROWS_PER_BLOCK = PARQUET_OPTIONS["row_group_size"]
"""Rows encoded at a time by :func:`write_release`: one Parquet row group, written by a worker thread while the
next block is encoded (block by block gives the bytes ``pq.write_table`` of the whole table gives)."""


class _ParquetFile:
    """data/test.parquet written as its row groups are encoded: each block of :data:`_ROWS_PER_BLOCK` rows is
    written by one worker thread, in order, with :data:`PARQUET_OPTIONS` (pyarrow encodes without the GIL).
    :meth:`close` waits for them, writes the file (fsynced) and returns its manifest entry."""

    def __init__(self, path: Path, schema: pa.Schema):
        self._path = path
        self._sink = pa.BufferOutputStream()
        options = {k: v for k, v in PARQUET_OPTIONS.items() if k != "row_group_size"}
        self._parquet = pq.ParquetWriter(self._sink, schema, **options)
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="release-parquet")
        self._pending: list = []
        self._finished = False

    def write(self, block: pa.Table) -> None:
        """Queue ``block`` (rows of the release's schema) to be written after the blocks before it."""
        self._pending.append(self._writer.submit(self._parquet.write_table, block,
                                                 row_group_size=PARQUET_OPTIONS["row_group_size"]))

    def _finish(self) -> dict:
        self._parquet.close()
        return _write_bytes(self._path, memoryview(self._sink.getvalue()))

    def finish(self) -> None:
        """Queue the file's footer, its write and fsync after the last block (done by the worker while the card
        is built)."""
        self._pending.append(self._writer.submit(self._finish))
        self._finished = True

    def close(self) -> dict:
        """Wait for every block, then the file (written here unless :meth:`finish` queued it); its
        ``{"sha256", "size"}`` (raises a write's error)."""
        try:
            entry = None
            for done in self._pending:
                entry = done.result()
            self._pending.clear()
            if not self._finished:
                entry = self._finish()
        finally:
            self.abandon()
        return entry

    def abandon(self) -> None:
        """Stop writing (after an error): wait for the worker."""
        self._writer.shutdown(wait=True, cancel_futures=True)


def _write_parquet(path: Path, schema: pa.Schema) -> _ParquetFile:
    """data/test.parquet, open for the row groups of ``schema`` to be written into."""
    return _ParquetFile(path, schema)


def _write_card(path: Path, table: pa.Table, spec: ReleaseSpec, manifest_base: dict, probes_index=()) -> dict:
    return _write_bytes(path, dataset_card(table, spec, manifest_base, probes_index).encode("utf-8"))


def _write_figures(tmp: Path, spec: ReleaseSpec) -> dict[str, dict]:
    """Draw the release's figures (:func:`benchwright.exports.figures.draw_figures`) into ``tmp/figures/``;
    their manifest entries by path (none, and no folder, when the release has no figures)."""
    from .figures import FIGURES_DIR, draw_figures, planned_figures

    if not planned_figures(spec):
        return {}
    entries = {name: _write_bytes(tmp / name, data) for name, data in draw_figures(spec).items()}
    _fsync_dir(tmp / FIGURES_DIR)
    return entries


def _write_probes(tmp: Path, items: Sequence[ReleaseProbe], rename: Callable[[str], str]) -> tuple[dict, list[dict]]:
    """Write the ``probes/`` folder (:func:`benchwright.exports.probes.probe_files`) into ``tmp``; returns the
    manifest entries and the index entries (for the card)."""
    entries: dict[str, dict] = {}
    index: list[dict] = []
    keys = [k.encode("utf-8") for k in env_secrets()]
    for name, source in probe_files(items, rename).items():
        data = source if isinstance(source, bytes) else source.read_bytes()
        for key in keys:  # the last line of defence, as for rows: no API key of this environment is published
            if key in data and isinstance(source, Path):
                raise ReleaseError(f"{source} holds an API key of this environment; remove it from the probe, "
                                   "import it again, run and sign off (nothing was written)")
            data = data.replace(key, b"***")  # in the JSON written here (a run's reason line)
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        entries[name] = _sha256_entry(data)
        if isinstance(source, Path) and os.access(source, os.X_OK):
            os.chmod(path, 0o755)  # check scripts run as programs keep their mode
        if name == PROBES_INDEX:
            index = [json.loads(line) for line in data.splitlines()]
    # flushed after they are all written, several at a time (fsync waits without the GIL): one fsync after each
    # write made a release of NITR's 40 cases (1,000 files) spend 8 s of its 13 s in fsync on a busy machine
    folders = sorted({p.parent for p in (tmp / n for n in entries)}, key=lambda p: -len(p.parts))
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="release-fsync") as pool:
        list(pool.map(_fsync_file, [tmp / n for n in entries]))
        list(pool.map(_fsync_dir, folders))
    return entries, index


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_changelog(path: Path, text: str) -> dict:
    return _write_bytes(path, text.encode("utf-8"))


def _manifest_bytes(manifest: dict) -> bytes:
    return (json.dumps(manifest, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _write_manifest(path: Path, manifest: dict) -> dict:
    return _write_bytes(path, _manifest_bytes(manifest))


def _file_entry(path: Path) -> dict:
    with path.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    return {"sha256": digest, "size": path.stat().st_size}


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _prepare_rows(rows: Iterable[ReleaseRow], *, allow_empty: bool = False) -> tuple[list[ReleaseRow], int]:
    """``rows`` sorted by id, checked (some row or ``allow_empty``, unique ids), and their release format
    (:func:`release_format_of`; formats 2 and 3 ship no split). API keys of this environment are scrubbed as the
    rows are encoded (:func:`_encode_block`)."""
    rows = sorted(rows, key=attrgetter("id"))
    if not rows and not allow_empty:
        raise ReleaseError("a release needs at least one pair or probe; nothing was written")
    ids: list[str] = []
    task_set = text = split = False
    for r in rows:  # one pass over the rows' field dicts: ids and what release_format_of reads (same answer)
        d = r.__dict__
        ids.append(d["id"])
        task_set = task_set or d["task_set"] is not None
        split = split or d["split"] is not None
        text = text or d["source"].__dict__["text"] is not None
    dupes = sorted({a for a, b in pairwise(ids) if a == b})
    if dupes:
        raise ReleaseError(f"pair ids repeat in the release: {', '.join(dupes[:10])}; nothing was written")
    release_format = 4 if task_set else 3 if text else 2
    if release_format < 4 and split:
        # no task set: the release is format 3 or 2, which has no split (its bytes stay what they were)
        rows = [r.model_copy(update={"split": None}) for r in rows]
    return rows, release_format


def _without_keys(row: ReleaseRow, keys: list[str]) -> ReleaseRow:
    """``row`` with every API key in ``keys`` replaced by ``***`` in every string (:func:`scrub_value`)."""
    text = row.model_dump_json()
    if not any(k in text for k in keys) and "\\u" not in text:
        return row
    clean, changed = scrub_value(row.model_dump(mode="json"), keys)
    return ReleaseRow.model_validate(clean) if changed else row


def _suspect_names(rows: Sequence[ReleaseRow], needles: list[bytes]) -> set[str]:
    """The annotator names of ``rows`` whose JSON holds one of ``needles`` (a key, or a ``\\u`` escape)."""
    names = {n for r in rows for n in r.annotators}
    return {n for n in names if any(x in orjson.dumps(n) for x in needles)}


def _encode_block(rows: list[ReleaseRow], start: int, end: int, annotators: list[list[str]], schema: pa.Schema,
                  write: Callable[[bytes], object], keys: list[str], suspect_names: set[str],
                  salt: str | None) -> pa.Table:
    """The Arrow table of ``rows[start:end]`` (:func:`encode_rows`), its JSON lines handed to ``write``.

    With ``keys`` (API keys of this environment: the last line of defence, docs/llm.md "Keys") the block's
    encoded lines are searched for them (and for ``\\u`` escapes, which may spell one); when one is there, or
    a row's annotator is in ``suspect_names``, the block's rows are scrubbed (:func:`_without_keys`, replaced in
    ``rows`` and ``annotators`` too, for the changelog and the card) and encoded again. Without keys the lines
    go straight to ``write``.
    """
    if not keys:
        return encode_rows(rows[start:end], annotators[start:end], schema=schema, jsonl=write)
    chunks: list[bytes] = []
    block = encode_rows(rows[start:end], annotators[start:end], schema=schema, jsonl=chunks.append)
    needles = [k.encode("utf-8") for k in keys] + [b"\\u"]
    if any(x in c for c in chunks for x in needles) or (
            suspect_names and any(n in suspect_names for r in rows[start:end] for n in r.annotators)):
        rows[start:end] = [_without_keys(r, keys) for r in rows[start:end]]
        annotators[start:end] = _annotator_lists(rows[start:end], salt)
        chunks.clear()
        block = encode_rows(rows[start:end], annotators[start:end], schema=schema, jsonl=chunks.append)
    for c in chunks:
        write(c)
    return block


def _annotator_lists(rows: Sequence[ReleaseRow], salt: str | None) -> list[list[str]]:
    """Each row's annotators, sorted; pseudonymized with ``salt`` unless it is None."""
    cache: dict[tuple[str, ...], list[str]] = {}
    out = []
    for r in rows:
        key = tuple(r.annotators)
        names = cache.get(key)
        if names is None:
            names = cache[key] = sorted(key if salt is None else (pseudonymize(n, salt) for n in key))
        out.append(names)
    return out


def write_release(
    rows: Iterable[ReleaseRow], spec: ReleaseSpec, out_dir: str | Path, *, previous_dir: str | Path | None = None,
    with_annotators: bool = False, progress: Callable[[int, int], None] | None = None,
    probes: Sequence[ReleaseProbe] = (), probes_excluded: Sequence[tuple[str, str]] = (),
) -> Path:
    """Write the release ``<out_dir>/<name>-<version>`` and return its path.

    ``probes`` (signed-off probes) are written under ``probes/`` in NITR's layout (:mod:`.probes`), listed in
    the manifest's ``probes`` field with ``probes_excluded`` (``(probe id, reason)``) counted by reason, and
    described in the card; with probes, a release may hold no pair. Without probes nothing about probes is
    written (the bytes of a Q&A release are what they were).

    Rows are written sorted by id, each row's annotators sorted; annotators (in rows and ``created_by``)
    become :func:`pseudonymize` ids unless ``with_annotators``. With ``previous_dir`` (a release folder, verified first) the changelog
    compares against it. ``progress(done, total)`` is called after each of the steps (rows, changelog,
    card, JSONL, Parquet, manifest, move into place; probes after the rows when there are probes).

    Checklists are written as given: the rows come from the store's preflight, which admits only valid,
    non-draft checklists; :func:`verify_release` checks the rules again.

    Everything is written into a hidden temporary sibling folder (``.<name>-<version>.<random>.partial``)
    and renamed into place at the end; on any error the temporary folder is removed and nothing is left.

    Raises:
        ReleaseError: no rows and no probes, repeated ids, the target folder exists, ``previous_dir`` does not
            verify, or a probe cannot be written (see :func:`benchwright.exports.probes.probe_files`).
    """
    out_dir = Path(out_dir)
    target = out_dir / spec.folder_name
    total = 8 if probes else 7
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    if target.exists() or target.is_symlink():
        raise ReleaseError(f"{target} exists already; a release is never overwritten (choose a new version)")
    with paused_gc():
        return _write_release(rows, spec, out_dir, target, previous_dir, with_annotators, step, probes,
                              probes_excluded)


def _write_release(
    rows: Iterable[ReleaseRow], spec: ReleaseSpec, out_dir: Path, target: Path, previous_dir: str | Path | None,
    with_annotators: bool, step: Callable[[], None], probes: Sequence[ReleaseProbe] = (),
    probes_excluded: Sequence[tuple[str, str]] = (),
) -> Path:
    rows, release_format = _prepare_rows(rows, allow_empty=bool(probes))
    layout = _split_layout(rows, release_format, spec.split_files)  # before anything is written
    previous: tuple[dict, list[ReleaseRow]] | None = None
    previous_manifest_sha = None
    if previous_dir is not None:
        previous = read_release(previous_dir)
        previous_manifest_sha = hashlib.sha256((Path(previous_dir) / MANIFEST).read_bytes()).hexdigest()
    salt = spec.pseudonym_salt or spec.name
    step()

    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{spec.folder_name}.{secrets.token_hex(6)}.partial"
    tmp.mkdir()
    # The data files are written, fsynced and hashed in worker threads (pyarrow's encoding, the writes, fsync and
    # sha256 run without the GIL) while this thread encodes the rows, block by block, then the changelog and the
    # card. The workers are stopped (waiting for them) before the folder is removed on an error.
    writers: list[tuple[str, _JsonlFile | _ParquetFile]] = []  # each data file's writer, JSONL then Parquet
    try:
        files: dict[str, dict] = {}
        pseudonym_salt = None if with_annotators else salt
        annotators = _annotator_lists(rows, pseudonym_salt)
        schema = parquet_schema(release_format)
        keys = env_secrets()
        suspect_names = _suspect_names(rows, [k.encode("utf-8") for k in keys] + [b"\\u"]) if keys else set()
        blocks = []
        groups: list[tuple[str, list[int] | None]] = [("test", None)] if layout is None else list(layout.items())
        for split, indexes in groups:
            jsonl_name, parquet_name = split_data_files(split)
            jsonl = _write_jsonl(tmp / jsonl_name)
            writers.append((jsonl_name, jsonl))
            parquet = _write_parquet(tmp / parquet_name, schema)
            writers.append((parquet_name, parquet))
            # the rows of this data file (all of them, or one split's, scrubbed in place and copied back)
            part = rows if indexes is None else [rows[i] for i in indexes]
            part_annotators = annotators if indexes is None else [annotators[i] for i in indexes]
            for start in range(0, max(len(part), 1), _ROWS_PER_BLOCK):  # an empty release writes its empty table
                end = start + _ROWS_PER_BLOCK
                block = _encode_block(part, start, end, part_annotators, schema, jsonl.write, keys, suspect_names,
                                      pseudonym_salt)
                parquet.write(block)
                blocks.append(block)
            for i, r, a in zip(indexes or (), part, part_annotators, strict=False):
                rows[i], annotators[i] = r, a
            jsonl.finish()
            parquet.finish()
        table = pa.concat_tables(blocks)
        prev_label = ""
        if previous is not None:
            prev_label = f"{previous[0].get('name')} {previous[0].get('version')}"
        probes_index: list[dict] = []
        if probes:
            def rename(name: str) -> str:
                return name if with_annotators else pseudonymize(name, salt)

            probe_entries, probes_index = _write_probes(tmp, probes, rename)
            files.update(probe_entries)
            step()
        text = changelog(previous[1] if previous else None, rows, label=f"{spec.name} {spec.version}",
                         previous_label=prev_label)
        if probes or (previous is not None and previous[0].get("probes")):
            text += probes_changelog(_previous_probes(previous_dir) if previous is not None else None, probes_index)
        files[CHANGELOG] = _write_changelog(tmp / CHANGELOG, text)
        step()
        manifest = {
            "name": spec.name,
            "version": spec.version,
            "created_at": spec.created_at,
            "created_by": spec.created_by if with_annotators else pseudonymize(spec.created_by, salt),
            "benchwright_version": spec.benchwright_version,
            "schema_version": spec.schema_version,
            "release_format": release_format,
            "license": spec.license,
            "n_pairs": len(rows),
            "annotators": "named" if with_annotators else "pseudonymous",
            "prompt_hashes": dict(sorted(spec.prompt_hashes.items())),
            "judge_hashes": dict(sorted(spec.judge_hashes.items())),
            "excluded": spec.excluded_reasons(),
            "previous_release": None if previous is None else {
                "name": previous[0].get("name"), "version": previous[0].get("version"),
                "manifest_sha256": previous_manifest_sha,
            },
        }
        if spec.checklist_generators is not None:
            manifest["checklist_generators"] = dict(sorted(spec.checklist_generators.items()))
        if spec.judges is not None:
            manifest["judges"] = list(spec.judges)
        if spec.include_dropped:
            manifest["include_dropped"] = True
        if spec.selection is not None:
            manifest["selection"] = spec.selection
        if spec.difficulty is not None:
            manifest["difficulty"] = spec.difficulty
        if spec.funnel is not None:
            manifest["funnel"] = spec.funnel
        if spec.repository_statistics is not None:
            manifest["repository_statistics"] = spec.repository_statistics
        if spec.scores is not None:
            manifest["scores"] = spec.scores
        if spec.figures is not None:
            manifest["figures"] = list(spec.figures)
        if probes:
            manifest["probes"] = probes_summary(probes, probes_excluded)
        if layout is not None:
            manifest["splits"] = {split: len(indexes) for split, indexes in layout.items()}
        files.update(_write_figures(tmp, spec))
        files[CARD] = _write_card(tmp / CARD, table, spec, manifest, probes_index)
        step()
        for kind in (_JsonlFile, _ParquetFile):  # one step for the JSONL files, one for the Parquet files
            files.update((name, writer.close()) for name, writer in writers if isinstance(writer, kind))
            step()
        manifest["files"] = dict(sorted(files.items()))
        _write_manifest(tmp / MANIFEST, manifest)
        _set_times(tmp, spec.created_at)
        _fsync_dir(tmp / "data")
        _fsync_dir(tmp)
        step()
        if target.exists() or target.is_symlink():
            raise ReleaseError(f"{target} appeared while the release was written; nothing was replaced")
        os.replace(tmp, target)
        _fsync_dir(out_dir)
        step()
    except BaseException:
        for _, writer in writers:
            writer.abandon()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _set_times(folder: Path, created_at: str) -> None:
    """Every file's and folder's modification time set to the release time (tidy archives)."""
    t = datetime.fromisoformat(created_at).timestamp()
    for p in sorted(folder.rglob("*"), reverse=True):
        os.utime(p, (t, t))
    os.utime(folder, (t, t))


# -------------------------------------------------------------------------------------- verify / read
@dataclass
class VerifyReport:
    """What :func:`verify_release` found: ``ok`` when ``problems`` is empty."""

    ok: bool
    problems: list[str] = field(default_factory=list)
    n_pairs: int | None = None
    files_checked: int = 0
    n_probes: int = 0

    def __str__(self) -> str:
        if self.ok:
            probes = f", {self.n_probes} probes" if self.n_probes else ""
            return f"release verified: {self.files_checked} files, {self.n_pairs} pairs{probes}"
        return "\n".join([f"{len(self.problems)} problems:"] + [f"  {p}" for p in self.problems])


def _schema_differences(actual: pa.Schema, expected: pa.Schema) -> list[str]:
    out = []
    a = {f.name: f for f in actual}
    e = {f.name: f for f in expected}
    out += [f"column {n!r} is missing" for n in e if n not in a]
    out += [f"column {n!r} is not in the release schema" for n in a if n not in e]
    for n in e:
        if n in a and not a[n].equals(e[n]):
            out.append(f"column {n!r} is {a[n].type}{'' if a[n].nullable else ' not null'}, "
                       f"expected {e[n].type}{'' if e[n].nullable else ' not null'}")
    if not out and actual.names != expected.names:
        out.append(f"columns are in the order {actual.names}, expected {expected.names}")
    return out


def _safe_rel(name: str) -> bool:
    p = Path(name)
    return bool(name) and not p.is_absolute() and ".." not in p.parts and "\\" not in name


def verify_release(path: str | Path) -> VerifyReport:
    """Check a release folder: manifest fields, every listed file's size and sha256, no unlisted files,
    JSONL rows valid :class:`ReleaseRow` objects (sorted, unique ids, valid checklists), the Parquet
    schema equal to :data:`PARQUET_SCHEMA`, and row counts and ids matching the manifest. A release written per
    split (the manifest's ``splits``) has each split's files checked so (:func:`release_data_files`), its rows all
    of that split, its row count the manifest's, and ids unique across the splits."""
    return _verify(Path(path))[0]


def _verify(root: Path) -> tuple[VerifyReport, list[ReleaseRow]]:
    """:func:`verify_release`, also returning the JSONL rows that parsed (so a read parses them once)."""
    rows: list[ReleaseRow] = []
    problems: list[str] = []
    rep = VerifyReport(ok=False, problems=problems)
    if not root.is_dir():
        problems.append(f"{root} is not a folder")
        return rep, rows
    mpath = root / MANIFEST
    if not mpath.is_file():
        problems.append(f"{MANIFEST} is missing")
        return rep, rows
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        problems.append(f"{MANIFEST} is not valid JSON: {e}")
        return rep, rows
    if not isinstance(manifest, dict):
        problems.append(f"{MANIFEST} is not a JSON object")
        return rep, rows
    problems += [f"{MANIFEST}: field {k!r} is missing" for k in MANIFEST_FIELDS if k not in manifest]
    release_format = manifest.get("release_format")
    expected_schema = parquet_schema(release_format if release_format in READABLE_FORMATS else 2)
    if release_format not in (None, *READABLE_FORMATS):
        problems.append(f"{MANIFEST}: release_format {release_format!r} is not one of {READABLE_FORMATS}"
                        " (written by another benchwright version?)")
    files = manifest.get("files")
    if not isinstance(files, dict):
        problems.append(f"{MANIFEST}: 'files' is not an object of name -> {{sha256, size}}")
        files = {}
    layout = release_data_files(manifest)
    bad_splits = [f"{MANIFEST}: splits: {p}" for p in map(release_split_problem, filter(None, layout)) if p]
    if bad_splits:  # no file of such a name is opened
        problems += bad_splits
        layout = {}
    data_names = [name for pair in layout.values() for name in pair]
    for name in (CHANGELOG, CARD, *data_names):
        if name not in files:
            problems.append(f"{MANIFEST} does not list {name}")
    intact: set[str] = set()
    for name in sorted(files):
        entry = files[name]
        if not _safe_rel(name):
            problems.append(f"{MANIFEST} lists an unsafe path {name!r}")
            continue
        p = root / name
        if not p.is_file():
            problems.append(f"{name}: listed in the manifest but missing")
            continue
        rep.files_checked += 1
        if not isinstance(entry, dict):
            problems.append(f"{name}: manifest entry is not {{sha256, size}}")
            continue
        got = _file_entry(p)
        ok = True
        if got["size"] != entry.get("size"):
            problems.append(f"{name}: size is {got['size']} bytes, the manifest says {entry.get('size')}")
            ok = False
        if got["sha256"] != entry.get("sha256"):
            problems.append(f"{name}: sha256 is {got['sha256']}, the manifest says {entry.get('sha256')}")
            ok = False
        if ok:
            intact.add(name)
    listed = set(files) | {MANIFEST}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if (p.is_file() or p.is_symlink()) and rel not in listed:
            problems.append(f"{rel}: not listed in the manifest")
    n_pairs = manifest.get("n_pairs")
    ids: list[str] | None = None
    counts = manifest.get("splits") if isinstance(manifest.get("splits"), dict) else {}
    for split, (jsonl_name, parquet_name) in layout.items():
        part, part_ids, part_problems = _check_data(root, jsonl_name, parquet_name, expected_schema,
                                                    n_pairs if split is None else counts.get(split), split)
        rows += part
        problems += part_problems
        if part_ids is not None:
            ids = (ids or []) + part_ids
    if len(layout) > 1:
        rows.sort(key=attrgetter("id"))
        if ids is not None:
            if len(set(ids)) != len(ids):
                problems.append(f"pair ids repeat across the data files of the splits: "
                                f"{', '.join(sorted({i for i, j in pairwise(sorted(ids)) if i == j})[:10])}")
            if n_pairs is not None and len(ids) != n_pairs:
                problems.append(f"the data files hold {len(ids)} rows, the manifest says {n_pairs}")
    if "probes" in manifest:
        problems += check_probes(root, manifest["probes"])
        if isinstance(manifest["probes"], dict) and isinstance(manifest["probes"].get("n_probes"), int):
            rep.n_probes = manifest["probes"]["n_probes"]
    card = root / CARD
    if card.is_file():
        card_text = card.read_text(encoding="utf-8", errors="replace")
        problems += _check_card(card_text, [pq_name for _, pq_name in layout.values()])
        problems += [f"{CARD} links {link}, which the manifest does not list" for link in _figure_links(card_text)
                     if link not in files]
    rep.n_pairs = n_pairs if isinstance(n_pairs, int) else (len(ids) if ids is not None else None)
    rep.ok = not problems
    return rep, rows


def _check_data(root: Path, jsonl_name: str, parquet_name: str, expected_schema: pa.Schema, n_rows: object,
                split: str | None) -> tuple[list[ReleaseRow], list[str] | None, list[str]]:
    """One pair of data files of a release (``data/test.*``, or one split's): the JSONL rows that parsed, their
    ids (None when the file is missing) and the problems: rows and Parquet schema valid, ``n_rows`` rows (the
    manifest's, when an int), the Parquet file saying what the JSONL file says, and, for a ``split``'s files,
    every row of that split (:data:`UNASSIGNED_SPLIT`: no split)."""
    rows: list[ReleaseRow] = []
    problems: list[str] = []
    ids: list[str] | None = None
    jp = root / jsonl_name
    if jp.is_file():
        rows, problems = _check_jsonl(jp, name=jsonl_name)
        ids = [r.id for r in rows]
        if isinstance(n_rows, int) and len(ids) != n_rows:
            problems.append(f"{jsonl_name}: {len(ids)} rows, the manifest says {n_rows}")
        if split is not None:
            stray = [r for r in rows if (r.split or UNASSIGNED_SPLIT) != split]
            if stray:
                problems.append(f"{jsonl_name}: pair {stray[0].id} has the split {stray[0].split!r}, not {split!r}"
                                + (f" (and {len(stray) - 1} more)" if len(stray) > 1 else ""))
    pp = root / parquet_name
    if pp.is_file():
        try:
            pf = pq.ParquetFile(pp)
        except (pa.ArrowException, OSError) as e:
            problems.append(f"{parquet_name}: not a readable Parquet file ({e})")
        else:
            diffs = _schema_differences(pf.schema_arrow, expected_schema)
            problems += [f"{parquet_name}: schema differs: {d}" for d in diffs]
            if isinstance(n_rows, int) and pf.metadata.num_rows != n_rows:
                problems.append(f"{parquet_name}: {pf.metadata.num_rows} rows, the manifest says {n_rows}")
            if not diffs and ids is not None:
                pids = pf.read(columns=["id"]).column("id").to_pylist()
                if pids != ids:
                    problems.append(f"{parquet_name}: pair ids differ from {jsonl_name}")
                else:
                    # the two data files must say the same thing, field by field
                    stored = pf.read().to_pylist()
                    expected = rows_to_table(rows, schema=expected_schema).to_pylist()
                    for a, b in zip(stored, expected, strict=False):
                        if a != b:
                            fields = sorted(k for k in a if a.get(k) != b.get(k))
                            problems.append(f"{parquet_name} and {jsonl_name} differ for pair {a.get('id')} "
                                            f"(fields: {', '.join(fields)})")
                            break
    return rows, ids, problems


def _check_jsonl(path: Path, limit: int = 20, name: str = DATA_JSONL) -> tuple[list[ReleaseRow], list[str]]:
    rows: list[ReleaseRow] = []
    problems: list[str] = []
    bad = 0
    with path.open("rb") as f:
        for n, line in enumerate(f, start=1):
            try:
                row = ReleaseRow.model_validate_json(line)
            except ValidationError as e:
                bad += 1
                if bad <= limit:
                    err = e.errors()[0]
                    where = ".".join(str(x) for x in err["loc"]) or "row"
                    problems.append(f"{name}, line {n}, field '{where}': {err['msg']}")
                continue
            if validate(Checklist(items=list(row.checklist))):
                problems.append(f"{name}, line {n}: the checklist of {row.id} breaks the checklist rules")
            rows.append(row)
    if bad > limit:
        problems.append(f"{name}: ... and {bad - limit} more invalid rows")
    ids = [r.id for r in rows]
    if ids != sorted(set(ids)):
        problems.append(f"{name}: pair ids are not sorted and unique")
    return rows, problems


def _figure_links(card_text: str) -> list[str]:
    """The ``figures/...`` paths the card's image links name, in order."""
    return re.findall(r"!\[[^\]\n]*\]\((figures/[^)\s]+)\)", card_text)


def _check_card(text: str, parquets: Sequence[str] = (DATA_PARQUET,)) -> list[str]:
    import yaml

    if not text.startswith("---\n"):
        return [f"{CARD}: no YAML front matter"]
    end = text.find("\n---\n", 4)
    if end < 0:
        return [f"{CARD}: the YAML front matter is not closed"]
    try:
        meta = yaml.safe_load(text[4:end])
    except yaml.YAMLError as e:
        return [f"{CARD}: the YAML front matter does not parse ({e})"]
    problems = []
    if not isinstance(meta, dict):
        return [f"{CARD}: the YAML front matter is not a mapping"]
    for key in ("license", "configs", "task_categories", "size_categories"):
        if key not in meta:
            problems.append(f"{CARD}: front matter has no {key!r}")
    paths = [df.get("path") for c in meta.get("configs") or [] if isinstance(c, dict)
             for df in c.get("data_files") or [] if isinstance(df, dict)]
    problems += [f"{CARD}: configs do not name {name}" for name in parquets if "configs" in meta and name not in paths]
    return problems


def read_release(path: str | Path, *, verify: bool = True) -> tuple[dict, list[ReleaseRow]]:
    """The manifest (a dict) and the rows of a release folder, for ``import release``.

    ``manifest["annotators"]`` says whether the rows' annotators are ``named`` or ``pseudonymous``.

    Raises:
        ReleaseError: the folder does not verify (every problem listed), or cannot be read.
    """
    root = Path(path)
    try:
        if verify:
            report, rows = _verify(root)
            if not report.ok:
                shown = "\n".join(f"  {p}" for p in report.problems[:20])
                more = f"\n  ... and {len(report.problems) - 20} more" if len(report.problems) > 20 else ""
                raise ReleaseError(f"{root} is not an intact release:\n{shown}{more}")
        else:
            rows = []
            layout = release_data_files(json.loads((root / MANIFEST).read_text(encoding="utf-8")))
            for jsonl_name, _ in layout.values():
                with (root / jsonl_name).open("rb") as f:
                    rows += [ReleaseRow.model_validate_json(line) for line in f if line.strip()]
            if len(layout) > 1:
                rows.sort(key=attrgetter("id"))
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ReleaseError(f"{root} cannot be read as a release: {e}") from None
    return manifest, rows
