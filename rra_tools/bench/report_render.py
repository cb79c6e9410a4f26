"""A benchmark report as a self-contained HTML page and as a Markdown summary.

The page needs nothing but itself: styles inline, plots as inline SVG, no script, no font or
image fetched. Every text that comes from the results (task ids, details, evidence paths) is
escaped. Both renderings are deterministic for a given report.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from ..model.bench_report import BenchReport, GroupRate, Rate

__all__ = ["render_html", "render_markdown"]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f} %"


def _rate(rate: Rate) -> str:
    if rate.rate is None:
        return "no cell"
    ci = "" if rate.ci_low is None or rate.ci_high is None else f" [{rate.ci_low * 100:.1f}, {rate.ci_high * 100:.1f}]"
    return f"{rate.successes}/{rate.cells} = {_pct(rate.rate)}{ci}"


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
    tables += _factorial_tables(report)
    tables.append(("Infrastructure failures", ["cell", "kind", "detail"],
                   [[f.cell, f.kind, f.detail or ""] for f in report.infrastructure] or [["none", "", ""]]))
    tables.append(("Audit findings", ["cell", "kind", "confirmed", "detail", "evidence"],
                   [[f.cell, f.kind, "yes" if f.confirmed else "no (refuted)", f.detail, "; ".join(f.evidence)]
                    for f in report.findings] or [["none", "", "", "", ""]]))
    if report.full_cost is not None:
        from .report_cost import cost_tables

        tables.extend(cost_tables(report.full_cost))
    return tables


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
    return (f"Task set {report.taskset!r} ({report.mode}): {_rate(o.rate)} of all cells succeeded; "
            f"{report.stable_tasks} stable and {report.variable_tasks} variable tasks; "
            f"{len(report.infrastructure)} infrastructure failure(s); "
            f"{sum(f.confirmed for f in report.findings)} confirmed audit violation(s). "
            f"Intervals: {int(report.bootstrap.confidence * 100)} % percentile bootstrap, "
            f"{report.bootstrap.resamples} resamples of papers, seed {report.bootstrap.seed}."
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
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}figure{margin:1rem 0}figure svg{max-width:100%;height:auto}
figcaption{font-size:.9rem;color:#555}.summary{background:#f7f7f7;padding:.75rem;border-left:4px solid #1b9e77}
"""


def _html_table(title: str, header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<h2>{e(title)}</h2>\n<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"


def render_html(report: BenchReport, plots: dict[str, str], captions: dict[str, str]) -> str:
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
    for ident, svg in plots.items():
        parts.append(f"<figure id=\"plot-{e(ident)}\">{svg}<figcaption>{e(captions[ident])}</figcaption></figure>\n")
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
