"""Typed errors of benchwright.

Every error carries a message a user can act on. Input errors name the file, the line (or row) and
the field, so front ends can show them without a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Remedy(StrEnum):
    """What the user can do about an error, said without any front end's words: the message (``str(error)``)
    names no option or key, and each front end words the remedy its own way (the CLI with its options in
    ``tui/cli/common.py``, the app with its keys or a plain sentence). Set with :func:`with_remedy`."""

    GIVE_MODEL = "give-model"
    """Name a model for this run (the CLI's ``--model``), or configure one as the message says."""
    GIVE_REASON = "give-reason"
    """Say why (the CLI's ``--reason TEXT``; the app's reason field)."""
    SEE_PREFLIGHT = "see-preflight"
    """See why each pair is left out of a release (``releases preflight --list``; the release screen)."""
    GIVE_PREVIOUS = "give-previous"
    """Name the previous release's folder for the changelog (``releases create --previous DIR``)."""
    IMPORT_UNDER_OTHER_NAMES = "import-under-other-names"
    """Import conflicting answers under another model or condition, or import the rest without them."""
    IMPORT_SCORES_UNDER_OTHER_NAMES = "import-scores-under-other-names"
    """As :attr:`IMPORT_UNDER_OTHER_NAMES`, and conflicting imported scores under another judge model too."""
    NAME_ANSWER_MODEL = "name-answer-model"
    """Say which model wrote the answers (``answers import --model NAME``)."""
    NAME_JUDGE_MODEL = "name-judge-model"
    """Say who gave the imported scores (``answers import --judge-model NAME``)."""
    GIVE_SCALE = "give-scale"
    """Give the maximum score per dimension of imported scores (``answers import --scale N``)."""
    GIVE_VERSION_OR_COMMIT = "give-version-or-commit"
    """Label a plain directory with its version or its commit (``repos add --version LABEL`` or ``--commit SHA``)."""
    CREATE_PROJECT = "create-project"
    """Create the project first, or open another one (``benchwright init``, ``--db PATH``)."""


class BenchwrightError(Exception):
    """Base class of every error benchwright raises on purpose; front ends show ``str(error)``, then word
    :attr:`remedy` if there is one."""

    remedy: Remedy | None = None
    """What the user can do, for the front end to word (None: the message says it all)."""


def with_remedy(error: BenchwrightError, remedy: Remedy) -> BenchwrightError:
    """``error`` with :attr:`BenchwrightError.remedy` set (returned, to be raised)."""
    error.remedy = remedy
    return error


@dataclass(frozen=True)
class InputProblem:
    """One problem found in an input file.

    Attributes:
        file: the file's path as the user gave it.
        line: 1-based line number (JSONL, CSV) or 1-based row number (Parquet); ``None`` for
            problems of the whole file (empty, missing, not a Parquet file).
        field: the field at fault, or ``None`` when the whole record is at fault.
        message: a sentence saying what is wrong and, where it helps, what to do.
        unit: ``"line"``, ``"row"`` or ``"page"`` (a page of a GraphQL export): how ``line`` is counted.
    """

    file: str
    line: int | None
    field: str | None
    message: str
    unit: str = "line"

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f", {self.unit} {self.line}"
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"


class InputFileError(BenchwrightError):
    """An input file cannot be imported; ``problems`` lists every problem found (at least one), or the first of
    ``total`` (a streamed import keeps a bounded number, :data:`benchwright.core.importers.KEPT_PROBLEMS`)."""

    def __init__(self, problems: list[InputProblem], *, total: int | None = None):
        if not problems:
            raise ValueError("InputFileError needs at least one problem")
        self.problems = problems
        self.total = max(total or 0, len(problems))
        shown = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {self.total - 20} more" if self.total > 20 else ""
        noun = "problem" if self.total == 1 else "problems"
        super().__init__(f"{self.total} {noun} in the input; nothing was imported:\n{shown}{more}")

    @classmethod
    def single(
        cls, file: str | Path, message: str, line: int | None = None, field: str | None = None
    ) -> InputFileError:
        """An error with one problem; ``file`` is shown as given."""
        return cls([InputProblem(str(file), line, field, message)])


@dataclass(frozen=True)
class FilteredRecord:
    """A valid record an importer left out by rule (not a problem of the input): a GitHub discussion that is
    unanswered, has no accepted answer, is in a category not imported, or relies on an image (RepoProbe §3.2).

    Attributes:
        file: the file as given.
        line: the 1-based page (a GraphQL export) or line (one discussion a line).
        unit: ``"page"`` or ``"line"``: how ``line`` is counted.
        node: the 1-based position of the discussion in its page's ``nodes``, or None (one a line).
        upstream_id: the thread's id upstream (its URL, else its number): the same thread in two imports has one.
        url: the thread's URL, if the export has it.
        reason: why it was left out (``unanswered``, ``no accepted answer``, ``category X not in Q&A, Help``,
            ``question relies on an image: ...``, ``answer relies on an image: ...``).
        answered: the thread has an accepted answer upstream (it counts among the repository's answered
            discussions, RepoProbe §3.2 "Repository Selection").
    """

    file: str
    line: int
    unit: str
    node: int | None
    upstream_id: str
    url: str | None
    reason: str
    answered: bool = False

    @property
    def place(self) -> str:
        """``page 2, node 3`` or ``line 7``."""
        node = f", node {self.node}" if self.node is not None else ""
        return f"{self.unit} {self.line}{node}"

    @property
    def where(self) -> str:
        """``file, page 2, node 3`` or ``file, line 7``."""
        return f"{self.file}, {self.place}"

    def to_json(self) -> dict:
        """The entry stored in ``import_batches.filtered_json``: ``{where, upstream_id, url, reason, answered}``."""
        return {"where": self.where, "upstream_id": self.upstream_id, "url": self.url, "reason": self.reason,
                "answered": self.answered}


class RepositoryError(BenchwrightError):
    """A repository cannot be registered or read (missing path, commit mismatch, path outside root)."""


class UnsafePathError(RepositoryError):
    """A cited path would reach outside the repository root (``..``, absolute, or a symlink out)."""


class NotFoundError(BenchwrightError):
    """A named thing (repository, Q&A pair) does not exist in the project."""


class StoreError(BenchwrightError):
    """The project database cannot be opened or written (not a benchwright database, locked too long)."""


@dataclass
class ImportReport:
    """What an import did, for the CLI and the app to print.

    Attributes:
        file: the imported file.
        format: the importer's name.
        read: records read (valid or not).
        added: new Q&A pairs written.
        already_present: valid records whose pair was already in the project (idempotency).
        duplicates_in_file: valid records repeating an earlier record of the same file.
        skipped: problems of records left out under ``--skip-invalid``.
        needs_reference: ids of imported pairs that have no reference answer yet.
        repositories_added: repositories registered by the import (SWE-QA-Pro rows name theirs).
        batch_id: the import batch row, or ``None`` when nothing was added.
        possible_updates: records whose question is an existing pair's (white space aside) but whose answer is
            not any text of it: not added as new pairs; with ``--update`` they are in ``updated`` instead, unless
            refused (``TextUpdate.refused`` says why).
        updated: records recorded as a new text version of their pair (``--update``).
        filtered: valid records the importer left out by rule, each with its reason (GitHub Discussions).
        repository_facts: the repository's eligibility facts after the import, when the import set any
            (a :class:`~benchwright.core.eligibility.RepositoryFacts`), else None.
    """

    file: str
    format: str
    read: int = 0
    added: int = 0
    already_present: int = 0
    duplicates_in_file: int = 0
    skipped: list[InputProblem] = field(default_factory=list)
    needs_reference: list[str] = field(default_factory=list)
    repositories_added: list[str] = field(default_factory=list)
    batch_id: int | None = None
    possible_updates: list[TextUpdate] = field(default_factory=list)
    updated: list[TextUpdate] = field(default_factory=list)
    filtered: list[FilteredRecord] = field(default_factory=list)
    repository_facts: object | None = None


@dataclass
class TextUpdate:
    """A record that looks like a new text of pairs already in the project: the same question (as
    :func:`benchwright.core.models.question_identity_key` compares them), another answer.

    Attributes:
        file, line, unit: where the record is (``line`` or ``row``, 1-based).
        pair_ids, ordinals: the pairs with that question (usually one), with their queue positions.
        version: the text version recorded (``--update``), or None.
        refused: why ``--update`` did not record it (several pairs have the question; several records of the
            file are new texts of the same pair), or None.
        reviewed_by: annotators whose current decision on the pair was made on an earlier text.
        has_checklist: the pair has a checklist, written from an earlier text.
    """

    file: str
    line: int | None
    unit: str
    pair_ids: list[str]
    ordinals: list[int]
    version: int | None = None
    refused: str | None = None
    reviewed_by: list[str] = field(default_factory=list)
    has_checklist: bool = False

    @property
    def where(self) -> str:
        """``file, line N`` (or ``row N``)."""
        return f"{self.file}, {self.unit} {self.line}" if self.line is not None else self.file
