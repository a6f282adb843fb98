"""``benchwright failure-modes classify|set|show``: why low-scoring answers failed
(RepoProbe §5.4, Table 7), labelled by the classifier or corrected by an annotator."""

from __future__ import annotations

import functools
from collections import Counter

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.judging import FAILURE_THRESHOLD, JudgeSettings
from benchwright.core.judgment import CONDITIONS, FAILURE_MODES
from benchwright.core.text import printable

from .common import (
    FractionRange,
    LiveHelpCommand,
    RegistryChoice,
    batch_options,
    batch_request,
    close_unused,
    exit_unfinished,
    friendly,
    money,
    note_deprecated,
    open_store,
    or_list,
    out_console,
    parse_where,
    run_closing,
    where_option,
)


class _ClassifyWithoutSubcommand(click.Group):
    """``failure-modes`` given no subcommand, or options first (its spelling before it became a group, kept for one
    release), runs ``classify`` after a deprecation note."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = args[0] if args else None
        if not ctx.resilient_parsing and first not in self.commands and first not in ctx.help_option_names:
            note_deprecated("failure-modes [OPTIONS]", "failure-modes classify [OPTIONS]")
            args = ["classify", *args]
        return super().parse_args(ctx, args)


@click.group("failure-modes", cls=_ClassifyWithoutSubcommand)
def failure_modes() -> None:
    """Failure-mode labels of low-scoring answers (RepoProbe §5.4, Table 7): classify, set, show."""


@failure_modes.command("classify", cls=LiveHelpCommand, help_fill={"modes": lambda: or_list(FAILURE_MODES)})
@click.option("--model", help="Classifier model (MODEL or PROVIDER:MODEL); default: [roles.judge].")
@click.option("--judge-model", help="Use only checklist judgments by this judge model (default: any).")
@click.option("--answers-model", help="Only answers by this model.")
@click.option("--condition", type=click.Choice(CONDITIONS), help="Only answers under this condition.")
@click.option("--threshold", type=FractionRange(), default=FAILURE_THRESHOLD, show_default=True,
              help="Classify answers whose mean checklist score rate is below this.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many answers.")
@where_option
@click.option("--force", is_flag=True, help="Classify again answers the classifier labelled (never an annotator's).")
@batch_options
@click.pass_context
@friendly
def failure_modes_classify(ctx, model, judge_model, answers_model, condition, threshold, limit, where, force) -> None:
    """Label why low-scoring answers failed (RepoProbe §5.4, Table 7): {modes}, with a rationale.

    Answers whose checklist score rate (mean over scored runs, overrides applied) is below the threshold are
    classified; already labelled ones are skipped. Correct a label with: benchwright failure-modes set.
    """
    from rich.text import Text

    from benchwright.tui.services.judge_runs import plan_failure_modes, run_failure_modes

    from ..services.llm import JUDGE_ROLE, make_llm_client, project_dir_of

    out = out_console()
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        client, role = make_llm_client(store, JUDGE_ROLE, model, provider_factory=ctx.obj.get("provider_factory"),
                                       batch=batch_request(ctx))
        plan = plan_failure_modes(store, judge_model=judge_model, answers_model=answers_model, condition=condition,
                                  where=flt, threshold=threshold, limit=limit, force=force)
        skipped = (f"{plan.above_threshold} at or above {threshold:.0%}, {plan.not_judged} without a scored "
                   f"checklist judgment, {plan.labelled} already labelled, {plan.annotator_labelled} labelled by an "
                   "annotator")
        if not plan.candidates:
            close_unused(client)
            out.print(Text(f"failure-modes: nothing to do ({skipped})"))
            return
        settings = JudgeSettings(model=role.model, params=role.params, project_dir=project_dir_of(store), force=force)
        final, outcomes = run_closing(
            client, functools.partial(run_failure_modes, store, client, plan.candidates, settings),
            len(plan.candidates), f"failure modes ({role.model})")
    ok = [o for o in outcomes if o.ok]
    failed = [o for o in outcomes if not o.ok]
    modes = Counter(o.mode for o in ok)
    out.print(Text(f"failure-modes: {len(ok)} labelled, {len(failed)} failed ({skipped}); {money(outcomes)}"))
    if modes:
        out.print(Text("  " + ", ".join(f"{m} {modes[m]}" for m in FAILURE_MODES if modes[m])))
    for o in failed[:10]:
        out.print(Text(f"  failed {o.answer_id}: {printable(o.reason or '')[:300]}"))
    exit_unfinished(final is None, failed)


@failure_modes.command("set")
@click.argument("answer_id")
@click.argument("mode", type=RegistryChoice(FAILURE_MODES))
@click.option("--reason", required=True, help="Why the label is this mode (kept with the correction).")
@click.option("--as", "annotator", help="Annotator name.")
@click.pass_context
@friendly
def failure_modes_set(ctx, answer_id, mode, reason, annotator) -> None:
    """Set ANSWER_ID's failure mode to MODE (origin annotator); the classifier's label stays in the history."""
    from benchwright.tui.services.judge_runs import resolve_answer, set_failure_mode

    with open_store(ctx) as store:
        aid = resolve_answer(store, answer_id)
        before = store.failure_mode(aid)
        label = set_failure_mode(store, aid, mode, reason, annotator=resolve_annotator(annotator))
    was = f" (was {before.mode}, {before.origin})" if before is not None else ""
    click.echo(f"{label.answer_id}: failure mode {label.mode}{was}, set by {printable(label.annotator or '')}")


@failure_modes.command("show")
@click.argument("answer_id")
@click.pass_context
@friendly
def failure_modes_show(ctx, answer_id) -> None:
    """Every failure-mode label of ANSWER_ID, oldest first (the last one counts)."""
    from benchwright.tui.services.judge_runs import resolve_answer

    with open_store(ctx) as store:
        aid = resolve_answer(store, answer_id)
        labels = store.failure_mode_history(aid)
    if not labels:
        click.echo(f"{aid}: no failure-mode label (benchwright failure-modes classify labels answers below 60%)")
        return
    for lb in labels:
        who = lb.annotator if lb.origin == "annotator" else lb.judge_model
        click.echo(f"{lb.created_at[:19]}  {lb.mode}  ({lb.origin}: {printable(who or '')})")
        if lb.rationale:
            click.echo(f"    {printable(lb.rationale)}")
