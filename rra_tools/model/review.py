"""Guide, review, evidence and claimed levels."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import RelPath, RRAModel

__all__ = ["CleanShell", "Evidence", "Finding", "Guide", "Level", "Review", "Reviewer"]

Text = Annotated[str, StringConstraints(min_length=1)]


class Level(str, Enum):
    """Levels an artifact may claim, after the ACM badges."""

    AVAILABLE = "available"
    FUNCTIONAL = "functional"
    REPRODUCED = "reproduced"


class CleanShell(str, Enum):
    """Outcome of the reviewer's clean-shell re-run."""

    PASS = "pass"  # noqa: S105 - an outcome, not a password
    FAIL = "fail"
    NOT_RUN = "not-run"


class Guide(RRAModel):
    """The reproduction guide rendered from the manifest."""

    path: RelPath = Field(description="Path of the guide (Markdown) inside the artifact.")


class Reviewer(RRAModel):
    """Who or what reviewed the artifact."""

    name: Text = Field(description="Person or tool name.")
    kind: Annotated[str, StringConstraints(pattern=r"^(human|tool)$")] = Field(description="'human' or 'tool'.")


class Finding(RRAModel):
    """One review finding."""

    severity: Annotated[str, StringConstraints(pattern=r"^(info|minor|major|blocker)$")] = Field(
        description="'info', 'minor', 'major' or 'blocker'."
    )
    summary: Text = Field(description="What was found.")
    resolved: bool = Field(default=False, description="Whether the artifact was fixed since.")


class Review(RRAModel):
    """An independent review of the artifact."""

    reviewers: list[Reviewer] = Field(min_length=1, description="Who reviewed.")
    date: Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")] = Field(
        description="Date of the review, YYYY-MM-DD."
    )
    clean_shell: CleanShell = Field(description="Outcome of the clean-shell re-run.")
    findings: list[Finding] = Field(default_factory=list, description="Findings.")


class Evidence(RRAModel):
    """Where run records are kept."""

    run_records: RelPath = Field(
        default="runs", description="Directory holding one JSON run record per launcher execution."
    )
