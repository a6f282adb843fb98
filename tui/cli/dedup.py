"""``benchwright dedup``: semantic deduplication of questions (SWE-QA-Pro §2.3), and the resolution of
duplicate groups. The rules are :mod:`benchwright.core.dedup`'s; questions come from data, so every one is printed
literally."""

from __future__ import annotations

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.dedup import DEFAULT_THRESHOLD
from benchwright.core.text import printable
from benchwright.core.vocabulary import DEDUP_SCOPES

from .common import (
    FractionRange,
    annotator_option,
    friendly,
    open_store,
    out_console,
    parse_where,
    plural,
    shown_name,
    step_progress,
    where_option,
)

QUESTION_CHARS = 160
"""A question is cut at this many characters in a summary or group listing (the app shows it whole)."""


def _question(text: str) -> str:
    return shown_name(" ".join(text.split()), QUESTION_CHARS)


@click.group("dedup", invoke_without_command=True)
@click.option("--threshold", type=FractionRange(), default=DEFAULT_THRESHOLD, show_default=True,
              help="Cosine similarity of two questions' embeddings at or above which they are near-duplicates.")
@click.option("--scope", type=click.Choice(DEDUP_SCOPES), default="repository", show_default=True,
              help="Compare questions within each repository, or across the whole project.")
@click.option("--across-splits", is_flag=True,
              help="Also compare questions of different splits (train vs test); such groups are reported apart.")
@where_option
@click.option("--model", "model", metavar="EMBEDDER",
              help="The embedder (default: the embedder role, else the built-in wordllama-l2-supercat; "
                   "builtin:hashing is a fast deterministic stand-in).")
@click.option("--dimensions", type=click.IntRange(min=1), help="Embedding dimensions (default: the model's).")
@annotator_option("Who runs it (recorded with the run).")
@click.pass_context
@friendly
def dedup(ctx, threshold, scope, across_splits, where, model, dimensions, annotator) -> None:
    """Semantic dedup of questions (SWE-QA-Pro §2.3): find duplicate groups, list and resolve them.

    Without a subcommand: embed every question (or those --where selects; the vectors are cached, so a rerun with
    the same embedder embeds nothing), link each two whose cosine similarity is at least --threshold within a
    repository (--scope global: across the project) and a split (--across-splits: across splits too), and store
    the connected groups as a new dedup run; questions that ask several things in one are flagged multi-query.
    Nothing is deleted: `dedup resolve` (or D in the app's queue) keeps one member, keeps them all or merges.
    """
    if ctx.invoked_subcommand is not None:
        return
    from rich.text import Text

    from ..services.dedup import run_dedup
    from ..services.embeddings import resolve_embedder

    by = resolve_annotator(annotator)
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets())
        choice = resolve_embedder(store.path.parent, model, dimensions)
        with step_progress(f"embedding questions with {shown_name(choice.model)}") as report:
            outcome = run_dedup(store, annotator=by, flt=flt, threshold=threshold, scope=scope,
                                across_splits=across_splits, choice=choice, where=where, progress=report)
        ordinals = {c.id: c.ordinal for c in store.dedup_candidates([m for g in outcome.groups for m in g.members])}
        total = store.count_pairs()
    out = out_console()
    b = outcome.batch
    within = "across splits" if across_splits else "within each split"
    out.print(Text(f"dedup run {outcome.run_id}: compared {plural(outcome.pair_count, 'question')} "
                   f"(scope {scope}, {within}, threshold {threshold:g}) with {printable(b.model)} at "
                   f"{b.dimensions} dimensions: {b.computed} embedded, {b.cached} from the cache, "
                   f"{plural(b.calls, 'call')}"
                   + ("" if not b.calls else ", cost unknown" if b.cost_usd is None else f", ${b.cost_usd:.4f}")))
    plain = [g for g in outcome.groups if g.kind != "cross-split"]
    members = sum(len(g.members) for g in plain)
    out.print(Text(f"{plural(len(plain), 'duplicate group')} ({plural(members, 'pair')})"))
    cross = outcome.cross_split
    if across_splits or cross:
        out.print(Text(f"{plural(len(cross), 'cross-split group')} (train vs test){':' if cross else ''}"))
        for g in cross:
            sides = " vs ".join(f"#{ordinals[m]} ({printable(g.splits[m] or 'no split')})" for m in g.members)
            out.print(Text(f"  group of {sides}, similarity {g.max_score:.3f}"))
    out.print(Text(f"{plural(len(outcome.multi_query), 'multi-query question')} (asking several things in one; "
                   "--where dedup=multi-query)"))
    if outcome.pair_count < total:
        # the latest run is the one that counts (docs/data-methods.md): say what that means for the others
        out.print(Text(f"note: this run covers {outcome.pair_count} of the project's {plural(total, 'pair')} and is now the "
                       f"latest: the other {total - outcome.pair_count} are in no duplicate group until a run covers "
                       "them again (earlier resolutions are kept and apply again to a group with the same members)"))
    if outcome.groups:
        out.print(Text("next: benchwright dedup list --unresolved, then benchwright dedup resolve GROUP --keep PAIR "
                       "(or press D in the app's queue)"))


@dedup.command("list")
@click.option("--unresolved", is_flag=True, help="Only groups nobody resolved yet.")
@click.option("--cross-split", is_flag=True, help="Only groups whose members are in different splits.")
@click.pass_context
@friendly
def list_groups(ctx, unresolved, cross_split) -> None:
    """The duplicate groups of the latest dedup run, with their members (position, id, split, similarity,
    question) and resolution."""
    from rich.text import Text

    with open_store(ctx) as store:
        run = store.latest_dedup_run()
        groups = store.duplicate_groups(unresolved=unresolved, cross_split=cross_split)
    out = out_console()
    if run is None:
        out.print(Text("no dedup run yet: run benchwright dedup"))
        return
    out.print(Text(f"dedup run {run.id} ({run.created_at[:19]}, by {shown_name(run.created_by)}): "
                   f"{plural(run.group_count, 'group')}, {run.cross_split_group_count} cross-split; "
                   f"showing {len(groups)}"))
    for g in groups:
        r = g.resolution
        state = "unresolved" if r is None else f"{r.decision} by {shown_name(r.annotator)}"
        scope = f" · {shown_name(g.scope_key)}" if g.scope_key else ""
        out.print(Text(f"\ngroup {g.id} · {g.kind}{scope} · max similarity {g.max_score:.3f} · {state}"))
        ordinal = {m.id: m.ordinal for m in g.members}
        for m in g.members:
            mark = "*" if m.id == g.representative else " "
            if r is not None:
                mark = "kept" if m.id in r.kept else "dropped" if m.id in r.dropped else mark
            out.print(Text(f"  {mark:>7} #{m.ordinal:<6} {m.id}  {printable(m.split or '-'):<6} {m.score:.3f}  "
                           f"{_question(m.question)}"))
        if r is not None and r.note:
            out.print(Text(f"  note: {shown_name(r.note, QUESTION_CHARS)}"))
        if r is None:
            out.print(Text(f"  resolve: benchwright dedup resolve {g.id} --keep #{ordinal[g.representative]} "
                           "| --keep-both | --merge-into PAIR"))


@dedup.command("resolve")
@click.argument("group", type=int)
@click.option("--keep", "keep", metavar="PAIR", help="Keep this member (id or #position); the others are dropped.")
@click.option("--keep-both", is_flag=True, help="Not duplicates: keep every member.")
@click.option("--merge-into", "merge_into", metavar="PAIR",
              help="Keep this member and record the others as merged into it.")
@click.option("--note", help="Why (kept with the resolution).")
@annotator_option("Who decides.")
@click.pass_context
@friendly
def resolve(ctx, group, keep, keep_both, merge_into, note, annotator) -> None:
    """Resolve duplicate group GROUP (`dedup list` shows the ids): keep one member, keep them all (not duplicates)
    or merge into one. Nothing is deleted; the resolution holds for any later run's group with the same members,
    and a later resolution replaces it."""
    given = [name for name, v in (("--keep", keep), ("--keep-both", keep_both), ("--merge-into", merge_into)) if v]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --keep PAIR, --keep-both, --merge-into PAIR"
                               + (f" (got {', '.join(given)})" if given else ""))
    by = resolve_annotator(annotator)
    with open_store(ctx) as store:
        view = store.duplicate_group(group)
        target = store.resolve_pair(keep or merge_into) if (keep or merge_into) else None
        decision = "keep-one" if keep else "merge" if merge_into else "keep-both"
        store.resolve_duplicate_group(group, decision, target, annotator=by, note=note,
                                      expected=view.resolution.id if view.resolution else None)
        after = store.duplicate_group(group)
    r = after.resolution
    ordinal = {m.id: m.ordinal for m in after.members}
    kept = ", ".join(f"#{ordinal[p]}" for p in r.kept)
    dropped = ", ".join(f"#{ordinal[p]}" for p in r.dropped) or "none"
    click.echo(f"group {group}: {decision} by {shown_name(by)}; kept {kept}; dropped {dropped}")
