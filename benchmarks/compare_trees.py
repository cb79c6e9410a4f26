#!/usr/bin/env python3
"""Compare two source trees of rra-tools on a busy machine: alternating runs, wall and CPU time.

Usage::

    git archive <commit> | tar -x -C /tmp/before          # the tree to compare against
    python benchmarks/compare_trees.py validate /tmp/before . FILE...   # rra validate FILE
    python benchmarks/compare_trees.py run /tmp/before .                # rra run of a /bin/true launcher
    python benchmarks/compare_trees.py startup /tmp/before .            # the short commands, beside python -c pass

Each tree is imported through PYTHONPATH by this interpreter, the runs alternate between the
trees, and the CPU time of each command (user + system of the child) is printed next to its
wall time: when other work shares the machine, wall times grow with the load and the CPU times
are the figures that compare. ``run`` warms each tree's own rra cache first (repeat runs are
what its target measures). ``startup`` times the commands whose cost is mostly start-up (``rra
validate`` of examples/digits-logreg, ``rra --version``, ``rra run`` of a ``/bin/true`` launcher)
alternating with ``python -c pass`` (RRA_COMPARE_RUNS each, default 21), and prints each median
as a ratio to it as well.
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
    if mode == "startup":
        return startup(trees, caches)
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


def startup(trees: list[str], caches: dict[str, Path]) -> int:
    """The ``startup`` mode: every command of both trees and ``python -c pass``, alternating."""
    from bench_run import launcher, write_artifact

    root = WORK / "compare-startup"
    write_artifact(root, "run-startup", "rra run start-up comparison", [launcher("true", ["/bin/true"])])
    example = Path(__file__).resolve().parents[1] / "examples" / "digits-logreg"
    commands = {"validate": ["validate", str(example)], "--version": ["--version"], "run": ["run", str(root), "true"]}
    for tree in trees:
        timed(tree, commands["run"], caches[tree])  # warm the tree's cache
    runs = int(os.environ.get("RRA_COMPARE_RUNS", "21"))
    bare: list[tuple[float, float]] = []
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    jobs = [(tree, name) for tree in trees for name in commands]
    for i in range(runs):
        for tree, name in (jobs if i % 2 == 0 else jobs[::-1]):
            results.setdefault((tree, name), []).append(timed(tree, commands[name], caches[tree]))
        bare.append(timed_bare())
        shutil.rmtree(root / "runs", ignore_errors=True)
    base_wall, base_cpu = statistics.median(w for w, _ in bare), statistics.median(c for _, c in bare)
    print(f"{'python -c pass':24s} {'':12s} wall median {1000 * base_wall:6.1f} ms  cpu median "
          f"{1000 * base_cpu:6.1f} ms ({runs} runs)")
    for (tree, name), values in results.items():
        wall, cpu = statistics.median(w for w, _ in values), statistics.median(c for _, c in values)
        print(f"{tree:24s} {name:12s} wall median {1000 * wall:6.1f} ms  cpu median {1000 * cpu:6.1f} ms  "
              f"= {wall / base_wall:4.1f} / {cpu / base_cpu:4.1f} x python -c pass")
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


def timed_bare() -> tuple[float, float]:
    """Wall and CPU seconds of ``python -c pass`` (this interpreter)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


if __name__ == "__main__":
    sys.exit(main())
