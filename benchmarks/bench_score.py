"""Scoring and auditing 100,000 submitted values (``rra bench score``'s library path): target < 5 s.

The generated benchmark: one artifact with 100 claims (one launcher, one JSON output holding the
100 metrics), a task set of 100 tasks over it, and 1,000 workspaces as ``rra bench run`` leaves
them, each with a run record (logs and output with their digests), ``attempt.json`` (the
attempt's window, an empty start snapshot, decoys) and a submission of 100 values with evidence:
100,000 values in all. 1 % of the values are wrong (not what the output holds) and 1 % typed in
without evidence, so the refuter's failure paths are measured too. Each cell keeps its run
journal (``journal.jsonl``, its head in ``attempt.json``), checked as ``rra bench run`` leaves it;
in 1 % of the workspaces the record was edited after its commit.

Measured: ``score_submissions`` (read every submission, audit every value: trace record -> logs
-> output digest -> extraction, changes and leaked references over each workspace, score) plus
``collect_results``, median of 3 runs in this process after one warm-up. Generation is not
measured. ``--quick``: 100 workspaces (10,000 values), 1 run.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import WORK, machine

from rra_tools.bench import collect_results, load_taskset, score_submissions
from rra_tools.io.journal import Journal

TASKS = 100
TARGET_S = 5.0


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def generate(root: Path, workspaces: int) -> tuple[Path, list[Path]]:
    artifact = root / "artifact"
    artifact.mkdir(parents=True)
    fp = {"hardware": "x86_64", "software": "sh"}
    manifest = {
        "rra_version": "1.0", "id": "wide", "title": "Wide", "paper": {"title": "Wide", "authors": [{"name": "T"}]},
        "code": {"license": "MIT", "tree": {"path": "."}}, "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": ["sh", "emit.sh"], "stochastic": False,
                       "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                       "outputs": [{"id": "m", "path": "out/metrics.json", "format": "json"}]}],
        "claims": [{"id": f"c{i}", "paper_location": {"table": "1"}, "launcher": "emit",
                    "metric": {"name": f"m{i}", "unit": "", "direction": "higher"},
                    "extract": {"output": "m", "json_pointer": f"/m{i}"},
                    "reported": {"value": round(0.5 + i / 1000, 4), "precision": 4},
                    "reference": {"observations": [{"value": round(0.5 + i / 1000 + d, 4), "seed": s,
                                                    "fingerprint": fp}
                                                   for s, d in enumerate((-0.0011, 0.0003, 0.0009))]}}
                   for i in range(TASKS)]}
    (artifact / "rra.json").write_text(json.dumps(manifest))
    (artifact / "emit.sh").write_text("true\n")
    taskset = root / "tasks.json"
    taskset.write_text(json.dumps({"bench_version": "1.0", "id": "wide", "papers": [
        {"id": "p", "experiments": [{"id": "e", "tasks": [{"id": f"t{i}", "artifact": "artifact", "claim": f"c{i}"}
                                                          for i in range(TASKS)]}]}]}))
    started = datetime.now(timezone.utc) - timedelta(seconds=30)
    paths = []
    metrics = {f"m{i}": round(0.5 + i / 1000, 4) for i in range(TASKS)}
    for w in range(workspaces):
        cell = root / "cells" / f"w{w}"
        ws = cell / "workspace"
        run = ws / "runs" / "emit" / "noseed-x"
        run.mkdir(parents=True)
        (ws / "out").mkdir()
        output = json.dumps(metrics).encode()
        (ws / "out" / "metrics.json").write_bytes(output)
        logs = []
        for stream in ("stdout", "stderr"):
            data = f"{stream} of workspace {w}\n".encode()
            (run / f"{stream}.log").write_bytes(data)
            logs.append({"stream": stream, "path": f"{stream}.log", "sha256": hashlib.sha256(data).hexdigest(),
                         "size": len(data)})
        now = datetime.now(timezone.utc)
        record = {"record_version": "1.1", "launcher": "emit", "argv": ["sh", "emit.sh"], "cwd": ".",
                  "started": _stamp(started), "ended": _stamp(now), "status": "completed", "exit_status": 0,
                  "outputs": [{"id": "m", "path": "out/metrics.json", "sha256": hashlib.sha256(output).hexdigest(),
                               "size": len(output), "mtime": _stamp(now)}],
                  "logs": logs, "metrics": {f"c{i}": metrics[f"m{i}"] for i in range(TASKS)}}
        (run / "record.json").write_text(json.dumps(record))
        # The run journal the cell's proxy keeps: the record committed as written; in 1 % of the
        # workspaces the record is then edited (every value there is an edited_record).
        journal = Journal(cell / "journal.jsonl")
        real = os.path.realpath(ws)
        journal.append(os.path.join(real, "runs/emit/noseed-x/record.json"),
                       hashlib.sha256((run / "record.json").read_bytes()).hexdigest(), record["ended"],
                       {os.path.join(real, "out/metrics.json"): record["outputs"][0]["sha256"]})
        head = journal.head
        journal.close()
        if w % 100 == 13:
            (run / "record.json").write_text(json.dumps({**record, "duration_s": 1.5}))
        values = []
        for i in range(TASKS):
            n = w * TASKS + i
            value = metrics[f"m{i}"] + (0.01 if n % 100 == 7 else 0.0)
            entry = {"task": f"p/e/t{i}", "value": value}
            if n % 100 != 42:
                entry["evidence"] = {"run_record": "runs/emit/noseed-x/record.json", "output": "out/metrics.json"}
            values.append(entry)
        submission = ws / "submission.json"
        submission.write_text(json.dumps({"submission_version": "1.0", "reproducer": "gen", "condition": "refined",
                                          "repeat": w + 1, "values": values}))
        end = datetime.now(timezone.utc) + timedelta(seconds=1)
        (cell / "attempt.json").write_text(json.dumps({
            "task": "p/e/t0", "started": started.timestamp(), "ended": end.timestamp(), "honeypot": [0.123456789],
            "before": {}, "journal": {"file": "journal.jsonl", "head": head, "root": real}}))
        paths.append(submission)
    return taskset, paths


def main() -> None:
    quick = "--quick" in sys.argv
    workspaces = 100 if quick else 1000
    runs = 1 if quick else 3
    print(f"machine: {machine()}")
    root = WORK / "score"
    if root.exists():
        import shutil

        shutil.rmtree(root)
    taskset, paths = generate(root, workspaces)
    loaded = load_taskset(taskset)
    values = workspaces * TASKS
    times, cpus = [], []
    for i in range(runs + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        cells = score_submissions(loaded, paths)
        results = collect_results(loaded, cells, "score")
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        if i > 0 or runs == 1:
            times.append(elapsed)
            cpus.append(cpu)
    states = results.totals.states
    for what, series in (("wall", times), ("CPU", cpus)):
        median = statistics.median(series)
        verdict = "met" if median * 100_000 / values < TARGET_S else "NOT met"
        print(f"{what}: {values:,} values in {workspaces:,} workspaces: median {median:.2f} s of {len(series)} "
              f"({', '.join(f'{t:.2f}' for t in series)}), {1e6 * median / values:.1f} us per value; "
              f"target < {TARGET_S:g} s for 100,000: {verdict}")
    print(f"states: {json.dumps(states)}")


if __name__ == "__main__":
    main()
