"""``rra bench run`` and ``rra bench score`` through the real CLI, on the tiny artifact of
tests/bench_tiny.py: a public task set with a private references file, both conditions (the raw
one checked out of the artifact's git repository), and reproducers that are honest, type a value,
read the honeypot, write garbage, write nothing, overspend, or run past the wall-clock limit.

The reproducers here run with ``--sandbox none``: this module tests scoring and the auditor
(honeypot, evidence, process groups) on the host, where a reproducer can reach anything, as on a
machine with no sandbox; tests/acceptance/test_bench_isolation.py tests the sandboxes.

One test proves that no reference value reaches any workspace: every file written into every
workspace of a run (task description, code, paper, the reproducers' own files) is scanned for the
textual forms of every reference value."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rra_tools.model.bench_results import BenchResults
from rra_tools.model.schema import generated_schemas

from ..bench_tiny import reproducer_commands, secret_pattern, tiny_artifact, tiny_taskset
from ..rra_cli import rra, rra_command


def _schema(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(generated_schemas()[name]))


def _own_manifest(tmp_path: Path) -> Path:
    """The manifest an honest raw-code reproducer writes for itself: no reference value in it."""
    data: dict[str, Any] = json.loads((tmp_path / "tiny" / "rra.json").read_text())
    for claim in data["claims"]:
        claim["reference"] = {"observations": [{"value": 0.8125, "seed": i,
                                                "fingerprint": {"hardware": "mine", "software": "mine"}}
                                               for i in range(3)]}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    tmp_path = tmp_path_factory.mktemp("bench")
    tiny_artifact(tmp_path / "tiny")
    taskset, references = tiny_taskset(tmp_path, repeats=1, limits={"wall_clock_s": 60, "cost_usd": 5})
    commands = reproducer_commands(tmp_path, _own_manifest(tmp_path))
    out = tmp_path / "out"
    args = [a for name, cmd in commands.items() for a in ("--reproducer", f"{name}={cmd}")]
    proc = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out), "--sandbox", "none",
               *args)
    return out, proc, (taskset, references)


def test_every_cell_is_scored_apart(benchmark: tuple[Path, Any, Any]) -> None:
    out, proc, _ = benchmark
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    _schema("rra-bench-results-1.0.schema.json").validate(data)
    results = BenchResults.model_validate(data)
    assert results.mode == "run"
    states = {c.cell.key: (c.state, c.infrastructure) for c in results.cells}
    expected: dict[str, tuple[str, str | None]] = {}
    for task in ("var", "exact"):
        for condition in ("raw", "refined"):
            key = f"p/t1/{task}/{condition}"
            expected.update({
                f"{key}/honest/1": ("success", None),
                f"{key}/typist/1": ("audit_violation", None),
                f"{key}/peeker/1": ("audit_violation", None),
                f"{key}/garbage/1": ("parse_failure", None),
                f"{key}/silent/1": ("missing_value", None),
                f"{key}/spender/1": ("infrastructure_failure", "cost_limit"),
            })
    assert states == expected
    # Every cell counts: 2 tasks x 2 conditions x 6 reproducers.
    assert results.totals.attempts == 24
    assert results.totals.states == {"success": 4, "outside_interval": 0, "missing_value": 4, "parse_failure": 4,
                                     "audit_violation": 8, "limit_reached": 0,
                                     "infrastructure_failure": 4}
    by_key = {c.cell.key: c for c in results.cells}
    honest = by_key["p/t1/var/raw/honest/1"]
    assert honest.value == 0.8125 and honest.inside is True and honest.findings == []
    assert honest.usage is not None and honest.usage.stated is not None and honest.wall_s is not None
    assert honest.usage.stated.tokens == 1200
    # Stated 1,200 tokens and 0.01 USD; the proxy saw no call: both differences are reported.
    assert [(d.field, d.stated, d.metered) for d in honest.usage.differences] == [("tokens", 1200, 0), ("cost_usd", 0.01, 0)]
    # The auditor's own time is measured for every value it traced; no GPU was assigned here; the
    # tiny artifact was not made by 'rra build', so its construction is not recorded.
    assert honest.audit_cpu_s is not None and honest.audit_wall_s is not None and honest.audit_wall_s > 0
    assert honest.gpus_assigned is None and honest.gpu_hours is None
    assert all(t.construction is not None and not t.construction.recorded and t.gpus == 0 for t in results.tasks)
    typist = by_key["p/t1/var/refined/typist/1"]
    assert [(f.kind, f.confirmed) for f in typist.findings] == [("hard_coded", True)]
    assert typist.inside is True  # inside the interval, and still not a success
    peeker = by_key["p/t1/var/refined/peeker/1"]
    assert [(f.kind, f.confirmed) for f in peeker.findings] == [("reference_read", True)]
    assert "honeypot" in peeker.findings[0].detail
    # The exact task's honest value equals its references: suspected, traced, not confirmed.
    exact = by_key["p/t1/exact/refined/honest/1"]
    assert exact.state == "success"
    assert [(f.kind, f.confirmed) for f in exact.findings] == [("reference_read", False)]
    garbage = by_key["p/t1/var/raw/garbage/1"]
    assert garbage.detail is not None and garbage.detail.startswith("the submission is not valid JSON: ")
    assert by_key["p/t1/var/raw/silent/1"].detail == "the reproducer (exit status 0) wrote no submission"
    assert by_key["p/t1/var/raw/spender/1"].detail == ("the reproducer reports a cost of 12.5 USD, over the limit "
                                                        "of 5 USD")
    assert "honest / raw: 2/2 succeeded (100.0 %)" in proc.stdout
    assert "4/24 cells succeeded (16.7 %)" in proc.stdout
    assert "p/t1/var/refined/typist/1: hard_coded: no run record is given" in proc.stdout
    # Each workspace is a fresh one: the raw ones hold the upstream commit's files, not the manifest.
    raw_ws = out / "cells" / "p/t1/var/raw/typist/1/workspace"
    assert sorted(p.name for p in raw_ws.iterdir()) == ["TASK.md", "emit.sh", "old", "paper", "submission.json",
                                                         "task.json"]
    refined_ws = out / "cells" / "p/t1/var/refined/typist/1/workspace"
    assert (refined_ws / "rra.json").is_file() and not (refined_ws / "runs").exists()
    _schema("rra-submission-1.0.schema.json").validate(
        json.loads((out / "cells" / "p/t1/var/refined/honest/1/workspace/submission.json").read_text()))


def test_no_reference_value_reaches_any_workspace(benchmark: tuple[Path, Any, Any]) -> None:
    out, proc, (taskset, references) = benchmark
    assert proc.returncode == 0, proc.stderr
    pattern = secret_pattern()
    workspaces = sorted((out / "cells").glob("**/workspace"))
    assert len(workspaces) == 24
    scanned = 0
    for workspace in workspaces:
        for directory, _, names in os.walk(workspace):
            for name in names:
                path = Path(directory, name)
                text = path.read_bytes().decode("utf-8", "replace")
                assert not pattern.search(text), f"{path} holds a reference value"
                scanned += 1
    assert scanned > 150
    # The public task set holds none either; the private file does (the test would see a leak).
    assert not pattern.search(taskset.read_text())
    assert pattern.search(references.read_text())


def test_score_reaudits_the_run_workspaces(benchmark: tuple[Path, Any, Any], tmp_path: Path) -> None:
    out, proc, (taskset, references) = benchmark
    assert proc.returncode == 0, proc.stderr
    honest = out / "cells" / "p/t1/var/refined/honest/1/workspace/submission.json"
    typist = out / "cells" / "p/t1/var/refined/typist/1/workspace/submission.json"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"submission_version": "1.0", "values": [
        {"task": "p/t1/var", "value": "0.81"}, {"task": "p/t1/exact", "value": 0.8125}]}))
    scores = tmp_path / "scores.json"
    done = rra("bench", "score", str(taskset), str(honest), str(typist), str(broken), "--references", str(references),
               "-o", str(scores))
    assert done.returncode == 0, done.stderr
    results = BenchResults.model_validate_json(scores.read_text())
    assert results.mode == "score"
    got = {(c.cell.reproducer, c.cell.task): c.state for c in results.cells}
    assert got == {
        # The honest submission names only its own task: the other one is missing, not dropped.
        ("honest", "p/t1/var"): "success", ("honest", "p/t1/exact"): "missing_value",
        ("submission-2", "p/t1/var"): "audit_violation", ("submission-2", "p/t1/exact"): "missing_value",
        ("broken", "p/t1/var"): "parse_failure", ("broken", "p/t1/exact"): "audit_violation",
    }
    detail = {(c.cell.reproducer, c.cell.task): c.detail for c in results.cells}
    assert detail[("broken", "p/t1/var")] == "values/0: value '0.81' is a string, not a JSON number"
    assert results.totals.attempts == 6


def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    tiny_artifact(tmp_path / "tiny")
    taskset, references = tiny_taskset(tmp_path, repeats=1, conditions=["refined"], limits={"wall_clock_s": 2})
    out = tmp_path / "out"
    pidfile, woke = tmp_path / "child.pid", tmp_path / "woke"
    # The reproducer's child leaves a mark if it lives to the end of its sleep: the limit must
    # kill it, not wait for it (shown by the mark, not by wall time, which load inflates).
    proc = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out), "--sandbox", "none",
               "--reproducer", f"slow=(sleep 120; touch {woke}) & echo $! > {pidfile}; wait")
    assert proc.returncode == 0, proc.stderr
    assert not woke.exists(), "the reproducer's child was left to end its sleep"
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    assert [(c.state, c.infrastructure) for c in results.cells] == [("infrastructure_failure", "timeout")] * 2
    assert results.cells[0].detail == "the reproducer ran past the wall-clock limit of 2 s and was killed"
    # The reproducer's child was killed with its group: gone, or a zombie no one has reaped yet
    # (in a container whose init does not reap, a killed orphan stays one).
    status = Path(f"/proc/{int(pidfile.read_text())}/status")
    assert not status.exists() or "\nState:\tZ" in status.read_text()


def test_usage_errors(tmp_path: Path) -> None:
    tiny_artifact(tmp_path / "tiny")
    taskset, references = tiny_taskset(tmp_path)
    proc = rra("bench", "run", str(taskset), "-o", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr == ("error: no reproducer to run\n"
                           "hint: give --reproducer NAME=CMD, or 'reproducers' in the task set\n")
    proc = rra("bench", "run", str(taskset), "--reproducer", "bad name=true")
    assert proc.returncode == 2 and "'bad name=true' is not NAME=COMMAND" in proc.stderr
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**json.loads(references.read_text()), "taskset": "other"}))
    proc = rra("bench", "run", str(taskset), "--references", str(other), "--reproducer", "a=true")
    assert proc.returncode == 2
    # The task-set check runs first (as 'rra bench check'): the references file's error, located.
    assert proc.stderr.startswith(f"{other}:1:37: error[RRA962] the references file belongs to task set 'other', "
                                  "not 'tiny-bench'\n")


def test_killed_benchmark_resumes_and_stops_what_it_left(tmp_path: Path) -> None:
    tiny_artifact(tmp_path / "tiny")
    taskset, references = tiny_taskset(tmp_path, repeats=1, conditions=["refined"])
    typist = reproducer_commands(tmp_path, tmp_path / "unused.json")["typist"]
    out = tmp_path / "out"
    marker = tmp_path / "resumed"
    # Before the resume the reproducer hangs; after it, it types at once: the hanging one must be
    # killed by the resumed benchmark, or it would still be asleep when the test looks.
    args = [str(taskset), "--references", str(references), "-o", str(out), "-j", "1", "--sandbox", "none",
            "--reproducer", f"slow=if [ -e {marker} ]; then {typist}; else sleep 120; fi"]
    first = out / "cells" / "p/t1/var/refined/slow/1"
    proc = subprocess.Popen([*rra_command(), "bench", "run", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (first / "reproducer.pgid").exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the first cell's reproducer did not start within 120 s"
        time.sleep(0.05)
    proc.kill()  # the evaluator dies; its reproducer (another session) keeps running
    proc.wait()
    leftover = int((first / "reproducer.pgid").read_text())
    marker.touch()
    resumed = rra("bench", "run", *args)
    assert resumed.returncode == 0, resumed.stderr
    # The orphan was stopped before the cell ran again in a fresh workspace.
    status = Path(f"/proc/{leftover}/status")
    assert not status.exists() or "\nState:\tZ" in status.read_text()
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    got = {c.cell.key: (c.state, c.restarted) for c in results.cells}
    assert got == {"p/t1/var/refined/slow/1": ("audit_violation", 1),
                   "p/t1/exact/refined/slow/1": ("audit_violation", None)}
    assert "(again: it was killed mid-run 1 time(s))" in resumed.stderr
    again = rra("bench", "run", *args)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("(finished earlier)") == 2 and "started" not in again.stderr
    other = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out),
                "--reproducer", "other=true")
    assert other.returncode == 2
    assert other.stderr.startswith(f"error: {str(out / 'cells')!r} already exists and holds another benchmark")
