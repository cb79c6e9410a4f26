#!/usr/bin/env python3
"""Compare two source trees of rra-tools on a busy machine: alternating runs, wall and CPU time.

Usage::

    git archive <commit> | tar -x -C /tmp/before          # the tree to compare against
    python benchmarks/compare_trees.py validate /tmp/before . FILE...   # rra validate FILE
    python benchmarks/compare_trees.py run /tmp/before .                # rra run of a /bin/true launcher

Each tree is imported through PYTHONPATH by this interpreter, the runs alternate between the
trees, and the CPU time of each command (user + system of the child) is printed next to its
wall time: when other work shares the machine, wall times grow with the load and the CPU times
are the figures that compare. ``run`` warms each tree's own rra cache first (repeat runs are
what its target measures).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import WORK

ENTRY = "import sys; from rra_tools.cli.main import entry; sys.argv[0] = 'rra'; entry()"


def timed(tree: str, args: list[str], cache: Path) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve()), "RRA_CACHE_DIR": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *args], env=env, capture_output=True, text=True,
                          cwd=WORK, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"{args}: exit {done.returncode}\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    mode, trees = sys.argv[1], sys.argv[2:4]
    WORK.mkdir(parents=True, exist_ok=True)
    caches = {tree: WORK / f"cache-compare-{i}" for i, tree in enumerate(trees)}
    if mode == "validate":
        commands = [["validate", str(Path(f).resolve())] for f in sys.argv[4:]]
        runs = int(os.environ.get("RRA_COMPARE_RUNS", "3"))
    else:
        from bench_run import launcher, write_artifact

        root = WORK / "compare-run"
        write_artifact(root, "run-compare", "rra run comparison", [launcher("true", ["/bin/true"])])
        commands = [["run", str(root), "true"]]
        runs = 10
        for tree in trees:
            timed(tree, commands[0], caches[tree])  # warm the tree's cache
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for i in range(runs):
        for tree in (trees if i % 2 == 0 else trees[::-1]):
            for k, args in enumerate(commands):
                results.setdefault((tree, k), []).append(timed(tree, args, caches[tree]))
        if mode == "run":
            shutil.rmtree(WORK / "compare-run" / "runs", ignore_errors=True)
    for (tree, k), values in sorted(results.items()):
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        print(f"{tree:24s} {' '.join(commands[k][:1] + [Path(commands[k][1]).name]):24s} "
              f"wall median {statistics.median(walls):7.3f} s  cpu median {statistics.median(cpus):7.3f} s "
              f"({len(values)} runs)")
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
