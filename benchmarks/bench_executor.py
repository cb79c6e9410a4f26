#!/usr/bin/env python3
"""Benchmark of the benchmark's local executor (rra_tools/bench/executors/local.py): its scheduling
overhead per cell over a bare subprocess.

Usage::

    python benchmarks/bench_executor.py            # 200 cells, 5 rounds
    python benchmarks/bench_executor.py --quick    # 50 cells, 3 rounds

Each cell runs ``/bin/true`` as a subprocess. The bare figure runs the same subprocesses in a
plain loop; the executor figure runs them as cells of ``execute`` with one worker (so nothing
overlaps and the difference is the executor's own work: the start marker and the result, each
written atomically and flushed to disk, the scheduling loop, the thread hand-off). Overhead per
cell = (executor − bare) / cells, median over rounds, each round in a fresh state directory.
A second line gives the same with 2 workers (the default on this machine is the core count).
Target (issue 13): < 50 ms per cell. Exits 0 whether or not the target is met.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / "_work" / "executor"
TARGET_MS = 50.0

sys.path.insert(0, str(REPO))

from rra_tools.bench.executors.local import CellResult, CellSlot, execute  # noqa: E402


@dataclass(frozen=True)
class _Cell:
    key: str
    gpus: int = 0


def _one(cell: _Cell, slot: CellSlot) -> CellResult:
    done = subprocess.run(["/bin/true"], check=False)
    return CellResult({"exit": done.returncode})


def _bare(n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        subprocess.run(["/bin/true"], check=False)
    return time.perf_counter() - t0


def _executor(n: int, workers: int, state: Path) -> float:
    cells = [_Cell(f"p/e/t{i}/attempt-1") for i in range(n)]
    t0 = time.perf_counter()
    results = execute(cells, _one, state, max_workers=workers, handle_signals=False)
    elapsed = time.perf_counter() - t0
    assert len(results) == n
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 cells, 3 rounds")
    args = parser.parse_args()
    n, rounds = (50, 3) if args.quick else (200, 5)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {n} cells x {rounds} rounds")
    per: dict[int, list[float]] = {1: [], 2: []}
    bare_s: list[float] = []
    for r in range(rounds):
        bare = _bare(n)
        bare_s.append(bare / n * 1000)
        for workers in per:
            elapsed = _executor(n, workers, WORK / f"state-{r}-{workers}")
            per[workers].append((elapsed - (bare if workers == 1 else bare / workers)) / n * 1000)
    print(f"bare subprocess            {statistics.median(bare_s):7.2f} ms per cell")
    for workers, values in per.items():
        print(f"executor, {workers} worker(s) overhead {statistics.median(values):7.2f} ms per cell "
              f"(rounds: {', '.join(f'{v:.1f}' for v in values)})")
    worst = statistics.median(per[1])
    print(f"target < {TARGET_MS:g} ms per cell: {'met' if worst < TARGET_MS else 'NOT met'} "
          f"(1 worker, load now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
