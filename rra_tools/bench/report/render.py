"""A benchmark report as a self-contained HTML page and as a Markdown summary.

The page needs nothing but itself: styles inline, plots as inline SVG, no script, no font or
image fetched. Every text that comes from the results (task ids, details, evidence paths) is
escaped, and wraps anywhere: a 300-character evidence path stays inside the page. Both
renderings are deterministic for a given report.

A real benchmark has thousands of cells, so what is listed cell by cell is kept to what a
reader acts on: audit findings are counted by kind (confirmed and refuted); confirmed ones are
listed with their evidence, refuted ones only counted (each is in ``report.json``). In the page,
a list of more than :data:`_FOLD_ROWS` cells is folded (``<details>``, no script).
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ...model.bench_report import BenchReport, Finding, GroupRate, Rate

if TYPE_CHECKING:
    from .plots import Plot

__all__ = ["render_html", "render_markdown"]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f} %"


def _rate(rate: Rate) -> str:
    if rate.rate is None:
        return "no cell"
    ci = "" if rate.ci_low is None or rate.ci_high is None else f" [{rate.ci_low * 100:.1f}, {rate.ci_high * 100:.1f}]"
    # A Wilson interval (the bootstrap had no spread) is marked: it does not resample papers.
    how = " (Wilson)" if rate.interval == "wilson" else ""
    return f"{rate.successes}/{rate.cells} = {_pct(rate.rate)}{ci}{how}"


def _states(group: GroupRate) -> str:
    return ", ".join(f"{state} {n}" for state, n in group.states.items())


def _tables(report: BenchReport) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table, shared by both renderings."""
    tables: list[tuple[str, list[str], list[list[str]]]] = []
    tables.append(("Success by reproducer and condition", ["reproducer", "condition", "success [95 % CI]", "states"],
                   [[g.reproducer or "", g.condition or "", _rate(g.rate), _states(g)]
                    for g in report.by_reproducer_condition]))
    tables.append(("Stable and variable tasks", ["class", "condition", "success [95 % CI]", "states"],
                   [[g.stability or "", g.condition or "", _rate(g.rate), _states(g)] for g in report.by_stability]))
    tables.append(("Per paper", ["paper", "condition", "success [95 % CI]", "states"],
                   [[g.paper or "", g.condition or "", _rate(g.rate), _states(g)] for g in report.by_paper]))
    tables.append(("Paired differences between conditions", ["pair", "tasks", "mean difference [95 % CI]"],
                   [[f"{p.condition_b} − {p.condition_a}", str(len(p.tasks)),
                     "–" if p.mean is None else f"{p.mean * 100:+.1f} pp"
                     + ("" if p.ci_low is None or p.ci_high is None
                        else f" [{p.ci_low * 100:+.1f}, {p.ci_high * 100:+.1f}]")] for p in report.paired]
                   or [["one condition only", "–", "–"]]))
    tables.append(("Best and worst reproducer", ["condition", "best", "worst", "spread"],
                   [[s.condition, f"{s.best} {_pct(s.best_rate)}", f"{s.worst} {_pct(s.worst_rate)}",
                     f"{s.spread * 100:.1f} pp"] for s in report.spread]))
    tables.append(("Cost and time per condition",
                   ["condition", "cells", "mean wall time", "total wall time", "cost (reported by)", "tokens",
                    "GPU-hours"],
                   [[c.condition, str(c.cells), "–" if c.wall_s_mean is None else f"{c.wall_s_mean:.2f} s",
                     f"{c.wall_s_total:.1f} s", f"${c.cost_usd_total:.2f} ({c.cost_cells} cells)", str(c.tokens_total),
                     f"{c.gpu_hours_total:.3g}"] for c in report.cost_time]))
    tables.append((PARETO_TITLE, ["reproducer", "condition", "mean cost per cell", "cells with a cost", "success",
                                  "Pareto frontier"],
                   [[p.reproducer, p.condition, "not reported" if p.cost_usd_mean is None else f"${p.cost_usd_mean:.4f}",
                     f"{p.cost_cells}/{p.cells}", _pct(p.rate), "yes" if p.frontier else ""] for p in report.pareto]))
    tables += _factorial_tables(report)
    tables.append(("Infrastructure failures by kind", ["kind", "cells"],
                   [[kind, str(n)] for kind, n in sorted(_count(f.kind for f in report.infrastructure).items())]
                   or [["none", "0"]]))
    tables.append((INFRASTRUCTURE_TITLE, ["cell", "kind", "detail"],
                   [[f.cell, f.kind, f.detail or ""] for f in report.infrastructure] or [["none", "", ""]]))
    tables.append(("Audit findings by kind", ["kind", "confirmed", "refuted", "cells", "tasks"],
                   _finding_counts(report.findings) or [["none", "0", "0", "0", "0"]]))
    tables.append((FINDINGS_TITLE, ["cell", "kind", "detail", "evidence"],
                   [[f.cell, f.kind, f.detail, "; ".join(f.evidence)] for f in report.findings if f.confirmed]
                   or [["none", "", "", ""]]))
    if report.full_cost is not None:
        from .cost_tables import cost_tables

        tables.extend(cost_tables(report.full_cost))
    return tables


#: Tables that list cells one by one: folded in the page beyond :data:`_FOLD_ROWS` rows.
INFRASTRUCTURE_TITLE = "Infrastructure failures, cell by cell"
FINDINGS_TITLE = "Confirmed audit findings, with their evidence (refuted ones are counted above)"
PARETO_TITLE = "Accuracy and cost per reproducer and condition (cheapest first)"
_FOLD_ROWS = 25


def _count(items: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for item in items:
        counts[item] += 1
    return counts


def _finding_counts(findings: Sequence[Finding]) -> list[list[str]]:
    """One row per kind: confirmed and refuted findings, and the cells and tasks they were found in."""
    by_kind: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_kind[f.kind].append(f)
    return [[kind, str(sum(f.confirmed for f in group)), str(sum(not f.confirmed for f in group)),
             str(len({f.cell for f in group})), str(len({f.task for f in group}))]
            for kind, group in sorted(by_kind.items())]


def _pp(estimate: float | None, low: float | None, high: float | None) -> str:
    """An effect in percentage points with its interval."""
    if estimate is None:
        return "–"

    def pp(value: float) -> str:
        # Adding 0.0 turns a rounded -0.0 (float dust of a zero contrast) into 0.0.
        return f"{round(value * 100, 1) + 0.0:+.1f}"

    ci = "" if low is None or high is None else f" [{pp(low)}, {pp(high)}]"
    return f"{pp(estimate)} pp{ci}"


def _factorial_tables(report: BenchReport) -> list[tuple[str, list[str], list[list[str]]]]:
    """The conditions of the pooled factorial analysis, and every analysis's effects."""
    if not report.factorial:
        return []
    pooled = report.factorial[0]
    conditions = [[c.condition, ", ".join(c.without) or "(nothing)", _rate(c.rate)] for c in pooled.conditions]
    effects = []
    for analysis in report.factorial:
        who = analysis.reproducer or "all (pooled)"
        for e in analysis.effects:
            kind = "main effect" if len(e.parts) == 1 else f"{len(e.parts)}-way interaction"
            effects.append([who, kind, " × ".join(e.parts), _pp(e.estimate, e.ci_low, e.ci_high)])
    design = (f"{pooled.design} design over {', '.join(pooled.parts)}"
              + (f"; not run: {', '.join(pooled.missing)}" if pooled.missing else ""))
    return [(f"Ablations: success without each combination of parts ({design})",
             ["condition", "removed", "success [95 % CI]"], conditions),
            ("Factorial effects on the success rate (with the part minus without; interactions as 2^k contrasts)",
             ["reproducers", "effect", "parts", "estimate [95 % CI]"], effects)]


def _main_effects(report: BenchReport) -> str:
    if not report.factorial:
        return ""
    pooled = report.factorial[0]
    mains = [f"{e.parts[0]} {_pp(e.estimate, e.ci_low, e.ci_high)}" for e in pooled.effects if len(e.parts) == 1]
    return f" Main effects on success (all reproducers, {pooled.design} design): {'; '.join(mains)}."


def _summary(report: BenchReport) -> str:
    o = report.overall
    refuted = sum(not f.confirmed for f in report.findings)
    return (f"Task set {report.taskset!r} ({report.mode}): {_rate(o.rate)} of all cells succeeded; "
            f"{report.stable_tasks} stable and {report.variable_tasks} variable tasks; "
            f"{len(report.infrastructure)} infrastructure failure(s); "
            f"{sum(f.confirmed for f in report.findings)} confirmed audit violation(s)"
            + (f" and {refuted} refuted finding(s)" if refuted else "") + ". "
            f"Intervals: {int(report.bootstrap.confidence * 100)} % percentile bootstrap, "
            f"{report.bootstrap.resamples} resamples of papers, seed {report.bootstrap.seed}; a Wilson score "
            "interval over cells where the bootstrap has no spread (a rate of 0 or 100 %, or one paper)."
            + _main_effects(report) + _isolation(report))


def _isolation(report: BenchReport) -> str:
    text = ""
    if report.unisolated:
        text += (f" WARNING: {len(report.unisolated)} cell(s) ran unisolated (--sandbox none), able to read the "
                 f"references and reach the network: {', '.join(report.unisolated[:5])}"
                 + (" ..." if len(report.unisolated) > 5 else "") + ".")
    if report.price_tables:
        text += f" Metered costs priced with {', '.join(report.price_tables)}."
    return text


_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:72rem;color:#222;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f3f3f3}figure{margin:1rem 0}figure svg{max-width:100%;height:auto}
figcaption{font-size:.9rem;color:#555}.summary{background:#f7f7f7;padding:.75rem;border-left:4px solid #1b9e77}
.no-data{font-style:italic;color:#555;margin:.25rem 0}summary{cursor:pointer;color:#555;font-size:.9rem}
"""


def _html_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if title in (INFRASTRUCTURE_TITLE, FINDINGS_TITLE) and len(rows) > _FOLD_ROWS:
        table = f"<details><summary>{len(rows)} cells: show them</summary>{table}</details>"
    return f"<h2>{e(title)}</h2>\n{table}\n"


def _figure(ident: str, plot: Plot, caption: str) -> str:
    e = html.escape
    notes = "".join(f"<p class=\"no-data\">{e(n)}</p>" for n in plot.notes)
    return f"<figure id=\"plot-{e(ident)}\">{plot.svg or ''}{notes}<figcaption>{e(caption)}</figcaption></figure>\n"


def render_html(report: BenchReport, plots: dict[str, Plot], captions: dict[str, str]) -> str:
    """The self-contained page: summary, the plots, then every table."""
    e = html.escape
    parts = ["<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
             f"<title>{e('Benchmark report: ' + report.taskset)}</title>\n<style>{_CSS}</style>\n",
             "<link rel=\"icon\" href=\"data:,\">\n</head>\n<body>\n",
             f"<h1>{e('Benchmark report: ' + report.taskset)}</h1>\n",
             f"<p class=\"summary\">{e(_summary(report))}</p>\n",
             f"<p>Made from <code>{e(report.results)}</code>. Every cell counts in its denominator, whatever its "
             "state.</p>\n"]
    for ident, plot in plots.items():
        parts.append(_figure(ident, plot, captions[ident]))
    for title, header, rows in _tables(report):
        parts.append(_html_table(title, header, rows))
    parts.append("</body>\n</html>\n")
    return "".join(parts)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: BenchReport) -> str:
    """The summary and every table, in Markdown (the plots are in the HTML page)."""
    lines = [f"# Benchmark report: {report.taskset}", "", _summary(report), "",
             "Plots: see `report.html` beside this file.", ""]
    for title, header, rows in _tables(report):
        lines += [f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
        lines.append("")
    return "\n".join(lines)
