"""The machine-readable validation report (``rra validate --format json``)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import RRAModel
from .review import Level

__all__ = ["Counts", "DiagnosticOut", "Levels", "Report", "Severity", "ToolInfo", "ValidationResult"]


class Severity(str, Enum):
    """How serious a finding is."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class DiagnosticOut(RRAModel):
    """One finding."""

    code: Annotated[str, StringConstraints(pattern=r"^RRA[0-9]{3}$")] = Field(description="Stable rule code.")
    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")] = Field(
        description="Kebab-case rule name."
    )
    severity: Severity
    message: str = Field(description="What is wrong, quoting the offending value.")
    pointer: str = Field(description="RFC 6901 JSON pointer into the manifest ('' is the whole document).")
    file: str | None = Field(default=None, description="File the finding is in; omitted when in none.")
    line: int | None = Field(default=None, ge=1, description="1-based line; omitted when unknown.")
    column: int | None = Field(default=None, ge=1, description="1-based column; omitted when unknown.")
    hint: str | None = Field(default=None, description="How to fix it; omitted when there is none.")
    url: str = Field(description="Documentation page of the rule.")


class Counts(RRAModel):
    """Number of findings by severity."""

    error: int = Field(ge=0)
    warning: int = Field(ge=0)
    info: int = Field(ge=0)


class Levels(RRAModel):
    """Levels the manifest claims and those the validator found met."""

    claimed: list[Level]
    met: list[Level]


class ValidationResult(RRAModel):
    """The outcome for one input path."""

    input: str = Field(description="The path as given on the command line ('-' for stdin).")
    manifest: str | None = Field(default=None, description="The manifest file read; omitted when none was.")
    valid: bool = Field(description="True when there is no finding of severity error.")
    counts: Counts
    levels: Levels | None = Field(
        default=None, description="Claimed and met levels; omitted when the manifest could not be read."
    )
    files_checked: bool = Field(
        default=True,
        description="False when the manifest was checked without its artifact's files (standard input, "
        "--manifest-only): the file checks were skipped and no level can be met; omitted when true.",
    )
    diagnostics: list[DiagnosticOut] = Field(description="Findings, most important first.")


class ToolInfo(RRAModel):
    """The implementation that produced the report."""

    name: str
    version: str
    spec_version: str = Field(description="Version of the RRA standard implemented.")


class Report(RRAModel):
    """Everything ``rra validate`` found, for every input."""

    tool: ToolInfo
    results: list[ValidationResult]
    counts: Counts = Field(description="Totals over all results.")
