"""View objects: what a screen shows, read from the store in one call, so no screen assembles its own view.

Each view is a frozen dataclass built without Textual (the CLI, a test or another front end can build one too).
What a viewer may see is decided by the store's reads filtered for a viewer (the blind-mode rule of
:mod:`benchwright.core.blind`), which the views use; neither a view nor a screen decides it. The screens only
render what a view holds.

Views: :func:`review_view`, :func:`queue_progress`, :func:`adjudication_queue`, :func:`adjudication_view`,
:func:`inspector_view`, :func:`judges_of`, :func:`judge_runs_view`, :func:`checklist_diff_view`,
:func:`checklist_editor_view`, :func:`curation_view`, :func:`release_view`, :func:`trajectory_view`,
:func:`statistics_view` (slow the first time: build it in a worker).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from benchwright.core.adjudication import Disagreement, Exclusion
from benchwright.core.evidence import Evidence, gather_evidence
from benchwright.core.inspection import JudgmentGrid, judgment_grid
from benchwright.core.judges import SelfJudging, self_judging
from benchwright.core.judgment import Answer, FailureModeLabel
from benchwright.core.models import Decision, PairText, QAPair, Repository
from benchwright.core.review import Criteria, Review
from benchwright.db import ChecklistVersion, Progress, QueueFilter, Store
from benchwright.db.dedup import GroupView
from benchwright.db.evidence import EvidenceCheck
from benchwright.db.leakage import LeakageCheck
from benchwright.db.llm import CurationResult
from benchwright.db.releases import Preflight
from benchwright.db.stamps import change_stamp, in_transaction

from .generation import answer_first_view

if TYPE_CHECKING:
    from benchwright.core.agreement import FieldAgreement, ProjectChecklistAgreement
    from benchwright.core.plot_data import StatisticsPlots

T = TypeVar("T")


@dataclass(frozen=True)
class OthersReviews:
    """Other annotators' current submitted reviews of a pair, as the viewer may see them.

    Attributes:
        shown: the reviews the viewer may see, by annotator name (sorted by name; empty when blind mode hides
            them all).
        hidden: how many reviews blind mode holds back until the viewer submits their own.
    """

    shown: Mapping[str, Review] = field(default_factory=dict)
    hidden: int = 0

    @property
    def total(self) -> int:
        """Other annotators' reviews of the pair, shown or hidden."""
        return len(self.shown) + self.hidden


@dataclass(frozen=True)
class ReviewView:
    """Everything the review screen shows of one pair for one annotator.

    Attributes:
        pair: the pair as stored (its current text).
        text: the current text version (``pair_texts``' latest; None for a store without one).
        repository: the pair's repository, None when it names none or it is not registered.
        ordinal: the pair's position in the project (``#N``).
        viewer: whose view this is.
        decision: the viewer's current decision on the pair (None: undecided).
        state_id: the viewer's review state the next decision is checked against (compare-and-set).
        criteria: the viewer's criteria (a draft marked since their last decision, else the recorded ones); a
            copy the screen may change.
        note: the viewer's current note on the pair ('' when none).
        checklist: the checklist version the viewer may see (blind mode hides another annotator's edits
            until the viewer submits); None when there is none.
        others: other annotators' reviews as the viewer may see them.
        evidence: the files and lines the reference answer cites, resolved in the repository's checkout.
        progress: the viewer's progress counts; None while a large project counts them in a thread
            (``review_view(count_progress=False)``, :func:`progress_in_thread`).
        evidence_check: the pair's latest evidence check (``repos move``), None when it was never checked.
        reopened: why the pair is back in the viewer's review (``text``, ``evidence-stale``) when their decision
            was made before it was reopened, else None (:meth:`~benchwright.db.Store.reopened`).
        stale_checklist: ``(made from, current)`` text versions when the current checklist is stale, else None.
        leakage: the latest leakage check of the current text (:mod:`benchwright.core.leakage`), None when it was
            never checked (an original text is not).
        duplicates: the pair's group in the latest dedup run (``benchwright dedup``), None when it is in none.
        answer_first: a pair made by answer-first generation (``generate question``): its chunk, task set and
            audit (:func:`~benchwright.tui.services.generation.answer_first_view`); None for any other pair.
    """

    pair: QAPair
    text: PairText | None
    repository: Repository | None
    ordinal: int
    viewer: str
    decision: Decision | None
    state_id: int | None
    criteria: Criteria
    note: str
    checklist: ChecklistVersion | None
    others: OthersReviews
    evidence: tuple[Evidence, ...]
    progress: Progress | None
    evidence_check: EvidenceCheck | None = None
    reopened: str | None = None
    stale_checklist: tuple[int, int] | None = None
    leakage: LeakageCheck | None = None
    duplicates: GroupView | None = None
    answer_first: dict | None = None


def others_reviews(store: Store, pair_id: str, viewer: str) -> OthersReviews:
    """The other annotators' current reviews of ``pair_id`` that ``viewer`` may see (blind mode: none
    before ``viewer`` submits a review of it, counted as hidden)."""
    seen = store.others_reviews(pair_id, viewer)
    return OthersReviews(shown={r.annotator: r for r in seen}, hidden=seen.hidden)


def visible_checklist(store: Store, pair_id: str, viewer: str) -> ChecklistVersion | None:
    """The version of ``pair_id``'s checklist ``viewer`` may see (the current one, or in blind mode before
    their review the latest that is not another annotator's own work); None when there is none."""
    version = store.visible_checklist_version(pair_id, viewer)
    return store.checklist_version(pair_id, version) if version else None


def review_view(store: Store, pair_id: str, viewer: str, *, progress: Progress | None = None,
                count_progress: bool = True, evidence: bool = True) -> ReviewView:
    """The review screen's view of ``pair_id`` for ``viewer``.

    ``progress``, when given, is used as is (the screen counts progress again only after a decision or an
    undo: counting takes a query over every pair); else it is counted (:func:`counted`: again only when the
    project changed), or with ``count_progress=False`` taken from the counts kept and None when none holds.

    Reads the cited files of the repository's checkout (line counts) to resolve the evidence; with
    ``evidence=False`` (a view loaded only for the next decision, not drawn) nothing is read and the view has no
    evidence.

    Raises:
        NotFoundError: no such pair.
    """
    pair = store.get_pair(pair_id)
    repo = store.get_repository(pair.repository, missing_ok=True) if pair.repository else None
    texts = store.text_versions(pair_id)
    criteria = store.current_criteria(pair_id, viewer)
    return ReviewView(
        pair=pair, text=texts[-1] if texts else None, repository=repo, ordinal=store.ordinal_of(pair_id),
        viewer=viewer, decision=store.current_decision(pair_id, viewer), state_id=store.state_id(pair_id, viewer),
        criteria=Criteria(verdicts=dict(criteria.verdicts), notes=dict(criteria.notes)),
        note=store.current_note(pair_id, viewer), checklist=visible_checklist(store, pair_id, viewer),
        others=others_reviews(store, pair_id, viewer),
        evidence=tuple(gather_evidence(repo.local_path if repo else None, pair.reference_answer)) if evidence
        else (),
        progress=progress if progress is not None else (
            counted(store, ("progress", viewer), lambda: store.progress(viewer)) if count_progress
            else known_count(store, ("progress", viewer))),
        evidence_check=store.evidence_check(pair_id),
        reopened=store.reopened(pair_id, viewer), stale_checklist=store.stale_checklist(pair_id),
        leakage=store.leakage_check(pair_id), duplicates=store.group_of_pair(pair_id),
        answer_first=answer_first_view(store, pair),
    )


@dataclass(frozen=True)
class StatisticsView:
    """What the statistics screen shows: progress per annotator and the agreement figures.

    Attributes:
        progress: ``(annotator, pairs assigned, reviews submitted)`` per annotator, sorted by name.
        agreement: agreement of the decision and of each criterion, by field
            (:func:`benchwright.core.agreement.agreement_report`).
        checklists: agreement of checklists edited by two or more annotators
            (:func:`benchwright.core.agreement.project_checklist_agreement`).
        conditions: the condition deltas (:func:`benchwright.core.conditions.condition_deltas`, the defaults of
            ``report --conditions``), empty unless some model has judged answers under two of the conditions.
        conditions_error: why the deltas could not be computed (a judgment that cannot be read), else ``None``.
        plots: the numbers of the screen's plots (:class:`benchwright.core.plot_data.StatisticsPlots`: progress
            over time, agreement per criterion, score distributions, judge stability), ``None`` when not built.
    """

    progress: tuple[tuple[str, int, int], ...]
    agreement: Mapping[str, FieldAgreement]
    checklists: ProjectChecklistAgreement
    conditions: tuple = ()
    conditions_error: str | None = None
    plots: StatisticsPlots | None = None


def statistics_view(store: Store) -> StatisticsView:
    """The statistics screen's view of the project. Takes seconds the first time (the statistics libraries
    load): build it in a worker thread."""
    from benchwright.core.agreement import agreement_report, project_checklist_agreement
    from benchwright.core.conditions import condition_deltas
    from benchwright.core.errors import BenchwrightError
    from benchwright.db.report import report_inputs

    conditions, error, runs = (), None, ()
    try:
        runs = report_inputs(store).runs
        conditions = tuple(condition_deltas(runs))
    except BenchwrightError as e:
        error = str(e)
    agreement = agreement_report(store.review_ratings())
    return StatisticsView(
        progress=tuple(tuple(row) for row in store.annotator_progress()),
        agreement=agreement,
        checklists=project_checklist_agreement(store.checklist_edits()),
        conditions=conditions, conditions_error=error,
        plots=statistics_plots(store, agreement, runs, error),
    )


def statistics_plots(store: Store, agreement: Mapping[str, FieldAgreement], runs, runs_error: str | None = None,
                     ) -> StatisticsPlots:
    """The numbers of the statistics screen's plots (:mod:`benchwright.core.plot_data`): progress per day from
    :func:`benchwright.db.plot_data.decision_days`, ``agreement`` (``agreement_report`` of the reviews), and the
    score distributions and judge stability of ``runs`` (``report_inputs(store).runs``, the report's inputs);
    ``runs_error``: why the runs could not be read (shown instead of those two plots); the judges' calibration
    against humans from :func:`benchwright.tui.services.judge_calibration.calibration_report` (its defaults, as
    ``benchwright calibration``)."""
    from benchwright.core import plot_data
    from benchwright.core.errors import BenchwrightError
    from benchwright.core.metrics import judge_stability
    from benchwright.db.plot_data import decision_days

    from .judge_calibration import calibration_report

    calibration, calibration_error = None, None
    try:
        calibration = calibration_report(store)
    except BenchwrightError as e:
        calibration_error = str(e)
    return plot_data.StatisticsPlots(
        progress=plot_data.progress_over_time(decision_days(store)),
        agreement=tuple(plot_data.agreement_bars(agreement)),
        scores=tuple(plot_data.score_distributions(runs)),
        stability=tuple(plot_data.stability_ranges(judge_stability(runs))),
        scores_error=runs_error,
        calibration=tuple(plot_data.calibration_bars(calibration)), calibration_error=calibration_error,
    )


@dataclass(frozen=True)
class DisagreementRow:
    """One line of the adjudication queue: the disagreement and the pair's position (``#N``)."""

    disagreement: Disagreement
    ordinal: int


def adjudication_queue(store: Store, adjudicator: str) -> tuple[DisagreementRow, ...]:
    """The disagreements ``adjudicator`` may adjudicate, in queue order: never one of their own, nor a pair
    still blind to them (``Store.disagreements(viewer=...)``)."""
    return tuple(DisagreementRow(d, store.ordinal_of(d.qa_pair_id))
                 for d in store.disagreements(viewer=adjudicator))


@dataclass(frozen=True)
class AdjudicationView:
    """What the adjudication screen shows of one pair.

    Attributes:
        pair: the pair.
        ordinal: its position in the project (``#N``).
        reviews: every annotator's current submitted review, by name (an adjudicator sees them all).
        annotators: who reviewed the pair or edited its checklist, sorted.
        sides: the checklist versions compared side by side: the latest edits of the first two annotators who
            edited it, or the current version and the one edit when only one annotator edited it (fewer when
            there is nothing to compare).
    """

    pair: QAPair
    ordinal: int
    reviews: Mapping[str, Review]
    annotators: tuple[str, ...]
    sides: tuple[ChecklistVersion, ...]


def adjudication_view(store: Store, pair_id: str) -> AdjudicationView:
    """The adjudication screen's view of ``pair_id``.

    Raises:
        NotFoundError: no such pair.
    """
    pair = store.get_pair(pair_id)
    reviews = store.reviews_of(pair_id)
    edits = store.annotator_checklists(pair_id)
    versions = [store.checklist_version(pair_id, v) for v in edits.values()][:2]
    if len(versions) < 2:
        current = store.checklist_version(pair_id)
        versions = ([current] if current else []) + versions
    return AdjudicationView(
        pair=pair, ordinal=store.ordinal_of(pair_id), reviews=reviews,
        annotators=tuple(sorted(set(reviews) | set(edits))), sides=tuple(v for v in versions[:2] if v is not None),
    )


@dataclass(frozen=True)
class ExclusionGroup:
    """The pairs a release leaves out for one reason.

    Attributes:
        reason: why (its value says it).
        pair_ids: the pairs, in queue order.
        first_ordinals: the positions (``#N``) of the first :data:`FIRST_EXCLUDED` of them.
    """

    reason: Exclusion
    pair_ids: tuple[str, ...]
    first_ordinals: tuple[int, ...]


FIRST_EXCLUDED = 8
"""Excluded pairs named by position for each reason on the release screen."""


@dataclass(frozen=True)
class ReleaseView:
    """What the release screen shows before a release is made.

    Attributes:
        preflight: what the release would hold (``Store.release_preflight``); a release is made from it.
        excluded: the excluded pairs grouped by reason, sorted by reason.
    """

    preflight: Preflight
    excluded: tuple[ExclusionGroup, ...]


def release_view(store: Store, *, include_dropped: bool = False, selection: str | None = None) -> ReleaseView:
    """The release screen's view: the preflight and its exclusions grouped by reason. ``include_dropped``: also
    release pairs a gating curation step dropped (``releases create --include-dropped``); ``selection``: only the
    pairs of the latest version of that selection (``--selection``).

    Raises:
        NotFoundError: no selection of that name."""
    preflight = store.release_preflight(include_dropped=include_dropped,
                                        selection=None if selection is None else store.selection(selection))
    by_reason: dict[str, list[str]] = {}
    for pid, reason in preflight.excluded:
        by_reason.setdefault(reason, []).append(pid)
    return ReleaseView(preflight, tuple(
        ExclusionGroup(reason, tuple(ids), tuple(store.ordinal_of(i) for i in ids[:FIRST_EXCLUDED]))
        for reason, ids in sorted(by_reason.items())))


@dataclass(frozen=True)
class InspectorView:
    """What the judge inspector shows of a pair, whichever answer and judge are chosen.

    Attributes:
        pair: the pair.
        ordinal: its position in the project (``#N``).
        repository: its repository (cited files open in its checkout), None when it names none or it is not
            registered.
        answers: the pair's answers, by id, in model and condition order.
    """

    pair: QAPair
    ordinal: int
    repository: Repository | None
    answers: Mapping[str, Answer]


def inspector_view(store: Store, pair_id: str) -> InspectorView:
    """The judge inspector's view of ``pair_id``.

    Raises:
        NotFoundError: no such pair.
    """
    pair = store.get_pair(pair_id)
    repo = store.get_repository(pair.repository, missing_ok=True) if pair.repository else None
    return InspectorView(pair, store.ordinal_of(pair_id), repo, {a.id: a for a in store.answers(pair_id=pair_id)})


def judges_of(store: Store, answer_id: str) -> tuple[tuple[str, str], ...]:
    """``(judge, judge model)`` of every judge that judged ``answer_id``, in the order of their first
    judgment; human judgments (judge ``human``) are left out: the inspector shows them beside the judges'."""
    from benchwright.core.judges import is_human_judge

    combos: list[tuple[str, str]] = []
    for j in store.judgments(answer_id=answer_id):
        if not is_human_judge(j.judge) and (j.judge, j.judge_model) not in combos:
            combos.append((j.judge, j.judge_model))
    return tuple(combos)


@dataclass(frozen=True)
class JudgeRunsView:
    """One judge's runs on one answer, as the judge inspector's grid shows them.

    Attributes:
        grid: entries by runs, with the overrides applied (:func:`benchwright.core.inspection.judgment_grid`).
        failure_mode: the answer's current failure-mode label, None when it has none.
        self_judged: why these judgments are self-evaluation (the judge model wrote the answer or generated the
            pair's current checklist; judged with ``--allow-self-judge``), None when they are not (judge
            separation, :func:`benchwright.core.judges.self_judging`).
    """

    grid: JudgmentGrid
    failure_mode: FailureModeLabel | None
    self_judged: SelfJudging | None = None


def judge_runs_view(store: Store, answer_id: str, judge: str, judge_model: str) -> JudgeRunsView:
    """The grid of ``judge`` (run by ``judge_model``) on ``answer_id``, the answer's failure mode, and whether
    the judge model judged itself (RepoProbe §5.1.3)."""
    from benchwright.core.errors import BenchwrightError

    from .llm import configured_providers

    judgments = store.judgments(answer_id=answer_id, judge=judge, judge_model=judge_model)
    overrides = [o for j in judgments for o in store.overrides(j.id)]
    answer = store.get_answer(answer_id)
    current = store.checklist_version(answer.qa_pair_id)
    try:
        providers = configured_providers(store)
    except BenchwrightError:  # an unreadable benchwright.toml: compare the names as recorded
        providers = ()
    own = self_judging(judge_model, answer_model=answer.model, providers=providers,
                       checklist_author=current.author if current is not None else None)
    return JudgeRunsView(judgment_grid(judgments, overrides), store.failure_mode(answer_id), own)


@dataclass(frozen=True)
class ChecklistDiffView:
    """The checklist versions the diff screen offers, and the two it compares first.

    Attributes:
        versions: the pair's checklist versions the viewer may see, by number, oldest first (all of them when
            no viewer is given).
        left: the default old side: the generated version when the viewer may see one, else the first.
        right: the default new side: the latest version the viewer may see.
    """

    versions: Mapping[int, ChecklistVersion]
    left: int | None
    right: int | None


def checklist_diff_view(store: Store, pair_id: str, viewer: str | None = None) -> ChecklistDiffView:
    """The checklist diff screen's view of ``pair_id`` for ``viewer`` (blind mode hides the versions that are
    another annotator's own work until ``viewer`` submits; ``Store.checklist_history(viewer=...)``)."""
    history = list(store.checklist_history(pair_id, viewer=viewer))
    versions = {v.version: v for v in history}
    generated = store.first_version_of_origin(pair_id, "generated")
    if generated is not None and generated.version not in versions:
        generated = None
    left = generated.version if generated else (history[0].version if history else None)
    return ChecklistDiffView(versions, left, history[-1].version if history else None)


@dataclass(frozen=True)
class QueueProgress:
    """The queue screen's progress line.

    Attributes:
        progress: the annotator's progress counts.
        matching: pairs the queue's filter lets through.
    """

    progress: Progress
    matching: int


def queue_progress(store: Store, annotator: str, flt: QueueFilter) -> QueueProgress:
    """The queue's progress line for ``annotator`` under filter ``flt`` (its rows are read a page at a time,
    ``Store.queue_page``). Both counts come from :func:`counted` (counted again only after the project changed)."""
    return QueueProgress(counted(store, ("progress", annotator), lambda: store.progress(annotator)),
                         counted(store, ("matching", annotator, flt), lambda: store.count_filtered(annotator, flt)))


# ------------------------------------------------------------------------------------------ counts
COUNT_INLINE_PAIRS = 20_000
"""Projects of up to this many pairs count their progress while a screen opens; a larger one counts it in a thread
(:func:`progress_in_thread`: 0.7 s over 100,000 pairs with 60,000 decided) and the screen shows it when it is
done."""

_COUNTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def counted(store: Store, key: tuple, count: Callable[[], T], *, stamp: tuple[int, int] | None = None) -> T:
    """``count()``, or what it gave last time for ``key`` on ``store`` when the project has not changed since
    (:func:`benchwright.db.stamps.change_stamp`): counts over every pair (progress, pairs matching a filter) take
    a query over the whole project, and the queue and review screens ask for them on every visit. ``stamp``: the
    stamp taken before the count began (a count made elsewhere, in a thread)."""
    cache = _COUNTS.setdefault(store, {})
    now = change_stamp(store) if stamp is None else stamp
    hit = cache.get(key)
    if hit is not None and hit[0] == now:
        return hit[1]
    value = count()
    if len(cache) > 64:
        cache.clear()
    cache[key] = (now, value)
    return value


def known_count(store: Store, key: tuple):
    """The cached count for ``key`` on ``store`` when the project has not changed since it was made, else None."""
    hit = _COUNTS.get(store, {}).get(key)
    return hit[1] if hit is not None and hit[0] == change_stamp(store) else None


def forget_counts(store: Store) -> None:
    """Drop the counts kept for ``store`` (the next ask counts again)."""
    _COUNTS.pop(store, None)


def counts_inline(store: Store) -> bool:
    """True when ``store``'s progress is counted while a screen opens (at most :data:`COUNT_INLINE_PAIRS` pairs);
    a larger project counts it in a thread (:func:`progress_in_thread`)."""
    return counted(store, ("pairs",), store.count_pairs) <= COUNT_INLINE_PAIRS


def progress_in_thread(store: Store, annotator: str) -> Progress:
    """``annotator``'s progress counted on a connection of its own (for a worker thread: the store's connection
    stays free for the screen meanwhile), then kept as :func:`counted` keeps it."""
    return count_in_thread(store, ("progress", annotator), lambda s: s.progress(annotator))


def queue_progress_in_thread(store: Store, annotator: str, flt: QueueFilter) -> QueueProgress:
    """:func:`queue_progress` counted as :func:`progress_in_thread` counts (for a worker thread)."""
    return QueueProgress(progress_in_thread(store, annotator),
                         count_in_thread(store, ("matching", annotator, flt), lambda s: s.count_filtered(annotator, flt)))


def known_queue_progress(store: Store, annotator: str, flt: QueueFilter) -> QueueProgress | None:
    """:func:`queue_progress` from the counts kept when both still hold, else None (nothing is counted)."""
    progress, matching = known_count(store, ("progress", annotator)), known_count(store, ("matching", annotator, flt))
    return None if progress is None or matching is None else QueueProgress(progress, matching)


def count_in_thread(store: Store, key: tuple, count: Callable[[Store], T]) -> T:
    """``count(store)`` for :func:`counted`'s ``key``, made on a connection of its own when none is kept (a worker
    thread: the store's connection, and its lock, stay free for the screen meanwhile). Falls back to ``store``
    itself when it holds rows not committed yet, or its file cannot be opened a second time."""
    stamp = change_stamp(store)
    hit = _COUNTS.get(store, {}).get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    if in_transaction(store):  # rows not committed yet: only this connection sees them
        return counted(store, key, lambda: count(store))
    try:
        with Store.open(store.path, create=False) as own:
            value = count(own)
    except Exception:  # any reason not to open it again: count on the store itself
        value = count(store)
    return counted(store, key, lambda: value, stamp=stamp)


@dataclass(frozen=True)
class ChecklistEditorView:
    """What the checklist editor starts from.

    Attributes:
        pair: the pair.
        ordinal: its position in the project (``#N``).
        base: the version the edit starts from: the one the editor's annotator may see (in blind mode never
            another annotator's edit); None when the pair has no checklist they may see.
        stale: ``(made from, current)`` text versions when ``base`` was made from an older, different text of
            the pair (saving a version makes it fit the current text), else None.
    """

    pair: QAPair
    ordinal: int
    base: ChecklistVersion | None
    stale: tuple[int, int] | None = None


def checklist_editor_view(store: Store, pair_id: str, editor: str) -> ChecklistEditorView:
    """The checklist editor's view of ``pair_id`` for ``editor``.

    Raises:
        NotFoundError: no such pair.
    """
    base = visible_checklist(store, pair_id, editor)
    stale = store.stale_checklist(pair_id)
    return ChecklistEditorView(store.get_pair(pair_id), store.ordinal_of(pair_id), base,
                               stale if stale and base is not None and base.text_version == stale[0] else None)


@dataclass(frozen=True)
class CurationView:
    """The curation screen's results of one pair.

    Attributes:
        results: the current result of each step that has one, by step.
        has_checklist: the pair has a checklist (the checklist step does not generate one unless forced).
    """

    results: Mapping[str, CurationResult]
    has_checklist: bool


def curation_view(store: Store, pair_id: str) -> CurationView:
    """The current curation results of ``pair_id`` (read again after every step that finishes)."""
    return CurationView(store.curation_current(pair_id), store.checklist_version(pair_id) is not None)


# ------------------------------------------------------------------------------------------ trajectories
TRAJECTORY_OUTPUT_LINES = 12
"""Lines of one tool output the trajectory view shows (the rest is counted: ``N more lines``)."""

TRAJECTORY_LINE_CHARS = 400
"""Characters of one line (the model's text excepted) the trajectory view shows before cutting it with ``…``."""

TRAJECTORY_TEXT_CHARS = 20_000
"""Characters of a trajectory in another format (shown as JSON) the view keeps; the rest is counted
(``answers show ID --trajectory`` prints all of it)."""


def _capped(text: str) -> str:
    if len(text) <= TRAJECTORY_TEXT_CHARS:
        return text
    return (text[:TRAJECTORY_TEXT_CHARS] + f"\n… {len(text) - TRAJECTORY_TEXT_CHARS:,} more characters "
            "(benchwright answers show ANSWER_ID --trajectory prints them)")


@dataclass(frozen=True)
class ToolUseView:
    """One tool call of a turn as the trajectory view shows it.

    Attributes:
        name: the tool; arguments: its arguments on one line (JSON, or the raw text when they did not parse).
        output: the first :data:`TRAJECTORY_OUTPUT_LINES` lines of what the tool returned to the model.
        more_lines: lines of the output not shown.
        ok: False when the call was refused or failed (``output`` says why).
        truncated: the agent cut the output before sending it to the model.
        elided_at_turn: the turn at which the output was elided from the context, or None.
    """

    name: str
    arguments: str
    output: tuple[str, ...]
    more_lines: int
    ok: bool
    truncated: bool
    elided_at_turn: int | None


@dataclass(frozen=True)
class TurnView:
    """One turn (model call) of a trajectory.

    Attributes:
        index: 1-based turn number; text: what the model said.
        input_tokens, output_tokens: the call's usage; context_tokens: the estimated size of what was sent.
        cached: the call was replayed from the ledger (a resumed run).
        elided: call ids of earlier tool outputs elided before this turn was sent.
        tool_uses: the calls, in order.
    """

    index: int
    text: str
    input_tokens: int
    output_tokens: int
    context_tokens: int
    cached: bool
    elided: tuple[str, ...]
    tool_uses: tuple[ToolUseView, ...]


@dataclass(frozen=True)
class TrajectoryView:
    """An answer's trajectory, readable (benchwright's agent format, :class:`benchwright.core.agent.model.Turn`
    as JSON) or, for any other format (SWE-QA agent files, anything imported), the JSON as stored.

    Attributes:
        turns: the turns, or None when the trajectory is not in benchwright's format (or there is none).
        raw: the trajectory as indented JSON ('' when there is none; cut at :data:`TRAJECTORY_TEXT_CHARS`):
            what is shown when ``turns`` is None.
        tool_counts: calls per tool, in first-call order.
        refused: calls refused or failed; elisions: tool outputs elided to fit the context budget.
        citations_resolving, citations_not: cited locations in the final answer that resolve in the
            repository / do not (the answer's ``extra["citations"]``); None when not counted.
        unresolved: the citations that do not resolve, each ``CITED (STATUS)``.
        confinement: how the run's command_line calls were confined (``sandboxed (bubblewrap: ...)``, ``not
            sandboxed ...``; the run's ``settings.sandbox_note``), None when not recorded.
    """

    turns: tuple[TurnView, ...] | None
    raw: str
    tool_counts: Mapping[str, int] = field(default_factory=dict)
    refused: int = 0
    elisions: int = 0
    citations_resolving: int | None = None
    citations_not: int | None = None
    unresolved: tuple[str, ...] = ()
    confinement: str | None = None


def _one_line(text: str) -> str:
    line = text.replace("\r\n", "\n").replace("\n", "\\n")
    return line if len(line) <= TRAJECTORY_LINE_CHARS else line[:TRAJECTORY_LINE_CHARS] + "…"


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _citations(extra) -> tuple[int | None, int | None, tuple[str, ...]]:
    """``(resolving, not resolving, the cited text of those not resolving)`` from an answer's
    ``extra["citations"]`` (:meth:`benchwright.core.agent.citations.CitationCount.as_json`); Nones when absent."""
    cites = extra.get("citations") if isinstance(extra, dict) else None
    if not isinstance(cites, dict):
        return None, None, ()
    items = cites.get("items") if isinstance(cites.get("items"), list) else []
    unresolved = tuple(f"{i.get('cited')} ({i.get('status')})" for i in items
                       if isinstance(i, dict) and not i.get("resolves"))
    return _count(cites.get("resolving")), _count(cites.get("not_resolving")), unresolved


def _turn_view(turn, *, full: bool = False) -> TurnView:
    """One stored turn as a :class:`TurnView` (``full``: every output line, whole). Raises KeyError, TypeError or
    ValueError when it is not in benchwright's format."""
    import json

    if not isinstance(turn, dict) or not isinstance(turn["index"], int) or not isinstance(turn["tool_uses"], list):
        raise TypeError("not a turn")
    uses = []
    for u in turn["tool_uses"]:
        raw = u.get("arguments_raw")
        args = raw if isinstance(raw, str) else json.dumps(u["arguments"], ensure_ascii=False, sort_keys=False)
        lines = str(u.get("output") or "").splitlines()
        shown = lines if full else [_one_line(line) for line in lines[:TRAJECTORY_OUTPUT_LINES]]
        uses.append(ToolUseView(
            name=str(u["name"]), arguments=args if full else _one_line(args), output=tuple(shown),
            more_lines=len(lines) - len(shown), ok=bool(u.get("ok", True)),
            truncated=bool(u.get("truncated")), elided_at_turn=_count(u.get("elided_at_turn"))))
    usage = turn.get("usage") if isinstance(turn.get("usage"), dict) else {}
    return TurnView(
        index=turn["index"], text=str(turn.get("text") or ""),
        input_tokens=_count(usage.get("input_tokens")) or 0, output_tokens=_count(usage.get("output_tokens")) or 0,
        context_tokens=_count(turn.get("context_tokens")) or 0, cached=bool(turn.get("cached")),
        elided=tuple(str(e) for e in turn.get("elided") or ()), tool_uses=tuple(uses))


def trajectory_view(answer: Answer, *, full: bool = False) -> TrajectoryView:
    """The inspector's view of ``answer``'s trajectory (its ``t`` key; SWE-QA-Pro §3.1 trajectories).

    A trajectory in benchwright's agent format (a list of turns, each with ``index`` and ``tool_uses``) gives
    its turns, each tool output cut at :data:`TRAJECTORY_OUTPUT_LINES` lines, and the totals; any other value
    (an imported SWE-QA trajectory, a malformed list) gives ``turns=None`` and the JSON as stored. Text is kept
    as stored: the screen shows it literally. ``full`` (``answers show --trajectory``): every output line, whole.
    """
    return _trajectory_view(answer.trajectory, answer.extra, full=full)


def _trajectory_view(traj, extra, *, full: bool = False, settings: Mapping | None = None) -> TrajectoryView:
    """:func:`trajectory_view` of a stored trajectory and the extra fields holding its answer's citations (and its
    run's settings, unless ``settings`` gives them)."""
    import json

    if traj is None:
        return TrajectoryView(None, "")
    raw = _capped(json.dumps(traj, indent=1, ensure_ascii=False))
    if not isinstance(traj, list) or not traj:
        return TrajectoryView(None, raw)
    try:
        turns = tuple(_turn_view(t, full=full) for t in traj)
    except (KeyError, TypeError, ValueError, AttributeError):
        return TrajectoryView(None, raw)
    counts: dict[str, int] = {}
    for t in turns:
        for u in t.tool_uses:
            counts[u.name] = counts.get(u.name, 0) + 1
    resolving, unresolved, not_resolving = _citations(extra)
    if settings is None:
        settings = extra.get("settings") if isinstance(extra, Mapping) else None
    note = settings.get("sandbox_note") if isinstance(settings, Mapping) else None
    return TrajectoryView(
        turns, raw, counts, refused=sum(not u.ok for t in turns for u in t.tool_uses),
        elisions=sum(u.elided_at_turn is not None for t in turns for u in t.tool_uses),
        citations_resolving=resolving, citations_not=unresolved, unresolved=not_resolving,
        confinement=note if isinstance(note, str) and note else None)


# ------------------------------------------------------------------------------------------ agent answer runs
@dataclass(frozen=True)
class AnswerRunView:
    """What the agent-answer run screen offers before a run (SWE-QA-Pro §3.1; Code-QA-Bench's conditions).

    Attributes:
        model: the answering role's model from benchwright.toml (``[roles.generator]``), '' when none is set.
        model_problem: why there is no model (the configuration error's text), or None.
        conditions: ``(name, title, description)`` of every condition whose answers the agent writes in a
            repository (core's condition registry), in registry order.
        matching: pairs the queue filter lets through.
    """

    model: str
    model_problem: str | None
    conditions: tuple[tuple[str, str, str], ...]
    matching: int


def answer_run_view(store: Store, annotator: str, flt: QueueFilter) -> AnswerRunView:
    """The run screen's choices for ``annotator``'s queue under filter ``flt``. Builds no provider (no API key
    is needed to look)."""
    from benchwright.core.errors import BenchwrightError
    from benchwright.core.vocabulary import CONDITION_REGISTRY

    from .llm import ANSWER_ROLE, llm_role

    try:
        model, problem = llm_role(store, ANSWER_ROLE)[1].model, None
    except BenchwrightError as e:
        model, problem = "", str(e)
    conditions = tuple((c.name, c.display, c.description) for c in CONDITION_REGISTRY if c.needs_agent)
    return AnswerRunView(model, problem, conditions, store.count_filtered(annotator, flt))


@dataclass(frozen=True)
class AnswerRunResult:
    """One finished (pair, sample) of an agent run, as the run screen's result list shows it.

    Attributes:
        pair_id, ordinal: the pair and its position (``#N``); sample_index: which sample; model, condition: of the
            run.
        status: ``ok`` (an answer was stored), ``failed`` (stored as a failed run, no answer) or ``skipped``
            (another process had it, or answered it meanwhile); reason: why it failed or was skipped.
        turns: model calls of the run; calls: of them, sent now (the rest came from the ledger).
        cost_usd: the known cost of the calls sent now.
        answer_id: the answer an ok run stored (enter on it opens the inspector there), else None.
    """

    pair_id: str
    ordinal: int
    sample_index: int
    model: str
    condition: str
    status: str
    reason: str | None
    turns: int
    calls: int
    cost_usd: float
    answer_id: str | None = None

    @property
    def ok(self) -> bool:
        """True when an answer was stored."""
        return self.status == "ok"


def answer_run_result(store: Store, outcome, model: str, condition: str) -> AnswerRunResult:
    """The result row of ``outcome`` (an :class:`benchwright.tui.services.agent_runs.AgentAnswerOutcome`) of a
    run of ``model`` under ``condition``."""
    return AnswerRunResult(outcome.qa_pair_id, store.ordinal_of(outcome.qa_pair_id), outcome.sample_index, model,
                           condition, outcome.status, outcome.reason, outcome.turns, outcome.calls, outcome.cost_usd,
                           getattr(outcome, "answer_id", None))


def run_trajectory_view(store: Store, result: AnswerRunResult) -> TrajectoryView:
    """The trajectory of ``result``'s (pair, model, condition, sample) as stored by its latest run, failed runs
    included (a failed run has no answer, so the inspector cannot show it); the citation counts of the answer an
    ok run stored. ``TrajectoryView(None, "")`` when nothing is stored (a skipped item)."""
    runs = store.answer_runs(result.pair_id, result.model, result.condition, result.sample_index, latest_only=True)
    if not runs:
        return TrajectoryView(None, "")
    answers = store.answers(pair_id=result.pair_id, model=result.model, condition=result.condition,
                            sample_index=result.sample_index) if runs[-1].ok else []
    return _trajectory_view(runs[-1].trajectory, answers[0].extra if answers else None,
                            settings=runs[-1].settings)


@dataclass(frozen=True)
class RefusalGroup:
    """Pairs a planned run leaves out for one reason (no repository, no checkout, no code-only copy...).

    Attributes:
        reason: why (the plan's words, with the remedy); pair_ids: the pairs, in plan order;
        first_ordinals: the positions (``#N``) of the first :data:`FIRST_EXCLUDED` of them.
    """

    reason: str
    pair_ids: tuple[str, ...]
    first_ordinals: tuple[int, ...]


def refusal_groups(store: Store, refused) -> tuple[RefusalGroup, ...]:
    """``refused`` (``(pair id, reason)`` pairs of a plan) grouped by reason, in order of first appearance."""
    by_reason: dict[str, list[str]] = {}
    for pid, reason in refused:
        by_reason.setdefault(reason, []).append(pid)
    return tuple(RefusalGroup(reason, tuple(ids), tuple(store.ordinal_of(i) for i in ids[:FIRST_EXCLUDED]))
                 for reason, ids in by_reason.items())
