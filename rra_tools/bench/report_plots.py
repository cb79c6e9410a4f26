"""The plots of a benchmark report, drawn by matplotlib as SVG text to embed in the HTML page.

matplotlib is imported here only (extra ``report``). Figures are made with ``Figure`` and the
SVG canvas directly, not pyplot: no global figure manager, no GUI backend. Text stays text in
the SVG (``svg.fonttype: none``: a tenth of the size of glyph outlines) and each figure gets its
own ``svg.hashsalt``, so the ids inside two inline SVGs never collide and the same report is
byte-identical each time it is made.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from ..model.bench_report import BenchReport

__all__ = ["PLOTS", "render_plots"]

_COLORS = {"raw": "#d95f02", "refined": "#1b9e77"}
_OTHER = "#7570b3"
#: Colours of ablation conditions (refined-without-...), one per ablation in sorted order.
_ABLATION_COLORS = ("#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666", "#1f78b4", "#b2df8a",
                    "#fb9a99", "#cab2d6", "#fdbf6f", "#6a3d9a", "#b15928", "#a6cee3", "#ff7f00", "#999933")
#: More conditions than this in one plot: the legend moves beside the axes.
_MANY = 4


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


def _err(rates: list[Any]) -> list[list[float]]:
    """Error-bar lengths below and above each rate (zero where there is no interval)."""
    below = [max(0.0, (r.rate or 0) - (r.ci_low if r.ci_low is not None else r.rate or 0)) * 100 for r in rates]
    above = [max(0.0, (r.ci_high if r.ci_high is not None else r.rate or 0) - (r.rate or 0)) * 100 for r in rates]
    return [below, above]


def _bars(ax: Any, labels: list[str], groups: dict[str, list[Any]], title: str) -> None:
    """Grouped bars of success rates (one bar per condition at each label) with their intervals."""
    conditions = list(groups)
    width = 0.8 / max(1, len(conditions))
    for i, condition in enumerate(conditions):
        rates = groups[condition]
        xs = [j + (i - (len(conditions) - 1) / 2) * width for j in range(len(labels))]
        ax.bar(xs, [(r.rate or 0) * 100 if r is not None else 0 for r in rates], width,
               yerr=_err([r for r in rates]), capsize=3 if len(conditions) <= _MANY else 0, label=_label(condition),
               color=_color(condition, conditions))
    ax.set_xticks(range(len(labels)), labels, rotation=20 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center")
    ax.set_ylim(0, 105)
    ax.set_ylabel("success rate (%)")
    ax.set_title(title)
    if len(conditions) <= _MANY:
        ax.legend(title="condition", fontsize="small")
    else:
        # Ablations: one entry each, beside the axes, where they cannot hide the bars.
        ax.figure.subplots_adjust(right=0.68)
        ax.legend(title="condition", fontsize="x-small", title_fontsize="x-small", loc="upper left",
                  bbox_to_anchor=(1.01, 1.02), borderaxespad=0)


def _missing(rate_of: dict[tuple[str, str], Any], labels: list[str], conditions: list[str]) -> dict[str, list[Any]]:
    from ..model.bench_report import Rate

    empty = Rate(successes=0, cells=0, papers=0)
    return {c: [rate_of.get((label, c), empty) for label in labels] for c in conditions}


def _by_reproducer(fig: Any, report: BenchReport) -> None:
    groups = report.by_reproducer_condition
    labels = sorted({g.reproducer or "" for g in groups})
    conditions = sorted({g.condition or "" for g in groups})
    _bars(fig.add_subplot(), labels, _missing({(g.reproducer or "", g.condition or ""): g.rate for g in groups},
                                              labels, conditions),
          f"Success by reproducer and condition ({int(report.bootstrap.confidence * 100)} % CI, papers resampled)")


def _by_stability(fig: Any, report: BenchReport) -> None:
    groups = report.by_stability
    labels = sorted({g.stability or "" for g in groups})
    conditions = sorted({g.condition or "" for g in groups})
    _bars(fig.add_subplot(), labels, _missing({(g.stability or "", g.condition or ""): g.rate for g in groups},
                                              labels, conditions),
          f"Stable vs variable tasks ({report.stable_tasks} stable, {report.variable_tasks} variable)")


def _by_paper(fig: Any, report: BenchReport) -> None:
    groups = report.by_paper
    labels = sorted({g.paper or "" for g in groups})
    conditions = sorted({g.condition or "" for g in groups})
    _bars(fig.add_subplot(), labels, _missing({(g.paper or "", g.condition or ""): g.rate for g in groups},
                                              labels, conditions), "Success by paper (tasks resampled)")


def _paired_and_spread(fig: Any, report: BenchReport) -> None:
    left, right = fig.subplots(1, 2)
    if report.paired:
        pair = report.paired[0]
        diffs = sorted(d.difference * 100 for d in pair.tasks)
        left.scatter(diffs, range(len(diffs)), color=_OTHER, s=14)
        left.axvline(0, color="grey", linewidth=0.8)
        if pair.mean is not None:
            left.axvline(pair.mean * 100, color=_COLORS["refined"], linestyle="--",
                         label=f"mean {pair.mean * 100:+.1f} pp")
            left.legend(fontsize="small")
        left.set_xlabel(f"{pair.condition_b} - {pair.condition_a} (percentage points)")
        left.set_ylabel("tasks (sorted)")
        left.set_title(f"Paired per-task difference ({len(pair.tasks)} tasks)")
    else:
        left.text(0.5, 0.5, "one condition only:\nno paired differences", ha="center", va="center")
        left.set_axis_off()
        left.set_title("Paired per-task difference")
    spreads = report.spread
    names = [s.condition for s in spreads]
    right.bar(names, [s.worst_rate * 100 for s in spreads], color="#bbbbbb", label="worst reproducer")
    right.bar(names, [s.spread * 100 for s in spreads], bottom=[s.worst_rate * 100 for s in spreads],
              color=[_color(n, names) for n in names], label="best - worst")
    if len(names) > _MANY:
        fig.subplots_adjust(bottom=0.38)  # room for the slanted ablation names
        right.set_xticks(range(len(names)), [_label(n) for n in names], rotation=60, ha="right", fontsize="x-small")
    right.set_ylim(0, 105)
    right.set_ylabel("success rate (%)")
    right.set_title("Best vs worst reproducer")
    right.legend(fontsize="small")


def _cost_time(fig: Any, report: BenchReport) -> None:
    left, right = fig.subplots(1, 2)
    names = [c.condition for c in report.cost_time]
    colors = [_color(n, names) for n in names]
    left.bar(names, [c.wall_s_mean or 0 for c in report.cost_time], color=colors)
    left.set_ylabel("mean wall time per cell (s)")
    left.set_title("Time per condition")
    right.bar(names, [c.cost_usd_mean or 0 for c in report.cost_time], color=colors)
    right.set_ylabel("mean reported cost per cell (USD)")
    right.set_title("Cost per condition" + ("" if any(c.cost_cells for c in report.cost_time) else " (none reported)"))
    if len(names) > _MANY:
        fig.subplots_adjust(bottom=0.38)  # room for the slanted ablation names
        for ax in (left, right):
            ax.set_xticks(range(len(names)), [_label(n) for n in names], rotation=60, ha="right", fontsize="x-small")


def _factorial(fig: Any, report: BenchReport) -> None:
    """Each effect of the pooled factorial analysis with its interval, main effects first."""
    ax = fig.add_subplot()
    if not report.factorial:
        ax.text(0.5, 0.5, "no ablation condition:\nno factorial effects", ha="center", va="center")
        ax.set_axis_off()
        ax.set_title("Effects of the refined artifact's parts")
        return
    pooled = report.factorial[0]
    fig.subplots_adjust(left=0.3)  # room for the parts' names
    effects = [e for e in pooled.effects if e.estimate is not None]
    labels = [" × ".join(e.parts) for e in effects]
    ys = list(range(len(effects)))[::-1]
    for y, e in zip(ys, effects):
        assert e.estimate is not None
        low = e.ci_low if e.ci_low is not None else e.estimate
        high = e.ci_high if e.ci_high is not None else e.estimate
        color = _COLORS["refined"] if len(e.parts) == 1 else _OTHER
        ax.errorbar([e.estimate * 100], [y], xerr=[[(e.estimate - low) * 100], [(high - e.estimate) * 100]],
                    fmt="o", color=color, capsize=3)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(ys, labels)
    ax.set_xlabel("effect on the success rate (percentage points; with the part minus without)")
    ax.set_title(f"Main effects and interactions ({pooled.design} design, "
                 f"{int(report.bootstrap.confidence * 100)} % CI, papers resampled)")


#: (id, caption, size in inches, drawer) of each plot, in page order.
PLOTS: list[tuple[str, str, tuple[float, float], Callable[[Any, BenchReport], None]]] = [
    ("by-reproducer", "Success rate by reproducer × condition", (7.5, 3.6), _by_reproducer),
    ("by-stability", "Stable versus variable tasks", (6.0, 3.2), _by_stability),
    ("by-paper", "Per-paper breakdown", (7.5, 3.6), _by_paper),
    ("paired", "Paired per-task differences and reproducer spread", (9.0, 3.6), _paired_and_spread),
    ("cost-time", "Cost and time per condition", (8.0, 3.2), _cost_time),
    ("factorial", "Effects of the refined artifact's parts: main effects and interactions", (8.0, 4.2), _factorial),
]


def render_plots(report: BenchReport) -> dict[str, str]:
    """Plot id -> an ``<svg>`` element (no XML prolog), for every plot of :data:`PLOTS`."""
    import matplotlib
    from matplotlib.figure import Figure

    out: dict[str, str] = {}
    for ident, caption, size, draw in PLOTS:
        # A title at a fixed height: placed automatically, matplotlib measures every tick label
        # of the axes again to keep clear of them (a sixth of the drawing time), and there are
        # none above the axes.
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"rra-{ident}", "font.size": 9,
                                    "axes.titley": 1.0}):
            # Fixed margins: constrained layout measured every tick label again and took half the time.
            fig = Figure(figsize=size)
            fig.subplots_adjust(left=0.08, right=0.98, top=0.88, bottom=0.2, wspace=0.3)
            draw(fig, report)
            buffer = io.StringIO()
            fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
        text = buffer.getvalue()
        start = text.find("<svg")
        svg = text[start:]
        # The figure scales with the page; the title is what a screen reader says.
        svg = svg.replace("<svg ", f'<svg role="img" aria-label="{caption}" ', 1)
        out[ident] = svg
    return out
