"""The machine's accelerators and their assignment to runs.

The inventory comes from ``nvidia-smi`` when it is installed, or from the environment
variable ``RRA_GPU_INVENTORY`` (a JSON list of ``{"index", "model", "driver", "cuda",
"memory_mib"}`` objects; the spellings of ``rra env check`` — ``name``, ``driver_version``,
``cuda_version``, ``memory_total_mib`` — are read too), which tests and unusual machines use. A run that needs N devices
takes N distinct free ones: each device is held through an exclusive ``flock`` on a lock file
in ``RRA_GPU_LOCK_DIR`` (default: a per-user directory under the system temp dir), so
concurrent ``rra run`` processes never share a device. The local executor passes the locked
descriptors to the launcher, so a device stays held for as long as the launcher (or anything it
started that kept them) runs, even when ``rra run`` itself was killed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


from ..plain import Frozen, Plain
from .errors import GpuUnavailable

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

    from .concurrency import RunSlot
    from .plan import RunPlan

__all__ = ["INVENTORY_ENV", "LOCK_DIR_ENV", "GpuInfo", "GpuLease", "acquire", "held_for_run", "inventory"]


class GpuInfo(Frozen):
    """One accelerator of the host (a run record's ``host.gpus`` entry, see
    :class:`rra_tools.model.run_record.GpuInfo` for the meaning of each field)."""

    __slots__ = ("index", "model", "driver", "cuda", "memory_mib")

    def __init__(self, index: int, model: str, driver: str | None = None, cuda: str | None = None,
                 memory_mib: int | None = None) -> None:
        self.index, self.model, self.driver, self.cuda, self.memory_mib = index, model, driver, cuda, memory_mib

    def as_record(self) -> dict[str, Any]:
        """The record's JSON object: absent fields omitted."""
        return {k: v for k, v in (("index", self.index), ("model", self.model), ("driver", self.driver),
                                  ("cuda", self.cuda), ("memory_mib", self.memory_mib)) if v is not None}

INVENTORY_ENV = "RRA_GPU_INVENTORY"
LOCK_DIR_ENV = "RRA_GPU_LOCK_DIR"
_QUERY = ["--query-gpu=index,name,driver_version,memory.total", "--format=csv,noheader,nounits"]


def inventory(environ: dict[str, str] | None = None) -> list[GpuInfo]:
    """The host's accelerators; empty when there are none (or nvidia-smi fails)."""
    env = os.environ if environ is None else environ
    override = env.get(INVENTORY_ENV)
    if override is not None:
        return _from_override(override)
    tool = _on_path("nvidia-smi", os.environ.get("PATH", os.defpath))
    if tool is None:
        return []
    outputs = _run_together([[tool, *_QUERY], [tool]], timeout_s=20)
    if outputs is None or outputs[0][0] != 0:
        return []
    (_, listing), (_, header) = outputs
    cuda_match = re.search(r"CUDA Version:\s*([0-9.]+)", header)
    cuda = cuda_match.group(1) if cuda_match else None
    gpus = []
    for line in listing.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4 or not parts[0].isdigit():
            continue
        memory = int(float(parts[3])) if re.fullmatch(r"[0-9.]+", parts[3]) else None
        gpus.append(GpuInfo(index=int(parts[0]), model=parts[1], driver=parts[2] or None, cuda=cuda,
                            memory_mib=memory))
    return gpus


def _run_together(commands: list[list[str]], timeout_s: float) -> list[tuple[int, str]] | None:
    """(exit status, standard output) of each command, all started at once; None when one cannot
    start or outlives ``timeout_s``. (The two nvidia-smi queries each wait for the driver, often
    tens of milliseconds; side by side, an ``rra run`` on a GPU machine waits once.)"""
    procs: list[subprocess.Popen[str]] = []
    try:
        for argv in commands:
            procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True))
        outputs = [p.communicate(timeout=timeout_s)[0] for p in procs]
        return [(p.returncode, out) for p, out in zip(procs, outputs)]
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def _on_path(name: str, search: str) -> str | None:
    """``shutil.which`` for one plain name (shutil's import, with its compressors, would be 3 ms
    of every ``rra run``, which asks for nvidia-smi each time)."""
    for directory in search.split(os.pathsep):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _from_override(text: str) -> list[GpuInfo]:
    try:
        items = json.loads(text)
        if not isinstance(items, list):
            raise ValueError("not a list")
        gpus = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise ValueError(f"item {i} is not an object")
            memory = item.get("memory_mib", item.get("memory_total_mib"))
            driver = item.get("driver", item.get("driver_version"))
            cuda = item.get("cuda", item.get("cuda_version"))
            index = int(item.get("index", i))
            if index < 0:
                raise ValueError(f"item {i} has a negative index")
            gpus.append(GpuInfo(index=index, model=str(item.get("model", item.get("name", "GPU"))),
                                driver=None if driver is None else str(driver),
                                cuda=None if cuda is None else str(cuda),
                                memory_mib=int(memory) if isinstance(memory, (int, float)) else None))
    except (ValueError, TypeError) as exc:
        raise GpuUnavailable(f"{INVENTORY_ENV} is not a JSON list of GPU objects: {exc}") from None
    return gpus


class GpuLease(Plain):
    """Devices held for one run; ``release()`` (or process exit) frees them."""

    __slots__ = ("devices", "_fds", "_borrowed")

    def __init__(self, devices: list[GpuInfo], _fds: list[int] | None = None, _borrowed: tuple[int, ...] = ()) -> None:
        self.devices = devices
        self._fds = [] if _fds is None else _fds
        #: Descriptors of a lease this one borrows from (see :meth:`borrow`): inherited by the
        #: launcher like our own, never closed by :meth:`release`.
        self._borrowed = _borrowed

    @property
    def visible(self) -> str:
        """The value of CUDA_VISIBLE_DEVICES for the run."""
        return ",".join(str(g.index) for g in self.devices)

    @property
    def fds(self) -> tuple[int, ...]:
        """The locked descriptors; a launcher that inherits them holds the devices while it lives."""
        return (*self._fds, *self._borrowed)

    def borrow(self, count: int, launcher: str) -> GpuLease:
        """A lease of the first ``count`` of these devices for one run, which its holder keeps
        after the run (the benchmark executor holds a cell's devices across the cell's runs);
        GpuUnavailable when this lease holds fewer."""
        if count > len(self.devices):
            raise GpuUnavailable(f"launcher {launcher!r} needs {count} GPU(s); the devices held for it are "
                                 f"{len(self.devices)}")
        return GpuLease(self.devices[:count], [], self.fds if count else ())

    def release(self) -> None:
        """Give the devices back: close our descriptors. A launcher (or a process it left behind)
        that inherited them keeps the devices until it ends; LOCK_UN would free them under it."""
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()


def _lock_dir(environ: dict[str, str] | None) -> Path:
    env = os.environ if environ is None else environ
    given = env.get(LOCK_DIR_ENV)
    if not given:
        import tempfile  # only runs that need GPUs get here

        given = os.path.join(tempfile.gettempdir(), f"rra-gpu-locks-{os.getuid()}")
    path = Path(given)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def acquire(count: int, launcher: str, gpus: Sequence[GpuInfo],
            environ: dict[str, str] | None = None, held: GpuLease | None = None) -> GpuLease:
    """Hold ``count`` distinct free devices of ``gpus``; GpuUnavailable when there are too few.

    ``held``: devices the caller already holds for this run (a benchmark cell's); the run takes
    the first ``count`` of them instead of locking others."""
    import fcntl

    if held is not None:
        return held.borrow(count, launcher)
    if count == 0:
        return GpuLease([])
    if count > len(gpus):
        raise GpuUnavailable(f"launcher {launcher!r} needs {count} GPU(s); this machine has {len(gpus)}")
    lock_dir = _lock_dir(environ)
    lease = GpuLease([])
    for gpu in gpus:
        fd = os.open(lock_dir / f"gpu-{gpu.index}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        lease.devices.append(gpu)
        lease._fds.append(fd)
        if len(lease.devices) == count:
            return lease
    free = len(lease.devices)
    lease.release()
    raise GpuUnavailable(f"launcher {launcher!r} needs {count} GPU(s); only {free} of {len(gpus)} are free "
                         f"(the others are held by other runs)")


@contextmanager
def held_for_run(plan: RunPlan, gpus: Sequence[GpuInfo], environ: dict[str, str],
                 held: GpuLease | None = None) -> Iterator[tuple[GpuLease, RunSlot]]:
    """What one run of ``plan`` holds while the block runs: its devices (:func:`acquire`), then
    its outputs and its registration among the artifact's runs (:func:`.concurrency.enter`).

    Taken in that order, so a run refused for want of GPUs leaves nothing behind; when entering
    fails the devices are given back at once. When the block ends, however it ends, the devices
    are given back, then the slot. (Both executors, local and container, hold a run through here.)
    """
    from .concurrency import enter  # its imports are the executors', not every reader's of gpus

    lease = acquire(plan.launcher.resources.gpus, plan.launcher.id, gpus, environ, held=held)
    try:
        slot = enter(plan, environ)
    except BaseException:
        lease.release()
        raise
    try:
        yield lease, slot
    finally:
        lease.release()
        slot.release()
