"""Stopping what an evaluator killed mid-cell left running, before the cell runs again.

A cell's command runs through :mod:`rra_tools.agents.sandbox` (its own session, its sandbox);
the file ``reproducer.pgid`` beside its workspace names its process group while it runs, and
``reproducer.sandbox`` its Podman container. A resumed benchmark reads both.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from ..agents.sandbox import stop_leftover

__all__ = ["PGID_NAME", "kill_leftover"]

#: The file (beside the workspace) that names a running reproducer's process group, so that a
#: benchmark resumed after the evaluator was killed can stop a reproducer it left behind.
PGID_NAME = "reproducer.pgid"


def kill_leftover(logs: Path, workspace: Path) -> bool:
    """Kill the process group of a reproducer that an earlier, killed evaluator left running in
    ``workspace`` (named by ``logs``/reproducer.pgid); True when one was found. The group is
    killed only while its leader still works in that workspace, so a reused process id is safe."""
    stop_leftover(logs)
    try:
        pgid = int((logs / PGID_NAME).read_text(encoding="ascii"))
        cwd = os.readlink(f"/proc/{pgid}/cwd")
    except (OSError, ValueError):
        return False
    if os.path.realpath(cwd) != os.path.realpath(workspace):
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return True
