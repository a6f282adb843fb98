"""The statistics screen: progress per annotator and inter-annotator agreement (Cohen's kappa per pair of
annotators, Fleiss' kappa, Krippendorff's alpha) for the decision and each QA criterion, and checklist
agreement; and plots (issue 20 item 2, keys ``1``-``5``; ``t`` back to the tables): progress over time, agreement
per criterion, score distributions per model and judge, judge stability, calibration against humans. Computed in
a worker thread: the statistics libraries take seconds to load. The numbers are the report's
(:mod:`benchwright.core.plot_data`); :mod:`benchwright.tui.widgets_plots` only draws them."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Footer, Header, Static

from benchwright.core.conditions import CODE_QA_CONDITIONS, DEFAULT_TEST, PAIRED_TESTS
from benchwright.core.review import CRITERION_LABELS
from benchwright.core.text import plural
from benchwright.db import Store

from ..services.views import StatisticsView, statistics_view
from ..widgets import literal
from ..widgets_plots import PLOTS, PlotPanel


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


class StatisticsScreen(Screen):
    """Agreement figures of the project, with the number of pairs behind each."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="statistics.back"),
                Binding("r", "refresh_figures", "Recompute", id="statistics.refresh"),
                Binding("t", "show_tables", "Tables", id="statistics.tables"),
                Binding("1", "show_plot('progress')", "Progress", id="statistics.plot_progress"),
                Binding("2", "show_plot('agreement')", "Agreement", id="statistics.plot_agreement"),
                Binding("3", "show_plot('scores')", "Scores", id="statistics.plot_scores"),
                Binding("4", "show_plot('stability')", "Stability", id="statistics.plot_stability"),
                Binding("5", "show_plot('calibration')", "Calibration", id="statistics.plot_calibration")]

    class Computed(Message):
        """Posted by the worker: the figures (:class:`~benchwright.tui.services.views.StatisticsView`)."""

        def __init__(self, view: StatisticsView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store
        self.report = None
        self.checklists = None
        self.plots = None

    def compose(self) -> ComposeResult:
        yield Header()
        with ContentSwitcher(initial="tables"):
            with VerticalScroll(id="tables"):
                yield Static(Text("computing agreement…", style="italic"), id="statistics")
            yield PlotPanel(id="plots")
        yield Footer()

    def action_show_tables(self) -> None:
        """Show the tables (the screen's first view)."""
        self.query_one(ContentSwitcher).current = "tables"

    def action_show_plot(self, kind: str) -> None:
        """Show plot ``kind`` (a key of :data:`benchwright.tui.widgets_plots.PLOTS`)."""
        if kind not in PLOTS:
            return
        self.query_one(PlotPanel).show(kind, self.plots)
        self.query_one(ContentSwitcher).current = "plots"

    def on_mount(self) -> None:
        self.action_refresh_figures()

    def action_refresh_figures(self) -> None:
        """Recompute in a worker (the store's reads are serialized, so this is safe)."""
        self.query_one("#statistics", Static).update(Text("computing agreement…", style="italic"))
        self._compute()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _compute(self) -> None:
        """Build the view (in a thread: touches no widget, posts :class:`Computed`)."""
        self.post_message(self.Computed(statistics_view(self.store)))

    def on_statistics_screen_computed(self, message: Computed) -> None:
        view = message.view
        report, checklists = view.agreement, view.checklists
        table = Table(title="Agreement of reviews", expand=True)
        for column in ("field", "pairs", "Cohen's kappa per pair of annotators", "Fleiss' kappa", "Krippendorff's alpha"):
            table.add_column(column, overflow="fold")
        for name, fa in report.items():
            cohen = "\n".join(f"{k.annotator_a}–{k.annotator_b}: {k.text} (n={k.n_items})"
                              + (f" {k.reason}" if k.kappa is None and k.reason and not k.no_variance else "")
                              for k in fa.cohen) or "n/a"
            table.add_row(literal(CRITERION_LABELS.get(name, name)), literal(fa.n_items), literal(cohen),
                          literal(f"{fa.fleiss.text} (n={fa.fleiss.n_items})"),
                          literal(f"{fa.krippendorff.text} (n={fa.krippendorff.n_items})"))
        text = literal(
            f"\nChecklists edited by two or more annotators: {plural(checklists.n_pairs, 'pair')} · key points matched "
            f"{checklists.n_matched}/{checklists.n_key_points} ({_fmt(checklists.match_rate)}) · weights "
            f"Krippendorff's alpha (interval) {checklists.weight_alpha.text} "
            f"(n={checklists.weight_alpha.n_items}; {checklists.weight_alpha.note})\n"
        )
        progress = Table(title="Progress", expand=False)
        progress.add_column("annotator")
        progress.add_column("assigned")
        progress.add_column("submitted reviews")
        for who, assigned, done in view.progress:
            progress.add_row(literal(who), literal(assigned), literal(done))
        self.report, self.checklists, self.plots = report, checklists, view.plots
        if self.query_one(ContentSwitcher).current == "plots":
            panel = self.query_one(PlotPanel)
            panel.show(panel.kind, self.plots)
        parts = [progress, table, text]
        if view.conditions:
            parts.append(_conditions_table(view.conditions))
        if view.conditions_error:
            parts.append(literal(f"Condition deltas: not computed ({view.conditions_error})"))
        self.query_one("#statistics", Static).update(Group(*parts))


def _conditions_table(rows) -> Table:
    """The condition deltas (Code-QA-Bench) as ``report --conditions`` computes them with its defaults: per model,
    judge, judge model and task set the mean per condition and each paired delta (docs/metrics.md)."""
    table = Table(title=literal(f"Condition deltas (Code-QA-Bench): mean normalized score per condition (pairs); "
                                f"paired deltas with bootstrap 95% CI and {PAIRED_TESTS[DEFAULT_TEST]}"), expand=True)
    for column in ("model", "judge / judge model", "task set", *CODE_QA_CONDITIONS, "delta", "n", "mean Δ",
                   "95% CI", "p", "left out", "note"):
        table.add_column(literal(column), overflow="fold")
    for r in rows:
        for i, d in enumerate(r.deltas):
            first = i == 0
            table.add_row(
                literal(r.model if first else ""), literal(f"{r.judge} / {r.judge_model}" if first else ""),
                literal(r.task_set if first else ""),
                *(literal(("—" if m.mean is None else f"{m.mean:.3f} ({m.pairs})") if first else "")
                  for m in r.means),
                literal(d.name), literal(d.n), literal("—" if d.mean_delta is None else f"{d.mean_delta:+.3f}"),
                literal("—" if d.ci_low is None else f"{d.ci_low:+.3f} to {d.ci_high:+.3f}"),
                literal("—" if d.p_value is None else f"{d.p_value:.3g}"),
                literal(f"{d.only_treatment} / {d.only_baseline}"), literal(d.note), end_section=not first)
    return table
