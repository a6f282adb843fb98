"""Running curation steps over the project's pairs: choose pairs, build each step's input from the store, run
the step through the LLM client with bounded concurrency, and store every outcome as soon as it finishes.

Resuming is free: a finished step is skipped on a rerun (unless forced) and every finished call is in the
ledger, so a killed run picks up where it stopped with nothing lost and nothing repeated.
"""

from __future__ import annotations

from collections.abc import Callable
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
from benchwright.core.llm.client import LLMClient
from benchwright.core.llm.jobs import Job, JobProgress

from .store import QueueFilter, Store


def generated_checklist_author(model: str | None) -> str:
    """The author recorded on a checklist version the ``checklist`` step generated."""
    return f"llm:{model or 'unknown'}"


def select_pairs(store: Store, step: str, *, where: QueueFilter | None = None, limit: int | None = None,
                 force: bool = False, pair_ids: list[str] | None = None, annotator: str = "") -> list[str]:
    """Pair ids a run of ``step`` will work on, in queue order.

    Without ``force``, pairs whose current ``step`` result is ``ok`` are left out, and for ``checklist`` also
    pairs that already have a checklist. ``pair_ids`` restricts the run to those pairs (still filtered).

    Raises:
        BenchwrightError: unknown step.
    """
    if step not in STEPS:
        raise BenchwrightError(f"unknown step {step!r}; steps are {', '.join(STEPS)}")
    sql, params = (where or QueueFilter()).sql(annotator)
    rows = store.db.conn.execute(
        f"""SELECT p.id FROM qa_pairs p LEFT JOIN review_state s ON s.qa_pair_id = p.id AND s.annotator = ?
            WHERE {sql} ORDER BY p.ordinal""", [annotator, *params],
    ).fetchall()
    ids = [r[0] for r in rows]
    if pair_ids is not None:
        wanted = set(pair_ids)
        ids = [i for i in ids if i in wanted]
    if not force:
        done = store.pairs_with_step_done(step)
        if step == "checklist":
            done |= {r[0] for r in store.db.conn.execute("SELECT qa_pair_id FROM checklist_current")}
        ids = [i for i in ids if i not in done]
    return ids[:limit] if limit else ids


def build_input(store: Store, pair_id: str, step: str) -> PairInput:
    """What ``step`` needs about the pair: the working text (refined, else enriched, else original; ``enrich``
    and ``refine`` start from earlier steps' text only as far as those come before them), the current
    checklist, link contents and code excerpts."""
    pair = store.get_pair(pair_id)
    question, answer = pair.question, pair.reference_answer or ""
    current = store.curation_current(pair_id)
    order = STEPS.index(step)
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
        repo = store.get_repository(pair.repository, missing_ok=True) if pair.repository else None
        if repo is not None and repo.local_path and Path(repo.local_path).is_dir():
            code = code_excerpts(repo.local_path, f"{question}\n{answer}")
    return PairInput(pair=pair, question=question, answer=answer, checklist=checklist, links=links, code=code)


def save_outcome(store: Store, pair_id: str, outcome: StepOutcome, *, by: str) -> None:
    """Store one step outcome; a valid generated checklist becomes a version with origin ``generated``."""
    if outcome.ok and outcome.checklist is not None:
        store.save_checklist(pair_id, outcome.checklist, author=generated_checklist_author(outcome.model),
                             origin="generated", source_format="llm")
    store.save_curation_result(
        pair_id, outcome.step, status=outcome.status, output=outcome.output, flagged=outcome.flagged,
        raw_text=outcome.raw_text, reason=outcome.reason, model=outcome.model, template_hash=outcome.template_hash,
        call_ids=outcome.call_ids, calls_made=outcome.calls, by=by,
    )


async def run_curation(store: Store, client: LLMClient, step: str, pair_ids: list[str], settings: StepSettings, *,
                       by: str, on_progress: Callable[[JobProgress], object] | None = None,
                       on_outcome: Callable[[str, StepOutcome], object] | None = None) -> JobProgress:
    """Run ``step`` on every pair in ``pair_ids`` (at most the provider's concurrency at once); store each
    outcome when it finishes. Returns the final progress.

    Raises:
        asyncio.CancelledError: the run was cancelled (what finished is stored).
        LLMConfigError: the provider is misconfigured.
    """

    async def work(pair_id: str) -> StepOutcome:
        return await run_step(step, client, build_input(store, pair_id, step), settings)

    def stored(pair_id: str, outcome: StepOutcome) -> None:
        save_outcome(store, pair_id, outcome, by=by)
        if on_outcome is not None:
            on_outcome(pair_id, outcome)

    job = Job(work, concurrency=client.provider.concurrency, tally=StepOutcome.tally, on_result=stored,
              on_progress=on_progress)
    return await job.run(pair_ids)
