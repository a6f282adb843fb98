"""The rows and the spec of a release: what :mod:`.release` writes and reads and :mod:`.card` describes.

Shared by both (so neither imports the other): :class:`ReleaseRow` (one published pair), its repository and
source, :data:`PARQUET_SCHEMA` and :func:`rows_to_table`, the ``extra`` helpers, and :class:`ReleaseSpec` (a
release's name, version, time and provenance figures).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from importlib import metadata
from operator import itemgetter
from typing import Any, ClassVar

import orjson
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer

from benchwright.core.checklist import Checklist, ChecklistItem
from benchwright.core.errors import BenchwrightError
from benchwright.core.importers import paused_gc
from benchwright.core.models import PairText, QAPair, Repository, SourceRef

_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class ReleaseError(BenchwrightError):
    """A release cannot be written or read (empty, exists already, fails verification...)."""


# ------------------------------------------------------------------------------------------- the rows
class ReleaseRepository(BaseModel):
    """The repository a pair is about, as published (no local path)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    url: str | None = None
    commit: str | None = None
    version_label: str | None = None


class ReleaseText(BaseModel):
    """The text version a released pair ships when it is not the imported text (RepoProbe §3.2: the enriched and
    refined text is the item), with the original it came from.

    Attributes:
        version: the pair's text version shipped (2 or later); origin: ``enriched``, ``refined``, ``edited`` or
            ``imported`` (a re-import); model: the model that wrote a rewrite (None otherwise).
        original_question, original_reference_answer: version 1, as first imported.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(ge=2)
    origin: str
    model: str | None = None
    original_question: str
    original_reference_answer: str | None = None


class ReleaseSource(BaseModel):
    """Where the pair was imported from: format, file name (no folders), line or row, upstream id; and ``text``
    when the released text is not the imported one (left out of the row otherwise, release format 3)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    OMIT_NONE: ClassVar[tuple[str, ...]] = ("text",)
    """Fields data/test.jsonl leaves out when None (rows of pairs shipped as imported stay as they were)."""

    format: str
    file: str
    line: int | None = None
    unit: str = "line"
    upstream_id: str | None = None
    text: ReleaseText | None = None

    @model_serializer(mode="wrap")
    def _without_absent_text(self, handler):
        data = handler(self)
        if self.text is None:
            data.pop("text", None)
        return data


class ReleaseRow(BaseModel):
    """One released Q&A pair: a row of data/test.jsonl and data/test.parquet."""

    model_config = ConfigDict(extra="forbid")

    OMIT_NONE: ClassVar[tuple[str, ...]] = ("task_set", "split")
    """Fields data/test.jsonl leaves out when None (release format 4 added them: rows without a task set or a split
    stay as format 2 and 3 wrote them)."""

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    reference_answer: str = Field(min_length=1)
    repository: ReleaseRepository
    checklist: list[ChecklistItem]
    category: str | None = None
    qa_type: str | None = None
    qa_subtype: str | None = None
    cluster_id: str | None = None
    cluster_name: str | None = None
    language: str | None = None
    theme: str | None = None
    task_set: str | None = None
    split: str | None = None
    source: ReleaseSource
    final_decision: str
    adjudicated: bool = False
    annotators: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _without_absent_task_set(self, handler):
        data = handler(self)
        for k in self.OMIT_NONE:
            if getattr(self, k) is None:
                data.pop(k, None)
        return data

    @classmethod
    def from_domain(
        cls, pair: QAPair, repository: Repository, checklist: Checklist, final_decision: str, adjudicated: bool,
        annotators: list[str], *, text: PairText | None = None, original: PairText | None = None,
    ) -> ReleaseRow:
        """The row of a pair that goes into a release (annotator names as given; see :func:`write_release`).

        The question and reference answer are the pair's current text (``pair``). When ``text`` (the current
        text version) is not ``original`` (version 1) and their texts differ, the source keeps the original and
        the version shipped (:class:`ReleaseText`).

        ``language`` and ``theme`` fall back to the repository's. The source keeps the file's name only
        (an import path such as ``/home/ada/data/flask.jsonl`` would publish a local folder). ``extra`` is the
        pair's other imported fields as stored (:func:`jsonable_extra`: numbers JSON cannot hold become text
        or null).

        Raises:
            ReleaseError: the pair has no reference answer.
        """
        if pair.needs_reference:
            raise ReleaseError(f"pair {pair.id} has no reference answer; it cannot be released")
        src = pair.source
        return cls(
            id=pair.id, question=pair.question, reference_answer=pair.reference_answer or "",
            repository=ReleaseRepository(
                name=repository.name, url=repository.url, commit=repository.commit,
                version_label=repository.version_label,
            ),
            checklist=list(checklist.items), category=pair.category, qa_type=pair.qa_type,
            qa_subtype=pair.qa_subtype, cluster_id=pair.cluster_id, cluster_name=pair.cluster_name,
            language=pair.language or repository.language, theme=pair.theme or repository.theme,
            task_set=pair.task_set, split=pair.split,
            source=ReleaseSource(
                format=src.format, file=src.file.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or src.file,
                line=src.line, unit=src.unit, upstream_id=src.upstream_id,
                text=ReleaseText(version=text.version, origin=str(text.origin), model=text.model,
                                 original_question=original.question,
                                 original_reference_answer=original.reference_answer)
                if text is not None and original is not None and text.version > 1 and not text.same_text(original)
                else None,
            ),
            final_decision=final_decision, adjudicated=adjudicated, annotators=list(annotators),
            extra=jsonable_extra(pair.extra),
        )

    def to_domain(self) -> tuple[QAPair, Repository, Checklist]:
        """The pair (with the text shipped), its repository and its checklist, for ``import release``."""
        pair = QAPair(
            id=self.id, repository=self.repository.name, question=self.question,
            reference_answer=self.reference_answer, category=self.category, qa_type=self.qa_type,
            qa_subtype=self.qa_subtype, cluster_id=self.cluster_id, cluster_name=self.cluster_name,
            language=self.language, theme=self.theme, task_set=self.task_set, split=self.split,
            source=SourceRef(**self.source.model_dump(exclude={"text"})), extra=dict(self.extra),
        )
        repo = Repository(**self.repository.model_dump())
        return pair, repo, Checklist(items=list(self.checklist))


_TIER = pa.struct([pa.field("score", pa.int64(), nullable=False), pa.field("criterion", pa.string(), nullable=False)])
_ITEM = pa.struct([
    pa.field("kind", pa.string(), nullable=False),
    pa.field("key_point", pa.string(), nullable=False),
    pa.field("weight", pa.int64(), nullable=False),
    pa.field("rubric", pa.list_(pa.field("element", _TIER, nullable=False)), nullable=False),
])
PARQUET_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("question", pa.string(), nullable=False),
    pa.field("reference_answer", pa.string(), nullable=False),
    pa.field("repository", pa.struct([
        pa.field("name", pa.string(), nullable=False),
        pa.field("url", pa.string()),
        pa.field("commit", pa.string()),
        pa.field("version_label", pa.string()),
    ]), nullable=False),
    pa.field("checklist", pa.list_(pa.field("element", _ITEM, nullable=False)), nullable=False),
    pa.field("category", pa.string()),
    pa.field("qa_type", pa.string()),
    pa.field("qa_subtype", pa.string()),
    pa.field("cluster_id", pa.string()),
    pa.field("cluster_name", pa.string()),
    pa.field("language", pa.string()),
    pa.field("theme", pa.string()),
    pa.field("task_set", pa.string()),
    pa.field("split", pa.string()),
    pa.field("source", pa.struct([
        pa.field("format", pa.string(), nullable=False),
        pa.field("file", pa.string(), nullable=False),
        pa.field("line", pa.int64()),
        pa.field("unit", pa.string(), nullable=False),
        pa.field("upstream_id", pa.string()),
        pa.field("text", pa.struct([
            pa.field("version", pa.int64(), nullable=False),
            pa.field("origin", pa.string(), nullable=False),
            pa.field("model", pa.string()),
            pa.field("original_question", pa.string(), nullable=False),
            pa.field("original_reference_answer", pa.string()),
        ])),
    ]), nullable=False),
    pa.field("final_decision", pa.string(), nullable=False),
    pa.field("adjudicated", pa.bool_(), nullable=False),
    pa.field("annotators", pa.list_(pa.field("element", pa.string(), nullable=False)), nullable=False),
    pa.field("extra", pa.string(), nullable=False),
])
"""The Arrow schema of data/test.parquet (nested structs and lists; field order is the row's). ``extra`` is
the row's extra fields as one JSON object in text (:func:`extra_json`; ``{}`` when there are none): their
names and shapes differ from one import to the next, so no fixed Arrow type could hold them."""

PARQUET_SCHEMA_V3 = pa.schema([f for f in PARQUET_SCHEMA if f.name not in ("task_set", "split")])
"""The Parquet schema of release format 3 (no ``task_set``, ``split``): what a release of pairs without a task set
or a split is written with, so it stays byte for byte what it was."""
_SOURCE_V2 = pa.struct([f for f in PARQUET_SCHEMA.field("source").type if f.name != "text"])
PARQUET_SCHEMA_V2 = PARQUET_SCHEMA_V3.set(PARQUET_SCHEMA_V3.get_field_index("source"),
                                          PARQUET_SCHEMA_V3.field("source").with_type(_SOURCE_V2))
"""The Parquet schema of release format 2 (no ``source.text``): also what a release of pairs all shipped as
imported is written with, so it stays byte for byte what it was."""
PARQUET_SCHEMA_V1 = PARQUET_SCHEMA_V2.remove(PARQUET_SCHEMA_V2.get_field_index("extra"))
"""The Parquet schema of release format 1 (no ``extra``)."""


def release_format_of(rows: Sequence[ReleaseRow]) -> int:
    """The release format ``rows`` are written in: 4 when some row has a task set (Code-QA-Bench's dual task set;
    issue 18: the rows then carry their split too), else 3 when some row ships a text version other than the imported one (``source.text``),
    else 2 (the rows and files are then exactly what format 2 wrote)."""
    if any(r.task_set is not None for r in rows):
        return 4
    return 3 if any(r.source.text is not None for r in rows) else 2


def parquet_schema(release_format: int) -> pa.Schema:
    """The Parquet schema of ``release_format`` (1 to 4; 4 is :data:`PARQUET_SCHEMA`)."""
    return {1: PARQUET_SCHEMA_V1, 2: PARQUET_SCHEMA_V2, 3: PARQUET_SCHEMA_V3}.get(release_format, PARQUET_SCHEMA)

_INT64 = (-(2**63), 2**63 - 1)


def jsonable_extra(value: Any) -> Any:
    """``value`` (extra fields as stored) with what JSON and orjson cannot hold made plain: integers beyond
    64 bits become their decimal text, NaN and infinities null; containers are copied, keys made text."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if _INT64[0] <= value <= _INT64[1] else str(value)
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {str(k): jsonable_extra(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable_extra(v) for v in value]
    return str(value)


def extra_json(extra: dict, pair_id: str = "") -> str:
    """The Parquet text of a row's ``extra``: compact JSON, keys sorted at every level, UTF-8 not escaped
    (the same encoder as data/test.jsonl, so both files say the same thing).

    Raises:
        ReleaseError: a value cannot be written as JSON (a lone surrogate...), naming the pair.
    """
    try:
        return orjson.dumps(extra, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except orjson.JSONEncodeError as e:
        raise ReleaseError(f"pair {pair_id}: its extra fields cannot be written as JSON: {e}") from None


def extra_field_counts(extras: Iterable[dict]) -> dict[str, int]:
    """``{name: rows}``: how many rows carry each top-level extra field, sorted by name."""
    out: dict[str, int] = {}
    for extra in extras:
        for k in extra:
            out[k] = out.get(k, 0) + 1
    return dict(sorted(out.items()))


JSONL_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
"""How each line of data/test.jsonl is encoded: keys sorted, compact, UTF-8 not escaped, "\\n" after each row."""
JSONL_ROWS_PER_CHUNK = 256
"""Lines handed on at a time by :func:`encode_rows` (small chunks keep the memory encoded into small and reused:
one 30 MB buffer cost more in page faults than orjson took to fill it)."""


def _fields_of(model: BaseModel) -> dict:
    """orjson's fallback for a pydantic model a caller put in a row's ``extra`` (rows themselves reach orjson as
    plain dicts): its field values, without the fields its ``OMIT_NONE`` names when they are None."""
    fields = model.__dict__
    omit = getattr(model, "OMIT_NONE", ())
    return {k: v for k, v in fields.items() if not (v is None and k in omit)} if omit else fields


def encode_rows(rows: Sequence[ReleaseRow], annotators: Sequence[list[str]] | None = None, *,
                schema: pa.Schema | None = None, jsonl: Callable[[bytes], object] | None = None) -> pa.Table:
    """The Arrow table of ``rows`` and, when ``jsonl`` is given, their data/test.jsonl lines, in one pass over the
    rows (each row's objects are read once, while they are in the cache).

    Each row is read from its models' field dicts (no ``model_dump``, nothing validated again) into one plain
    dict: nested models as dicts of their fields (repository, source and ``source.text``, checklist items and
    rubric tiers), ``annotators`` (when given) in place of the row's, and the fields ``OMIT_NONE`` names left out
    of the JSON when None. The JSON line is that dict encoded with :data:`JSONL_OPTIONS` (the row's
    ``model_dump(mode="json")``); ``jsonl`` receives the lines in order, :data:`JSONL_ROWS_PER_CHUNK` rows at a
    time. The table has ``schema`` (default: the schema of :func:`release_format_of` the rows; format 1 and 2
    tables leave out the fields those formats lack); pyarrow builds each column from the plain values (``extra``
    as :func:`extra_json`). No rows give an empty table of that schema (a release of probes only).

    Raises:
        ReleaseError: a row holds text that is not valid Unicode (a lone surrogate), or extra fields that cannot
            be written as JSON, named by pair id.
    """
    schema = schema if schema is not None else parquet_schema(release_format_of(rows))
    if not rows:
        return schema.empty_table()
    names = [n for n in schema.names if n != "extra"]
    values_of = itemgetter(*names)
    with_extra = "extra" in schema.names
    dumps = orjson.dumps
    all_names = annotators if annotators is not None else [r.annotators for r in rows]
    omit_row, omit_source = ReleaseRow.OMIT_NONE, ReleaseSource.OMIT_NONE
    fields = vars  # a model's field dict (tiers are flat models: theirs as they are)
    values: list[tuple] = []
    extras: list[str] = []
    lines: list[bytes] = []
    add_values, add_extra, add_line = values.append, extras.append, lines.append
    for r, ann in zip(rows, all_names, strict=True):  # plain loops: attribute access on models is fastest written out
        d = r.__dict__.copy()
        d["annotators"] = ann
        d["repository"] = r.repository.__dict__  # a flat model: its field dict as it is
        source = d["source"] = r.source.__dict__.copy()
        text = source["text"]
        if text is not None:
            source["text"] = text.__dict__
        d["checklist"] = [{**fields(it), "rubric": list(map(fields, it.rubric))} for it in r.checklist]
        add_values(values_of(d))
        if with_extra:
            add_extra(extra_json(d["extra"], d["id"]) if d["extra"] else "{}")
        if jsonl is not None:
            for k in omit_source:
                if source[k] is None:
                    del source[k]
            for k in omit_row:
                if d[k] is None:
                    del d[k]
            try:
                add_line(dumps(d, default=_fields_of, option=JSONL_OPTIONS))
            except orjson.JSONEncodeError as e:
                raise ReleaseError(f"pair {d['id']} cannot be written as JSON: {e}") from None
            if len(lines) == JSONL_ROWS_PER_CHUNK:
                jsonl(b"".join(lines))
                lines.clear()
    if lines:
        jsonl(b"".join(lines))
    columns = list(zip(*values, strict=True)) if len(names) > 1 else [values]
    arrays = []
    for f, column in zip(schema, [*columns, extras] if with_extra else columns, strict=True):
        try:
            arrays.append(pa.array(column, f.type))
        except UnicodeEncodeError:  # only without jsonl: the JSON encoder names the pair first
            raise ReleaseError(f"pair {_first_not_unicode(rows, column)} cannot be written as JSON or Parquet "
                               f"(field {f.name}): it holds text that is not valid Unicode") from None
    return pa.Table.from_arrays(arrays, schema=schema)


def _first_not_unicode(rows: Sequence[ReleaseRow], column: Sequence) -> str:
    """The id of the first row whose value in ``column`` orjson cannot encode (a lone surrogate)."""
    for r, v in zip(rows, column, strict=True):
        try:
            orjson.dumps(v, default=_fields_of)
        except orjson.JSONEncodeError:
            return r.id
    return "?"  # pragma: no cover


def rows_to_table(rows: Sequence[ReleaseRow], annotators: Sequence[list[str]] | None = None, *,
                  schema: pa.Schema | None = None) -> pa.Table:
    """An Arrow table of ``rows``, built column by column (:func:`encode_rows` without the JSON lines), with
    ``schema`` (default: the schema of :func:`release_format_of` the rows).

    ``annotators``, when given, replaces each row's annotators (the pseudonymized lists). No rows give an
    empty table of that schema (a release of probes only).

    Raises:
        ReleaseError: as :func:`encode_rows`.
    """
    with paused_gc():  # many small dicts and lists at once: collections would find nothing to free
        return encode_rows(rows, annotators, schema=schema)


# ------------------------------------------------------------------------------------------- the spec
def _default_benchwright_version() -> str:
    try:
        return metadata.version("benchwright")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


class ReleaseSpec(BaseModel):
    """What a release is: name and version, the release record's time and author, provenance figures.

    ``created_at`` (ISO 8601, UTC, from the release record) is the only time written to a release.
    ``excluded`` is the preflight's ``(pair id, reason)`` list; the card and manifest count it by reason.
    ``agreement_scope`` is a sentence the card prints above ``agreement`` saying which pairs it covers.
    ``funnel`` (the curation funnel's stages, :meth:`benchwright.core.funnel.Stage.to_dict`) and
    ``repository_statistics`` (:func:`benchwright.core.code_stats.repository_statistics`, RepoProbe Table 2) are
    computed when the release is made and written to the manifest and the card; None writes neither (a release
    made before they existed rebuilds byte for byte). ``include_dropped``: pairs a gating curation step dropped
    were let in (written to the manifest only when true). ``selection``: the selection the release was restricted
    to (:meth:`benchwright.core.sampling.Selection.manifest_entry`), written to the manifest and the card; None
    writes neither. ``difficulty``: the released pairs counted by their latest difficulty calibration and item
    statistics (:func:`benchwright.tui.services.calibration.release_difficulty`: ``{"calibration": {...},
    "items": {...}}``, each present only when such a run exists), written to the manifest and the card; None
    (no run) writes neither, so a release without runs keeps its bytes.
    ``checklist_generators`` (model -> released pairs whose current checklist it generated) and ``judges`` (one
    ``{"judge", "model", "answers", "runs", "self_judged"}`` per judge and judge model that scored the released
    pairs' answers) are the judge separation's provenance (RepoProbe §5.1.3), written to the manifest and the card;
    None (a release recorded before they existed) writes neither, so such a release rebuilds byte for byte.
    ``scores`` (:func:`benchwright.core.release_scores.release_scores`: the released pairs' answers' score
    distribution and mean per model and judge, overall and per stratum) is written to the manifest and the card's
    Scores section; None writes neither. ``figures`` (kinds of :data:`benchwright.exports.figures.FIGURE_KINDS`)
    asks for PNG figures under ``figures/``, each drawn only where its data is in the spec, listed in the manifest
    and linked from the card; None (a release made before figures existed) draws none, so it rebuilds byte for byte.
    ``split_files``: write one pair of data files per split (``data/<split>.jsonl``, ``data/<split>.parquet``) when
    the rows (release format 4) have a split other than ``test`` (docs/releases.md, "Splits"); False (a release made
    before per-split files existed, and the default of :func:`write_release` callers) writes every row to
    ``data/test.*``, so such a release rebuilds byte for byte.
    ``pseudonym_salt`` is never written: pass a secret of the project so pseudonyms cannot be checked
    against guessed names (by default the release name, which keeps pseudonyms stable across versions).
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    created_at: str
    created_by: str
    benchwright_version: str = Field(default_factory=_default_benchwright_version)
    schema_version: int
    license: str = "cc-by-4.0"
    description: str = ""
    pretty_name: str = ""
    tags: list[str] = Field(default_factory=lambda: ["code", "code-comprehension", "repository-level", "benchwright"])
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    judge_hashes: dict[str, str] = Field(default_factory=dict)
    agreement: dict = Field(default_factory=dict)
    agreement_scope: str = ""
    excluded: list[tuple[str, str]] = Field(default_factory=list)
    funnel: list[dict] | None = None
    repository_statistics: dict | None = None
    include_dropped: bool = False
    selection: dict | None = None
    difficulty: dict | None = None
    checklist_generators: dict[str, int] | None = None
    judges: list[dict] | None = None
    scores: dict | None = None
    figures: list[str] | None = None
    split_files: bool = False
    pseudonym_salt: str = Field(default="", exclude=True, repr=False)

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(
                f"release name {v!r} must start with a letter or digit and hold only letters, digits, '.', '_' "
                "and '-' (it names the release folder)"
            )
        return v

    @field_validator("version")
    @classmethod
    def _semver(cls, v: str) -> str:
        if not _SEMVER.match(v):
            raise ValueError(f"version {v!r} is not X.Y.Z (three whole numbers, no leading zeros), e.g. 1.0.0")
        return v

    @field_validator("created_at")
    @classmethod
    def _utc(cls, v: str) -> str:
        try:
            t = datetime.fromisoformat(v)
        except ValueError:
            raise ValueError(f"created_at {v!r} is not an ISO 8601 time") from None
        if t.utcoffset() != timedelta(0):
            raise ValueError(f"created_at {v!r} is not in UTC (+00:00)")
        return v

    @property
    def folder_name(self) -> str:
        """``<name>-<version>``: the release folder's name."""
        return f"{self.name}-{self.version}"

    def excluded_reasons(self) -> dict[str, int]:
        """Excluded pairs counted by reason, sorted by reason."""
        out: dict[str, int] = {}
        for _, reason in self.excluded:
            out[reason] = out.get(reason, 0) + 1
        return dict(sorted(out.items()))
