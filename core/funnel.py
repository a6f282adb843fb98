"""The curation funnel (RepoProbe §3.2, figure 2): how many pairs entered each stage of the pipeline, how many
came out, and why the others did not. RepoProbe reports 5,233 answered threads, 2,613 after the image filter and
relevance classification, 1,107 after the verifier and 500 after human QA; :func:`funnel` gives the same table
for a project.

The rules of the funnel live here, as pure functions over facts the store reads (:mod:`benchwright.db.funnel`):

- A pair is *dropped* by a gating step (:func:`benchwright.core.steps.gating_steps`: ``images``, ``classify``,
  ``verify``) when that step's current result is ok and flagged (:func:`dropped_by`). Failed and missing results
  drop nothing.
- The stages, in order: ``harvested`` (records the imports read: the project's pairs and the distinct records
  they filtered out), ``imported`` (drops the filtered records, by their reason), one stage per curation step,
  ``human QA`` (pairs with a final decision; out: accepted; dropped: rejected, by the reject reason) and
  ``released`` (in the latest release).
- A pair enters a stage when it came out of the last gating stage before it or was not yet run through it (so a
  release of pairs no curation step ran on counts them in human QA and released; the rewriting steps drop nothing,
  so ``enrich``, ``refine``, ``checklist`` and ``verify`` all take ``classify``'s out). Of those that entered,
  every pair is exactly one of: out, dropped (with one reason), failed (the current result failed), or not yet
  run; so ``in = out + dropped + failed + not run`` in every row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .steps import STEPS, gating_steps
from .vocabulary import REJECT_REASON_NAMES

HARVESTED = "harvested"
IMPORTED = "imported"
HUMAN_QA = "human QA"
RELEASED = "released"

DROP_REASONS = {
    "images": "relies on an image",
    "classify": "not code-understanding relevant",
}
"""Gating step -> the reason a pair it dropped is counted under (``verify`` names its failing checks:
:func:`drop_reason`)."""

VERIFY_CHECKS = (("self_contained", "not self-contained"), ("answerable", "not answerable"),
                 ("links", "unresolved link"))
"""The verifier's checks (keys of its output) and the reason each gives when it fails."""

PASSED = "passed"
"""The queue filter ``curation=passed``: at least one gating step ran on the pair, and every gating step that ran
passed (none failed, none dropped it)."""

DROPPED_PREFIX = "dropped:"
"""The queue filter ``curation=dropped:STEP``: the gating step STEP dropped the pair (its current result is ok and
flagged)."""


def dropped_filter(step: str) -> str:
    """``dropped:STEP``, the queue filter of the pairs gating step ``step`` dropped."""
    return DROPPED_PREFIX + step


def funnel_filters() -> tuple[str, ...]:
    """The funnel's queue filters (``--where curation=...``): :data:`PASSED`, then ``dropped:STEP`` per gating
    step in pipeline order."""
    return (PASSED, *(dropped_filter(s) for s in gating_steps()))


NO_REASON = "no reason given"
"""The reason of a reject review that recorded none."""


def drop_reason(step: str, output: Mapping | None) -> str:
    """Why ``step`` dropped a pair, from its current ok result's ``output``: :data:`DROP_REASONS`, or for
    ``verify`` the failing checks in :data:`VERIFY_CHECKS` order joined with `` + `` (one reason per pair, so a
    stage's reasons add up to its dropped count); ``failed the verifier`` when the output names none."""
    if step in DROP_REASONS:
        return DROP_REASONS[step]
    if step == "verify":
        failing = [reason for key, reason in VERIFY_CHECKS
                   if isinstance((output or {}).get(key), Mapping) and (output or {})[key].get("passed") is False]
        return " + ".join(failing) or "failed the verifier"
    return f"flagged by {step}"


def reject_reason(reason: str | None) -> str:
    """The funnel's name for a reject reason: the display name of a
    :data:`~benchwright.core.vocabulary.REJECT_REASONS` entry (``task validity``), another reason as given,
    :data:`NO_REASON` when there is none."""
    if not reason or not reason.strip():
        return NO_REASON
    return REJECT_REASON_NAMES.get(reason, reason)


@dataclass(frozen=True)
class StepFact:
    """A pair's current result of one curation step: ``status`` (``ok`` / ``failed``), ``flagged``, and the
    ``output`` of a flagged ok result of a gating step (None otherwise: the funnel needs no other)."""

    status: str
    flagged: bool = False
    output: Mapping | None = None


def dropped_by(results: Mapping[str, StepFact | tuple[str, bool]], steps: Iterable[str] | None = None) -> str | None:
    """The first gating step (pipeline order; only those in ``steps`` when given) whose current result in
    ``results`` (step -> :class:`StepFact` or ``(status, flagged)``) is ok and flagged; None when none dropped
    the pair."""
    wanted = set(gating_steps() if steps is None else steps)
    for step in gating_steps():
        r = results.get(step)
        if step not in wanted or r is None:
            continue
        status, flagged = (r.status, r.flagged) if isinstance(r, StepFact) else r
        if status == "ok" and flagged:
            return step
    return None


@dataclass(frozen=True)
class PairFacts:
    """What the funnel knows of one pair.

    Attributes:
        pair_id: the pair.
        repository: its repository (None: none).
        steps: step -> its current :class:`StepFact` (a step not run is absent).
        decision: the final decision (``accept`` / ``reject`` / ``revise``), None when there is none yet.
        reject_reason: the reason the reject reviews recorded (``review_decisions.reason``,
            :data:`benchwright.core.vocabulary.REJECT_REASONS` or another engineer's reason), None when none.
        released: in the release the funnel is about (None: unknown, the release's rows could not be read).
    """

    pair_id: str
    repository: str | None
    steps: Mapping[str, StepFact] = field(default_factory=dict)
    decision: str | None = None
    reject_reason: str | None = None
    released: bool | None = False


@dataclass(frozen=True)
class FilteredImport:
    """A record an import read and left out by rule (an entry of ``import_batches.filtered_json``, written from a
    :class:`benchwright.core.errors.FilteredRecord`): its ``repository`` (the batch's), ``upstream_id`` and
    ``reason`` as the importer worded it."""

    repository: str | None
    upstream_id: str
    reason: str


def filter_reason(reason: str) -> str:
    """The funnel's name for an importer's filter reason: ``relies on an image`` for either side's image,
    ``category not imported`` for any category, else the reason up to its first colon (``unanswered``,
    ``no accepted answer``)."""
    text = " ".join(str(reason).split())
    if "relies on an image" in text:
        return DROP_REASONS["images"]
    if text.startswith("category "):
        return "category not imported"
    return text.partition(":")[0].strip() or "filtered"


@dataclass
class Stage:
    """One row of the funnel.

    Attributes:
        name: ``harvested``, ``imported``, a step name, ``human QA`` or ``released``.
        title: how tables title it.
        entered: pairs (records) that entered it ("in").
        out: pairs that came out of it.
        dropped: reason -> pairs dropped for it (one reason per pair).
        failed: pairs whose current result failed.
        not_run: pairs not yet run through it (for ``human QA``: no final decision yet; for ``released``: not in
            the release).
        gating: True when the stage drops pairs.
        unknown: True when the stage's out could not be counted (the release's rows are gone).
    """

    name: str
    title: str
    entered: int = 0
    out: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    failed: int = 0
    not_run: int = 0
    gating: bool = False
    unknown: bool = False

    @property
    def n_dropped(self) -> int:
        """Pairs dropped, all reasons."""
        return sum(self.dropped.values())

    def to_dict(self) -> dict:
        """A JSON-ready dict (``in``, ``out``, ``dropped`` by reason sorted by count then name, ``failed``,
        ``not_run``, ``gating``)."""
        d = {"stage": self.name, "title": self.title, "in": self.entered, "out": self.out,
             "dropped": dict(sorted(self.dropped.items(), key=lambda kv: (-kv[1], kv[0]))),
             "failed": self.failed, "not_run": self.not_run, "gating": self.gating}
        if self.unknown:
            d["unknown"] = True
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> Stage:
        """The stage of a :meth:`to_dict` (a release manifest's ``funnel``)."""
        return cls(str(d["stage"]), str(d.get("title", d["stage"])), int(d["in"]), int(d["out"]),
                   {str(k): int(v) for k, v in (d.get("dropped") or {}).items()}, int(d.get("failed", 0)),
                   int(d.get("not_run", 0)), bool(d.get("gating")), bool(d.get("unknown")))


def harvest(pairs: Sequence[PairFacts], filtered: Iterable[FilteredImport],
            imported_ids: Iterable[tuple[str | None, str]] = ()) -> tuple[int, Counter[str]]:
    """``(records harvested, filtered records by reason)``: the pairs plus the distinct filtered records
    (``(repository, id)``; the latest reason wins) that no pair holds (``imported_ids``: ``(repository, upstream
    id)`` of the project's pairs: a record filtered once and imported later counts once, as a pair; a record of
    an import without a repository is held by a pair of any repository with its upstream id)."""
    held = set(imported_ids)
    held_anywhere = {upstream for _, upstream in held}
    latest: dict[tuple[str | None, str], str] = {}
    for rec in filtered:
        key = (rec.repository, rec.upstream_id)
        if key not in held and not (rec.repository is None and rec.upstream_id in held_anywhere):
            latest[key] = filter_reason(rec.reason)
    return len(pairs) + len(latest), Counter(latest.values())


def funnel(pairs: Sequence[PairFacts], filtered: Iterable[FilteredImport] = (),
           imported_ids: Iterable[tuple[str | None, str]] = (), *, steps: Sequence[str] | None = None) -> list[Stage]:
    """The funnel's stages over ``pairs`` (see the module docstring for the rules), in pipeline order.

    Args:
        pairs: every pair of the project (or of one repository).
        filtered: the records the imports left out by rule (:func:`harvest`).
        imported_ids: ``(repository, upstream id)`` of the pairs, so a filtered record imported later counts once.
        steps: the curation steps (default :data:`benchwright.core.steps.STEPS`).
    """
    steps = list(STEPS if steps is None else steps)
    gating = set(gating_steps())
    harvested, by_reason = harvest(pairs, filtered, imported_ids)
    stages = [Stage(HARVESTED, "harvested", entered=harvested, out=harvested),
              Stage(IMPORTED, "imported", entered=harvested, out=len(pairs), dropped=dict(by_reason), gating=True)]
    current = list(pairs)  # the out of the last gating stage
    for step in steps:
        stage = Stage(step, step, entered=len(current), gating=step in gating)
        kept = []  # out, and not yet run: a pair no gating step ran on goes on to human QA and released
        for p in current:
            r = p.steps.get(step)
            if r is None:
                stage.not_run += 1
                kept.append(p)
            elif r.status != "ok":
                stage.failed += 1
            elif r.flagged and stage.gating:
                reason = drop_reason(step, r.output)
                stage.dropped[reason] = stage.dropped.get(reason, 0) + 1
            else:
                stage.out += 1
                kept.append(p)
        if stage.gating:
            current = kept
        stages.append(stage)
    qa = Stage(HUMAN_QA, "human QA", entered=len(current), gating=True)
    accepted = []
    for p in current:
        if p.decision is None:
            qa.not_run += 1
        elif p.decision == "accept":
            qa.out += 1
            accepted.append(p)
        else:
            reason = reject_reason(p.reject_reason) if p.decision == "reject" else "to revise"
            qa.dropped[reason] = qa.dropped.get(reason, 0) + 1
    stages.append(qa)
    rel = Stage(RELEASED, "released", entered=len(accepted))
    rel.unknown = any(p.released is None for p in accepted)
    rel.out = sum(1 for p in accepted if p.released)
    rel.not_run = rel.entered - rel.out
    stages.append(rel)
    return stages


def funnel_by_repository(pairs: Sequence[PairFacts], filtered: Iterable[FilteredImport] = (),
                         imported_ids: Iterable[tuple[str | None, str]] = (), *,
                         steps: Sequence[str] | None = None) -> dict[str, list[Stage]]:
    """:func:`funnel` per repository (``(none)`` for pairs and records without one), sorted by name."""
    filtered = list(filtered)
    imported_ids = list(imported_ids)
    names = sorted({p.repository or "(none)" for p in pairs} | {r.repository or "(none)" for r in filtered})
    return {
        name: funnel([p for p in pairs if (p.repository or "(none)") == name],
                     [r for r in filtered if (r.repository or "(none)") == name],
                     [k for k in imported_ids if (k[0] or "(none)") == name], steps=steps)
        for name in names
    }


def stage_lines(stages: Sequence[Stage]) -> list[tuple[str, str, str, str, str, str]]:
    """The funnel as table rows ``(stage, in, out, dropped, failed, not yet run)`` of text, a reason per
    indented row under its stage (``  relies on an image``, with its count in the dropped column); a stage that
    drops nothing says ``-`` there. Shared by the CLI and the dataset card."""
    rows = []
    for s in stages:
        dropped = str(s.n_dropped) if s.gating else "-"
        out = f"{s.out}?" if s.unknown else str(s.out)
        rows.append((s.title, str(s.entered), out, dropped, str(s.failed), str(s.not_run)))
        for reason, n in sorted(s.dropped.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append((f"  {reason}", "", "", str(n), "", ""))
    return rows


FUNNEL_COLUMNS = ("stage", "in", "out", "dropped", "failed", "not yet run")
"""The column titles of :func:`stage_lines`."""


__all__ = [
    "DROP_REASONS",
    "FUNNEL_COLUMNS",
    "HARVESTED",
    "HUMAN_QA",
    "IMPORTED",
    "NO_REASON",
    "RELEASED",
    "VERIFY_CHECKS",
    "FilteredImport",
    "PairFacts",
    "Stage",
    "StepFact",
    "drop_reason",
    "dropped_by",
    "filter_reason",
    "funnel",
    "funnel_by_repository",
    "harvest",
    "stage_lines",
]
