"""``benchwright embeddings``: compute and inspect the cached text embeddings (the ``embedder`` role)."""

from __future__ import annotations

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.llm.jobs import describe_cost

from .common import (
    batch_options,
    batch_request,
    friendly,
    open_store,
    parse_where,
    plural,
    shown_name,
    step_progress,
    where_option,
)

SOURCES = ("pairs", "issues")
"""What ``embeddings compute --source`` embeds: the pairs' current questions, or the issue texts."""


def embedder_options(fn):
    """``--model EMBEDDER`` and ``--dimensions N`` (parameters ``model``, ``dimensions``)."""
    fn = click.option("--dimensions", type=click.IntRange(min=1),
                      help="Embedding dimensions (default: [roles.embedder] dimensions, else the model's own).")(fn)
    return click.option("--model", "model", metavar="EMBEDDER",
                        help="MODEL or PROVIDER:MODEL (default: the embedder role, else the built-in "
                             "wordllama-l2-supercat; hashing is a fast deterministic stand-in).")(fn)


@click.group("embeddings")
def embeddings() -> None:
    """Text embeddings (the embedder role): compute them into the cache, show what is cached."""


@embeddings.command("compute")
@click.option("--source", type=click.Choice(SOURCES), default="pairs", show_default=True,
              help="pairs: each pair's current question; issues: the imported issue texts.")
@where_option
@embedder_options
@batch_options
@click.pass_context
@friendly
def embeddings_compute(ctx, source, where, model, dimensions) -> None:
    """Embed the texts of --source not yet in the cache (a rerun with the same embedder makes no calls), and
    print how many were computed and cached, the calls made and their cost."""
    from ..services.embeddings import resolve_embedder
    from ..services.llm import project_dir_of

    if where and source != "pairs":
        raise click.UsageError("--where selects pairs; it is for --source pairs")
    with open_store(ctx) as store:
        choice = resolve_embedder(project_dir_of(store), model, dimensions)
        ids = (store.filtered_pair_ids(resolve_annotator(None), parse_where(where, facets=store.facets()))
               if where else None)
        items = store.embedding_source_texts(source, ids)
        if not items:
            click.echo(f"no {'issue texts' if source == 'issues' else 'pairs'} to embed"
                       + (" match the filter" if where else ""))
            return
        options = batch_request(ctx)
        with step_progress(f"embedding {source} with {shown_name(choice.model)}") as report:
            batch = _embed(store, [t for _, t in items], choice, report, options)
    cost = describe_cost(batch.cost_usd or 0.0, calls=batch.calls, cost_unknown=batch.cost_unknown)
    click.echo(f"{plural(len(items), 'text')} of {source} with {shown_name(batch.model)} ({shown_name(batch.provider)}) "
               f"at {batch.dimensions} dimensions: {batch.computed} computed, {batch.cached} from the cache, "
               f"{plural(batch.calls, 'call')}" + (f", {cost}" if batch.calls else ""))


@embeddings.command("status")
@embedder_options
@click.pass_context
@friendly
def embeddings_status(ctx, model, dimensions) -> None:
    """Print the cached vectors per model and dimensions, and for the embedder role (or --model) how many texts
    of each source are not embedded yet."""
    from benchwright.core.embeddings import BUILTIN_DEFAULT_DIMENSIONS, BUILTIN_PROVIDER, text_sha256

    from ..services.embeddings import resolve_embedder
    from ..services.llm import project_dir_of

    with open_store(ctx) as store:
        choice = resolve_embedder(project_dir_of(store), model, dimensions)
        counts = store.embedding_counts()
        dims = choice.dimensions
        if dims is None:
            dims = (BUILTIN_DEFAULT_DIMENSIONS.get(choice.model) if choice.kind == BUILTIN_PROVIDER
                    else store.native_embedding_dimensions(choice.model, choice.provider))
        missing = {}
        for source in SOURCES:
            hashes = {text_sha256(t) for _, t in store.embedding_source_texts(source)}
            have = store.cached_vectors(sorted(hashes), choice.model, dims) if dims else {}
            missing[source] = (len(hashes), len(hashes) - len(have))
    if counts:
        click.echo("cached vectors:")
        for m, d, n in counts:
            click.echo(f"  {shown_name(m)} at {d} dimensions: {n:,}")
    else:
        click.echo("no vectors cached yet")
    at = f"at {dims} dimensions" if dims else "at its own dimensions (not known before the first call)"
    click.echo(f"embedder: {shown_name(choice.provider)}:{shown_name(choice.model)} {at}")
    for source, (total, todo) in missing.items():
        click.echo(f"  {source}: {plural(total, 'distinct text')}, {todo:,} not embedded yet")


def _embed(store, texts, choice, report, options):
    """``embed_texts`` with batch mode's endings: handed-off requests say where they are (exit 0); Ctrl+C says
    which batch keeps running and how to collect it."""
    from benchwright.core.llm.batch import BatchDeferred

    from ..services.batches import claim_active, deferred_lines, open_batches_line
    from ..services.embeddings import embed_texts

    try:
        return embed_texts(store, texts, choice, progress=report, batch=options)
    except BatchDeferred as e:
        claim_active()
        for line in deferred_lines(store, e):
            click.echo(line)
        raise SystemExit(0) from None
    except KeyboardInterrupt:
        running = sorted({bid for b in claim_active() for bid, info in b.progress.batches.items()
                          if info.get("status") not in ("collected", "failed")})
        if running:
            click.echo(open_batches_line(running), err=True)
        raise
