"""Running one command in a cell for the sandbox tests: the backends under test, the cell's
output, and the host's processes (what a cell may have left behind).

A backend that cannot run here fails the test (CI installs bubblewrap and Podman); only Podman
may be skipped, and only outside CI, with the reason and how to install it.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from rra_tools.agents.sandbox import Backend, CellCommand, SandboxExit, new_run_dir, probe, resolve_backend, run_sandboxed
from rra_tools.model.cell import SandboxLimits

__all__ = ["SANDBOXES", "Ran", "host_processes", "kill_host_processes", "run_cell", "sandbox_backend"]

#: The backends every escape is tried against.
SANDBOXES = ("bwrap", "podman")
#: PATH inside: this interpreter's environment first (``python3`` is the evaluator's Python).
PATH = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])

_runs = itertools.count()


def sandbox_backend(name: str) -> Backend:
    """The backend ``name`` ('none' included), or the test fails (skips: Podman outside CI)."""
    if name == "none":
        return resolve_backend("none")
    found = probe(name)
    if isinstance(found, Backend):
        return found
    if name == "podman" and not os.environ.get("CI"):
        pytest.skip(f"{found}; install Podman and runc (Debian: apt-get install podman runc) to run the "
                    "Podman sandbox tests (in CI they fail instead)")
    pytest.fail(f"the {name} sandbox cannot run here: {found}")


@dataclass
class Ran:
    """A command's run in a cell: how it ended and what it printed."""

    exit: SandboxExit
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout and stderr together."""
        return self.stdout + self.stderr


def run_cell(tmp_path: Path, backend: Backend, command: str, *, workspace: Path | None = None,
             env: Mapping[str, str] | None = None, limits: SandboxLimits | None = None,
             readonly: Sequence[Path] = (), hidden: Sequence[Path] = ()) -> Ran:
    """Run ``command`` (sh) in a cell under ``backend``; the workspace defaults to ``tmp_path/ws``,
    the limits to small ones (20 s, 256 MiB, 64 processes, 20 MiB of disk)."""
    ws = workspace if workspace is not None else tmp_path / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    logs = tmp_path / f"logs-{backend.name}-{next(_runs)}"
    cell = CellCommand(command=command, workspace=ws, env={"PATH": PATH, **(env or {})},
                       limits=limits or SandboxLimits(wall_clock_s=20, memory_mib=256, pids=64, disk_mib=20),
                       proxy=False, readonly=readonly, hidden=hidden)
    ended = run_sandboxed(cell, backend, requested=backend.name, logs=logs, run_dir=new_run_dir())
    return Ran(ended, (logs / "reproducer.stdout.log").read_text(errors="replace"),
               (logs / "reproducer.stderr.log").read_text(errors="replace"))


def host_processes(marker: str) -> list[int]:
    """The host's processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def kill_host_processes(marker: str) -> None:
    """SIGKILL the host's processes whose command line holds ``marker`` (a control run's leftovers)."""
    for pid in host_processes(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
