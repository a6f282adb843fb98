"""``benchwright taxonomy``: versioned two-level topic taxonomies (SWE-QA-Pro §2.1): build, label, edit,
assign, show, history. The work is in :mod:`benchwright.tui.services.taxonomy`; this module words it."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError
from benchwright.core.llm.jobs import describe_cost
from benchwright.core.vocabulary import TAXONOMY_SOURCES

from .common import (
    annotator_option,
    batch_options,
    batch_request,
    friendly,
    open_store,
    out_console,
    parse_where,
    plural,
    run_with_progress,
    shown_name,
    where_option,
)

if TYPE_CHECKING:
    from benchwright.core.taxonomy import TaxonomyVersion

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

LABEL_ROLE = "generator"
"""The configured role whose model labels nodes (``[roles.generator]``; ``--model`` overrides it)."""


@click.group("taxonomy")
def taxonomy() -> None:
    """Topic taxonomies (SWE-QA-Pro §2.1): build, label, edit, assign pairs to leaves, show."""


def _embed_progress(label: str):
    """A Rich progress bar on stderr for embedding, and the ``progress(done, total)`` callback feeding it."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                   console=Console(stderr=True), transient=True)
    task = bar.add_task(label, total=None)

    def progress(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return bar, progress


def _embedded_line(batch) -> str:
    return (f"embedded {plural(batch.computed, 'text')} with {batch.model} ({batch.dimensions} dimensions), "
            f"{batch.cached} from the cache")


_KMEANS_SEED = click.IntRange(0, 2**32 - 1)
"""scikit-learn's KMeans takes a random_state in [0, 2**32 - 1] (outside it was a traceback)."""


@taxonomy.command("build")
@click.option("--source", type=click.Choice(TAXONOMY_SOURCES), default="issues", show_default=True,
              help="Cluster the imported issue texts (SWE-QA-Pro §2.1) or the pairs' questions.")
@click.option("--repo", "repository", help="Only the issues (or pairs) of this repository.")
@where_option
@click.option("--k1", type=click.IntRange(min=1), default=10, show_default=True, help="Level-1 topics.")
@click.option("--k2", type=click.IntRange(min=1), default=50, show_default=True,
              help="Leaves in all, split across the level-1 topics in proportion to their size.")
@click.option("--seed", type=_KMEANS_SEED, default=0, show_default=True, help="k-means seed (a build is reproducible).")
@click.option("--model", help="Embedder model (default: the embedder role's, else the built-in "
                              "wordllama-l2-supercat).")
@click.option("--dimensions", type=click.IntRange(min=1), help="Embedding dimensions (default: the model's).")
@annotator_option()
@click.pass_context
@friendly
def taxonomy_build(ctx, source, repository, where, k1, k2, seed, model, dimensions, annotator) -> None:
    """Build a new taxonomy: embed the texts, k-means into --k1 topics, then each topic's texts into its share
    of --k2 leaves (by size, largest remainder, at least one each). Prints the tree with sizes.

    Vectors are cached, so building again (another seed, other k) embeds nothing twice.
    """
    from rich.text import Text

    from ..services.embeddings import resolve_embedder
    from ..services.llm import project_dir_of
    from ..services.taxonomy import build_taxonomy

    by = resolve_annotator(annotator)
    with open_store(ctx) as store:
        if repository is not None:
            store.get_repository(repository)
        scope: dict = {"repository": repository} if repository else {}
        if source == "issues":
            if where:
                raise click.UsageError("--where filters pairs; with --source issues use --repo")
            items = store.issue_texts(repository)
            if not items:
                where_ = f" of {shown_name(repository)}" if repository else ""
                raise BenchwrightError(
                    f"no issues{where_} in the project; import them first (benchwright issues import FILE "
                    "--repo NAME) or build from the pairs' questions (--source pairs)")
        else:
            flt = parse_where(where, facets=store.facets() if where else None)
            if repository is not None:
                flt = replace(flt, repository=repository)
            items = [(pid, q) for pid, q, _ in store.taxonomy_pairs(by, flt)]
            if where:
                scope["where"] = sorted(where)
            if not items:
                raise BenchwrightError("no pair matches; nothing to cluster")
        choice = resolve_embedder(project_dir_of(store), model, dimensions)
        bar, progress = _embed_progress(f"embedding {len(items)} texts ({choice.model})")
        with bar:
            result = build_taxonomy(store, items, source=source, k1=k1, k2=k2, seed=seed, by=by, choice=choice,
                                    scope=scope, progress=progress)
        out = out_console()
        out.print(Text(_embedded_line(result.embedding)))
        _print_tree(out, result.version)


@taxonomy.command("show")
@click.option("--version", "version", type=click.IntRange(min=1), help="This version (default: the latest).")
@click.option("--members", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also print this many members of each leaf (nearest to its centroid first).")
@click.pass_context
@friendly
def taxonomy_show(ctx, version, members) -> None:
    """Print a taxonomy version: each topic and leaf with its size, label and description."""
    from ..services.taxonomy import latest_version

    with open_store(ctx) as store:
        tv = latest_version(store, version)
        _print_tree(out_console(), tv, store=store if members else None, members=members)


def _print_tree(out: Console, tv: TaxonomyVersion, *, store=None, members: int = 0) -> None:
    from rich.text import Text

    tax = tv.taxonomy
    p = tv.params
    where = f", repository {shown_name(p['repository'])}" if p.get("repository") else ""
    out.print(Text(f"taxonomy version {tv.id} ({tv.operation}, lineage {tv.lineage}) · source {tv.source}{where} · "
                   f"{plural(len(tax.members), 'item')} · {tv.embedder_model} ({tv.dimensions} dimensions) · "
                   f"k1 {p.get('k1')}, k2 {p.get('k2')}, seed {p.get('seed')} · by {shown_name(tv.created_by)} "
                   f"{tv.created_at[:19]} UTC"))
    for top in tax.level1:
        out.print(_node_line(top, ""))
        for leaf in tax.children(top.node_id):
            out.print(_node_line(leaf, "  "))
            if store is not None and members:
                for m, text in store.taxonomy_node_members(tv.id, leaf.node_id, limit=members):
                    shown = " ".join((text or "(no longer in the project)").split())
                    out.print(Text(f"      {m.item_id}  {m.distance:.3f}  {shown_name(shown, 100)}"))


def _node_line(node, indent: str) -> Text:
    from rich.text import Text

    label = shown_name(node.label) if node.label else "(unlabelled)"
    by = f"  [{node.label_origin}]" if node.label_origin else ""
    line = Text(f"{indent + node.node_id:<8} {node.size:>6}  {label}{by}")
    if node.description:
        line.append(f"\n{'':<17}{shown_name(' '.join(node.description.split()), 150)}", style="dim")
    return line


@taxonomy.command("history")
@click.argument("node", required=False)
@click.option("--version", "version", type=click.IntRange(min=1), help="Of this version's lineage, up to it "
                                                                         "(default: the latest).")
@click.pass_context
@friendly
def taxonomy_history(ctx, node, version) -> None:
    """The versions of the taxonomy (who made each, when, and how), or NODE's label history across them."""
    from rich.text import Text

    from ..services.taxonomy import latest_version

    out = out_console()
    with open_store(ctx) as store:
        tv = latest_version(store, version)
        if node is None:
            for v in store.taxonomy_versions(tv.lineage):
                if v.id > tv.id:
                    break
                args = ", ".join(f"{k} {_arg(val)}" for k, val in sorted(v.operation_args.items())
                                 if val not in (None, {}, []))
                out.print(Text(f"{v.id:>4}  {v.created_at[:19]} UTC  {shown_name(v.created_by):<12} "
                               f"{v.operation:<7} {args}"))
            return
        changes = store.taxonomy_label_history(tv.id, node)
        out.print(Text(f"node {node} of taxonomy version {tv.id}: {plural(len(changes), 'label change')}"))
        for c in changes:
            who = " ".join(x for x in (c.origin, shown_name(c.model) if c.model else None,
                                       f"by {shown_name(c.by)}" if c.by else None,
                                       f"{c.at[:19]} UTC" if c.at else None) if x)
            label = shown_name(c.label) if c.label else "(unlabelled)"
            out.print(Text(f"  version {c.version} ({c.operation}) as {c.node_id}: {label}  {who}".rstrip()))
            if c.description:
                out.print(Text(f"      {shown_name(' '.join(c.description.split()), 200)}"))


def _arg(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}->{v}" for k, v in value.items())
    if isinstance(value, list):
        return ",".join(map(str, value))
    return shown_name(str(value))


# --------------------------------------------------------------------------------------------------- edit
@taxonomy.group("edit")
def taxonomy_edit() -> None:
    """Edit the latest taxonomy version: rename, merge, split or delete nodes (each edit a new version, with
    who and when)."""


_version_option = click.option("--version", "version", type=click.IntRange(min=1),
                               help="Edit this version (default: the latest); it must be the latest of its lineage.")


def _edit(ctx, operation: str, annotator: str | None, **kw) -> None:
    from rich.text import Text

    from ..services.taxonomy import edit_taxonomy

    by = resolve_annotator(annotator)
    with open_store(ctx) as store:
        tv = edit_taxonomy(store, operation, by=by, **kw)
        out = out_console()
        out.print(Text(f"{operation}: saved taxonomy version {tv.id} (from {tv.parent_id}) by {shown_name(by)}"))
        moved = tv.operation_args.get("moved") or {}
        if len(moved) > 1:
            out.print(Text("  moved: " + ", ".join(f"{a} -> {b}" for a, b in moved.items())))
        _print_tree(out, tv)
        out.print(Text("pairs keep their clusters until: benchwright taxonomy assign"))


@taxonomy_edit.command("rename")
@click.argument("node")
@click.option("--label", required=True, help="The node's new label.")
@click.option("--description", help="Its new description (default: keep the old one).")
@_version_option
@annotator_option()
@click.pass_context
@friendly
def edit_rename(ctx, node, label, description, version, annotator) -> None:
    """Give NODE a label (and description) of your own; taxonomy label never replaces it."""
    _edit(ctx, "rename", annotator, node=node, label=label, description=description, version=version)


@taxonomy_edit.command("merge")
@click.argument("node")
@click.argument("other")
@_version_option
@annotator_option()
@click.pass_context
@friendly
def edit_merge(ctx, node, other, version, annotator) -> None:
    """Merge OTHER into NODE: two leaves of one topic, or two level-1 topics (OTHER's leaves move under NODE and
    take its next free numbers). NODE keeps its id and label."""
    _edit(ctx, "merge", annotator, node=node, other=other, version=version)


@taxonomy_edit.command("split")
@click.argument("node")
@click.option("--k", "k", type=click.IntRange(min=2), required=True, help="Into this many.")
@click.option("--seed", type=_KMEANS_SEED, default=0, show_default=True, help="k-means seed.")
@_version_option
@annotator_option()
@click.pass_context
@friendly
def edit_split(ctx, node, k, seed, version, annotator) -> None:
    """Split NODE by k-means of its members: a leaf into K leaves (the first keeps its id and label), a level-1
    topic's members into K new leaves that replace its leaves."""
    _edit(ctx, "split", annotator, node=node, k=k, seed=seed, version=version)


@taxonomy_edit.command("delete")
@click.argument("node")
@_version_option
@annotator_option()
@click.pass_context
@friendly
def edit_delete(ctx, node, version, annotator) -> None:
    """Delete the leaf NODE: its members move to the nearest remaining leaf (the last leaf cannot go)."""
    _edit(ctx, "delete", annotator, node=node, version=version)


# ------------------------------------------------------------------------------------------------- assign
@taxonomy.command("assign")
@where_option
@click.option("--force", is_flag=True, help="Also replace clusters the import or a person set.")
@click.option("--pair", "pair", metavar="REF", help="Put this one pair (id, id prefix or #N) on --node yourself.")
@click.option("--node", help="With --pair: the leaf (L1.L2).")
@click.option("--version", "version", type=click.IntRange(min=1), help="Of this version (default: the latest).")
@annotator_option()
@click.pass_context
@friendly
def taxonomy_assign(ctx, where, force, pair, node, version, annotator) -> None:
    """Put pairs on their nearest leaf: each question embedded, the leaf whose centroid is nearest by cosine;
    cluster_id is the leaf (L1.L2), cluster_name its label. A cluster the import or a person set is kept
    unless --force. With --pair REF --node L1.L2 a person sets one pair's cluster."""
    from rich.text import Text

    from ..services.taxonomy import assign_pair, assign_pairs

    by = resolve_annotator(annotator)
    out = out_console()
    with open_store(ctx) as store:
        if pair is not None or node is not None:
            if pair is None or node is None:
                raise click.UsageError("--pair and --node go together")
            if where or force:
                raise click.UsageError("--pair --node sets one pair; --where and --force do not apply")
            pid = store.resolve_pair(pair)
            counts = assign_pair(store, pid, node, by=by, version=version)
            state = "already on" if counts.unchanged else "now on"
            out.print(Text(f"#{store.ordinal_of(pid)} {pid} {state} {node} (set by {shown_name(by)})"))
            return
        flt = parse_where(where, facets=store.facets() if where else None)
        bar, progress = _embed_progress("embedding questions")
        with bar:
            result = assign_pairs(store, annotator=by, by=by, flt=flt, force=force, version=version,
                                  progress=progress)
        c = result.counts
        if result.embedding is not None:
            out.print(Text(_embedded_line(result.embedding)))
        out.print(Text(f"taxonomy version {result.version.id}: {plural(result.pairs, 'pair')}; {c.assigned} "
                       f"assigned, {c.unchanged} unchanged, {c.kept_imported} kept-imported, {c.kept_annotator} "
                       f"kept-annotator" + ("" if force or not (c.kept_imported or c.kept_annotator)
                                            else " (--force replaces those)")))
        unlabelled = sum(1 for n in result.version.taxonomy.leaves if not n.label)
        if unlabelled and c.assigned:
            leaves = "1 leaf has" if unlabelled == 1 else f"{unlabelled} leaves have"
            out.print(Text(f"  {leaves} no label yet, so their pairs have no cluster_name: benchwright taxonomy "
                           "label, then assign again"))


# -------------------------------------------------------------------------------------------------- label
@taxonomy.command("label")
@click.option("--model", help="Model to use (MODEL or PROVIDER:MODEL); default: the generator role's model in "
                              "benchwright.toml.")
@click.option("--sample", type=click.IntRange(min=1), default=20, show_default=True,
              help="Member texts shown per leaf.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the member sample.")
@click.option("--version", "version", type=click.IntRange(min=1), help="Label this version (default: the latest).")
@click.option("--force", is_flag=True, help="Also relabel nodes an LLM labelled, with fresh calls (a label a "
                                            "person set is never replaced).")
@annotator_option("Who runs it (recorded with each label).")
@batch_options
@click.pass_context
@friendly
def taxonomy_label(ctx, model, sample, seed, version, force, annotator) -> None:
    """Ask an LLM for a label and a description of each unlabelled node: leaves from --sample member texts,
    then topics from their leaves' labels. The labels are saved as a new version; a failed call leaves its node
    unlabelled (it is in the ledger: benchwright calls). Running it again labels only what is left; after
    Ctrl+C what finished is saved."""
    from rich.text import Text

    from ..services.llm import client_for_role, llm_role
    from ..services.taxonomy import label_plan, label_taxonomy, latest_version

    by = resolve_annotator(annotator)
    out = out_console()
    with open_store(ctx) as store:
        tv = latest_version(store, version)
        leaves, parents, kept = label_plan(tv, force=force)
        if not leaves and not parents:
            out.print(Text(f"taxonomy version {tv.id}: nothing to label (every node has a label; --force relabels "
                           "the ones an LLM made)"))
            return
        config, role = llm_role(store, LABEL_ROLE, model)
        client = client_for_role(store, config, role, provider_factory=ctx.obj.get("provider_factory"),
                                 batch=batch_request(ctx))
        outcomes: list = []

        async def go(on_progress):
            try:
                return await label_taxonomy(store, client, model=role.model, params=role.params, sample=sample,
                                            seed=seed, by=by, version=tv.id, force=force, on_progress=on_progress,
                                            on_outcome=outcomes.append)
            finally:
                await client.provider.aclose()

        run = run_with_progress(go, len(leaves) + len(parents), f"label ({role.model})")
        ok = [o for o in outcomes if o.ok]
        failed = [o for o in outcomes if not o.ok]
        calls = sum(o.calls for o in outcomes)
        cost = describe_cost(sum(o.cost_usd for o in outcomes), calls=calls,
                             cost_unknown=sum(o.cost_unknown for o in outcomes),
                             unanswered=sum(o.unanswered for o in outcomes),
                             usage_missing=sum(o.usage_missing for o in outcomes))
        latest = store.taxonomy_versions(tv.lineage)[-1]
        saved = latest.id if latest.id != tv.id and latest.operation == "label" and run is None else (
            run.new_version if run is not None else None)
        if run is None:
            out.print(Text(f"label: cancelled; {len(outcomes)} of {len(leaves) + len(parents)} nodes finished"
                           + (f", saved as taxonomy version {saved}" if saved else "")
                           + ". Run the same command again to continue."))
        out.print(Text(f"label: {len(ok)} labelled, {len(failed)} failed"
                       + (f", {len(kept)} kept (labelled by a person)" if kept else "")
                       + f"; {plural(calls, 'call')} made, {sum(o.cached for o in outcomes)} cached, {cost}"))
        if saved:
            out.print(Text(f"saved taxonomy version {saved} (from {tv.id})"))
            _print_tree(out, latest_version(store, saved))
            out.print(Text("pairs keep their cluster names until: benchwright taxonomy assign"))
        for o in failed[:20]:
            out.print(Text(f"  failed {o.node_id}: {shown_name(o.reason or '', 300)}"))
        if run is None:
            from ..signals import interrupt_exit_code

            sys.exit(interrupt_exit_code())
        if failed:
            sys.exit(1)
