#!/usr/bin/env python3
"""Benchmark of the benchmark's Slurm executor (rra_tools/bench/executors/slurm.py) against a real cluster
on localhost (tests/services/slurm.py: munged, slurmctld and slurmd, started by this script):
submitting a 1,000-cell grid, and gathering 1,000 finished cells.

Usage::

    python benchmarks/bench_slurm.py            # 1,000 cells
    python benchmarks/bench_slurm.py --quick    # 200 cells

Needs root (the cluster's daemons), slurm-wlm, munge and the 'slurm' extra (submitit).

a) **Submit.** ``rra bench run``'s library path (``run_benchmark`` with Slurm options) over a
   grid of 42 tasks × 2 conditions × 4 reproducers × 3 repeats = 1,008 cells (9 tasks, 216 cells
   with ``--quick``) of the tiny artifact of the tests, into a partition set DOWN so that nothing
   runs and the machine's load does not move the figure: seconds from the call until the last
   cell is submitted (its start marker written, its job id known). Peers: the bare
   ``sbatch --array=0-(N-1) --wrap true`` of the same size (one command, nothing pickled: the
   floor of Slurm itself), and submitit alone (``AutoExecutor.batch()`` of N no-op functions: the
   floor of submitting through submitit, which the issue requires). Target < 10 s for 1,000.
b) **Gather.** ``execute_slurm`` over N synthetic cells (N = 1,000; 200 with ``--quick``), again
   into the DOWN partition; with their jobs pending, each cell's job body (``_job``, what a node
   runs: the cell in node-local scratch, a workspace of 20 files, 200 KB, copied into the
   benchmark directory, its result written into the state directory) is run here, one after
   another, so that no job start (a Python interpreter per job, which the cluster pays, not rra)
   is in the figure; then the submitting loop finds the N results and ends. Figures: the job
   bodies' total (the gathering done in the jobs, spread over the nodes), and the submitter's
   time from the last result written to its return (it polls every 0.5 s here; collecting N
   results takes one pass), which must be < 10 s for 1,000. Peer of the first: ``cp -r`` of the
   same trees.

Prints one table; exits 0 whether or not the targets are met.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / "_work" / "slurm"
TARGET_S = 10.0
FILES, FILE_BYTES = 20, 10_000

sys.path.insert(0, str(REPO))

from rra_tools.bench import load_taskset, plan_run, run_benchmark  # noqa: E402
from rra_tools.bench.cells import BenchRun  # noqa: E402
from rra_tools.bench.executors.local import CellEvent, CellResult, CellSlot  # noqa: E402
from rra_tools.bench.executors.slurm import SlurmOptions, _job, execute_slurm  # noqa: E402
from tests.bench_tiny import tiny_artifact, tiny_taskset  # noqa: E402
from tests.services.slurm import SlurmCluster, slurm_cluster  # noqa: E402


@dataclass(frozen=True)
class _Cell:
    key: str
    gpus: int = 0


def _write_cell(cell: _Cell, slot: CellSlot) -> CellResult:
    """A cell's work as the benchmark sees it: a workspace of FILES files in its directory."""
    assert slot.workdir is not None
    workspace = slot.workdir / "cells" / cell.key / "workspace"
    workspace.mkdir(parents=True)
    for i in range(FILES):
        (workspace / f"f{i}.txt").write_bytes(b"x" * FILE_BYTES)
    return CellResult({"state": "success", "files": FILES})


def _lost(cell: _Cell, kind: str, detail: str) -> dict[str, Any]:
    return {"state": "infrastructure_failure", "detail": f"{kind}: {detail}"}


def _bare_sbatch(cluster: SlurmCluster, n: int, partition: str) -> float:
    t0 = time.perf_counter()
    done = cluster.command("sbatch", "--parsable", f"--array=0-{n - 1}", "-p", partition, "-o", "/dev/null",
                           "--wrap", "true", timeout=600)
    elapsed = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr
    cluster.command("scancel", done.stdout.strip().split(";")[0])
    return elapsed


def _noop() -> None:
    return None


def _submitit_alone(n: int, partition: str, folder: Path) -> float:
    import submitit

    executor = submitit.AutoExecutor(folder=str(folder / "%j"), cluster="slurm")
    executor.update_parameters(timeout_min=10, slurm_partition=partition, slurm_job_name="bare")
    t0 = time.perf_counter()
    with executor.batch():
        jobs = [executor.submit(_noop) for _ in range(n)]
    elapsed = time.perf_counter() - t0
    subprocess.run(["scancel", jobs[0].job_id.split("_")[0]], check=False, capture_output=True)
    return elapsed


def _cp_r(trees: Path, into: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(["cp", "-r", str(trees), str(into)], check=True)
    return time.perf_counter() - t0


def _grid(directory: Path, tasks: int) -> BenchRun:
    """``tasks`` tasks of the tiny artifact, both conditions, 4 reproducers, 3 repeats."""
    tiny_artifact(directory / "tiny")
    taskset, references = tiny_taskset(directory, repeats=3)
    data = json.loads(taskset.read_text())
    data["papers"][0]["experiments"][0]["tasks"] = [{"id": f"t{i}", "artifact": "tiny", "claim": "score"}
                                                    for i in range(tasks)]
    taskset.write_text(json.dumps(data))
    refs = json.loads(references.read_text())
    observations = refs["references"][0]["observations"]
    refs["references"] = [{"task": f"p/t1/t{i}", "observations": observations} for i in range(tasks)]
    references.write_text(json.dumps(refs))
    return plan_run(load_taskset(str(taskset), str(references)), directory / "out",
                    {f"agent{i}": "true" for i in range(4)})


def _submit_grid(tasks: int, partition: str) -> tuple[str, float, str]:
    bench = _grid(WORK / "grid", tasks)
    n = len(bench.cells())
    submitted: list[float] = []
    stop = threading.Event()

    def on_event(event: CellEvent) -> None:
        if event.kind == "submitted":
            submitted.append(time.perf_counter())
            if len(submitted) == n:
                stop.set()  # every job is queued: cancel them (nothing ran) and return

    t0 = time.perf_counter()
    run_benchmark(bench, slurm=SlurmOptions(partition=partition), on_event=on_event, stop=stop)
    assert len(submitted) == n, f"only {len(submitted)} of {n} cells were submitted"
    seconds = submitted[-1] - t0
    return (f"rra bench run's run_benchmark: submit {n} cells (call to last job id)", seconds,
            f"< {TARGET_S:g} s: {'met' if seconds < TARGET_S else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 cells")
    quick = parser.parse_args().quick
    n, tasks = (200, 9) if quick else (1000, 42)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    rows: list[tuple[str, float, str]] = []
    with slurm_cluster() as cluster:
        partition = cluster.second
        down = cluster.command("scontrol", "update", f"PartitionName={partition}", "State=DOWN")
        assert down.returncode == 0, down.stderr
        print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {n} cells; "
              f"partition {partition!r} DOWN (jobs pend)")
        rows.append((f"bare sbatch --array=0-{n - 1} (one command)", _bare_sbatch(cluster, n, partition), "peer"))
        rows.append((f"submitit alone, batch() of {n} no-op functions",
                     _submitit_alone(n, partition, WORK / "submitit"), "peer"))

        rows.append(_submit_grid(tasks, partition))
        cells = [_Cell(f"p/e/t{i // 6}/{('raw', 'refined')[i % 2]}/agent/{i % 3 + 1}") for i in range(n)]
        state, out = WORK / "out" / "state", WORK / "out"
        submitted: list[float] = []
        stop = threading.Event()

        def progress(event: CellEvent) -> None:
            if event.kind == "submitted":
                submitted.append(time.perf_counter())

        result: dict[str, Any] = {}

        def run() -> None:
            result["finished"] = execute_slurm(
                cells, _write_cell, state, out, lost=_lost, options=SlurmOptions(partition=partition, poll_s=0.5),
                progress=progress, stop=stop, handle_signals=False)
            result["returned"] = time.perf_counter()

        submitter = threading.Thread(target=run)
        submitter.start()
        while len(submitted) < n and submitter.is_alive():
            time.sleep(0.05)
        assert len(submitted) == n, f"only {len(submitted)} of {n} cells were submitted"

        # b) The job bodies, here, one after another; then the submitter collects.
        scratch = WORK / "scratch"
        t1 = time.perf_counter()
        for cell in cells:
            _job(cell, _write_cell, str(state), str(out), str(scratch), 0, "2026-01-01T00:00:00Z")
        t2 = time.perf_counter()
        rows.append((f"job bodies: {n} cells run in scratch and gathered ({FILES} files each)", t2 - t1,
                     "in the jobs, on the nodes"))
        rows.append((f"cp -r of the same {n} trees", _cp_r(out / "cells", WORK / "copy"), "peer"))
        submitter.join(timeout=600)
        if submitter.is_alive():
            stop.set()
            submitter.join()
        finished = result.get("finished", {})
        assert len(finished) == n, f"the submitter collected {len(finished)} of {n} results"
        collect = result["returned"] - t2
        rows.append((f"rra execute_slurm: collect {n} finished cells (last result to return, poll 0.5 s)", collect,
                     f"< {TARGET_S:g} s: {'met' if collect < TARGET_S else 'NOT met'}"))
        cluster.command("scancel", "-p", partition)
    width = max(len(r[0]) for r in rows)
    for what, seconds, note in rows:
        print(f"{what.ljust(width)}  {seconds:8.2f} s  {note}")
    print(f"load now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
