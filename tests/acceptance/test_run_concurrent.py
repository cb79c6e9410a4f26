"""Runs of one artifact at the same time, as real concurrent ``rra run`` processes: a record
never claims another run's outputs or its stray writes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ..rra_cli import rra
from .test_run_local import _launcher, manifest

# Writes its output(s), says so, then waits for the test's barrier (a file outside the artifact).
BODY = """
    import os, sys, time
    name, content = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
    with open(name, "w") as f:
        f.write(content)
    if len(sys.argv) > 3:
        open(sys.argv[3], "w").write("stray")   # a write outside every declared output
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(os.environ["BARRIER"]) and time.monotonic() < deadline:
        time.sleep(0.02)
"""


def _artifact(root: Path, barrier: Path, launchers: list[dict[str, Any]]) -> Path:
    data = manifest()
    data["launchers"] = [_launcher(ident, ["python", "job.py", *argv], env={"BARRIER": str(barrier)},
                                   outputs=outputs, **extra)
                         for ident, argv, outputs, extra in launchers]
    data["claims"] = []
    root.mkdir(parents=True)
    (root / "rra.yaml").write_text(json.dumps(data, indent=1), encoding="utf-8")
    (root / "job.py").write_text(textwrap.dedent(BODY).lstrip(), encoding="utf-8")
    return root


def _start(root: Path, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "rra_tools", "run", str(root), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    return proc


def _records(root: Path, launcher: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((root / "runs" / launcher).glob("*/record.json"))]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture()
def barrier(tmp_path: Path) -> Path:
    return tmp_path / "go"


def test_a_second_run_writing_the_same_output_is_refused_and_the_first_keeps_its_own(
        tmp_path: Path, barrier: Path) -> None:
    out = [{"id": "model", "path": "out/model.bin", "format": "binary"}]
    root = _artifact(tmp_path / "art", barrier, [
        ("train", ["out/model.bin", "weights of seed {seed}"], out, {"stochastic": True, "seeds": [0, 1]}),
    ])
    first = _start(root, "train", "--seed", "0")
    try:
        second = rra("run", str(root), "train", "--seed", "1")
    finally:
        barrier.touch()
        first.communicate(timeout=60)
    assert first.returncode == 0
    assert second.returncode == 1
    assert (f"[rra] error: launcher 'train': output 'model' (out/model.bin) is being written by run train "
            f"seed 0 (pid {first.pid}) of this artifact; run it when that run has ended") in second.stderr
    (record,) = _records(root, "train")  # the refused run made no directory and no record
    assert record["seed"] == 0 and record["status"] == "completed"
    assert record["outputs"][0]["sha256"] == _sha("weights of seed 0")
    assert (root / "out" / "model.bin").read_text() == "weights of seed 0"
    # Once the first has ended, the output is free again.
    barrier.unlink()
    barrier.touch()
    assert rra("run", str(root), "train", "--seed", "1").returncode == 0


def test_a_directory_output_and_a_file_inside_it_do_not_run_together(tmp_path: Path, barrier: Path) -> None:
    root = _artifact(tmp_path / "art", barrier, [
        ("whole", ["out/a.txt", "a"], [{"id": "dir", "path": "out", "format": "directory"}], {}),
        ("part", ["out/b.txt", "b"], [{"id": "b", "path": "out/b.txt", "format": "text"}], {}),
    ])
    first = _start(root, "whole")
    try:
        second = rra("run", str(root), "part")
    finally:
        barrier.touch()
        first.communicate(timeout=60)
    assert second.returncode == 1
    assert ("[rra] error: launcher 'part': directory 'out' (above an output) is being written by run whole "
            f"noseed (pid {first.pid}) of this artifact") in second.stderr
    (record,) = _records(root, "whole")
    lines = f"{_sha('a')}  a.txt\n"
    assert record["status"] == "completed" and record["outputs"][0]["sha256"] == _sha(lines)


def test_runs_with_separate_outputs_run_side_by_side(tmp_path: Path, barrier: Path) -> None:
    out = [{"id": "model", "path": "out/model-{seed}.bin", "format": "binary"}]
    root = _artifact(tmp_path / "art", barrier, [
        ("train", ["out/model-{seed}.bin", "weights of seed {seed}"], out, {"stochastic": True, "seeds": [0, 1]}),
    ])
    procs = [_start(root, "train", "--seed", str(seed)) for seed in (0, 1)]  # both wrote and wait
    barrier.touch()
    for proc in procs:
        proc.communicate(timeout=60)
    assert [p.returncode for p in procs] == [0, 0]
    records = sorted(_records(root, "train"), key=lambda r: r["seed"])
    assert [(r["status"], r["stray_writes"], r["messages"]) for r in records] == [("completed", [], [])] * 2
    assert [r["outputs"][0]["sha256"] for r in records] == [_sha("weights of seed 0"), _sha("weights of seed 1")]


def test_a_stray_write_of_another_run_is_not_claimed(tmp_path: Path, barrier: Path) -> None:
    # 'clean' writes only its output and waits; meanwhile 'dirty' writes cache.bin next to the
    # code and ends. Neither record may list cache.bin as its own: rra cannot tell who wrote it.
    root = _artifact(tmp_path / "art", barrier, [
        ("clean", ["out/clean.txt", "c"], [{"id": "c", "path": "out/clean.txt", "format": "text"}], {}),
        ("dirty", ["out/dirty.txt", "d", "cache.bin"], [{"id": "d", "path": "out/dirty.txt", "format": "text"}],
         {}),
    ])
    clean = _start(root, "clean")
    dirty = _start(root, "dirty")  # has written cache.bin while 'clean' runs
    barrier.touch()
    for proc in (clean, dirty):
        proc.communicate(timeout=60)
    (c,) = _records(root, "clean")
    (d,) = _records(root, "dirty")
    assert c["stray_writes"] == [] and d["stray_writes"] == []
    assert c["status"] == d["status"] == "failed"
    # 'dirty' started after 'clean' registered, so 'clean' names it while it is still active,
    # or counts it when it has already ended by the time 'clean' looks (both are true; which
    # one depends on which process finishes first after the barrier). 'clean' was active when
    # 'dirty' started, so 'dirty' always names it.
    prefix = "the artifact changed outside the declared outputs (1 file(s)): cache.bin, while other runs of it were running ("
    (message,) = c["messages"]
    assert message.startswith((prefix + "run dirty noseed (pid ", prefix + "1 run(s) that started and ended meanwhile)"))
    (message,) = d["messages"]
    assert message.startswith(prefix + "run clean noseed (pid ")
    for record in (c, d):
        (message,) = record["messages"]
        assert message.endswith("which run changed them cannot be told, so this record does not claim them; "
                                "run the launcher alone to check it")
    assert dirty.returncode == 1
    # Alone, the same launcher's stray write is its own.
    (root / "cache.bin").unlink()
    alone = rra("run", str(root), "dirty")  # the barrier is open: it does not wait
    assert alone.returncode == 1
    assert sorted(_records(root, "dirty"), key=lambda r: r["started"])[-1]["stray_writes"] == ["cache.bin"]


def test_a_run_lock_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to make a folder another user owns")
    locks = tmp_path / "locks"
    locks.mkdir()
    os.chown(locks, 65534, 65534)
    root = _artifact(tmp_path / "art", tmp_path / "go", [("job", ["out/x", "x"], [], {})])
    proc = rra("run", str(root), "job", env={**os.environ, "RRA_RUN_LOCK_DIR": str(locks)})
    assert proc.returncode == 1
    assert (f"[rra] error: the run lock folder {str(locks)!r} is not a directory of this user; remove it or set "
            "RRA_RUN_LOCK_DIR") in proc.stderr
