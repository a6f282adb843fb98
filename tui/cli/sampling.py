"""``benchwright sample`` and ``benchwright selections``: balanced samples over the taxonomy (SWE-QA-Pro §2.4)
written as named selections.

Cluster names, QA types and questions come from data: every cell is printed literally (``Text`` of
:func:`~benchwright.core.text.printable`, cut by :func:`~.common.shown_name`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError
from benchwright.core.sampling import DEFAULT_PER_CLUSTER, SAMPLE_BALANCES, Shortfall, parse_per_cluster

from .common import (
    annotator_option,
    friendly,
    open_store,
    out_console,
    parse_where,
    plural,
    shown_name,
    where_option,
)

if TYPE_CHECKING:
    from rich.table import Table

_PER_CLUSTER = f"{DEFAULT_PER_CLUSTER[0]}..{DEFAULT_PER_CLUSTER[1]}"


def _coverage_table(coverage: dict, names: dict, candidates: dict | None = None, title: str = "Coverage") -> Table:
    """The cluster x QA-type table: one row per cluster (its id and name, its candidates when known), a column per
    QA type, the pairs drawn; a last row of totals."""
    from rich.table import Table
    from rich.text import Text

    types = sorted({t for row in coverage.values() for t in row} - {"(none)"})
    types += ["(none)"] if any("(none)" in row for row in coverage.values()) else []
    table = Table(title=Text(title), title_justify="left", show_edge=False)
    table.add_column("cluster")
    table.add_column("name")
    if candidates is not None:
        table.add_column("candidates", justify="right")
    for t in types:
        table.add_column(Text(shown_name(t, 24)), justify="right")
    table.add_column("drawn", justify="right")
    sums = dict.fromkeys(types, 0)
    for cluster, row in coverage.items():
        cells = [Text(shown_name(cluster, 24)), Text(shown_name(names.get(cluster) or "", 40))]
        if candidates is not None:
            cells.append(Text(str(candidates.get(cluster, 0))))
        for t in types:
            sums[t] += row.get(t, 0)
            cells.append(Text("-" if t not in row else str(row[t])))
        cells.append(Text(str(sum(row.values()))))
        table.add_row(*cells)
    total = [Text("all"), Text(plural(len(coverage), "cluster"))]
    if candidates is not None:
        total.append(Text(str(sum(candidates.values()))))
    table.add_row(*total, *(Text(str(sums[t])) for t in types), Text(str(sum(sums.values()))), style="bold",
                  end_section=True)
    return table


def _print_shortfalls(out, shortfalls: list[Shortfall], lo: int) -> None:
    from rich.text import Text

    if not shortfalls:
        out.print(Text(f"no shortfall: every cluster drew at least {lo}, QA types are even within the tolerance"))
        return
    out.print(Text(f"{plural(len(shortfalls), 'shortfall')}:"))
    for s in shortfalls:
        out.print(Text("  " + shown_name(s.detail.replace("\n", " "), 400)))  # one line each: a cluster id may hold \n


@click.command("sample")
@click.option("--name", "name", metavar="NAME",
              help="The selection to write (letters, digits, '.', '_', '-'; a name used before gets a new version). "
                   "Required unless --dry-run.")
@click.option("--per-cluster", "per_cluster", default=_PER_CLUSTER, show_default=True, metavar="LO..HI",
              help="Pairs per cluster: at least LO, at most HI (SWE-QA-Pro §2.4: 4..9).")
@click.option("--balance", type=click.Choice(SAMPLE_BALANCES), default="qa-type", show_default=True,
              help="Keep QA types about even, or draw each cluster's pairs in shuffled order.")
@click.option("--total", type=click.IntRange(min=1), metavar="N",
              help="Pairs in all (default: every cluster up to HI).")
@click.option("--seed", type=click.IntRange(-(2**63), 2**63 - 1), default=0, show_default=True,
              help="Seed of the draw (same seed, same sample); stored with the selection, so a 64-bit integer.")
@where_option
@click.option("--all", "all_pairs", is_flag=True,
              help="Draw from every pair --where matches, also duplicates dedup left out and pairs calibration "
                   "found too easy.")
@click.option("--include-unclustered", is_flag=True,
              help="Sample the pairs without a cluster too, as one more cluster 'unclustered'.")
@click.option("--dry-run", is_flag=True, help="Print the coverage and shortfalls; store nothing.")
@annotator_option("Who samples (default: configuration, then the OS user); also whose status --where status= reads.")
@click.pass_context
@friendly
def sample(ctx, name, per_cluster, balance, total, seed, where, all_pairs, include_unclustered, dry_run,
           annotator) -> None:
    """A balanced sample over clusters and QA types (SWE-QA-Pro §2.4), written as a named selection.

    Draws from the survivors of dedup (not dropped, not an unresolved duplicate other than its group's
    representative) and of calibration (not too easy), among the pairs --where selects (every review status:
    add --where status=accepted to draw from your accepted pairs only). Each cluster gets at least LO pairs
    (rounds over the clusters), then rounds fill them up to HI until --total is reached; with --balance qa-type
    each draw takes the QA type least drawn so far. Prints the cluster x QA-type coverage and every shortfall
    (a cluster under LO, a --total not reached, a QA type far from even). Use the selection with
    --where selection=NAME and releases create --selection NAME. The algorithm: docs/data-methods.md.
    """
    from rich.text import Text

    from ..services.sampling import draw_sample, save_draw

    lo_hi = parse_per_cluster(per_cluster)
    if name is None and not dry_run:
        raise click.UsageError("give --name NAME for the selection (or --dry-run to only look)")
    if name is not None:
        from benchwright.core.sampling import check_selection_name

        check_selection_name(name)
    by = resolve_annotator(annotator)
    out = out_console()
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets()) if where else None
        draw = draw_sample(store, by, flt, where=tuple(where), per_cluster=lo_hi, total=total,
                           balance=None if balance == "none" else balance, seed=seed, survivors=not all_pairs,
                           include_unclustered=include_unclustered)
        s, c = draw.sample, draw.counts
        left = [] if all_pairs else [f"{plural(c['duplicates'], 'duplicate')} (dedup)",
                                     f"{c['too_easy']} too easy (calibration)"]
        if s.unclustered:
            left.append(f"{s.unclustered} without a cluster (--include-unclustered)")
        out.print(Text(f"candidates: {plural(sum(s.candidates.values()), 'pair')} in "
                       f"{plural(len(s.candidates), 'cluster')} ({c['matching']} matching"
                       f"{' --where' if where else ''}{'; left out: ' + ', '.join(left) if left else ''})"))
        if not s.candidates:
            raise BenchwrightError("no candidate pair to draw from (see the counts above); nothing was stored")
        out.print(_coverage_table(s.coverage, draw.names, s.candidates))
        out.print(Text(f"drawn: {plural(len(s.members), 'pair')} (per cluster {_parameters(draw.params, seed)})"))
        _print_shortfalls(out, s.shortfalls, lo_hi[0])
        if dry_run:
            out.print(Text("dry run: nothing was stored"))
            return
        sel = save_draw(store, name, draw, by=by)
    kept = ("" if sel.version == 1 else " (version 1 kept)" if sel.version == 2
            else f" (versions 1 to {sel.version - 1} kept)")
    out.print(Text(f"selection {sel.name}: version {sel.version} stored, {plural(sel.size, 'pair')}{kept}"))
    out.print(Text(f"next: benchwright selections show {sel.name}\n"
                   f"      benchwright releases create RELEASE --version 1.0.0 --selection {sel.name}"))


def _parameters(p: dict, seed) -> str:
    """A selection's sampling parameters in the words of ``sample``'s options."""
    lo_hi = p.get("per_cluster") or ["?", "?"]
    words = [f"{lo_hi[0]}..{lo_hi[1]}", f"balance {p.get('balance')}",
             f"total {'not set' if p.get('total') is None else p['total']}", f"seed {seed}"]
    words += [] if p.get("survivors", True) else ["--all"]
    words += ["--include-unclustered"] if p.get("include_unclustered") else []
    words += [f"--where {w}" for w in p.get("where") or []]
    return ", ".join(words)


@click.group("selections")
def selections() -> None:
    """Named selections (``sample``): list them, show one's members and coverage."""


@selections.command("list")
@click.pass_context
@friendly
def selections_list(ctx) -> None:
    """Every selection's latest version: pairs, parameters, shortfalls, who made it and when."""
    from rich.table import Table
    from rich.text import Text

    with open_store(ctx) as store:
        rows = store.selections()
    out = out_console()
    if not rows:
        out.print(Text("no selection yet; make one with: benchwright sample --name NAME --total N"))
        return
    table = Table(show_edge=False)
    for col in ("name", "version", "pairs", "parameters", "shortfalls", "made", "by"):
        table.add_column(col, justify="right" if col in ("version", "pairs", "shortfalls") else "left")
    for sel in rows:
        table.add_row(*(Text(shown_name(str(v), 40)) for v in (sel.name, sel.version, sel.size)),
                      Text(shown_name(_parameters(sel.params, sel.seed), 400)),
                      *(Text(shown_name(str(v), 40)) for v in (len(sel.shortfalls), sel.created_at[:10],
                                                               sel.created_by)))
    out.print(table)


@selections.command("show")
@click.argument("name")
@click.option("--version", "version", type=click.IntRange(min=1), help="An earlier version (default: the latest).")
@click.option("--json", "json_file", type=click.Path(dir_okay=False),
              help="Also write the selection and its members as JSON to this file.")
@click.pass_context
@friendly
def selections_show(ctx, name, version, json_file) -> None:
    """A selection's parameters, cluster x QA-type coverage, shortfalls and members in draw order."""
    from rich.table import Table
    from rich.text import Text

    from .common import write_json_file

    with open_store(ctx) as store:
        sel = store.selection(name, version)
        members = store.selection_members(sel.id)
    out = out_console()
    lo_hi = sel.params.get("per_cluster") or [0, 0]
    out.print(Text(shown_name(f"selection {sel.label}: {plural(sel.size, 'pair')}, made {sel.created_at[:19]} by "
                              f"{shown_name(sel.created_by)}; per cluster {_parameters(sel.params, sel.seed)}", 2000)))
    names = {}
    for m in members:
        if m["cluster_id"] is not None and m["cluster_name"] and m["cluster_id"] != m["cluster_name"]:
            names.setdefault(m["cluster_id"], m["cluster_name"])
    out.print(_coverage_table(sel.coverage, names))
    _print_shortfalls(out, [Shortfall.from_dict(d) for d in sel.shortfalls], lo_hi[0])
    table = Table(title=Text("Members (draw order)"), title_justify="left", show_edge=False)
    for col in ("drawn", "pair", "queue", "cluster", "QA type", "question"):
        table.add_column(col, justify="right" if col in ("drawn", "queue") else "left")
    for m in members:
        table.add_row(*(Text(shown_name(str(v), 24)) for v in (
            m["position"], m["qa_pair_id"], f"#{m['ordinal']}", m["cluster_id"] or "-", m["qa_type"] or "-")),
            Text(shown_name(" ".join(m["question"].split()), 80)))
    out.print(table)
    if json_file is not None:
        write_json_file(json_file, {
            "name": sel.name, "version": sel.version, "size": sel.size, "seed": sel.seed, "params": sel.params,
            "coverage": sel.coverage, "shortfalls": sel.shortfalls, "created_at": sel.created_at,
            "created_by": sel.created_by, "members": members})
