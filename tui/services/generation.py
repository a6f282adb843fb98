"""Answer-first generation over a repository's documentation chunks (Code-QA-Bench "Methodology" 3 and 4).

- :func:`cut_doc_chunks`: ``generate doc-chunks``: cut and score the registered repository's documentation
  (:func:`benchwright.core.doc_chunks.doc_chunks`, settings from ``[generation]`` of benchwright.toml and the
  command line) and store the chunks kept as a run.
- :func:`plan_generation`: which chunks a run of a step works on (the repository's current chunks whose earlier
  step is done; a chunk whose result is ok and up to date is left out unless forced; a stale one runs again).
- :func:`run_generation`: run a step over chunks, at most the provider's concurrency at once, each claimed
  (:meth:`~benchwright.db.Store.claim`) so two processes share the work, and each outcome stored as soon as it
  finishes (``generation_results``). A ``question`` outcome becomes a Q&A pair, imported through the store's
  normal path (:meth:`~benchwright.db.Store.apply_import` of a JSONL record written under the project's
  ``generated/answer-first/`` folder), with its provenance in ``extra["answer_first"]`` and the key points in
  ``extra["gold_key_points"]``.

A killed run resumes: finished chunks are stored, every call is in the ledger (the agent's turns too), so the same
command continues where it stopped and a finished run makes no call.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchwright.core.doc_chunks import ChunkSettings, DocChunk, doc_chunks
from benchwright.core.errors import BenchwrightError
from benchwright.core.generation import (
    CODE_DERIVABLE,
    DOC_DEPENDENT,
    ChunkInput,
    GenerationOutcome,
    audit,
    code_only_files,
    derive_question,
    gold_by_agent,
    gold_from_documentation,
    previous_step,
)
from benchwright.core.llm.client import LLMClient
from benchwright.core.llm.jobs import Job, JobProgress
from benchwright.db import Store
from benchwright.db.llm import claim_owner

GENERATED_DIR = Path("generated") / "answer-first"
"""Where, beside the project file, each generated pair's JSONL record is written before it is imported."""
SOURCE_FORMAT = "jsonl"


# ---------------------------------------------------------------------------------------------- doc-chunks
@dataclass(frozen=True)
class ChunkRun:
    """What ``generate doc-chunks`` did: the run id, the repository's pin, the chunks found and kept (best
    first), and the settings used."""

    run_id: int
    repository: str
    pin: str
    found: int
    chunks: list[DocChunk]
    settings: ChunkSettings
    top: int | None


def chunk_settings(table, weights: dict[str, float] | None = None) -> ChunkSettings:
    """The chunking settings: the ``[generation]`` table (``table``, a
    :class:`~benchwright.core.llm.config.GenerationTableSettings`), with ``weights`` (``--weight``) over its.

    Raises:
        ChunkSettingsError: an unknown feature or an unusable weight.
    """
    return ChunkSettings.from_weights({**table.weights, **(weights or {})}, **table.overrides())


def cut_doc_chunks(store: Store, repository: str, *, weights: dict[str, float] | None = None,
                   top: int | None = None, by: str) -> ChunkRun:
    """Cut and score ``repository``'s documentation and store the chunks kept (the best ``top``, else the
    ``[generation]`` table's ``top``, else all) as a new run.

    Raises:
        NotFoundError: no such repository.
        BenchwrightError: the repository has no local checkout here; LLMConfigError: a bad benchwright.toml;
            ChunkSettingsError: a bad weight.
    """
    from benchwright.core.llm.config import load_llm_config

    from .llm import project_dir_of

    repo = store.get_repository(repository)
    if not repo.local_path or not Path(repo.local_path).is_dir():
        raise BenchwrightError(f"no local checkout of {repository} here ({repo.local_path or 'none registered'}): "
                               f"benchwright repos add {repository} PATH")
    table = load_llm_config(project_dir_of(store)).settings.generation
    settings = chunk_settings(table, weights)
    top = top if top is not None else table.top
    found = doc_chunks(repo.local_path, repository, settings)
    kept = found[:top] if top else found
    pin = repo.commit or repo.version_label or ""
    recorded = {"weights": dict(settings.weights), "min_words": settings.min_words,
                "target_words": settings.target_words, "max_words": settings.max_words,
                "target_references": settings.target_references, "exclude": list(settings.exclude)}
    run_id = store.record_doc_chunks(repository, pin, kept, settings=recorded, top=top, found=len(found), by=by)
    return ChunkRun(run_id, repository, pin, len(found), kept, settings, top)


# ---------------------------------------------------------------------------------------------------- plan
@dataclass
class GenerationPlan:
    """The chunks a run of ``step`` under ``task_set`` will work on, and why others are left out.

    Attributes:
        chunk_ids: to run, in rank order (after ``limit``).
        matching: the repository's current chunks (or those asked for).
        done: left out: their result is ok and up to date.
        stale: included because their result is older than its input.
        waiting: left out: the earlier step has no ok result yet (``gold`` before ``audit``...).
        emptied: left out of ``question``: the audit left nothing code-recoverable of the gold answer.
    """

    step: str
    task_set: str
    chunk_ids: list[str] = field(default_factory=list)
    matching: int = 0
    done: int = 0
    stale: int = 0
    waiting: int = 0
    emptied: int = 0


def build_chunk_input(store: Store, chunk: DocChunk, step: str, task_set: str, *,
                      code_root: str | None = None) -> ChunkInput | None:
    """What ``step`` reads about ``chunk``: for ``audit`` the current gold answer (and, with ``code_root``, the
    files it cites in the code-only copy), for ``question`` the verified answer (the audit's, or the
    doc-dependent gold answer). None when the earlier step has no ok result.

    Raises:
        GenerationStepError: ``step`` is not a step of ``task_set``.
    """
    before = previous_step(step, task_set)
    if before is None:
        return ChunkInput(chunk, task_set)
    prior = store.generation_current(chunk.id, before, task_set)
    if prior is None or not prior.ok:
        return None
    gold = prior.output.get("answer") or ""
    code = code_only_files(code_root, gold) if step == "audit" and code_root else ""
    return ChunkInput(chunk, task_set, gold=gold, code=code)


def plan_generation(store: Store, step: str, task_set: str, *, repository: str | None = None,
                    chunk_refs: list[str] | None = None, limit: int | None = None,
                    force: bool = False) -> GenerationPlan:
    """Choose the chunks for a run of ``step`` under ``task_set``: the current chunks of ``repository`` (of
    every repository when None; only ``chunk_refs`` when given, ids or prefixes), in rank order. Without
    ``force`` a chunk whose current result is ok and whose input is unchanged is left out.

    Raises:
        GenerationStepError: ``step`` is not a step of ``task_set``; NotFoundError: an unknown chunk.
    """
    previous_step(step, task_set)
    plan = GenerationPlan(step, task_set)
    chunks = [c.chunk for c in store.current_doc_chunks(repository)]
    if chunk_refs:
        wanted = {store.doc_chunk(ref).chunk.id for ref in chunk_refs}
        chunks = [c for c in chunks if c.id in wanted]
    plan.matching = len(chunks)
    for chunk in chunks:
        item = build_chunk_input(store, chunk, step, task_set)
        if item is None:
            plan.waiting += 1
            continue
        if step == "question" and task_set == CODE_DERIVABLE and not item.gold.strip():
            plan.emptied += 1
            continue
        current = store.generation_current(chunk.id, step, task_set)
        if current is not None and current.ok and not force:
            if current.input_hash == item.input_hash(step):
                plan.done += 1
                continue
            plan.stale += 1
        plan.chunk_ids.append(chunk.id)
    if limit:
        plan.chunk_ids = plan.chunk_ids[:limit]
    return plan


# ----------------------------------------------------------------------------------------------------- run
def pair_record(chunk: DocChunk, pin: str, task_set: str, question: GenerationOutcome,
                results: dict[str, int]) -> dict:
    """The JSONL record a ``question`` outcome is imported from: question, answer, ``task_set``, and in
    ``extra`` the provenance (``answer_first``: chunk, pin, the results' ids, the audit) and the gold key points."""
    return {
        "id": f"{chunk.id}:{task_set}",
        "question": question.output["question"],
        "answer": question.output["answer"],
        "task_set": task_set,
        "gold_key_points": list(question.output.get("key_points") or []),
        "answer_first": {"chunk_id": chunk.id, "path": chunk.path, "start_line": chunk.start_line,
                         "end_line": chunk.end_line, "kind": chunk.kind, "title": chunk.title, "pin": pin,
                         "results": results},
    }


def _import_pair(store: Store, chunk: DocChunk, pin: str, task_set: str, outcome: GenerationOutcome,
                 results: dict[str, int], *, by: str) -> str:
    """Write the pair's JSONL record under the project folder and import it; returns the pair id (the existing
    one when the same text was imported before; when the question is unchanged and the answer changed, a new text
    version of this chunk's pair).

    Raises:
        BenchwrightError: the question is another pair's (nothing is written).
    """
    from benchwright.core.importers import parse

    from .llm import project_dir_of

    folder = project_dir_of(store) / GENERATED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{chunk.id}-{task_set}.jsonl"
    record = pair_record(chunk, pin, task_set, outcome, results)
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    result = parse(SOURCE_FORMAT, path, repository=chunk.repository, mapping=["id=id", "task_set=task_set"])
    with store.write():  # a savepoint: a refused pair leaves nothing behind
        report = store.apply_import(result, annotator=by, file_path=path, repository=chunk.repository)
        for update in report.possible_updates:
            # the question is a pair's already: the same chunk and task set derived again (a new text version of
            # that pair), or another pair's question (refused: never a text version of someone else's pair)
            ours = [p for p in update.pair_ids if store.get_pair(p).source.upstream_id == record["id"]]
            if not ours:
                raise BenchwrightError(
                    f"not added: the derived question is already pair #{update.ordinals[0]}'s "
                    f"({update.pair_ids[0]}); run generate question --force --chunk {chunk.id} for another")
            store.apply_import(result, annotator=by, file_path=path, repository=chunk.repository, update=True)
            return ours[0]
        pair_id = result.pairs[0].id
        store.get_pair(pair_id)  # NotFoundError if the import kept it out for a reason not foreseen here
        return pair_id


def _code_only_root(store: Store, repository: str) -> str:
    """The code-only copy's folder (``repos strip``), checked at the repository's pin.

    Raises:
        BenchwrightError: no copy, made at another commit, or gone."""
    from .agent_runs import repository_for_condition

    return repository_for_condition(store, repository, "code-only")[0]


async def run_generation(store: Store, client: LLMClient, step: str, task_set: str, chunk_ids: list[str],
                         settings, *, by: str, on_progress: Callable[[JobProgress], object] | None = None,
                         on_outcome: Callable[[str, GenerationOutcome], object] | None = None) -> JobProgress:
    """Run ``step`` under ``task_set`` on every chunk of ``chunk_ids`` and store each outcome when it finishes.

    ``settings`` is an :class:`~benchwright.core.agent.model.AgentSettings` for the code-derivable ``gold`` (the
    agent, in the documented repository's checkout), else a :class:`~benchwright.core.curation.StepSettings`.

    Raises:
        asyncio.CancelledError: the run was cancelled (what finished is stored).
        BenchwrightError: the documented checkout or the code-only copy is not usable (before any call);
            LLMConfigError: a misconfigured provider.
    """
    from benchwright.core.agent.sandbox import require_sandbox
    from benchwright.core.agent.workspace import Workspace

    from .agent_runs import repository_for_condition

    owner = claim_owner()
    work_key = f"generate:{step}:{task_set}"
    chunks = {cid: store.doc_chunk(cid) for cid in chunk_ids}
    roots: dict[str, str] = {}
    for stored in chunks.values():
        repo = stored.chunk.repository
        if repo in roots:
            continue
        if step == "gold" and task_set == CODE_DERIVABLE:
            roots[repo] = repository_for_condition(store, repo, "documented")[0]
        elif step == "audit":
            roots[repo] = _code_only_root(store, repo)
    if step == "gold" and task_set == CODE_DERIVABLE:
        require_sandbox(settings.sandbox)

    async def work(cid: str) -> GenerationOutcome:
        chunk = chunks[cid].chunk
        if not store.claim(work_key, cid, owner):
            return GenerationOutcome(step, "skipped", reason="another run is working on this chunk")
        try:
            item = build_chunk_input(store, chunk, step, task_set, code_root=roots.get(chunk.repository))
            current = store.generation_current(cid, step, task_set)
            if item is None or (current is not None and current.ok and not getattr(settings, "force", False)
                                and current.input_hash == item.input_hash(step)):
                store.release(work_key, cid, owner)
                return GenerationOutcome(step, "skipped", reason="done meanwhile by another run")
            if step == "gold" and task_set == CODE_DERIVABLE:
                workspace = Workspace(Path(roots[chunk.repository]), scope=f"generate:gold:{chunk.repository}")
                outcome = await gold_by_agent(client, workspace, item, settings)
            elif step == "gold":
                outcome = await gold_from_documentation(client, item, settings)
            elif step == "audit":
                outcome = await audit(client, item, settings)
            else:
                outcome = await derive_question(client, item, settings)
        except BaseException:
            store.release(work_key, cid, owner)
            raise
        outcome.input_hash = item.input_hash(step)
        return outcome

    def save(cid: str, outcome: GenerationOutcome) -> None:
        if not outcome.skipped:
            stored = chunks[cid]
            chunk = stored.chunk
            try:
                with store.write():
                    pair_id = None
                    if outcome.ok and step == "question" and not outcome.flagged:
                        results = {s: r.id for s in ("gold", "audit")
                                   if (r := store.generation_current(cid, s, task_set)) is not None}
                        try:
                            pair_id = _import_pair(store, chunk, stored.pin, task_set, outcome, results, by=by)
                        except BenchwrightError as e:  # e.g. another pair's question: this chunk fails, not the run
                            outcome.status, outcome.reason = "failed", f"question: {e}"
                    store.save_generation_result(
                        cid, chunk.repository, step, task_set, status="ok" if outcome.ok else "failed",
                        output=outcome.output, by=by, flagged=outcome.flagged, reason=outcome.reason,
                        raw_text=outcome.raw_text,
                        model=outcome.model, template_hash=outcome.template_hash, input_hash=outcome.input_hash,
                        call_ids=outcome.call_ids, calls_made=outcome.calls, trajectory=outcome.trajectory,
                        qa_pair_id=pair_id)
                    store.release(work_key, cid, owner)
            except BaseException:
                store.release(work_key, cid, owner)
                raise
        if on_outcome is not None:
            on_outcome(cid, outcome)

    job = Job(work, concurrency=client.job_concurrency, tally=GenerationOutcome.tally, on_result=save,
              on_progress=on_progress)
    return await job.run(chunk_ids)


def answer_first_view(store: Store, pair) -> dict | None:
    """The answer-first provenance of ``pair`` (a :class:`~benchwright.core.models.QAPair`) for a screen: the
    chunk (path, lines, title, text), the task set, and for a code-derivable pair the audit (each claim with
    verdict, evidence and rewrite; the original and the verified answer). None for a pair not made here.

    Raises nothing for a pair whose chunk or results are gone from the project (the parts found are given)."""
    prov = (pair.extra or {}).get("answer_first")
    if not isinstance(prov, dict):
        return None
    view = {"task_set": pair.task_set, "chunk": dict(prov), "chunk_text": None, "audit": None}
    with contextlib.suppress(BenchwrightError):
        view["chunk_text"] = store.doc_chunk(str(prov.get("chunk_id", ""))).chunk.text
    ids = [v for v in (prov.get("results") or {}).values() if isinstance(v, int)]
    for r in store.generation_results(result_ids=ids) if ids else []:
        if r.step == "audit":
            view["audit"] = r.output
    return view


__all__ = ["DOC_DEPENDENT", "GENERATED_DIR", "ChunkRun", "GenerationPlan", "answer_first_view", "build_chunk_input",
           "chunk_settings", "cut_doc_chunks", "pair_record", "plan_generation", "run_generation"]
