"""Running one cell's command in its sandbox, within its limits, and ending everything it started.

:func:`run_sandboxed` lays out the cell (:mod:`.layout`), starts it under the backend, and
watches it from outside until it ends or must be stopped:

- the wall-clock limit, the caller's stop event and the metering proxy's budget event stop it;
- the workspace's disk use is measured every :data:`DISK_POLL_S` seconds (and every file is
  capped at the quota by the init program), and past the quota the cell is stopped;
- memory, processes and CPU are the kernel's to enforce (the cell's control group for
  bubblewrap, Podman's own options), and what was hit is read back from the group's counters.

When it ends, however it ends, the whole process tree goes: the sandbox's PID namespace dies
with its init, the control group is emptied by SIGKILL, and a Podman container is removed.
With the backend 'none' the command runs on the host as before (its own process group), and
the record says so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ...model.cell import SandboxLimits, SandboxMount, SandboxRecord
from .argv import bwrap_argv, gpu_device_paths, podman_argv
from .backends import Backend, podman_conf
from .cgroup import CellCgroup, open_cgroup
from .errors import SandboxError
from .layout import INSIDE_HOME, INSIDE_RUN, INSIDE_TMP, cell_mounts

__all__ = ["DISK_POLL_S", "GRACE_S", "PROXY_PORT", "SOCKET_NAME", "CellCommand", "SandboxExit", "disk_use", "new_run_dir", "stop_leftover",
           "run_sandboxed"]

#: Seconds between two measurements of the workspace's disk use.
DISK_POLL_S = 0.5
#: Seconds between SIGTERM and SIGKILL when a cell is stopped.
GRACE_S = 3.0
#: The port of the relay to the metering proxy on the sandbox's own loopback.
PROXY_PORT = 13131
#: The file beside the logs where bubblewrap reports the command's start (--json-status-fd).
STATUS_NAME = "sandbox.status.jsonl"
#: Podman's exit statuses for its own failures (125) and a command it could not start (126, 127).
PODMAN_SETUP_STATUSES = (125, 126, 127)
#: The file beside a running cell's logs naming its Podman container (see stop_leftover).
LEFTOVER_NAME = "reproducer.sandbox"
#: The init program's file name in the cell's run directory (shown as /run/rra).
INIT_NAME = "cellinit.py"
#: The proxy's socket's file name there.
SOCKET_NAME = "proxy.sock"


@dataclass(frozen=True)
class CellCommand:
    """What to run in a cell, and under which limits."""

    command: str
    workspace: Path
    env: Mapping[str, str]
    limits: SandboxLimits
    #: Host paths shown read-only: the reproducer's installation, hand-over inputs.
    readonly: Sequence[Path] = ()
    #: Host paths that must stay invisible (the references, the benchmark directory, other
    #: cells): a read-only path that holds one of them, or lies inside one, is refused.
    hidden: Sequence[Path] = ()
    #: Host GPU indices leased to the cell.
    gpus: Sequence[int] = ()
    #: Host directories shown read-write besides the workspace: an agent's transcript directory
    #: (outside the workspace, so the agent's own record is not part of what it submits).
    #: Counted in the disk quota with the workspace.
    writable: Sequence[Path] = ()
    #: Whether the cell gets a relay to the metering proxy (the proxy then listens on
    #: :func:`SandboxExit`'s socket path, given by :func:`run_sandboxed`'s ``on_socket``).
    proxy: bool = True


@dataclass
class SandboxExit:
    """How a cell ended: exit status (negative: the signal), who stopped it ('timeout',
    'interrupted', 'limit', 'setup' when the sandbox could not start it, or None), which limit ended it (memory, pids, disk, or the proxy's
    budget), when it started and ended (epoch seconds), and the sandbox record."""

    exit_status: int | None
    stopped: str | None
    limit: str | None
    started: float
    ended: float
    record: SandboxRecord
    escapes: list[str] = field(default_factory=list)
    #: Why the sandbox itself could not start the command (stopped is then 'setup'): the
    #: backend's own message.
    setup_error: str | None = None

    @property
    def wall_s(self) -> float:
        """Wall-clock seconds it ran."""
        return max(0.0, self.ended - self.started)


def disk_use(root: Path, stop_at: int | None = None) -> int:
    """Bytes the files under ``root`` occupy (allocated blocks, links not followed); stops counting
    past ``stop_at``."""
    total = 0
    stack = [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += st.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
        if stop_at is not None and total > stop_at:
            return total
    return total


def _disk(command: CellCommand, quota: int) -> int:
    """What the cell wrote to the host's disk: the workspace and its writable directories."""
    total = 0
    for root in (command.workspace, *command.writable):
        total += disk_use(Path(root), quota - total)
        if total > quota:
            break
    return total


def _check_hidden(command: CellCommand) -> None:
    workspace = command.workspace.resolve()
    for hidden in command.hidden:
        # The workspace is shown read-write: a hidden path inside it would be shown too.
        if Path(hidden).resolve().is_relative_to(workspace):
            raise SandboxError(f"the workspace {str(command.workspace)!r} would show {str(hidden)!r} to the cell",
                               "keep the benchmark's references and other cells outside the cell's workspace")
        for path in command.writable:
            if Path(hidden).resolve().is_relative_to(Path(path).resolve()):
                raise SandboxError(f"the writable path {str(path)!r} would show {str(hidden)!r} to the cell",
                                   "give the cell's own transcript directory, beside its workspace")
    for path in command.readonly:
        resolved = Path(path).resolve()
        for hidden in command.hidden:
            h = Path(hidden).resolve()
            if h.is_relative_to(resolved) or resolved.is_relative_to(h):
                raise SandboxError(f"the read-only path {str(path)!r} would show {str(hidden)!r} to the cell",
                                   "give the reproducer's installation directory itself, not a directory "
                                   "above the benchmark or its references")


def _check_python_paths(command: CellCommand, mounts: Sequence[SandboxMount]) -> None:
    """The evaluator's Python is shown read-only too: a hidden path inside it (a benchmark directory
    made in the virtual environment, say) would be seen."""
    for mount in mounts:
        if mount.role != "rra":
            continue
        for hidden in command.hidden:
            if Path(hidden).resolve().is_relative_to(Path(mount.source)):
                raise SandboxError(f"the Python that runs rra, {mount.source!r}, is shown to every cell and holds "
                                   f"{str(hidden)!r}", "keep the benchmark directory and the references outside "
                                   "the Python installation and the rra_tools checkout")


def _inside_env(command: CellCommand, backend: str) -> dict[str, str]:
    env = dict(command.env)
    if backend != "none":
        env.setdefault("HOME", INSIDE_HOME)
        env.setdefault("TMPDIR", INSIDE_TMP)
        env.setdefault("LANG", "C.UTF-8")
        # Podman always sets HOSTNAME (no option unsets it): both backends set it, so that the
        # record's names are what is inside and the two pictures are the same.
        env.setdefault("HOSTNAME", "cell")
        if command.gpus:
            # Only the leased devices exist inside; CUDA numbers what it can open from 0.
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(len(command.gpus)))
    return env


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _status(code: int | None, backend: str) -> int | None:
    # The init program reports a signal N as 128+N, as a shell does; records use -N.
    if code is None or backend == "none":
        return code
    if 128 < code < 128 + 65:
        return -(code - 128)
    return code


def new_run_dir() -> Path:
    """A fresh host directory to show as /run/rra (short, for the Unix socket's path limit);
    the proxy listens on :data:`SOCKET_NAME` in it. :func:`run_sandboxed` removes it."""
    return Path(tempfile.mkdtemp(prefix="rra-cell-"))


def run_sandboxed(command: CellCommand, backend: Backend, *, requested: str, logs: Path, run_dir: Path,
                  limit_event: threading.Event | None = None, stop: threading.Event | None = None) -> SandboxExit:
    """Run ``command`` under ``backend``; stdout and stderr go to ``logs``/reproducer.*.log.

    ``run_dir`` (:func:`new_run_dir`) is shown as /run/rra; when ``command.proxy``, the caller's
    metering proxy listens on its :data:`SOCKET_NAME` and the init program relays the sandbox's
    127.0.0.1:PROXY_PORT to it. ``limit_event`` (set by the proxy when a budget is spent) stops
    the cell as 'limit'. SandboxError when a read-only path would show a hidden one."""
    limits = command.limits
    cell_name = f"rra-cell-{uuid.uuid4().hex[:12]}"
    group: CellCgroup | None = None
    rootfs: Path | None = None
    status_file: BinaryIO | None = None
    try:
        # Inside the try: run_dir is removed (as promised) when the cell is refused, too.
        _check_hidden(command)
        logs.mkdir(parents=True, exist_ok=True)
        env = _inside_env(command, backend.name)
        mounts = (cell_mounts(command.workspace, run_dir, command.readonly, writable=command.writable)
                  if backend.name != "none" else [])
        _check_python_paths(command, mounts)
        devices: list[str] = []
        argv: list[str]
        popen_env: dict[str, str] | None = None
        enforced: list[str] = []
        if backend.name == "none":
            argv = ["sh", "-c", command.command]
            if limits.memory_mib is not None:
                # The address space of the command and all it starts, set in the shell itself (a
                # preexec function is unsafe while the executor's threads run).
                argv = ["sh", "-c", f'ulimit -v {limits.memory_mib * 1024} || exit 125; exec sh -c "$1"', "sh",
                        command.command]
                enforced.append("rlimit:as")
            popen_env = env
        else:
            shutil.copyfile(Path(__file__).with_name(INIT_NAME), run_dir / INIT_NAME)
            init = [os.path.realpath(sys.executable), "-I", "-S", f"{INSIDE_RUN}/{INIT_NAME}"]
            # -S: the init program needs no site-packages; -I: no PYTHON* variable of the cell's.
            if command.proxy:
                init += ["--socket", f"{INSIDE_RUN}/{SOCKET_NAME}", "--port", str(PROXY_PORT)]
            if limits.disk_mib is not None:
                init += ["--fsize", str(limits.disk_mib << 20)]
                enforced.append("rlimit:fsize")
            init += ["--", "sh", "-c", command.command]
            if backend.name == "bwrap":
                devices = gpu_device_paths(command.gpus)
                # bubblewrap's own process is pid 1 inside, and its /proc/1/environ can be read
                # there: it must not hold the evaluator's environment (the providers' real keys).
                popen_env = {"PATH": os.environ.get("PATH", os.defpath)}
                inner = bwrap_argv(backend.command[0], mounts, env, command.workspace.resolve(), devices, None, init)
                # bubblewrap says on this descriptor when the command started: without that line,
                # an exit is the sandbox's own failure, not the command's.
                status_file = open(logs / STATUS_NAME, "wb")  # noqa: SIM115 - closed in finally
                inner[1:1] = ["--json-status-fd", str(status_file.fileno())]
                group = open_cgroup(cell_name, cpus=limits.cpus, memory_mib=limits.memory_mib, pids=limits.pids)
                if group is not None:
                    enforced += group.enforced
                    argv = ["sh", "-c", group.join_prologue() + ' && exec "$@"', "sh", *inner]
                else:
                    argv = inner
            else:
                # Not under run_dir: that is mounted inside as /run/rra, and the root mounted
                # again below it would stay writable (on the host's disk) whatever --read-only does.
                rootfs = Path(tempfile.mkdtemp(prefix="rra-root-"))
                for name in ("usr", "tmp", "etc", "run"):
                    (rootfs / name).mkdir(parents=True)
                for link in ("bin", "lib", "lib64", "sbin"):
                    os.symlink(f"usr/{link}", rootfs / link)
                devices = [f"nvidia.com/gpu={g}" for g in command.gpus]
                argv = podman_argv(backend.command, rootfs, cell_name, mounts, env, command.workspace.resolve(),
                                   limits, command.gpus, None, init)
                popen_env = {**os.environ, "CONTAINERS_CONF": str(podman_conf())}
                enforced += [f"podman:{k}" for k, v in (("memory", limits.memory_mib), ("pids", limits.pids),
                                                        ("cpus", limits.cpus)) if v is not None]
        if limits.disk_mib is not None:
            enforced.append("watch:disk")
        record = SandboxRecord.model_validate({
            "backend": backend.name, "requested": requested,
            "network": "host" if backend.name == "none" else "proxy-only", "mounts": mounts,
            "limits": limits.model_copy(update={"enforced_by": enforced}), "devices": devices, "env": sorted(env)})
        return _watch(command, backend, record, argv, popen_env, group, cell_name, logs, limit_event, stop,
                      status_file)
    finally:
        if status_file is not None:
            status_file.close()
        if group is not None:
            group.remove()
        shutil.rmtree(run_dir, ignore_errors=True)
        if rootfs is not None:
            shutil.rmtree(rootfs, ignore_errors=True)


def _watch(command: CellCommand, backend: Backend, record: SandboxRecord, argv: list[str],
           env: dict[str, str] | None, group: CellCgroup | None, cell_name: str, logs: Path,
           limit_event: threading.Event | None, stop: threading.Event | None,
           status_file: BinaryIO | None) -> SandboxExit:
    limits = command.limits
    pass_fds = () if status_file is None else (status_file.fileno(),)
    quota = None if limits.disk_mib is None else limits.disk_mib << 20
    with open(logs / "reproducer.stdout.log", "wb") as out, open(logs / "reproducer.stderr.log", "wb") as err:
        started = time.time()
        proc = subprocess.Popen(argv, cwd=command.workspace, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err, start_new_session=True, close_fds=True, pass_fds=pass_fds)
        (logs / "reproducer.pgid").write_text(f"{proc.pid}\n", encoding="ascii")
        if backend.name == "podman":
            # A container outlives a killed 'podman run': name it, so that an evaluator started
            # again can remove what this one left (stop_leftover).
            (logs / LEFTOVER_NAME).write_text(json.dumps({"podman": list(backend.command), "name": cell_name}),
                                              encoding="utf-8")
        deadline = time.monotonic() + limits.wall_clock_s
        next_disk = time.monotonic() + DISK_POLL_S
        stopped: str | None = None
        limit: str | None = None
        while True:
            try:
                proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if stop is not None and stop.is_set():
                stopped = "interrupted"
            elif limit_event is not None and limit_event.is_set():
                stopped, limit = "limit", "budget"
            elif now >= deadline:
                stopped = "timeout"
            elif quota is not None and now >= next_disk:
                next_disk = now + DISK_POLL_S
                if _disk(command, quota) > quota:
                    stopped, limit = "limit", "disk"
            if stopped is not None:
                _stop(proc, backend, group, cell_name)
                break
        ended = time.time()
        _kill_group(proc.pid, signal.SIGKILL)
        if group is not None:
            group.kill()
        if backend.name == "podman":
            subprocess.run([*backend.command, "rm", "-f", "-t", "0", cell_name], capture_output=True,
                           env=env, timeout=60, stdin=subprocess.DEVNULL)
        (logs / "reproducer.pgid").unlink(missing_ok=True)
        (logs / LEFTOVER_NAME).unlink(missing_ok=True)
    status = _status(proc.returncode, backend.name)
    setup_error = _setup_error(backend, proc.returncode, logs) if stopped is None else None
    if setup_error is not None:
        return SandboxExit(status, "setup", None, started, ended, record, [], setup_error)
    if stopped is None and quota is not None and _disk(command, quota) > quota:
        # Filled between two measurements, and then ended (a writer stopped at the file-size cap).
        stopped, limit = "limit", "disk"
    escapes: list[str] = []
    hits = group.hits() if group is not None else {}
    if stopped is None and hits.get("memory"):
        stopped, limit = "limit", "memory"
    elif stopped is None and backend.name == "podman" and status == -signal.SIGKILL:
        # Podman's out-of-memory kill shows as the init's SIGKILL.
        stopped, limit = "limit", "memory"
    if stopped is None and status == -signal.SIGXFSZ:
        stopped, limit = "limit", "disk"
    if hits.get("pids"):
        escapes.append(f"the process limit ({limits.pids}) refused {hits['pids']} fork(s)")
    if hits.get("memory"):
        escapes.append(f"the memory limit ({limits.memory_mib} MiB) killed {hits['memory']} process(es)")
    if limit == "disk":
        escapes.append(f"the workspace went over its quota of {limits.disk_mib} MiB")
    return SandboxExit(status, stopped, limit, started, ended, record.model_copy(update={"escapes": escapes}),
                       escapes)


def _setup_error(backend: Backend, code: int | None, logs: Path) -> str | None:
    """The backend's own message when it could not start the command; None when the command ran."""
    if backend.name == "none":
        return None
    try:
        lines = (logs / "reproducer.stderr.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        lines = []
    last = lines[-1] if lines else f"exit status {code}"
    if backend.name == "bwrap":
        try:
            began = "child-pid" in (logs / STATUS_NAME).read_text(encoding="utf-8", errors="replace")
        except OSError:
            began = False
        return None if began else f"bubblewrap could not start the cell: {last}"
    if code in PODMAN_SETUP_STATUSES and lines and lines[-1].startswith("Error: "):
        return f"podman could not start the cell: {last.removeprefix('Error: ')}"
    return None


def stop_leftover(logs: Path) -> bool:
    """Remove the Podman container an evaluator killed mid-cell left running (named in
    ``logs``/reproducer.sandbox); True when there was one to remove. A bubblewrap sandbox needs
    nothing: it dies with its parent (--die-with-parent), and its PID namespace with it."""
    try:
        data = json.loads((logs / LEFTOVER_NAME).read_text(encoding="utf-8"))
        podman, name = [str(p) for p in data["podman"]], str(data["name"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if not podman or not name.startswith("rra-cell-"):
        return False
    done = subprocess.run([*podman, "rm", "-f", "-t", "0", name], capture_output=True, timeout=120,
                          env={**os.environ, "CONTAINERS_CONF": str(podman_conf())}, stdin=subprocess.DEVNULL)
    (logs / LEFTOVER_NAME).unlink(missing_ok=True)
    return done.returncode == 0


def _stop(proc: subprocess.Popen[bytes], backend: Backend, group: CellCgroup | None, cell_name: str) -> None:
    if backend.name == "podman":
        subprocess.run([*backend.command, "kill", "-s", "KILL", cell_name], capture_output=True, timeout=60,
                       env={**os.environ, "CONTAINERS_CONF": str(podman_conf())}, stdin=subprocess.DEVNULL)
    _kill_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=GRACE_S if backend.name == "none" else 0.5)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid, signal.SIGKILL)
        if group is not None:
            group.kill()
        proc.wait()
