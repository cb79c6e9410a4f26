"""The Slurm executor against a real cluster on localhost (``tests/services/slurm.py``: munged,
slurmctld and slurmd with two fake GPUs): ``rra bench reproduce --executor slurm`` runs a
two-attempt GPU benchmark as a job array, a job cancelled mid-run is classified from Slurm's
own record (``scontrol``: this cluster has no accounting daemon) and resubmitted, and a
benchmark begun by the local executor and killed is finished on Slurm, then seen as done locally.

The launchers append to one counting file outside the workspaces, so what ran, where and on
which devices is read from what the real processes wrote.

Their launchers report to files of the test's directory (a counter, GPU use), which a sandbox
would hide: they run with ``--sandbox none``; tests/acceptance/test_bench_reproduce.py runs
attempts in both sandboxes."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from rra_tools.bench.executors.state import cell_digest
from rra_tools.model.bench_results import BenchResults

from ..rra_cli import rra, rra_command
from ..services.slurm import SlurmCluster
from .test_bench_executor import lines, taskset, wait_gone

#: Generous: the suite runs on loaded two-core machines.
TIMEOUT_S = 600


def _results(out: Path) -> BenchResults:
    return BenchResults.model_validate_json((out / "results.json").read_text(encoding="utf-8"))


def _state(out: Path, key: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((out / "state" / "cells" / f"{cell_digest(key)}.json").read_text())
    return data


def _wait(predicate: object, what: str, proc: subprocess.Popen[str] | None = None, timeout_s: float = 300) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            detail = ""
            if proc is not None:
                proc.kill()
                detail = str(proc.communicate())
            pytest.fail(f"timed out after {timeout_s:.0f} s waiting until {what} {detail}")
        time.sleep(0.1)


def test_two_gpu_attempts_run_as_a_job_array(slurm: SlurmCluster, tmp_path: Path) -> None:
    path = taskset(tmp_path, repeats=2, sleep_s=1, gpus=1)
    counter, out, scratch = tmp_path / "counter.log", tmp_path / "out", tmp_path / "scratch"
    done = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out), "--executor", "slurm",
               "--partition", slurm.partition, "--scratch", str(scratch), timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    assert "2/2 attempts succeeded" in done.stdout
    assert "p/e/t0/attempt-1: submitted as Slurm job " in done.stderr
    attempts = _results(out).tasks[0].attempts
    assert [(a.number, a.state) for a in attempts] == [(1, "success"), (2, "success")]
    # One array: job ids <array>_0 and <array>_1.
    jobs = [str(_state(out, f"p/e/t0/attempt-{n}")["slurm"]["job"]) for n in (1, 2)]  # type: ignore[index]
    assert jobs[0].split("_")[0] == jobs[1].split("_")[0] and {j.split("_")[1] for j in jobs} == {"0", "1"}
    # Fake gres devices: Slurm sets no CUDA_VISIBLE_DEVICES; the indices come from scontrol.
    for n in (1, 2):
        state = _state(out, f"p/e/t0/attempt-{n}")
        assert state["slurm"]["gpus_from"] == "scontrol"  # type: ignore[index]
        assert state["devices"] in ([0], [1])
    seen = lines(counter)
    # Each launcher ran once, in node-local scratch, with the device Slurm gave its job.
    assert sorted(w[1].rsplit("/", 1)[-1] for w in seen if w[0] == "end") == ["attempt-1", "attempt-2"]
    for w in seen:
        assert w[1].startswith(str(scratch)) and w[2] in ("0", "1"), w
    assert list(scratch.iterdir()) == []  # scratch cleaned after gathering
    # Gathered: the run records are in the benchmark directory, named by the results.
    for a in attempts:
        assert a.record is not None and (out / a.record).is_file()
    assert not list((out / "state" / "started").iterdir())


def test_a_cancelled_job_is_an_infrastructure_failure_and_is_retried(slurm: SlurmCluster, tmp_path: Path) -> None:
    # Long enough that the cancelled launcher cannot end on its own before the kill reaches it
    # on a loaded machine (scancel, SIGTERM to the job, the runner stopping the group).
    path = taskset(tmp_path, repeats=2, sleep_s=20)
    counter, out = tmp_path / "counter.log", tmp_path / "out"
    proc = subprocess.Popen([*rra_command(), "bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out), "--executor", "slurm",
                             "--max-retries", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    marker = out / "state" / "started" / f"{cell_digest('p/e/t0/attempt-2')}.json"
    _wait(lambda: any(w[0] == "start" and w[1].endswith("attempt-2") for w in lines(counter)),
          "attempt 2's launcher started", proc)
    job = json.loads(marker.read_text())["slurm_job"]
    cancelled = slurm.command("scancel", job)
    assert cancelled.returncode == 0, cancelled.stderr
    stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, stderr
    assert f"p/e/t0/attempt-2: Slurm job {job} ended CANCELLED (scontrol: " in stderr, (stderr, lines(counter))
    assert "infrastructure failure (cancelled), submitting it again" in stderr
    assert "2/2 attempts succeeded" in stdout, (stdout, stderr, lines(counter))
    attempts = _results(out).tasks[0].attempts
    assert [(a.number, a.state, a.restarted) for a in attempts] == [(1, "success", None), (2, "success", 1)]
    seen = lines(counter)
    assert stderr.count("submitting it again") == 1, stderr  # only the cancelled job died
    # The cancelled launcher never ended; the resubmitted one did, in a job of its own.
    assert sum(w[0] == "start" and w[1].endswith("attempt-2") for w in seen) == 2
    assert sum(w[0] == "end" and w[1].endswith("attempt-2") for w in seen) == 1
    assert _state(out, "p/e/t0/attempt-2")["slurm"]["job"] != job  # type: ignore[index]

    # With no retry left, the cancelled job is the attempt's final result: an infrastructure failure.
    path2 = taskset(tmp_path / "again", repeats=1, sleep_s=30)
    counter2, out2 = tmp_path / "again" / "counter.log", tmp_path / "again" / "out"
    proc = subprocess.Popen([*rra_command(), "bench", "reproduce", str(path2), "--sandbox", "none", "-o", str(out2), "--executor", "slurm",
                             "--max-retries", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait(lambda: any(w[0] == "start" for w in lines(counter2)), "the launcher started", proc)
    job = json.loads((out2 / "state" / "started" / f"{cell_digest('p/e/t0/attempt-1')}.json").read_text())["slurm_job"]
    assert slurm.command("scancel", job).returncode == 0
    stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, stderr
    (attempt,) = _results(out2).tasks[0].attempts
    assert attempt.state == "infrastructure_failure", (stdout, stderr)
    assert attempt.detail is not None and attempt.detail.startswith(f"cancelled: Slurm job {job} ended CANCELLED")
    assert attempt.detail.endswith("given up after 1 job(s)")


def test_a_local_benchmark_killed_mid_way_is_finished_on_slurm(slurm: SlurmCluster, tmp_path: Path) -> None:
    path = taskset(tmp_path, repeats=3, sleep_s=1.5)
    counter, out = tmp_path / "counter.log", tmp_path / "out"
    proc = subprocess.Popen([*rra_command(), "bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out), "-j", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait(lambda: sum(w[0] == "end" for w in lines(counter)) == 1 and sum(w[0] == "start" for w in lines(counter)) == 2,
          "the local run finished attempt 1 and started attempt 2", proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    # The killed rra's watchdog stops its launcher (attempt 2's, the last started).
    wait_gone(int([w for w in lines(counter) if w[0] == "start"][-1][4]))
    done = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out), "--executor", "slurm", timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    assert "p/e/t0 attempt 1: success (finished earlier)" in done.stderr
    assert "p/e/t0/attempt-1: submitted" not in done.stderr
    assert "p/e/t0/attempt-2: submitted as Slurm job" in done.stderr
    attempts = _results(out).tasks[0].attempts
    assert [(a.number, a.state, a.restarted) for a in attempts] == [
        (1, "success", None), (2, "success", 1), (3, "success", None)]
    ends = [w[1].rsplit("/", 1)[-1] for w in lines(counter) if w[0] == "end"]
    assert sorted(ends) == ["attempt-1", "attempt-2", "attempt-3"]
    # The local workspace of the killed attempt is kept aside; the Slurm one is gathered in its place.
    assert (out / "work/p/e/t0/attempt-2.interrupted-1").is_dir()
    assert attempts[1].record is not None and (out / attempts[1].record).is_file()
    # And back: the local executor finds everything done on Slurm and runs nothing.
    again = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out), timeout=TIMEOUT_S)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("(finished earlier)") == 3
    assert len([w for w in lines(counter) if w[0] == "end"]) == 3


def test_slurm_options_need_the_slurm_executor(tmp_path: Path) -> None:
    path = taskset(tmp_path, repeats=1, sleep_s=0.1)
    done = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(tmp_path / "out"), "--partition", "gpu", "--time", "5")
    assert done.returncode == 2
    assert "Error: --partition, --time: only for --executor slurm" in done.stderr


def test_a_partition_slurm_refuses_is_a_clear_error(slurm: SlurmCluster, tmp_path: Path) -> None:
    path = taskset(tmp_path, repeats=1, sleep_s=0.1)
    done = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(tmp_path / "out"), "--executor", "slurm",
               "--partition", "nosuch", timeout=TIMEOUT_S)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "error: Slurm refused the benchmark's jobs: " in done.stderr
    assert "invalid partition" in done.stderr.lower()
