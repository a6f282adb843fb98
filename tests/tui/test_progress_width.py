"""The CLI progress bars (issue 19 testers' finding: cut at 80 columns) fit the terminal's width: one line, the
counts whole, a long label cut literally (with …), never wrapped."""

from __future__ import annotations

import io
import re

import pytest
from rich.cells import cell_len
from rich.console import Console

from benchwright.core.llm.jobs import JobProgress
from benchwright.tui.cli.common import fit_progress_line, run_with_progress, step_progress

LABEL = "judge checklist (anthropic:claude-sonnet-4-5-20250929, [bold]condition with-repo, run 3 of 5)"
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _lines(raw: str) -> list[str]:
    text = _CONTROL.sub("", raw)
    return [part for chunk in text.split("\n") for part in chunk.split("\r") if part.strip()]


@pytest.mark.parametrize("width", [120, 80, 60, 40])
def test_the_line_fits_and_keeps_the_counts(width):
    extras = ("12.5/s", "123,456 tok", "$1.2345 (est.)", "1200 calls, 30 cached", "batch #3: 400/1200 done")
    line = fit_progress_line(LABEL, 700, 1200, width, elapsed=75, remaining=50, extras=extras)
    assert cell_len(line.plain) <= width
    assert "700/1200" in line.plain
    assert "[bold]" in line.plain or "…" in line.plain  # the label is literal text, cut rather than wrapped
    if width >= 60:
        assert line.plain.startswith("judge checklist")
        assert "━" in line.plain
    if width == 120:
        assert "0:01:15" in line.plain and "eta 0:00:50" in line.plain


def test_a_short_label_is_not_cut():
    line = fit_progress_line("import x.jsonl", 3, 10, 60, elapsed=1, remaining=2)
    assert line.plain.startswith("import x.jsonl ") and "…" not in line.plain and "3/10" in line.plain


@pytest.mark.parametrize("width", [80, 60])
def test_run_with_progress_fits_a_narrow_console(width):
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=width, color_system=None)

    async def go(on_progress):
        p = JobProgress(total=1000)
        p.done, p.calls, p.cached = 999, 1234, 5
        on_progress(p)
        return p

    run_with_progress(go, 1000, LABEL, console=console)
    lines = _lines(buf.getvalue())
    assert lines, buf.getvalue()
    assert all(cell_len(line) <= width for line in lines), lines
    assert any("999/1000" in line for line in lines), lines
    assert any(line.startswith("judge checklist") for line in lines), lines


def test_step_progress_fits_60_columns():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=60, color_system=None)
    with step_progress("import " + "a-very-long-file-name-" * 5 + ".jsonl", console=console) as report:
        report(10_000, 10_000)
    lines = _lines(buf.getvalue())
    assert lines and all(cell_len(line) <= 60 for line in lines), lines
    assert any("10000/10000" in line and "…" in line for line in lines), lines


def test_a_long_batch_line_is_cut_not_dropped_at_80_columns():
    batch = "batch #3 in_progress 400/1200 (errored 2); batch #4 validating 0/800; 0 gathering, 2 waiting, 1 back"
    line = fit_progress_line("judge checklist", 700, 2000, 80, elapsed=75, remaining=50,
                             extras=(batch, "12.5/s", "$1.23", "1200 calls, 30 cached", "9,999 tok"))
    assert cell_len(line.plain) <= 80 and "700/2000" in line.plain
    assert "batch #3 in_progress" in line.plain and line.plain.endswith("…"), line.plain
    assert "12.5/s" not in line.plain  # the fields after the batch line went first
