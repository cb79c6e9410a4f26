"""Sandbox backends for cells: bubblewrap and Podman with the same picture of the host, the
limits they enforce, and ``none`` (the host itself) when asked for by name.

- :mod:`.backends`: which backend ``--sandbox auto|podman|bwrap|none`` gets here;
- :mod:`.layout`: what a cell sees (its mounts);
- :mod:`.argv`: each backend's command line;
- :mod:`.cgroup`: the cell's control group (bubblewrap's limits and its kill);
- :mod:`.runner`: running a cell's command and ending everything it started;
- ``cellinit.py``: the first program inside (the relay to the metering proxy).
"""

from __future__ import annotations

from .backends import CHOICES, Backend, for_gpus, probe, resolve_backend
from .errors import SandboxError
from .runner import (
    PROXY_PORT,
    SOCKET_NAME,
    CellCommand,
    SandboxExit,
    disk_use,
    new_run_dir,
    run_sandboxed,
    stop_leftover,
)

__all__ = ["CHOICES", "PROXY_PORT", "SOCKET_NAME", "Backend", "CellCommand", "SandboxError", "SandboxExit", "disk_use", "for_gpus",
           "new_run_dir", "probe", "resolve_backend", "run_sandboxed", "stop_leftover"]
