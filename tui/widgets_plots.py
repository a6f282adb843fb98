"""The statistics screen's plots (issue 20 item 2), drawn with textual-plotext from the numbers of
:class:`benchwright.core.plot_data.StatisticsPlots` (computed in services and core, never here).

Imported by the statistics screen only, which the app imports when the screen opens: plotext is not loaded at app
start. Text from data (annotator, model and judge-model names) is drawn by plotext into cells and the result is
parsed as ANSI (``Text.from_ansi``), never as Rich markup; :func:`plot_label` first makes every control character
visible (an ESC in a name can start no escape sequence) and cuts long names.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual_plotext import PlotextPlot

from benchwright.core.plot_data import StatisticsPlots, bin_labels
from benchwright.core.text import plural, printable

from .widgets import literal

PLOTS = {
    "progress": "Progress over time: submitted reviews per annotator, cumulative (UTC days)",
    "agreement": "Agreement per criterion: Krippendorff's alpha of the reviews (as `benchwright agreement`)",
    "scores": "Score distributions per model and judge: answers per score-rate bin, % (as `benchwright report`)",
    "stability": "Judge stability: each run's mean score rate (•) and the range of the run means, % "
                 "(RepoProbe Table 5, as `benchwright report`)",
    "calibration": "Calibration: mean signed difference LLM judge - human per judge and answer model, points "
                   "(positive: the judge over-scores; as `benchwright calibration`)",
}
"""The plots, in key order (``1``-``5`` on the statistics screen), with their titles."""

LABEL_CHARS = 40
"""Names longer than this are cut (with ``…``) in plots (the caption below shows them whole)."""


def one_line(text: object) -> str:
    """``text`` with every control character made visible, newline and tab too (a label is one line)."""
    return printable("" if text is None else str(text)).replace("\n", "\u2424").replace("\t", "\u2409")


def plot_label(text: object, limit: int = LABEL_CHARS, *, middle: bool = False) -> str:
    """``text`` for plotext: :func:`one_line`, cut at ``limit`` characters with ``…`` at the end, or in the
    middle when ``middle`` (both ends stay: labels that differ only at the end remain distinguishable)."""
    s = one_line(text)
    if len(s) <= limit:
        return s
    if not middle:
        return s[: limit - 1] + "…"
    head = limit // 2
    return s[:head] + "…" + s[len(s) - (limit - 1 - head):]


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}"


def _group(model: str, condition: str, judge: str, judge_model: str) -> str:
    return f"{model} ({condition}) · {judge} / {judge_model}"


def _ticks(n: int, most: int = 8) -> list[int]:
    """At most ``most`` evenly spread positions of ``1..n`` (the first and last included)."""
    if n <= most:
        return list(range(1, n + 1))
    step = (n - 1) / (most - 1)
    return sorted({1 + round(i * step) for i in range(most)})


def _count_axis(plt, top: int) -> None:
    """A y axis of whole counts from 0 to ``top`` (at most 8 ticks; counts are never fractions)."""
    step = max(1, -(-top // 7))
    plt.yticks(list(range(0, top + step, step)))
    plt.ylim(0, top + step / 2)


class PlotPanel(Vertical):
    """One plot at a time, its title and a caption with its numbers in words; or a literal "no data" message.

    After :meth:`show`, :attr:`figures` holds what was drawn as ``[(label, numbers)]`` (labels as stored), the
    same numbers as the report: tests compare them with ``benchwright report`` / ``agreement``."""

    DEFAULT_CSS = """
    PlotPanel { height: 1fr; }
    PlotPanel #plot-title { height: auto; text-style: bold; padding: 0 1; }
    PlotPanel PlotextPlot { height: 1fr; min-height: 8; }
    PlotPanel #plot-empty { height: 1fr; padding: 1 2; }
    PlotPanel #plot-caption { height: auto; max-height: 12; overflow-y: auto; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kind = "progress"
        self.figures: list[tuple[str, object]] = []

    def compose(self) -> ComposeResult:
        yield Static(literal(""), id="plot-title")
        yield PlotextPlot(id="plot")
        yield Static(literal(""), id="plot-empty")
        yield Static(literal(""), id="plot-caption")

    # ------------------------------------------------------------------------------------------ drawing
    def show(self, kind: str, plots: StatisticsPlots | None) -> None:
        """Draw plot ``kind`` (a key of :data:`PLOTS`) of ``plots``; ``None``: still computing."""
        self.kind = kind
        self.figures = []
        self.query_one("#plot-title", Static).update(literal(PLOTS[kind]))
        widget = self.query_one(PlotextPlot)
        plt = widget.plt
        plt.clear_figure()
        if plots is None:
            self._message("computing…", "")
            return
        empty, caption = getattr(self, f"_draw_{kind}")(plt, plots)
        if empty:
            self._message(empty, caption)
            return
        widget.display = True
        self.query_one("#plot-empty", Static).display = False
        self.query_one("#plot-caption", Static).update(literal(caption))
        widget.refresh()

    def _message(self, message: str, caption: str) -> None:
        self.query_one(PlotextPlot).display = False
        empty = self.query_one("#plot-empty", Static)
        empty.display = True
        empty.update(literal(message, "italic"))
        self.query_one("#plot-caption", Static).update(literal(caption))

    def _draw_progress(self, plt, plots: StatisticsPlots) -> tuple[str | None, str]:
        progress = plots.progress
        if not progress.series:
            return "no data: no submitted reviews yet (accept, reject or revise a pair in the review screen)", ""
        xs = list(range(1, len(progress.days) + 1))
        lines = []
        for s in progress.series:
            plt.plot(xs, list(s.cumulative), marker="braille", label=plot_label(s.annotator))
            plt.scatter(xs, list(s.cumulative), marker="•")
            self.figures.append((s.annotator, s.cumulative))
            busiest = max(s.per_day)
            lines.append(f"{one_line(s.annotator)}: {s.total} submitted reviews over {sum(1 for n in s.per_day if n)} day(s), "
                         f"at most {busiest} in a day")
        ticks = _ticks(len(xs))
        plt.xticks(ticks, [progress.days[i - 1] for i in ticks])
        _count_axis(plt, max(s.total for s in progress.series))
        plt.ylabel("reviews")
        return None, "\n".join([f"{progress.days[0]} to {progress.days[-1]} (UTC)", *lines])

    def _draw_agreement(self, plt, plots: StatisticsPlots) -> tuple[str | None, str]:
        bars = plots.agreement
        caption = "\n".join(f"{b.label}: {b.text} (n={b.n_items})" for b in bars)
        defined = [b for b in bars if b.value is not None]
        if not defined:
            return ("no data: no field has a Krippendorff's alpha yet (it needs two or more annotators' reviews "
                    "of the same pairs, with some variation)"), caption
        plt.bar([plot_label(b.label) for b in defined], [b.value for b in defined])
        plt.ylim(min(0.0, *(b.value for b in defined)), 1.0)
        plt.ylabel("alpha")
        self.figures = [(b.field, b.value) for b in defined]
        return None, caption

    def _draw_scores(self, plt, plots: StatisticsPlots) -> tuple[str | None, str]:
        if plots.scores_error:
            return f"no data: the judged answers could not be read ({plots.scores_error})", ""
        if not plots.scores:
            return "no data: no judged answers yet (benchwright judgments run checklist, or answers import)", ""
        labels = bin_labels(len(plots.scores[0].counts))
        names = [_group(d.model, d.condition, d.judge, d.judge_model) for d in plots.scores]
        counts = [list(d.counts) for d in plots.scores]
        if len(counts) == 1:
            plt.bar(labels, counts[0], label=plot_label(names[0], 60))
        else:
            plt.multiple_bar(labels, counts, labels=[plot_label(n, 60) for n in names])
        _count_axis(plt, max(max(c) for c in counts))
        plt.ylabel("answers")
        plt.xlabel("score rate %")
        self.figures = [(n, (d.counts, d.mean_pct)) for n, d in zip(names, plots.scores, strict=True)]
        return None, "\n".join(f"{one_line(n)}: {plural(len(d.scores_pct), 'answer')}, mean {_pct(d.mean_pct)}%"
                               for n, d in zip(names, plots.scores, strict=True))

    def _draw_stability(self, plt, plots: StatisticsPlots) -> tuple[str | None, str]:
        if plots.scores_error:
            return f"no data: the judged answers could not be read ({plots.scores_error})", ""
        if not plots.stability:
            return ("no data: no model has answers scored in two or more runs by one judge "
                    "(benchwright judgments run checklist --runs 2)"), ""
        names, lines = [], []
        for i, s in enumerate(plots.stability, start=1):
            r = s.row
            name = _group(r.model, r.condition, r.judge, r.judge_model)
            means = [m.score_rate_pct for m in r.runs]
            plt.plot([i, i], [s.low_pct, s.high_pct], marker="│")
            plt.scatter([i] * len(means), means, marker="•")
            names.append(name)
            self.figures.append((name, (tuple(means), s.low_pct, s.high_pct)))
            lines.append(f"{i}. {one_line(name)}: {len(r.runs)} runs over {plural(r.answers, 'answer')}, score rate "
                         f"{_pct(r.score_rate_pct)}%, std {_pct(r.std_pct)}, range {_pct(r.range_pct)} "
                         f"({_pct(s.low_pct)} to {_pct(s.high_pct)})")
        plt.xticks(list(range(1, len(names) + 1)), [plot_label(f"{i}. {n}", 24) for i, n in enumerate(names, 1)])
        plt.xlim(0.5, len(names) + 0.5)
        plt.ylim(0, 100)
        plt.ylabel("score rate %")
        return None, "\n".join(lines)

    def _draw_calibration(self, plt, plots: StatisticsPlots) -> tuple[str | None, str]:
        if plots.calibration_error:
            return f"no data: the calibration could not be computed ({plots.calibration_error})", ""
        names = [b.judge_label if b.model is None else f"{b.judge_label} · {b.model}" for b in plots.calibration]
        lines = []
        for name, b in zip(names, plots.calibration, strict=True):
            a = b.agreement
            ci = a.ci_text()
            lines.append(f"{one_line(name)}: n={a.n}, exact {a.exact.text()}, kappa {a.kappa.text()}, alpha "
                         f"{a.alpha.text()}, mean judge - human {a.mean_diff.text(signed=True)}"
                         + (f" {ci}" if ci else ""))
        defined = [(n, b) for n, b in zip(names, plots.calibration, strict=True)
                   if b.agreement.mean_diff.value is not None]
        if not defined:
            return ("no data: no human judgment paired with an LLM judge's scores of the same answer yet (h in the "
                    "judge inspector scores an answer against its checklist)"), "\n".join(lines)
        values = [b.agreement.mean_diff.value for _n, b in defined]
        plt.bar([plot_label(n, 24, middle=True) for n, _b in defined], values)
        top = max(1.0, *(abs(v) for v in values))
        plt.ylim(-top, top)
        plt.ylabel("judge - human, points")
        self.figures = [(n, b.agreement.mean_diff.value) for n, b in defined]
        return None, "\n".join(lines)


def plot_text(panel: PlotPanel) -> str:
    """What the panel shows, as plain text (title, the plot's cells or the message, the caption): for tests."""
    parts: Sequence[Static] = [panel.query_one("#plot-title", Static)]
    plot = panel.query_one(PlotextPlot)
    out = [_plain(parts[0])]
    if plot.display:
        out.append(Text.from_ansi(plot.plt.build()).plain)
    else:
        out.append(_plain(panel.query_one("#plot-empty", Static)))
    out.append(_plain(panel.query_one("#plot-caption", Static)))
    return "\n".join(out)


def _plain(widget: Static) -> str:
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)
