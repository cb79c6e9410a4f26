#!/usr/bin/env python3
"""Benchmark of a cell's sandbox: what starting and tearing it down adds to a command. Targets
(issue 21): at most 0.3 s added by bubblewrap and at most 2 s by Podman, at the median.

Usage::

    python benchmarks/bench_sandbox.py              # 30 runs of each backend
    python benchmarks/bench_sandbox.py --runs 100   # more
    python benchmarks/bench_sandbox.py --quick      # 5

One cell's command, ``/usr/bin/true``, through ``run_sandboxed`` as ``rra bench run`` calls it
(the same ``CellCommand``: workspace, environment, limits of 30 s, 256 MiB, 64 processes, 1 CPU
and 20 MiB of disk, no metering proxy), with three backends:

- ``none``: the command on the host (``sh -c``), the bare figure;
- ``bwrap``: bubblewrap, with the cell's control group made, joined and removed;
- ``podman``: Podman over an empty root directory, the container removed at the end.

Each timed call is the whole ``run_sandboxed`` (a fresh run directory, the mounts, the command
line, the sandbox started, the command run, everything it started ended, the group or container
and the directories removed). Each round runs the three once, in an order that rotates, so that
drift hits all alike; one untimed round first (the backends' probes, the page cache). Printed:
min, p50 and p90 of each, the process's own lifetime (``SandboxExit.wall_s``: start to exit),
and the seconds added to bare at p50 with their ratio. Every run must exit 0 with nothing
stopped, or the row says NO.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, WORK, Row, fmt_s, load, machine, print_table

sys.path.insert(0, str(REPO))
from rra_tools.agents.sandbox import Backend, CellCommand, new_run_dir, probe, resolve_backend, run_sandboxed
from rra_tools.model.cell import SandboxLimits

TARGETS_S = {"bwrap": 0.3, "podman": 2.0}
NAMES = {"bwrap": "bubblewrap", "podman": "Podman"}


def percentile(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="timed runs of each backend")
    parser.add_argument("--quick", action="store_true", help="5 runs of each backend")
    args = parser.parse_args()
    runs = 5 if args.quick else args.runs
    print(f"machine: {machine()}")
    print(f"environment: {sys.prefix}")
    backends: dict[str, Backend] = {"none": resolve_backend("none")}
    unusable: dict[str, str] = {}
    for name in TARGETS_S:
        found = probe(name)
        if isinstance(found, Backend):
            backends[name] = found
            print(f"{name}: {' '.join(found.command)}")
        else:
            unusable[name] = found
            print(f"{name}: CANNOT RUN HERE: {found}")
    root = WORK / "sandbox"
    shutil.rmtree(root, ignore_errors=True)
    workspace = root / "ws"
    workspace.mkdir(parents=True)
    bindir = Path(sys.executable).parent
    command = CellCommand(command="/usr/bin/true", workspace=workspace, env={"PATH": f"{bindir}:/usr/bin:/bin"},
                          limits=SandboxLimits(wall_clock_s=30, memory_mib=256, pids=64, cpus=1, disk_mib=20),
                          proxy=False)
    total: dict[str, list[float]] = {name: [] for name in backends}
    inside: dict[str, list[float]] = {name: [] for name in backends}
    failed: dict[str, int] = {name: 0 for name in backends}
    order = list(backends)
    for n in range(runs + 1):
        shift = n % len(order)
        for name in order[shift:] + order[:shift]:
            started = time.perf_counter()
            ended = run_sandboxed(command, backends[name], requested=name, logs=root / "logs", run_dir=new_run_dir())
            elapsed = time.perf_counter() - started
            if n == 0:
                continue  # untimed round
            total[name].append(elapsed)
            inside[name].append(ended.wall_s)
            failed[name] += ended.exit_status != 0 or ended.stopped is not None
    shutil.rmtree(root, ignore_errors=True)
    print(f"{runs} timed runs of each backend, interleaved, after one untimed round; load average {load():.2f} "
          "at the end")
    print()
    print(f"{'backend':<8} {'min':>8} {'p50':>8} {'p90':>8} {'process p50':>12} {'added p50':>10} {'ratio':>7}")
    bare = statistics.median(total["none"])
    for name in backends:
        values = total[name]
        added = "" if name == "none" else f"{fmt_s(statistics.median(values) - bare):>10} " \
                                          f"{statistics.median(values) / bare:>7.1f}"
        print(f"{name:<8} {fmt_s(min(values)):>8} {fmt_s(statistics.median(values)):>8} "
              f"{fmt_s(percentile(values, 90)):>8} {fmt_s(statistics.median(inside[name])):>12} {added}".rstrip())
    print()
    rows = []
    for name, target in TARGETS_S.items():
        goal = f"<= {target:g} s added"
        label = f"{NAMES[name]} start + teardown, added to bare (p50)"
        if name in unusable:
            rows.append(Row(label, "-", "limit", fmt_s(target), "-", goal, "NO: cannot run here"))
            continue
        p50 = statistics.median(total[name])
        added = p50 - bare
        met = "NO: a run failed" if failed[name] else ("yes" if added <= target else "NO")
        rows.append(Row(label, fmt_s(added), "limit", fmt_s(target), f"{added / target:.2f}", goal, met))
        rows.append(Row(f"{NAMES[name]} whole cell of /usr/bin/true (p50)", fmt_s(p50), "bare (none)", fmt_s(bare),
                        f"{p50 / bare:.1f}", "", ""))
    if failed["none"]:
        print(f"bare: {failed['none']} run(s) did not exit 0")
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
