"""Running curation steps over the project's pairs: choose pairs, build each step's input from the store, run
the step through the LLM client with bounded concurrency, and store every outcome as soon as it finishes.

Resuming is free: a finished step is skipped on a rerun (unless forced) and every finished call is in the
ledger, so a killed run picks up where it stopped with nothing lost and nothing repeated.
"""

from __future__ import annotations

import asyncio
import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from benchwright.core.curation import (
    STEPS,
    PairInput,
    StepOutcome,
    StepSettings,
    code_excerpts,
    extract_urls,
    run_step,
)
from benchwright.core.errors import BenchwrightError
from benchwright.core.judges import generated_checklist_author as generated_checklist_author
from benchwright.core.llm.client import LLMClient
from benchwright.core.llm.jobs import Job, JobProgress
from benchwright.core.models import TextOrigin
from benchwright.core.steps import gating_steps_before
from benchwright.db import QueueFilter, Store
from benchwright.db.llm import claim_owner
from benchwright.db.writer import StoreWriter, WriterLedger

from .leakage import check_leakage

# generated_checklist_author (``llm:MODEL``, the author of a generated checklist version) is core's rule
# (core/judges.py), which the judge separation reads back.

REWRITE_ORIGINS = {"enrich": TextOrigin.ENRICHED, "refine": TextOrigin.REFINED}
"""The rewriting steps and the origin of the text version each writes (RepoProbe §3.2)."""

HUMAN_ORIGINS = ("edited", "imported", "adjudicated")
"""Checklist origins a person stands behind: ``curation run checklist --force`` leaves them alone unless asked."""


class IdleReason(StrEnum):
    """Why a run of a step has no pair to work on (each front end words it: the CLI names its options, the app
    its keys)."""

    NO_MATCH = "no-match"
    """No pair matches the filter."""
    ONLY_HUMAN_CHECKLISTS = "only-human-checklists"
    """Every pair left is one whose checklist a person made or edited (a forced run leaves those alone unless
    asked to include them)."""
    ALL_DONE = "all-done"
    """Every matching pair is done (a forced run would run them again)."""
    ALL_DROPPED = "all-dropped"
    """Every matching pair left was dropped by an earlier gating step (running on all pairs would include them)."""


@dataclass
class Selection:
    """The pairs a run of a step will work on, and why others are left out.

    Attributes:
        pair_ids: the pairs to run, in queue order (after ``limit``).
        matching: pairs the filter matched.
        done: matching pairs left out because their current result is ok and up to date (or, for
            ``checklist``, because they have a checklist).
        stale: pairs included because their result is older than its input (an earlier step or the link
            store changed since).
        human: pairs left out of a forced ``checklist`` run because a person made their current checklist.
        resumed_done: pairs left out because the forced run being resumed already finished them.
        dropped: gating step -> matching pairs left out because that earlier gating step dropped them
            (:func:`benchwright.core.steps.gating_steps_before`; a run on all pairs leaves none out).
    """

    pair_ids: list[str]
    matching: int = 0
    done: int = 0
    stale: int = 0
    human: list[str] = field(default_factory=list)
    resumed_done: int = 0
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def idle_reason(self) -> IdleReason:
        """Why there is nothing to run (when :attr:`pair_ids` is empty); the count behind
        :attr:`IdleReason.ONLY_HUMAN_CHECKLISTS` is ``len(human)``."""
        if not self.matching:
            return IdleReason.NO_MATCH
        if sum(self.dropped.values()) >= self.matching:
            return IdleReason.ALL_DROPPED
        if self.human and not self.done:
            return IdleReason.ONLY_HUMAN_CHECKLISTS
        return IdleReason.ALL_DONE


def select_pairs(store: Store, step: str, *, where: QueueFilter | None = None, limit: int | None = None,
                 force: bool = False, pair_ids: list[str] | None = None, annotator: str = "",
                 since: str | None = None, include_edited: bool = False, all_pairs: bool = False) -> list[str]:
    """Pair ids a run of ``step`` will work on, in queue order (see :func:`plan_pairs` for the rules)."""
    return plan_pairs(store, step, where=where, limit=limit, force=force, pair_ids=pair_ids, annotator=annotator,
                      since=since, include_edited=include_edited, all_pairs=all_pairs).pair_ids


def plan_pairs(store: Store, step: str, *, where: QueueFilter | None = None, limit: int | None = None,
               force: bool = False, pair_ids: list[str] | None = None, annotator: str = "",
               since: str | None = None, include_edited: bool = False, all_pairs: bool = False) -> Selection:
    """Choose the pairs for a run of ``step``.

    The funnel (RepoProbe §3.2): unless ``all_pairs``, a pair that an earlier gating step dropped (its current
    ``images`` / ``classify`` / ``verify`` result before ``step`` is ok and flagged,
    :func:`benchwright.core.steps.gating_steps_before`) is left out, counted per step in ``Selection.dropped``.

    Without ``force``, a pair whose current ``step`` result is ok is left out unless that result is stale (its
    input hash differs from the input the step would get now); for ``checklist``, a pair that has a checklist
    is left out unless its current checklist is the generated one of a stale result. With ``force`` every
    matching pair runs, except, for ``checklist``, pairs whose current checklist a person made or edited
    (unless ``include_edited``), and, when ``since`` is given (resuming a forced run), pairs with a result
    created since then. ``pair_ids`` restricts the run to those pairs (still filtered).

    Raises:
        BenchwrightError: unknown step.
    """
    if step not in STEPS:
        raise BenchwrightError(f"unknown step {step!r}; steps are {', '.join(STEPS)}")
    ids = store.filtered_pair_ids(annotator, where or QueueFilter())
    if pair_ids is not None:
        wanted = set(pair_ids)
        ids = [i for i in ids if i in wanted]
    sel = Selection(pair_ids=[], matching=len(ids))
    if not all_pairs and gating_steps_before(step):
        dropped = store.dropped_pairs(gating_steps_before(step))
        for i in ids:
            if i in dropped:
                sel.dropped[dropped[i]] = sel.dropped.get(dropped[i], 0) + 1
        ids = [i for i in ids if i not in dropped]
    current_checklists = {}
    if step == "checklist":
        current_checklists = store.current_checklist_origins()
    if force:
        if step == "checklist" and not include_edited:
            sel.human = [i for i in ids if current_checklists.get(i) in HUMAN_ORIGINS]
            ids = [i for i in ids if current_checklists.get(i) not in HUMAN_ORIGINS]
        if since is not None:
            finished = store.pairs_with_step_done(step, since=since)
            failed_since = store.pairs_with_step_result_since(step, since)
            before = len(ids)
            ids = [i for i in ids if i not in finished and i not in failed_since]
            sel.resumed_done = before - len(ids)
        sel.pair_ids = ids[:limit] if limit else ids
        return sel
    done = store.pairs_with_step_done(step)
    todo = []
    for i in ids:
        has_checklist = step == "checklist" and i in current_checklists
        if i not in done and not has_checklist:
            todo.append(i)
            continue
        # classify reads only the pair's own text, which never changes: its results cannot go stale, so the
        # per-pair input rebuild (a few queries each) is skipped for it.
        if (step != "classify" and i in done and done[i] is not None
                and (step != "checklist" or current_checklists.get(i) == "generated")
                and build_input(store, i, step, with_code=False).input_hash(step) != done[i]):
            sel.stale += 1
            todo.append(i)
            continue
        sel.done += 1
    sel.pair_ids = todo[:limit] if limit else todo
    return sel


def build_input(store: Store, pair_id: str, step: str, *, with_code: bool = True) -> PairInput:
    """What ``step`` needs about the pair: the working text, the current checklist, link contents and code
    excerpts.

    The working text of ``checklist`` and ``verify`` is the pair's current text version (the rewrite, or an
    annotator's edit of it). The steps up to ``refine`` start from the source's text
    (:meth:`~benchwright.db.Store.rewrite_base`: the original or a re-import), with the output of the earlier
    rewriting steps applied (``refine`` reads ``enrich``'s)."""
    pair = store.get_pair(pair_id)
    order = STEPS.index(step)
    if order > STEPS.index("refine"):
        # checklist and verify read the pair's current text: the latest rewrite, or an annotator's edit of it
        question, answer = pair.question, pair.reference_answer or ""
    else:
        # the rewriting steps (and the filters before them) start from the source's text, never from a rewrite
        # or an edit: an edit does not make them stale, and a rerun does not rewrite its own output
        base = store.rewrite_base(pair_id)
        question, answer = base.question, base.reference_answer or ""
        current = store.curation_current(pair_id)
        for earlier in ("enrich", "refine"):
            r = current.get(earlier)
            if r is not None and r.status == "ok" and STEPS.index(earlier) < order:
                question = r.output.get("question") or question
                answer = r.output.get("answer") or answer
    links: dict[str, str | None] = {}
    if step == "enrich":
        for url in extract_urls(question, answer):
            link = store.get_link(url)
            links[url] = link.content if link else None
    checklist = None
    code = ""
    if step == "verify":
        v = store.checklist_version(pair_id)
        checklist = v.checklist if v is not None else None
        # the verifier's link check: the links the current enrich result left unresolved (URL -> None)
        enriched = store.curation_current(pair_id).get("enrich")
        if enriched is not None and enriched.status == "ok" and enriched.flagged:
            links = {lk["url"]: None for lk in enriched.output.get("links", []) if lk.get("status") == "unresolved"}
        repo = store.get_repository(pair.repository, missing_ok=True) if pair.repository else None
        if with_code and repo is not None and repo.local_path and Path(repo.local_path).is_dir():
            code = code_excerpts(repo.local_path, f"{question}\n{answer}")
    return PairInput(pair=pair, question=question, answer=answer, checklist=checklist, links=links, code=code)


def save_outcome(store: Store, pair_id: str, outcome: StepOutcome, *, by: str,
                 base: tuple[str, str] | None = None) -> None:
    """Store one step outcome; a valid generated checklist becomes a version with origin ``generated``. After a
    rewrite becomes the current text, or a new checklist of a rewritten text, the text is checked for leaked
    terms (:func:`~benchwright.tui.services.leakage.check_leakage`).

    ``base`` is the ``(question, answer)`` the step was given (:func:`build_input`): a rewrite equal to it changed
    nothing (``enrich`` of a pair without links) and is no new text version, so it never replaces an annotator's
    edit of the text with the source's text."""
    if outcome.ok and outcome.checklist is not None:
        saved = store.save_checklist(pair_id, outcome.checklist, author=generated_checklist_author(outcome.model),
                                     origin="generated", source_format="llm",
                                     checked=outcome.checklist_checked)
        if store.calls_text_repaired(outcome.call_ids):  # made from output stored with U+FFFD: flagged too
            store.flag_text_repair("checklist_versions", store.checklist_rowid(pair_id, saved.version), "items_json",
                                   "llm output")
    store.save_curation_result(
        pair_id, outcome.step, status=outcome.status, output=outcome.output, flagged=outcome.flagged,
        raw_text=outcome.raw_text, reason=outcome.reason, model=outcome.model, template_hash=outcome.template_hash,
        call_ids=outcome.call_ids, calls_made=outcome.calls, by=by, input_hash=outcome.input_hash,
    )
    unchanged = base is not None and outcome.output.get("question") == base[0] \
        and (outcome.output.get("answer") or "") == (base[1] or "")
    if outcome.ok and outcome.step in REWRITE_ORIGINS and isinstance(outcome.output.get("question"), str) \
            and outcome.output["question"].strip() and not unchanged:
        # the rewrite is the item (RepoProbe §3.2): a new current text version, unless the text is unchanged
        rewritten = store.save_text_version(
            pair_id, outcome.output["question"], outcome.output.get("answer") or None,
            origin=REWRITE_ORIGINS[outcome.step], by=by, model=outcome.model, call_ids=outcome.call_ids,
        )
        if rewritten is not None:
            check_leakage(store, pair_id, by=by)
    elif outcome.ok and outcome.checklist is not None:
        check_leakage(store, pair_id, by=by)  # the new key points may be in a rewritten question
    if outcome.ok and outcome.step == "classify" and outcome.output.get("code_understanding_relevant"):
        # The RepoProbe category fills the pair's category when its source gave none (never overwritten).
        store.fill_category(pair_id, outcome.output.get("category"))


async def run_curation(store: Store, client: LLMClient | None, step: str, pair_ids: list[str], settings: StepSettings, *,
                       by: str, on_progress: Callable[[JobProgress], object] | None = None,
                       on_outcome: Callable[[str, StepOutcome], object] | None = None) -> JobProgress:
    """Run ``step`` on every pair in ``pair_ids`` (at most the provider's concurrency at once); store each
    outcome when it finishes. Returns the final progress. ``client`` is None for a step that calls no model
    (``images``). An ok ``enrich`` / ``refine`` outcome whose text differs from the current text becomes the
    pair's current text version (origin ``enriched`` / ``refined``, with model and calls).

    Raises:
        asyncio.CancelledError: the run was cancelled (what finished is stored).
        LLMConfigError: the provider is misconfigured.
    """

    owner = claim_owner()
    work_key = f"curation:{step}"
    bases: dict[str, tuple[str, str]] = {}  # the text each pair's step was given (save_outcome's base)
    writer = _writer_for(store, client)
    ledger: WriterLedger | None = None
    if writer is not None:  # the ledger rows go through the writer too (one transaction for many items)
        client = copy.copy(client)
        client.ledger = ledger = WriterLedger(store, writer)
    claims = _ClaimsAhead(writer, work_key, owner, pair_ids, CLAIM_AHEAD) if writer is not None else None

    def save(s: Store, pair_id: str, outcome: StepOutcome) -> None:
        try:
            if ledger is not None:
                outcome.call_ids = ledger.real_ids(outcome.call_ids)
            with s.write():  # result, checklist version and release: one commit
                save_outcome(s, pair_id, outcome, by=by, base=bases.pop(pair_id, None))
                s.release(work_key, pair_id, owner)
        except BaseException:
            s.release(work_key, pair_id, owner)
            raise

    async def work(pair_id: str) -> StepOutcome:
        claimed = await claims.claim(pair_id) if claims is not None else store.claim(work_key, pair_id, owner)
        if not claimed:
            return StepOutcome(step, "skipped", reason="another run is working on this pair")
        release = functools.partial(_release, store, writer, work_key, pair_id, owner)
        item = build_input(store, pair_id, step)
        bases[pair_id] = (item.question, item.answer)
        h = item.input_hash(step)
        if not settings.force and store.step_done_hash(pair_id, step) in (h, None):
            release()
            return StepOutcome(step, "skipped", reason="done meanwhile by another run")
        try:
            outcome = await run_step(step, client, item, settings)
        except BaseException:
            release()
            raise
        outcome.input_hash = h
        if writer is not None:
            # stored (committed, with its ledger rows) before the item counts as done; a cancel while waiting
            # leaves the write queued, and the writer's close commits it
            await writer.run(lambda s: save(s, pair_id, outcome))
        return outcome

    def stored(pair_id: str, outcome: StepOutcome) -> None:
        if not outcome.skipped and writer is None:
            save(store, pair_id, outcome)
        if on_outcome is not None:
            on_outcome(pair_id, outcome)

    job = Job(work, concurrency=client.job_concurrency if client is not None else 8, tally=StepOutcome.tally, on_result=stored,
              on_progress=on_progress)
    try:
        with store.deferring_commits():  # an item's last ledger row commits with its result: one transaction
            return await job.run(pair_ids)
    finally:
        if writer is not None:
            claims.release_unused()  # pairs claimed ahead that no task started (a cancelled run)
            writer.close()  # commits whatever is still queued (ledger rows, releases)


def _writer_for(store: Store, client: LLMClient | None) -> StoreWriter | None:
    """The job's store writer (:class:`~benchwright.db.writer.StoreWriter`), or None to write on the job's own
    connection: in batch mode (the batcher writes there), without a client, or for a store that is not a file."""
    if client is None or client.batch is not None or not Path(store.path).is_file():
        return None
    return StoreWriter(store.path)


CLAIM_AHEAD = 64
"""With a store writer, a run claims its pairs this many at a time, in queue order (one transaction for each
group, instead of one per pair); the pairs of a group that no task started are released when the run ends."""


class _ClaimsAhead:
    """Claims of a run's pairs, made :data:`CLAIM_AHEAD` at a time through the store writer: the first pair of a
    group that is asked for claims the whole group (and the next group, so the next claim is ready early)."""

    def __init__(self, writer: StoreWriter, work_key: str, owner: str, pair_ids: list[str], size: int):
        self.writer, self.work_key, self.owner = writer, work_key, owner
        self.order = {p: i for i, p in enumerate(pair_ids)}
        self.pair_ids, self.size = pair_ids, max(1, size)
        self.groups: dict[int, asyncio.Future] = {}
        self.started: set[str] = set()

    def _group(self, g: int) -> asyncio.Future:
        fut = self.groups.get(g)
        if fut is None:
            ids = self.pair_ids[g * self.size:(g + 1) * self.size]
            key, owner = self.work_key, self.owner
            fut = self.groups[g] = asyncio.ensure_future(
                self.writer.run(lambda s: {i: s.claim(key, i, owner) for i in ids}))
        return fut

    async def claim(self, pair_id: str) -> bool:
        """Whether this run holds ``pair_id`` (claimed in its group's transaction); from then on the task that
        asked releases it."""
        i = self.order.get(pair_id)
        if i is None:
            held = await self.writer.run(lambda s: s.claim(self.work_key, pair_id, self.owner))
        else:
            g = i // self.size
            if (g + 1) * self.size < len(self.pair_ids):
                self._group(g + 1)
            held = (await self._group(g))[pair_id]
        self.started.add(pair_id)
        return held

    def release_unused(self) -> None:
        """Release the pairs of every group claimed (or being claimed) that no task started: queued on the writer
        after the groups' claims, so it runs after them."""
        key, owner = self.work_key, self.owner
        for g in self.groups:
            unused = [i for i in self.pair_ids[g * self.size:(g + 1) * self.size] if i not in self.started]
            if unused:
                self.writer.submit(lambda s, ids=unused: [s.release(key, i, owner) for i in ids])


def _release(store: Store, writer: StoreWriter | None, work_key: str, pair_id: str, owner: str) -> None:
    if writer is None:
        store.release(work_key, pair_id, owner)
    else:
        writer.submit(lambda s: s.release(work_key, pair_id, owner))
