"""The judge registry: every judge declared once (RepoProbe §4.2 checklist judge, SWE-QA-Pro §4.1, Code-QA-Bench
"Evaluation", and the pseudo-judge ``imported`` for scores read from a file).

A :class:`JudgeSpec` says everything the rest of benchwright needs about a judge: its name and a description for
help texts, the runs per answer when ``--runs`` is not given, its dimensions, scale and allowed scores, whether it
needs a checklist, its prompt template and (attached by :mod:`benchwright.core.judging`, where LLM code lives)
its request builder and parser. This module imports no LLM code, so names, scales and score rates are cheap to
read (:mod:`benchwright.core.metrics`, the store, the CLI's choices).

Adding a judge: one :func:`register_judge` call (here for a built-in one) and its prompt template
(``core/prompts/ID.md``, or ``prompts/ID.md`` in a project). A scalar judge needs nothing else: the generic
request builder fills ``$repository``, ``$question``, ``$reference_answer``, ``$rubric`` and ``$candidate_answer``
and the generic parser checks one ``{rationale, score}`` per dimension. See docs/judging.md, "Adding a judge".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from .checklist import TOTAL_POINTS
from .registry import Attribute, Names, Registry, or_list


class JudgeKind(StrEnum):
    """How a judge scores, which decides its entries and its score rate (:meth:`JudgeSpec.score_rate`).

    - ``checklist``: one entry per checklist item, rate = total / 10 (RepoProbe §5.1.3).
    - ``scalar``: one integer per dimension on a fixed scale, rate = mean / scale (SWE-QA-Pro §4.1: mean / 10;
      Code-QA-Bench: mean / 5, the normalized mean).
    - ``imported``: any dimensions from a file with the scale the user gives, rate = sum / sum of maxima.
    - ``human``: an annotator's scores of the checklist items (issue 20 item 5), entries and rate as the checklist
      judge's (total / 10), so the two compare item by item (judge calibration against humans).
    """

    CHECKLIST = "checklist"
    SCALAR = "scalar"
    IMPORTED = "imported"
    HUMAN = "human"


@dataclass(frozen=True)
class JudgeSpec:
    """One judge.

    Attributes:
        name: the stored name (``judgments.judge``), the CLI's choice and the report's label.
        description: one line for help texts and docs.
        kind: see :class:`JudgeKind`.
        default_runs: runs per answer when ``--runs`` is not given (SWE-QA-Pro §4.1 scores three times).
        dimensions: the scalar dimensions, in order (empty for checklist and imported judges).
        scale: the most points per dimension (scalar judges), else None.
        allowed: the allowed integer scores per dimension (scalar judges), else None.
        needs_checklist: only answers whose pair has a valid, non-draft checklist are judged (RepoProbe §4.1).
        template_id: the prompt template (``core/prompts/ID.md``); None for the imported pseudo-judge.
        prepare: the request builder and parser: ``prepare(spec, item, settings, run_index) -> JudgeCall`` (see
            :class:`benchwright.core.judging.JudgeCall`); None: the generic one of the kind (attached by
            :mod:`benchwright.core.judging`).
        report_note: how the report's table of the judge says where its scale and final score come from ("" for
            the default, :meth:`scale_note`).
    """

    name: str
    description: str
    kind: JudgeKind
    default_runs: int = 1
    dimensions: tuple[str, ...] = ()
    scale: int | None = None
    allowed: tuple[int, ...] | None = None
    needs_checklist: bool = False
    template_id: str | None = None
    prepare: Callable[..., Any] | None = None
    report_note: str = ""

    def __post_init__(self) -> None:
        if self.kind is JudgeKind.SCALAR:
            if not self.dimensions or self.scale is None or not self.allowed:
                raise ValueError(f"scalar judge {self.name!r} needs dimensions, a scale and its allowed scores")
            if any(not 0 <= a <= self.scale for a in self.allowed):
                raise ValueError(f"judge {self.name!r}: allowed scores must be within 0..{self.scale}")
        if self.default_runs < 1:
            raise ValueError(f"judge {self.name!r}: default runs must be at least 1")

    @property
    def llm(self) -> bool:
        """True for a judge an LLM runs (every judge but ``imported`` and ``human``)."""
        return self.kind not in (JudgeKind.IMPORTED, JudgeKind.HUMAN)

    @property
    def human(self) -> bool:
        """True for the annotators' pseudo-judge ``human`` (its ``judge_model`` is the annotator's name; reports
        and LLM-judge statistics leave its rows out unless asked for it)."""
        return self.kind is JudgeKind.HUMAN

    @property
    def scores_checklist(self) -> bool:
        """True when its entries are checklist items (knowledge %, clarity %, perfect solve apply)."""
        return self.kind in (JudgeKind.CHECKLIST, JudgeKind.HUMAN)

    def score_rate(self, scores: Sequence[float], maxima: Sequence[float]) -> float:
        """The score rate in [0, 1] of one judgment from its entries' scores and maxima (see :class:`JudgeKind`).

        Raises:
            ValueError: no entries, or (imported) maxima that sum to 0.
        """
        if not scores:
            raise ValueError("a judgment needs at least one score entry")
        total = sum(scores)
        if self.kind in (JudgeKind.CHECKLIST, JudgeKind.HUMAN):
            return total / TOTAL_POINTS
        if self.kind is JudgeKind.SCALAR:
            return total / len(scores) / self.scale  # type: ignore[operator]
        maximum = sum(maxima)
        if maximum <= 0:
            raise ValueError("the imported scores have no maximum (every max is 0); give the scale")
        return total / maximum

    def scale_note(self) -> str:
        """Where the judge's scale and final score come from, for the report's table titles."""
        if self.report_note:
            return self.report_note
        if self.kind is JudgeKind.SCALAR and self.allowed:
            return f"{self.allowed[0]}-{self.allowed[-1]} per dimension, final = mean/{self.scale}"
        if self.kind is JudgeKind.IMPORTED:
            return "final = sum/sum(max)"
        return "final = total/10"

    def help_line(self) -> str:
        """``name (description)`` for help texts."""
        return f"{self.name} ({self.description})"


JUDGE_REGISTRY: Registry[JudgeSpec] = Registry("judge")
"""Every judge, in report order (checklist first: failure analysis takes its score first, RepoProbe §5.4)."""


def register_judge(spec: JudgeSpec) -> JudgeSpec:
    """Register a judge; it is then in every list, CLI choice, help text, write check and report.

    Raises:
        ValueError: the name is taken, or the spec is incomplete (a scalar judge without dimensions or scale).
    """
    return JUDGE_REGISTRY.register(spec)


def judge(name: str) -> JudgeSpec:
    """The judge ``name``.

    Raises:
        UnknownNameError: no such judge (the message lists the judges).
    """
    return JUDGE_REGISTRY.get(name)


class Ineligible(StrEnum):
    """Why a judge may not score an answer (structured; each front end words it, the value is the default
    wording). RepoProbe §4.1: a checklist judge needs the pair's current checklist valid and not a draft."""

    NO_REFERENCE = "no reference answer"
    NO_CHECKLIST = "no checklist"
    INVALID_CHECKLIST = "checklist breaks the rules"
    DRAFT_CHECKLIST = "checklist is a draft"


class ChecklistState(Protocol):
    """What the eligibility rule reads about a pair's current checklist version (``db`` gives its
    ``ChecklistVersion``)."""

    @property
    def is_draft(self) -> bool: ...

    @property
    def is_valid(self) -> bool: ...


def checklist_problem(checklist: ChecklistState | None) -> Ineligible | None:
    """Why the pair's current checklist cannot be judged against or used as a rubric: none, a draft, or one that
    breaks the RepoProbe §4.1 rules; None when it can."""
    if checklist is None:
        return Ineligible.NO_CHECKLIST
    if checklist.is_draft:
        return Ineligible.DRAFT_CHECKLIST
    if not checklist.is_valid:
        return Ineligible.INVALID_CHECKLIST
    return None


def judge_eligibility(judge: str, *, has_reference: bool, checklist: ChecklistState | None) -> Ineligible | None:
    """Why judge ``judge`` may not score an answer to a pair (None: it may): every judge needs the pair's
    reference answer; a judge that needs a checklist (:attr:`JudgeSpec.needs_checklist`) needs the pair's current
    one valid and not a draft (:func:`checklist_problem`).

    Raises:
        UnknownNameError: unknown judge.
    """
    spec = JUDGE_REGISTRY.get(judge)
    if not has_reference:
        return Ineligible.NO_REFERENCE
    return checklist_problem(checklist) if spec.needs_checklist else None


def run_is_done(judge: str, *, scored: bool, judged_version: int | None, checklist_version: int | None) -> bool:
    """True when a run's latest judgment need not be redone (resume): it is scored, and for a judge that needs a
    checklist it was made against the pair's current ``checklist_version``.

    Raises:
        UnknownNameError: unknown judge.
    """
    spec = JUDGE_REGISTRY.get(judge)
    return scored and (not spec.needs_checklist or judged_version == checklist_version)


# ------------------------------------------------------------------------------------- judge separation
GENERATED_CHECKLIST_PREFIX = "llm:"
"""The prefix of ``checklist_versions.author`` on a checklist the ``checklist`` step generated: ``llm:MODEL``."""


def generated_checklist_author(model: str | None) -> str:
    """The author recorded on a checklist version the ``checklist`` step generated with ``model``
    (``llm:MODEL``; ``llm:unknown`` when the model is not known)."""
    return f"{GENERATED_CHECKLIST_PREFIX}{model or 'unknown'}"


def checklist_generator(author: str | None) -> str | None:
    """The model that generated a checklist version, from its recorded ``author`` (``llm:MODEL`` -> ``MODEL``);
    None for a checklist a person wrote, edited or imported (any other author) or an unknown model."""
    if not author or not author.startswith(GENERATED_CHECKLIST_PREFIX):
        return None
    model = author[len(GENERATED_CHECKLIST_PREFIX):].strip()
    return None if model in ("", "unknown") else model


def bare_model_name(name: str, providers: Collection[str] = ()) -> str:
    """A recorded model name without its provider prefix: ``PROVIDER:MODEL`` -> ``MODEL`` when PROVIDER is one of
    ``providers`` (the project's configured provider names), as ``--model`` is read; any other name stays whole
    (so an Ollama name such as ``qwen2.5-coder:7b`` is not cut). Surrounding blanks are dropped."""
    text = name.strip()
    head, sep, tail = text.partition(":")
    if sep and head in providers and tail.strip():
        return tail.strip()
    return text


def same_model(a: str | None, b: str | None, providers: Collection[str] = ()) -> bool:
    """True when two recorded model names name the same model: equal after :func:`bare_model_name`, ignoring
    case (``openai:GPT-4o`` and ``gpt-4o`` are one model). An empty or missing name matches nothing."""
    if not a or not b:
        return False
    x, y = bare_model_name(a, providers), bare_model_name(b, providers)
    return bool(x) and x.casefold() == y.casefold()


class SelfJudging(StrEnum):
    """Why judging an answer with a model would be self-evaluation (structured; each front end words it, the
    value is the default wording). RepoProbe §5.1.3 keeps the checklist generator out of the evaluated models;
    SWE-QA-Pro §4.1 judges with a model that is not among those evaluated."""

    WROTE_ANSWER = "written by the judge model"
    GENERATED_CHECKLIST = "checklist generated by the judge model"


def self_judging(judge_model: str, *, answer_model: str | None, checklist_author: str | None,
                 providers: Collection[str] = ()) -> SelfJudging | None:
    """Why ``judge_model`` may not judge an answer without ``--allow-self-judge`` (None: it may): the answer was
    written by the same model (``answers.model``), or the pair's current checklist was generated by it
    (``checklist_versions.author`` ``llm:MODEL``, :func:`checklist_generator`). Names compare as
    :func:`same_model` does (provider prefix stripped, case ignored). A checklist a person wrote or edited has no
    generator and never refuses; the rule holds for every judge, whether or not it reads the checklist."""
    if same_model(judge_model, answer_model, providers):
        return SelfJudging.WROTE_ANSWER
    if same_model(judge_model, checklist_generator(checklist_author), providers):
        return SelfJudging.GENERATED_CHECKLIST
    return None


SWE_QA_PRO_DIMENSIONS = ("correctness", "completeness", "relevance", "clarity", "reasoning")
"""SWE-QA-Pro's judge dimensions, integers 1-10 (SWE-QA-Pro §4.1)."""

CODE_QA_BENCH_DIMENSIONS = ("accuracy", "completeness", "specificity")
"""Code-QA-Bench's judge dimensions, integers 0-5 ("Evaluation")."""

register_judge(JudgeSpec(
    "checklist", "RepoProbe §4.2",
    JudgeKind.CHECKLIST, needs_checklist=True, template_id="judge_checklist",
))
register_judge(JudgeSpec(
    "swe-qa-pro", "five dimensions, 1-10, SWE-QA-Pro §4.1",
    JudgeKind.SCALAR, default_runs=3, dimensions=SWE_QA_PRO_DIMENSIONS, scale=10, allowed=tuple(range(1, 11)),
    template_id="judge_swe_qa_pro", report_note="SWE-QA-Pro §4.1: 1-10 per dimension, final = mean/10",
))
register_judge(JudgeSpec(
    "code-qa-bench", "accuracy, completeness, specificity, 0-5",
    JudgeKind.SCALAR, dimensions=CODE_QA_BENCH_DIMENSIONS, scale=5, allowed=tuple(range(0, 6)),
    template_id="judge_code_qa_bench", report_note='Code-QA-Bench "Evaluation": 0-5 per axis, final = mean/5',
))
register_judge(JudgeSpec(
    "imported", "scores imported from a file: answers import --scale N", JudgeKind.IMPORTED,
    report_note="imported scores: final = sum/sum(max)",
))

HUMAN_JUDGE = "human"
"""The stored ``judgments.judge`` of an annotator's scores of a checklist (``judge_model`` = the annotator)."""

register_judge(JudgeSpec(
    HUMAN_JUDGE, "an annotator's scores of the checklist items", JudgeKind.HUMAN, needs_checklist=True,
    report_note="human scores of the checklist: final = total/10",
))


def judge_label(judge: str, judge_model: str) -> str:
    """How a judge's judgments are labelled everywhere (inspector columns, calibration tables, reports):
    ``human:NAME`` for an annotator's (``judge`` ``human``, ``judge_model`` the annotator), else
    ``JUDGE:MODEL`` (``checklist:gpt-4o``)."""
    return f"{judge}:{judge_model}"


def human_label(annotator: str) -> str:
    """``human:NAME``: the label of ``annotator``'s human judgments (:func:`judge_label`)."""
    return judge_label(HUMAN_JUDGE, annotator)


def is_human_judge(judge: str) -> bool:
    """True when ``judge`` is a registered human pseudo-judge (rows LLM-judge statistics leave out)."""
    return judge in JUDGE_REGISTRY and JUDGE_REGISTRY.get(judge).human


def judges_help(names: Sequence[str] | None = None) -> str:
    """``a (description), b (description) or c (description)``: the judges ``names`` (default: every LLM judge)
    for help texts."""
    return or_list([JUDGE_REGISTRY.get(n).help_line() for n in (LLM_JUDGES if names is None else names)])


def default_runs_help() -> str:
    """``checklist 1, swe-qa-pro 3, code-qa-bench 1``: each LLM judge's default runs, for help texts."""
    return ", ".join(f"{n} {r}" for n, r in DEFAULT_RUNS.items())


JUDGES = Names(JUDGE_REGISTRY)
"""Every judge name, in report order, imported included (``judgments.judge``; a live view of the registry)."""

LLM_JUDGES = Names(JUDGE_REGISTRY, lambda s: s.llm)
"""The judges an LLM runs (``judge run``'s choices)."""

HUMAN_JUDGES = Names(JUDGE_REGISTRY, lambda s: s.human)
"""The human pseudo-judges (``human``): left out of reports, stability and releases unless asked for."""

MACHINE_JUDGES = Names(JUDGE_REGISTRY, lambda s: not s.human)
"""Every judge but the human ones (LLM judges and ``imported``): what reports count by default."""

SCALAR_JUDGES = Names(JUDGE_REGISTRY, lambda s: not s.scores_checklist)
"""Judges that score dimensions rather than checklist items (imported included)."""

DEFAULT_RUNS = Attribute(JUDGE_REGISTRY, "default_runs", lambda s: s.llm)
"""LLM judge -> runs per answer when ``--runs`` is not given."""

SCALAR_DIMENSIONS = Attribute(JUDGE_REGISTRY, "dimensions", lambda s: s.kind is JudgeKind.SCALAR)
"""Scalar judge -> its dimensions."""

SCALAR_SCALES = Attribute(JUDGE_REGISTRY, "scale", lambda s: s.kind is JudgeKind.SCALAR)
"""Scalar judge -> the most points per dimension; its score rate is the mean divided by this."""

SCALAR_ALLOWED = Attribute(JUDGE_REGISTRY, lambda s: list(s.allowed), lambda s: s.kind is JudgeKind.SCALAR)
"""Scalar judge -> the allowed integer scores per dimension."""


__all__ = [
    "CODE_QA_BENCH_DIMENSIONS",
    "DEFAULT_RUNS",
    "GENERATED_CHECKLIST_PREFIX",
    "HUMAN_JUDGE",
    "HUMAN_JUDGES",
    "JUDGES",
    "JUDGE_REGISTRY",
    "LLM_JUDGES",
    "MACHINE_JUDGES",
    "SCALAR_ALLOWED",
    "SCALAR_DIMENSIONS",
    "SCALAR_JUDGES",
    "SCALAR_SCALES",
    "SWE_QA_PRO_DIMENSIONS",
    "ChecklistState",
    "Ineligible",
    "JudgeKind",
    "JudgeSpec",
    "SelfJudging",
    "bare_model_name",
    "checklist_generator",
    "checklist_problem",
    "default_runs_help",
    "generated_checklist_author",
    "human_label",
    "is_human_judge",
    "judge",
    "judge_eligibility",
    "judge_label",
    "judges_help",
    "register_judge",
    "run_is_done",
    "same_model",
    "self_judging",
]
