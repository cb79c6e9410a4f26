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


def locked_environment(artifact: Artifact, interpreter: str | None = None) -> CreatedEnv:
    """Build or reuse the environment locked by the manifest; ArtifactError when there is no
    usable lock or it cannot be built. (Its ``path`` is ``RunOptions.env_dir``.) ``interpreter``:
    the manifest's interpreter version; the environment is built with an installed Python of that
    version when it is not this one's and one is found, else with this interpreter."""
    # The env layer's installer is imported only by runs that ask for it.
    from ..env.create import CreateError, create_env
    from ..env.locks import LockError

    lock = artifact.manifest.environment.lock
    if lock is None:
        raise ArtifactError("--env locked: the manifest's environment has no lock (run 'rra lock')")
    resolved = resolve_inside(artifact.root, lock.path, kind="file")
    if resolved.path is None:
        raise ArtifactError(f"--env locked: lock file {lock.path!r} is not a file inside the artifact")
    python = _interpreter(interpreter)
    try:
        return create_env(resolved.path, str(lock.format), expected_sha256=lock.sha256, display=lock.path,
                          artifact=artifact, python=python)
    except (CreateError, LockError, ArtifactError) as exc:
        raise ArtifactError(f"--env locked: {exc}") from None


def _interpreter(version: str | None) -> str | None:
    """An installed interpreter of the manifest's version when it is not this one's (the lock is
    resolved for that version); None: this interpreter (the same version, or none installed)."""
    import sys

    from ..env.interpreters import find_interpreter

    if not version or version.split(".")[:2] == [str(sys.version_info[0]), str(sys.version_info[1])]:
        return None
    return find_interpreter(version)
