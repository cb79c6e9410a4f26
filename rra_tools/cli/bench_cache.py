"""The cache of artifacts named by an OCI reference, as the ``rra bench`` commands set it up
(``--cache``, else a directory of the benchmark's output), reporting each reference resolved."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..bench.artifacts import ArtifactCache
    from ..model.taskset import TaskSet

__all__ = ["artifact_cache"]


def artifact_cache(cache: str | None, output: str | None) -> Callable[[TaskSet], ArtifactCache]:
    """The cache of artifacts named by an OCI reference: --cache, else OUTPUT/artifacts; each
    reference resolved is reported on stderr (pulled now, or found in the cache)."""
    from pathlib import Path

    from ..bench.artifacts import ArtifactCache

    def report(reference: str, digest: str, pulled: bool) -> None:
        how = "pulled and verified" if pulled else "in the cache"
        click.echo(f"{reference}: {digest} {how}", err=True)

    def make(model: TaskSet) -> ArtifactCache:
        directory = Path(cache) if cache is not None else Path(output or f"bench-{model.id}") / "artifacts"
        return ArtifactCache(directory, on_fetch=report)

    return make
