#!/usr/bin/env python3
"""Benchmark of the factorial analysis of ``rra bench report`` on 10,240 cells.

Usage::

    python benchmarks/bench_factorial.py            # 5 timed runs
    python benchmarks/bench_factorial.py --quick    # 3 runs

The results are synthetic (``tests/bench_synthetic.py``, seed 0): 20 papers × 8 tasks × 4
reproducers × 16 conditions (``refined`` without every combination of repairs, lock, launchers
and guide) × 1 repeat = 10,240 cells of ``rra bench run``, written to
benchmarks/_work/factorial/results.json. Two figures:

- **the factorial analysis**, in this process: the results' cells as the report reads them
  (``cells_of``) and ``factorial_analyses`` with the report's bootstrap (2,000 resamples of
  papers): 5 analyses (every reproducer pooled, then each), 15 effects each. Median wall and CPU
  time of the runs. Target (issue 14): < 3 s.
- for context, a whole ``rra bench report RESULTS -o OUT`` process on the same results (every
  figure, 16 conditions in every table and plot, HTML, Markdown, JSON).

Exits 0 whether or not the target is met; the last line says which.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
WORK = REPO / "benchmarks" / "_work" / "factorial"
RRA = str(Path(sys.executable).parent / "rra")
TARGET_S = 3.0

from _common import warm_bytecode  # noqa: E402  (benchmarks/ is sys.path[0] when run as a script)
PARTS = ("repairs", "lock", "launchers", "guide")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 runs instead of 5")
    args = parser.parse_args()
    runs = 3 if args.quick else 5
    from rra_tools.bench.report.build import _Bootstrapper, cells_of, load_results
    from rra_tools.bench.report.factorial import factorial_analyses
    from rra_tools.model.taskset import condition_name
    from tests.bench_synthetic import synthetic_results

    conditions = tuple(condition_name(c) for n in range(len(PARTS) + 1) for c in itertools.combinations(PARTS, n))
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    results = WORK / "results.json"
    data = synthetic_results(20, 8, repeats=1, conditions=conditions)
    results.write_text(json.dumps(data), encoding="utf-8")
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {len(data['cells'])} cells, "
          f"{len(conditions)} conditions, {results.stat().st_size / 1e6:.1f} MB of results")
    walls, cpus = [], []
    for _ in range(runs + 1):
        loaded = load_results(results)
        t0, c0 = time.perf_counter(), _cpu()
        analyses = factorial_analyses(cells_of(loaded), _Bootstrapper(2000, 0, 0.95))
        walls.append(time.perf_counter() - t0)
        cpus.append(_cpu() - c0)
    walls, cpus = walls[1:], cpus[1:]  # the first run imports numpy
    pooled = analyses[0]
    mains = ", ".join(f"{e.parts[0]} {e.estimate * 100:+.1f} pp" for e in pooled.effects
                      if len(e.parts) == 1 and e.estimate is not None)
    print(f"{len(analyses)} analyses ({pooled.design} design), {len(pooled.effects)} effects each; pooled main "
          f"effects: {mains}")
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"factorial analysis 10k  wall {wall:.3f} s  cpu {cpu:.3f} s  (runs: {', '.join(f'{w:.2f}' for w in walls)})")
    warm_bytecode([RRA, "bench", "report", str(results), "-o", str(WORK / "out")])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([RRA, "bench", "report", str(results), "-o", str(WORK / "out")], check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"rra bench report 10k (one run, for context)  wall {time.perf_counter() - t0:.3f} s  cpu "
          f"{after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime:.3f} s")
    print(f"load now {os.getloadavg()[0]:.1f}")
    print(f"target < {TARGET_S:g} s: {'met' if wall < TARGET_S else 'NOT met'} (wall), "
          f"{'met' if cpu < TARGET_S else 'NOT met'} (cpu)")


if __name__ == "__main__":
    main()
