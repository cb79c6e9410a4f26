"""Data sources the launchers read."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import VISIBLE, Id, RelPath, RRAModel, Sha256

__all__ = ["Access", "DataFile", "DataSource"]


class Access(str, Enum):
    """Who may obtain a data source."""

    PUBLIC = "public"
    REGISTRATION = "registration"
    RESTRICTED = "restricted"


class DataFile(RRAModel):
    """One file of a data source, where it must be placed and its checksum."""

    path: RelPath = Field(description="Where the file must be placed, relative to the artifact root.")
    sha256: Sha256 = Field(description="SHA-256 of the file.")
    size: int | None = Field(default=None, ge=0, description="Size in bytes.")


class DataSource(RRAModel):
    """A dataset: where it comes from, its license, access level and files."""

    id: Id
    title: Annotated[str, StringConstraints(min_length=1)] | None = Field(default=None, description="Name.")
    url: Annotated[str, StringConstraints(pattern=rf"^[a-z][a-z0-9+.-]*://{VISIBLE}+$")] | None = Field(
        default=None, description="Where to download it."
    )
    doi: Annotated[str, StringConstraints(pattern=rf"^10\.[0-9]{{4,9}}/{VISIBLE}+$")] | None = Field(
        default=None, description="DOI of the dataset."
    )
    license: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="SPDX identifier or license name; 'unknown' when none is stated."
    )
    access: Access = Field(description="'public', 'registration' (free after sign-up) or 'restricted'.")
    shipped: bool = Field(
        default=False, description="True when the files are inside the artifact; false when fetched."
    )
    files: list[DataFile] = Field(min_length=1, description="Files with their placement and checksum.")
