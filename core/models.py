"""Domain models of benchwright (pydantic v2).

Shapes follow ../docs/architecture.md. Every model that crosses a boundary (imports, the store, exports)
validates its fields, so a bad value fails where it enters, with the field named.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .eligibility import RepositoryFacts, parse_created_on

QA_TYPES = ("What", "Why", "How", "Where")
"""SWE-QA / SWE-QA-Pro question classes (SWE-QA-Pro §2.2 taxonomy)."""

def utc_now() -> str:
    """The current UTC time as an ISO 8601 string with microseconds, e.g. ``2026-11-29T10:00:00.123456+00:00``."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Decision(StrEnum):
    """An annotator's review decision of a Q&A pair in the review queue.

    ``accept``, ``reject`` and ``revise`` submit a review (RepoProbe §3.2 quality assurance); ``skip`` is
    recorded so that resuming can tell "seen, left for later" from "not seen yet"; a skipped pair still
    counts as undecided.
    """

    ACCEPT = "accept"
    REJECT = "reject"
    REVISE = "revise"
    SKIP = "skip"

    @property
    def decided(self) -> bool:
        """True for accept, reject and revise: the decisions that submit a review."""
        return self is not Decision.SKIP


class Repository(BaseModel):
    """A code base that questions are about, pinned at a commit or a version label.

    Attributes:
        name: the project's name for it (``flask``, ``microsoft/pybryt``); unique in a project.
        url: where it is published, if known.
        commit: the full or short commit SHA, if known.
        version_label: a release label (``3.1.1``) when there is no commit.
        local_path: absolute path of a local checkout, or ``None`` when it is not available here.
        commit_verified: True when ``commit`` was read from git, False when only declared.
        derived_from: for a copy made from another registered repository (``repos strip``), that repository's
            name; ``None`` for a registered checkout.
        derivation: how the copy was made (``code-only``: documentation stripped, Code-QA-Bench
            "Methodology 2"); ``None`` for a registered checkout.
        manifest: for a derived copy, what was removed (the JSON object :mod:`benchwright.core.strip` builds:
            per-file counts, files deleted, files copied unchanged, totals); ``None`` otherwise.
        stars, created_on, answered_discussions: the RepoProbe §3.2 eligibility facts (GitHub stars, the day it
            was created as ``YYYY-MM-DD``, discussions with an accepted answer); ``None`` when not known
            (:mod:`benchwright.core.eligibility`).
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    url: str | None = None
    commit: str | None = None
    version_label: str | None = None
    local_path: str | None = None
    language: str | None = None
    theme: str | None = None
    commit_verified: bool = False
    derived_from: str | None = None
    derivation: str | None = None
    manifest: dict | None = None
    stars: int | None = Field(default=None, ge=0)
    created_on: str | None = None
    answered_discussions: int | None = Field(default=None, ge=0)

    @field_validator("created_on")
    @classmethod
    def _created_on_is_a_date(cls, v: str | None) -> str | None:
        return None if v is None else parse_created_on(v)

    @property
    def facts(self) -> RepositoryFacts:
        """The eligibility facts as a :class:`~benchwright.core.eligibility.RepositoryFacts`."""
        return RepositoryFacts(self.stars, self.created_on, self.answered_discussions)

    @property
    def pin(self) -> str:
        """``name@commit`` (short SHA) or ``name@label``, or the bare name when unpinned."""
        if self.commit:
            return f"{self.name}@{self.commit[:12]}"
        if self.version_label:
            return f"{self.name}@{self.version_label}"
        return self.name


class SourceRef(BaseModel):
    """Where a Q&A pair came from: format, file, line or row (1-based), and the upstream id if any."""

    model_config = ConfigDict(frozen=True)

    format: str
    file: str
    line: int | None = None
    unit: str = "line"
    upstream_id: str | None = None

    def __str__(self) -> str:
        s = f"{self.format}: {self.file}"
        if self.line is not None:
            s += f" {self.unit} {self.line}"
        if self.upstream_id:
            s += f" (id {self.upstream_id})"
        return s


class QAPair(BaseModel):
    """A question with its reference answer about one repository: the unit of review.

    ``reference_answer`` may be ``None`` for a pair imported without one; such a pair is flagged
    ``needs_reference`` and reported by the import. ``id`` is a stable content hash
    (see :func:`qa_pair_id`), so importing the same record twice yields the same id.
    """

    id: str
    repository: str | None = None
    question: str = Field(min_length=1)
    reference_answer: str | None = None
    category: str | None = None
    qa_type: str | None = None
    qa_subtype: str | None = None
    cluster_id: str | None = None
    cluster_name: str | None = None
    language: str | None = None
    theme: str | None = None
    task_set: str | None = None
    split: str | None = None
    """The pair's split (``train``, ``test``...), apart from its task set (m020); cross-split dedup reads it."""
    source: SourceRef
    extra: dict = Field(default_factory=dict)

    @property
    def needs_reference(self) -> bool:
        """True when the pair has no usable reference answer yet."""
        return not (self.reference_answer and self.reference_answer.strip())

    @field_validator("qa_type")
    @classmethod
    def _known_qa_type(cls, v: str | None) -> str | None:
        if v is not None and v not in QA_TYPES:
            raise ValueError(f"QA type must be one of {', '.join(QA_TYPES)}, not {v!r}")
        return v


def _id_part(text: str) -> bytes:
    # Parts are joined with NUL bytes, so a part holding a NUL (or starting with the escape mark \x01)
    # is written as \x01 + its JSON form, which holds neither: distinct triples never hash alike, and
    # the ids of ordinary text are what they always were.
    if "\x00" in text or text.startswith("\x01"):
        return b"\x01" + json.dumps(text).encode("ascii")
    return text.encode("utf-8")


def qa_pair_id(repository: str | None, question: str, reference_answer: str | None) -> str:
    """Stable id of a Q&A pair: ``qa_`` + the first 16 hex digits of a SHA-256.

    The hash covers the repository name, the question and the reference answer (whitespace at the ends
    stripped), so the same record imported from any file or format gets the same id, and records that
    differ in any of the three get different ids.
    """
    h = hashlib.sha256()
    for part in (repository or "", question.strip(), (reference_answer or "").strip()):
        h.update(_id_part(part))
        h.update(b"\x00")
    return "qa_" + h.hexdigest()[:16]


_NEWLINES = re.compile(r"\r\n|[\r\x0b\x0c\x85\u2028\u2029]")
_OTHER_NEWLINES = ("\r", "\x0b", "\x0c", "\x85", "\u2028", "\u2029")
_UNTIDY = ("  ", " \n", "\n ", "\n\n\n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")
"""What :func:`identity_text` changes in ASCII text, besides its ends."""
_WIDE_SPACES = tuple(c for c in map(chr, range(0x80, 0x3001)) if c.isspace())
"""The white space outside ASCII (none is above U+3000)."""


def identity_text(text: str | None) -> str:
    """``text`` reduced to what decides whether two texts are the same text, for pair identity.

    Unicode NFC (precomposed and decomposed accents alike); every line break (CRLF, CR, U+2028, ...) as ``\n``;
    every run of horizontal white space (spaces, tabs, no-break spaces) as one space; lines stripped at both
    ends; runs of blank lines as one blank line; blank lines at the ends dropped. So trailing spaces at the end of
    an inner line, a file saved with CRLF or re-indented prose do not make a new pair; different words,
    punctuation, case or paragraphs do. ``None`` is ``""``.
    """
    if not text:
        return ""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    if any(c in text for c in _OTHER_NEWLINES):  # plain `in` first: the regular expression is 50 us a page
        text = _NEWLINES.sub("\n", text)
    if not any(s in text for s in _UNTIDY) and (text.isascii() or not any(c in text for c in _WIDE_SPACES)):
        # Already tidy (the common case, 2x faster than the lines below): white space is single spaces between
        # words and line breaks with no space beside them, at most one blank line in a row; only the ends differ.
        return text.strip(" ").strip("\n")
    lines = [" ".join(line.split()) for line in text.split("\n")]  # str.split: runs of any white space
    out: list[str] = []
    for line in lines:
        if line:
            out.append(line)
        elif out and out[-1] != "":
            out.append("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)


def pair_identity_key(repository: str | None, question: str, reference_answer: str | None) -> str:
    """The identity of a pair's text: 32 hex digits of a SHA-256 over the repository and the
    :func:`identity_text` of question and reference answer.

    Two records with the same key are the same pair, whatever their white space; the pair id
    (:func:`qa_pair_id`) stays what it was when the pair was first imported. Stored per text version
    (``pair_texts.identity_key``); a change to :func:`identity_text` needs a migration that recomputes the keys.
    """
    return _key((repository or "", identity_text(question), identity_text(reference_answer)))


def identity_keys(repository: str | None, question: str, reference_answer: str | None) -> tuple[str, str]:
    """``(pair_identity_key(...), question_identity_key(...))`` of one record, the question reduced once."""
    repo, q = repository or "", identity_text(question)
    return _key((repo, q, identity_text(reference_answer))), _key((repo, q))


def question_identity_key(repository: str | None, question: str) -> str:
    """The identity of a pair's question alone (see :func:`pair_identity_key`): a record with a known question
    key but another answer is a possible update of that pair, not a new pair."""
    return _key((repository or "", identity_text(question)))


def _key(parts: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(_id_part(part))
        h.update(b"\x00")
    return h.hexdigest()[:32]


class TextOrigin(StrEnum):
    """Where a text version (question and reference answer) of a Q&A pair came from.

    ``original``: as first imported; ``enriched`` / ``refined``: rewritten by the curation steps (RepoProbe §3.2,
    with model and calls); ``edited``: by an annotator; ``imported``: a new text of an existing pair from a
    re-import (``benchwright pairs import ... --update``). The latest version is the pair's current text.
    """

    ORIGINAL = "original"
    ENRICHED = "enriched"
    REFINED = "refined"
    EDITED = "edited"
    IMPORTED = "imported"


TEXT_ORIGINS = tuple(o.value for o in TextOrigin)
"""Every :class:`TextOrigin`, in order."""


class PairText(BaseModel):
    """One text version of a Q&A pair (append-only; the latest is the current text).

    Attributes:
        qa_pair_id: the pair.
        version: 1 for the original, then 2, 3, ...
        origin: a :class:`TextOrigin`.
        question, reference_answer: the text of this version (``reference_answer`` None when there is none).
        created_by, created_at: who (the annotator; for a rewrite, who ran the step) and when (UTC ISO 8601).
        source: where an imported text came from (``file line N``), if it did.
        model: the model that wrote an ``enriched`` / ``refined`` version (None otherwise).
        call_ids: the ledger calls that wrote it (RepoProbe §3.2 rewrites), empty otherwise.
        restored_from: for a revert, the version whose text this one copies (None otherwise).
    """

    model_config = ConfigDict(frozen=True)

    qa_pair_id: str
    version: int
    origin: TextOrigin
    question: str
    reference_answer: str | None = None
    created_by: str | None = None
    created_at: str
    source: str | None = None
    model: str | None = None
    call_ids: tuple[int, ...] = ()
    restored_from: int | None = None

    @property
    def is_rewrite(self) -> bool:
        """True for a version a curation step wrote (``enriched`` or ``refined``)."""
        return self.origin in (TextOrigin.ENRICHED, TextOrigin.REFINED)

    def same_text(self, other: PairText) -> bool:
        """True when ``other`` has this version's question and reference answer exactly."""
        return self.question == other.question and (self.reference_answer or "") == (other.reference_answer or "")


def checklist_stale(made_from: PairText | None, current: PairText) -> bool:
    """True when a checklist made from text version ``made_from`` is stale for the pair's ``current`` text: the
    current text is a later version whose question or reference answer differs from it, white space aside
    (:func:`identity_text`, as ``pair_texts.identity_key`` compares; a revert to the text it was made from is not
    stale). ``made_from`` None (an unknown text) is never stale. RepoProbe §3.2 writes the checklist from the
    refined text, so a checklist written before a rewrite or an edit no longer fits the item.
    """
    if made_from is None or made_from.version >= current.version:
        return False
    return (identity_text(made_from.question), identity_text(made_from.reference_answer)) != (
        identity_text(current.question), identity_text(current.reference_answer))


def stale_checklist_note(made_from: int, current: int) -> str:
    """How every front end says a checklist is stale: ``made from text version 2; the text is now version 3``."""
    return f"made from text version {made_from}; the text is now version {current}"


def normalize_qa_type(value: str | None) -> str | None:
    """Map a QA class label to one of :data:`QA_TYPES`.

    SWE-QA writes ``what``; SWE-QA-Pro writes both ``What (Factual Queries)`` and bare ``What``
    (SWE-QA-Pro §2.2). Returns ``None`` for empty input.

    Raises:
        ValueError: the label is not text, or names none of What, Why, How, Where.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"QA type must be text, not {value!r}")
    text = value.strip()
    if not text:
        return None
    head = text.split("(", 1)[0].strip().lower()
    for t in QA_TYPES:
        if head == t.lower():
            return t
    raise ValueError(f"unknown QA type {value!r}; expected What, Why, How or Where")


ANSWER_RUN_STATUSES = ("ok", "failed")
"""States of an answer run: ``ok`` (it stored an answer) or ``failed`` (it says why, and stored none)."""


class AnswerRun(BaseModel):
    """One run of a model on one sample of a pair under a condition, finished or failed (``answer_runs`` table,
    append-only; the latest row of a (pair, model, condition, sample) is its state). A run that was paid for is
    kept even when it produced no answer (SWE-QA-Pro §3.1: the turn limit, no Finish).

    Attributes:
        id: row id.
        qa_pair_id, model, condition, sample_index: what was run.
        repository: the repository the agent ran in (the registered one, or its code-only copy); None for none.
        status: ``ok`` (``answer_id`` names the stored answer) or ``failed`` (``reason`` says why; no answer).
        turns: model calls of the run; trajectory: every turn as JSON (``Turn.as_json``), or None.
        call_ids: ledger ids (``llm_calls.id``) of the run's calls.
        input_tokens, output_tokens: totals over the calls made; cost_usd: their cost (None when unknown).
        settings: the agent settings the run used (``AgentSettings.as_json``).
        created_at, created_by: when and by whom it was recorded.
    """

    model_config = ConfigDict(frozen=True)

    id: int
    qa_pair_id: str
    model: str
    condition: str
    sample_index: int = 0
    repository: str | None = None
    status: str
    reason: str | None = None
    answer_id: str | None = None
    turns: int = 0
    trajectory: list | dict | None = None
    call_ids: list[int] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    settings: dict = Field(default_factory=dict)
    created_at: str
    created_by: str

    @property
    def ok(self) -> bool:
        """True when the run finished with an answer."""
        return self.status == "ok"
