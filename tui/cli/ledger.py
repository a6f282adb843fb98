"""``benchwright calls``: the LLM call ledger."""

from __future__ import annotations

import json

import click

from benchwright.core.llm.base import CallStatus

from .common import friendly, open_store


# ------------------------------------------------------------------------------------------------ ledger
@click.command()
@click.option("--pair", "pair", metavar="REF", help="Only calls about this pair.")
@click.option("--status", type=click.Choice([str(s) for s in CallStatus]))
@click.option("--summary", is_flag=True, help="Totals per purpose, model and status.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of a table.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.pass_context
@friendly
def calls(ctx, pair, status, summary, as_json, limit) -> None:
    """The LLM call ledger: every call with model, tokens, cost, latency and status."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    with open_store(ctx) as store:
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
