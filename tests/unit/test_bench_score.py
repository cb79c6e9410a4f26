"""Scoring submissions made elsewhere (``score_submissions``): the auditor resolves a workspace's
paths through one resolver, so a symlink loop among the evidence is a finding (the file is not
there), never a traceback; and scoring leaves the cyclic garbage collector running and hands
back whatever it set aside from it."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import time
from pathlib import Path

from rra_tools.bench import load_taskset, score_submissions
import pytest

from rra_tools.model.bench_results import CellResult

FP = {"hardware": "x86_64", "software": "sh"}


def _stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1e6):06d}Z"


def _artifact(root: Path) -> Path:
    artifact = root / "artifact"
    artifact.mkdir()
    (artifact / "rra.json").write_text(json.dumps({
        "rra_version": "1.0", "id": "a", "title": "A", "paper": {"title": "A", "authors": [{"name": "T"}]},
        "code": {"license": "MIT", "tree": {"path": "."}}, "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": ["sh", "emit.sh"], "stochastic": False,
                       "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                       "outputs": [{"id": "m", "path": "out/metrics.json", "format": "json"}]}],
        "claims": [{"id": "c", "paper_location": {"table": "1"}, "launcher": "emit",
                    "metric": {"name": "m", "unit": "", "direction": "higher"},
                    "extract": {"output": "m", "json_pointer": "/m"},
                    "reported": {"value": 0.5, "precision": 4},
                    "reference": {"observations": [{"value": v, "seed": s, "fingerprint": FP}
                                                   for s, v in enumerate((0.4991, 0.5003, 0.5009))]}}]}))
    (artifact / "emit.sh").write_text("true\n")
    taskset = root / "tasks.json"
    taskset.write_text(json.dumps({"bench_version": "1.0", "id": "t", "papers": [
        {"id": "p", "experiments": [{"id": "e", "tasks": [{"id": "t", "artifact": "artifact", "claim": "c"}]}]}]}))
    return taskset


def _workspace(root: Path, *, loop_log: bool = False, loop_output: bool = False) -> Path:
    """A cell as ``rra bench run`` leaves it: a run record with its logs and output, and a
    submission of the output's value; ``loop_log``/``loop_output``: the record also names a
    symlink that points at itself, as its stdout log / as a second output."""
    started = time.time() - 5
    ws = root / "cell" / "workspace"
    run = ws / "runs" / "emit" / "r"
    run.mkdir(parents=True)
    (ws / "out").mkdir()
    output = json.dumps({"m": 0.5}).encode()
    (ws / "out" / "metrics.json").write_bytes(output)
    outputs = [{"id": "m", "path": "out/metrics.json", "sha256": hashlib.sha256(output).hexdigest(),
                "size": len(output), "mtime": _stamp(time.time())}]
    if loop_output:
        os.symlink("loop.json", ws / "out" / "loop.json")
        outputs.append({"id": "loop", "path": "out/loop.json", "sha256": "0" * 64, "size": 0,
                        "mtime": _stamp(time.time())})
    logs = []
    # Not named stdout.log/stderr.log: the suite checks records beside those against the schema,
    # and this hand-made one leaves out what the auditor does not read.
    for stream in ("stdout", "stderr"):
        name = f"{stream}.txt"
        if stream == "stdout" and loop_log:
            os.symlink(name, run / name)
            logs.append({"stream": stream, "path": name, "sha256": "0" * 64, "size": 0})
            continue
        data = f"{stream}\n".encode()
        (run / name).write_bytes(data)
        logs.append({"stream": stream, "path": name, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)})
    (run / "record.json").write_text(json.dumps({
        "record_version": "1.1", "launcher": "emit", "argv": ["sh", "emit.sh"], "cwd": ".",
        "started": _stamp(started), "ended": _stamp(time.time()), "status": "completed", "exit_status": 0,
        "outputs": outputs, "logs": logs, "metrics": {"c": 0.5}}))
    submission = ws / "submission.json"
    submission.write_text(json.dumps({"submission_version": "1.0", "reproducer": "r", "condition": "refined",
                                      "repeat": 1, "values": [{"task": "p/e/t", "value": 0.5, "evidence": {
                                          "run_record": "runs/emit/r/record.json", "output": "out/metrics.json"}}]}))
    (ws.parent / "attempt.json").write_text(json.dumps({
        "task": "p/e/t", "started": started - 1, "ended": time.time() + 1, "honeypot": [0.123456789],
        "before": {}}))
    return submission


def _score(tmp_path: Path, **loops: bool) -> CellResult:
    taskset = _artifact(tmp_path)
    [result] = score_submissions(load_taskset(taskset), [_workspace(tmp_path, **loops)])
    return result


def test_an_honest_value_succeeds(tmp_path: Path) -> None:
    result = _score(tmp_path)
    assert (result.state, result.findings) == ("success", [])


def test_a_log_that_is_a_symlink_loop_is_a_forged_record(tmp_path: Path) -> None:
    result = _score(tmp_path, loop_log=True)
    assert result.state == "audit_violation"
    assert [(f.kind, f.confirmed, f.detail) for f in result.findings] == [
        ("forged_record", True, "run record 'runs/emit/r/record.json' names a log 'stdout.txt' that is not there")]


def test_an_output_that_is_a_symlink_loop_does_not_stop_the_audit(tmp_path: Path) -> None:
    # The record's other output is a loop: the traced value still holds.
    result = _score(tmp_path, loop_output=True)
    assert (result.state, result.findings) == ("success", [])


def test_the_collector_runs_while_scoring_and_nothing_stays_frozen(tmp_path: Path) -> None:
    taskset = _artifact(tmp_path)
    seen: list[tuple[bool, bool]] = []
    score_submissions(load_taskset(taskset), [_workspace(tmp_path)],
                      on_submission=lambda path, results: seen.append((gc.isenabled(), gc.get_freeze_count() > 0)))
    # The callback ran with the collector on (the results so far set aside from it).
    assert seen == [(True, True)]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_failing_callback_still_gets_everything_handed_back(tmp_path: Path) -> None:
    taskset = _artifact(tmp_path)

    def fail(path: Path, results: list[CellResult]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        score_submissions(load_taskset(taskset), [_workspace(tmp_path)], on_submission=fail)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_what_the_caller_froze_stays_frozen_and_a_paused_collector_stays_paused(tmp_path: Path) -> None:
    loaded = load_taskset(_artifact(tmp_path))
    submission = _workspace(tmp_path)
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        score_submissions(loaded, [submission])
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        [result] = score_submissions(loaded, [submission])
        assert not gc.isenabled() and gc.get_freeze_count() == 0
        assert result.state == "success"
    finally:
        gc.enable()
