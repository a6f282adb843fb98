"""The small vocabularies, each declared once: failure modes (RepoProbe §5.4 Table 7), code-understanding
categories (RepoProbe §3.2), score-entry kinds and answer conditions (RepoProbe §5.1, SWE-QA-Pro §2.3).

Each is a :class:`~benchwright.core.registry.Registry`; the tuples beside them (``FAILURE_MODES``,
``CATEGORIES``, ``ENTRY_KINDS``, ``CONDITIONS``) are live views of it, kept for callers. The judges and the
curation steps have their own modules (:mod:`benchwright.core.judges`, :mod:`benchwright.core.steps`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .checklist import ItemKind
from .registry import Attribute, Names, Registry


@dataclass(frozen=True)
class Term:
    """One entry of a small vocabulary.

    Attributes:
        name: the stored value (``failure_modes.mode``, ``answers.condition``, ...).
        display: how reports and screens title it (RepoProbe Table 7 for failure modes).
        description: one sentence for help texts and docs.
    """

    name: str
    display: str
    description: str = ""


# ------------------------------------------------------------------------------------------ failure modes
FAILURE_MODE_REGISTRY: Registry[Term] = Registry("failure mode")
"""Failure modes of answers scoring below 60% (RepoProbe §5.4, Table 7), in the table's order."""

for _t in (
    Term("edit-bias", "Edit Bias", "proposes code edits instead of explaining the existing design"),
    Term("shallow-explanation", "Shallow Explanation", "vague or incomplete technical details"),
    Term("misinterpretation", "Misinterpretation", "finds the relevant code but analyzes it incorrectly"),
    Term("context-miss", "Context Miss", "fails to retrieve the relevant files"),
    Term("hallucination", "Hallucination", "references entities the repository does not have"),
):
    FAILURE_MODE_REGISTRY.register(_t)

FAILURE_MODES = Names(FAILURE_MODE_REGISTRY)
"""Names of the failure modes, as stored in ``failure_modes.mode`` (a live view of the registry)."""

FAILURE_MODE_NAMES = Attribute(FAILURE_MODE_REGISTRY, "display")
"""Failure mode -> display name (RepoProbe Table 7)."""

FAILURE_THRESHOLD = 0.6
"""Answers whose score rate is below this are failure cases, classified into a mode (RepoProbe §5.4: "below 60%")."""


# ------------------------------------------------------------------------------------------- categories
CATEGORY_REGISTRY: Registry[Term] = Registry("category")
"""RepoProbe §3.2 code-understanding categories ("Relevance and category"), the classify step's choices."""

for _t in (
    Term("Project Architecture", "Project Architecture", "how the repository is organised and fits together"),
    Term("Business Logic", "Business Logic", "what the code does for its users and why"),
    Term("Implementation Details", "Implementation Details", "how a specific mechanism is implemented"),
):
    CATEGORY_REGISTRY.register(_t)

CATEGORIES = Names(CATEGORY_REGISTRY)
"""Names of the categories (a live view of the registry)."""


# ------------------------------------------------------------------------------------------ entry kinds
DIMENSION = "dimension"
"""The entry kind of a scalar judge's (or an imported file's) dimension."""

ENTRY_KIND_REGISTRY: Registry[Term] = Registry("score entry kind")
"""Kinds of a score entry (``scores_json``): a checklist's item kinds (:class:`~benchwright.core.checklist.ItemKind`,
RepoProbe §4.1), then ``dimension``."""

for _t in (
    *(Term(k.value, k.value.title(), f"a checklist's {k.value} item") for k in ItemKind),
    Term(DIMENSION, "Dimension", "a dimension of a scalar judge or of imported scores"),
):
    ENTRY_KIND_REGISTRY.register(_t)

ENTRY_KINDS = Names(ENTRY_KIND_REGISTRY)
"""Names of the entry kinds (a live view of the registry)."""


# ------------------------------------------------------------------------------------------- conditions
ACCESS_NONE = "none"
"""A condition's repository access: none (the question only; a direct, one-turn answer)."""
ACCESS_REPOSITORY = "repository"
"""A condition's repository access: the agent runs on the registered repository (its local checkout, at the
pinned commit)."""
ACCESS_CODE_ONLY = "code-only"
"""A condition's repository access: the agent runs on the repository's stripped, code-only copy
(``benchwright repos strip NAME``; Code-QA-Bench "Methodology 2")."""
ACCESSES = (ACCESS_NONE, ACCESS_REPOSITORY, ACCESS_CODE_ONLY)


@dataclass(frozen=True)
class Condition(Term):
    """A condition an answer is produced under, and what the model may read under it.

    Attributes:
        access: :data:`ACCESS_NONE` (no repository: a direct answer in one turn), :data:`ACCESS_REPOSITORY`
            (the agent on the registered repository) or :data:`ACCESS_CODE_ONLY` (the agent on its stripped copy).
    """

    access: str = ACCESS_NONE

    @property
    def needs_agent(self) -> bool:
        """True when answers under this condition are written by the agent inside a repository."""
        return self.access != ACCESS_NONE


CONDITION_REGISTRY: Registry[Condition] = Registry("condition")
"""Conditions an answer was produced under (Code-QA-Bench "Methodology": closed-book, code-only, documented, as in
RepoProbe §5.1; agentic runs with tools, as in the SWE-QA agent files and SWE-QA-Pro §3.1; ``direct``: the
single-turn baseline of SWE-QA-Pro §2.3). Each says what the model may read (:attr:`Condition.access`)."""

for _t in (
    Condition("closed-book", "Closed-book", "the model saw the question only", ACCESS_NONE),
    Condition("code-only", "Code-only", "an agent explored the repository's code, its documentation stripped",
              ACCESS_CODE_ONLY),
    Condition("documented", "Documented", "an agent explored the code and its documentation", ACCESS_REPOSITORY),
    Condition("agentic", "Agentic", "an agent explored the repository with tools", ACCESS_REPOSITORY),
    Condition("direct", "Direct", "one turn, no repository access (SWE-QA-Pro §2.3)", ACCESS_NONE),
):
    CONDITION_REGISTRY.register(_t)

CONDITIONS = Names(CONDITION_REGISTRY)
"""Names of the conditions, as stored in ``answers.condition`` (a live view of the registry)."""

CONDITION_ACCESS = Attribute(CONDITION_REGISTRY, "access")
"""Condition -> its repository access (``none``, ``repository``, ``code-only``)."""

AGENT_CONDITIONS = Names(CONDITION_REGISTRY, lambda c: c.needs_agent)
"""Conditions whose answers the agent writes inside a repository (or its code-only copy)."""

DIRECT_CONDITIONS = Names(CONDITION_REGISTRY, lambda c: not c.needs_agent)
"""Conditions with no repository access (a direct, one-turn answer)."""

DEFAULT_AGENT_CONDITION = "agentic"
"""The condition of ``answers generate --agent`` without ``--condition``."""

# -------------------------------------------------------------------------------------------- task sets
TASK_SET_REGISTRY: Registry[Term] = Registry("task set")
"""Code-QA-Bench's dual task set ("Methodology 4"), the values of ``qa_pairs.task_set``. A split (train, test,
...) is a separate field, ``qa_pairs.split``, so a pair can have both."""

for _t in (
    Term("code-derivable", "Code-derivable", "the gold answer is verified recoverable from the code alone"),
    Term("doc-dependent", "Doc-dependent", "the gold answer was written from the documentation and needs it"),
):
    TASK_SET_REGISTRY.register(_t)

TASK_SETS = Names(TASK_SET_REGISTRY)
"""Names of the task sets, as stored in ``qa_pairs.task_set`` (a live view of the registry)."""


def normalize_task_set(value: object) -> str | None:
    """A task set as stored: one of :data:`TASK_SETS`, case, spaces and underscores forgiven (``Code_Derivable``
    and ``code derivable`` are ``code-derivable``); ``None`` for ``None`` or blank text.

    Raises:
        ValueError: the value is not text, or names no task set (a split such as ``test`` goes to ``split``)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"task set must be text, not {value!r}")
    text = value.strip()
    if not text:
        return None
    name = "-".join(text.lower().replace("_", " ").split())
    if name in TASK_SETS:
        return name
    hint = " (a split such as train or test goes to --map split=COL)" if name in SPLIT_NAMES else ""
    raise ValueError(f"unknown task set {value!r}; expected {' or '.join(TASK_SETS)}{hint}")


SPLIT_NAMES = ("train", "test", "dev", "validation", "val", "eval")
"""Split names migration m020 moved from ``task_set`` into ``split`` (and m022 cleared from ``task_set``)."""

RELEASE_SPLIT_NAME = re.compile(r"\w+(\.\w+)*")
"""A split name a release can write a data file of (``data/<split>.parquet``): what Hugging Face ``datasets``
accepts as a split name (``^\\w+(\\.\\w+)*$``, its ``splits.py``), matched whole."""

UNASSIGNED_SPLIT = "unassigned"
"""The split a release written per split (docs/releases.md, "Splits") gives the pairs that have no split of their
own (their row's ``split`` stays null)."""


def release_split_problem(split: str) -> str | None:
    """Why ``split`` cannot name a release's data file (:data:`RELEASE_SPLIT_NAME`), or None when it can."""
    if RELEASE_SPLIT_NAME.fullmatch(split):
        return None
    return (f"split {split!r} is not a valid split name for Hugging Face datasets (letters, digits and '_', "
            "in parts joined by '.', e.g. train or test.hard)")

del _t

__all__ = [
    "ACCESSES",
    "ACCESS_CODE_ONLY",
    "ACCESS_NONE",
    "ACCESS_REPOSITORY",
    "AGENT_CONDITIONS",
    "CATEGORIES",
    "CATEGORY_REGISTRY",
    "CONDITIONS",
    "CONDITION_ACCESS",
    "CONDITION_REGISTRY",
    "DEFAULT_AGENT_CONDITION",
    "DIMENSION",
    "DIRECT_CONDITIONS",
    "ENTRY_KINDS",
    "ENTRY_KIND_REGISTRY",
    "FAILURE_MODES",
    "FAILURE_MODE_NAMES",
    "FAILURE_MODE_REGISTRY",
    "FAILURE_THRESHOLD",
    "RELEASE_SPLIT_NAME",
    "SPLIT_NAMES",
    "TASK_SETS",
    "TASK_SET_REGISTRY",
    "UNASSIGNED_SPLIT",
    "Condition",
    "Term",
    "normalize_task_set",
    "release_split_problem",
]


# ------------------------------------------------------------------------------------------ reject reasons
REJECT_REASON_REGISTRY: Registry[Term] = Registry("reject reason")
"""Why a human QA reviewer rejects a pair (RepoProbe §3.2 "Quality Assurance"): one of the four orthogonal
criteria failing, or ``directly-answerable`` ("the dominant cause being direct answerability without genuine
repository understanding")."""

for _t in (
    Term("qa_consistency", "QA consistency", "the accepted answer does not directly and consistently answer it"),
    Term("checklist_quality", "checklist quality", "checklist items are wrong, too coarse or conflated"),
    Term("task_validity", "task validity", "the question does not need the repository (generic advice)"),
    Term("code_relevance", "code relevance", "the answer does not depend on code or configuration facts"),
    Term("directly-answerable", "directly answerable", "answerable without genuine repository understanding"),
):
    REJECT_REASON_REGISTRY.register(_t)

REJECT_REASONS = Names(REJECT_REASON_REGISTRY)
"""Reject reasons as stored in ``review_decisions.reason`` (a live view of the registry): the four QA criteria
(:data:`benchwright.core.review.CRITERIA`) and ``directly-answerable``."""

REJECT_REASON_NAMES = Attribute(REJECT_REASON_REGISTRY, "display")
"""Reject reason -> display name."""


# ------------------------------------------------------------------------------------------ reopen reasons
REOPEN_TEXT = "text"
"""``qa_pairs.reopened_reason``: a new text version (a rewrite, an edit, a re-import) after the pair's reviews."""
REOPEN_EVIDENCE = "evidence-stale"
"""``qa_pairs.reopened_reason``: ``repos move`` found the pair's cited files or lines changed at the new pin."""
REOPEN_WHY = {REOPEN_TEXT: "the text changed", REOPEN_EVIDENCE: "the cited evidence changed"}
"""Reopen reason -> how the front ends say why a pair is back in review."""


# ------------------------------------------------------------------ SWE-QA-Pro data methods (issue 17)
CLUSTER_ORIGINS = ("imported", "annotator", "taxonomy")
"""Who set a pair's ``cluster_id`` / ``cluster_name`` (``qa_pairs.cluster_origin``): the import, an annotator, or
``taxonomy assign``. ``taxonomy assign`` replaces only ``taxonomy`` clusters (and unset ones) unless ``--force``."""

ISSUE_TEXT_MIN_BYTES = 10
ISSUE_TEXT_MAX_BYTES = 16 * 1024
"""SWE-QA-Pro §2.1: issue texts (title + body) are kept when 10 bytes <= UTF-8 length <= 16 KB."""

TAXONOMY_SOURCES = ("issues", "pairs")
"""What a taxonomy clusters: issue texts (§2.1, ``issues import``) or the pairs' questions
(``benchwright.core.taxonomy.SOURCES``; here so ``taxonomy build --help`` needs no numpy)."""

DEDUP_SCOPES = ("repository", "global")
"""``dedup --scope``: compare questions within each repository (the default) or across the whole project."""

DEDUP_DECISIONS = ("keep-one", "keep-both", "merge")
"""An annotator's resolution of a duplicate group: keep one member (the others are dropped as duplicates), keep
both / all (not duplicates), or merge (keep one; the others are recorded as merged into it). Nothing is deleted."""

DEDUP_FILTERS = ("any", "unresolved", "representative", "kept", "dropped", "not-duplicate", "cross-split",
                 "multi-query", "none")
"""Values of the queue filter ``dedup=`` over the latest dedup run: ``any`` a member of a duplicate group;
``unresolved`` a member of a group nobody resolved yet, other than its representative (the member first in the
queue); ``representative`` that member; ``kept`` / ``dropped`` / ``not-duplicate`` by the group's resolution;
``cross-split`` a member of a train-vs-test group; ``multi-query`` a question asking several things;
``none`` in no group. Dedup survivors are the pairs neither ``unresolved`` nor ``dropped``."""

CALIBRATION_RULES = ("mean-z", "all-z")
"""``calibrate --rule``: ``mean-z`` calls a pair too easy when the mean over models of z_m(q) is at least the
threshold; ``all-z`` when every model's z_m(q) is (SWE-QA-Pro §2.3 gives neither rule nor threshold)."""

DEFAULT_CALIBRATION_RULE = "all-z"
DEFAULT_CALIBRATION_THRESHOLD = 0.5
"""Our default: a pair whose direct answers score at least half a standard deviation above the model's own mean
for *every* model is too easy: SWE-QA-Pro §2.3 filters the questions that "consistently receive high-quality
direct answers across models" (cross-model agreement), and one model finding a pair easy is not that (why, and
the share it removes: docs/data-methods.md; the paper gives no threshold)."""

DIFFICULTY_DECISIONS = ("too-easy", "kept", "insufficient")
"""A pair's calibration decision: ``too-easy`` (filtered, §2.3), ``kept``, ``insufficient`` (too few models
answered and were judged to decide)."""

DIFFICULTY_FILTERS = (*DIFFICULTY_DECISIONS, "uncalibrated")
"""Values of the queue filter ``difficulty=`` over the latest calibration run (``uncalibrated``: not in it)."""

ITEM_FLAGS = ("saturated", "unsolved", "closed-book-solvable", "low-discrimination")
"""Item-statistics flags of a pair (``items``): every model above the high bar, every model below the low bar,
too easy by calibration, discrimination index below its bar."""

ITEM_FILTERS = (*ITEM_FLAGS, "unrated")
"""Values of the queue filter ``item=`` over the latest ``items`` run (``unrated``: not in it)."""

LEAKAGE_STATUSES = ("leaked", "clean")
"""A leakage check's status (``leakage_checks.status``): ``leaked`` when a rewrite put at least one term of the
reference answer or the checklist into the question that the original did not have (:mod:`benchwright.core.leakage`)."""

LEAKAGE_KINDS = ("identifier", "path", "key-point")
"""What a leaked span of a question is (:mod:`benchwright.core.leakage`): a code name (CamelCase, snake_case, a dotted
name, a call, backticked code), a file path (``src/flask/app.py``, ``app.py:120``) or a key-point phrase (a run of
content words of the reference answer or of a checklist key point)."""

LEAKAGE_SOURCES = ("reference answer", "checklist")
"""Where a leaked span's term was found: the pair's reference answer, or a key point of its current checklist."""
LEAKAGE_FILTERS = (*LEAKAGE_STATUSES, "unchecked")
"""Values of the queue filter ``leakage=``: the check of the pair's current text version (``unchecked``: none)."""
