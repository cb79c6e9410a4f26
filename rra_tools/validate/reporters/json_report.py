"""Machine-readable report (``--format json``), valid against ``schemas/rra-report-1.0.schema.json``.

Built from plain dicts rather than the pydantic model in :mod:`rra_tools.model.report` so that
``rra validate`` does not pay pydantic's import time; a test checks the output against the
schema generated from that model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ... import SPEC_VERSION, __version__
from ..diagnostics import Diagnostic, Severity
from ..result import ValidationReport, ValidationResult

__all__ = ["LEVELS", "render_json", "report_dict"]

#: Level names the report schema admits (``rra_tools.model.review.Level``).
LEVELS = ("available", "functional", "reproduced")


def _counts(count: Callable[[Severity], int]) -> dict[str, int]:
    return {s.label: count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)}


def _diagnostic(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.label,
        "message": d.message,
        "pointer": d.pointer,
    }
    # The schema has no nulls: unknown positions and absent hints are left out.
    optional = {"file": d.file, "line": d.line, "column": d.column, "hint": d.hint}
    out.update((key, value) for key, value in optional.items() if value is not None)
    out["url"] = d.url
    return out


def _known(levels: list[str] | None) -> list[str]:
    # A misspelt level is reported as RRA113; here it would make the report itself invalid.
    return [level for level in levels or () if level in LEVELS]


def _result(result: ValidationResult) -> dict[str, Any]:
    out: dict[str, Any] = {"input": result.input}
    if result.manifest is not None:
        out["manifest"] = result.manifest
    out["valid"] = result.valid
    out["counts"] = _counts(result.count)
    if result.levels_claimed is not None or result.levels_met is not None:
        out["levels"] = {"claimed": _known(result.levels_claimed), "met": _known(result.levels_met)}
    if not result.files_checked and not result.unreadable:
        out["files_checked"] = False
    out["diagnostics"] = [_diagnostic(d) for d in result.diagnostics]
    return out


def report_dict(report: ValidationReport) -> dict[str, Any]:
    """The report as the JSON-compatible dict that :func:`render_json` serialises."""
    return {
        "tool": {"name": "rra", "version": __version__, "spec_version": SPEC_VERSION},
        "results": [_result(r) for r in report.results],
        "counts": _counts(report.count),
    }


def render_json(report: ValidationReport) -> str:
    """The report as JSON: fixed key order, two-space indent, ASCII only, final newline."""
    return json.dumps(report_dict(report), indent=2, ensure_ascii=True) + "\n"
