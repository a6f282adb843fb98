"""``benchwright generate``: answer-first task generation (Code-QA-Bench "Methodology" 3 and 4) from the command
line: ``doc-chunks`` (cut and score the documentation), ``chunks`` (list them), ``gold``, ``audit`` and
``question`` (the LLM steps, with a progress bar and a summary).

The old ``generate STEP`` spelling of ``curation run STEP`` (a curation step's name in place of a subcommand)
still works for one release: :attr:`GenerateGroup.fallback` is set by :mod:`.aliases`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.doc_chunks import FEATURES
from benchwright.core.generation import CODE_DERIVABLE, DOC_DEPENDENT, GENERATION_ROLES
from benchwright.core.llm.jobs import describe_cost
from benchwright.core.text import printable

from ..signals import interrupt_exit_code
from .common import batch_options, batch_request, friendly, open_store, plural, run_with_progress, shown_name

if TYPE_CHECKING:
    from rich.console import Console


class GenerateGroup(click.Group):
    """The ``generate`` group; a first argument that names no subcommand but a curation step goes to
    :attr:`fallback` (the hidden old spelling of ``curation run STEP``), with every argument."""

    fallback: click.Command | None = None
    fallback_names: tuple[str, ...] = ()
    load_fallback: Callable[[], object] | None = None
    """Called for a first argument that names no subcommand while :attr:`fallback` is unset: the root sets it to
    import :mod:`.aliases` (loaded only then; this module may not import it)."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and args[0] not in self.commands and self.fallback is None and self.load_fallback is not None:
            self.load_fallback()
        if args and args[0] not in self.commands and args[0] in self.fallback_names and self.fallback is not None:
            return self.fallback.name, self.fallback, args
        return super().resolve_command(ctx, args)


@click.group(cls=GenerateGroup)
def generate() -> None:
    """Answer-first generation (Code-QA-Bench): documentation chunks, gold answers, their code-only audit, and
    the questions derived from them, which become Q&A pairs.

    In order: generate doc-chunks --repo R; generate gold --repo R; generate audit --repo R; generate question
    --repo R (task set code-derivable). The doc-dependent path: generate gold --repo R --doc-dependent, then
    generate question --repo R --doc-dependent (no agent, no audit). See docs/generation.md.
    """


def _weights(values: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for v in values:
        name, sep, number = v.partition("=")
        if not sep:
            raise click.BadParameter(f"{v!r}: give NAME=VALUE (features: {', '.join(FEATURES)})",
                                     param_hint="--weight")
        try:
            out[name.strip()] = float(number)
        except ValueError:
            raise click.BadParameter(f"{v!r}: {number!r} is not a number", param_hint="--weight") from None
    return out


def _chunk_line(rank: int, chunk) -> str:
    return (f"{rank:>4}  {chunk.id}  {chunk.score:.3f}  {chunk.kind:<9}  "
            f"{shown_name(chunk.path)}:{chunk.start_line}-{chunk.end_line}  {shown_name(chunk.title)}")


@generate.command("doc-chunks")
@click.option("--repo", "repository", required=True, help="The registered repository whose documentation is cut.")
@click.option("--top", type=click.IntRange(min=1), help="Keep the best N chunks (default: [generation] top, else all).")
@click.option("--weight", "weights", multiple=True, metavar="NAME=VALUE",
              help=f"A feature's weight (repeatable; features: {', '.join(FEATURES)}; over [generation.weights]).")
@click.option("--as", "annotator", help="Who runs it (recorded with the run).")
@click.pass_context
@friendly
def generate_doc_chunks(ctx, repository, top, weights, annotator) -> None:
    """Split the documentation of a registered repository into chunks and score them (deterministic, no model).

    Markdown and reStructuredText sections (by heading) and the docstrings of Python modules, classes and
    functions, each scored on content quality (length, prose against code), code references that resolve in
    the repository, and structure (headings, lists, code blocks). The chunks kept are the repository's current
    chunks, which gold, audit and question work on. Running it again makes a new run; a chunk whose text is
    unchanged keeps its id, so its gold answers and audits stay.
    """
    from rich.console import Console
    from rich.text import Text

    from benchwright.tui.services.generation import cut_doc_chunks

    by = resolve_annotator(annotator)
    with open_store(ctx) as store:
        run = cut_doc_chunks(store, repository, weights=_weights(weights), top=top, by=by)
    out = Console(highlight=False, soft_wrap=True)
    kept = len(run.chunks)
    pin = f"@{run.pin[:12]}" if run.pin else ""
    out.print(Text(f"doc-chunks {shown_name(repository)}{pin}: {plural(run.found, 'chunk')} found, {kept} kept "
                   f"(run {run.run_id}); weights "
                   + ", ".join(f"{k} {run.settings.weights[k]:g}" for k in FEATURES)))
    for rank, chunk in enumerate(run.chunks[:30], 1):
        out.print(Text(_chunk_line(rank, chunk)))
    if kept > 30:
        out.print(Text(f"  ... and {kept - 30} more (benchwright generate chunks --repo {repository})"))


@generate.command("chunks")
@click.option("--repo", "repository", help="Only this repository's chunks.")
@click.option("--show", "show", metavar="CHUNK", help="Print one chunk whole: text, features, references, results.")
@click.pass_context
@friendly
def generate_chunks(ctx, repository, show) -> None:
    """List the current documentation chunks (each repository's latest doc-chunks run), best first, with what
    the generation steps made of each: g gold, a audit, q question (the pair it made), per task set."""
    from rich.console import Console
    from rich.text import Text

    out = Console(highlight=False, soft_wrap=True)
    with open_store(ctx) as store:
        if show:
            _show_chunk(out, store, show)
            return
        chunks = store.current_doc_chunks(repository)
        if not chunks:
            where = f" of {repository}" if repository else ""
            out.print(Text(f"no documentation chunks{where} (benchwright generate doc-chunks --repo NAME)"))
            return
        for stored in chunks:
            marks = []
            for task_set in (CODE_DERIVABLE, DOC_DEPENDENT):
                parts = []
                for step in ("gold", "audit", "question"):
                    r = store.generation_current(stored.chunk.id, step, task_set)
                    if r is None:
                        continue
                    mark = step[0] + ("✓" if r.ok and not r.flagged else "✗")
                    if r.qa_pair_id:
                        mark += f"→#{store.ordinal_of(r.qa_pair_id)}"
                    parts.append(mark)
                if parts:
                    marks.append(f"{task_set}: {' '.join(parts)}")
            line = _chunk_line(stored.rank, stored.chunk)
            out.print(Text(f"{shown_name(stored.chunk.repository)}  {line}" + (f"  [{'; '.join(marks)}]" if marks
                                                                             else "")))


def _show_chunk(out: Console, store, ref: str) -> None:
    from rich.text import Text

    stored = store.doc_chunk(ref)
    c = stored.chunk
    out.print(Text(f"{c.id} · {shown_name(c.repository)} · {shown_name(c.path)}:{c.start_line}-{c.end_line} · "
                   f"{c.kind} · {shown_name(c.title)} · score {c.score:.3f} (rank {stored.rank}, run {stored.run_id})"))
    out.print(Text("features: " + ", ".join(f"{k} {c.features.get(k, 0):.3f}" for k in FEATURES)))
    refs = ", ".join(f"{printable(r)} {'✓' if ok else '✗'}" for r, ok in c.references[:50])
    out.print(Text(f"references: {refs or 'none'}"))
    out.print(Text("--- text"))
    out.print(Text(printable(c.text)))
    for r in store.generation_results(chunk_id=c.id):
        pair = f" → pair #{store.ordinal_of(r.qa_pair_id)} {r.qa_pair_id}" if r.qa_pair_id else ""
        why = f": {printable(r.reason or '')[:300]}" if not r.ok else ""
        out.print(Text(f"--- {r.step} ({r.task_set}) {r.status}{why} · {r.model or '-'} · {r.created_at[:19]} UTC"
                       f"{pair}"))
        if r.ok and r.step == "audit":
            for claim in r.output.get("claims", []):
                out.print(Text(f"  [{claim.get('verdict')}] {printable(str(claim.get('claim', '')))}"))
                if claim.get("verdict") == "documentation-only":
                    rewrite = str(claim.get("rewrite") or "")
                    out.print(Text(f"    → {'rewritten: ' + printable(rewrite) if rewrite.strip() else 'removed'}"))
        if r.ok and r.output.get("answer") and r.step != "audit":
            out.print(Text(printable(str(r.output.get("question") or r.output["answer"]))))


_STEP_OPTIONS = [
    click.option("--repo", "repository", help="Only this repository's chunks (default: every repository's)."),
    click.option("--model", help="Model to use (MODEL or PROVIDER:MODEL); default: the role's model."),
    click.option("--limit", type=click.IntRange(min=1), help="At most this many chunks."),
    click.option("--chunk", "chunks", multiple=True, metavar="ID", help="Only this chunk (id or prefix); repeatable."),
    click.option("--force", is_flag=True, help="Run again on chunks already done, and ignore cached calls."),
    click.option("--as", "annotator", help="Who runs it (recorded with each result)."),
]


def _step_options(fn):
    for option in reversed(_STEP_OPTIONS):
        fn = option(fn)
    return batch_options(fn)


def _run(ctx, step: str, task_set: str, repository, model, limit, chunks, force, annotator,
         max_turns: int | None = None) -> None:
    from benchwright.core.curation import StepSettings
    from benchwright.tui.services.agent_runs import agent_settings
    from benchwright.tui.services.generation import plan_generation, run_generation

    from ..services.llm import client_for_role, llm_role, project_dir_of

    by = resolve_annotator(annotator)
    if step == "gold" and task_set == CODE_DERIVABLE and batch_request(ctx) is not None:
        raise click.UsageError("--batch is not for the agent's gold answers (its turns depend on each other); "
                               "generate gold --doc-dependent, audit and question take it")
    with open_store(ctx) as store:
        if repository is not None:
            store.get_repository(repository)
        plan = plan_generation(store, step, task_set, repository=repository, chunk_refs=list(chunks) or None,
                               limit=limit, force=force)
        label = f"{step} ({task_set})"
        if plan.stale:
            click.echo(f"{label}: {plural(plan.stale, 'chunk')} run again because their input changed")
        if plan.waiting:
            before = {"audit": "gold", "question": "audit" if task_set == CODE_DERIVABLE else "gold"}.get(step)
            flag = " --doc-dependent" if task_set == DOC_DEPENDENT else ""
            click.echo(f"{label}: {plural(plan.waiting, 'chunk')} wait for {before} "
                       f"(benchwright generate {before}{flag} first)")
        if plan.emptied:
            click.echo(f"{label}: {plural(plan.emptied, 'chunk')} left out: the audit found nothing "
                       "code-recoverable in the gold answer")
        if not plan.chunk_ids:
            if not plan.matching:
                click.echo(f"{label}: no documentation chunks (benchwright generate doc-chunks --repo NAME)")
            elif plan.done:
                click.echo(f"{label}: nothing to do ({plural(plan.done, 'chunk')} done; --force runs them again)")
            else:
                click.echo(f"{label}: nothing to do")
            return
        config, role = llm_role(store, GENERATION_ROLES[step], model)
        client = client_for_role(store, config, role, provider_factory=ctx.obj.get("provider_factory"),
                                 batch=batch_request(ctx))
        if step == "gold" and task_set == CODE_DERIVABLE:
            settings = agent_settings(config, role, project_dir=project_dir_of(store), max_turns=max_turns)
        else:
            settings = StepSettings(model=role.model, params=role.params, project_dir=project_dir_of(store),
                                    force=force)
        outcomes: list = []

        async def go(on_progress):
            try:
                return await run_generation(store, client, step, task_set, plan.chunk_ids, settings, by=by,
                                            on_progress=on_progress, on_outcome=lambda c, o: outcomes.append((c, o)))
            finally:
                await client.provider.aclose()

        final = run_with_progress(go, len(plan.chunk_ids), f"{label} ({role.model})")
        _summary(store, step, task_set, plan.chunk_ids, outcomes, final)
        if final is None:
            sys.exit(interrupt_exit_code())
        if any(o.status == "failed" for _, o in outcomes):
            sys.exit(1)


def _summary(store, step: str, task_set: str, ids: list[str], outcomes: list, final) -> None:
    from rich.console import Console
    from rich.text import Text

    label = f"{step} ({task_set})"
    out = Console(highlight=False, soft_wrap=True)
    ok = [(c, o) for c, o in outcomes if o.ok]
    failed = [(c, o) for c, o in outcomes if o.status == "failed"]
    skipped = sum(o.skipped for _, o in outcomes)
    flagged = sum(o.flagged for _, o in ok)
    calls = sum(o.calls for _, o in outcomes)
    cached = sum(o.cached for _, o in outcomes)
    if final is None:
        out.print(Text(f"{label}: cancelled; {len(outcomes)} of {len(ids)} chunks finished and saved. "
                       "Run the same command again to continue."))
    cost = describe_cost(sum(o.cost_usd for _, o in outcomes), calls=calls,
                         cost_unknown=sum(o.cost_unknown for _, o in outcomes),
                         unanswered=sum(o.unanswered for _, o in outcomes),
                         usage_missing=sum(o.usage_missing for _, o in outcomes))
    left = f", {skipped} left to another run" if skipped else ""
    out.print(Text(f"{label}: {len(ok)} ok, {len(failed)} failed, {flagged} flagged{left}; {plural(calls, 'call')} made, "
                   f"{cached} cached, {cost}"))
    audits = [o.output for _, o in ok if "claims" in o.output]
    if audits:
        claims = sum(len(a["claims"]) for a in audits)
        out.print(Text(f"  audit: {claims} claims, {sum(a['removed'] for a in audits)} documentation-only removed, "
                       f"{sum(a['rewritten'] for a in audits)} rewritten"))
    made = [r.qa_pair_id for c, _ in ok if (r := store.generation_current(c, step, task_set)) is not None
            and r.qa_pair_id]
    if made:
        out.print(Text(f"  pairs: {', '.join(f'#{store.ordinal_of(p)} {p}' for p in made[:20])}"
                       + (f" and {len(made) - 20} more" if len(made) > 20 else "")))
    for cid, o in failed[:20]:
        out.print(Text(f"  failed {cid}: {printable(o.reason or '')[:300]}"))


@generate.command("gold")
@_step_options
@click.option("--doc-dependent", is_flag=True,
              help="The doc-dependent path (Methodology 4): the gold answer from the chunk alone, no agent.")
@click.option("--max-turns", type=click.IntRange(min=1), help="The agent's turn limit (default: [agent] max_turns, 25).")
@click.pass_context
@friendly
def generate_gold(ctx, repository, model, limit, chunks, force, annotator, doc_dependent, max_turns) -> None:
    """Write the gold answer of each current chunk.

    Code-derivable (the default): the agent explores the documented repository (its checkout at the pinned
    commit) from the chunk and writes a gold answer that goes at least one level deeper than the chunk, with
    facts not in it; the trajectory is kept. --doc-dependent: one call writes it from the chunk alone. Chunks
    done are skipped and finished calls (every agent turn) are reused, so the same command again makes no calls
    and after Ctrl+C continues where it stopped. Role: generator.
    """
    _run(ctx, "gold", DOC_DEPENDENT if doc_dependent else CODE_DERIVABLE, repository, model, limit, chunks, force,
         annotator, max_turns)


@generate.command("audit")
@_step_options
@click.pass_context
@friendly
def generate_audit(ctx, repository, model, limit, chunks, force, annotator) -> None:
    """Audit each code-derivable gold answer against the code-only copy (benchwright repos strip NAME).

    Each claim is code-recoverable or documentation-only, with evidence; documentation-only claims are removed or
    rewritten, and the rest is the verified answer the question is derived from. Role: verifier.
    """
    _run(ctx, "audit", CODE_DERIVABLE, repository, model, limit, chunks, force, annotator)


@generate.command("question")
@_step_options
@click.option("--doc-dependent", is_flag=True, help="Derive from the doc-dependent gold answers (no audit).")
@click.pass_context
@friendly
def generate_question(ctx, repository, model, limit, chunks, force, annotator, doc_dependent) -> None:
    """Derive the question from each verified gold answer, with its key points, and add the Q&A pair.

    The pair is imported like any other (ids, text versions, provenance), with task_set code-derivable (or
    doc-dependent), the chunk, the results and the audit in extra["answer_first"] and the key points in
    extra["gold_key_points"]. Role: generator.
    """
    _run(ctx, "question", DOC_DEPENDENT if doc_dependent else CODE_DERIVABLE, repository, model, limit, chunks,
         force, annotator)
