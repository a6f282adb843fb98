"""Batch mode for a project's LLM jobs (issue 19; docs/batches.md): put a client in batch mode, and list, resume,
cancel and import batches.

The batching itself is :mod:`benchwright.core.llm.batch`; the providers' batch APIs are
:mod:`benchwright.core.llm.anthropic_batch` and :mod:`benchwright.core.llm.openai_batch`.
"""

from __future__ import annotations

import json
import sys
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.core.llm.base import LLMConfigError
from benchwright.db import Store


@dataclass(frozen=True)
class BatchOptions:
    """What the command line asked of batch mode (``--batch``, ``--batch-file``, ``--retry``, ``--poll-interval``,
    ``--no-wait``); None fields keep ``[batch]`` in benchwright.toml, then the defaults.

    Attributes:
        batch_file: write the requests to this JSONL file (OpenAI batch format) instead of submitting them.
        retry: ``online`` or ``batch`` for requests that did not succeed in their batch.
        poll_interval_s: seconds between status requests.
        wait: False: submit and end (a rerun or ``batches resume`` collects).
    """

    batch_file: str | None = None
    retry: str | None = None
    poll_interval_s: float | None = None
    wait: bool = True
    command: tuple[str, ...] | None = None
    """The command line as parsed (``--db`` removed by :func:`command_line`); None: this process's."""
    resume_only: bool = False
    """``batches resume``: send nothing new (:attr:`~benchwright.core.llm.batch.BatchPolicy.resume_only`)."""


def command_line(argv: list[str] | None = None) -> list[str]:
    """A command line (default this process's, after the program name) without ``--db`` (``batches resume`` runs it
    again on the project it resumes). API keys are never on it (they come from the environment only)."""
    args = list(sys.argv[1:] if argv is None else argv)
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "--db":
            skip = True
            continue
        if a.startswith("--db="):
            continue
        out.append(a)
    return out


def enable_batch(client, store: Store, config, options: BatchOptions, *, command: list[str] | None = None,
                 on_progress: Callable | None = None):
    """Put ``client`` (an :class:`~benchwright.core.llm.client.LLMClient`) in batch mode: its first attempts go
    through the provider's batch API, or into ``options.batch_file``. Returns the
    :class:`~benchwright.core.llm.batch.Batcher`.

    Raises:
        LLMConfigError: the provider has no batch API (``--batch-file`` needs an openai-kind provider: the file is in
            the OpenAI batch format), or a bad option.
    """
    from benchwright.core.llm.batch import Batcher, FileBatchBackend

    provider = client.provider
    policy = batch_policy(config, options, command=command)
    if options.batch_file is not None:
        if provider.kind != "openai":
            raise LLMConfigError(f"--batch-file writes requests in the OpenAI batch format (for vllm run-batch); the "
                                 f"provider '{provider.name}' is of kind {provider.kind}: configure the role with an "
                                 "openai-kind provider (for example your vLLM server's base_url)")
        from benchwright.core.llm.openai_batch import openai_batch_line, openai_batch_response

        backend = FileBatchBackend(Path(options.batch_file),
                                   line_for=lambda cid, req: openai_batch_line(provider, cid, req),
                                   response_for=lambda item, req: openai_batch_response(item, req, provider))
    else:
        make = getattr(provider, "batch_backend", None)
        if make is None:
            raise LLMConfigError(f"provider '{provider.name}' (kind {provider.kind}) has no batch API; run without "
                                 "--batch, or use --batch-file with an openai-kind provider")
        backend = make()
    client.batch = Batcher(backend, store, policy, provider=provider.name, provider_kind=provider.kind,
                           base_url=provider.base_url, on_progress=on_progress)
    ACTIVE.add(client.batch)
    return client.batch


ACTIVE: weakref.WeakSet = weakref.WeakSet()
"""Batchers made in this process not yet claimed by a progress display (the CLI's bar shows their state)."""


def claim_active() -> list:
    """The batchers made since the last call (for the progress display of the job about to run); they are no
    longer listed after this."""
    out = list(ACTIVE)
    ACTIVE.clear()
    return out


def open_batches_line(store_batches: list) -> str:
    """What to say when a job stops while batches are still running: their ids and how to collect them."""
    ids = ", ".join(f"#{b}" for b in store_batches)
    return (f"batch {ids} still running at the provider (kept in the project); collect with: benchwright batches "
            "resume (or run the same command again: nothing is submitted twice)")


def deferred_lines(store: Store | None, err) -> list[str]:
    """What to say when a job handed its requests off (:class:`~benchwright.core.llm.batch.BatchDeferred`): where
    they are and the next commands."""
    lines = [str(err)]
    files = []
    if store is not None:
        for bid in err.batch_ids:
            b = store.batch(bid)
            if b is not None and b.file:
                files.append((b, b.file))
    if files:
        b, f = files[0]
        lines.append(f"{plural_requests(sum(x.request_count for x, _ in files))} in the OpenAI batch format. Run "
                     f"them (for example: vllm run-batch -i {f} -o results.jsonl --model MODEL), then: benchwright "
                     "batches import results.jsonl, and this command again (or benchwright batches resume)")
    else:
        lines.append("collect with: benchwright batches resume (or run the same command again)")
    return lines


def plural_requests(n: int) -> str:
    """``1 request``, ``2 requests``."""
    return f"{n} request{'' if n == 1 else 's'}"


def batch_policy(config, options: BatchOptions, *, command: list[str] | None = None):
    """The :class:`~benchwright.core.llm.batch.BatchPolicy` of ``options`` over ``[batch]`` in benchwright.toml
    (``config``: the loaded :class:`~benchwright.core.llm.config.LLMConfig`, or None for the defaults)."""
    from benchwright.core.llm.batch import BatchPolicy, RetryPolicy
    from benchwright.db.llm import claim_owner

    settings = getattr(getattr(config, "settings", None), "batch", None)
    return BatchPolicy(
        poll_interval_s=options.poll_interval_s or (settings.poll_interval_s if settings else 30.0),
        gather_s=settings.gather_s if settings else 2.0,
        retry=RetryPolicy(options.retry or (settings.retry if settings else "online")),
        max_batch_retries=settings.max_batch_retries if settings else 2,
        poll_backoff_max_s=settings.poll_backoff_max_s if settings else 300.0,
        poll_max_failures=settings.poll_max_failures if settings else 20,
        poll_give_up_s=settings.poll_give_up_s if settings else 3600.0,
        wait=options.wait and options.batch_file is None,
        command=(command if command is not None else list(options.command) if options.command is not None
                 else command_line()),
        owner=claim_owner(),
        resume_only=options.resume_only,
    )


# ------------------------------------------------------------------------------------------ batches list / show
def batch_rows(store: Store, *, open_only: bool = False) -> list[dict[str, Any]]:
    """The project's batches as rows for ``benchwright batches`` (newest first): id, provider, status, the
    provider's status and id, requests, counts in the project (succeeded, errored, expired, cancelled, missing,
    waiting, used), created, ended, the file, the command."""
    out = []
    for b in store.batches(open_only=open_only):
        counts = store.batch_request_counts(b.id)
        out.append({
            "id": b.id, "provider": b.provider, "kind": b.provider_kind, "endpoint": b.endpoint,
            "status": str(b.status), "provider_status": b.provider_status, "provider_batch_id": b.provider_batch_id,
            "requests": b.request_count, "bytes": b.bytes, "provider_counts": b.counts, **counts,
            "created_at": b.created_at, "submitted_at": b.submitted_at, "ended_at": b.ended_at,
            "collected_at": b.collected_at, "file": b.file, "command": b.command, "error": b.error,
        })
    return out


# ------------------------------------------------------------------------------------------ batches import
@dataclass
class ImportedResults:
    """What ``batches import`` stored: lines read, results stored (new), already stored, not ours, by batch."""

    lines: int = 0
    stored: int = 0
    already: int = 0
    unknown: int = 0
    batches: tuple[int, ...] = ()
    conflicting: int = 0
    """Lines for a request whose stored result differs (a second, different answer: the first is kept)."""


def _result_lines(path: Path) -> Iterator[tuple[int, dict]]:
    from benchwright.core.errors import BenchwrightError

    try:
        f = path.open("r", encoding="utf-8")
    except OSError as e:
        raise BenchwrightError(f"{path}: cannot read it ({e.strerror or e})") from None
    with f:
        for n, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as e:
                raise BenchwrightError(f"{path}, line {n}: not JSON ({e.msg} at column {e.colno})") from None
            if not isinstance(value, dict) or not isinstance(value.get("custom_id"), str):
                raise BenchwrightError(f"{path}, line {n}: a batch output line needs a string custom_id (the OpenAI "
                                       "batch output format: custom_id, response, error)")
            yield n, value


def import_results(store: Store, path: str | Path) -> ImportedResults:
    """Store the results of ``path`` (OpenAI batch output lines, as ``vllm run-batch`` writes them) against the
    batches this project wrote with ``--batch-file``, all or nothing: the file is read and checked whole first.
    A line whose ``custom_id`` is not ours is counted and skipped; a result already stored is left as it was. Each
    batch with every request answered is ``collected``; a rerun of the command that wrote the file (or ``batches
    resume``) then uses them.

    Raises:
        BenchwrightError: the file cannot be read, a line is not JSON or has no ``custom_id`` (file and line named).
    """
    from benchwright.core.llm.openai_batch import result_item as openai_result_item

    path = Path(path)
    out = ImportedResults()
    by_batch: dict[int, list] = {}
    for _n, value in _result_lines(path):
        out.lines += 1
        batch_id = store.batch_of_custom_id(value["custom_id"])
        if batch_id is None:
            out.unknown += 1
            continue
        by_batch.setdefault(batch_id, []).append(openai_result_item(value))
    with store.write():
        for batch_id, items in by_batch.items():
            before = store.batch_results(batch_id)
            n = store.store_batch_results(batch_id, items)
            out.stored += n
            out.already += len(items) - n
            after = store.batch_results(batch_id)
            out.conflicting += sum(1 for it in items if before.get(it.custom_id, (None, None))[1] is not None
                                   and after[it.custom_id][1] != it.raw)
            # a line repeated within the file with other content: the first one is kept
            seen: dict[str, dict] = {}
            for it in items:
                if it.custom_id in seen and seen[it.custom_id] != it.raw:
                    out.conflicting += 1
                seen.setdefault(it.custom_id, it.raw)
            counts = store.batch_request_counts(batch_id)
            if counts["waiting"] == 0:
                store.batch_collected(batch_id)
    out.batches = tuple(sorted(by_batch))
    return out


# ------------------------------------------------------------------------------------------ batches collect
def _provider_of(store: Store, b, provider_factory=None):
    """The provider a batch was sent to, built from benchwright.toml (its name is recorded with the batch).

    Raises:
        LLMConfigError: the provider is no longer configured, or its key is not set.
    """
    from benchwright.core.llm.config import RoleConfig, build_provider, load_llm_config

    from .llm import project_dir_of

    config = load_llm_config(project_dir_of(store))
    settings = config.settings.providers.get(b.provider)
    if settings is None and provider_factory is None:  # a factory (tests, the demo) makes its own provider
        raise LLMConfigError(f"batch #{b.id} was sent to provider '{b.provider}', which benchwright.toml no "
                             "longer configures")
    return (provider_factory or build_provider)(config, RoleConfig(role="batch", provider=b.provider,
                                                                   settings=settings, model=""))


async def collect_batch(store: Store, batch_id: int, *, provider_factory=None) -> str:
    """Ask the provider about batch ``batch_id`` once and, when it has ended, store every result (they were paid
    for) without running the command that made it: ``batches collect``. Returns the batch's status afterwards
    (``collected``, or the provider's word while it runs).

    Raises:
        BenchwrightError: no such batch, or not one sent to a provider; LLMConfigError / LLMError: as the provider.
    """
    from benchwright.core.errors import BenchwrightError
    from benchwright.core.llm.batch import BatchStatus

    b = store.batch(batch_id)
    if b is None:
        raise BenchwrightError(f"no batch #{batch_id} in this project (benchwright batches lists them)")
    if b.status is BatchStatus.COLLECTED:
        return "collected"
    if b.status not in (BatchStatus.SUBMITTED, BatchStatus.ENDED) or not b.provider_batch_id:
        raise BenchwrightError(f"batch #{batch_id} is {b.status}: only a batch at a provider can be collected "
                               "(a --batch-file batch comes back with batches import)")
    provider = _provider_of(store, b, provider_factory)
    try:
        backend = provider.batch_backend()
        remote = await backend.retrieve(b.provider_batch_id)
        if not remote.ended:
            store.batch_state(batch_id, status=BatchStatus.SUBMITTED, provider_status=remote.status,
                              counts=remote.counts)
            return remote.status
        store.batch_state(batch_id, status=BatchStatus.ENDED, provider_status=remote.status, counts=remote.counts)
        chunk: list = []
        async for item in backend.results(remote):
            chunk.append(item)
            if len(chunk) >= 1000:
                store.store_batch_results(batch_id, chunk)
                chunk = []
        if chunk:
            store.store_batch_results(batch_id, chunk)
        store.batch_collected(batch_id)
        return "collected"
    finally:
        await provider.aclose()


def drop_exported(store: Store, batch_id: int) -> int:
    """Give up a ``--batch-file`` batch whose results will never be imported: its waiting requests become
    ``cancelled`` and the batch ``collected`` (a rerun then sends them anew). Returns how many were waiting."""
    from benchwright.core.llm.batch import BatchItem, ResultKind

    waiting = [cid for cid, (kind, _) in store.batch_results(batch_id).items() if kind is None]
    store.store_batch_results(batch_id, [BatchItem(cid, ResultKind.CANCELLED, {"error": "dropped by batches cancel"})
                                         for cid in waiting])
    store.batch_collected(batch_id)
    return len(waiting)


# ------------------------------------------------------------------------------------------ batches cancel
async def cancel_batch(store: Store, batch_id: int, *, provider_factory=None):
    """Ask the provider of batch ``batch_id`` to cancel it; record what it says. Returns the provider's
    :class:`~benchwright.core.llm.batch.RemoteBatch`.

    Raises:
        BenchwrightError: no such batch, it is already collected or was never submitted (a file, a refused batch);
        LLMConfigError: its provider is no longer configured, or its key is not set;
        LLMError: the provider could not be asked.
    """
    from benchwright.core.errors import BenchwrightError
    from benchwright.core.llm.batch import BatchStatus

    b = store.batch(batch_id)
    if b is None:
        raise BenchwrightError(f"no batch #{batch_id} in this project (benchwright batches lists them)")
    if b.status not in (BatchStatus.SUBMITTED, BatchStatus.PENDING) or not b.provider_batch_id:
        raise BenchwrightError(f"batch #{batch_id} is {b.status}: only a submitted batch can be cancelled"
                               + (" (a --batch-file batch: batches cancel --drop gives it up)"
                                  if b.status is BatchStatus.EXPORTED else ""))
    provider = _provider_of(store, b, provider_factory)
    try:
        remote = await provider.batch_backend().cancel(b.provider_batch_id)
    finally:
        await provider.aclose()
    store.batch_state(batch_id, status=BatchStatus.ENDED if remote.ended else BatchStatus.SUBMITTED,
                      provider_status=remote.status, counts=remote.counts)
    return remote
