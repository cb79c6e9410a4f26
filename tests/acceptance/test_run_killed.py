"""``rra run`` killed with SIGKILL (as the out-of-memory killer does): the launcher's process
group dies with it, its GPU stays locked while the launcher lives, and the run directory left
without a record is reported and finished by the next ``rra results`` / ``rra run``. Real
processes and real signals; no mocks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rra_tools.run import GpuUnavailable, load_artifact
from rra_tools.run.gpus import INVENTORY_ENV, LOCK_DIR_ENV, acquire, inventory
from rra_tools.run.pending import PENDING_NAME, finish_orphaned_runs

from ..rra_cli import rra
from .test_run_local import alive
from .test_run_outputs import _artifact

STUBBORN = """
    import os, signal, subprocess, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only the watchdog's SIGKILL ends it
    child = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"])
    os.makedirs("out", exist_ok=True)
    with open("out/pids.txt", "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    print("ready", flush=True)
    time.sleep(120)
"""


@pytest.fixture()
def gpu_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env[INVENTORY_ENV] = json.dumps([{"index": 0, "model": "Fake GPU"}])
    env[LOCK_DIR_ENV] = str(tmp_path / "locks")
    return env


def _start(root: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "rra_tools", "run", str(root), "job"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    return proc


def _wait_dead(pids: list[int], within_s: float) -> list[int]:
    deadline = time.monotonic() + within_s
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def test_sigkill_of_rra_run_takes_the_launcher_group_and_keeps_the_gpu_until_it_is_gone(
        tmp_path: Path, gpu_env: dict[str, str]) -> None:
    root = _artifact(tmp_path / "art", STUBBORN, [{"id": "pids", "path": "out/pids.txt", "format": "text"}],
                     resources={"timeout_s": 300, "expected_runtime_s": 1, "gpus": 1})
    proc = _start(root, gpu_env)
    leader, grandchild = map(int, (root / "out" / "pids.txt").read_text().split())
    (run_dir,) = (root / "runs" / "job").iterdir()
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    # rra run is gone, the launcher (which ignores SIGTERM) still runs for the grace period:
    # its GPU must not be handed to anyone else meanwhile.
    assert alive(leader)
    gpus = inventory(gpu_env)
    with pytest.raises(GpuUnavailable, match=r"only 0 of 1 are free"):
        acquire(1, "next", gpus, gpu_env).release()
    # ... and a run directory whose launcher lives is not finished by anyone.
    (running,) = finish_orphaned_runs(load_artifact(root))
    assert (running.state, running.record) == ("running", None)
    assert not (run_dir / "record.json").exists()

    assert _wait_dead([leader, grandchild], 60) == [], "the launcher's group was still alive 60 s after rra run"
    acquire(1, "next", gpus, gpu_env).release()  # the device is free once the group is gone

    proc2 = rra("results", str(root))
    rel = run_dir.relative_to(root).as_posix()
    assert (f"run without a record: {rel}: its rra run was killed; finished it as interrupted -> "
            f"{rel}/record.json") in proc2.stdout
    record = json.loads((run_dir / "record.json").read_text())
    assert record["status"] == "interrupted" and record["exit_status"] is None and "signal" not in record
    assert record["launcher"] == "job" and record["gpus"] == [0] and record["outputs"] == []
    assert record["argv"] == ["python", "job.py"] and record["environment"]["CUDA_VISIBLE_DEVICES"] == "0"
    (message,) = record["messages"]
    assert message.startswith(f"rra run (pid {proc.pid}) ended without writing this record: it was killed")
    assert "The exit status is not known; 'ended' is the last write to the run's logs" in message
    assert record["ended"] >= record["started"]
    assert [log["stream"] for log in record["logs"]] == ["stdout", "stderr"]
    assert (run_dir / "stdout.log").read_text() == "ready\n"
    assert not (run_dir / PENDING_NAME).exists()
    # Finished once: the next look finds nothing to say.
    assert "run without a record" not in rra("results", str(root)).stdout


def test_rra_run_finishes_an_orphan_it_finds(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", "import os, time\nopen('pid', 'w').write(str(os.getpid()))\n"
                     "print('ready', flush=True)\ntime.sleep(120)\n", [])
    proc = _start(root, dict(os.environ))
    (run_dir,) = (root / "runs" / "job").iterdir()
    proc.kill()
    proc.communicate(timeout=30)
    # The launcher takes the watchdog's SIGTERM: gone soon (waited for, not assumed: a loaded
    # machine may take a while). The next rra run (here: of a fresh launcher directory next to
    # it) finishes the orphan before it starts.
    assert _wait_dead([int((root / "pid").read_text())], 60) == [], "the launcher was still alive 60 s after rra run"
    data = json.loads((root / "rra.yaml").read_text())
    data["launchers"].append({**data["launchers"][0], "id": "other", "argv": ["python", "-c", "pass"]})
    (root / "rra.yaml").write_text(json.dumps(data))
    done = rra("run", str(root), "other")
    assert done.returncode == 0, done.stderr
    rel = run_dir.relative_to(root).as_posix()
    assert f"[rra] run without a record: {rel}: its rra run was killed; finished it as interrupted" in done.stderr
    assert json.loads((run_dir / "record.json").read_text())["status"] == "interrupted"


def test_a_run_directory_with_nothing_to_finish_it_from_is_reported(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", "print('hi')\n", [])
    stray = root / "runs" / "job" / "noseed-20260101T000000.000000Z"
    stray.mkdir(parents=True)
    (stray / "stdout.log").write_text("")
    proc = rra("results", str(root), "--format", "json")
    data: dict[str, Any] = json.loads(proc.stdout)
    assert data["unfinished_runs"] == [{"directory": "runs/job/noseed-20260101T000000.000000Z",
                                        "state": "unknown", "record": None}]
    assert not (stray / "record.json").exists()


def _children() -> set[int]:
    """Live child processes of this test process."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            found.update(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return {p for p in found if alive(p)}


def test_a_normal_run_leaves_no_pending_record_and_no_watchdog(tmp_path: Path) -> None:
    from .test_run_local import run_one

    root = _artifact(tmp_path / "art", "print('hi')\n", [])
    before = _children()
    result = run_one(root, "job")
    assert result.successful
    assert sorted(p.name for p in result.directory.iterdir()) == ["record.json", "stderr.log", "stdout.log"]
    deadline = time.monotonic() + 60
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _children() - before == set(), "a watchdog (or anything else) was still running 60 s after the run"
