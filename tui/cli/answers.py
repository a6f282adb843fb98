"""Model answers: ``benchwright answers import FILE --model NAME --condition C``, ``benchwright answers generate``
(direct answers, SWE-QA-Pro §2.3) and ``benchwright answers list|show``.

Text from data (questions, answers, critiques, trajectories) goes through :func:`printable` and plain
``click.echo``: nothing is read as markup or terminal control.
"""

from __future__ import annotations

import functools
import json

import click
from rich.text import Text

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError
from benchwright.core.importers.answers import ANSWER_FORMATS, parse_answers
from benchwright.core.judging import AnswerSettings
from benchwright.core.judgment import CONDITIONS, effective_entries, score_rate_of
from benchwright.core.text import printable

from .common import (
    annotator_option,
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
    """Model answers to Q&A pairs: generate, import, list, show (with trajectory and judgments)."""


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
    click.echo(f"  skipped {len(rows)} {title}:" if title == "invalid records" else f"  {len(rows)} {title}:")
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


@answers.command("list")
@click.option("--model", help="Only this model's answers.")
@click.option("--condition", type=click.Choice(CONDITIONS), help="Only answers under this condition.")
@click.option("--pair", "pair", help="Only answers to this pair (an id or #N).")
@click.pass_context
@friendly
def answers_list(ctx, model, condition, pair) -> None:
    """List answers: id, pair position, model, condition, judgments, start of the answer."""
    with open_store(ctx) as store:
        pid = store.resolve_pair(pair) if pair else None
        rows = store.answers(pair_id=pid, model=model, condition=condition)
        counts = {a.id: len(store.judgments(answer_id=a.id)) for a in rows}
        ordinals = {a.qa_pair_id: store.ordinal_of(a.qa_pair_id) for a in rows}
        models = store.answer_models()
    if not rows:
        click.echo("no answers" + (" match" if (model or condition or pair) else
                                   "; import some with: benchwright answers import FILE --model NAME --condition C"))
        return
    for a in rows:
        start = ("[TRUNCATED] " if a.truncated else "") + " ".join(a.text.split())[:60]
        click.echo(f"{a.id}\t#{ordinals[a.qa_pair_id]}\t{printable(a.model)}\t{a.condition}\t"
                   f"{plural(counts[a.id], 'judgment')}\t{printable(start)}")
    cut = sum(1 for a in rows if a.truncated)
    if cut:
        click.echo(f"{plural(cut, 'answer')} cut off at the token budget (stored flagged, incomplete; see answers show)")
    if not (model or condition or pair):
        click.echo("; ".join(f"{printable(m)} / {c}: {n}" for m, c, n in models))


@answers.command("show")
@click.argument("answer_id")
@click.option("--trajectory", "with_trajectory", is_flag=True, help="Print the agent's trajectory (JSON).")
@click.pass_context
@friendly
def answers_show(ctx, answer_id, with_trajectory) -> None:
    """Print an answer, where it came from, its judgments (with overrides) and its failure-mode label.

    A judgment's rate is the effective one (overrides applied), followed by the judge's own and the number of
    overrides; runs are numbered from 1 as in ``judge`` and the inspector (``run_index`` 0 is run 1).
    """
    with open_store(ctx) as store:
        a = store.get_answer(answer_id)
        judgments = store.judgments(answer_id=a.id)
        overrides = {j.id: store.overrides(j.id) for j in judgments}
        label = store.failure_mode(a.id)
        ordinal = store.ordinal_of(a.qa_pair_id)
    where = f"{printable(a.source_file or '?')}, line {a.source_line}" if a.source_line else printable(a.source_file or "")
    click.echo(f"{a.id} · pair #{ordinal} {a.qa_pair_id} · {printable(a.model)} · {a.condition} · "
               f"{a.source_format} ({where})")
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
        steps = len(a.trajectory) if isinstance(a.trajectory, list) else 1
        if with_trajectory:
            click.echo("--- trajectory")
            click.echo(printable(json.dumps(a.trajectory, indent=2, ensure_ascii=False)))
        else:
            click.echo(f"--- trajectory: {plural(steps, 'step')} (print it with --trajectory)")
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



# --------------------------------------------------------------------------------------------- answer
@answers.command("generate")
@click.option("--model", required=True, help="The answering model (MODEL or PROVIDER:MODEL on the generator "
                                               "role's provider); stored as the answers' model.")
@click.option("--condition", type=click.Choice(CONDITIONS), default="closed-book", show_default=True,
              help="Condition recorded with the answers.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many pairs.")
@where_option
@click.option("--as", "annotator", help="Who runs it (recorded with each answer).")
@click.pass_context
@friendly
def answers_generate(ctx, model, condition, limit, where, annotator) -> None:
    """Generate single-turn answers without repository access (the direct-answer baseline, SWE-QA-Pro §2.3).

    Pairs that already have an answer by the model under the condition are skipped; finished calls are reused, so
    running the same command again makes no calls. An answer cut off at max_tokens is retried once with a larger
    budget; if it is still cut off it is stored flagged truncated and the command exits 1.
    """
    from benchwright.tui.services.judge_runs import plan_direct_answers, run_direct_answers

    from ..services.llm import ANSWER_ROLE, make_llm_client, project_dir_of

    by = resolve_annotator(annotator)
    out = out_console()
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        client, role = make_llm_client(store, ANSWER_ROLE, model, provider_factory=ctx.obj.get("provider_factory"))
        plan = plan_direct_answers(store, role.model, condition, where=flt, limit=limit)
        if not plan.pair_ids:
            close_unused(client)
            out.print(Text(f"answer ({role.model}, {condition}): nothing to do; "
                           f"{plan.already_answered} pairs already answered"))
            return
        settings = AnswerSettings(model=role.model, params=role.params, project_dir=project_dir_of(store))
        final, outcomes = run_closing(
            client, functools.partial(run_direct_answers, store, client, plan.pair_ids, settings,
                                      condition=condition, by=by),
            len(plan.pair_ids), f"answer ({role.model}, {condition})")
        ok = [o for o in outcomes if o.ok]
        truncated = [o for o in outcomes if o.truncated]
        failed = [o for o in outcomes if not o.ok and not o.truncated]
        if final is None:
            out.print(Text(f"answer: cancelled; {len(outcomes)} of {len(plan.pair_ids)} finished and saved."))
        out.print(Text(f"answer ({role.model}, {condition}): {plural(len(ok), 'answer')} stored, {len(failed)} failed"
                       f"{f', {len(truncated)} truncated (stored flagged)' if truncated else ''}"
                       f"{f', {plan.already_answered} pairs already answered' if plan.already_answered else ''}; "
                       f"{money(outcomes)}"))
        for o in failed[:10]:
            out.print(Text(f"  failed #{store.ordinal_of(o.qa_pair_id)} {o.qa_pair_id}: {printable(o.reason or '')}"))
        for o in truncated[:10]:
            out.print(Text(f"  truncated #{store.ordinal_of(o.qa_pair_id)} {o.qa_pair_id}: "
                           f"{printable(o.reason or '')}"))
        if truncated:
            out.print(Text("  truncated answers are stored flagged as cut off (answers show says so), not as "
                           "complete ones"))
    exit_unfinished(final is None, failed + truncated)

