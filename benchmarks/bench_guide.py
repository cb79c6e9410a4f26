#!/usr/bin/env python3
"""Benchmark of ``rra guide``: rendering REPRODUCE.md from the manifest and the run records.

Usage::

    python benchmarks/bench_guide.py            # 11 timed runs per artifact
    python benchmarks/bench_guide.py --quick    # 5 runs

Artifacts (copied into benchmarks/_work/guide-*): ``examples/digits-logreg`` (one launcher, one
claim) and the conformance base ``gpu`` (two launchers, three claims with JSON/CSV/regex
extraction, two change records, a discrepancy, a container image and a run record). Each run is
a fresh ``rra guide -o OUT ARTIFACT`` process (the guide is rewritten: the output file is removed
first); the figure is the median. ``rra --version`` and ``rra validate`` of the first artifact
are timed the same way, for scale (process start and import of the CLI; the cold start of the
most used command). Bytecode is cached first, as an installed package has it (the
untimed runs, see ``_common.warm_bytecode``): this machine sets PYTHONDONTWRITEBYTECODE and uv
installs without bytecode, so otherwise each run would compile click and every module it
imports from source. Target (issue 12): < 0.3 s. Exits 0 whether or not the target is
met; the last line says which.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / "_work"
RRA = str(Path(sys.executable).parent / "rra")
TARGET_S = 0.3
ARTIFACTS = {"digits-logreg": REPO / "examples" / "digits-logreg",
             "gpu": REPO / "conformance" / "v1.0" / "bases" / "gpu"}


def _time(argv: list[str], runs: int, before: object = None) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (user + system) seconds of each run; CPU time is what a loaded shared
    machine disturbs least."""
    times, cpu = [], []
    for _ in range(runs):
        if callable(before):
            before()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime)
    return times, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 runs instead of 11")
    runs = 5 if parser.parse_args().quick else 11
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import warm_bytecode

    WORK.mkdir(parents=True, exist_ok=True)
    worst = 0.0
    for name, src in ARTIFACTS.items():
        art = WORK / f"guide-{name}"
        shutil.rmtree(art, ignore_errors=True)
        shutil.copytree(src, art, symlinks=True)
        out = WORK / f"guide-{name}.md"
        # One untimed run: the first sight of a manifest fills the checked-manifest cache, and
        # the modules' bytecode is cached.
        warm_bytecode([RRA, "guide", "-o", str(out), str(art)])
        times, cpu = _time([RRA, "guide", "-o", str(out), str(art)], runs, lambda: out.unlink(missing_ok=True))
        median = statistics.median(times)
        worst = max(worst, median)
        print(f"rra guide {name}, fresh process, median of {runs}: {median:.3f} s "
              f"(min {min(times):.3f}, max {max(times):.3f}); CPU {statistics.median(cpu):.3f} s; "
              f"{len(out.read_bytes()):,} bytes")
    # For scale: process start and the CLI's import, and the cold start of 'rra validate'.
    art = WORK / "guide-digits-logreg"
    for label, argv in (("rra --version", [RRA, "--version"]), ("rra validate digits-logreg", [RRA, "validate", str(art)])):
        warm_bytecode(argv)
        scale_times, scale_cpu = _time(argv, runs)
        print(f"{label}, median of {runs}: {statistics.median(scale_times):.3f} s, "
              f"CPU {statistics.median(scale_cpu):.3f} s")
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs")
    print(f"target < {TARGET_S} s: {'met' if worst < TARGET_S else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
