"""Where the artifact's code comes from: an upstream commit plus patches, or a shipped tree."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import Id, RelPath, RRAModel, Sha256

__all__ = ["Code", "Patch", "ShippedTree", "Upstream"]


class Upstream(RRAModel):
    """The public repository the code is taken from, pinned to one commit."""

    url: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="Clone URL of the upstream repository."
    )
    commit: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="The full 40-hex commit the artifact builds on; branches and tags are not pins."
    )


class Patch(RRAModel):
    """One patch file of the series applied, in order, on top of the upstream commit."""

    path: RelPath = Field(description="Path of the patch file (unified diff) inside the artifact.")
    sha256: Sha256 = Field(description="SHA-256 of the patch file.")
    change: Id | None = Field(default=None, description="Id of the change record this patch implements.")


class ShippedTree(RRAModel):
    """The code is shipped inside the artifact rather than fetched from upstream."""

    path: RelPath = Field(description="Directory of the shipped code, relative to the artifact root.")


class Code(RRAModel):
    """The codebase: upstream + commit (+ ordered patch series), or a shipped tree, or both."""

    license: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="SPDX license expression of the code, e.g. 'MIT' or 'Apache-2.0 OR MIT'."
    )
    upstream: Upstream | None = Field(default=None, description="Upstream repository and commit.")
    patches: list[Patch] = Field(
        default_factory=list, description="Ordered patch series applied on the upstream commit."
    )
    tree: ShippedTree | None = Field(default=None, description="Code shipped inside the artifact.")
