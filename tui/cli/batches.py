"""``benchwright batches``: the project's provider batch jobs (issue 19; docs/batches.md): list them with status
and counts, show one, resume (collect) them, cancel one, import the results of a ``--batch-file``."""

from __future__ import annotations

import json
import shlex
import sys

import click

from .common import friendly, open_store, out_console, plural, shown_name


def _to_collect(row: dict) -> bool:
    """A batch still to come back, or with results not yet used (imported, or fetched by a process that died)."""
    return row["status"] in ("pending", "submitted", "ended", "exported") or row["unused"] > 0


def _when(stamp: str | None) -> str:
    return stamp[:19].replace("T", " ") if stamp else "-"


@click.group("batches", invoke_without_command=True)
@click.option("--open", "open_only", is_flag=True, help="Only batches still to come back.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
@friendly
def batches(ctx, open_only, as_json) -> None:
    """Provider batch jobs (Anthropic Message Batches, the OpenAI Batch API): list, resume, collect, cancel, import.

    Without a subcommand: every batch of the project, newest first: its status (the provider's own in brackets),
    requests, results back, of those not ok (errored, expired, cancelled, missing: retried, never scored),
    requests still waiting, results used, and when it was created (UTC). batches show N has the rest.
    """
    if ctx.invoked_subcommand is not None:
        return
    from rich.table import Table
    from rich.text import Text

    from ..services.batches import batch_rows

    with open_store(ctx) as store:
        rows = batch_rows(store, open_only=open_only)
    if as_json:
        click.echo(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    if not rows:
        click.echo("no batches" + (" still open" if open_only else "") + " (run an LLM command with --batch)")
        return
    table = Table(box=None, pad_edge=False)
    widest = len(str(max(r["id"] for r in rows)))
    for col in ("#", "provider", "status", "requests", "back", "not ok", "waiting", "used", "created"):
        table.add_column(col, no_wrap=True, overflow="ellipsis", min_width=widest if col == "#" else None,
                         max_width=24 if col == "status" else None,
                         justify="right" if col in ("#", "requests", "back", "not ok", "waiting", "used") else "left")
    for r in rows:
        bad = r["errored"] + r["expired"] + r["cancelled"] + r["missing"]
        status = r["status"] + (f" ({r['provider_status']})" if r["provider_status"] and r["status"] != "collected"
                                else "")
        table.add_row(str(r["id"]), Text(shown_name(r["provider"], 20)), Text(shown_name(status, 30)),
                      str(r["requests"]), str(r["succeeded"] + bad), str(bad), str(r["waiting"]), str(r["used"]),
                      _when(r["created_at"])[5:16])
    out_console().print(table)
    waiting = [r for r in rows if _to_collect(r)]
    if waiting:
        click.echo(f"{len(waiting)} batch{'' if len(waiting) == 1 else 'es'} still to collect: benchwright batches "
                   "resume")


@batches.command("show")
@click.argument("batch_id", type=click.IntRange(min=1, max=2**63 - 1))
@click.pass_context
@friendly
def batches_show(ctx, batch_id) -> None:
    """One batch: provider, ids, status, counts, the command that made it, and how to go on."""
    from rich.text import Text

    from ..services.batches import batch_rows

    with open_store(ctx) as store:
        rows = [r for r in batch_rows(store) if r["id"] == batch_id]
    if not rows:
        raise click.ClickException(f"no batch #{batch_id} in this project (benchwright batches lists them)")
    r = rows[0]
    con = out_console()
    for key in ("provider", "kind", "endpoint", "status", "provider_status", "provider_batch_id", "requests", "bytes",
                "succeeded", "errored", "expired", "cancelled", "missing", "waiting", "used", "created_at",
                "submitted_at", "ended_at", "collected_at", "file", "error"):
        if r.get(key) not in (None, ""):
            con.print(Text(f"{key}: {shown_name(str(r[key]), 2000)}"))
    if r["provider_counts"]:
        con.print(Text("provider counts: " + ", ".join(f"{k} {v}" for k, v in sorted(r["provider_counts"].items()))))
    con.print(Text("command: benchwright " + shown_name(shlex.join(r["command"]), 2000)))


@batches.command("resume")
@click.argument("batch_ids", nargs=-1, type=click.IntRange(min=1, max=2**63 - 1))
@click.pass_context
@friendly
def batches_resume(ctx, batch_ids) -> None:
    """Collect open batches (all, or BATCH_IDS): run again the command that made each one (once per distinct
    command), which polls the provider, stores the results and uses them instead of submitting the requests again.
    It waits (a recorded --no-wait is ignored) and sends nothing new: an item whose request is in none of the
    project's batches is left alone, so a --limit command never picks new items here."""
    from ..services.batches import batch_rows

    root = ctx.find_root().command  # the benchwright group (this module may not import the root)
    with open_store(ctx) as store:
        rows = batch_rows(store)
        db = str(store.path)
    known = {r["id"] for r in rows}
    missing = [b for b in batch_ids if b not in known]
    if missing:
        raise click.ClickException(f"no batch {', '.join(f'#{b}' for b in missing)} in this project")
    chosen = [r for r in rows if (r["id"] in batch_ids if batch_ids else _to_collect(r))]
    if not chosen:
        click.echo("no batch to resume: every batch is collected and used (benchwright batches lists them)")
        return
    commands: list[list[str]] = []
    for r in sorted(chosen, key=lambda r: r["id"]):
        if not r["command"]:
            raise click.ClickException(f"batch #{r['id']} has no recorded command; run the command that made it again")
        if r["command"] not in commands:
            commands.append(r["command"])
    rc = 0
    for command in commands:
        click.echo("resuming: benchwright " + shown_name(shlex.join(command), 500)
                   + " (waits for its batches and uses their results; nothing new is sent)", err=True)
        try:
            root.main(args=["--db", db, *command], standalone_mode=False,
                      obj={**(ctx.obj or {}), "batch_resume_only": True})
        except SystemExit as e:
            rc = rc or (e.code if isinstance(e.code, int) else 1)
        except click.ClickException as e:
            e.show()
            rc = rc or e.exit_code
    if rc:
        sys.exit(rc)


@batches.command("collect")
@click.argument("batch_ids", nargs=-1, type=click.IntRange(min=1, max=2**63 - 1))
@click.pass_context
@friendly
def batches_collect(ctx, batch_ids) -> None:
    """Ask the provider once about each batch (BATCH_IDS, default every one at a provider still to collect) and
    store the results of those that ended, without running the commands that made them (the results were paid for;
    the commands, run again, or batches resume, use them)."""
    import asyncio

    from ..services.batches import collect_batch

    factory = (ctx.obj or {}).get("provider_factory")
    with open_store(ctx) as store:
        ids = list(batch_ids) or [b.id for b in store.batches(open_only=True)
                                  if str(b.status) in ("submitted", "ended")]
        if not ids:
            click.echo("no batch at a provider to collect")
            return
        for bid in ids:
            status = asyncio.run(collect_batch(store, bid, provider_factory=factory))
            click.echo(f"batch #{bid}: {shown_name(status)}")


@batches.command("cancel")
@click.argument("batch_id", type=click.IntRange(min=1, max=2**63 - 1))
@click.option("--drop", is_flag=True,
              help="A --batch-file batch: give it up (its waiting requests count as cancelled; a rerun sends them anew).")
@click.pass_context
@friendly
def batches_cancel(ctx, batch_id, drop) -> None:
    """Ask the provider to cancel batch BATCH_ID. Requests it has not run come back cancelled; the command that made
    the batch, run again, collects what finished and retries the rest (online, or --retry batch). With --drop, a
    --batch-file batch whose results will never come is given up instead."""
    import asyncio

    from ..services.batches import cancel_batch, drop_exported

    if drop:
        with open_store(ctx) as store:
            b = store.batch(batch_id)
            if b is None or str(b.status) != "exported":
                raise click.ClickException(f"batch #{batch_id} is not a --batch-file batch waiting for its results")
            n = drop_exported(store, batch_id)
        click.echo(f"batch #{batch_id}: given up ({plural(n, 'request')} that were waiting)")
        return
    with open_store(ctx) as store:
        remote = asyncio.run(cancel_batch(store, batch_id, provider_factory=(ctx.obj or {}).get("provider_factory")))
    click.echo(f"batch #{batch_id}: cancellation asked; the provider says {shown_name(remote.status)}")


@batches.command("import")
@click.argument("results", type=click.Path(dir_okay=False))
@click.pass_context
@friendly
def batches_import(ctx, results) -> None:
    """Store RESULTS (OpenAI batch output lines, as vllm run-batch writes them) against the requests a --batch-file
    command wrote; all or nothing. Then run that command again (or benchwright batches resume) to use them."""
    from ..services.batches import import_results
    from ..signals import declare_all_or_nothing

    declare_all_or_nothing("imported")
    with open_store(ctx) as store:
        out = import_results(store, results)
    if out.stored == 0 and out.already == 0:
        raise click.ClickException(
            f"{results}: " + ("no result lines" if not out.lines else
                              f"none of its {plural(out.lines, 'line')} answers a request of this project's batches "
                              "(the custom_ids are not ours: a file of another project?)"))
    click.echo(f"{plural(out.lines, 'line')} read: {plural(out.stored, 'result')} stored, {out.already} already stored, "
               f"{out.unknown} not from this project"
               + (f"; {'batch' if len(out.batches) == 1 else 'batches'} {', '.join(f'#{b}' for b in out.batches)}"
                  if out.batches else ""))
    if out.conflicting:
        click.echo(f"warning: {plural(out.conflicting, 'line')} gave a request a different result than the one already "
                   "stored; the first is kept")
    if out.stored:
        click.echo("next: benchwright batches resume (or the command that wrote the file) uses them")
