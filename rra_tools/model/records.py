"""Change records and paper-code discrepancies: what the artifact altered and why."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import Id, RelPath, RRAModel

__all__ = ["AltersMethod", "Affects", "Change", "ChangeKind", "Discrepancy", "Follows"]

Text = Annotated[str, StringConstraints(min_length=1)]


class ChangeKind(str, Enum):
    """What sort of change was made to the upstream code or setup."""

    DEPENDENCY_PIN = "dependency-pin"
    LOADER_REPAIR = "loader-repair"
    BUG_FIX = "bug-fix"
    CONFIG = "config"
    PATH = "path"
    PERFORMANCE = "performance"
    OTHER = "other"


class AltersMethod(str, Enum):
    """Whether a change may alter the method the paper describes."""

    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


class Follows(str, Enum):
    """Which side of a discrepancy the artifact follows."""

    PAPER = "paper"
    CODE = "code"


class Affects(RRAModel):
    """Launchers and claims a record bears on."""

    launchers: list[Id] = Field(default_factory=list, description="Affected launcher ids.")
    claims: list[Id] = Field(default_factory=list, description="Affected claim ids.")


class Change(RRAModel):
    """One change made to the upstream code, configuration or environment."""

    id: Id
    kind: ChangeKind = Field(
        description="dependency-pin, loader-repair, bug-fix, config, path, performance or other."
    )
    summary: Text = Field(description="One line saying what changed.")
    files: list[RelPath] = Field(default_factory=list, description="Files of the artifact it touches.")
    patch: RelPath | None = Field(default=None, description="Patch file of code.patches implementing it.")
    rationale: Text = Field(description="Why the change was needed.")
    evidence: Text = Field(description="What shows it works: an error it fixes, a test, a run record.")
    alters_method: AltersMethod = Field(
        description="'yes', 'no' or 'unknown': whether it may change what the paper's method computes."
    )
    affects: Affects = Field(default_factory=Affects, description="Affected launchers and claims.")


class Discrepancy(RRAModel):
    """A place where the paper and its code disagree."""

    id: Id
    paper_says: Text = Field(description="What the paper states.")
    code_does: Text = Field(description="What the code does.")
    follows: Follows = Field(description="Which one the artifact follows: 'paper' or 'code'.")
    rationale: Text = Field(description="Why the artifact follows that side.")
    impact: Text = Field(description="Expected effect on the results.")
    claims: list[Id] = Field(default_factory=list, description="Claims it bears on.")
