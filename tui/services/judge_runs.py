"""Running the judges, direct answers and the failure-mode classifier over the project's answers: choose the
work, build each input from the store, run it through the LLM client with bounded concurrency, and store every
outcome as soon as it finishes (like :mod:`benchwright.tui.services.curation_runs`).

Resuming is free: an (answer, run) that already has a scored judgment by the same judge and judge model (for the
checklist judge: against the current checklist version) is skipped unless forced, and every finished call is in
the ledger, so rerunning a finished job makes no calls. Unscored judgments are retried by a rerun; the new row is
the run's latest judgment (``Store.judgments(latest_only=True)``) and the unscored one stays in the history.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field, replace
from typing import Any

from benchwright.core.errors import BenchwrightError, NotFoundError, Remedy, with_remedy
from benchwright.core.judges import (
    JUDGE_REGISTRY,
    Ineligible,
    SelfJudging,
    checklist_problem,
    judge_eligibility,
    run_is_done,
    self_judging,
)
from benchwright.core.judging import (
    FAILURE_THRESHOLD,
    JUDGES,
    AnswerOutcome,
    AnswerSettings,
    FailureInput,
    FailureOutcome,
    JudgeInput,
    JudgeOutcome,
    JudgeSettings,
    classify_failure,
    direct_answer,
    gold_key_points,
    needs_failure_label,
    run_judge,
    samples_problem,
)
from benchwright.core.judgment import (
    CONDITIONS,
    FAILURE_MODES,
    Answer,
    FailureModeLabel,
    Judgment,
    JudgmentError,
    check_choice,
    effective_score_rate,
)
from benchwright.core.llm.client import LLMClient
from benchwright.core.llm.jobs import ItemTally, Job, JobProgress
from benchwright.core.vocabulary import CONDITION_REGISTRY, DIRECT_CONDITIONS
from benchwright.db import QueueFilter, Store
from benchwright.db.llm import claim_owner

from .curation_runs import build_input

# The eligibility rule and its reasons live in core (core/judges.py: judge_eligibility, Ineligible); these
# names are kept for callers.
INELIGIBLE_NO_REFERENCE = Ineligible.NO_REFERENCE
INELIGIBLE_NO_CHECKLIST = Ineligible.NO_CHECKLIST
INELIGIBLE_INVALID_CHECKLIST = Ineligible.INVALID_CHECKLIST
INELIGIBLE_DRAFT_CHECKLIST = Ineligible.DRAFT_CHECKLIST


def _pair_ids_matching(store: Store, where: QueueFilter | None, annotator: str = "") -> list[str] | None:
    if where is None or where == QueueFilter():
        return None
    return store.filtered_pair_ids(annotator, where)


def select_answers(store: Store, *, answers_model: str | None = None, condition: str | None = None,
                   where: QueueFilter | None = None, annotator: str = "") -> list[Answer]:
    """Answers by ``answers_model`` under ``condition`` (None: any) whose pairs match ``where``, in queue order.

    Raises:
        JudgmentError: unknown condition.
    """
    if condition is not None:
        check_choice(condition, CONDITIONS, "condition")
    answers = store.answers(model=answers_model, condition=condition)
    wanted = _pair_ids_matching(store, where, annotator)
    if wanted is not None:
        keep = set(wanted)
        answers = [a for a in answers if a.qa_pair_id in keep]
    return answers


# ------------------------------------------------------------------------------------------------ judging
@dataclass
class JudgePlan:
    """The work of one judge run.

    Attributes:
        targets: ``(answer_id, run_index)`` to judge, answer by answer.
        answers: answers selected (before eligibility and resume).
        done: (answer, run) pairs skipped because a scored judgment is already there.
        ineligible: reason -> answer ids left out (no reference answer; for the checklist judge no checklist, an
            invalid one, or a draft).
        self_judged: reason (:class:`~benchwright.core.judges.SelfJudging`) -> answer ids left out because the
            judge model wrote the answer or generated the pair's current checklist (RepoProbe §5.1.3); empty when
            self-judging is allowed.
    """

    judge: str
    judge_model: str
    runs: int
    targets: list[tuple[str, int]] = field(default_factory=list)
    answers: int = 0
    done: int = 0
    ineligible: dict[str, list[str]] = field(default_factory=dict)
    self_judged: dict[SelfJudging, list[str]] = field(default_factory=dict)

    @property
    def self_judged_count(self) -> int:
        """How many answers were left out as self-judging."""
        return sum(len(ids) for ids in self.self_judged.values())


def _checklist_state(store: Store, pair_id: str):
    v = store.checklist_version(pair_id)
    return v, checklist_problem(v)


def plan_judging(store: Store, judge: str, judge_model: str, *, runs: int | None = None,
                 answers_model: str | None = None, condition: str | None = None, where: QueueFilter | None = None,
                 limit: int | None = None, force: bool = False, annotator: str = "",
                 allow_self_judge: bool = False, providers: Collection[str] | None = None) -> JudgePlan:
    """What ``judge`` by ``judge_model`` has to do: for every selected, eligible answer, the runs 0..runs-1 that
    have no scored judgment yet (all of them with ``force``). ``limit`` caps the number of answers with work.

    Judge separation (RepoProbe §5.1.3, SWE-QA-Pro §4.1; the rule is core's
    :func:`~benchwright.core.judges.self_judging`): an answer written by ``judge_model``, or whose pair's current
    checklist it generated, is left out and listed in ``self_judged`` unless ``allow_self_judge``. Model names
    compare with the provider prefix stripped: ``providers`` are the prefixes (default: the project's configured
    providers, :func:`~benchwright.tui.services.llm.configured_providers`).

    Which answers a judge may score is core's rule (:func:`~benchwright.core.judges.judge_eligibility`): pairs
    with a reference answer; for a judge that needs a checklist, its current checklist valid and not a draft
    (RepoProbe §4.1). Others are listed in ``ineligible`` by reason (:class:`~benchwright.core.judges.Ineligible`).

    Raises:
        BenchwrightError: unknown judge or runs below 1.
        JudgmentError: unknown condition.
    """
    spec = JUDGE_REGISTRY.get(judge)  # UnknownNameError, a BenchwrightError naming the judges
    if not spec.llm:
        raise BenchwrightError(f"judge {judge!r} is not run by an LLM; use one of {', '.join(JUDGES)}")
    runs = spec.default_runs if runs is None else runs
    if runs < 1:
        raise BenchwrightError(f"runs per answer must be at least 1, not {runs}")
    plan = JudgePlan(judge, judge_model, runs)
    if providers is None and not allow_self_judge:
        from .llm import configured_providers

        providers = configured_providers(store)
    answers = select_answers(store, answers_model=answers_model, condition=condition, where=where,
                             annotator=annotator)
    plan.answers = len(answers)
    latest: dict[tuple[str, int], Judgment] = {
        (j.answer_id, j.run_index): j for j in store.judgments(judge=judge, judge_model=judge_model, latest_only=True)
    }
    with_work = 0
    for a in answers:
        pair = store.get_pair(a.qa_pair_id)
        current = store.checklist_version(a.qa_pair_id)
        v = current if spec.needs_checklist else None
        why = judge_eligibility(judge, has_reference=not pair.needs_reference, checklist=v)
        if why is not None:
            plan.ineligible.setdefault(why, []).append(a.id)
            continue
        if not allow_self_judge:
            own = self_judging(judge_model, answer_model=a.model,
                               checklist_author=current.author if current is not None else None,
                               providers=providers or ())
            if own is not None:
                plan.self_judged.setdefault(own, []).append(a.id)
                continue
        version = v.version if v is not None else None
        todo = []
        for run in range(runs):
            j = latest.get((a.id, run))
            if not force and j is not None and run_is_done(judge, scored=j.scored, judged_version=j.checklist_version,
                                                           checklist_version=version):
                plan.done += 1
                continue
            todo.append((a.id, run))
        if todo:
            if limit is not None and with_work >= limit:
                break
            with_work += 1
            plan.targets.extend(todo)
    return plan


def build_judge_input(store: Store, answer: Answer, judge: str) -> JudgeInput:
    """The judge's view of ``answer``: the pair's working question and reference answer (refined when curation
    refined them, as the checklist was generated from), the candidate text, and the current checklist (the
    checklist judge requires it valid; Code-QA-Bench uses its key points as the rubric when valid), and the gold
    answer's key points (the pair's ``extra["gold_key_points"]``: Code-QA-Bench's rubric before the checklist's)."""
    pin = build_input(store, answer.qa_pair_id, "checklist")
    checklist, version = None, None
    v, why = _checklist_state(store, answer.qa_pair_id)
    if v is not None and why is None:
        checklist, version = v.checklist, v.version
    return JudgeInput(
        answer_id=answer.id, qa_pair_id=answer.qa_pair_id, repository=pin.pair.repository, question=pin.question,
        reference_answer=pin.answer, answer=answer.text, checklist=checklist,
        checklist_version=version if JUDGE_REGISTRY.get(judge).needs_checklist else None,
        gold_key_points=gold_key_points(pin.pair.extra),
    )


def save_judgment_outcome(store: Store, outcome: JudgeOutcome, *, by: str) -> Judgment:
    """Store one judge outcome as a ``judgments`` row (scored or unscored with its reason and raw output)."""
    return store.save_judgment(outcome.to_judgment(), created_by=by)


async def _run_and_store(client: LLMClient, items: list, work: Callable[[Any], Awaitable[Any]],
                         tally: Callable[[Any], ItemTally], save: Callable[[Any, Any], object],
                         on_progress: Callable[[JobProgress], object] | None,
                         on_outcome: Callable[[Any], object] | None) -> JobProgress:
    """Run ``work(item)`` for every item (at most the provider's concurrency at once); as each finishes, call
    ``save(item, outcome)`` (which stores it, or not) and then ``on_outcome(outcome)``. Returns the final progress.

    Raises:
        asyncio.CancelledError: the run was cancelled (what finished is stored).
    """

    def stored(item: Any, outcome: Any) -> None:
        save(item, outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    job = Job(work, concurrency=client.job_concurrency, tally=tally, on_result=stored, on_progress=on_progress)
    # an item's last ledger row commits with its result, one transaction (the ledger is the project's store)
    deferring = getattr(client.ledger, "deferring_commits", None)
    with deferring() if deferring is not None else contextlib.nullcontext():
        return await job.run(items)


async def run_judging(store: Store, client: LLMClient, judge: str, targets: list[tuple[str, int]],
                      settings: JudgeSettings, *, by: str, on_progress: Callable[[JobProgress], object] | None = None,
                      on_outcome: Callable[[JudgeOutcome], object] | None = None) -> JobProgress:
    """Judge every ``(answer_id, run_index)`` of ``targets`` (at most the provider's concurrency at once) and store
    each judgment when it finishes. Returns the final progress.

    Raises:
        asyncio.CancelledError: the run was cancelled (what finished is stored).
        LLMConfigError: the provider is misconfigured.
    """
    inputs: dict[str, JudgeInput] = {}
    owner = claim_owner()
    work_key = f"judge:{judge}:{settings.model}"
    # What each target's latest judgment was when this run started: a newer scored one means another run
    # judged it meanwhile.
    before = {}
    for answer_id, run_index in targets:
        latest = store.latest_judgment(answer_id, judge, settings.model, run_index)
        before[(answer_id, run_index)] = latest.id if latest is not None else None

    async def work(target: tuple[str, int]) -> JudgeOutcome:
        answer_id, run_index = target
        item = f"{answer_id}:{run_index}"
        if not store.claim(work_key, item, owner):
            return JudgeOutcome(answer_id, judge, settings.model, run_index, status="skipped",
                                reason="another run is judging it")
        try:
            if not settings.force:
                latest = store.latest_judgment(answer_id, judge, settings.model, run_index)
                if latest is not None and latest.scored and latest.id != before.get(target):
                    store.release(work_key, item, owner)
                    return JudgeOutcome(answer_id, judge, settings.model, run_index, status="skipped",
                                        reason="judged meanwhile by another run")
            if answer_id not in inputs:
                inputs[answer_id] = build_judge_input(store, store.get_answer(answer_id), judge)
            return await run_judge(judge, client, inputs[answer_id], settings, run_index)
        except BaseException:
            store.release(work_key, item, owner)
            raise

    def save(target: tuple[str, int], outcome: JudgeOutcome) -> None:
        if outcome.skipped:
            return
        item = f"{target[0]}:{target[1]}"
        try:
            with store.write():
                save_judgment_outcome(store, outcome, by=by)
                store.release(work_key, item, owner)
        except BaseException:
            store.release(work_key, item, owner)
            raise

    return await _run_and_store(client, targets, work, JudgeOutcome.tally, save, on_progress, on_outcome)


# ------------------------------------------------------------------------------------------ direct answers
@dataclass
class AnswerPlan:
    """The direct answers to write: ``targets`` ``(pair id, sample index)``, pair by pair; ``pair_ids`` the pairs
    with work; ``already_answered`` the (pair, sample) left out because the model has an answer there under the
    condition."""

    pair_ids: list[str] = field(default_factory=list)
    already_answered: int = 0
    targets: list[tuple[str, int]] = field(default_factory=list)


def plan_direct_answers(store: Store, model: str, condition: str, *, where: QueueFilter | None = None,
                        limit: int | None = None, annotator: str = "", samples: int = 1) -> AnswerPlan:
    """Every (pair matching ``where``, in queue order; sample 0..samples-1) without an answer by ``model`` under
    ``condition``; at most ``limit`` pairs with work. An answer is (pair, model, condition, sample index)
    (``answers`` UNIQUE), so answered samples are skipped.

    Raises:
        JudgmentError: unknown condition, or a condition whose answers the agent writes in a repository
            (``CONDITION_ACCESS``): a direct answer under it would claim an access it did not have.
        BenchwrightError: samples outside 1..MAX_SAMPLES (core.judging.samples_problem).
    """
    check_choice(condition, CONDITIONS, "condition")
    if CONDITION_REGISTRY.get(condition).needs_agent:
        raise JudgmentError(f"condition {condition} means the agent reads the repository; a direct answer has no "
                            f"repository access: use --condition {' or '.join(DIRECT_CONDITIONS)}, or --agent")
    problem = samples_problem(samples)
    if problem:
        raise BenchwrightError(problem)
    wanted = _pair_ids_matching(store, where, annotator)
    ids = wanted if wanted is not None else store.filtered_pair_ids(annotator)
    have = {(a.qa_pair_id, a.sample_index) for a in store.answers(model=model, condition=condition)}
    plan = AnswerPlan()
    for pid in ids:
        todo = [(pid, s) for s in range(samples) if (pid, s) not in have]
        plan.already_answered += samples - len(todo)
        if todo and (limit is None or len(plan.pair_ids) < limit):
            plan.pair_ids.append(pid)
            plan.targets.extend(todo)
    return plan


def save_direct_answer(store: Store, outcome: AnswerOutcome, *, model: str, condition: str, by: str) -> str:
    """Insert a generated answer (source format ``direct-answer``; extra: the template hash and ledger call ids,
    and for an answer cut off at the token budget ``"truncated": {"max_tokens": N or None, "reason": TEXT}``);
    returns its id. A second answer by the same model under the same condition is refused.

    Raises:
        BenchwrightError: the pair already has a different answer by ``model`` under ``condition``.
    """
    extra = {"generated_by": "benchwright answer", "template_hash": outcome.template_hash,
             "call_ids": outcome.call_ids}
    if outcome.truncated:
        extra["truncated"] = {"max_tokens": outcome.max_tokens, "reason": outcome.reason}
    return store.add_generated_answer(outcome.qa_pair_id, model, condition, outcome.text, extra=extra, by=by,
                                      sample_index=outcome.sample_index)


async def run_direct_answers(store: Store, client: LLMClient, pair_ids: list[str] | list[tuple[str, int]],
                             settings: AnswerSettings, *, condition: str, by: str,
                             on_progress: Callable[[JobProgress], object] | None = None,
                             on_outcome: Callable[[AnswerOutcome], object] | None = None) -> JobProgress:
    """Generate a direct answer (no repository access, one turn; SWE-QA-Pro §2.3) for every pair (a pair id: sample
    0; or a ``(pair id, sample index)`` target of :func:`plan_direct_answers`) and store each as an answer by
    ``settings.model`` under ``condition`` as soon as it arrives. Failed ones are not stored; one cut off at the
    token budget (after the retry with a larger one) is stored flagged ``truncated`` in its extra.

    Raises:
        asyncio.CancelledError: the run was cancelled (what finished is stored).
    """
    targets = [(t, 0) if isinstance(t, str) else (t[0], int(t[1])) for t in pair_ids]
    settings = replace(settings, condition=condition)  # the cache scope: conditions never share a draw

    async def work(target: tuple[str, int]) -> AnswerOutcome:
        pin = build_input(store, target[0], "checklist")
        return await direct_answer(client, target[0], pin.pair.repository, pin.question, settings, target[1])

    def save(target: tuple[str, int], outcome: AnswerOutcome) -> None:
        if outcome.ok or outcome.truncated:
            save_direct_answer(store, outcome, model=settings.model, condition=condition, by=by)

    return await _run_and_store(client, targets, work, AnswerOutcome.tally, save, on_progress, on_outcome)


# ------------------------------------------------------------------------------------------ failure modes
@dataclass
class FailureCandidate:
    """A low-scoring answer to classify: its mean checklist score rate over scored runs and those judgments."""

    answer: Answer
    score_rate: float
    judgments: list[Judgment]


@dataclass
class FailurePlan:
    """Answers to classify, and those left out: already labelled (by the classifier, or corrected by an
    annotator, whose label is never replaced), or at or above the threshold."""

    candidates: list[FailureCandidate] = field(default_factory=list)
    labelled: int = 0
    annotator_labelled: int = 0
    above_threshold: int = 0
    not_judged: int = 0


def plan_failure_modes(store: Store, *, judge_model: str | None = None, answers_model: str | None = None,
                       condition: str | None = None, where: QueueFilter | None = None,
                       threshold: float = FAILURE_THRESHOLD, limit: int | None = None, force: bool = False,
                       annotator: str = "") -> FailurePlan:
    """Answers whose checklist score rate, the mean over their scored runs (latest judgment per run, annotators'
    score overrides applied; by ``judge_model`` or any judge model) is below ``threshold`` (RepoProbe §5.4: 60%).

    Answers that already have a label are skipped unless ``force``; a label an annotator gave is never replaced.
    """
    answers = select_answers(store, answers_model=answers_model, condition=condition, where=where,
                             annotator=annotator)
    by_answer: dict[str, list[Judgment]] = defaultdict(list)
    for j in store.judgments(judge="checklist", judge_model=judge_model, latest_only=True):
        by_answer[j.answer_id].append(j)
    overrides = defaultdict(list)
    for o in store.overrides():
        overrides[o.judgment_id].append(o)
    plan = FailurePlan()
    for a in answers:
        judged = by_answer.get(a.id, [])
        rates = [effective_score_rate(j, overrides.get(j.id, []))[0] for j in judged]
        scored = [r for r in rates if r is not None]
        if not scored:
            plan.not_judged += 1
            continue
        if not needs_failure_label(scored, threshold):
            plan.above_threshold += 1
            continue
        label = store.failure_mode(a.id)
        if label is not None and label.origin == "annotator":
            plan.annotator_labelled += 1
            continue
        if label is not None and not force:
            plan.labelled += 1
            continue
        plan.candidates.append(FailureCandidate(a, sum(scored) / len(scored), [j for j in judged if j.scored]))
    if limit is not None:
        plan.candidates = plan.candidates[:limit]
    return plan


def judge_scores_text(judgments: list[Judgment]) -> str:
    """The checklist judge's scored runs as text for the classifier: per item its key point, kind, weight, the
    score of every run and the first run's rationale."""
    if not judgments:
        return "(no scored judgment)"
    runs = sorted(judgments, key=lambda j: (j.run_index, j.id))
    lines = [f"Score rate per run: {', '.join(f'{j.score_rate:.0%}' for j in runs)}"]
    for e in runs[0].entries:
        scores = []
        for j in runs:
            try:
                scores.append(str(j.entry(e.key).score))
            except BenchwrightError:
                scores.append("-")
        lines.append(f"Item {e.key} ({e.kind}, weight {e.max}): {e.label}")
        lines.append(f"  scores by run: {', '.join(scores)} of {e.max}")
        if e.rationale:
            lines.append(f"  judge's rationale: {e.rationale}")
    return "\n".join(lines)


async def run_failure_modes(store: Store, client: LLMClient, candidates: list[FailureCandidate],
                            settings: JudgeSettings, *, on_progress: Callable[[JobProgress], object] | None = None,
                            on_outcome: Callable[[FailureOutcome], object] | None = None) -> JobProgress:
    """Classify every candidate's failure mode (RepoProbe §5.4) and store each label (origin ``llm``, with the
    classifier model and its call ids) as soon as it arrives. Failed classifications are not stored."""
    by_id = {c.answer.id: c for c in candidates}

    async def work(answer_id: str) -> FailureOutcome:
        c = by_id[answer_id]
        pin = build_input(store, c.answer.qa_pair_id, "checklist")
        item = FailureInput(
            answer_id=answer_id, qa_pair_id=c.answer.qa_pair_id, repository=pin.pair.repository,
            question=pin.question, reference_answer=pin.answer, answer=c.answer.text,
            judge_scores=judge_scores_text(c.judgments), score_rate=c.score_rate,
        )
        return await classify_failure(client, item, settings)

    def save(answer_id: str, outcome: FailureOutcome) -> None:
        if outcome.ok:
            store.add_failure_mode(answer_id, outcome.mode, outcome.rationale, "llm", judge_model=settings.model,
                                   call_ids=outcome.call_ids)

    return await _run_and_store(client, list(by_id), work, FailureOutcome.tally, save, on_progress, on_outcome)


def resolve_answer(store: Store, ref: str) -> str:
    """An answer id from ``ref``: a full id or a unique prefix of one (at least 6 characters).

    Raises:
        NotFoundError: no answer matches, or the prefix matches several (they are named).
    """
    text = ref.strip()
    if len(text) < 6:
        raise NotFoundError(f"answer {ref!r}: give the answer id or at least 6 of its first characters")
    rows = store.answer_ids_with_prefix(text, limit=6)
    if text in rows:
        return text
    if not rows:
        raise NotFoundError(f"no answer with id {ref!r}; list them with: benchwright answers list")
    if len(rows) > 1:
        raise NotFoundError(f"answer {ref!r} is ambiguous: {', '.join(rows[:5])}{' ...' if len(rows) > 5 else ''}")
    return rows[0]


def set_failure_mode(store: Store, ref: str, mode: str, reason: str, *, annotator: str) -> FailureModeLabel:
    """An annotator's correction of an answer's failure mode (origin ``annotator``; the latest label wins, the
    classifier's stays in the history).

    Raises:
        NotFoundError: no such answer.
        JudgmentError: unknown mode (the message lists them) or an empty reason.
    """
    check_choice(mode, FAILURE_MODES, "failure mode")
    if not reason or not reason.strip():
        raise with_remedy(BenchwrightError("a correction needs a reason: say why the label is wrong"),
                          Remedy.GIVE_REASON)
    aid = resolve_answer(store, ref)
    return store.add_failure_mode(aid, mode, reason.strip(), "annotator", annotator=annotator)
