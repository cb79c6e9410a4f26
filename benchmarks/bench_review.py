#!/usr/bin/env python3
"""Benchmark of ``rra review``: its own overhead beyond the launcher runs.

Usage::

    python benchmarks/bench_review.py            # 7 timed runs of each command
    python benchmarks/bench_review.py --quick    # 3

The artifact (generated in benchmarks/_work/review-*) has two launchers that do next to nothing:
``prepare`` (``true``) and ``score`` (a shell ``printf`` of a JSON file, five seeds), one claim
read from that file with five reference observations, an empty lock, declared hardware, the
author's run records and a generated guide: a review of it finds nothing. Two copies are timed,
alternately, each command in a fresh process:

- ``rra review ART -o DIR`` (a new DIR each time): checks, a fresh copy of the artifact, the
  environment from the lock (cached after the first build), the six runs, the comparisons, the
  report;
- ``rra run ART --all --env locked -q``: the same six runs in the same environment, which is
  what a review cannot avoid.

Overhead = median(review) - median(run), in wall-clock and in CPU seconds (user + system of the
process and its children; CPU is what a loaded shared machine disturbs least). Target
(issue 12): < 1 s. Exits 0 whether or not the target is met; the last line says which.
"""

from __future__ import annotations

import argparse
import hashlib
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
WORK = REPO / "benchmarks" / "_work"
RRA = str(Path(sys.executable).parent / "rra")
TARGET_S = 1.0
LOCK = "# The launchers need nothing but the shell: an empty lock.\n"


def write_artifact(root: Path) -> None:
    """The artifact described in the module docstring (manifest written as JSON, which is YAML)."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / "requirements.lock").write_text(LOCK, encoding="utf-8")
    resources = {"timeout_s": 60, "expected_runtime_s": 1}
    doc = {
        "rra_version": "1.0",
        "id": "review-bench",
        "title": "rra review benchmark",
        "paper": {"title": "rra review benchmark", "authors": [{"name": "Benchmark"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {
            "interpreter": {"version": f"{sys.version_info.major}.{sys.version_info.minor}"},
            "lock": {"path": "requirements.lock", "format": "requirements-hashes",
                     "sha256": hashlib.sha256(LOCK.encode()).hexdigest()},
            "hardware": {"cpu_cores": 1, "ram_gib": 1},
        },
        "launchers": [
            {"id": "prepare", "argv": ["true"], "stochastic": False, "resources": resources},
            {"id": "score", "argv": ["sh", "-c", 'mkdir -p out && printf \'{{"score": 0.5}}\' > "out/$0.json"', "{seed}"],
             "seeds": [0, 1, 2, 3, 4], "depends_on": ["prepare"], "resources": resources,
             "outputs": [{"id": "metrics", "path": "out/{seed}.json", "format": "json"}]},
        ],
        "claims": [{
            "id": "score", "paper_location": {"table": "1"}, "launcher": "score",
            "metric": {"name": "score", "unit": "", "direction": "higher"},
            "extract": {"output": "metrics", "json_pointer": "/score"},
            "reported": {"value": 0.5, "precision": 1},
            "reference": {"observations": [
                {"value": 0.5, "seed": s, "fingerprint": {"hardware": "any", "software": "sh"}}
                for s in range(5)]},
        }],
    }
    (root / "rra.yaml").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    for argv in ([RRA, "run", str(root), "--all", "--env", "locked", "-q"], [RRA, "guide", str(root)]):
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def timed(argv: list[str], expect: int = 0) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one run of ``argv``."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != expect:
        sys.exit(f"bench_review: {' '.join(argv)} exited {proc.returncode}:\n{proc.stdout.decode()[-3000:]}")
    return wall, after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 runs instead of 7")
    runs = 3 if parser.parse_args().quick else 7
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import compile_bytecode, warm_bytecode

    # As installing a wheel does: without it every process would compile the modules it imports.
    print(f"bytecode compiled for {compile_bytecode()}")
    reviewed, ran = WORK / "review-art", WORK / "review-run"
    for root in (reviewed, ran):
        write_artifact(root)
    out = WORK / "review-out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    # One untimed review and run: the first sight of a manifest fills the checked-manifest cache,
    # and the bytecode of the dependencies they import is cached (uv installs wheels without it).
    warm_bytecode([RRA, "review", str(reviewed), "-o", str(out / "warm")])
    warm_bytecode([RRA, "run", str(ran), "--all", "--env", "locked", "-q"])
    review_wall, review_cpu, run_wall, run_cpu = [], [], [], []
    for i in range(runs):
        wall, cpu = timed([RRA, "review", str(reviewed), "-o", str(out / f"r{i}")])
        review_wall.append(wall)
        review_cpu.append(cpu)
        wall, cpu = timed([RRA, "run", str(ran), "--all", "--env", "locked", "-q"])
        run_wall.append(wall)
        run_cpu.append(cpu)
    med = statistics.median
    wall_overhead = med(review_wall) - med(run_wall)
    cpu_overhead = med(review_cpu) - med(run_cpu)
    load = os.getloadavg()
    print(f"rra review (6 runs), median of {runs}: wall {med(review_wall):.3f} s (min {min(review_wall):.3f}), "
          f"CPU {med(review_cpu):.3f} s")
    print(f"rra run --all --env locked (the same 6 runs), median of {runs}: wall {med(run_wall):.3f} s "
          f"(min {min(run_wall):.3f}), CPU {med(run_cpu):.3f} s")
    print(f"overhead of rra review: wall {wall_overhead:.3f} s, CPU {cpu_overhead:.3f} s; load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs")
    print(f"target < {TARGET_S} s: wall {'met' if wall_overhead < TARGET_S else 'not met'}, "
          f"CPU {'met' if cpu_overhead < TARGET_S else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
