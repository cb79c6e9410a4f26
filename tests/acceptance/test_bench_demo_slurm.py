"""The bench demo (examples/bench-demo) on the local Slurm cluster (tests/services/slurm.py), its
refined condition (3 papers × 4 reproducers × 2 repeats = 24 cells as job arrays), with the job of
one cell killed with ``scancel`` while its reproducer runs: the cell is classified from Slurm's
record, submitted again, and ends as it would have (the 'slow' reproducer runs past the demo's
10 s limit: a timeout); every other cell scores as on the local executor."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from rra_tools.bench.executors.state import cell_digest
from rra_tools.model.bench_results import BenchResults

from ..rra_cli import rra_command
from ..services.slurm import SlurmCluster

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "bench-demo"
TIMEOUT_S = 900


def test_the_demo_runs_on_slurm_and_recovers_a_job_killed_mid_run(slurm: SlurmCluster, tmp_path: Path) -> None:
    demo = tmp_path / "bench-demo"
    shutil.copytree(DEMO, demo)
    made = subprocess.run(["sh", str(demo / "setup.sh")], capture_output=True, text=True, timeout=120, check=False)
    assert made.returncode == 0, made.stderr
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    proc = subprocess.Popen(
        [*rra_command(), "bench", "run", str(demo / "taskset.yaml"), "--references",
         str(demo / "references.private.yaml"), "-o", str(out), "--condition", "refined", "--executor", "slurm",
         "--scratch", str(scratch), "--max-retries", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "BENCH_DEMO": str(demo)})
    key = "fitting-lines/table-1/rmse/refined/slow/1"
    # Mid-run: the job's reproducer has started in the node's scratch (it writes its pgid first).
    deadline = time.monotonic() + 600
    while not list(scratch.glob(f"rra-cell-{cell_digest(key)}-*/cells/{key}/reproducer.pgid")):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"the slow cell's reproducer never started: {proc.communicate()}")
        time.sleep(0.1)
    job = json.loads((out / "state" / "started" / f"{cell_digest(key)}.json").read_text())["slurm_job"]
    assert slurm.command("scancel", job).returncode == 0
    stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, stderr[-3000:]
    assert f"{key}: Slurm job {job} ended CANCELLED (scontrol: " in stderr, stderr[-3000:]
    assert stderr.count("submitting it again") == 1, stderr[-3000:]
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    assert len(results.cells) == 24
    states: dict[str, dict[str, int]] = {}
    for cell in results.cells:
        counts = states.setdefault(cell.cell.reproducer, {})
        counts[str(cell.state)] = counts.get(str(cell.state), 0) + 1
    assert states["honest"] == {"success": 6}
    assert states["cheating"] == {"audit_violation": 6}
    assert states["slow"] == {"infrastructure_failure": 6}
    assert {str(c.infrastructure) for c in results.cells if c.cell.reproducer == "slow"} == {"timeout"}
    # The killed cell ran again, to the end it has on any executor, and says it was restarted.
    killed = next(c for c in results.cells if c.cell.key == key)
    assert killed.restarted == 1 and killed.infrastructure == "timeout", killed
    assert list(scratch.iterdir()) == []
    assert "/24 cells succeeded" in stdout, stdout
