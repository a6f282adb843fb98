"""Answer commands registered on the benchwright command group (see tui/cli.py).

``benchwright import answers FILE --model NAME --condition C`` (routed here from ``import``),
``benchwright answers list|show`` and ``benchwright override JUDGMENT_ID KEY SCORE --reason TEXT``.
Text from data (questions, answers, critiques, trajectories) goes through :func:`printable` and plain
``click.echo``: nothing is read as markup or terminal control.
"""

from __future__ import annotations

import json
import re

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError
from benchwright.core.importers.answers import parse_answers
from benchwright.core.judgment import CONDITIONS, effective_entries, score_rate_of
from benchwright.core.text import printable

from .cli import _friendly, _n, _open, main

LIST_LIMIT = 50
"""Problems of each kind (unmatched, ambiguous, conflicting, skipped, warnings) listed without --verbose."""


def import_answers_file(ctx: click.Context, file: str, *, model: str | None, condition: str | None,
                        scale: int | None, judge_model: str | None, answer_format: str, skip_invalid: bool,
                        annotator: str | None, verbose: bool = False) -> None:
    """``benchwright import answers FILE``: parse, match to pairs, store in one transaction, print the report.

    Each kind of problem (unmatched, ambiguous, conflicting, skipped, warnings) is listed up to
    :data:`LIST_LIMIT` lines, then ``... and N more``; ``verbose`` lists them all.

    Raises:
        click.UsageError: --model or --condition missing.
        BenchwrightError: bad input (file, line and field named), conflicts, or no answer matched any pair.
    """
    if not model:
        raise click.UsageError("import answers needs --model NAME (the model that wrote the answers)")
    if not condition:
        raise click.UsageError(f"import answers needs --condition, one of {', '.join(CONDITIONS)}")
    result = parse_answers(file, fmt=answer_format, scale=scale)
    with _open(ctx) as store:
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
            f"{file}: none of the {_n(records, 'answer')} matched a Q&A pair{ambiguous}; import the pairs first "
            "(e.g. benchwright import swe-qa Benchmark__flask.jsonl) or give qa_pair_id in the file"
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
    click.echo(f"{printable(r.file)} ({r.format}): read {_n(r.read, 'record')}, matched {r.matched}"
               f"{f' ({how})' if how else ''}; added {_n(r.added, 'answer')} by {printable(r.model)} "
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
        click.echo(f"  imported scores: {_n(r.judgments_added, 'judgment')} added"
                   f"{f', {r.judgments_present} already present' if r.judgments_present else ''} "
                   f"(judge 'imported', judge model {printable(judge_model)}, scale 0-{scale} per dimension)")


# ------------------------------------------------------------------------------------------ answers
@main.group()
def answers() -> None:
    """Model answers to Q&A pairs: list, show (with trajectory and judgments)."""


@answers.command("list")
@click.option("--model", help="Only this model's answers.")
@click.option("--condition", type=click.Choice(CONDITIONS), help="Only answers under this condition.")
@click.option("--pair", "pair", help="Only answers to this pair (an id or #N).")
@click.pass_context
@_friendly
def answers_list(ctx, model, condition, pair) -> None:
    """List answers: id, pair position, model, condition, judgments, start of the answer."""
    with _open(ctx) as store:
        pid = store.resolve_pair(pair) if pair else None
        rows = store.answers(pair_id=pid, model=model, condition=condition)
        counts = {a.id: len(store.judgments(answer_id=a.id)) for a in rows}
        ordinals = {a.qa_pair_id: store.ordinal_of(a.qa_pair_id) for a in rows}
        models = store.answer_models()
    if not rows:
        click.echo("no answers" + (" match" if (model or condition or pair) else
                                   "; import some with: benchwright import answers FILE --model NAME --condition C"))
        return
    for a in rows:
        start = ("[TRUNCATED] " if a.truncated else "") + " ".join(a.text.split())[:60]
        click.echo(f"{a.id}\t#{ordinals[a.qa_pair_id]}\t{printable(a.model)}\t{a.condition}\t"
                   f"{_n(counts[a.id], 'judgment')}\t{printable(start)}")
    cut = sum(1 for a in rows if a.truncated)
    if cut:
        click.echo(f"{_n(cut, 'answer')} cut off at the token budget (stored flagged, incomplete; see answers show)")
    if not (model or condition or pair):
        click.echo("; ".join(f"{printable(m)} / {c}: {n}" for m, c, n in models))


@answers.command("show")
@click.argument("answer_id")
@click.option("--trajectory", "with_trajectory", is_flag=True, help="Print the agent's trajectory (JSON).")
@click.pass_context
@_friendly
def answers_show(ctx, answer_id, with_trajectory) -> None:
    """Print an answer, where it came from, its judgments (with overrides) and its failure-mode label.

    A judgment's rate is the effective one (overrides applied), followed by the judge's own and the number of
    overrides; runs are numbered from 1 as in ``judge`` and the inspector (``run_index`` 0 is run 1).
    """
    with _open(ctx) as store:
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
            click.echo(f"--- trajectory: {_n(steps, 'step')} (print it with --trajectory)")
    for j in judgments:
        entries, used = effective_entries(j, overrides[j.id])
        if j.score_rate is None:
            rate = "unscored"
        elif used:
            rate = f"{score_rate_of(j.judge, entries):.1%} (judge: {j.score_rate:.1%}, {_n(used, 'override')})"
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


# ---------------------------------------------------------------------------------------- override
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def _score(text: str) -> int | float:
    """A score written as a plain decimal (``7``, ``7.5``); exponents, ``nan`` and ``inf`` are refused."""
    if not _DECIMAL.fullmatch(text.strip()):
        raise BenchwrightError(f"score {text!r} is not a number (write it as a plain decimal, like 7 or 7.5)")
    value = float(text)
    return int(value) if value.is_integer() else value


@main.command()
@click.argument("judgment_id", type=int)
@click.argument("key")
@click.argument("score")
@click.option("--reason", required=True, help="Why the judge's score is wrong (kept with the override).")
@click.option("--as", "annotator", help="Who overrides (default: configuration, then the OS user).")
@click.pass_context
@_friendly
def override(ctx, judgment_id, key, score, reason, annotator) -> None:
    """Override one item's or dimension's SCORE in a judgment (RepoProbe-style human override).

    KEY is the checklist item number (1, 2, ...) or the dimension name. The judge's original score stays;
    reports use the latest override of each key and say how many they used.
    """
    value = _score(score)
    with _open(ctx) as store:
        o = store.add_override(judgment_id, key, value, reason, resolve_annotator(annotator))
        judgment = store.get_judgment(judgment_id)
        entries, used = effective_entries(judgment, store.overrides(judgment_id))
    rate = score_rate_of(judgment.judge, entries)
    click.echo(f"judgment {judgment_id}, {printable(key)}: {o.original_score:g} -> {o.score:g} "
               f"by {printable(o.annotator)}; score rate {judgment.score_rate:.1%} -> {rate:.1%} "
               f"({_n(used, 'override')} in effect)")
