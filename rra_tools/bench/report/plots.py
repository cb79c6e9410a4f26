"""The plots of a benchmark report, drawn by matplotlib as SVG text to embed in the HTML page.

matplotlib is imported here only (extra ``report``). Figures are made with ``Figure`` and the
SVG canvas directly, not pyplot: no global figure manager, no GUI backend. Text stays text in
the SVG (``svg.fonttype: none``: a tenth of the size of glyph outlines) and each figure gets its
own ``svg.hashsalt``, so the ids inside two inline SVGs never collide and the same report is
byte-identical each time it is made.

The plots must stay readable from a demo of a few cells to a real benchmark (36 papers × 35
reproducers, or a thousand tasks):

- every category (reproducer, paper, condition, effect) is a row of horizontal bars, sorted, its
  name on the y axis with a fixed height per row: the figure grows with the rows instead of
  squeezing the names until they overlap; long names are shortened in the middle;
- more papers than :data:`_MAX_ROWS` are drawn as a ranked strip (no names; the table has them);
- margins are set in inches from the longest name, not as fractions of a figure that grows;
- a chart without data is not drawn: its drawer returns a sentence that says why ("no cost was
  reported"), shown in its place;
- every mark that shows data gets an id ``<plot>-data-<n>`` (``gid``), so a test in a browser
  can tell a chart with data from empty axes.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ...model.bench_report import BenchReport, Rate

__all__ = ["PLOTS", "Plot", "render_plots"]

_COLORS = {"raw": "#d95f02", "refined": "#1b9e77"}
_OTHER = "#7570b3"
#: Colours of ablation conditions (refined-without-...), one per ablation in sorted order.
_ABLATION_COLORS = ("#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666", "#1f78b4", "#b2df8a",
                    "#fb9a99", "#cab2d6", "#fdbf6f", "#6a3d9a", "#b15928", "#a6cee3", "#ff7f00", "#999933")
#: Marker per reproducer in the accuracy-cost plot, up to this many reproducers (more: one marker).
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")

#: Figure width, and the height per row of names (font 8: a name is about 0.15 in high).
_WIDTH_IN = 8.0
_ROW_IN = 0.24
#: Estimated width of one character of an 8-point name (DejaVu Sans is wide), to size margins.
_CHAR_IN = 0.075
#: Names longer than this are shortened in the middle; the tables keep them whole.
_MAX_LABEL = 36
#: More papers than this: a ranked strip instead of a row each.
_MAX_ROWS = 40
#: Margins above (title) and below (x ticks and label) the axes, in inches.
_TOP_IN, _BOTTOM_IN = 0.45, 0.55


@dataclass
class Plot:
    """One plot of the page: its ``<svg>`` (None when there was nothing to draw) and the sentences
    shown in place of what has no data."""

    svg: str | None
    notes: list[str] = field(default_factory=list)


class _Marks:
    """Gives each data mark of one figure an id ``<plot>-data-<n>``."""

    def __init__(self, ident: str) -> None:
        self.ident, self.count = ident, itertools.count()

    def __call__(self, *artists: Any) -> None:
        for artist in artists:
            if artist is None:
                continue
            if hasattr(artist, "set_gid"):
                artist.set_gid(f"{self.ident}-data-{next(self.count)}")
            else:  # a container (bars, error bars): a tuple of artists and tuples of artists
                self(*artist)


def _color(condition: str, conditions: list[str]) -> str:
    """raw and refined keep their colours; each ablation gets its own."""
    if condition in _COLORS:
        return _COLORS[condition]
    ablations = [c for c in conditions if c not in _COLORS]
    index = ablations.index(condition) if condition in ablations else 0
    return _ABLATION_COLORS[index % len(_ABLATION_COLORS)]


def _label(condition: str) -> str:
    """An ablation as the parts it lacks ('− lock, guide'); raw and refined as they are."""
    if condition.startswith("refined-without-"):
        return "− " + ", ".join(condition.removeprefix("refined-without-").split("-"))
    return condition


def _short(name: str) -> str:
    """``name`` shortened in the middle to :data:`_MAX_LABEL` characters.

    >>> _short("claude-code/claude-opus-4-5-20251101-with-a-long-suffix")
    'claude-code/claude…ith-a-long-suffix'
    """
    if len(name) <= _MAX_LABEL:
        return name
    keep = _MAX_LABEL - 1
    return name[:keep - keep // 2] + "…" + name[-(keep // 2):]


def _frame(fig: Any, rows: float, names: Iterable[str] = (), legend: Iterable[str] = (), *,
           min_height: float = 2.4, panels: int = 1, ylabel: bool = False) -> None:
    """Size ``fig`` for ``rows`` rows of ``names`` (y tick labels; with ``ylabel``, numbers and an
    axis label) and a legend of ``legend`` beside the axes, with margins in inches."""
    left = 0.3 + _CHAR_IN * max((len(n) for n in names), default=0) + (0.55 if ylabel else 0)
    legend = list(legend)
    right = 0.25 + (0.55 + _CHAR_IN * max(map(len, legend)) if legend else 0)
    width = max(_WIDTH_IN, left + right + 4.0 * panels)
    # The legend (an entry is about 0.18 in at 8 points) must fit beside the axes too.
    height = max(min_height, _TOP_IN + _BOTTOM_IN + max(rows * _ROW_IN, 0.18 * len(legend) + 0.1))
    fig.set_size_inches(width, height)
    fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - _TOP_IN / height,
                        bottom=_BOTTOM_IN / height, wspace=0.08)


def _title(fig: Any, text: str) -> None:
    """A title at the figure's top left: never wider than the axes' centre allows, never clipped."""
    height = fig.get_size_inches()[1]
    fig.suptitle(text, x=0.01, y=1 - 0.08 / height, ha="left", va="top", fontsize=10)


def _legend(ax: Any, title: str) -> None:
    ax.legend(title=title, fontsize=8, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0, frameon=False)


def _rate_rows(fig: Any, mark: _Marks, rows: list[str], conditions: list[str],
               rate_of: dict[tuple[str, str], Rate], title: str) -> None:
    """Horizontal bars of success rates with their intervals: one row per name of ``rows`` (best
    first), one bar per condition in each row."""
    def mean(row: str) -> float:
        rates = [r.rate for c in conditions if (r := rate_of.get((row, c))) is not None and r.rate is not None]
        return sum(rates) / len(rates) if rates else -1.0

    ordered = sorted(rows, key=lambda r: (-mean(r), r))
    band = 0.8 / max(1, len(conditions))
    per_row = max(1.0, 0.45 * len(conditions))  # rows of bars need room for one bar per condition
    _frame(fig, len(ordered) * per_row, map(_short, ordered), [_label(c) for c in conditions] + ["condition"])
    ax = fig.add_subplot()
    for i, condition in enumerate(conditions):
        ys, xs, lows, highs = [], [], [], []
        for j, row in enumerate(ordered):
            rate = rate_of.get((row, condition))
            if rate is None or rate.rate is None:
                continue
            ys.append((len(ordered) - 1 - j) * per_row + (len(conditions) - 1 - i - (len(conditions) - 1) / 2) * band
                      * per_row)
            xs.append(rate.rate * 100)
            lows.append(max(0.0, rate.rate - (rate.ci_low if rate.ci_low is not None else rate.rate)) * 100)
            highs.append(max(0.0, (rate.ci_high if rate.ci_high is not None else rate.rate) - rate.rate) * 100)
        color = _color(condition, conditions)
        mark(ax.barh(ys, xs, band * per_row, color=color, label=_label(condition)))
        mark(ax.errorbar(xs, ys, xerr=[lows, highs], fmt="none", ecolor="#333333", elinewidth=0.8,
                         capsize=2 if len(conditions) <= 4 else 0))
    ax.set_yticks([(len(ordered) - 1 - j) * per_row for j in range(len(ordered))], [_short(r) for r in ordered],
                  fontsize=8)
    ax.set_ylim(-per_row / 2, (len(ordered) - 0.5) * per_row)
    ax.set_xlim(0, 100)
    ax.set_xlabel("success rate (%), with its confidence interval")
    ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)
    _legend(ax, "condition")
    _title(fig, title)


def _ci(report: BenchReport) -> str:
    return f"{int(report.bootstrap.confidence * 100)} % CI"


def _by_reproducer(fig: Any, report: BenchReport, mark: _Marks) -> list[str]:
    groups = report.by_reproducer_condition
    if not groups:
        return ["The results hold no cell: there is no success rate to show."]
    _rate_rows(fig, mark, sorted({g.reproducer or "" for g in groups}), sorted({g.condition or "" for g in groups}),
               {(g.reproducer or "", g.condition or ""): g.rate for g in groups},
               f"Success by reproducer and condition, best first ({_ci(report)}, papers resampled)")
    return []


def _by_stability(fig: Any, report: BenchReport, mark: _Marks) -> list[str]:
    groups = report.by_stability
    if not groups:
        return ["The results hold no cell: there is no stable or variable task to compare."]
    _rate_rows(fig, mark, sorted({g.stability or "" for g in groups}), sorted({g.condition or "" for g in groups}),
               {(g.stability or "", g.condition or ""): g.rate for g in groups},
               f"Stable vs variable tasks ({report.stable_tasks} stable, {report.variable_tasks} variable)")
    return []


def _by_paper(fig: Any, report: BenchReport, mark: _Marks) -> list[str]:
    groups = report.by_paper
    if not groups:
        return ["The results hold no cell: there is no paper to show."]
    papers = sorted({g.paper or "" for g in groups})
    conditions = sorted({g.condition or "" for g in groups})
    rate_of = {(g.paper or "", g.condition or ""): g.rate for g in groups}
    if len(papers) <= _MAX_ROWS:
        _rate_rows(fig, mark, papers, conditions, rate_of, "Success by paper, best first (tasks resampled; Wilson where that has no spread)")
        return []
    # Too many papers for a row each: rank them by their mean rate and draw each condition's rate
    # at that rank, so the spread between papers and between conditions both show.
    def mean(paper: str) -> float:
        rates = [r.rate for c in conditions if (r := rate_of.get((paper, c))) is not None and r.rate is not None]
        return sum(rates) / len(rates) if rates else -1.0

    ordered = sorted(papers, key=lambda p: (-mean(p), p))
    _frame(fig, 11, (), [_label(c) for c in conditions] + ["condition"], ylabel=True)
    ax = fig.add_subplot()
    for condition in conditions:
        points = [(i + 1, r.rate * 100) for i, p in enumerate(ordered)
                  if (r := rate_of.get((p, condition))) is not None and r.rate is not None]
        mark(ax.scatter([x for x, _ in points], [y for _, y in points], s=9, color=_color(condition, conditions),
                        label=_label(condition), linewidths=0))
    ax.set_xlim(0, len(ordered) + 1)
    ax.set_ylim(-3, 103)
    ax.set_xlabel(f"papers, ranked by their mean success rate (1 = best of {len(ordered)})")
    ax.set_ylabel("success rate (%)")
    ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
    _legend(ax, "condition")
    _title(fig, f"Success of each of {len(ordered)} papers, ranked (each paper's figures: table 'Per paper')")
    return []


def _paired(fig: Any, report: BenchReport, mark: _Marks) -> list[str]:
    if not report.paired or not report.paired[0].tasks:
        return ["One condition only (or no task run under both): there is no paired difference to show."]
    pair = report.paired[0]
    diffs = sorted(d.difference * 100 for d in pair.tasks)
    _frame(fig, 9, ylabel=True)
    ax = fig.add_subplot()
    mark(ax.scatter(diffs, range(1, len(diffs) + 1), color=_OTHER, s=10 if len(diffs) <= 200 else 4, linewidths=0))
    ax.axvline(0, color="grey", linewidth=0.8)
    if pair.mean is not None:
        ax.axvline(pair.mean * 100, color=_COLORS["refined"], linestyle="--", label=f"mean {pair.mean * 100:+.1f} pp")
        ax.legend(fontsize=8, loc="lower right")
    ax.set_xlim(-105, 105)
    ax.set_xlabel(f"{pair.condition_b} − {pair.condition_a} (percentage points)")
    ax.set_ylabel("tasks, sorted")
    _title(fig, f"Paired per-task difference, {pair.condition_b} − {pair.condition_a} ({len(pair.tasks)} tasks)")
    return []


def _spread(fig: Any, report: BenchReport, mark: _Marks) -> list[str]:
    spreads = [s for s in report.spread if s.reproducers > 1]
    if not spreads:
        return ["One reproducer per condition: there is no best-to-worst spread to show."]
    names = [s.condition for s in spreads]
    labels = [_label(n) for n in names]
    _frame(fig, len(spreads) * 1.2, labels, ["worst reproducer", "best reproducer"])
    ax = fig.add_subplot()
    ys = [(len(spreads) - 1 - i) * 1.2 for i in range(len(spreads))]
    mark(ax.barh(ys, [s.spread * 100 for s in spreads], 0.5, left=[s.worst_rate * 100 for s in spreads],
                 color=[_color(n, names) for n in names], alpha=0.35))
    mark(ax.scatter([s.worst_rate * 100 for s in spreads], ys, marker="|", s=120, color="#333333",
                    label="worst reproducer"))
    mark(ax.scatter([s.best_rate * 100 for s in spreads], ys, marker="D", s=22, color="#333333",
                    label="best reproducer"))
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_ylim(-0.8, ys[0] + 0.8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("success rate (%)")
    ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)
    _legend(ax, "")
    _title(fig, "Best vs worst reproducer under each condition")
    return []


def _cost_time(fig: Any, report: BenchReport, mark: _Marks) -> list[str]:
    rows = report.cost_time
    panels: list[tuple[str, list[float | None], str]] = []
    notes = []
    if any(c.wall_s_cells for c in rows):
        panels.append(("mean wall time per cell (s)", [c.wall_s_mean for c in rows], "time"))
    else:
        notes.append("No wall time was recorded for any cell.")
    if any(c.cost_cells for c in rows):
        panels.append(("mean cost per cell (USD)", [c.cost_usd_mean for c in rows], "cost"))
    else:
        notes.append("No cost was reported (metered or stated) by any cell: there is no cost to plot.")
    if not panels:
        return notes
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    names = [c.condition for c in rows]
    labels = [_label(n) for n in names]
    _frame(fig, len(rows) * 1.2, labels, panels=len(panels))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    ys = [(len(rows) - 1 - i) * 1.2 for i in range(len(rows))]
    for k, (ax, (xlabel, values, _)) in enumerate(zip(axes, panels)):
        drawn = [(y, v, _color(n, names)) for y, v, n in zip(ys, values, names) if v is not None]
        mark(ax.barh([y for y, _, _ in drawn], [v for _, v, _ in drawn], 0.6, color=[c for _, _, c in drawn]))
        for y, v in zip(ys, values):
            if v is None:
                ax.text(0, y, " none recorded", va="center", ha="left", fontsize=7, color="#777777")
        ax.set_yticks(ys, labels if k == 0 else [""] * len(ys), fontsize=8)
        ax.set_ylim(-0.8, ys[0] + 0.8)
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, max([v for _, v, _ in drawn] + [1e-9]) * 1.1)
        # Few ticks in short spellings: side by side, two panels have half the width, and a cost of
        # a few thousandths of a dollar spelt '0.000025' overlapped its neighbours.
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
        ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
    _title(fig, " and ".join(t for _, _, t in panels).capitalize() + " per condition")
    return notes


def _pareto(fig: Any, report: BenchReport, mark: _Marks) -> list[str]:
    """Success rate against mean cost per cell, one point per reproducer and condition, with the
    Pareto frontier (as HAL's leaderboard plots agents)."""
    points = [p for p in report.pareto if p.cost_usd_mean is not None and p.rate is not None]
    if not points:
        return ["No cost was reported (metered or stated) by any cell: there is no accuracy–cost plot."]
    notes = []
    unplaced = len(report.pareto) - len(points)
    if unplaced:
        notes.append(f"{unplaced} reproducer × condition group(s) reported no cost and are not plotted.")
    rate_of = {(g.reproducer, g.condition): g.rate for g in report.by_reproducer_condition}
    conditions = sorted({p.condition for p in points})
    reproducers = sorted({p.reproducer for p in points})
    shaped = len(reproducers) <= len(_MARKERS)
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    handles = [Line2D([], [], linestyle="none", marker="s", markersize=6, color=_color(c, conditions),
                      label=_label(c)) for c in conditions]
    if shaped:
        handles += [Line2D([], [], linestyle="none", marker=_MARKERS[i], markersize=6, color="#555555",
                           markerfacecolor="none", label=_short(r)) for i, r in enumerate(reproducers)]
    handles.append(Line2D([], [], color="#333333", linestyle="--", linewidth=0.9, label="Pareto frontier"))
    _frame(fig, 10, (), [str(h.get_label()) for h in handles], ylabel=True)
    ax = fig.add_subplot()
    for p in points:
        assert p.cost_usd_mean is not None and p.rate is not None
        rate = rate_of.get((p.reproducer, p.condition))
        low = rate.ci_low if rate is not None and rate.ci_low is not None else p.rate
        high = rate.ci_high if rate is not None and rate.ci_high is not None else p.rate
        color = _color(p.condition, conditions)
        mark(ax.errorbar([p.cost_usd_mean], [p.rate * 100], yerr=[[(p.rate - low) * 100], [(high - p.rate) * 100]],
                         fmt="none", ecolor=color, elinewidth=0.7, alpha=0.6))
        mark(ax.scatter([p.cost_usd_mean], [p.rate * 100], s=30,
                        marker=_MARKERS[reproducers.index(p.reproducer)] if shaped else "o",
                        color=color, edgecolors="#000000" if p.frontier else color, linewidths=1.0, zorder=3))
    frontier = sorted((p.cost_usd_mean, p.rate * 100) for p in points if p.frontier
                      and p.cost_usd_mean is not None and p.rate is not None)
    mark(ax.step([c for c, _ in frontier], [r for _, r in frontier], where="post", color="#333333", linestyle="--",
                 linewidth=0.9, zorder=2))
    costs = [c for c, _ in ((p.cost_usd_mean, 0) for p in points) if c is not None]
    if min(costs) > 0 and max(costs) / min(costs) > 30:
        ax.set_xscale("log")
    else:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    ax.set_ylim(-3, 103)
    ax.set_xlabel("mean cost per cell (USD; metered, else stated)")
    ax.set_ylabel("success rate (%)")
    ax.grid(color="#eeeeee", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
              frameon=False)
    _title(fig, f"Accuracy against cost, per reproducer and condition ({len(points)} points; "
           "frontier: table 'Accuracy and cost')")
    return notes


def _factorial(fig: Any, report: BenchReport, mark: _Marks) -> list[str]:
    """Each effect of the pooled factorial analysis with its interval, main effects first."""
    if not report.factorial:
        return ["No ablation condition: there is no factorial effect to show."]
    pooled = report.factorial[0]
    effects = [e for e in pooled.effects if e.estimate is not None]
    if not effects:
        return ["A condition of the factorial analysis has no cell: no effect could be estimated."]
    labels = [_short(" × ".join(e.parts)) for e in effects]
    _frame(fig, len(effects), labels, min_height=2.6)
    ax = fig.add_subplot()
    ys = list(range(len(effects)))[::-1]
    for y, e in zip(ys, effects):
        assert e.estimate is not None
        low = e.ci_low if e.ci_low is not None else e.estimate
        high = e.ci_high if e.ci_high is not None else e.estimate
        color = _COLORS["refined"] if len(e.parts) == 1 else _OTHER
        mark(ax.errorbar([e.estimate * 100], [y], xerr=[[(e.estimate - low) * 100], [(high - e.estimate) * 100]],
                         fmt="o", color=color, capsize=3))
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_ylim(-0.7, len(effects) - 0.3)
    ax.set_xlabel("effect on the success rate (percentage points; with the part minus without)")
    _title(fig, f"Main effects and interactions ({pooled.design} design, {_ci(report)}, papers resampled)")
    return []


#: (id, caption, drawer) of each plot, in page order. A drawer sizes the figure itself and
#: returns the sentences to show for what it could not draw (all of it: no axes, no SVG).
PLOTS: list[tuple[str, str, Callable[[Any, BenchReport, _Marks], list[str]]]] = [
    ("by-reproducer", "Success rate by reproducer × condition, sorted", _by_reproducer),
    ("pareto", "Accuracy–cost Pareto plot per reproducer and condition", _pareto),
    ("by-stability", "Stable versus variable tasks", _by_stability),
    ("by-paper", "Per-paper breakdown", _by_paper),
    ("paired", "Paired per-task differences", _paired),
    ("spread", "Spread between the best and the worst reproducer", _spread),
    ("cost-time", "Time and cost per condition", _cost_time),
    ("factorial", "Effects of the refined artifact's parts: main effects and interactions", _factorial),
]


def render_plots(report: BenchReport) -> dict[str, Plot]:
    """Plot id -> its :class:`Plot`, for every plot of :data:`PLOTS`."""
    import matplotlib
    from matplotlib.figure import Figure

    out: dict[str, Plot] = {}
    for ident, caption, draw in PLOTS:
        # Fixed margins and a figure-level title: constrained layout (and an axes title placed
        # automatically) measure every tick label again, half the drawing time.
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"rra-{ident}", "font.size": 9}):
            fig = Figure(figsize=(_WIDTH_IN, 3.2))
            notes = draw(fig, report, _Marks(ident))
            if not fig.axes:
                out[ident] = Plot(None, notes)
                continue
            buffer = io.StringIO()
            fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
        text = buffer.getvalue()
        svg = text[text.find("<svg"):]
        # The figure scales with the page; the caption is what a screen reader says.
        svg = svg.replace("<svg ", f'<svg role="img" aria-label="{caption}" ', 1)
        out[ident] = Plot(svg, notes)
    return out
