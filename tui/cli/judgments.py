"""``benchwright judgments run JUDGE`` and ``benchwright judgments override``: the judges (RepoProbe §4.2, SWE-QA-Pro §4.1,
Code-QA-Bench "Evaluation") from the command line with a Rich progress bar and a summary, and a person's
override of one score.

Text from data and LLMs (reasons, rationales) is printed through ``rich.text.Text`` or :func:`printable`: never
read as markup.
"""

from __future__ import annotations

import functools
import re
import sys
from collections import Counter
from typing import TYPE_CHECKING

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError
from benchwright.core.judges import default_runs_help, judges_help
from benchwright.core.judging import JUDGES, JudgeOutcome, JudgeSettings, ledger_statuses
from benchwright.core.judgment import CONDITIONS, effective_entries, score_rate_of
from benchwright.core.text import printable

from .common import (
    LiveHelpCommand,
    LiveHelpOption,
    RegistryChoice,
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

if TYPE_CHECKING:
    from rich.console import Console


# ---------------------------------------------------------------------------------------------- judge
@click.group()
def judgments() -> None:
    """Judgments of answers: run a judge over them, override one score."""


@judgments.command("run", cls=LiveHelpCommand, help_fill={"judges": judges_help})
@click.argument("judge", type=RegistryChoice(JUDGES))
@click.option("--model", help="Judge model (MODEL or PROVIDER:MODEL); default: [roles.judge] in benchwright.toml.")
@click.option("--runs", type=click.IntRange(min=1), cls=LiveHelpOption, help_fill={"runs": default_runs_help},
              help="Runs per answer, each its own call (default: {runs}).")
@click.option("--answers-model", help="Only answers by this model.")
@click.option("--condition", type=RegistryChoice(CONDITIONS), help="Only answers under this condition.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many answers.")
@where_option
@click.option("--seed", type=int, default=0, show_default=True,
              help="Base seed of the answer-order randomization (swe-qa-pro); recorded per judgment.")
@click.option("--force", is_flag=True, help="Judge again answers already judged, and ignore cached calls.")
@click.option("--allow-self-judge", is_flag=True,
              help="Also judge answers the judge model wrote, or whose checklist it generated (left out by default: "
                   "RepoProbe §5.1.3).")
@click.option("--as", "annotator", help="Who runs it (recorded with each judgment).")
@batch_options
@click.pass_context
@friendly
def judgments_run(ctx, judge, model, runs, answers_model, condition, limit, where, seed, force, allow_self_judge,
                  annotator) -> None:
    """Score answers with JUDGE: {judges}.

    One call per answer and run; the run index is part of the cache key, so run 2 is its own call. Output that
    stays invalid after one repair turn is stored as unscored with the reason. Answers already judged are skipped
    and finished calls are reused, so running the same command again makes no calls (unscored runs are retried).

    Answers the judge model wrote, or whose pair's current checklist it generated, are left out and counted
    (judge separation, RepoProbe §5.1.3; model names compare without the provider prefix, case ignored) unless
    --allow-self-judge. Exit code 1 when a run stays unscored (or nothing can be judged), 130 after Ctrl+C.
    """
    from rich.text import Text

    from benchwright.tui.services.judge_runs import plan_judging, run_judging

    from ..services.llm import JUDGE_ROLE, make_llm_client, project_dir_of

    by = resolve_annotator(annotator)
    out = out_console()
    with open_store(ctx) as store:
        flt = parse_where(where, facets=store.facets() if where else None)
        client, role = make_llm_client(store, JUDGE_ROLE, model, provider_factory=ctx.obj.get("provider_factory"),
                                       batch=batch_request(ctx))
        plan = plan_judging(store, judge, role.model, runs=runs, answers_model=answers_model, condition=condition,
                            where=flt, limit=limit, force=force, allow_self_judge=allow_self_judge)
        _print_ineligible(out, plan.ineligible)
        _print_self_judged(out, plan)
        if not plan.targets:
            close_unused(client)
            if plan.self_judged and not plan.done:
                out.print(Text(f"judge {judge} ({printable(role.model)}): nothing can be judged; "
                               f"{plural(plan.self_judged_count, 'answer')} would be judged by the model that wrote "
                               "them or generated their checklist: choose another judge model (--model) or pass "
                               "--allow-self-judge"))
                sys.exit(1)
            if plan.done:
                out.print(Text(f"judge {judge} ({role.model}): nothing to do; {plural(plan.answers, 'answer')} "
                               f"selected, {plan.done} runs already judged (--force judges them again)"))
            elif plan.ineligible:
                out.print(Text(f"judge {judge} ({role.model}): nothing can be judged; the selected answers cannot "
                               "be judged for the reasons above"))
                sys.exit(1)
            if not plan.answers:
                out.print(Text("  no answers match; import some (benchwright answers import FILE --model NAME "
                               "--condition C) or generate them (benchwright answers generate --model M)"))
            return
        settings = JudgeSettings(model=role.model, params=role.params, project_dir=project_dir_of(store),
                                 force=force, seed=seed)
        final, outcomes = run_closing(
            client, functools.partial(run_judging, store, client, judge, plan.targets, settings, by=by),
            len(plan.targets), f"judge {judge} ({role.model}, {plan.runs} runs)")
        _judge_summary(out, judge, plan, outcomes, final is None)
    exit_unfinished(final is None, [o for o in outcomes if o.status == "unscored"])




def _print_ineligible(out: Console, ineligible: dict[str, list[str]]) -> None:
    from rich.text import Text

    for why, ids in sorted(ineligible.items()):
        shown = ", ".join(ids[:5]) + (f" ... and {len(ids) - 5} more" if len(ids) > 5 else "")
        out.print(Text(f"not judged: {plural(len(ids), 'answer')} ({why}): {shown}"))


def _print_self_judged(out: Console, plan) -> None:
    """``N answers left out: REASON (MODEL): ids``, per reason of judge separation (none with
    --allow-self-judge)."""
    from rich.text import Text

    for why, ids in sorted(plan.self_judged.items()):
        shown = ", ".join(ids[:5]) + (f" ... and {len(ids) - 5} more" if len(ids) > 5 else "")
        out.print(Text(f"{plural(len(ids), 'answer')} left out: {why} ({printable(plan.judge_model)}): {shown}"))
    if plan.self_judged:
        out.print(Text("  (judge separation, RepoProbe §5.1.3: --allow-self-judge judges them anyway)"))


def _judge_summary(out: Console, judge: str, plan, outcomes: list[JudgeOutcome], cancelled: bool) -> None:
    from rich.text import Text

    scored = [o for o in outcomes if o.scored]
    unscored = [o for o in outcomes if o.status == "unscored"]
    skipped = sum(o.skipped for o in outcomes)
    if cancelled:
        out.print(Text(f"judge {judge}: cancelled; {len(outcomes)} of {len(plan.targets)} runs finished and saved. "
                       "Run the same command again to continue."))
    own = f", {plural(plan.self_judged_count, 'answer')} left out as self-judging" if plan.self_judged else ""
    out.print(Text(f"judge {judge}: {len(scored)} scored, {len(unscored)} unscored"
                   f"{f', {plan.done} already judged (skipped)' if plan.done else ''}"
                   f"{f', {skipped} left to another run' if skipped else ''}"
                   f"{own}; {money(outcomes)}"))
    if unscored:
        kinds = Counter(o.reason_kind or "unknown" for o in unscored)
        out.print(Text("  unscored by reason: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common())))
        for o in unscored[:10]:
            out.print(Text(f"  unscored {o.answer_id} run {o.run_index + 1}: {printable(o.reason or '')[:300]}"))
        if len(unscored) > 10:
            statuses = ledger_statuses(kinds)
            see = " or ".join(f"benchwright calls --status {s}" for s in statuses) or "benchwright calls"
            out.print(Text(f"  ... and {len(unscored) - 10} more (see: {see})"))
        out.print(Text("  unscored runs are left out of the report's aggregates and retried by the same command"))



# ---------------------------------------------------------------------------------------- override
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def _score(text: str) -> int | float:
    """A score written as a plain decimal (``7``, ``7.5``); exponents, ``nan`` and ``inf`` are refused."""
    if not _DECIMAL.fullmatch(text.strip()):
        raise BenchwrightError(f"score {text!r} is not a number (write it as a plain decimal, like 7 or 7.5)")
    value = float(text)
    return int(value) if value.is_integer() else value


@judgments.command("override")
@click.argument("judgment_id", type=int)
@click.argument("key")
@click.argument("score")
@click.option("--reason", required=True, help="Why the judge's score is wrong (kept with the override).")
@click.option("--as", "annotator", help="Who overrides (default: configuration, then the OS user).")
@click.pass_context
@friendly
def judgments_override(ctx, judgment_id, key, score, reason, annotator) -> None:
    """Override one item's or dimension's SCORE in a judgment (RepoProbe-style human override).

    KEY is the checklist item number (1, 2, ...) or the dimension name. The judge's original score stays;
    reports use the latest override of each key and say how many they used.
    """
    value = _score(score)
    with open_store(ctx) as store:
        o = store.add_override(judgment_id, key, value, reason, resolve_annotator(annotator))
        judgment = store.get_judgment(judgment_id)
        entries, used = effective_entries(judgment, store.overrides(judgment_id))
    rate = score_rate_of(judgment.judge, entries)
    click.echo(f"judgment {judgment_id}, {printable(key)}: {o.original_score:g} -> {o.score:g} "
               f"by {printable(o.annotator)}; score rate {judgment.score_rate:.1%} -> {rate:.1%} "
               f"({plural(used, 'override')} in effect)")


# ---------------------------------------------------------------------------------------- human judgments
HUMAN_FILE_KEYS = ("answer_id", "scores", "rationales", "annotator", "checklist_version")
"""The keys of a record of ``judgments human --file``; any other is refused."""


def _human_records(path: str, default_annotator: str | None) -> list[tuple[int, str, str, dict, dict, int | None]]:
    """``(line, answer id, annotator, scores, rationales, checklist version)`` of each record of a JSONL file of
    human scores (blank lines skipped).

    Raises:
        InputFileError: a line that is not a JSON object, lacks ``answer_id``, ``scores`` or an annotator, holds a
            key other than :data:`HUMAN_FILE_KEYS` (a misspelt ``rationale`` would drop the rationales), or an
            annotator name the project's rule refuses (:mod:`benchwright.core.annotator_names`).
    """
    import json

    from benchwright.core.annotator_names import annotator_name, annotator_name_problem
    from benchwright.core.errors import InputFileError, InputProblem

    out, problems = [], []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()  # noqa: SIM115
    except (OSError, UnicodeDecodeError) as e:
        raise InputFileError.single(path, f"cannot be read: {e}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(InputProblem(path, n, None, f"not JSON: {e.msg}"))
            continue
        if not isinstance(rec, dict):
            problems.append(InputProblem(path, n, None, "a record is a JSON object"))
            continue
        unknown = sorted(set(rec) - set(HUMAN_FILE_KEYS))
        if unknown:
            problems.append(InputProblem(path, n, unknown[0], f"unknown key (a record's keys are "
                                                              f"{', '.join(HUMAN_FILE_KEYS)})"))
            continue
        who = rec.get("annotator") or default_annotator
        if isinstance(who, str) and who.strip() and annotator_name_problem(who) is not None:
            problems.append(InputProblem(path, n, "annotator", annotator_name_problem(who)))
            continue
        for field, ok in (("answer_id", isinstance(rec.get("answer_id"), str)),
                          ("scores", isinstance(rec.get("scores"), dict) and rec.get("scores")),
                          ("rationales", isinstance(rec.get("rationales", {}), dict)),
                          ("annotator", isinstance(who, str) and who.strip()),
                          ("checklist_version", rec.get("checklist_version") is None
                           or (isinstance(rec["checklist_version"], int)
                               and not isinstance(rec["checklist_version"], bool)))):
            if not ok:
                problems.append(InputProblem(path, n, field, "missing or of the wrong type (see docs/judging.md, "
                                                             "\"Human judgments\")"))
                break
        else:
            out.append((n, rec["answer_id"], annotator_name(who, "annotator"), rec["scores"], rec.get("rationales") or {},
                        rec.get("checklist_version")))
    if problems:
        raise InputFileError(problems)
    if not out:
        raise InputFileError.single(path, "no record")
    return out


@judgments.command("human")
@click.argument("answer_id", required=False)
@click.option("--score", "scores", multiple=True, metavar="ITEM=SCORE",
              help="One checklist item's score, e.g. --score 1=3 (repeat for every item).")
@click.option("--rationale", "rationales", multiple=True, metavar="ITEM=TEXT", help="Why, for one item (optional).")
@click.option("--checklist-version", type=int, help="The checklist version scored against (default: the current).")
@click.option("--file", "path", type=click.Path(dir_okay=False),
              help="Record every score of a JSONL file instead: one object a line, {\"answer_id\", \"scores\": "
                   "{ITEM: SCORE}, \"rationales\" (optional), \"annotator\" (default --as), \"checklist_version\" "
                   "(optional)}; all or nothing.")
@click.option("--as", "annotator", help="Who scores (default: configuration, then the OS user).")
@click.pass_context
@friendly
def judgments_human(ctx, answer_id, scores, rationales, checklist_version, path, annotator) -> None:
    """Record a human judgment: an annotator's scores of an answer against its pair's checklist.

    Every checklist item needs a score from its allowed set, written as an integer (4, not 4.0, on the command
    line and in the file). Stored append-only as judge human:NAME (the latest per answer and annotator counts);
    reports leave human judgments out unless asked (--judge human). With --file, a record identical to the
    annotator's latest judgment of its answer (same checklist version, scores and rationales) is skipped and
    counted as unchanged, so importing a file twice adds nothing; a key other than answer_id, scores,
    rationales, annotator and checklist_version is refused.
    """
    from benchwright.core.errors import InputFileError, InputProblem
    from benchwright.core.human import parse_score_args
    from benchwright.core.judges import human_label

    if (path is None) == (answer_id is None):
        raise BenchwrightError("give ANSWER_ID with --score ITEM=SCORE for each item, or --file FILE.jsonl")
    if path is not None and (scores or rationales or checklist_version is not None):
        raise BenchwrightError("--file holds the scores: --score, --rationale and --checklist-version go with "
                               "ANSWER_ID")
    if path is None:
        if not scores:
            raise BenchwrightError("give a --score ITEM=SCORE for every checklist item")
        records = [(None, answer_id, resolve_annotator(annotator), parse_score_args(scores),
                    parse_score_args(rationales), checklist_version)]
    else:
        records = _human_records(path, annotator and resolve_annotator(annotator))
    from benchwright.core.text import repair_value

    saved, unchanged, warnings = [], 0, []
    with open_store(ctx) as store, store.write():  # all or nothing
        for line, aid, who, s, r, version in records:
            if repair_value(r)[1]:
                where = f"{path}, line {line}" if line is not None else "--rationale"
                warnings.append(f"{where}: invalid Unicode (a lone surrogate) in a rationale stored as U+FFFD")
            try:
                entries = [{"key": str(k), "score": v, "rationale": r.get(k, "")} for k, v in s.items()]
                before = store.human_judgments(aid, who) if line is not None else []
                j = store.save_human_judgment(aid, who, entries, checklist_version=version,
                                              skip_unchanged=line is not None)
            except BenchwrightError as e:
                if line is None:
                    raise
                raise InputFileError([InputProblem(path, line, None, str(e))]) from None
            if before and j.id == before[-1].id:
                unchanged += 1
            else:
                saved.append(j)
    for j in saved:
        click.echo(f"{printable(j.answer_id)}\t{printable(human_label(j.judge_model))}\tscore rate "
                   f"{j.score_rate:.1%} (checklist v{j.checklist_version}, judgment {j.id})")
    for w in warnings:
        click.echo(f"  warning: {printable(w)}")
    if path is not None:
        click.echo(f"{printable(path)}: {plural(len(saved), 'human judgment')} recorded, {unchanged} unchanged "
                   "(the annotator's latest judgment of the answer already has these scores and rationales)")


@judgments.command("assigned")
@click.option("--as", "annotator", help="Whose assignments (default: configuration, then the OS user).")
@click.option("--todo", is_flag=True, help="Only the answers not scored yet.")
@click.pass_context
@friendly
def judgments_assigned(ctx, annotator, todo) -> None:
    """List the answers assigned to an annotator to score (benchwright assign --answers), scored or to do."""
    who = resolve_annotator(annotator)
    with open_store(ctx) as store:
        rows = store.assigned_answers(who)
        answers = {a: store.get_answer(a) for a, _ in rows}
    shown = [(a, done) for a, done in rows if not (todo and done)]
    for a, done in shown:
        ans = answers[a]
        click.echo(f"{'scored' if done else 'to do'}\t{a}\t{printable(ans.model)}\t{printable(ans.condition)}\t"
                   f"{ans.qa_pair_id}")
    left = sum(1 for _, done in rows if not done)
    click.echo(f"{printable(who)}: {plural(len(rows), 'answer')} assigned, {left} to score")
