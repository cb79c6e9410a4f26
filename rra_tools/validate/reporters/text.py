"""Human-readable report: ``file:line:col: severity[CODE] message``, the source line, a caret.

The carets span the offending token (a key, a scalar, a quoted string or a one-line flow
collection), found by reading the quoted source line; anything else gets a single caret.
"""

from __future__ import annotations

import unicodedata

from ..diagnostics import Diagnostic, Severity
from ..result import ValidationReport, ValidationResult

__all__ = ["render_text", "summary", "token_end"]

_COLORS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}
_FLOW_OPEN, _FLOW_CLOSE = "[{", "]}"


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def _visible(ch: str) -> str:
    # A manifest is untrusted: escape sequences must not reach the terminal, and invisible
    # characters (zero-width spaces, bidi overrides) are worth seeing when a value looks right.
    if ch == "\t":
        return ch
    category = unicodedata.category(ch)
    if category == "Cc":
        code = ord(ch)
        return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"
    return "\ufffd" if category == "Cf" else ch


def _clean(text: str) -> str:
    """``text`` with control and format characters replaced by one visible character each."""
    return text if text.isprintable() else "".join(_visible(ch) for ch in text)


def _cells(ch: str) -> int:
    """Terminal columns ``ch`` takes once cleaned (tabs are handled by the caller)."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _flow_depth(text: str) -> int:
    """How many flow collections are open at the end of ``text`` (quotes respected)."""
    depth, quote, i = 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'" and (i == 0 or text[i - 1] in " \t[{,:"):
            quote = ch
        elif ch in _FLOW_OPEN:
            depth += 1
        elif ch in _FLOW_CLOSE:
            depth = max(0, depth - 1)
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            break
        i += 1
    return depth


def _quoted_end(line: str, start: int) -> int | None:
    quote, i = line[start], start + 1
    while i < len(line):
        ch = line[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and line[i + 1:i + 2] == "'":
                i += 2
                continue
            return i + 1
        i += 1
    return None


def _flow_end(line: str, start: int) -> int | None:
    depth, i = 0, start
    while i < len(line):
        ch = line[i]
        if ch in "\"'":
            end = _quoted_end(line, i)
            if end is None:
                return None
            i = end
            continue
        if ch in _FLOW_OPEN:
            depth += 1
        elif ch in _FLOW_CLOSE:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def token_end(line: str, column: int, *, flow: bool = False) -> int:
    """End (0-based, exclusive) of the token starting at 1-based ``column`` of ``line``.

    ``flow`` says the whole document is in flow style (JSON), where ``,`` ends a plain value.

    >>> line = "  upstream: {url: x, commit: main}"
    >>> line[12:token_end(line, 13)], line[29:token_end(line, 30)]
    ('{url: x, commit: main}', 'main')
    """
    start = column - 1
    if start >= len(line):
        return start + 1
    first = line[start]
    end: int | None
    if first in "\"'":
        end = _quoted_end(line, start)
        return end if end is not None else max(start + 1, len(line.rstrip()))
    if first in _FLOW_OPEN:
        end = _flow_end(line, start)
        return end if end is not None else start + 1
    if first in "|>#,]}" or (first in "-?:" and line[start + 1:start + 2] in ("", " ", "\t")):
        return start + 1
    in_flow = flow or _flow_depth(line[:start]) > 0
    i = start
    while i < len(line):
        ch = line[i]
        after = line[i + 1:i + 2]
        if ch == ":" and (after in ("", " ", "\t") or (in_flow and after in ",[]{}")):
            break
        if ch == "#" and line[i - 1] in " \t":
            break
        if in_flow and ch in ",[]{}":
            break
        i += 1
    while i > start and line[i - 1] in " \t":
        i -= 1
    return max(i, start + 1)


def _caret(source: str, column: int, flow: bool) -> tuple[str, str]:
    """The padding up to ``column`` and the carets under the token starting there."""
    start = column - 1
    # Tabs stay tabs so the padding lines up whatever the terminal's tab width.
    pad = "".join("\t" if ch == "\t" else " " * _cells(ch) for ch in _clean(source[:start]))
    token = _clean(source[start:token_end(source, column, flow=flow)])
    return pad, "^" * max(1, sum(1 if ch == "\t" else _cells(ch) for ch in token))


#: Source lines longer than this are quoted as a window around the column (a minified JSON
#: manifest is one line of megabytes).
QUOTE_WIDTH = 200


def _window(source: str, column: int | None) -> tuple[str, int | None]:
    """At most QUOTE_WIDTH characters of ``source`` around ``column``, with '…' where cut, and
    the column in that window.

    >>> _window("x" * 300 + "KEY" + "y" * 300, 301)[0][:34]
    '…xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxKEY'
    """
    if len(source) <= QUOTE_WIDTH:
        return source, column
    start = max(0, min((column or 1) - 1 - 30, len(source) - QUOTE_WIDTH))
    prefix = "…" if start else ""
    suffix = "…" if start + QUOTE_WIDTH < len(source) else ""
    shown = prefix + source[start:start + QUOTE_WIDTH] + suffix
    return shown, None if column is None else column - start + len(prefix)


def _diagnostic(d: Diagnostic, result: ValidationResult, color: bool, flow: bool) -> list[str]:
    where = d.file or result.input
    if d.line is not None:
        where += f":{d.line}"
        if d.column is not None:
            where += f":{d.column}"
    label = _paint(f"{d.severity.label}[{d.code}]", "1;" + _COLORS[d.severity], color)
    lines = [f"{_paint(_clean(where), '1', color)}: {label} {_clean(d.message)}"]
    # The kept text is the manifest's; a finding in another file (a run record) has no quote.
    quotable = d.line is not None and d.file in (None, result.manifest)
    source = result.source_line(d.line) if quotable and d.line is not None else None
    if source is not None and d.line is not None:
        gutter = f"{d.line} | "
        source, column = _window(source, d.column)
        lines.append(_paint(gutter, "34", color) + _clean(source))
        if column is not None:
            pad, carets = _caret(source, column, flow)
            lines.append(" " * len(gutter) + pad + _paint(carets, _COLORS[d.severity], color))
    if d.pointer:
        lines.append(f"  = at: {_clean(d.pointer)}")
    if d.hint:
        lines.append(f"  = hint: {_clean(d.hint)}")
    lines.append(f"  = docs: {d.url}")
    return lines


def summary(report: ValidationReport) -> str:
    """One line counting inputs, clean inputs and findings by severity."""
    errors, warnings, infos = (report.count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO))
    clean = sum(1 for r in report.results if not r.diagnostics)
    line = (f"{len(report.results)} input(s) checked: {clean} clean; "
            f"{errors} error(s), {warnings} warning(s), {infos} info")
    unchecked = [r.input for r in report.results if not r.files_checked and not r.unreadable]
    if unchecked:
        # Clean without files is not clean with them: say which inputs were checked alone.
        line += (f"; artifact files not checked for {', '.join(_clean(i) for i in unchecked)} "
                 "(manifest only: no artifact root)")
    return line


def render_text(report: ValidationReport, *, color: bool = False) -> str:
    """The report as text, one block per finding, then a summary line."""
    out: list[str] = []
    for result in report.results:
        # Once per input: lstrip() copies the whole text.
        flow = (result.source_text or "").lstrip()[:1] in ("{", "[")
        for d in result.diagnostics:
            out.extend(_diagnostic(d, result, color, flow))
            out.append("")
    line = summary(report)
    out.append(_paint(line, "1;32" if report.count(Severity.ERROR) == 0 else "1;31", color))
    return "\n".join(out) + "\n"
