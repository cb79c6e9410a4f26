"""The RRA manifest (rra.yaml): the root document of an artifact."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import Id, RRAModel
from .claims import Claim
from .code import Code
from .data import DataSource
from .environment import Environment
from .launchers import Launcher
from .paper import Paper
from .records import Change, Discrepancy
from .review import Evidence, Guide, Level, Review

__all__ = ["Manifest"]


class Manifest(RRAModel):
    """A Refined Reproducible Artifact: code, environment, launchers, claims and their evidence."""

    rra_version: Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+$")] = Field(
        description="Version of the RRA standard the manifest follows, 'major.minor'."
    )
    id: Id = Field(description="Identifier of the artifact.")
    title: Annotated[str, StringConstraints(min_length=1)] = Field(description="Title of the artifact.")
    paper: Paper
    code: Code
    environment: Environment
    data: list[DataSource] = Field(default_factory=list, description="Data sources.")
    launchers: list[Launcher] = Field(min_length=1, description="Launchers, one per experiment step.")
    claims: list[Claim] = Field(default_factory=list, description="Numbers of the paper the artifact reproduces.")
    changes: list[Change] = Field(default_factory=list, description="Changes made to the upstream code or setup.")
    discrepancies: list[Discrepancy] = Field(default_factory=list, description="Paper-code discrepancies.")
    guide: Guide | None = Field(default=None, description="The rendered reproduction guide.")
    review: Review | None = Field(default=None, description="Independent review.")
    evidence: Evidence = Field(default_factory=Evidence, description="Where run records are kept.")
    levels: list[Level] = Field(default_factory=list, description="Levels the artifact claims.")
