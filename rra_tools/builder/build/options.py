"""What ``rra build`` was asked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Progress = Callable[[str], None]


@dataclass(frozen=True)
class BuildOptions:
    """What ``rra build`` was asked."""

    raw: Path
    #: The artifact directory; the same as ``raw`` for a build in place.
    artifact: Path
    upstream: str | None = None
    artifact_id: str | None = None
    title: str | None = None
    #: The agent command (``--agent``), or None: stop at the first decision.
    agent: str | None = None
    agent_timeout_s: float = 3600.0
    #: Why the lock step is skipped (``--skip-lock REASON``), or None to lock.
    skip_lock: str | None = None
    #: Runs of each claim's launcher that become reference observations (0: none).
    reference_runs: int = 3
    #: Repairs tried per launcher (and for the lock) before the build gives up.
    max_repairs: int = 3
    #: Where the review runs the launchers: 'locked' (a fresh environment from the lock),
    #: 'current' (this interpreter) or 'container' (the artifact's image).
    review_env: str = "locked"
    #: Where the build's own runs (execute, reference) run: 'locked' (the environment built from
    #: the manifest's lock, once) or 'current' (this interpreter).
    build_env: str = "locked"
    #: Where the agent command runs (``--sandbox``): 'auto', 'podman', 'bwrap' or 'none'.
    sandbox: str = "auto"
    #: Where its model calls go (``--upstream PROVIDER=URL``) and the price table (``--price-table``).
    upstreams: tuple[str, ...] = ()
    price_table: Path | None = None
