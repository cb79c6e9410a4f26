"""Starting a reproducer command in a workspace, within its wall-clock limit.

The command runs with ``sh -c`` in its own session (process group), so that a timeout or an
interruption stops everything it started; after the leader exits, what is left of its group is
killed too, so nothing it left behind can change the workspace after the attempt ended.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..agents.sandbox import stop_leftover

__all__ = ["GRACE_S", "PGID_NAME", "ReproducerExit", "kill_leftover", "start_reproducer"]

#: The file (beside the workspace) that names a running reproducer's process group, so that a
#: benchmark resumed after the evaluator was killed can stop a reproducer it left behind.
PGID_NAME = "reproducer.pgid"

#: Seconds between SIGTERM and SIGKILL when a reproducer is stopped.
GRACE_S = 5.0


@dataclass(frozen=True)
class ReproducerExit:
    """How a reproducer ended: exit status (negative: the signal), whether the evaluator stopped it
    ('timeout' or 'interrupted', else None), when it started and ended (epoch seconds)."""

    exit_status: int | None
    stopped: str | None
    started: float
    ended: float

    @property
    def wall_s(self) -> float:
        """Wall-clock seconds it ran."""
        return max(0.0, self.ended - self.started)


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(proc: subprocess.Popen[bytes]) -> None:
    _kill_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid, signal.SIGKILL)
        proc.wait()


def start_reproducer(command: str, workspace: Path, env: Mapping[str, str], logs: Path, limit_s: float,
                     stop: threading.Event | None = None, memory_limit_mib: int | None = None) -> ReproducerExit:
    """Run ``command`` in ``workspace`` with ``env``; stdout and stderr go to ``logs``/reproducer.*.log
    (outside the workspace). Stopped (process group killed) after ``limit_s`` or when ``stop`` is set.
    ``memory_limit_mib`` limits the address space of the command and everything it starts (the
    shell's ``ulimit -v``: set in the child itself, since a preexec function is unsafe while the
    executor's threads run)."""
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "reproducer.stdout.log", "wb") as out, open(logs / "reproducer.stderr.log", "wb") as err:
        started = time.time()
        argv = ["sh", "-c", command]
        if memory_limit_mib is not None:
            argv = ["sh", "-c", f'ulimit -v {int(memory_limit_mib) * 1024} || exit 125; exec sh -c "$1"', "sh",
                    command]
        proc = subprocess.Popen(argv, cwd=workspace, env=dict(env), stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err, start_new_session=True, close_fds=True)
        (logs / PGID_NAME).write_text(f"{proc.pid}\n", encoding="ascii")
        deadline = time.monotonic() + limit_s
        stopped: str | None = None
        while True:
            try:
                proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            if stop is not None and stop.is_set():
                stopped = "interrupted"
            elif time.monotonic() >= deadline:
                stopped = "timeout"
            if stopped is not None:
                _stop(proc)
                break
        ended = time.time()
        # Whatever the command left running in its group goes too.
        _kill_group(proc.pid, signal.SIGKILL)
        (logs / PGID_NAME).unlink(missing_ok=True)
    return ReproducerExit(proc.returncode, stopped, started, ended)


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
    _kill_group(pgid, signal.SIGKILL)
    return True
