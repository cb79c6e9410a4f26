"""Identity of the artifact and the paper it reproduces."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import VISIBLE, RelPath, RRAModel

__all__ = ["Author", "Paper"]


class Author(RRAModel):
    """One author of the paper."""

    name: Annotated[str, StringConstraints(min_length=1)] = Field(description="Full name as printed.")
    orcid: Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]$")] | None = Field(
        default=None, description="ORCID iD without the URL prefix, e.g. '0000-0002-1825-0097'."
    )
    affiliation: str | None = Field(default=None, description="Affiliation as printed in the paper.")


class Paper(RRAModel):
    """Bibliographic identity of the paper whose results the artifact reproduces."""

    title: Annotated[str, StringConstraints(min_length=1)] = Field(description="Title of the paper.")
    authors: list[Author] = Field(min_length=1, description="Authors in the order printed.")
    venue: str | None = Field(default=None, description="Conference, journal or 'preprint'.")
    year: int | None = Field(default=None, ge=1900, le=2200, description="Year of publication.")
    doi: Annotated[str, StringConstraints(pattern=rf"^10\.[0-9]{{4,9}}/{VISIBLE}+$")] | None = Field(
        default=None, description="DOI without the resolver prefix, e.g. '10.1145/3368089.3409730'."
    )
    arxiv: Annotated[str, StringConstraints(pattern=r"^[0-9]{4}\.[0-9]{4,5}(v[0-9]+)?$")] | None = Field(
        default=None, description="arXiv identifier, e.g. '2106.09685' or '2106.09685v2'."
    )
    url: Annotated[str, StringConstraints(pattern=rf"^https?://{VISIBLE}+$")] | None = Field(
        default=None, description="Landing page of the paper."
    )
    citation_file: RelPath | None = Field(
        default=None, description="Path of a CITATION.cff file inside the artifact."
    )
