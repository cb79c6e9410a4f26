"""The benchmark's local executor through ``rra bench reproduce``: killed with SIGKILL mid-way
and resumed (no cell lost, none run twice, the killed one run again and marked so), GPU cells
on a fake inventory (concurrent cells never share a device), CPU cells side by side, the
memory limit, and the state directory's guards.

Every launcher appends to one counting file outside the workspaces, so what ran, when and on
which device is read from what the real processes wrote, not from the executor's own account.

Their launchers report to files of the test's directory (a counter, GPU use), which a sandbox
would hide: they run with ``--sandbox none``; tests/acceptance/test_bench_reproduce.py runs
attempts in both sandboxes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench.errors import BenchError
from rra_tools.bench.executors.local import CellResult, CellSlot, execute
from rra_tools.model.bench_results import BenchResults

from ..rra_cli import rra, rra_command

FP = {"hardware": "x86_64", "software": "sh"}

# $1: the counting file. Each run appends a start line (ending with the shell's pid) and, when it
# completes, an end line.
COUNT_SH = """echo "start $PWD ${CUDA_VISIBLE_DEVICES:--} $(date +%s.%N) $$" >> "$1"
sleep "$2"
echo "end $PWD ${CUDA_VISIBLE_DEVICES:--} $(date +%s.%N)" >> "$1"
mkdir -p out
printf '{"score": 0.5}' > out/metrics.json
"""

ALLOC_PY = """import json, os, sys
block = bytearray(int(sys.argv[1]) * 1024 * 1024)
os.makedirs("out", exist_ok=True)
json.dump({"score": 0.5}, open("out/metrics.json", "w"))
"""


def artifact(root: Path, counter: Path, sleep_s: float, gpus: int = 0, alloc_mib: int | None = None) -> Path:
    """A deterministic artifact whose one launcher counts its runs in ``counter``."""
    if alloc_mib is None:
        argv = ["sh", "count.sh", str(counter), str(sleep_s)]
    else:
        argv = ["python", "alloc.py", str(alloc_mib)]
    manifest = {
        "rra_version": "1.0", "id": "counted", "title": "Counted runs",
        "paper": {"title": "Counted", "authors": [{"name": "Test"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": argv, "stochastic": False,
                       "outputs": [{"id": "m", "path": "out/metrics.json", "format": "json"}],
                       "resources": {"gpus": gpus, "timeout_s": 60, "expected_runtime_s": sleep_s}}],
        "claims": [{"id": "score", "paper_location": {"table": "1"}, "launcher": "emit",
                    "metric": {"name": "score", "unit": "", "direction": "higher"},
                    "extract": {"output": "m", "json_pointer": "/score"},
                    "reported": {"value": 0.5, "precision": 2},
                    "reference": {"observations": [{"value": 0.5, "seed": s, "fingerprint": FP}
                                                   for s in range(3)]}}],
    }
    if gpus:
        manifest["environment"]["hardware"] = {"accelerators": [{"vendor": "nvidia", "model": "fake", "count": gpus}]}
    root.mkdir(parents=True)
    (root / "rra.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    (root / "count.sh").write_text(COUNT_SH, encoding="utf-8")
    (root / "alloc.py").write_text(ALLOC_PY, encoding="utf-8")
    return root


def taskset(tmp: Path, repeats: int, tasks: int = 1, **kwargs: Any) -> Path:
    counter = tmp / "counter.log"
    artifact(tmp / "art", counter, **kwargs)
    data = {"bench_version": "1.0", "id": "counted", "repeats": repeats,
            "papers": [{"id": "p", "experiments": [{"id": "e", "tasks": [
                {"id": f"t{i}", "artifact": "art", "claim": "score"} for i in range(tasks)]}]}]}
    path = tmp / "tasks.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def wait_gone(pid: int, timeout_s: float = 60) -> None:
    """Wait until process ``pid`` has ended (a zombie nobody reaps counts as ended): a launcher
    stopped by a killed rra's watchdog, however loaded the machine is."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.05)
    pytest.fail(f"launcher {pid} still runs {timeout_s} s after its rra was killed")


def lines(counter: Path) -> list[list[str]]:
    try:
        return [line.split() for line in counter.read_text(encoding="utf-8").splitlines()]
    except FileNotFoundError:
        return []


def test_killed_benchmark_resumes_without_losing_or_repeating_a_cell(tmp_path: Path) -> None:
    path = taskset(tmp_path, repeats=4, sleep_s=1.5)
    counter, out = tmp_path / "counter.log", tmp_path / "out"
    proc = subprocess.Popen([*rra_command(), "bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out), "-j", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    # Kill it while the third cell runs: two ended, a third started.
    while time.monotonic() < deadline:
        seen = lines(counter)
        if sum(w[0] == "end" for w in seen) == 2 and sum(w[0] == "start" for w in seen) == 3:
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail(f"the benchmark did not reach its third cell: {proc.communicate()}")
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    # The killed rra's watchdog stops the in-flight launcher: its end line never comes.
    wait_gone(int([w for w in lines(counter) if w[0] == "start"][2][4]))
    killed = [w for w in lines(counter) if w[0] == "start"][2][1]
    assert [w[1] for w in lines(counter) if w[0] == "end"] == [
        str(out / "work/p/e/t0/attempt-1"), str(out / "work/p/e/t0/attempt-2")]
    assert killed == str(out / "work/p/e/t0/attempt-3")
    assert not (out / "results.json").exists()

    done = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out), "-j", "1", timeout=300)
    assert done.returncode == 0, done.stderr
    seen = lines(counter)
    workspaces = [str(out / f"work/p/e/t0/attempt-{n}") for n in range(1, 5)]
    # Every cell completed exactly once; only the killed one was started twice.
    assert {ws: sum(w[0] == "end" and w[1] == ws for w in seen) for ws in workspaces} == dict.fromkeys(workspaces, 1)
    assert {ws: sum(w[0] == "start" and w[1] == ws for w in seen) for ws in workspaces} == \
        {workspaces[0]: 1, workspaces[1]: 1, workspaces[2]: 2, workspaces[3]: 1}
    results = BenchResults.model_validate_json((out / "results.json").read_text(encoding="utf-8"))
    attempts = results.tasks[0].attempts
    assert [(a.number, a.state, a.restarted) for a in attempts] == [
        (1, "success", None), (2, "success", None), (3, "success", 1), (4, "success", None)]
    # The killed attempt's workspace (with its unfinished run) is kept beside the new one.
    aside = out / "work/p/e/t0/attempt-3.interrupted-1"
    assert aside.is_dir() and list((aside / "runs" / "emit").iterdir())
    assert "p/e/t0 attempt 1: success (finished earlier)" in done.stderr
    assert "p/e/t0/attempt-3: started (again: it was killed mid-run 1 time(s))" in done.stderr
    assert "4/4 attempts succeeded" in done.stdout

    # A third run has nothing left to do and runs nothing.
    again = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out), timeout=120)
    assert again.returncode == 0, again.stderr
    assert lines(counter) == seen
    assert again.stderr.count("(finished earlier)") == 4


def _overlaps(seen: list[list[str]]) -> list[tuple[str, str]]:
    """(device, device) of every two runs whose [start, end] overlap."""
    spans: dict[str, dict[str, Any]] = {}
    for kind, where, device, at, *_ in seen:  # a start line ends with the pid
        spans.setdefault(where, {"device": device})[kind] = float(at)
    runs = list(spans.values())
    return [(a["device"], b["device"]) for i, a in enumerate(runs) for b in runs[i + 1:]
            if a["start"] < b["end"] and b["start"] < a["end"]]


def test_concurrent_gpu_cells_get_distinct_devices(tmp_path: Path) -> None:
    path = taskset(tmp_path, repeats=2, tasks=2, sleep_s=1.5, gpus=1)
    inventory = json.dumps([{"index": i, "model": "Fake GPU", "memory_mib": 1024} for i in (0, 1)])
    env = {"RRA_GPU_INVENTORY": inventory, "RRA_GPU_LOCK_DIR": str(tmp_path / "gpu-locks")}
    done = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(tmp_path / "out"), "-j", "4", env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = lines(tmp_path / "counter.log")
    assert len(seen) == 8 and {w[2] for w in seen} == {"0", "1"}
    pairs = _overlaps(seen)
    # Two devices, four cells: two at a time, never on the same device.
    assert pairs, "no two GPU cells ran at the same time"
    assert all(a != b for a, b in pairs), pairs
    assert max(sum(1 for w in seen if w[0] == "start" and float(w[3]) <= t) -
               sum(1 for w in seen if w[0] == "end" and float(w[3]) <= t) for t in (float(w[3]) for w in seen)) == 2
    assert "started on GPU 0" in done.stderr and "started on GPU 1" in done.stderr
    # GPU-hours of the full cost: each attempt's wall time x the one GPU its launcher was given.
    from rra_tools.bench.report.build import cells_of

    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {t["gpus"] for t in data["tasks"]} == {1}
    assert all(c.wall_s is not None and c.gpu_hours_measured == pytest.approx(c.wall_s / 3600)
               for c in cells_of(data))
    records = sorted((tmp_path / "out" / "work").glob("p/e/*/attempt-*/runs/emit/*/record.json"))
    assert len(records) == 4
    # Each record names the one device its run was given, the same one its launcher saw.
    for record in records:
        data = json.loads(record.read_text())
        assert [str(d) for d in data["gpus"]] == [data["environment"]["CUDA_VISIBLE_DEVICES"]]


def test_a_device_held_elsewhere_is_waited_for(tmp_path: Path) -> None:
    """A cell whose devices another process holds waits for them instead of failing."""
    from rra_tools.run.gpus import GpuInfo, acquire

    gpus = [GpuInfo(index=0, model="Fake GPU")]
    environ = {"RRA_GPU_LOCK_DIR": str(tmp_path / "locks")}
    held = acquire(1, "elsewhere", gpus, environ)
    timeline: list[tuple[str, float]] = []

    class Cell:
        key, gpus = "c", 1

    def run_one(cell: Cell, slot: CellSlot) -> CellResult:
        timeline.append(("ran", time.monotonic()))
        return CellResult({"devices": [g.index for g in slot.devices]})

    threading.Timer(0.6, lambda: (timeline.append(("freed", time.monotonic())), held.release())).start()
    results = execute([Cell()], run_one, tmp_path / "state", gpus=gpus, environ=environ, poll_s=0.05)
    assert [k for k, _ in timeline] == ["freed", "ran"]
    assert results["c"].data == {"devices": [0]}


def test_cpu_cells_run_side_by_side(tmp_path: Path) -> None:
    path = taskset(tmp_path, repeats=4, sleep_s=2.0)
    done = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(tmp_path / "out"), "-j", "2", timeout=300)
    assert done.returncode == 0, done.stderr
    seen = lines(tmp_path / "counter.log")
    assert len(_overlaps(seen)) >= 2  # (1, 2) and (3, 4) at least


def test_memory_limit_is_enforced_and_is_an_infrastructure_failure(tmp_path: Path) -> None:
    path = taskset(tmp_path, repeats=1, sleep_s=1.0, alloc_mib=800)
    out = tmp_path / "out"
    done = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out), "--memory-limit", "300", timeout=300)
    assert done.returncode == 0, done.stderr
    attempt = BenchResults.model_validate_json((out / "results.json").read_text()).tasks[0].attempts[0]
    assert attempt.state == "infrastructure_failure"
    assert attempt.detail is not None and attempt.detail.startswith("emit: out of memory: ")
    # Without the limit the same launcher succeeds: the limit, not the program, stopped it.
    done = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(tmp_path / "free"), timeout=300)
    assert BenchResults.model_validate_json((tmp_path / "free" / "results.json").read_text()) \
        .tasks[0].attempts[0].state == "success"


def test_state_directory_guards(tmp_path: Path) -> None:
    path = taskset(tmp_path, repeats=1, sleep_s=0.1)
    out = tmp_path / "out"
    assert rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out)).returncode == 0
    # Another task set into the same directory: refused, nothing mixed.
    data = json.loads(path.read_text())
    data["repeats"] = 2
    path.write_text(json.dumps(data))
    proc = rra("bench", "reproduce", str(path), "--sandbox", "none", "-o", str(out))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {str(out / 'work')!r} already exists and holds another benchmark")

    class Cell:
        key, gpus = "k", 0

    state = tmp_path / "state"
    state.mkdir()
    fd = os.open(state / "lock", os.O_RDWR | os.O_CREAT)
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, b"4242")
    try:
        with pytest.raises(BenchError, match=r"^another benchmark is running in '.*state' \(pid 4242\)$"):
            execute([Cell()], lambda c, s: CellResult({}), state)
    finally:
        os.close(fd)
    with pytest.raises(BenchError, match=r"^two cells of the benchmark have the key 'k'$"):
        execute([Cell(), Cell()], lambda c, s: CellResult({}), state)
