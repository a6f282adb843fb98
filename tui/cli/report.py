"""``benchwright report``: the paper metrics as Rich tables, CSV files and JSON (issue #5 item 6).

The numbers come from :mod:`benchwright.core.metrics` over :func:`benchwright.db.report.report_inputs`; this
module only lays them out. Model names, judge models and stratum values come from data, so every such cell is
a ``rich.text.Text`` (shown literally, never read as markup).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

import click

from benchwright.core.agent.tools import TOOL_NAMES
from benchwright.core.agent_metrics import GapRow, ToolUsageRow, condition_side
from benchwright.core.calibration import z_histogram
from benchwright.core.conditions import (
    CODE_QA_CONDITIONS,
    CONDITION_FIELDS,
    DEFAULT_TEST,
    MIN_PAIRS_INTERVAL,
    MIN_PAIRS_TEST,
    PAIRED_TESTS,
    SATURATION_WARNING,
    ConditionRow,
    SaturationRow,
    condition_deltas,
    condition_records,
    specificity_saturation,
)
from benchwright.core.judges import JUDGE_REGISTRY, LLM_JUDGES, SCALAR_JUDGES
from benchwright.core.metrics import (
    AXIS_OPTIONS,
    AXIS_TITLES,
    CHECKLIST_TOLERANCE,
    FAILURE_MODE_NAMES,
    FAILURE_MODES,
    INSTABILITY_THRESHOLD,
    JUDGES,
    STRATA,
    Report,
    ScalarRow,
    SummaryRow,
    axis_of_option,
    build_report,
    scores_checklist,
)
from benchwright.core.text import plural, printable

from .common import (
    FractionRange,
    RegistryChoice,
    friendly,
    histogram_lines,
    open_store,
    shown_name,
    write_csv_tables,
    write_json_file,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

# The stratification axes, their --by spellings and titles are core's (core/metrics.py, STRATUM_AXIS_REGISTRY).


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def _num(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _t(value: object) -> Text:
    """A table cell shown literally: data never becomes Rich markup, and control characters (an ANSI escape in a
    model name) are made visible rather than sent to the terminal."""
    from rich.text import Text

    return Text("—" if value is None else printable(str(value)))


def _add_columns(table: Table, left: Sequence[str | Text] = (), right: Sequence[str | Text] = ()) -> None:
    """Add the ``left`` (text) columns, then the ``right``-justified (number) ones."""
    for col in left:
        table.add_column(col)
    for col in right:
        table.add_column(col, justify="right")


def _table(title: str, columns: Sequence[str], *, numeric_from: int) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        table.add_column(col, justify="right" if i >= numeric_from else "left", overflow="fold")
    return table


# ----------------------------------------------------------------------------------------- csv/json
_SUMMARY_FIELDS = ("model", "condition", "judge", "judge_model", "answers", "runs", "overall_pct", "knowledge_pct",
                   "clarity_pct", "perfect_solve_pct")


def _summary_rows(rows: Sequence[SummaryRow], *, stratum: bool) -> list[list[object]]:
    fields = ("stratum", *_SUMMARY_FIELDS) if stratum else _SUMMARY_FIELDS
    return [[asdict(r)[f] for f in fields] for r in rows]


def _dimension_keys(rows: Sequence[ScalarRow]) -> list[str]:
    keys: dict[str, None] = {}
    for r in rows:
        for d in r.dimensions:
            keys.setdefault(d.key, None)
    return list(keys)


def _csv_tables(report: Report) -> dict[str, tuple[list[str], list[list[object]]]]:
    """Every table as ``file name -> (header, rows)``; numbers unrounded (the JSON's numbers)."""
    tables: dict[str, tuple[list[str], list[list[object]]]] = {
        "summary.csv": (list(_SUMMARY_FIELDS), _summary_rows(report.summary, stratum=False)),
    }
    for axis, rows in report.strata.items():
        tables[f"by_{axis}.csv"] = (["stratum", *_SUMMARY_FIELDS], _summary_rows(rows, stratum=True))
    for judge in SCALAR_JUDGES:
        rows = [r for r in report.scalar if r.judge == judge]
        if not rows:
            continue
        keys = _dimension_keys(rows)
        header = ["model", "condition", "judge", "judge_model", "answers", "runs",
                  *(f"{k}_mean" for k in keys), "total", "total_max", "final_pct"]
        body = []
        for r in rows:
            means = {d.key: d.mean for d in r.dimensions}
            body.append([r.model, r.condition, r.judge, r.judge_model, r.answers, r.runs,
                         *(means.get(k) for k in keys), r.total, r.total_max, r.final_pct])
        tables[f"scalar_{judge}.csv"] = (header, body)
    indices = sorted({m.run_index for r in report.stability for m in r.runs})
    tables["stability.csv"] = (
        ["model", "condition", "judge", "judge_model", "runs", "answers", "answers_left_out", "score_rate_pct",
         "std_pct", "std_population_pct", "range_pct", *(f"run_{i}_pct" for i in indices)],
        [[r.model, r.condition, r.judge, r.judge_model, len(r.runs), r.answers, r.answers_left_out,
          r.score_rate_pct, r.std_pct, r.std_population_pct, r.range_pct,
          *({m.run_index: m.score_rate_pct for m in r.runs}.get(i) for i in indices)]
         for r in report.stability],
    )
    tables["coverage.csv"] = (
        ["model", "condition", "judge", "judge_model", "answers", "answers_scored", "answers_unscored",
         "runs_scored", "runs_unscored", "overrides_used"],
        [[r.model, r.condition, r.judge, r.judge_model, r.answers, r.answers_scored, r.answers_unscored,
          r.runs_scored, r.runs_unscored, r.overrides_used] for r in report.coverage],
    )
    tables["failure_modes.csv"] = (
        ["model", "condition", "threshold_pct", "below", "classified", "unclassified", "labelled_not_below",
         *(f"{m}_count" for m in FAILURE_MODES), *(f"{m}_pct_of_classified" for m in FAILURE_MODES),
         *(f"{m}_pct_of_below" for m in FAILURE_MODES)],
        [[r.model, r.condition, r.threshold_pct, r.below, r.classified, r.unclassified, r.labelled_not_below,
          *(r.counts[m] for m in FAILURE_MODES), *(r.pct_of_classified[m] for m in FAILURE_MODES),
          *(r.pct_of_below[m] for m in FAILURE_MODES)] for r in report.failures],
    )
    tables["strata_summary.csv"] = (
        list(_STRATUM_SUMMARY_FIELDS),
        [[asdict(r)[f] for f in _STRATUM_SUMMARY_FIELDS] for rows in report.strata_summary.values() for r in rows],
    )
    tables["instability.csv"] = (
        list(_INSTABILITY_FIELDS),
        [[_runs_cell(v) if isinstance(v, tuple) else v for v in (asdict(c)[f] for f in _INSTABILITY_FIELDS)]
         for c in report.instability],
    )
    tables["agent_gap.csv"] = _gap_csv(report.agent_gap)
    tables["tool_usage.csv"] = _tool_csv(report.tool_usage)
    return tables


_STRATUM_SUMMARY_FIELDS = ("axis", "stratum", "condition", "judge", "judge_model", "models", "overall_mean_pct",
                           "overall_sd_pct", "perfect_solve_mean_pct", "answers")
_INSTABILITY_FIELDS = ("qa_pair_id", "answer_id", "model", "condition", "scalar_judge", "scalar_judge_model",
                       "scalar_scores", "scalar_range", "checklist_judge", "checklist_judge_model", "checklist_scores",
                       "checklist_range")


def _runs_cell(scores: Sequence[float]) -> str:
    """Per-run scores in one CSV cell, by run index, separated by ``;`` (unrounded)."""
    return ";".join(repr(float(x)) for x in scores)


_GAP_FIELDS = ("model", "judge", "judge_model", "direct_condition", "agent_condition", "pairs", "direct_only",
               "agent_only", "direct_samples", "agent_samples", "direct_pct", "agent_pct", "gap_pct", "ci_low_pct",
               "ci_high_pct", "direct_total", "agent_total", "total_max")


def _gap_dimension_keys(rows: Sequence[GapRow]) -> list[str]:
    return list(dict.fromkeys(d.key for r in rows for d in r.dimensions))


def _gap_csv(rows: Sequence[GapRow]) -> tuple[list[str], list[list[object]]]:
    keys = _gap_dimension_keys(rows)
    header = [*_GAP_FIELDS, *(f"{k}_{side}" for k in keys for side in ("direct", "agent"))]
    body = []
    for r in rows:
        dims = {d.key: d for d in r.dimensions}
        body.append([*(asdict(r)[f] for f in _GAP_FIELDS),
                     *(getattr(dims[k], side) if k in dims else None for k in keys for side in ("direct", "agent"))])
    return header, body


_OTHER_TOOLS_SHOWN = 10
"""The report lists at most this many of the tool names a model made up (most called first)."""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _tool_names(rows: Sequence[ToolUsageRow]) -> list[str]:
    return list(dict.fromkeys(name for r in rows for name in r.calls))


def _tool_csv(rows: Sequence[ToolUsageRow]) -> tuple[list[str], list[list[object]]]:
    tools = _tool_names(rows)
    header = ["model", "condition", "answers", *(f"{t}_calls" for t in tools), "calls_total", "calls_per_answer",
              "turns_per_answer", "refused_calls", "elided_outputs", "failed_runs", "failed_calls",
              "failed_turns_per_run", "failed_reasons", "not_ours"]
    body = [[r.model, r.condition, r.answers, *(r.calls.get(t, 0) for t in tools), r.calls_total, r.calls_per_answer,
             r.turns_per_answer, r.refused_calls, r.elided_outputs, r.failed_runs, r.failed_calls,
             r.failed_turns_per_run, _reasons(r.failed_reasons), r.not_ours] for r in rows]
    return header, body


def _reasons(reasons) -> str:
    return "; ".join(f"{k}: {n}" for k, n in reasons.items())


# ------------------------------------------------------------------------------------------- terminal
def _coverage_of(report: Report) -> Callable[[object], tuple[int, int]]:
    by_key = {(c.model, c.condition, c.judge, c.judge_model): c for c in report.coverage}

    def get(row) -> tuple[int, int]:
        c = by_key.get((row.model, row.condition, row.judge, row.judge_model))
        return (c.runs_unscored, c.overrides_used) if c else (0, 0)

    return get


def _print_tables(console: Console, report: Report) -> None:
    from rich.table import Table

    cov = _coverage_of(report)
    checklist = [r for r in report.summary if scores_checklist(r.judge)]
    if checklist:
        t = _table("Checklist judge (RepoProbe §5.1.3), % of points, mean over answers of the mean over runs",
                   ["model", "condition", "judge model", "answers", "runs", "Overall %", "Knowledge %",
                    "Clarity %", "Perfect Solve %", "unscored runs", "overrides used"], numeric_from=3)
        for r in checklist:
            unscored, overrides = cov(r)
            t.add_row(_t(r.model), _t(r.condition), _t(r.judge_model), str(r.answers), str(r.runs),
                      _pct(r.overall_pct), _pct(r.knowledge_pct), _pct(r.clarity_pct), _pct(r.perfect_solve_pct),
                      str(unscored), str(overrides))
        console.print(t)

    for judge in SCALAR_JUDGES:
        rows = [r for r in report.scalar if r.judge == judge]
        if not rows:
            continue
        keys = _dimension_keys(rows)
        labels = {d.key: d.label for r in rows for d in r.dimensions}
        source = JUDGE_REGISTRY.get(judge).scale_note()
        t = Table(title=f"Scalar judge {judge} ({source})", title_justify="left")
        _add_columns(t, ("model", "condition", "judge model"),
                     ("answers", "runs", *(_t(labels.get(k, k)) for k in keys), "total", "final %", "unscored runs",
                      "overrides used"))
        for r in rows:
            means = {d.key: d.mean for d in r.dimensions}
            unscored, overrides = cov(r)
            t.add_row(_t(r.model), _t(r.condition), _t(r.judge_model), str(r.answers), str(r.runs),
                      *(_num(means.get(k)) for k in keys), f"{r.total:.2f} / {r.total_max:g}",
                      _pct(r.final_pct), str(unscored), str(overrides))
        console.print(t)

    for axis, rows in report.strata.items():
        t = _table(f"By {AXIS_TITLES[axis]} (RepoProbe §5.2.2): score rate % per stratum",
                   ["model", "condition", "judge", "judge model", AXIS_TITLES[axis], "answers", "Overall %",
                    "Knowledge %", "Clarity %", "Perfect Solve %"], numeric_from=5)
        for r in rows:
            t.add_row(_t(r.model), _t(r.condition), _t(r.judge), _t(r.judge_model), _t(r.stratum), str(r.answers),
                      _pct(r.overall_pct), _pct(r.knowledge_pct), _pct(r.clarity_pct), _pct(r.perfect_solve_pct))
        console.print(t)

    _print_strata_summary(console, report)
    _print_stability(console, report)
    _print_instability(console, report)

    t = _table("Coverage: unscored runs are left out of every mean and counted here",
               ["model", "condition", "judge", "judge model", "answers", "answers scored",
                "answers without a scored run", "runs scored", "runs unscored", "overrides used"], numeric_from=4)
    for c in report.coverage:
        t.add_row(_t(c.model), _t(c.condition), _t(c.judge), _t(c.judge_model), str(c.answers),
                  str(c.answers_scored), str(c.answers_unscored), str(c.runs_scored), str(c.runs_unscored),
                  str(c.overrides_used))
    console.print(t)

    if report.failures:
        t = _table(f"Failure modes of answers below {report.failures[0].threshold_pct:g}% (RepoProbe §5.4 Table 7):"
                   " count (% of classified)",
                   ["model", "condition", "below", *(FAILURE_MODE_NAMES[m] for m in FAILURE_MODES),
                    "unclassified"], numeric_from=2)
        for r in report.failures:
            t.add_row(_t(r.model), _t(r.condition), str(r.below),
                      *(f"{r.counts[m]} ({_pct(r.pct_of_classified[m])}%)" if r.classified else str(r.counts[m])
                        for m in FAILURE_MODES),
                      str(r.unclassified))
        console.print(t)
        stray = sum(r.labelled_not_below for r in report.failures)
        if stray:
            console.print(f"{stray} labelled answer(s) are not below the threshold now and are not counted.",
                          markup=False)

    _print_agent_gap(console, report)
    _print_tool_usage(console, report)


def _no_agent_answers(report: Report) -> bool:
    return not any(condition_side(c) == "agent" for (_m, c) in report.answer_counts)


def _print_agent_gap(console: Console, report: Report) -> None:
    """SWE-QA-Pro §4.2 Table 2 form, one table per judge: each model's direct row, then its agent row with the
    gap, over the pairs scored under both (mean over a pair's samples first)."""
    from rich.table import Table
    from rich.text import Text

    title = "Direct vs agent (SWE-QA-Pro §4.2 Table 2)"
    if not report.agent_gap:
        why = ("no agent answers yet (benchwright answers generate --agent --model M)" if _no_agent_answers(report)
               else "no model has judged answers both without the repository (direct, closed-book) and inside it "
                    "(agentic, documented, code-only) yet")
        console.print(Text(f"{title}: {why}"))
        return
    for judge in dict.fromkeys(r.judge for r in report.agent_gap):
        rows = [r for r in report.agent_gap if r.judge == judge]
        keys = _gap_dimension_keys(rows)
        labels = {d.key: d.label for r in rows for d in r.dimensions}
        t = Table(title=f"{title}, judge {judge}: score rate % over the pairs scored under both conditions "
                        "(mean over a pair's samples, then over pairs); gap in points, paired bootstrap 95% CI",
                  title_justify="left")
        _add_columns(t, ("model", "condition", "judge model"),
                     ("pairs", "samples", *(_t(labels.get(k, k)) for k in keys), *(["Overall"] if keys else []),
                      "score %", "gap", "95% CI", "unpaired"))
        for r in rows:
            dims = {d.key: d for d in r.dimensions}
            for side in ("direct", "agent"):
                agent = side == "agent"
                total = r.agent_total if agent else r.direct_total
                t.add_row(
                    _t("" if agent else r.model),
                    _t(("+ " if agent else "") + (r.agent_condition if agent else r.direct_condition)),
                    _t(r.judge_model), str(r.pairs), str(r.agent_samples if agent else r.direct_samples),
                    *(_num(getattr(dims[k], side)) if k in dims else "—" for k in keys),
                    *([f"{total:.2f} / {r.total_max:g}" if total is not None else "—"] if keys else []),
                    _pct(r.agent_pct if agent else r.direct_pct),
                    (f"{r.gap_pct:+.1f}" if r.gap_pct is not None else "—") if agent else "",
                    (f"{r.ci_low_pct:+.1f} to {r.ci_high_pct:+.1f}" if r.ci_low_pct is not None else "—")
                    if agent else "",
                    str(r.agent_only if agent else r.direct_only),
                    end_section=agent,
                )
        console.print(t)


def _print_tool_usage(console: Console, report: Report) -> None:
    """SWE-QA-Pro §4.3 Figure 4 form: per model and condition, calls per tool, per answer, and the failed runs."""
    from rich.table import Table
    from rich.text import Text

    title = "Tool usage (SWE-QA-Pro §4.3 Figure 4)"
    rows = report.tool_usage
    if not rows:
        console.print(Text(f"{title}: no agent answers yet"))
        return
    # the agent's tools get a column each; names a model made up (any number of them) share one "other" column,
    # listed below the table, so they cannot crowd the table out (names come from data: shown literally)
    others: dict[str, int] = {}
    for r in rows:
        for name, n in r.calls.items():
            if name not in TOOL_NAMES:
                others[name] = others.get(name, 0) + n
    other_column = ("other",) if others else ()
    t = Table(title=f"{title}: tool calls in the answers' trajectories; failed runs (no answer) apart",
              title_justify="left")
    _add_columns(t, ("model", "condition"), ("answers", *TOOL_NAMES, *other_column, "calls/answer", "turns/answer",
                                             "refused", "elided", "failed runs"))
    _add_columns(t, ("failed because",), ("not ours",))
    for r in rows:
        other = (str(sum(n for name, n in r.calls.items() if name not in TOOL_NAMES)),) if others else ()
        t.add_row(_t(r.model), _t(r.condition), str(r.answers), *(str(r.calls.get(x, 0)) for x in TOOL_NAMES),
                  *other, _num(r.calls_per_answer, 1), _num(r.turns_per_answer, 1), str(r.refused_calls),
                  str(r.elided_outputs), str(r.failed_runs), _t(_reasons(r.failed_reasons) or ""), str(r.not_ours))
    console.print(t)
    if others:
        shown = sorted(others.items(), key=lambda kv: (-kv[1], kv[0]))[:_OTHER_TOOLS_SHOWN]
        names = ", ".join(f"{printable(_cut(name, 60)) or '(no name)'} {n}" for name, n in shown)
        more = f", and {len(others) - len(shown)} more" if len(others) > len(shown) else ""
        console.print(Text(f"other tools: {names}{more} (names the models called that the agent does not have)"))
    if any(r.not_ours for r in rows):
        console.print(Text("not ours: imported trajectories of another shape, not counted"))


def _print_strata_summary(console: Console, report: Report) -> None:
    """RepoProbe §5.2.2 Table 4 form: per stratum the mean Overall % across models ± the sample sd (n - 1) across
    models, the number of models, and (checklist judge) the mean Perfect Solve Rate."""
    for axis, rows in report.strata_summary.items():
        if not rows:
            continue
        t = _table(f"By {AXIS_TITLES[axis]} across models (RepoProbe §5.2.2 Table 4): mean Overall % over models, "
                   "sd = sample standard deviation across models (n - 1)",
                   ["judge", "judge model", "condition", AXIS_TITLES[axis], "models", "Overall % mean", "sd",
                    "Perfect Solve % mean", "answers"], numeric_from=4)
        for r in rows:
            t.add_row(_t(r.judge), _t(r.judge_model), _t(r.condition), _t(r.stratum), str(r.models),
                      _pct(r.overall_mean_pct), _pct(r.overall_sd_pct), _pct(r.perfect_solve_mean_pct),
                      str(r.answers))
        console.print(t)


def _scores(scores: Sequence[float]) -> str:
    return " ".join(f"{x:.2f}" for x in scores)


def _print_instability(console: Console, report: Report) -> None:
    """RepoProbe §5.3.2 Table 6 form: answers whose scalar-judge runs spread widely while the checklist runs
    agree, widest spread first; scores are normalized (0-1) per run."""
    from rich.text import Text

    title = (f"Instability cases (RepoProbe §5.3.2 Table 6): scalar-judge runs range >= "
             f"{report.instability_threshold:g} while checklist runs range <= {report.checklist_tolerance:g}")
    if not report.instability:
        console.print(Text(f"{title}: none"))
        return
    t = _table(title + "; normalized scores per run (0-1)",
               ["pair", "model", "condition", "scalar judge", "scalar judge model", "scalar runs", "range",
                "checklist judge model", "checklist runs", "range"], numeric_from=10)
    for c in report.instability:
        t.add_row(_t(c.qa_pair_id), _t(c.model), _t(c.condition), _t(c.scalar_judge), _t(c.scalar_judge_model),
                  _scores(c.scalar_scores), f"{c.scalar_range:.2f}", _t(c.checklist_judge_model),
                  _scores(c.checklist_scores), f"{c.checklist_range:.2f}")
    console.print(t)


def _print_stability(console: Console, report: Report) -> None:
    """RepoProbe Table 5 form: per model and condition, each judge's score rate, std and range over runs, the
    judges of one model on consecutive rows so checklist and scalar judging compare at a glance."""
    from rich.table import Table

    if not report.stability:
        return
    order = {j: i for i, j in enumerate(JUDGES)}
    rows = sorted(report.stability, key=lambda r: (r.model, r.condition, order.get(r.judge, len(JUDGES)),
                                                   r.judge_model))
    t = Table(title="Judge stability over runs (RepoProbe §5.3.1 Table 5): score rate %, sample std and range "
                    "of the run means (answers scored in every run)", title_justify="left")
    for name in ("model", "condition", "judge", "judge model"):
        t.add_column(name)
    for name in ("runs", "answers", "score rate %", "std", "range"):
        t.add_column(name, justify="right")
    previous = None
    for r in rows:
        same = previous == (r.model, r.condition)
        t.add_row(_t("" if same else r.model), _t("" if same else r.condition), _t(r.judge), _t(r.judge_model),
                  str(len(r.runs)), str(r.answers), _pct(r.score_rate_pct), _pct(r.std_pct), _pct(r.range_pct),
                  end_section=False)
        previous = (r.model, r.condition)
    console.print(t)


def _calibration_dict(run) -> dict:
    """The latest calibration run (SWE-QA-Pro §2.3) for ``report --json``: parameters, counts, the histograms of
    mean z and of min z (the statistic all-z decides on) over the decided pairs, and per model mean / sd / pairs of
    s_m(q)."""
    r = run.result
    decided = [p for p in r.pairs if p.decision != "insufficient"]
    return {"run_id": run.id, "created_at": run.created_at, "judge": run.judge, "judge_model": run.judge_model,
            "condition": run.condition, "models": list(r.models), "rule": r.rule, "threshold": r.threshold,
            "min_models": r.min_models, "samples": r.samples, "pairs": len(r.pairs), "counts": r.counts,
            "mean_z_histogram": dict(z_histogram([p.mean_z for p in decided])),
            "min_z_histogram": dict(z_histogram([p.min_z for p in decided])),
            "model_stats": {m: s.to_dict() for m, s in r.model_stats.items()}}


def _print_calibration(console: Console, run) -> None:
    """The calibration section (SWE-QA-Pro §2.3): the latest ``calibrate`` run's parameters, the distribution
    of mean z over its decided pairs (under all-z, of min z too: the statistic that rule decides on, as
    ``calibrate`` prints it) and its decisions (``benchwright calibrate show`` has the per-model table)."""
    from rich.text import Text

    r = run.result
    console.print(Text(f"Difficulty calibration (SWE-QA-Pro §2.3), run {run.id} of {run.created_at[:10]}: "
                       f"{plural(len(r.pairs), 'pair')}, rule {r.rule}, threshold {r.threshold:g}; {run.condition} answers of "
                       f"{', '.join(shown_name(m) for m in r.models)} judged by {run.judge} / "
                       f"{shown_name(run.judge_model or '-')}"))
    decided = [p for p in r.pairs if p.decision != "insufficient"]
    for line in histogram_lines(z_histogram([p.mean_z for p in decided]), "  mean z over the models (decided pairs):"):
        console.print(Text(line))
    if r.rule == "all-z":  # a pair is too easy under all-z iff its minimum z reaches the threshold
        for line in histogram_lines(z_histogram([p.min_z for p in decided]),
                                    "  min z over the models (all-z decides on it; decided pairs):"):
            console.print(Text(line))
    c = r.counts
    console.print(Text(f"  too easy {c['too-easy']} · kept {c['kept']} · insufficient {c['insufficient']} "
                       "(--where difficulty=too-easy; details: benchwright calibrate show)"))


def _print_judges_vs_humans(console: Console, report) -> None:
    """One line per LLM judge against the humans' scores of the same answers (judge calibration, issue 20 item 5;
    the tables: ``benchwright calibration``)."""
    from rich.text import Text

    console.print(Text("Judges against humans (per checklist item of the answers humans scored; details: "
                       "benchwright calibration):"))
    for j in report.judges:
        o = j.overall
        console.print(Text(f"  {shown_name(j.label)}: n {o.n}, exact {o.exact.text()}, kappa {o.kappa.text()}, "
                           f"alpha {o.alpha.text()}, judge−human {o.mean_diff.text(signed=True)} {o.ci_text()}"
                           .rstrip()))


def _conditions_title(test: str, resamples: int, seed: int) -> str:
    return (f"Condition deltas (Code-QA-Bench): mean normalized score (0-1) per condition (pairs in brackets); "
            f"deltas paired over the pairs scored under both, bootstrap 95% CI ({resamples} resamples, seed {seed}), "
            f"{PAIRED_TESTS[test]}; no interval below {MIN_PAIRS_INTERVAL} pairs, no p-value below "
            f"{MIN_PAIRS_TEST}; left out = pairs scored under one condition only (treatment / baseline)")


def _print_conditions(console: Console, rows: Sequence[ConditionRow], *, test: str, resamples: int,
                      seed: int) -> None:
    """The condition deltas table: per model, judge, judge model, task set (and stratum) two lines, one per
    delta, the condition means on the first (Code-QA-Bench "Key Results")."""
    from rich.table import Table

    axis = rows[0].axis if rows else None
    t = Table(title=_conditions_title(test, resamples, seed) + (f"; by {AXIS_TITLES[axis]}" if axis else ""),
              title_justify="left")
    _add_columns(t, ("model", "judge", "judge model", "task set", *([AXIS_TITLES[axis]] if axis else [])),
                 (*CODE_QA_CONDITIONS, ))
    _add_columns(t, ("delta",), ("n", "mean Δ", "95% CI", "statistic", "p", "left out"))
    _add_columns(t, ("note",))
    for r in rows:
        for i, d in enumerate(r.deltas):
            first = i == 0
            t.add_row(
                _t(r.model if first else ""), _t(r.judge if first else ""), _t(r.judge_model if first else ""),
                _t(r.task_set if first else ""), *([_t(r.stratum if first else "")] if axis else []),
                *((f"{m.mean:.3f} ({m.pairs})" if m.mean is not None else "—") if first else "" for m in r.means),
                d.name, str(d.n), f"{d.mean_delta:+.3f}" if d.mean_delta is not None else "—",
                f"{d.ci_low:+.3f} to {d.ci_high:+.3f}" if d.ci_low is not None else "—",
                _num(d.statistic, 3), f"{d.p_value:.3g}" if d.p_value is not None else "—",
                f"{d.only_treatment} / {d.only_baseline}", _t(d.note), end_section=not first)
    console.print(t)


def _print_saturation(console: Console, rows: Sequence[SaturationRow]) -> None:
    """Specificity saturation of the 0-5 judge: per model, condition and judge model the share of answers at 5/5
    on specificity, with a warning above the documented share (Code-QA-Bench "Significance" 4)."""
    from rich.table import Table

    if not rows:
        return
    t = Table(title=f"Specificity saturation (Code-QA-Bench judge): share of answers at the top specificity "
                    f"(5/5, every run); warning above {SATURATION_WARNING:.0%}", title_justify="left")
    _add_columns(t, ("model", "condition", "judge model"), ("answers", "at 5/5", "share %"))
    _add_columns(t, ("",))
    for r in rows:
        t.add_row(_t(r.model), _t(r.condition), _t(r.judge_model), str(r.answers), str(r.at_max),
                  _pct(100 * r.share), "saturated: specificity no longer tells these answers apart" if r.warning
                  else "")
    console.print(t)


def _empty_message(report: Report, models: Sequence[str], judge: str | None) -> str:
    if report.answer_counts:
        n = sum(report.answer_counts.values())
        filters = []
        if models:
            filters.append("--model " + ", ".join(models))
        if judge:
            filters.append(f"--judge {judge}")
        matching = f" matching {' and '.join(filters)}" if filters else ""
        first, *others = LLM_JUDGES
        return (f"{n} answer(s) stored but no judgments{matching} yet; judge them with: benchwright judgments run {first} (or "
                f"{', '.join(others)}), then run: benchwright report")
    if models:
        return f"no answers of model {', '.join(models)} (names must match exactly); leave out --model to see all"
    return ("no judged answers yet; import answers with: benchwright answers import FILE --model NAME "
            "--condition C, run the checklist judge or a scalar judge on them, then run: benchwright report")


@click.command()
@click.option("--by", "by", multiple=True, type=click.Choice([AXIS_OPTIONS[a] for a in STRATA]),
              help="Stratify by this axis as well (repeatable); each gets a table per model and a table across "
                   "models (mean and sample sd, RepoProbe Table 4).")
@click.option("--model", "models", multiple=True, help="Only answers of this model (repeatable; exact name).")
@click.option("--judge", type=RegistryChoice(JUDGES), help="Only judgments of this judge.")
@click.option("--csv", "csv_dir", type=click.Path(file_okay=False), help="Also write one CSV file per table here.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Also write the whole report as JSON.")
@click.option("--instability-threshold", type=FractionRange(), default=INSTABILITY_THRESHOLD, show_default=True,
              help="Least range of a scalar judge's normalized scores over an answer's runs for an instability case "
                   "(RepoProbe Table 6 states none).")
@click.option("--checklist-tolerance", type=FractionRange(), default=CHECKLIST_TOLERANCE, show_default=True,
              help="Largest range of the checklist judge's scores over the same answer's runs for them to agree.")
@click.option("--conditions", "conditions", is_flag=True,
              help="Only the condition deltas (Code-QA-Bench): per model and task set the mean score closed-book, "
                   "code-only and documented, and the paired deltas code-only - closed-book and documented - "
                   "code-only with a bootstrap interval and a paired test; --by adds a table per axis.")
@click.option("--test", "test", type=click.Choice(list(PAIRED_TESTS)), default=DEFAULT_TEST, show_default=True,
              help="The paired test of the condition deltas: wilcoxon (signed-rank, zero differences dropped) or "
                   "ttest (paired t-test).")
@click.option("--bootstrap", "resamples", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Resamples of the condition deltas' bootstrap interval.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the condition deltas' bootstrap.")
@click.pass_context
@friendly
def report(ctx, by, models, judge, csv_dir, json_file, instability_threshold, checklist_tolerance, conditions,
           test, resamples, seed) -> None:
    """Paper metrics of the judged answers: Overall %, Knowledge %, Clarity %, Perfect Solve Rate (RepoProbe
    §5.1.3), optionally by language, category, theme, QA type, cluster, repository or QA subtype, per model and
    across models (mean and sample sd, RepoProbe Table 4); scalar judges per dimension (SWE-QA-Pro §4.1,
    Code-QA-Bench); judge stability over runs (RepoProbe Table 5); answers whose scalar-judge runs spread widely
    while the checklist runs agree (RepoProbe Table 6); unscored runs and overrides
    used; failure modes below 60% (RepoProbe Table 7); direct against agent answers per model (SWE-QA-Pro Table 2)
    and the agents' tool calls (SWE-QA-Pro Figure 4). Percentages are of points; see docs/metrics.md."""
    from rich.console import Console
    from rich.text import Text

    from benchwright.core.judge_calibration import CalibrationOptions, judge_calibration
    from benchwright.db.judge_calibration import paired_scores
    from benchwright.db.report import report_inputs

    with open_store(ctx) as store:
        inputs = report_inputs(store, models=list(models) or None, judge=judge)
        calibration = store.latest_calibration()
        humans = judge_calibration(paired_scores(store, judges=[judge] if judge else None,
                                                 models=list(models) or None), CalibrationOptions(by=(), worst=0))
    rep = build_report(inputs, by=[axis_of_option(b) for b in by], instability_threshold=instability_threshold,
                       checklist_tolerance=checklist_tolerance)
    console = Console(highlight=False, soft_wrap=False)
    axes = [None, *(axis_of_option(b) for b in by)]
    deltas = {axis: condition_deltas(inputs.runs, by=axis, test=test, resamples=resamples, seed=seed)
              for axis in dict.fromkeys(axes)}
    saturation = specificity_saturation(inputs.runs)
    if conditions:
        if not deltas[None]:
            click.echo("no model has judged answers under two of the conditions closed-book, code-only and "
                       "documented yet (benchwright answers import FILE --model M --condition C, or answers generate)")
        for rows in deltas.values():
            if rows:
                _print_conditions(console, rows, test=test, resamples=resamples, seed=seed)
        _print_saturation(console, saturation)
        _write_outputs(rep, deltas, saturation, csv_dir, json_file, test=test, resamples=resamples, seed=seed)
        return
    if rep.is_empty:
        click.echo(_empty_message(rep, models, judge))
        if rep.tool_usage:
            _print_tool_usage(console, rep)
    else:
        _print_tables(console, rep)
        _print_saturation(console, saturation)
        if deltas[None]:
            console.print(Text("Condition deltas (Code-QA-Bench, closed-book / code-only / documented): "
                               "benchwright report --conditions"))
    if calibration is not None:
        _print_calibration(console, calibration)
    if humans.judges:
        _print_judges_vs_humans(console, humans)
    _write_outputs(rep, deltas, saturation, csv_dir, json_file, test=test, resamples=resamples, seed=seed,
                   calibration=calibration, humans=humans)


def _write_outputs(rep: Report, deltas: dict, saturation: Sequence[SaturationRow], csv_dir, json_file, *,
                   test: str, resamples: int, seed: int,
                   calibration=None, humans=None) -> None:
    """The CSV files and the JSON of the report; the condition deltas are in them (``conditions.csv``, the JSON's
    ``conditions``) when some model has answers under two of the conditions, and the specificity saturation
    (``specificity_saturation.csv``, the JSON's ``specificity_saturation``) when the 0-5 judge scored some, and the
    judges against the humans (the JSON's ``judge_calibration``, as ``calibration --json``) when humans scored some."""
    if csv_dir:
        tables = _csv_tables(rep)
        if deltas[None]:
            records = condition_records(r for rows in deltas.values() for r in rows)
            tables["conditions.csv"] = (list(CONDITION_FIELDS), [[x[f] for f in CONDITION_FIELDS] for x in records])
        if saturation:
            fields = ["model", "condition", "judge_model", "answers", "at_max", "share", "warning"]
            tables["specificity_saturation.csv"] = (fields, [[r.to_dict()[f] for f in fields] for r in saturation])
        write_csv_tables(csv_dir, tables)
    if json_file:
        data = rep.to_dict()
        if calibration is not None:
            data["calibration"] = _calibration_dict(calibration)
        if humans is not None and humans.judges:
            data["judge_calibration"] = humans.to_dict()
        if deltas[None]:
            data["conditions"] = {
                "test": test, "test_name": PAIRED_TESTS[test], "resamples": resamples, "seed": seed,
                "min_pairs_test": MIN_PAIRS_TEST, "min_pairs_interval": MIN_PAIRS_INTERVAL,
                "rows": [r.to_dict() for r in deltas[None]],
                "by": {axis: [r.to_dict() for r in rows] for axis, rows in deltas.items() if axis is not None},
            }
        if saturation:
            data["specificity_saturation"] = {"threshold": SATURATION_WARNING,
                                              "rows": [r.to_dict() for r in saturation]}
        write_json_file(json_file, data)
