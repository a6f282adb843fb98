"""Model answers: ``benchwright answers import FILE --model NAME --condition C``, ``benchwright answers generate``
(direct answers, SWE-QA-Pro §2.3) and ``benchwright answers list|show``.

Text from data (questions, answers, critiques, trajectories) goes through :func:`printable` and plain
``click.echo``: nothing is read as markup or terminal control.
"""

from __future__ import annotations

import functools
import json

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError
from benchwright.core.importers.answers import ANSWER_FORMATS, parse_answers
from benchwright.core.judging import MAX_SAMPLES, AnswerSettings
from benchwright.core.judgment import CONDITIONS, effective_entries, score_rate_of
from benchwright.core.text import printable
from benchwright.core.vocabulary import (
    AGENT_CONDITIONS,
    CONDITION_REGISTRY,
    DEFAULT_AGENT_CONDITION,
    DIRECT_CONDITIONS,
)

from .common import (
    annotator_option,
    batch_options,
    batch_request,
    close_unused,
    exit_unfinished,
    friendly,
    money,
    open_store,
    out_console,
    parse_where,
    plural,
    run_closing,
    where_option,
)

LIST_LIMIT = 50
"""Problems of each kind (unmatched, ambiguous, conflicting, skipped, warnings) listed without --verbose."""


@click.group()
def answers() -> None:
    """Model answers to Q&A pairs: generate, import, list, runs, show (with trajectory and judgments)."""


@answers.command("import")
@click.argument("file", type=click.Path())
@click.option("--model", help="The model that wrote the answers (required).")
@click.option("--condition", type=click.Choice(CONDITIONS), help="The condition they were written under (required).")
@click.option("--scale", type=click.IntRange(min=1), help="Maximum score per dimension of imported scores.")
@click.option("--judge-model", "judge_model", help="Who gave the imported scores (default: unknown).")
@click.option("--answer-format", "answer_format", type=click.Choice(ANSWER_FORMATS), default="auto",
              show_default=True, help="The file's shape.")
@click.option("--skip-invalid", is_flag=True, help="Import the valid records and list every skipped one.")
@click.option("--verbose", is_flag=True, help="List every problem (default: the first 50 of each kind).")
@annotator_option("Who imports (default: configuration, then the OS user).")
@click.pass_context
@friendly
def answers_import(ctx, file, model, condition, scale, judge_model, answer_format, skip_invalid, verbose,
                   annotator) -> None:
    """Import model answers to the project's pairs from FILE (matched by qa_pair_id, else by question), with
    --model and --condition; scores in the file become judgments of the judge 'imported'."""
    import_answers_file(ctx, file, model=model, condition=condition, scale=scale, judge_model=judge_model,
                        answer_format=answer_format, skip_invalid=skip_invalid, annotator=annotator,
                        verbose=verbose)


def import_answers_file(ctx: click.Context, file: str, *, model: str | None, condition: str | None,
                        scale: int | None, judge_model: str | None, answer_format: str, skip_invalid: bool,
                        annotator: str | None, verbose: bool = False) -> None:
    """``benchwright answers import FILE``: parse, match to pairs, store in one transaction, print the report.

    Each kind of problem (unmatched, ambiguous, conflicting, skipped, warnings) is listed up to
    :data:`LIST_LIMIT` lines, then ``... and N more``; ``verbose`` lists them all.

    Raises:
        click.UsageError: --model or --condition missing.
        BenchwrightError: bad input (file, line and field named), conflicts, or no answer matched any pair.
    """
    if not model:
        raise click.UsageError("answers import needs --model NAME (the model that wrote the answers)")
    if not condition:
        raise click.UsageError(f"answers import needs --condition, one of {', '.join(CONDITIONS)}")
    result = parse_answers(file, fmt=answer_format, scale=scale)
    with open_store(ctx) as store:
        report = store.import_answers(
            result, model=model, condition=condition, created_by=resolve_annotator(annotator),
            judge_model=judge_model or "unknown", skip_invalid=skip_invalid,
        )
    has_origin = any(how == "origin_question" for r in result.records for how, _ in r.questions)
    _print_answer_report(report, result.scale, judge_model or "unknown", warnings=result.warnings,
                         has_origin=has_origin, verbose=verbose)
    records = report.read - len(report.skipped)
    if records and not report.matched:
        if report.ambiguous and not report.unmatched:
            raise BenchwrightError(
                f"{file}: no answer was imported: "
                + (f"all {len(report.ambiguous)} answers are" if len(report.ambiguous) > 1 else "the answer is")
                + " ambiguous (several Q&A pairs have the same question); give qa_pair_id in the file to say "
                "which pair each one answers"
            )
        ambiguous = f" ({len(report.ambiguous)} ambiguous: give qa_pair_id)" if report.ambiguous else ""
        raise BenchwrightError(
            f"{file}: none of the {plural(records, 'answer')} matched a Q&A pair{ambiguous}; import the pairs first "
            "(e.g. benchwright pairs import swe-qa Benchmark__flask.jsonl) or give qa_pair_id in the file"
        )


def _print_rows(title: str, rows: list, verbose: bool) -> None:
    if not rows:
        return
    noun, _, note = title.partition(" (")
    if noun in ("warnings", "invalid records"):  # nouns; the other titles are adjectives ("2 unmatched")
        noun = plural(len(rows), noun.removesuffix("s")).partition(" ")[2]
    counted = f"{len(rows)} {noun}" + (f" ({note}" if note else "")
    click.echo(f"  skipped {counted}:" if title == "invalid records" else f"  {counted}:")
    shown = rows if verbose else rows[:LIST_LIMIT]
    for row in shown:
        click.echo(f"    {printable(str(row))}")
    if len(shown) < len(rows):
        click.echo(f"    ... and {len(rows) - len(shown)} more (all of them with --verbose)")


def _print_answer_report(r, scale: int | None, judge_model: str, *, warnings: list[str] = (),
                         has_origin: bool = True, verbose: bool = False) -> None:
    how = ", ".join(f"{n} by {field}" for field, n in sorted(r.matched_by.items()))
    click.echo(f"{printable(r.file)} ({r.format}): read {plural(r.read, 'record')}, matched {r.matched}"
               f"{f' ({how})' if how else ''}; added {plural(r.added, 'answer')} by {printable(r.model)} "
               f"under {r.condition}")
    for w in warnings:
        click.echo(f"  warning: {printable(w)}")
    if (r.format == "swe-qa-agent" and has_origin and r.matched_by.get("question")
            and not r.matched_by.get("origin_question")):
        click.echo("  (matched by the rewritten 'question', not 'origin_question': the project's pairs hold the "
                   "rewritten questions, as SWE-QA's Benchmark file does)")
    if r.already_present:
        click.echo(f"  {r.already_present} already in the project (not added again)")
    if r.duplicates_in_file:
        click.echo(f"  {r.duplicates_in_file} repeated earlier records of the same file (added once)")
    _print_rows("warnings (imported)", r.warnings, verbose)
    for title, rows in (("unmatched (not imported)", r.unmatched), ("ambiguous (not imported)", r.ambiguous),
                        ("conflicting (skipped)", r.conflicts)):
        _print_rows(title, rows, verbose)
    _print_rows("invalid records", r.skipped, verbose)
    if r.judgments_added or r.judgments_present:
        click.echo(f"  imported scores: {plural(r.judgments_added, 'judgment')} added"
                   f"{f', {r.judgments_present} already present' if r.judgments_present else ''} "
                   f"(judge 'imported', judge model {printable(judge_model)}, scale 0-{scale} per dimension)")


def _stored_model(store, model: str | None) -> str | None:
    """The model name answers are stored under for ``--model`` (``MODEL`` or ``PROVIDER:MODEL``), read as
    ``answers generate --model`` reads it (a configured provider's prefix is dropped; an Ollama name such as
    ``qwen2.5-coder:7b`` stays whole); as given when the project's configuration cannot say."""
    if not model:
        return model
    from ..services.llm import ANSWER_ROLE, llm_role

    try:
        return llm_role(store, ANSWER_ROLE, model)[1].model
    except BenchwrightError:
        return model


@answers.command("list")
@click.option("--model", help="Only this model's answers (MODEL or PROVIDER:MODEL, as answers generate takes it).")
@click.option("--condition", type=click.Choice(CONDITIONS), help="Only answers under this condition.")
@click.option("--pair", "pair", help="Only answers to this pair (an id or #N).")
@click.pass_context
@friendly
def answers_list(ctx, model, condition, pair) -> None:
    """List answers: id, pair position, model, condition, sample, judgments, start of the answer."""
    with open_store(ctx) as store:
        pid = store.resolve_pair(pair) if pair else None
        rows = store.answers(pair_id=pid, model=_stored_model(store, model), condition=condition)
        counts = {a.id: len(store.judgments(answer_id=a.id)) for a in rows}
        ordinals = {a.qa_pair_id: store.ordinal_of(a.qa_pair_id) for a in rows}
        models = store.answer_models()
    if not rows:
        click.echo("no answers" + (" match" if (model or condition or pair) else
                                   "; import some with: benchwright answers import FILE --model NAME --condition C"))
        return
    for a in rows:
        start = ("[TRUNCATED] " if a.truncated else "") + " ".join(a.text.split())[:60]
        click.echo(f"{a.id}\t#{ordinals[a.qa_pair_id]}\t{printable(a.model)}\t{a.condition}\tsample {a.sample_index}\t"
                   f"{plural(counts[a.id], 'judgment')}\t{printable(start)}")
    cut = sum(1 for a in rows if a.truncated)
    if cut:
        click.echo(f"{plural(cut, 'answer')} cut off at the token budget (stored flagged, incomplete; see answers show)")
    if not (model or condition or pair):
        click.echo("; ".join(f"{printable(m)} / {c}: {n}" for m, c, n in models))


@answers.command("runs")
@click.option("--model", help="Only this model's runs (MODEL or PROVIDER:MODEL, as answers generate takes it).")
@click.option("--condition", type=click.Choice(CONDITIONS), help="Only runs under this condition.")
@click.option("--pair", "pair", help="Only runs on this pair (an id or #N).")
@click.option("--failed", "failed_only", is_flag=True, help="Only samples whose latest run failed.")
@click.option("--all", "every", is_flag=True, help="Every run, not only the latest of each sample.")
@click.pass_context
@friendly
def answers_runs(ctx, model, condition, pair, failed_only, every) -> None:
    """List agent runs (answer_runs): per (pair, model, condition, sample) its latest run, ok with the answer it
    stored or failed with the reason; turns, tokens and cost."""
    with open_store(ctx) as store:
        pid = store.resolve_pair(pair) if pair else None
        runs = store.answer_runs(pid, _stored_model(store, model), condition, latest_only=not every)
        ordinals = {r.qa_pair_id: store.ordinal_of(r.qa_pair_id) for r in runs}
    if failed_only:
        runs = [r for r in runs if not r.ok]
    if not runs:
        click.echo("no runs" + (" match" if (model or condition or pair or failed_only) else
                                "; run the agent with: benchwright answers generate --agent --model M"))
        return
    runs.sort(key=lambda r: (ordinals[r.qa_pair_id], r.model, r.condition, r.sample_index, r.id))
    for r in runs:
        cost = "cost unknown" if r.cost_usd is None else f"${r.cost_usd:.4f}"
        outcome = r.answer_id if r.ok else f"failed: {printable(r.reason or '')}"
        click.echo(f"run {r.id}\t#{ordinals[r.qa_pair_id]}\t{printable(r.model)}\t{r.condition}\tsample {r.sample_index}\t"
                   f"{plural(r.turns, 'turn')}\t{r.input_tokens + r.output_tokens:,} tokens\t{cost}\t{outcome}")
    failed = sum(1 for r in runs if not r.ok)
    click.echo(f"{plural(len(runs), 'run')}: {len(runs) - failed} ok, {failed} failed")


@answers.command("show")
@click.argument("answer_id")
@click.option("--trajectory", "with_trajectory", is_flag=True,
              help="Print the agent's trajectory: every turn, tool call and output (other formats: the JSON).")
@click.option("--as", "annotator", help="Who looks (blind mode; default: configuration, then the OS user).")
@click.pass_context
@friendly
def answers_show(ctx, answer_id, with_trajectory, annotator) -> None:
    """Print an answer, where it came from, its judgments (with overrides) and its failure-mode label.

    A judgment's rate is the effective one (overrides applied), followed by the judge's own and the number of
    overrides; runs are numbered from 1 as in ``judge`` and the inspector (``run_index`` 0 is run 1). In blind
    mode an answer assigned to the annotator (--as) that they have not scored yet shows no judgment: the judges'
    and other annotators' scores stay hidden until they submit theirs (``judgments human``), as in the app.
    """
    from benchwright.core.config import resolve_annotator

    from ..services.human import BLIND_NOTE_CLI, hidden_for

    viewer = resolve_annotator(annotator)
    with open_store(ctx) as store:
        a = store.get_answer(answer_id)
        hidden = hidden_for(store, a.id, viewer)
        judgments = [] if hidden else store.judgments(answer_id=a.id)
        overrides = {j.id: store.overrides(j.id) for j in judgments}
        label = store.failure_mode(a.id)
        ordinal = store.ordinal_of(a.qa_pair_id)
        run = store.answer_run_for(a.id)
    where = f"{printable(a.source_file or '?')}, line {a.source_line}" if a.source_line else printable(a.source_file or "")
    click.echo(f"{a.id} · pair #{ordinal} {a.qa_pair_id} · {printable(a.model)} · {a.condition} · "
               f"sample {a.sample_index} · {a.source_format}{f' ({where})' if where else ''}")
    if run is not None:
        cost = "cost unknown" if run.cost_usd is None else f"${run.cost_usd:.4f}"
        click.echo(f"--- run {run.id}: {plural(run.turns, 'turn')} in {printable(run.repository or '?')}, "
                   f"{run.input_tokens + run.output_tokens:,} tokens, {cost}, by {printable(run.created_by)} "
                   f"at {run.created_at}")
    cut = a.truncated
    if cut:
        budget = cut.get("max_tokens")
        click.echo(f"--- TRUNCATED: the model's answer was cut off at the token budget"
                   f"{f' (max_tokens {budget})' if budget else ''}; the text below is incomplete")
    click.echo(printable(a.text))
    if a.trajectory is None:
        if with_trajectory:
            click.echo("--- trajectory")
            click.echo("(no trajectory)")
    else:
        _echo_trajectory(a, with_trajectory)
    if hidden:
        click.echo(f"--- judgments hidden from {printable(viewer)}: {BLIND_NOTE_CLI}")
    for j in judgments:
        entries, used = effective_entries(j, overrides[j.id])
        if j.score_rate is None:
            rate = "unscored"
        elif used:
            rate = f"{score_rate_of(j.judge, entries):.1%} (judge: {j.score_rate:.1%}, {plural(used, 'override')})"
        else:
            rate = f"{j.score_rate:.1%}"
        click.echo(f"--- judgment {j.id}: {j.judge} by {printable(j.judge_model)}, run {j.run_index + 1}, {rate}")
        if j.reason:
            click.echo(f"  reason: {printable(j.reason)}")
        for e, original in zip(entries, j.entries, strict=True):
            changed = f" (judge: {original.score})" if e.score != original.score else ""
            click.echo(f"  {e.key}\t{e.score}/{e.max}{changed}\t{printable(e.label)}"
                       + (f"\t{printable(e.rationale)}" if e.rationale else ""))
        for o in overrides[j.id]:
            click.echo(f"  override {o.key}: {o.original_score:g} -> {o.score:g} by {printable(o.annotator)} "
                       f"({printable(o.reason)})")
        if j.critique:
            click.echo("  critique:")
            click.echo(printable(j.critique))
    if label is not None:
        click.echo(f"--- failure mode: {label.mode} ({label.origin}) {printable(label.rationale)}")



def _echo_trajectory(answer, full: bool) -> None:
    """``answers show``'s trajectory: for benchwright's agent format a summary (turns, calls per tool, refused
    calls, elisions, cited locations resolving / not) and with ``full`` every turn; any other format: its step
    count, and with ``full`` the JSON. All text literal (:func:`printable`)."""
    from ..services.views import trajectory_view

    view = trajectory_view(answer, full=full)
    if view.turns is None:
        steps = len(answer.trajectory) if isinstance(answer.trajectory, list) else 1
        if full:
            click.echo("--- trajectory")
            click.echo(printable(json.dumps(answer.trajectory, indent=2, ensure_ascii=False)))
        else:
            click.echo(f"--- trajectory: {plural(steps, 'step')} (print it with --trajectory)")
        return
    tools = ", ".join(f"{printable(name)} {n}" for name, n in view.tool_counts.items()) or "none"
    summary = [plural(len(view.turns), "turn"), f"tool calls: {tools}"]
    if view.refused:
        summary.append(f"{view.refused} refused or failed")
    summary.append(plural(view.elisions, "elision"))
    if view.citations_resolving is not None or view.citations_not is not None:
        summary.append(f"cited locations: {view.citations_resolving or 0} resolving, {view.citations_not or 0} not")
    if view.confinement:
        summary.append(f"commands {printable(view.confinement)}")
    click.echo(f"--- trajectory: {'; '.join(summary)}{'' if full else ' (print it with --trajectory)'}")
    if not full:
        return
    for t in view.turns:
        notes = [f"{t.input_tokens:,} in / {t.output_tokens:,} out tokens", f"context ~{t.context_tokens:,}"]
        if t.cached:
            notes.append("cached")
        if t.elided:
            notes.append(f"elided before it: {', '.join(printable(e) for e in t.elided)}")
        click.echo(f"turn {t.index} · {' · '.join(notes)}")
        for line in t.text.splitlines():
            click.echo(f"  {printable(line)}")
        for u in t.tool_uses:
            marks = "".join(m for m, on in ((" [refused]", not u.ok), (" [output cut]", u.truncated),
                                            (f" [elided at turn {u.elided_at_turn}]", u.elided_at_turn is not None))
                            if on)
            click.echo(f"  > {printable(u.name)} {printable(u.arguments)}{marks}")
            for line in u.output:
                click.echo(f"    {printable(line)}")
            if u.more_lines:
                click.echo(f"    ... {plural(u.more_lines, 'more line')}")


# --------------------------------------------------------------------------------------------- answer
@answers.command("generate")
@click.option("--model", required=True, help="The answering model (MODEL or PROVIDER:MODEL on the generator "
                                               "role's provider); stored as the answers' model.")
@click.option("--condition", type=click.Choice(CONDITIONS),
              help="Condition of the answers: without --agent closed-book (default) or direct (no repository); "
                   f"{', '.join(AGENT_CONDITIONS)} run the agent (implies --agent; default with --agent: "
                   f"{DEFAULT_AGENT_CONDITION}).")
@click.option("--agent", "agent", is_flag=True,
              help="Answer with the agent inside the pair's repository (read-only tools; SWE-QA-Pro §3.1).")
@click.option("--samples", type=click.IntRange(min=1, max=MAX_SAMPLES), default=1, show_default=True,
              help="Answers per pair (sample indices 0..K-1; each its own ledger entry).")
@click.option("--max-turns", "max_turns", type=click.IntRange(min=1),
              help="Agent: model calls per run at most (default: [agent] max_turns, else 25).")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many pairs.")
@where_option
@click.option("--as", "annotator", help="Who runs it (recorded with each answer).")
@batch_options
@click.pass_context
@friendly
def answers_generate(ctx, model, condition, agent, samples, max_turns, limit, where, annotator) -> None:
    """Generate answers: direct, single-turn answers without repository access (closed-book, direct; the
    direct-answer baseline, SWE-QA-Pro §2.3), or with --agent (or an agent condition) the agent's answers inside
    the repository: documented and agentic on the registered checkout at its pinned commit, code-only on its
    stripped copy (benchwright repos strip NAME).

    Samples that already have an answer are skipped; finished calls (every agent turn) are reused, so running the
    same command again makes no calls and a killed run resumes at the turn it reached. A direct answer cut off at
    max_tokens is retried once with a larger budget; if it is still cut off it is stored flagged truncated. An
    agent run that fails (turn limit, no Finish, provider error) is stored as a failed run with its reason, never
    as an answer. Exits 1 when any sample failed or any pair was refused.
    """
    if agent or (condition is not None and CONDITION_REGISTRY.get(condition).needs_agent):
        if batch_request(ctx) is not None:
            raise click.UsageError("--batch is for direct answers: an agent's turns depend on each other (run the "
                                   "agent online)")
        _generate_agent_answers(ctx, model, condition, samples=samples, max_turns=max_turns, limit=limit,
                                where=where, annotator=annotator)
        return
    if max_turns is not None:
        raise click.UsageError("--max-turns is for agent runs (--agent)")
    _generate_direct_answers(ctx, model, condition or DIRECT_CONDITIONS[0], samples=samples, limit=limit,
                             where=where, annotator=annotator)


def _already(n: int, samples: int) -> str:
    return f"{plural(n, 'pair' if samples == 1 else 'sample')} already answered"


def _generate_direct_answers(ctx, model, condition, *, samples, limit, where, annotator) -> None:
    """``answers generate`` without the agent: one direct answer per (pair, sample)."""
    from rich.text import Text

    from benchwright.tui.services.judge_runs import plan_direct_answers, run_direct_answers

    from ..services.llm import ANSWER_ROLE, make_llm_client, project_dir_of

    by = resolve_annotator(annotator)
    out = out_console()
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        client, role = make_llm_client(store, ANSWER_ROLE, model, provider_factory=ctx.obj.get("provider_factory"),
                                       batch=batch_request(ctx))
        plan = plan_direct_answers(store, role.model, condition, where=flt, limit=limit, samples=samples)
        if not plan.targets:
            close_unused(client)
            out.print(Text(f"answer ({printable(role.model)}, {condition}): nothing to do; "
                           f"{_already(plan.already_answered, samples)}"))
            return
        settings = AnswerSettings(model=role.model, params=role.params, project_dir=project_dir_of(store))
        final, outcomes = run_closing(
            client, functools.partial(run_direct_answers, store, client, plan.targets, settings,
                                      condition=condition, by=by),
            len(plan.targets), f"answer ({role.model}, {condition})")
        ok = [o for o in outcomes if o.ok]
        truncated = [o for o in outcomes if o.truncated]
        failed = [o for o in outcomes if not o.ok and not o.truncated]
        if final is None:
            out.print(Text(f"answer: cancelled; {len(outcomes)} of {len(plan.targets)} finished and saved."))
        out.print(Text(f"answer ({printable(role.model)}, {condition}): {plural(len(ok), 'answer')} stored, {len(failed)} failed"
                       f"{f', {len(truncated)} truncated (stored flagged)' if truncated else ''}"
                       f"{f', {_already(plan.already_answered, samples)}' if plan.already_answered else ''}; "
                       f"{money(outcomes)}"))
        for o in failed[:10]:
            out.print(Text(f"  failed #{store.ordinal_of(o.qa_pair_id)} {o.qa_pair_id}{_sample(o.sample_index)}: "
                           f"{printable(o.reason or '')[:300]}"))
        for o in truncated[:10]:
            out.print(Text(f"  truncated #{store.ordinal_of(o.qa_pair_id)} {o.qa_pair_id}"
                           f"{_sample(o.sample_index)}: {printable(o.reason or '')}"))
        if truncated:
            out.print(Text("  truncated answers are stored flagged as cut off (answers show says so), not as "
                           "complete ones"))
    exit_unfinished(final is None, failed + truncated)


def _sample(index: int) -> str:
    return f" sample {index}" if index else ""


def _generate_agent_answers(ctx, model, condition, *, samples, max_turns, limit, where, annotator) -> None:
    """``answers generate --agent``: the agent on every (pair, sample) without an answer, in the folder the
    condition gives it (:mod:`benchwright.tui.services.agent_runs`)."""
    from rich.text import Text

    from benchwright.tui.services.agent_runs import (
        agent_settings,
        check_agent_condition,
        plan_agent_answers,
        run_agent_answers,
    )

    from ..services.llm import ANSWER_ROLE, client_for_role, llm_role, project_dir_of

    condition = check_agent_condition(condition)
    by = resolve_annotator(annotator)
    out = out_console()
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        config, role = llm_role(store, ANSWER_ROLE, model)
        plan = plan_agent_answers(store, role.model, condition, samples=samples, where=flt, limit=limit)
        label = f"agent ({printable(role.model)}, {condition})"
        for pid, reason in plan.refused[:LIST_LIMIT]:
            out.print(Text(f"  refused #{store.ordinal_of(pid)} {pid}: {printable(reason)}"))
        if len(plan.refused) > LIST_LIMIT:
            out.print(Text(f"  ... and {len(plan.refused) - LIST_LIMIT} more refused"))
        if not plan.targets:
            refused = f"; {plural(len(plan.refused), 'pair')} refused" if plan.refused else ""
            out.print(Text(f"{label}: nothing to do; {_already(plan.already_answered, samples)}{refused}"))
            exit_unfinished(False, plan.refused)
            return
        client = client_for_role(store, config, role, provider_factory=ctx.obj.get("provider_factory"))
        settings = agent_settings(config, role, project_dir=project_dir_of(store), max_turns=max_turns)
        final, outcomes = run_closing(
            client, functools.partial(run_agent_answers, store, client, plan, settings, condition=condition, by=by),
            len(plan.targets), label)
        ok = [o for o in outcomes if o.ok]
        failed = [o for o in outcomes if o.status == "failed"]
        skipped = [o for o in outcomes if o.skipped]
        if final is None:
            out.print(Text(f"agent: cancelled; {len(outcomes)} of {len(plan.targets)} finished and saved (the "
                           "turns of the others are in the ledger: run the command again to resume them)."))
        parts = [f"{plural(len(ok), 'answer')} stored", f"{len(failed)} failed"]
        if skipped:
            parts.append(f"{len(skipped)} skipped (another run had them)")
        if plan.already_answered:
            parts.append(_already(plan.already_answered, samples))
        if plan.refused:
            parts.append(f"{plural(len(plan.refused), 'pair')} refused")
        out.print(Text(f"{label}: {', '.join(parts)}; {money(outcomes)}"))
        resolving = sum(_cited(o, "resolving") for o in ok)
        unresolved = sum(_cited(o, "not_resolving") for o in ok)
        if ok:
            out.print(Text(f"  {sum(o.turns for o in ok)} turns over {plural(len(ok), 'answer')}; cited locations: "
                           f"{resolving} resolving, {unresolved} not"))
        for o in failed[:LIST_LIMIT]:
            out.print(Text(f"  failed #{store.ordinal_of(o.qa_pair_id)} {o.qa_pair_id} sample {o.sample_index} "
                           f"after {plural(o.turns, 'turn')}: {printable(o.reason or '')[:300]}"))
        if failed:
            out.print(Text("  failed runs are stored with their trajectories (no answer); the next run tries them "
                           "again, replaying their finished turns from the ledger"))
    exit_unfinished(final is None, failed + plan.refused)


def _cited(outcome, key: str) -> int:
    """How many cited locations of an agent answer resolve (``key`` resolving) or not (``not_resolving``)."""
    value = (outcome.citations or {}).get(key, 0)
    return len(value) if isinstance(value, list) else int(value or 0)
