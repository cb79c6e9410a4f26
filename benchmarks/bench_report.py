#!/usr/bin/env python3
"""Benchmark of ``rra bench report`` on 10,000 cells, and at a real benchmark's two sizes.

Usage::

    python benchmarks/bench_report.py            # 5 timed runs
    python benchmarks/bench_report.py --quick    # 3 runs

The results are synthetic (``tests/bench_synthetic.py``, seed 0): 50 papers × 25 tasks × 4
reproducers × 2 conditions × 1 repeat = 10,000 cells of ``rra bench run``, with infrastructure
failures and audit findings, written to benchmarks/_work/report/results.json. Each run is a
fresh ``rra bench report RESULTS -o OUT`` process (reading and checking the results, 2,000
bootstrap resamples per group, five matplotlib plots, HTML, Markdown and JSON written); the
figure is the median wall time, with the CPU time (user + system, what a loaded machine
disturbs least) beside it. Target (issue 13): < 3 s. Exits 0 whether or not the target is met;
the last line says which.

Two more sizes are timed the same way (issue 23 item 9, the sizes the browser test renders):
36 papers × 8 reproducers × 2 conditions × 3 repeats = 1,728 cells without cost and with
refuted findings, and 1,029 tasks (147 papers × 7) × 2 reproducers × 2 conditions = 4,116 cells.
"""

from __future__ import annotations

import argparse
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
WORK = REPO / "benchmarks" / "_work" / "report"
RRA = str(Path(sys.executable).parent / "rra")
TARGET_S = 3.0

from _common import warm_bytecode  # noqa: E402  (benchmarks/ is sys.path[0] when run as a script)


def _time(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 runs instead of 5")
    args = parser.parse_args()
    runs = 3 if args.quick else 5
    from tests.bench_synthetic import synthetic_results

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    results = WORK / "results.json"
    data = synthetic_results(50, 25, repeats=1)
    results.write_text(json.dumps(data), encoding="utf-8")
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {len(data['cells'])} cells, "
          f"{results.stat().st_size / 1e6:.1f} MB of results")
    # Untimed: matplotlib's font cache, and bytecode for every module the report imports (this
    # machine sets PYTHONDONTWRITEBYTECODE and uv installs wheels without bytecode, so without it
    # each timed run recompiled matplotlib: a cost no pip-installed copy has).
    warm_bytecode([RRA, "bench", "report", str(results), "-o", str(WORK / "out")])
    version_wall, version_cpu = _time([RRA, "--version"], runs)
    walls, cpus = _time([RRA, "bench", "report", str(results), "-o", str(WORK / "out")], runs)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"rra --version           wall {statistics.median(version_wall):.3f} s  cpu {statistics.median(version_cpu):.3f} s")
    print(f"rra bench report 10k    wall {wall:.3f} s  cpu {cpu:.3f} s  (runs: {', '.join(f'{w:.2f}' for w in walls)})")
    html = (WORK / "out" / "report.html").stat().st_size
    print(f"report.html {html / 1e6:.2f} MB, load now {os.getloadavg()[0]:.1f}")
    agents = tuple(f"{kind}-agent-{i}" for i, kind in enumerate(("honest", "honest", "honest", "sloppy", "sloppy",
                                                                   "cheating", "slow", "honest")))
    for name, size in (("1,728 cells", synthetic_results(36, 1, repeats=3, reproducers=agents, usage=False,
                                                         refuted=0.9)),
                       ("1,029 tasks", synthetic_results(147, 7, repeats=1, reproducers=agents[:2]))):
        path = WORK / f"results-{len(size['cells'])}.json"
        path.write_text(json.dumps(size), encoding="utf-8")
        out = WORK / f"out-{len(size['cells'])}"
        warm_bytecode([RRA, "bench", "report", str(path), "-o", str(out)])
        w, c = _time([RRA, "bench", "report", str(path), "-o", str(out)], runs)
        print(f"rra bench report {name:<12} wall {statistics.median(w):.3f} s  cpu {statistics.median(c):.3f} s  "
              f"({len(size['cells'])} cells; report.html {(out / 'report.html').stat().st_size / 1e6:.2f} MB)")
    print(f"target < {TARGET_S:g} s: {'met' if wall < TARGET_S else 'NOT met'} (wall), "
          f"{'met' if cpu < TARGET_S else 'NOT met'} (cpu)")


if __name__ == "__main__":
    main()
