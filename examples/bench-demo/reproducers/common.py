"""What the demo's scripted reproducers share: reading the task rra bench run gives them, running
a launcher with rra run, and writing the submission.

A reproducer runs in its workspace (the current directory) with RRA_BENCH_TASK (task.json),
RRA_BENCH_SUBMISSION, RRA_BENCH_CONDITION ('raw' or 'refined') and RRA_BENCH_REPEAT set. Under
'refined' the workspace is the artifact: its launcher runs as it is. Under 'raw' it is the
upstream code at the paper's commit, with no manifest: the reproducer writes one (NOTES below is
what it learned from the paper and the code: the command, the output, the seed) so that its
run leaves a run record, the evidence the auditor traces.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import time
from typing import Any

START = time.time()
with open(os.environ["RRA_BENCH_TASK"], encoding="utf-8") as _task:
    TASK: dict[str, Any] = json.load(_task)
CONDITION = os.environ["RRA_BENCH_CONDITION"]
REPEAT = int(os.environ["RRA_BENCH_REPEAT"])
PAPER = TASK["task"].split("/", 1)[0]

#: paper -> how to run its raw code: (launcher id, argv, output id, output path, stochastic)
NOTES: dict[str, tuple[str, list[str], str, str, bool]] = {
    "fitting-lines": ("fit", ["python", "fit.py", "--out", "results"], "metrics", "results/metrics.json", False),
    "filtering-spam": ("classify", ["python", "classify.py"], "metrics", "results/metrics.json", False),
    "counting-darts": ("estimate", ["python", "estimate.py", "--seed", "{seed}"], "estimate",
                       "results/seed-{seed}.json", True),
}


def seed() -> int:
    """The seed of this attempt: the repeat's (0 for repeat 1, ...)."""
    return REPEAT - 1


def raw_manifest(argv: list[str] | None = None) -> None:
    """Write rra.json for the raw code, so that rra run can run it and record the run."""
    launcher, default_argv, output, path, stochastic = NOTES[PAPER]
    claim = TASK["claim"]
    launch: dict[str, Any] = {"id": launcher, "argv": argv or default_argv, "stochastic": stochastic,
                              "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                              "outputs": [{"id": output, "path": path, "format": "json"}]}
    if stochastic:
        launch["seeds"] = [0, 1, 2, 3, 4]
    extract = dict(TASK["extract"])
    extract["output"] = output
    manifest = {
        "rra_version": "1.0", "id": f"raw-{PAPER}", "title": f"raw code of {PAPER}",
        "paper": {"title": TASK["paper"]["title"] or PAPER, "authors": [{"name": "unknown"}]},
        "code": {"license": "unknown", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [launch],
        "claims": [{"id": claim["id"], "paper_location": claim["paper_location"] or {"table": "?"},
                    "launcher": launcher, "metric": claim["metric"], "extract": extract,
                    "reported": {"value": 0, "precision": claim["precision"]},
                    # rra run wants 3 observations; the reproducer has none of its own (placeholders).
                    "reference": {"observations": [{"value": 0, "seed": s, "fingerprint": {
                        "hardware": "?", "software": "?"}} for s in (0, 1, 2)]}}],
    }
    with open("rra.json", "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=1)


def launcher_id() -> str:
    return TASK["launcher"] if CONDITION == "refined" else NOTES[PAPER][0]


def run(extra: list[str] | None = None) -> dict[str, Any] | None:
    """rra run the launcher (this attempt's seed when it is stochastic); the run record, or None."""
    stochastic = NOTES[PAPER][4]
    argv = ["rra", "run", ".", launcher_id(), *(["--seed", str(seed())] if stochastic else []), *(extra or [])]
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    records = sorted(glob.glob(os.path.join("runs", launcher_id(), "*", "record.json")))
    if not records:
        return None
    with open(records[-1], encoding="utf-8") as handle:
        record: dict[str, Any] = json.load(handle)
    return record


def record_path() -> str:
    return sorted(glob.glob(os.path.join("runs", launcher_id(), "*", "record.json")))[-1]


def submit(value: float | None, evidence: dict[str, str] | None = None,
           changes: list[dict[str, str]] | None = None) -> None:
    """Write the submission: the value (none: no entry), its evidence, the changes made, the usage."""
    values = [] if value is None else [{"task": TASK["task"], "value": value,
                                        **({"evidence": evidence} if evidence else {})}]
    submission = {"submission_version": "1.0", "reproducer": os.environ.get("RRA_BENCH_REPRODUCER"),
                  "values": values, "changes": changes or [],
                  # A scripted reproducer uses no model: its cost is its CPU time, priced for the demo.
                  "usage": {"tokens": 0, "cost_usd": round(0.002 * (time.time() - START), 4),
                            "wall_s": round(time.time() - START, 3)}}
    with open(os.environ["RRA_BENCH_SUBMISSION"], "w", encoding="utf-8") as handle:
        json.dump(submission, handle, indent=1)


def submit_record(record: dict[str, Any] | None, changes: list[dict[str, str]] | None = None) -> None:
    """Submit the claim's value of ``record`` with the record, its output and its script as evidence."""
    claim = TASK["claim"]["id"]
    if record is None or claim not in (record.get("metrics") or {}):
        submit(None, changes=changes)
        return
    output = next(iter(o["path"] for o in record.get("outputs", [])), None)
    evidence = {"run_record": record_path(), "script": record["argv"][1]}
    if output:
        evidence["output"] = output
    submit(record["metrics"][claim], evidence, changes)
