"""Render a validation report as text, JSON, SARIF 2.1.0 or GitHub workflow annotations."""

from __future__ import annotations

from ..result import ValidationReport

__all__ = ["render"]


def render(report: ValidationReport, fmt: str, *, color: bool = False) -> str:
    """The report in format ``fmt`` ('text', 'json', 'sarif' or 'github')."""
    if fmt == "text":
        from .text import render_text

        return render_text(report, color=color)
    if fmt == "json":
        from .json_report import render_json

        return render_json(report)
    if fmt == "sarif":
        from .sarif import render_sarif

        return render_sarif(report)
    if fmt == "github":
        from .github import render_github

        return render_github(report)
    raise ValueError(f"unknown format {fmt!r}")
