"""Human-readable report: ``file:line:col: severity[CODE] message``, the source line, a caret."""

from __future__ import annotations

from ..diagnostics import Diagnostic, Severity
from ..result import ValidationReport, ValidationResult

__all__ = ["render_text"]

_COLORS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def _diagnostic(d: Diagnostic, result: ValidationResult, color: bool) -> list[str]:
    where = d.file or result.input
    if d.line is not None:
        where += f":{d.line}"
        if d.column is not None:
            where += f":{d.column}"
    label = _paint(f"{d.severity.label}[{d.code}]", "1;" + _COLORS[d.severity], color)
    lines = [f"{_paint(where, '1', color)}: {label} {d.message}"]
    source = result.source_line(d.line) if d.line is not None else None
    if source is not None:
        gutter = f"{d.line} | "
        lines.append(_paint(gutter, "34", color) + source)
        if d.column is not None:
            # Tabs keep their width so the caret lines up under the offending character.
            pad = "".join("\t" if ch == "\t" else " " for ch in source[: d.column - 1])
            lines.append(" " * len(gutter) + pad + _paint("^", _COLORS[d.severity], color))
    if d.pointer:
        lines.append(f"  = at: {d.pointer}")
    if d.hint:
        lines.append(f"  = hint: {d.hint}")
    lines.append(f"  = docs: {d.url}")
    return lines


def render_text(report: ValidationReport, *, color: bool = False) -> str:
    """The report as text, one block per finding, then a summary line."""
    out: list[str] = []
    for result in report.results:
        for d in result.diagnostics:
            out.extend(_diagnostic(d, result, color))
            out.append("")
    errors, warnings, infos = (report.count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO))
    clean = sum(1 for r in report.results if not r.diagnostics)
    summary = (f"{len(report.results)} input(s) checked: {clean} clean; "
               f"{errors} error(s), {warnings} warning(s), {infos} info")
    out.append(_paint(summary, "1;32" if errors == 0 else "1;31", color))
    return "\n".join(out) + "\n"
