"""The benchmark's local executor: a pool of workers that runs cells side by side, gives each
cell the GPUs it needs, and can be killed and resumed without losing or repeating a cell.

A *cell* is one unit of benchmark work with a unique ``key`` and a GPU count (an attempt of
``rra bench reproduce``; a task × condition × reproducer × repeat of ``rra bench run``). The
executor is generic over cells: the caller's ``run_one(cell, slot)`` does the work and returns a
:class:`CellResult` whose ``data`` is JSON.

- **Devices.** A cell that needs N GPUs starts only when N free devices can be locked with
  :func:`rra_tools.run.gpus.acquire`, the locks of ``rra run`` (so another ``rra run`` or
  benchmark on the machine never shares them either). The cell holds them until it ends and
  hands them to its runs through ``RunOptions.gpu_lease``: every run of the cell uses exactly
  those devices. A cell that needs more GPUs than the machine has runs without a lease, so its
  run is refused as ``rra run`` refuses it (an infrastructure failure, not a hang).
- **Concurrency.** At most ``max_workers`` cells run at once (default: the number of CPU
  cores); cells waiting for devices do not block CPU-only cells behind them.
- **Memory.** ``memory_limit_mib`` is set as RLIMIT_AS on every launcher of a CPU-only cell
  (``RunOptions.memory_limit_mib``). It is not set on GPU cells: CUDA reserves far more
  virtual address space than it uses, and an address-space limit breaks it.
- **Resumption.** ``state_dir/cells/<digest>.json`` holds each finished cell's result, written
  atomically (:mod:`rra_tools.io.atomic`) before anything else is said about it; a cell with a
  result is never run again. When a cell starts, ``state_dir/started/<digest>.json`` records
  it (with the number of starts so far); a cell found started but not finished was in flight
  when the benchmark died, and is run again, its result saying how many times it was
  ``restarted``. A result that is not ``final`` (the run was interrupted by a signal) is not
  kept: resuming runs that cell again.
- **One benchmark per state directory.** ``state_dir/lock`` is held (``flock``) while the
  executor runs; a second one on the same directory is refused at once.

Signals: SIGINT and SIGTERM (when called from the main thread) set the stop event that every
slot's run options carry; running cells are interrupted, no new cell starts, and the executor
returns what it has. Nothing is printed; progress reaches the caller through ``progress``.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from ...run.errors import GpuUnavailable
from ...run.gpus import GpuInfo, GpuLease, acquire
from ...run.local import RunOptions
from .state import (
    Finished,
    StateLock,
    cell_path,
    check_unique,
    load_finished,
    now,
    read_json,
    started_path,
    unlink_quietly,
    write_json,
)

__all__ = ["Cell", "CellEvent", "CellResult", "CellSlot", "Finished", "execute", "load_finished"]


class Cell(Protocol):
    """What the executor needs of a cell."""

    @property
    def key(self) -> str:
        """Unique within the benchmark and stable across runs of it (it names the saved result)."""

    @property
    def gpus(self) -> int:
        """Devices the cell needs at once (the most any of its launchers asks for)."""


C = TypeVar("C", bound=Cell)


@dataclass(frozen=True)
class CellResult:
    """What ``run_one`` returns: the cell's result as JSON data, and whether it is final (False
    when a signal interrupted it: the result is reported but not kept, so resuming reruns it)."""

    data: dict[str, Any]
    final: bool = True


@dataclass
class CellSlot:
    """What one running cell holds: its devices, its memory limit and the stop event."""

    devices: list[GpuInfo]
    lease: GpuLease | None
    inventory: list[GpuInfo]
    memory_limit_mib: int | None
    stop: threading.Event
    #: Starts of this cell before this one that did not finish (0 on a first run).
    restarted: int = 0
    #: Where the cell writes the files it would write into the benchmark directory, when not
    #: there: a node-local scratch directory of the Slurm executor (:mod:`.slurm`), which
    #: gathers it into the benchmark directory afterwards. None: the benchmark directory.
    workdir: Path | None = None

    def run_options(self, **kwargs: Any) -> RunOptions:
        """Run options for the cell's runs (``rra_tools.run.run_plans``): its devices, its memory
        limit and the stop event; ``kwargs`` set the other fields."""
        return RunOptions(gpus=self.inventory, gpu_lease=self.lease, memory_limit_mib=self.memory_limit_mib,
                          stop=self.stop, **kwargs)


@dataclass(frozen=True)
class CellEvent:
    """A step of the executor, for progress output: ``kind`` is 'resumed' (finished earlier,
    skipped), 'started', 'finished' or 'interrupted' (ended by a signal, not kept)."""

    kind: str
    key: str
    done: int
    total: int
    devices: list[int] = field(default_factory=list)
    restarted: int = 0
    data: dict[str, Any] | None = None


def execute(cells: Sequence[C], run_one: Callable[[C, CellSlot], CellResult], state_dir: Path, *,
            gpus: Sequence[GpuInfo] = (), max_workers: int | None = None, memory_limit_mib: int | None = None,
            progress: Callable[[CellEvent], None] | None = None, environ: dict[str, str] | None = None,
            stop: threading.Event | None = None, handle_signals: bool = True,
            poll_s: float = 0.2) -> dict[str, Finished]:
    """Run every cell of ``cells`` not finished in ``state_dir`` (see the module docstring);
    the result of every cell that has one, by key (cells interrupted by a signal have none).

    ``gpus`` is the machine's inventory (``rra_tools.run.gpus.inventory()``); ``environ`` is the
    environment rra reads (``RRA_GPU_LOCK_DIR``); BenchError when two cells share a key or
    another executor holds ``state_dir``.
    """
    check_unique(c.key for c in cells)
    workers = max(1, max_workers if max_workers is not None else (os.cpu_count() or 1))
    for sub in ("cells", "started"):
        (state_dir / sub).mkdir(parents=True, exist_ok=True)
    inventory = list(gpus)
    stop = stop or threading.Event()
    previous: dict[int, Any] = {}
    if handle_signals and threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with StateLock(state_dir):
            return _Pool(cells, run_one, state_dir, inventory, workers, memory_limit_mib, progress,
                         environ, stop, poll_s).run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Pool(Generic[C]):
    """The scheduling loop of :func:`execute` (on the caller's thread; cells run on workers)."""

    def __init__(self, cells: Sequence[C], run_one: Callable[[C, CellSlot], CellResult], state_dir: Path,
                 inventory: list[GpuInfo], workers: int, memory_limit_mib: int | None,
                 progress: Callable[[CellEvent], None] | None, environ: dict[str, str] | None,
                 stop: threading.Event, poll_s: float) -> None:
        self.cells, self.run_one, self.state_dir = cells, run_one, state_dir
        self.inventory, self.workers, self.memory_limit_mib = inventory, workers, memory_limit_mib
        self.progress, self.environ, self.stop, self.poll_s = progress, environ, stop, poll_s
        self.results: dict[str, Finished] = {}
        self.done = 0

    def _emit(self, event: CellEvent) -> None:
        if self.progress is not None:
            self.progress(event)

    def run(self) -> dict[str, Finished]:
        total = len(self.cells)
        self.results = load_finished(self.state_dir, (c.key for c in self.cells))
        for cell in self.cells:
            if cell.key in self.results:
                self.done += 1
                f = self.results[cell.key]
                self._emit(CellEvent("resumed", cell.key, self.done, total, restarted=f.restarted, data=f.data))
        waiting = [c for c in self.cells if c.key not in self.results]
        running: dict[Future[CellResult], tuple[C, CellSlot, dict[str, Any]]] = {}
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="rra-bench-cell") as pool:
            while (waiting and not self.stop.is_set()) or running:
                started_any = False
                if not self.stop.is_set():
                    for cell in list(waiting):
                        if len(running) >= self.workers:
                            break
                        slot = self._slot(cell)
                        if slot is None:
                            continue  # its devices are busy: let cells behind it go first
                        waiting.remove(cell)
                        marker = self._mark_started(cell, slot)
                        self._emit(CellEvent("started", cell.key, self.done, total,
                                             devices=[g.index for g in slot.devices], restarted=slot.restarted))
                        running[pool.submit(self.run_one, cell, slot)] = (cell, slot, marker)
                        started_any = True
                if not running:
                    if waiting and not started_any and not self.stop.is_set():
                        # Every waiting cell needs devices another process holds: wait for them.
                        self.stop.wait(self.poll_s)
                    continue
                finished, _ = wait(running, timeout=self.poll_s, return_when=FIRST_COMPLETED)
                for future in finished:
                    cell, slot, marker = running.pop(future)
                    try:
                        result = future.result()
                    except BaseException:
                        self.stop.set()  # a bug in run_one: let the running cells stop, then raise
                        raise
                    finally:
                        if slot.lease is not None:
                            slot.lease.release()
                    self._finish(cell, slot, marker, result, total)
        return self.results

    def _slot(self, cell: C) -> CellSlot | None:
        """The cell's slot with its devices locked; None while they are taken by other runs."""
        need = cell.gpus
        lease: GpuLease | None = None
        if 0 < need <= len(self.inventory):
            try:
                lease = acquire(need, cell.key, self.inventory, self.environ)
            except GpuUnavailable:
                return None
        memory = self.memory_limit_mib if need == 0 else None
        return CellSlot(devices=list(lease.devices) if lease else [], lease=lease, inventory=self.inventory,
                        memory_limit_mib=memory, stop=self.stop)

    def _mark_started(self, cell: C, slot: CellSlot) -> dict[str, Any]:
        path = started_path(self.state_dir, cell.key)
        before = read_json(path) or {}
        slot.restarted = int(before.get("starts", 0))
        marker = {"key": cell.key, "starts": slot.restarted + 1, "started": now(), "pid": os.getpid(),
                  "devices": [g.index for g in slot.devices]}
        # Not flushed to disk: after a machine crash a lost marker only undercounts restarts; the
        # result, which decides whether the cell runs again, is flushed.
        write_json(path, marker, durable=False)
        return marker

    def _finish(self, cell: C, slot: CellSlot, marker: dict[str, Any], result: CellResult, total: int) -> None:
        if not result.final:
            # Interrupted: not kept, so the next run of the benchmark runs this cell again. The
            # start marker stays; that rerun is not a restart after a kill, so it is lowered back.
            write_json(started_path(self.state_dir, cell.key),
                       {**marker, "starts": slot.restarted})
            self._emit(CellEvent("interrupted", cell.key, self.done, total, data=result.data))
            return
        ended = now()
        write_json(cell_path(self.state_dir, cell.key),
                   {"key": cell.key, "result": result.data, "restarted": slot.restarted,
                    "started": marker["started"], "ended": ended, "devices": marker["devices"]})
        # The result is kept before the marker goes: a kill in between leaves a finished cell.
        unlink_quietly(started_path(self.state_dir, cell.key))
        self.done += 1
        self.results[cell.key] = Finished(cell.key, result.data, slot.restarted, False, marker["started"], ended)
        self._emit(CellEvent("finished", cell.key, self.done, total, devices=[g.index for g in slot.devices],
                             restarted=slot.restarted, data=result.data))
