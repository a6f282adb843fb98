"""``benchwright judge``, ``benchwright answer``, ``benchwright failure-modes`` and ``benchwright failure-mode set``:
the judges (RepoProbe §4.2, SWE-QA-Pro §4.1, Code-QA-Bench "Evaluation"), direct answers (SWE-QA-Pro §2.3) and
failure-mode labels (RepoProbe §5.4) from the command line, with a Rich progress bar and a summary.

Text from data and LLMs (reasons, rationales) is printed through ``rich.text.Text`` or :func:`printable`: never
read as markup.
"""

from __future__ import annotations

import functools
import sys
from collections import Counter

import click
from rich.console import Console
from rich.text import Text

from benchwright.core.config import resolve_annotator
from benchwright.core.judging import (
    _REASON_KINDS,
    FAILURE_THRESHOLD,
    JUDGES,
    AnswerSettings,
    JudgeOutcome,
    JudgeSettings,
)
from benchwright.core.judgment import CONDITIONS, FAILURE_MODES
from benchwright.core.llm.jobs import describe_cost
from benchwright.core.text import printable

from .cli import _friendly, _n, _open, main
from .cli_generate import WHERE_KEYS, parse_where, run_with_progress
from .signals import interrupt_exit_code

JUDGE_ROLE = "judge"
"""The configured role (``[roles.judge]`` in benchwright.toml) of the judges and the failure-mode classifier."""
ANSWER_ROLE = "generator"
"""The role whose provider answers ``benchwright answer`` (its model comes from ``--model``)."""


def _where_option(fn):
    return click.option("--where", "where", multiple=True, metavar="KEY=VALUE",
                        help=f"Only pairs matching (repeatable; keys: {', '.join(WHERE_KEYS)}).")(fn)


def _out() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _money(outcomes) -> str:
    calls = sum(o.calls for o in outcomes)
    cached = sum(o.cached for o in outcomes)
    tokens = sum(o.usage.input_tokens + o.usage.output_tokens for o in outcomes)
    cost = describe_cost(sum(o.cost_usd for o in outcomes), calls=calls,
                         cost_unknown=sum(getattr(o, "cost_unknown", 0) for o in outcomes),
                         unanswered=sum(getattr(o, "unanswered", 0) for o in outcomes),
                         usage_missing=sum(getattr(o, "usage_missing", 0) for o in outcomes))
    return f"{_n(calls, 'call')} made, {cached} cached, {tokens:,} tokens, {cost}"


# ---------------------------------------------------------------------------------------------- judge
@main.command()
@click.argument("judge", type=click.Choice(JUDGES))
@click.option("--model", help="Judge model (MODEL or PROVIDER:MODEL); default: [roles.judge] in benchwright.toml.")
@click.option("--runs", type=click.IntRange(min=1),
              help="Runs per answer, each its own call (default: checklist 1, swe-qa-pro 3, code-qa-bench 1).")
@click.option("--answers-model", help="Only answers by this model.")
@click.option("--condition", type=click.Choice(CONDITIONS), help="Only answers under this condition.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many answers.")
@_where_option
@click.option("--seed", type=int, default=0, show_default=True,
              help="Base seed of the answer-order randomization (swe-qa-pro); recorded per judgment.")
@click.option("--force", is_flag=True, help="Judge again answers already judged, and ignore cached calls.")
@click.option("--as", "annotator", help="Who runs it (recorded with each judgment).")
@click.pass_context
@_friendly
def judge(ctx, judge, model, runs, answers_model, condition, limit, where, seed, force, annotator) -> None:
    """Score answers with JUDGE: checklist (RepoProbe §4.2), swe-qa-pro (five dimensions, 1-10, SWE-QA-Pro §4.1)
    or code-qa-bench (accuracy, completeness, specificity, 0-5).

    One call per answer and run; the run index is part of the cache key, so run 2 is its own call. Output that
    stays invalid after one repair turn is stored as unscored with the reason. Answers already judged are skipped
    and finished calls are reused, so running the same command again makes no calls (unscored runs are retried).
    Exit code 1 when a run stays unscored (or nothing can be judged), 130 after Ctrl+C.
    """
    from benchwright.tui.services.judge_runs import plan_judging, run_judging

    from .services.llm import make_llm_client, project_dir_of

    by = resolve_annotator(annotator)
    out = _out()
    with _open(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        client, role = make_llm_client(store, JUDGE_ROLE, model, provider_factory=ctx.obj.get("provider_factory"))
        plan = plan_judging(store, judge, role.model, runs=runs, answers_model=answers_model, condition=condition,
                            where=flt, limit=limit, force=force)
        _print_ineligible(out, plan.ineligible)
        if not plan.targets:
            _close(client)
            if plan.done:
                out.print(Text(f"judge {judge} ({role.model}): nothing to do; {_n(plan.answers, 'answer')} "
                               f"selected, {plan.done} runs already judged (--force judges them again)"))
            elif plan.ineligible:
                out.print(Text(f"judge {judge} ({role.model}): nothing can be judged; the selected answers cannot "
                               "be judged for the reasons above"))
                sys.exit(1)
            if not plan.answers:
                out.print(Text("  no answers match; import some (benchwright import answers FILE --model NAME "
                               "--condition C) or generate them (benchwright answer --model M)"))
            return
        settings = JudgeSettings(model=role.model, params=role.params, project_dir=project_dir_of(store),
                                 force=force, seed=seed)
        final, outcomes = _run_closing(
            client, functools.partial(run_judging, store, client, judge, plan.targets, settings, by=by),
            len(plan.targets), f"judge {judge} ({role.model}, {plan.runs} runs)")
        _judge_summary(out, judge, plan, outcomes, final is None)
    _exit_unfinished(final is None, [o for o in outcomes if o.status == "unscored"])


def _run_closing(client, run, total: int, label: str) -> tuple:
    """Run ``run(on_progress=..., on_outcome=...)`` (a ``benchwright.tui.services.judge_runs`` runner with its other arguments
    bound) under a progress bar of ``total`` items labelled ``label``, closing the client's provider when it ends.

    Returns ``(final, outcomes)``: the final progress (None when the user pressed Ctrl+C; what finished is stored)
    and the outcomes in the order they finished."""
    outcomes: list = []

    async def go(on_progress):
        try:
            return await run(on_progress=on_progress, on_outcome=outcomes.append)
        finally:
            await client.provider.aclose()

    return run_with_progress(go, total, label), outcomes


def _exit_unfinished(cancelled: bool, failed: list) -> None:
    """Exit 128 + the signal number when the run was cancelled (130 for Ctrl+C, 143 for SIGTERM, 129 for
    SIGHUP; ``tui/signals.py``), else 1 when any item failed; return otherwise."""
    if cancelled:
        sys.exit(interrupt_exit_code())
    if failed:
        sys.exit(1)


def _close(client) -> None:
    """Close a client that was never used in an event loop (nothing to do)."""
    import asyncio

    asyncio.run(client.provider.aclose())


def _print_ineligible(out: Console, ineligible: dict[str, list[str]]) -> None:
    for why, ids in sorted(ineligible.items()):
        shown = ", ".join(ids[:5]) + (f" ... and {len(ids) - 5} more" if len(ids) > 5 else "")
        out.print(Text(f"not judged: {_n(len(ids), 'answer')} ({why}): {shown}"))


def _judge_summary(out: Console, judge: str, plan, outcomes: list[JudgeOutcome], cancelled: bool) -> None:
    scored = [o for o in outcomes if o.scored]
    unscored = [o for o in outcomes if o.status == "unscored"]
    skipped = sum(o.skipped for o in outcomes)
    if cancelled:
        out.print(Text(f"judge {judge}: cancelled; {len(outcomes)} of {len(plan.targets)} runs finished and saved. "
                       "Run the same command again to continue."))
    out.print(Text(f"judge {judge}: {len(scored)} scored, {len(unscored)} unscored"
                   f"{f', {plan.done} already judged (skipped)' if plan.done else ''}"
                   f"{f', {skipped} left to another run' if skipped else ''}; {_money(outcomes)}"))
    if unscored:
        kinds = Counter(o.reason_kind or "unknown" for o in unscored)
        out.print(Text("  unscored by reason: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common())))
        for o in unscored[:10]:
            out.print(Text(f"  unscored {o.answer_id} run {o.run_index + 1}: {printable(o.reason or '')[:300]}"))
        if len(unscored) > 10:
            statuses = sorted(str(s) for s, kind in _REASON_KINDS.items() if kind in kinds)  # ledger statuses
            see = " or ".join(f"benchwright calls --status {s}" for s in statuses) or "benchwright calls"
            out.print(Text(f"  ... and {len(unscored) - 10} more (see: {see})"))
        out.print(Text("  unscored runs are left out of the report's aggregates and retried by the same command"))


# --------------------------------------------------------------------------------------------- answer
@main.command()
@click.option("--model", required=True, help="The answering model (MODEL or PROVIDER:MODEL on the generator "
                                               "role's provider); stored as the answers' model.")
@click.option("--condition", type=click.Choice(CONDITIONS), default="closed-book", show_default=True,
              help="Condition recorded with the answers.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many pairs.")
@_where_option
@click.option("--as", "annotator", help="Who runs it (recorded with each answer).")
@click.pass_context
@_friendly
def answer(ctx, model, condition, limit, where, annotator) -> None:
    """Generate single-turn answers without repository access (the direct-answer baseline, SWE-QA-Pro §2.3).

    Pairs that already have an answer by the model under the condition are skipped; finished calls are reused, so
    running the same command again makes no calls. An answer cut off at max_tokens is retried once with a larger
    budget; if it is still cut off it is stored flagged truncated and the command exits 1.
    """
    from benchwright.tui.services.judge_runs import plan_direct_answers, run_direct_answers

    from .services.llm import make_llm_client, project_dir_of

    by = resolve_annotator(annotator)
    out = _out()
    with _open(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        client, role = make_llm_client(store, ANSWER_ROLE, model, provider_factory=ctx.obj.get("provider_factory"))
        plan = plan_direct_answers(store, role.model, condition, where=flt, limit=limit)
        if not plan.pair_ids:
            _close(client)
            out.print(Text(f"answer ({role.model}, {condition}): nothing to do; "
                           f"{plan.already_answered} pairs already answered"))
            return
        settings = AnswerSettings(model=role.model, params=role.params, project_dir=project_dir_of(store))
        final, outcomes = _run_closing(
            client, functools.partial(run_direct_answers, store, client, plan.pair_ids, settings,
                                      condition=condition, by=by),
            len(plan.pair_ids), f"answer ({role.model}, {condition})")
        ok = [o for o in outcomes if o.ok]
        truncated = [o for o in outcomes if o.truncated]
        failed = [o for o in outcomes if not o.ok and not o.truncated]
        if final is None:
            out.print(Text(f"answer: cancelled; {len(outcomes)} of {len(plan.pair_ids)} finished and saved."))
        out.print(Text(f"answer ({role.model}, {condition}): {_n(len(ok), 'answer')} stored, {len(failed)} failed"
                       f"{f', {len(truncated)} truncated (stored flagged)' if truncated else ''}"
                       f"{f', {plan.already_answered} pairs already answered' if plan.already_answered else ''}; "
                       f"{_money(outcomes)}"))
        for o in failed[:10]:
            out.print(Text(f"  failed #{store.ordinal_of(o.qa_pair_id)} {o.qa_pair_id}: {printable(o.reason or '')}"))
        for o in truncated[:10]:
            out.print(Text(f"  truncated #{store.ordinal_of(o.qa_pair_id)} {o.qa_pair_id}: "
                           f"{printable(o.reason or '')}"))
        if truncated:
            out.print(Text("  truncated answers are stored flagged as cut off (answers show says so), not as "
                           "complete ones"))
    _exit_unfinished(final is None, failed + truncated)


# -------------------------------------------------------------------------------------- failure modes
@main.command("failure-modes")
@click.option("--model", help="Classifier model (MODEL or PROVIDER:MODEL); default: [roles.judge].")
@click.option("--judge-model", help="Use only checklist judgments by this judge model (default: any).")
@click.option("--answers-model", help="Only answers by this model.")
@click.option("--condition", type=click.Choice(CONDITIONS), help="Only answers under this condition.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=FAILURE_THRESHOLD, show_default=True,
              help="Classify answers whose mean checklist score rate is below this.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many answers.")
@_where_option
@click.option("--force", is_flag=True, help="Classify again answers the classifier labelled (never an annotator's).")
@click.pass_context
@_friendly
def failure_modes(ctx, model, judge_model, answers_model, condition, threshold, limit, where, force) -> None:
    """Label why low-scoring answers failed (RepoProbe §5.4, Table 7): edit-bias, shallow-explanation,
    misinterpretation, context-miss or hallucination, with a rationale.

    Answers whose checklist score rate (mean over scored runs, overrides applied) is below the threshold are
    classified; already labelled ones are skipped. Correct a label with: benchwright failure-mode set.
    """
    from benchwright.tui.services.judge_runs import plan_failure_modes, run_failure_modes

    from .services.llm import make_llm_client, project_dir_of

    out = _out()
    with _open(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        client, role = make_llm_client(store, JUDGE_ROLE, model, provider_factory=ctx.obj.get("provider_factory"))
        plan = plan_failure_modes(store, judge_model=judge_model, answers_model=answers_model, condition=condition,
                                  where=flt, threshold=threshold, limit=limit, force=force)
        skipped = (f"{plan.above_threshold} at or above {threshold:.0%}, {plan.not_judged} without a scored "
                   f"checklist judgment, {plan.labelled} already labelled, {plan.annotator_labelled} labelled by an "
                   "annotator")
        if not plan.candidates:
            _close(client)
            out.print(Text(f"failure-modes: nothing to do ({skipped})"))
            return
        settings = JudgeSettings(model=role.model, params=role.params, project_dir=project_dir_of(store), force=force)
        final, outcomes = _run_closing(
            client, functools.partial(run_failure_modes, store, client, plan.candidates, settings),
            len(plan.candidates), f"failure modes ({role.model})")
    ok = [o for o in outcomes if o.ok]
    failed = [o for o in outcomes if not o.ok]
    modes = Counter(o.mode for o in ok)
    out.print(Text(f"failure-modes: {len(ok)} labelled, {len(failed)} failed ({skipped}); {_money(outcomes)}"))
    if modes:
        out.print(Text("  " + ", ".join(f"{m} {modes[m]}" for m in FAILURE_MODES if modes[m])))
    for o in failed[:10]:
        out.print(Text(f"  failed {o.answer_id}: {printable(o.reason or '')[:300]}"))
    _exit_unfinished(final is None, failed)


@main.group("failure-mode")
def failure_mode() -> None:
    """One answer's failure-mode label: correct it, or show its history."""


@failure_mode.command("set")
@click.argument("answer_id")
@click.argument("mode", type=click.Choice(FAILURE_MODES))
@click.option("--reason", required=True, help="Why the label is this mode (kept with the correction).")
@click.option("--as", "annotator", help="Annotator name.")
@click.pass_context
@_friendly
def failure_mode_set(ctx, answer_id, mode, reason, annotator) -> None:
    """Set ANSWER_ID's failure mode to MODE (origin annotator); the classifier's label stays in the history."""
    from benchwright.tui.services.judge_runs import resolve_answer, set_failure_mode

    with _open(ctx) as store:
        aid = resolve_answer(store, answer_id)
        before = store.failure_mode(aid)
        label = set_failure_mode(store, aid, mode, reason, annotator=resolve_annotator(annotator))
    was = f" (was {before.mode}, {before.origin})" if before is not None else ""
    click.echo(f"{label.answer_id}: failure mode {label.mode}{was}, set by {printable(label.annotator or '')}")


@failure_mode.command("show")
@click.argument("answer_id")
@click.pass_context
@_friendly
def failure_mode_show(ctx, answer_id) -> None:
    """Every failure-mode label of ANSWER_ID, oldest first (the last one counts)."""
    from benchwright.tui.services.judge_runs import resolve_answer

    with _open(ctx) as store:
        aid = resolve_answer(store, answer_id)
        labels = store.failure_mode_history(aid)
    if not labels:
        click.echo(f"{aid}: no failure-mode label (benchwright failure-modes labels answers below 60%)")
        return
    for lb in labels:
        who = lb.annotator if lb.origin == "annotator" else lb.judge_model
        click.echo(f"{lb.created_at[:19]}  {lb.mode}  ({lb.origin}: {printable(who or '')})")
        if lb.rationale:
            click.echo(f"    {printable(lb.rationale)}")
