"""GitHub Actions workflow commands (``--format github``): one annotation per finding.

Each finding becomes ``::error file=F,line=L,col=C,title=CODE name::message``; warnings use
``::warning`` and info ``::notice``. Values are escaped by the runner's rules so that no text
from a manifest can end the command early or start another one.
"""

from __future__ import annotations

from pathlib import Path

from ..diagnostics import Diagnostic, Severity
from ..result import ValidationReport, ValidationResult
from .sarif import source_path
from .text import summary

__all__ = ["escape_data", "escape_property", "render_github"]

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """Escape the message of a workflow command.

    >>> escape_data("50%\\ndone")
    '50%25%0Adone'
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value of a workflow command (``:`` and ``,`` separate properties).

    >>> escape_property("a,b: c")
    'a%2Cb%3A c'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(d: Diagnostic, result: ValidationResult, cwd: Path) -> str:
    props: list[tuple[str, str]] = []
    where = source_path(d.file or result.input, cwd)
    if where is not None:
        props.append(("file", where[0]))
        if d.line is not None:
            props.append(("line", str(d.line)))
            if d.column is not None:
                props.append(("col", str(d.column)))
    props.append(("title", f"{d.code} {d.name}"))
    body = [d.message]
    if d.pointer:
        body.append(f"at: {d.pointer}")
    if d.hint:
        body.append(f"hint: {d.hint}")
    body.append(f"docs: {d.url}")
    properties = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{_COMMANDS[d.severity]} {properties}::{escape_data(chr(10).join(body))}"


def render_github(report: ValidationReport) -> str:
    """The report as workflow commands, one per finding, then a summary notice."""
    cwd = Path.cwd()
    lines = [_annotation(d, r, cwd) for r in report.results for d in r.diagnostics]
    lines.append(f"::notice title=rra validate::{escape_data(summary(report))}")
    return "\n".join(lines) + "\n"
