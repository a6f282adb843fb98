"""PNG figures of a release (issue 20 item 3): drawn from the numbers its dataset card prints, written under
``figures/``, linked from the card and listed in the manifest with their checksums.

Which figures a release has is a pure function of its :class:`~benchwright.exports.rows.ReleaseSpec`
(:func:`planned_figures`, no matplotlib): ``spec.figures`` names the kinds asked for (:data:`FIGURE_KINDS`;
None, a release made before figures existed, has none) and each is drawn only where its data is in the spec:

- ``scores``: the score distribution per model and judge (``spec.scores["groups"]``' histograms: answers per score
  bin), ``figures/score-distribution.png``;
- ``strata``: the mean score per stratum, model and judge (RepoProbe §5.2.2 Table 4), one figure per axis of
  ``spec.scores["strata"]``, ``figures/scores-by-AXIS.png``;
- ``agreement``: the chance-corrected review agreement figures (:data:`AGREEMENT_FIGURES` of ``spec.agreement``
  whose printed text is a number), ``figures/agreement.png``;
- ``funnel``: where the pairs that entered each curation stage went: out, dropped, failed, not yet run
  (``spec.funnel``, RepoProbe §3.2),
  ``figures/curation-funnel.png``.

Byte-identical rebuilds: matplotlib is imported only when a figure is drawn; each figure is drawn on its own
:class:`~matplotlib.figure.Figure` with the Agg canvas (no pyplot, no global backend), under matplotlib's default
style (a user's matplotlibrc is ignored) with :data:`RC` on top: DejaVu Sans (the copy bundled with matplotlib wins
the font lookup, being listed first), no math text parsing (labels from data are literal: ``$x$`` stays ``$x$``),
a fixed ``svg.hashsalt``; fixed dpi (:data:`DPI`) and sizes that depend only on the data; PNG metadata without the
``Software`` entry (and matplotlib writes no time into a PNG). Categories are in the card's order. The same
versions of matplotlib and its libraries give the same bytes.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from .rows import ReleaseSpec

FIGURE_KINDS = ("scores", "strata", "agreement", "funnel")
"""Kinds of figures a release can have, in the order they are drawn and listed."""

FIGURES_DIR = "figures"
"""The release's folder of figures."""

DPI = 100
"""Dots per inch of every figure (a figure 8 inches wide is 800 pixels)."""

WIDTH_IN = 8.0
"""Width of every figure, in inches."""

AGREEMENT_FIGURES = ("fleiss_kappa", "krippendorff_alpha")
"""The agreement figures drawn (chance-corrected, -1 to 1); counts and percentages stay in the card's table."""

RC = {
    "font.family": ["sans-serif"],
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9.0,
    "text.parse_math": False,
    "text.usetex": False,
    "svg.hashsalt": "benchwright",
    "savefig.dpi": DPI,
    "figure.dpi": DPI,
}
"""matplotlib settings every figure is drawn with (on top of matplotlib's default style; the colour cycle is
:data:`PALETTE`)."""

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
            "#17becf")
"""The series colours, in order (matplotlib's tab10)."""

LABEL_LIMIT = 48
"""Labels from data (models, judges, strata) are cut to this many characters (with an ellipsis) in figures."""


@dataclass(frozen=True)
class PlannedFigure:
    """One figure of a release.

    Attributes:
        kind: one of :data:`FIGURE_KINDS`.
        path: its path in the release (``figures/NAME.png``), the card's relative link.
        alt: the card's alt text (our words only, never text from data).
        axis: the stratification axis of a ``strata`` figure, else None.
    """

    kind: str
    path: str
    alt: str
    axis: str | None = None

    def card_line(self) -> str:
        """The card's Markdown image link."""
        return f"![{self.alt}]({self.path})"


def _number(v: object) -> float | None:
    """An agreement figure as the card prints it, as a number (``"0.712"`` -> 0.712); None for ``n/a`` and
    ``undefined (...)``, a count or a flag."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v) if math.isfinite(v) else None
    try:
        x = float(str(v))
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _agreement_rows(agreement: dict) -> list[tuple[str, dict[str, float | None]]]:
    """``(measure, {figure: value or None})`` of the measures with a figure of :data:`AGREEMENT_FIGURES` that is a
    number, sorted by measure as the card's table (a measure whose figures are all ``n/a`` or undefined is only in
    the table); empty when there is none."""
    rows = []
    for name in sorted(agreement, key=str):
        v = agreement[name]
        if isinstance(v, dict):
            figs = {f: _number(v.get(f)) for f in AGREEMENT_FIGURES if f in v}
            if any(x is not None for x in figs.values()):
                rows.append((str(name), figs))
    return rows


def planned_figures(spec: ReleaseSpec) -> list[PlannedFigure]:
    """The figures of a release with ``spec``, in :data:`FIGURE_KINDS` order: those asked for by
    ``spec.figures`` whose data the spec holds. Empty when ``spec.figures`` is None."""
    if spec.figures is None:
        return []
    asked = set(spec.figures)
    out = []
    scores = spec.scores or {}
    if "scores" in asked and scores.get("groups"):
        out.append(PlannedFigure("scores", f"{FIGURES_DIR}/score-distribution.png",
                                 "Score distribution per model and judge: answers per score bin"))
    if "strata" in asked:
        for entry in scores.get("strata") or []:
            if entry.get("rows"):
                axis = str(entry["axis"])
                out.append(PlannedFigure("strata", f"{FIGURES_DIR}/scores-by-{axis.replace('_', '-')}.png",
                                         f"Mean score per {axis_title(axis)}, model and judge", axis=axis))
    if "agreement" in asked and _agreement_rows(spec.agreement):
        out.append(PlannedFigure("agreement", f"{FIGURES_DIR}/agreement.png",
                                 "Review agreement per measure: Fleiss' kappa and Krippendorff's alpha"))
    if "funnel" in asked and spec.funnel:
        out.append(PlannedFigure("funnel", f"{FIGURES_DIR}/curation-funnel.png",
                                 "Curation funnel: pairs in each stage, by out, dropped, failed and not yet run"))
    return out


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]+")


def axis_title(axis: str) -> str:
    """How the card and the figures name a stratification axis in a sentence (``category``, ``QA type``): the
    report's title (:data:`benchwright.core.metrics.AXIS_TITLES`), lower-case unless an acronym starts it."""
    from benchwright.core.metrics import AXIS_TITLES

    title = AXIS_TITLES.get(axis, axis.replace("_", " "))
    return title if title[:2].isupper() else title[:1].lower() + title[1:]


def label(text: object, limit: int = LABEL_LIMIT) -> str:
    """Text from data as a figure label: control, bidi and zero-width characters and runs of white space become
    one space, cut to ``limit`` characters with an ellipsis. (Math text is off, so ``$`` is literal.)"""
    s = " ".join(_CONTROL.sub(" ", "(none)" if text is None or text == "" else str(text)).split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def group_label(g: dict) -> str:
    """A score group's label: ``model (condition) · judge / judge model``."""
    return label(f"{g.get('model')} ({g.get('condition')}) · {g.get('judge')} / {g.get('judge_model')}", 60)


def _key(g: dict) -> tuple:
    return (g.get("model"), g.get("condition"), g.get("judge"), g.get("judge_model"))


def _render(draw: Callable, height_in: float) -> bytes:
    """The PNG bytes of a figure ``WIDTH_IN`` x ``height_in`` inches drawn by ``draw(figure)``."""
    import matplotlib.style
    from cycler import cycler
    from matplotlib import rc_context
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rc = {**RC, "axes.prop_cycle": cycler(color=list(PALETTE))}
    with warnings.catch_warnings(), matplotlib.style.context("default"), rc_context(rc):
        warnings.simplefilter("ignore")  # a glyph DejaVu Sans lacks is drawn as a box, not a warning
        fig = Figure(figsize=(WIDTH_IN, height_in), dpi=DPI)
        FigureCanvasAgg(fig)
        draw(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _finish(fig, ax, height_in: float, handles, labels, *, left: float, ncol: int = 1) -> None:
    """The legend below the axes (one row per ``ncol`` labels) and margins in inches, so the axis label, the
    legend and the title never overlap whatever the figure's height."""
    # handles and labels passed explicitly: a label from data starting with "_" is shown, not hidden
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.1 / height_in), ncol=ncol,
               frameon=False, fontsize=8)
    rows = math.ceil(len(labels) / ncol)
    bottom_in = 0.65 + 0.19 * rows
    fig.subplots_adjust(left=left, right=0.97, top=1 - 0.4 / height_in, bottom=bottom_in / height_in)
    ax.set_title(ax.get_title())


def _height(plot_in: float, legend_rows: int) -> float:
    """A figure's height in inches: the plot area, the title, the axis label and ``legend_rows`` legend rows."""
    return round(0.4 + plot_in + 0.65 + 0.19 * legend_rows + 0.1, 2)


def bin_names(bins: int) -> list[str]:
    """The names of ``bins`` equal score-rate bins over 0-100 % (``0-10%``, ... ``90-100%``), as the card's
    distribution table and the figure name them."""
    width = 100 / bins
    return [f"{i * width:g}-{(i + 1) * width:g}%" for i in range(bins)]


def _scores_figure(scores: dict) -> bytes:
    groups = scores["groups"]
    bins = int(scores.get("bins") or len(groups[0]["histogram"]))
    names = bin_names(bins)

    def draw(fig):
        ax = fig.add_subplot()
        step = 0.8 / len(groups)
        handles = []
        for k, g in enumerate(groups):
            xs = [i - 0.4 + step * (k + 0.5) for i in range(bins)]
            handles.append(ax.bar(xs, list(g["histogram"]), width=step, color=PALETTE[k % len(PALETTE)]))
        ax.set_xticks(range(bins), names, rotation=0, fontsize=7)
        ax.set_xlabel("score rate of the answer (mean over its scored runs)")
        ax.set_ylabel("answers")
        ax.set_title("Score distribution per model and judge")
        ax.yaxis.get_major_locator().set_params(integer=True)
        _finish(fig, ax, height, handles, [f"{group_label(g)}: mean {g['overall_pct']:.1f}%, {g['answers']} answers"
                                           for g in groups], left=0.08)

    height = _height(2.6, len(groups))
    return _render(draw, height)


def _strata_figure(entry: dict, groups: list[dict]) -> bytes:
    rows = entry["rows"]
    keys = [_key(g) for g in groups] + sorted({_key(r) for r in rows} - {_key(g) for g in groups}, key=str)
    strata = list(dict.fromkeys(r["stratum"] for r in rows))  # the card's order (by stratum)
    value = {(r["stratum"], _key(r)): r["overall_pct"] for r in rows}
    label_of = {_key(g): group_label(g) for g in [*groups, *rows]}
    axis = axis_title(str(entry["axis"]))

    def draw(fig):
        ax = fig.add_subplot()
        step = 0.8 / len(keys)
        handles = []
        for k, key in enumerate(keys):
            ys = [len(strata) - 1 - i + 0.4 - step * (k + 0.5) for i in range(len(strata))]
            xs = [value.get((s, key), 0.0) for s in strata]
            handles.append(ax.barh(ys, xs, height=step, color=PALETTE[k % len(PALETTE)]))
        ax.set_yticks([len(strata) - 1 - i for i in range(len(strata))], [label(s, 32) for s in strata], fontsize=8)
        ax.set_xlim(0, 100)
        ax.set_xlabel("mean score rate (%)")
        ax.set_title(f"Mean score per {axis}")
        _finish(fig, ax, height, handles, [label_of[k] for k in keys], left=0.3)

    height = _height(min(14.0, 0.4 + 0.18 * len(strata) * len(keys) + 0.2 * len(strata)), len(keys))
    return _render(draw, height)


def _agreement_figure(agreement: dict) -> bytes:
    rows = _agreement_rows(agreement)
    names = {"fleiss_kappa": "Fleiss' kappa", "krippendorff_alpha": "Krippendorff's alpha"}

    def draw(fig):
        ax = fig.add_subplot()
        step = 0.8 / len(AGREEMENT_FIGURES)
        handles = []
        n = len(rows)
        for k, f in enumerate(AGREEMENT_FIGURES):
            ys = [n - 1 - i + 0.4 - step * (k + 0.5) for i in range(n)]
            xs = [figs.get(f) for _, figs in rows]
            handles.append(ax.barh(ys, [x or 0.0 for x in xs], height=step, color=PALETTE[k]))
            for y, x, (_, figs) in zip(ys, xs, rows, strict=True):
                if f in figs:  # the value as the card prints it, beside its bar
                    ax.text(0.02 if x is None else x + 0.02 if x >= 0 else x - 0.02, y, "n/a" if x is None else f"{x:.3f}",
                            va="center", ha="left" if x is None or x >= 0 else "right", fontsize=7)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlim(-1, 1)
        ax.set_yticks([n - 1 - i for i in range(n)], [label(m, 32) for m, _ in rows], fontsize=8)
        ax.set_xlabel("agreement (1 perfect, 0 chance)")
        ax.set_title("Review agreement")
        _finish(fig, ax, height, handles, [names[f] for f in AGREEMENT_FIGURES], left=0.3, ncol=2)

    height = _height(0.5 + 0.45 * len(rows), 1)
    return _render(draw, height)


_FUNNEL_PARTS = (("out", "out", PALETTE[2]), ("n_dropped", "dropped", PALETTE[3]), ("failed", "failed", PALETTE[1]),
                 ("not_run", "not yet run", PALETTE[7]))
"""The segments of a funnel stage's bar (the card's columns): where the pairs that entered it went."""


def _funnel_figure(funnel: list[dict]) -> bytes:
    from benchwright.core.funnel import Stage

    stages = [Stage.from_dict(d) for d in funnel]

    def draw(fig):
        ax = fig.add_subplot()
        n = len(stages)
        ys = list(range(n - 1, -1, -1))
        left = [0.0] * n
        handles = []
        for attr, _, colour in _FUNNEL_PARTS:
            widths = [float(getattr(s, attr)) for s in stages]
            handles.append(ax.barh(ys, widths, left=left, height=0.6, color=colour))
            left = [a + b for a, b in zip(left, widths, strict=True)]
        top = max([1, *(max(s.entered, total) for s, total in zip(stages, left, strict=True))])
        for y, s, total in zip(ys, stages, left, strict=True):
            out = f"{s.out}?" if s.unknown else str(s.out)
            ax.text(max(total, s.entered) + top * 0.01, y, f"in {s.entered}, out {out}", va="center", fontsize=7)
        ax.set_xlim(0, top * 1.25)
        ax.set_yticks(ys, [label(s.title, 32) for s in stages], fontsize=8)
        ax.set_xlabel("pairs that entered the stage, by where they went")
        ax.set_title("Curation funnel")
        _finish(fig, ax, height, handles, [name for _, name, _ in _FUNNEL_PARTS], left=0.2, ncol=4)

    height = _height(0.4 + 0.32 * len(stages), 1)
    return _render(draw, height)


def draw_figures(spec: ReleaseSpec) -> dict[str, bytes]:
    """The PNG bytes of each of :func:`planned_figures`, by path (imports matplotlib; nothing when there are
    none). Raises ImportError when figures are asked for and matplotlib is not installed."""
    out: dict[str, bytes] = {}
    for f in planned_figures(spec):
        scores = spec.scores or {}
        if f.kind == "scores":
            out[f.path] = _scores_figure(scores)
        elif f.kind == "strata":
            entry = next(e for e in scores["strata"] if e.get("axis") == f.axis)
            out[f.path] = _strata_figure(entry, list(scores.get("groups") or []))
        elif f.kind == "agreement":
            out[f.path] = _agreement_figure(spec.agreement)
        else:
            out[f.path] = _funnel_figure(list(spec.funnel or []))
    return out


__all__ = [
    "AGREEMENT_FIGURES",
    "DPI",
    "FIGURES_DIR",
    "FIGURE_KINDS",
    "PlannedFigure",
    "axis_title",
    "bin_names",
    "draw_figures",
    "group_label",
    "label",
    "planned_figures",
]
