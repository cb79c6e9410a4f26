"""The Python environment of a ``--env locked`` run: the one ``rra env create`` builds from the
manifest's lock (hash-checked, cached by the lock's digest and reused)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..io.paths import resolve_inside
from .errors import ArtifactError
from .plan import Artifact

if TYPE_CHECKING:
    from ..env.create import CreatedEnv

__all__ = ["locked_environment"]


def locked_environment(artifact: Artifact) -> CreatedEnv:
    """Build or reuse the environment locked by the manifest; ArtifactError when there is no
    usable lock or it cannot be built. (Its ``path`` is ``RunOptions.env_dir``.)"""
    # The env layer's installer is imported only by runs that ask for it.
    from ..env.create import CreateError, create_env
    from ..env.locks import LockError

    lock = artifact.manifest.environment.lock
    if lock is None:
        raise ArtifactError("--env locked: the manifest's environment has no lock (run 'rra lock')")
    resolved = resolve_inside(artifact.root, lock.path, kind="file")
    if resolved.path is None:
        raise ArtifactError(f"--env locked: lock file {lock.path!r} is not a file inside the artifact")
    try:
        return create_env(resolved.path, str(lock.format), expected_sha256=lock.sha256, display=lock.path,
                          artifact=artifact)
    except (CreateError, LockError, ArtifactError) as exc:
        raise ArtifactError(f"--env locked: {exc}") from None
