"""``benchwright curation run STEP``: the curation pipeline from the command line (RepoProbe §3.2), with a Rich
progress bar and a summary."""

from __future__ import annotations

import json
import sys

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.curation import STEPS, StepOutcome, StepSettings
from benchwright.core.llm.jobs import JobProgress, describe_cost
from benchwright.core.text import printable

from ..signals import interrupt_exit_code
from .common import (
    WHERE_KEYS,
    LiveHelpCommand,
    RegistryChoice,
    batch_options,
    batch_request,
    friendly,
    open_store,
    parse_where,
    plural,
    run_with_progress,
)


@click.group()
def curation() -> None:
    """The curation pipeline (RepoProbe §3.2): run a step over the project's pairs."""


@curation.command("run", cls=LiveHelpCommand, help_fill={"steps": lambda: ", ".join(STEPS)})
@click.argument("step", type=RegistryChoice(STEPS))
@click.option("--model", help="Model to use (MODEL or PROVIDER:MODEL); default: the role's model in benchwright.toml.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many pairs.")
@click.option("--where", "where", multiple=True, metavar="KEY=VALUE",
              help=f"Only pairs matching (repeatable; keys: {', '.join(WHERE_KEYS)}; e.g. curation=passed, "
                   "curation=dropped:classify).")
@click.option("--pair", "pairs", multiple=True, metavar="REF", help="Only this pair (id, id prefix or #N); repeatable.")
@click.option("--force", is_flag=True, help="Run again on pairs already done, and ignore cached calls.")
@click.option("--include-edited", is_flag=True,
              help="checklist --force: also generate new versions for checklists a person made or edited.")
@click.option("--all", "all_pairs", is_flag=True,
              help="Also run on pairs an earlier gating step (images, classify, verify) dropped.")
@click.option("--as", "annotator", help="Who runs it (recorded with each result).")
@batch_options
@click.pass_context
@friendly
def curation_run(ctx, step, model, limit, where, pairs, force, include_edited, all_pairs, annotator) -> None:
    """Run curation STEP ({steps}) over the project's pairs.

    Pairs already done are skipped and finished calls are reused from the ledger, so running the same command
    again makes no calls; after Ctrl+C or a crash it continues where it stopped (a forced run too: the same
    command with --force continues the unfinished forced run). A pair whose result is older than its input (an
    earlier step ran again, a link was added) runs again. Two runs at once share the work: a pair another
    running process has taken is left to it.

    The funnel: a pair an earlier gating step dropped (images: relies on an image; classify: not
    code-understanding relevant; verify: failed a check) is left out, and counted; --all runs it too. The images
    step calls no model.
    """
    from benchwright.tui.services.curation_runs import plan_pairs, run_curation

    from ..services.llm import STEP_ROLES, client_for_role, llm_role, project_dir_of

    by = resolve_annotator(annotator)
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        pair_ids = [store.resolve_pair(p) for p in pairs] or None
        config, role = llm_role(store, STEP_ROLES[step], model) if STEP_ROLES[step] else (None, None)
        run_id = since = None
        if force:
            signature = json.dumps({"step": step, "model": role and role.model, "provider": role and role.provider,
                                    "where": sorted(where), "pairs": sorted(pair_ids or []), "limit": limit,
                                    "include_edited": include_edited, **({"all": True} if all_pairs else {})},
                                   sort_keys=True)
            run_id, since, resumed = store.open_run(f"curation:{step}:force", signature, by=by)
            if not resumed:
                since = None
        plan = plan_pairs(store, step, where=flt, limit=limit, force=force, pair_ids=pair_ids, since=since,
                          include_edited=include_edited, all_pairs=all_pairs)
        ids = plan.pair_ids
        if plan.resumed_done:
            click.echo(f"{step}: continuing the forced run started {since[:19]} UTC "
                       f"({plural(plan.resumed_done, 'pair')} already done by it)")
        if plan.stale:
            click.echo(f"{step}: {plural(plan.stale, 'pair')} run again because their input changed since their result")
        if plan.dropped:
            click.echo(f"{step}: left {dropped_line(plan.dropped)} alone (--all runs them too)")
        if plan.human:
            click.echo(f"{step}: left {plural(len(plan.human), 'pair')} alone whose checklist a person made or edited "
                       "(--include-edited generates new versions for them too)")
        if not ids:
            if run_id is not None:
                store.finish_run(run_id)
            click.echo(_idle_line(step, plan))
            return
        # a step without a role (images) calls no model: no client, no API key
        batch = batch_request(ctx)
        client = (client_for_role(store, config, role, provider_factory=ctx.obj.get("provider_factory"), batch=batch)
                  if role is not None else None)
        settings = StepSettings(model=role.model if role else "", params=role.params if role else {},
                                project_dir=project_dir_of(store), force=force)
        outcomes: list[tuple[str, StepOutcome]] = []

        async def go(on_progress):
            try:
                return await run_curation(store, client, step, ids, settings, by=by, on_progress=on_progress,
                                          on_outcome=lambda pid, o: outcomes.append((pid, o)))
            finally:
                if client is not None:
                    await client.provider.aclose()

        final = run_with_progress(go, len(ids), f"{step} ({role.model})" if role else f"{step} (no model)")
        _summary(step, ids, outcomes, final, store, requested=role.model if role else None)
        if final is None:
            sys.exit(interrupt_exit_code())
        if run_id is not None:
            store.finish_run(run_id)
        if any(o.status == "failed" for _, o in outcomes):
            sys.exit(1)


def _idle_line(step: str, plan) -> str:
    """Why a run has nothing to do, naming this command's options (``Selection.idle_reason``)."""
    from ..services.curation_runs import IdleReason

    reason = plan.idle_reason
    if reason is IdleReason.NO_MATCH:
        return f"{step}: no pair matches the filter"
    if reason is IdleReason.ALL_DROPPED:
        return f"{step}: nothing to do; every matching pair was dropped by an earlier gating step (--all runs them)"
    if reason is IdleReason.ONLY_HUMAN_CHECKLISTS:
        return (f"{step}: nothing to do; {plural(len(plan.human), 'pair')} {'has' if len(plan.human) == 1 else 'have'} a checklist a person made or edited "
                "(--include-edited generates new versions for them too)")
    return f"{step}: nothing to do (every matching pair is done; --force runs them again)"


def dropped_line(dropped: dict[str, int]) -> str:
    """``7 pairs dropped by classify, 2 by images`` (``Selection.dropped``, largest first)."""
    parts = sorted(dropped.items(), key=lambda kv: (-kv[1], kv[0]))
    first = f"{plural(parts[0][1], 'pair')} dropped by {parts[0][0]}"
    return ", ".join([first, *(f"{n} by {s}" for s, n in parts[1:])])


def _summary(step: str, ids: list[str], outcomes: list[tuple[str, StepOutcome]], final: JobProgress | None,
             store, requested: str | None = None) -> None:
    from rich.console import Console
    from rich.text import Text

    ok = sum(o.ok for _, o in outcomes)
    failed = [(pid, o) for pid, o in outcomes if o.status == "failed"]
    skipped = sum(o.skipped for _, o in outcomes)
    flagged = sum(o.flagged for _, o in outcomes if o.ok)
    calls = sum(o.calls for _, o in outcomes)
    cached = sum(o.cached for _, o in outcomes)
    tokens = sum(o.usage.input_tokens + o.usage.output_tokens for _, o in outcomes)
    out = Console(highlight=False, soft_wrap=True)
    if final is None:
        out.print(Text(f"{step}: cancelled; {len(outcomes)} of {plural(len(ids), 'pair')} finished and saved. "
                       "Run the same command again to continue."))
    left = f", {skipped} left to another run" if skipped else ""
    cost = describe_cost(sum(o.cost_usd for _, o in outcomes), calls=calls,
                         cost_unknown=sum(o.cost_unknown for _, o in outcomes),
                         unanswered=sum(o.unanswered for _, o in outcomes),
                         usage_missing=sum(o.usage_missing for _, o in outcomes))
    out.print(Text(f"{step}: {ok} ok, {len(failed)} failed, {flagged} flagged{left}; {plural(calls, 'call')} made, "
                   f"{cached} cached, {tokens:,} tokens, {cost}"))
    answered = {o.model for _, o in outcomes if o.model and o.calls}
    other = sorted(m for m in answered if requested and not m.startswith(requested))
    if other:
        out.print(Text(f"  note: asked for model {requested}, the server answered as {', '.join(other)} "
                       "(recorded in the ledger as the returned model)"))
    for pid, o in failed[:20]:
        # the first 300 characters, as the judge's summary: a server's error can be a whole traceback
        out.print(Text(f"  failed #{store.ordinal_of(pid)} {pid}: {printable(o.reason or '')[:300]}"))
    if len(failed) > 20:
        out.print(Text(f"  ... and {len(failed) - 20} more (see: benchwright calls --pair ID, or "
                       "benchwright review with the curation filter step-failed)"))

