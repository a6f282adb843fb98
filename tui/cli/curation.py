"""``benchwright generate STEP``, ``benchwright links``, ``benchwright calls``: the curation pipeline from the
command line (RepoProbe §3.2), with a Rich progress bar and a summary."""

from __future__ import annotations

import asyncio
import json
import sys

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from benchwright.core.config import resolve_annotator
from benchwright.core.curation import STEPS, StepOutcome, StepSettings
from benchwright.core.errors import BenchwrightError
from benchwright.core.llm.base import CallStatus
from benchwright.core.llm.jobs import JobProgress, describe_cost
from benchwright.db import QueueFilter

from .cli import _friendly, _open, main
from .signals import interrupt_exit_code

WHERE_KEYS = ("repository", "qa_type", "category", "status", "checklist", "curation", "text", "assigned_to")


def parse_where(values: tuple[str, ...], *, facets: dict[str, list[str]] | None = None) -> QueueFilter:
    """``--where KEY=VALUE`` options as a :class:`QueueFilter` (keys: :data:`WHERE_KEYS`; ``-`` may replace ``_``).

    With ``facets`` (``Store.facets()``), ``repository``, ``qa_type`` and ``category`` values are matched to the
    project's values without regard to case (``qa_type=what`` finds ``What``); a value no pair has is an error
    that lists the values there are.

    Raises:
        BenchwrightError: an option without ``=``, an unknown key, a key given twice, or an unknown value.
    """
    fields: dict[str, str] = {}
    for v in values:
        key, sep, value = v.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not value:
            raise BenchwrightError(f"--where {v!r}: write KEY=VALUE, e.g. --where category=architecture")
        if key not in WHERE_KEYS:
            raise BenchwrightError(f"--where {v!r}: unknown key {key!r}; keys are {', '.join(WHERE_KEYS)}")
        if key in fields:
            raise BenchwrightError(f"--where {key} given twice")
        fields[key] = value
    if facets is not None:
        for key in ("repository", "qa_type", "category"):
            if key not in fields:
                continue
            known = {v.casefold(): v for v in facets.get(key, [])}
            value = known.get(fields[key].casefold())
            if value is None:
                shown = ", ".join(facets.get(key, [])) or "none yet"
                raise BenchwrightError(f"--where {key}={fields[key]}: no pair has it; values: {shown}")
            fields[key] = value
    flt = QueueFilter(**fields)
    flt.sql("")  # unknown status / checklist / curation values fail here, before any call
    return flt


def _tokens(p: JobProgress) -> str:
    u = p.usage
    return f"{u.input_tokens + u.output_tokens:,} tok"


def run_with_progress(coro_factory, total: int, label: str, *, console: Console | None = None) -> JobProgress | None:
    """Run ``coro_factory(on_progress)`` with a Rich progress bar (done/total, rate, ETA, tokens, cost).

    Returns the final progress, or None when the user pressed Ctrl+C (what finished is already stored)."""
    console = console or Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
        TextColumn("{task.fields[tokens]}"), TextColumn("{task.fields[cost]}"), TextColumn("{task.fields[calls]}"),
        console=console, transient=False, disable=not console.is_terminal and total == 0,
    )
    task = progress.add_task(label, total=total, rate="", tokens="0 tok", cost="", calls="")
    last: dict[str, JobProgress] = {}

    def on_progress(p: JobProgress) -> None:
        last["p"] = p
        progress.update(task, completed=p.done, rate=f"{p.rate:.1f}/s", tokens=_tokens(p),
                        cost=describe_cost(p.cost_usd, calls=p.calls, cost_unknown=p.cost_unknown,
                                          usage_missing=p.usage_missing, unanswered=p.unanswered), calls=f"{p.calls} call{'' if p.calls == 1 else 's'}, {p.cached} cached")

    with progress:
        try:
            return asyncio.run(coro_factory(on_progress))
        except KeyboardInterrupt:
            return None
        finally:
            last.setdefault("p", JobProgress(total=total))


@main.command()
@click.argument("step", type=click.Choice(STEPS))
@click.option("--model", help="Model to use (MODEL or PROVIDER:MODEL); default: the role's model in benchwright.toml.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many pairs.")
@click.option("--where", "where", multiple=True, metavar="KEY=VALUE",
              help=f"Only pairs matching (repeatable; keys: {', '.join(WHERE_KEYS)}).")
@click.option("--pair", "pairs", multiple=True, metavar="REF", help="Only this pair (id, id prefix or #N); repeatable.")
@click.option("--force", is_flag=True, help="Run again on pairs already done, and ignore cached calls.")
@click.option("--include-edited", is_flag=True,
              help="checklist --force: also generate new versions for checklists a person made or edited.")
@click.option("--as", "annotator", help="Who runs it (recorded with each result).")
@click.pass_context
@_friendly
def generate(ctx, step, model, limit, where, pairs, force, include_edited, annotator) -> None:
    """Run curation STEP (classify, enrich, refine, checklist, verify) over the project's pairs.

    Pairs already done are skipped and finished calls are reused from the ledger, so running the same command
    again makes no calls; after Ctrl+C or a crash it continues where it stopped (a forced run too: the same
    command with --force continues the unfinished forced run). A pair whose result is older than its input (an
    earlier step ran again, a link was added) runs again. Two runs at once share the work: a pair another
    running process has taken is left to it.
    """
    from benchwright.tui.services.curation_runs import plan_pairs, run_curation

    from .services.llm import STEP_ROLES, client_for_role, llm_role, project_dir_of

    by = resolve_annotator(annotator)
    with _open(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        pair_ids = [store.resolve_pair(p) for p in pairs] or None
        config, role = llm_role(store, STEP_ROLES[step], model)
        run_id = since = None
        if force:
            signature = json.dumps({"step": step, "model": role.model, "provider": role.provider,
                                    "where": sorted(where), "pairs": sorted(pair_ids or []), "limit": limit,
                                    "include_edited": include_edited}, sort_keys=True)
            run_id, since, resumed = store.open_run(f"curation:{step}:force", signature, by=by)
            if not resumed:
                since = None
        plan = plan_pairs(store, step, where=flt, limit=limit, force=force, pair_ids=pair_ids, since=since,
                          include_edited=include_edited)
        ids = plan.pair_ids
        if plan.resumed_done:
            click.echo(f"{step}: continuing the forced run started {since[:19]} UTC "
                       f"({plan.resumed_done} pairs already done by it)")
        if plan.stale:
            click.echo(f"{step}: {plan.stale} pairs run again because their input changed since their result")
        if plan.human:
            click.echo(f"{step}: left {len(plan.human)} pairs alone whose checklist a person made or edited "
                       "(--include-edited generates new versions for them too)")
        if not ids:
            if run_id is not None:
                store.finish_run(run_id)
            click.echo(plan.nothing_to_do_message(step))
            return
        client = client_for_role(store, config, role, provider_factory=ctx.obj.get("provider_factory"))
        settings = StepSettings(model=role.model, params=role.params, project_dir=project_dir_of(store), force=force)
        outcomes: list[tuple[str, StepOutcome]] = []

        async def go(on_progress):
            try:
                return await run_curation(store, client, step, ids, settings, by=by, on_progress=on_progress,
                                          on_outcome=lambda pid, o: outcomes.append((pid, o)))
            finally:
                await client.provider.aclose()

        final = run_with_progress(go, len(ids), f"{step} ({role.model})")
        _summary(step, ids, outcomes, final, store, requested=role.model)
        if final is None:
            sys.exit(interrupt_exit_code())
        if run_id is not None:
            store.finish_run(run_id)
        if any(o.status == "failed" for _, o in outcomes):
            sys.exit(1)


def _summary(step: str, ids: list[str], outcomes: list[tuple[str, StepOutcome]], final: JobProgress | None,
             store, requested: str | None = None) -> None:
    ok = sum(o.ok for _, o in outcomes)
    failed = [(pid, o) for pid, o in outcomes if o.status == "failed"]
    skipped = sum(o.skipped for _, o in outcomes)
    flagged = sum(o.flagged for _, o in outcomes if o.ok)
    calls = sum(o.calls for _, o in outcomes)
    cached = sum(o.cached for _, o in outcomes)
    tokens = sum(o.usage.input_tokens + o.usage.output_tokens for _, o in outcomes)
    out = Console(highlight=False, soft_wrap=True)
    if final is None:
        out.print(Text(f"{step}: cancelled; {len(outcomes)} of {len(ids)} pairs finished and saved. "
                       "Run the same command again to continue."))
    left = f", {skipped} left to another run" if skipped else ""
    cost = describe_cost(sum(o.cost_usd for _, o in outcomes), calls=calls,
                         cost_unknown=sum(o.cost_unknown for _, o in outcomes),
                         unanswered=sum(o.unanswered for _, o in outcomes),
                         usage_missing=sum(o.usage_missing for _, o in outcomes))
    out.print(Text(f"{step}: {ok} ok, {len(failed)} failed, {flagged} flagged{left}; {calls} calls made, "
                   f"{cached} cached, {tokens:,} tokens, {cost}"))
    answered = {o.model for _, o in outcomes if o.model and o.calls}
    other = sorted(m for m in answered if requested and not m.startswith(requested))
    if other:
        out.print(Text(f"  note: asked for model {requested}, the server answered as {', '.join(other)} "
                       "(recorded in the ledger as the returned model)"))
    for pid, o in failed[:20]:
        out.print(Text(f"  failed #{store.ordinal_of(pid)} {pid}: {o.reason}"))
    if len(failed) > 20:
        out.print(Text(f"  ... and {len(failed) - 20} more (see: benchwright calls --pair ID, or "
                       "benchwright review with the curation filter step-failed)"))


# ------------------------------------------------------------------------------------------------- links
@main.group()
def links() -> None:
    """The link store: saved contents of external URLs that the enrich step resolves (runs are often offline)."""


@links.command("add")
@click.argument("url")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--as", "annotator", help="Who adds it.")
@click.pass_context
@_friendly
def links_add(ctx, url, file, annotator) -> None:
    """Save FILE's text as the content of URL."""
    from benchwright.core.curation import PAGE_CHARS, is_external_url, normalize_url

    if not is_external_url(url):
        raise BenchwrightError(f"{url}: not an external http(s) URL (no spaces; localhost and private addresses "
                               "are ignored)")
    key = normalize_url(url)
    with _open(ctx) as store:
        link = store.add_link(key, file, by=resolve_annotator(annotator))
    note = f" for {key} (the #fragment is dropped)" if key != url else ""
    click.echo(f"saved {key} ({len(link.content):,} characters from {file}){note}")
    if len(link.content) > PAGE_CHARS:
        click.echo(f"  note: only the first {PAGE_CHARS:,} characters go to the model; save the relevant part "
                   "to keep the rest")


@links.command("list")
@click.pass_context
@_friendly
def links_list(ctx) -> None:
    """List saved links."""
    with _open(ctx) as store:
        rows = store.links()
    if not rows:
        click.echo("no links saved; add one with: benchwright links add URL FILE")
    for lk in rows:
        click.echo(f"{lk.url}\t{len(lk.content):,} chars\t{lk.source_file}\t{lk.added_at}")


# ------------------------------------------------------------------------------------------------ ledger
@main.command()
@click.option("--pair", "pair", metavar="REF", help="Only calls about this pair.")
@click.option("--status", type=click.Choice([str(s) for s in CallStatus]))
@click.option("--summary", is_flag=True, help="Totals per purpose, model and status.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of a table.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.pass_context
@_friendly
def calls(ctx, pair, status, summary, as_json, limit) -> None:
    """The LLM call ledger: every call with model, tokens, cost, latency and status."""
    with _open(ctx) as store:
        if summary:
            rows = store.ledger_summary()
            if as_json:
                for r in rows:
                    click.echo(json.dumps(r))
                return
            t = Table("purpose", "model", "status", "calls", "input tok", "output tok", "cost $", "mean s")
            for r in rows:
                t.add_row(*(Text(str(x)) for x in (r["purpose"], r["model"], r["status"], r["calls"],
                            r["input_tokens"], r["output_tokens"],
                            "" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}", f"{r['mean_latency_s']:.2f}")))
            Console().print(t)
            return
        pid = store.resolve_pair(pair) if pair else None
        rows = [r for r in store.llm_calls(qa_pair_id=pid) if status is None or r.status == status][-limit:]
    if as_json:
        for r in rows:
            click.echo(json.dumps({
                "id": r.id, "created_at": r.created_at, "purpose": r.purpose, "qa_pair_id": r.qa_pair_id,
                "provider": r.provider, "provider_kind": r.provider_kind, "base_url": r.base_url,
                "model": r.requested_model, "returned_model": r.returned_model, "template_id": r.template_id,
                "template_hash": r.template_hash, "request_hash": r.request_hash, "params": r.params,
                "status": str(r.status), "attempt": r.attempt, "repeat": r.repeat, "http_attempts": r.http_attempts,
                "http_status": r.http_status, "input_tokens": r.usage.input_tokens,
                "output_tokens": r.usage.output_tokens, "cache_read_tokens": r.usage.cache_read_tokens,
                "cache_write_tokens": r.usage.cache_write_tokens, "cost_usd": r.cost_usd, "latency_s": r.latency_s,
                "request_id": r.request_id, "error": r.error, "stop_reason": r.stop_reason,
                "stop_reason_raw": r.stop_reason_raw,
            }))
        return
    t = Table("id", "when", "purpose", "model", "status", "stop", "try", "tokens", "cost $", "s", "error")
    for r in rows:
        t.add_row(*(Text(str(x)) for x in (
            r.id, r.created_at[:19], r.purpose or "", r.returned_model or r.requested_model, r.status,
            r.stop_reason or "", r.attempt,
            r.usage.input_tokens + r.usage.output_tokens, "" if r.cost_usd is None else f"{r.cost_usd:.4f}",
            f"{r.latency_s:.2f}", (r.error or "")[:60])))
    Console().print(t)
