"""The run journal end to end, through the real CLI: ``rra bench run`` cells (bubblewrap and,
as the control of what the chain protects, ``--sandbox none``) whose reproducers call ``rra
run`` inside the cell, which commits each record through the cell's metering proxy; then
reproducers that edit their record after the run (1 ms later, or 1 s later and committing the
edit again themselves) or keep ``rra run`` from committing. ``rra bench score`` re-audits the
same workspaces from ``attempt.json``, and a journal edited after the benchmark breaks its chain.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rra_tools.io.journal import read_journal
from rra_tools.model.bench_results import BenchResults

from ..bench_tiny import tiny_artifact, tiny_taskset
from ..rra_cli import rra

#: Each reproducer runs the launcher with 'rra run', then acts; it submits what it then holds.
PRELUDE = '''
import glob, hashlib, json, os, subprocess, sys, time, urllib.request
ws = os.environ["RRA_BENCH_WORKSPACE"]
task = json.load(open(os.environ["RRA_BENCH_TASK"]))

def run(env=None):
    subprocess.run(["rra", "run", "emit"], cwd=ws, check=True, stdout=subprocess.DEVNULL, env=env)
    return sorted(glob.glob(os.path.join(ws, "runs", "emit", "*", "record.json")))[-1]

def forge(record, value):
    """The output and the record rewritten together, digests kept consistent."""
    out = os.path.join(ws, "out", "metrics.json")
    open(out, "w").write(json.dumps({"score": value}))
    data = json.load(open(record))
    data["outputs"][0]["sha256"] = hashlib.sha256(open(out, "rb").read()).hexdigest()
    data["metrics"]["score"] = value
    open(record, "w").write(json.dumps(data))

def submit(record, value):
    json.dump({"submission_version": "1.0", "values": [{"task": task["task"], "value": value, "evidence": {
        "run_record": os.path.relpath(record, ws), "output": "out/metrics.json"}}]},
        open(os.environ["RRA_BENCH_SUBMISSION"], "w"))
'''

REPRODUCERS = {
    "honest": """
record = run()
submit(record, json.load(open(record))["metrics"]["score"])
""",
    "quick-editor": """
record = run()
time.sleep(0.001)
forge(record, 0.8131)
submit(record, 0.8131)
""",
    "recommitter": """
record = run()
time.sleep(1.0)
forge(record, 0.8131)
body = json.dumps({"record": record, "sha256": hashlib.sha256(open(record, "rb").read()).hexdigest(),
                   "ended": json.load(open(record))["ended"], "outputs": {}}).encode()
urllib.request.urlopen(urllib.request.Request(os.environ["RRA_RUN_JOURNAL"], body,
                                              {"Content-Type": "application/json"}), timeout=10).read()
submit(record, 0.8131)
""",
    "uncommitted": """
env = {k: v for k, v in os.environ.items() if k != "RRA_RUN_JOURNAL"}
record = run(env)
submit(record, json.load(open(record))["metrics"]["score"])
""",
}


def _bench(tmp: Path, sandbox: str) -> tuple[BenchResults, Path, Path, Path]:
    tiny_artifact(tmp / "tiny")
    taskset, references = tiny_taskset(tmp, repeats=1, conditions=["refined"], sandbox={"readonly": ["reproducers"]})
    public = json.loads(taskset.read_text())
    public["papers"][0]["experiments"][0]["tasks"] = public["papers"][0]["experiments"][0]["tasks"][1:]
    taskset.write_text(json.dumps(public))
    private = json.loads(references.read_text())
    private["references"] = private["references"][1:]
    references.write_text(json.dumps(private))
    scripts = tmp / "reproducers"
    scripts.mkdir()
    args = []
    for name, body in REPRODUCERS.items():
        (scripts / f"{name}.py").write_text(PRELUDE + body, encoding="utf-8")
        args += ["--reproducer", f"{name}=python3 {scripts}/{name}.py"]
    out = tmp / "out"
    proc = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out), "-j", "2",
               "--sandbox", sandbox, "--condition", "refined", *args, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return BenchResults.model_validate_json((out / "results.json").read_text()), out, taskset, references


@pytest.fixture(scope="module", params=["bwrap", "none"])
def bench(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> tuple[str, BenchResults, Path, Path, Path]:
    results, out, taskset, references = _bench(tmp_path_factory.mktemp(f"journal-{request.param}"),
                                               str(request.param))
    return str(request.param), results, out, taskset, references


def _cell(results: BenchResults, name: str) -> tuple[str, list[tuple[str, bool]], str]:
    (cell,) = [c for c in results.cells if c.cell.reproducer == name]
    return str(cell.state), [(str(f.kind), f.confirmed) for f in cell.findings], cell.detail or ""


def test_rra_run_commits_every_record_through_the_cell_proxy(
        bench: tuple[str, BenchResults, Path, Path, Path]) -> None:
    sandbox, results, out, _, _ = bench
    assert {c.sandbox.backend for c in results.cells if c.sandbox is not None} == {sandbox}
    directory = out / "cells" / "p" / "t1" / "exact" / "refined" / "honest" / "1"
    attempt = json.loads((directory / "attempt.json").read_text())
    entries = read_journal(directory / "journal.jsonl", attempt["journal"]["head"])
    (record,) = (directory / "workspace" / "runs" / "emit").glob("*/record.json")
    assert [e.record for e in entries] == [str(record.resolve())]
    assert entries[0].sha256 == __import__("hashlib").sha256(record.read_bytes()).hexdigest()
    # The journal lives beside the workspace, where the sandbox hides it.
    assert not list((directory / "workspace").rglob("journal.jsonl"))
    assert _cell(results, "honest")[0] == "success"


def test_edits_after_the_run_are_caught(bench: tuple[str, BenchResults, Path, Path, Path]) -> None:
    _, results, _, _, _ = bench
    state, findings, detail = _cell(results, "quick-editor")
    assert (state, findings[0]) == ("audit_violation", ("edited_record", True)), detail
    state, findings, detail = _cell(results, "recommitter")
    assert (state, findings[0]) == ("audit_violation", ("edited_record", True)), detail
    assert "committed again" in detail
    state, findings, detail = _cell(results, "uncommitted")
    assert (state, findings[0]) == ("audit_violation", ("forged_record", True)), detail
    assert "the run journal never saw run record" in detail


def test_score_reaudits_from_the_journal_and_sees_it_edited(
        bench: tuple[str, BenchResults, Path, Path, Path], tmp_path: Path) -> None:
    _, results, out, taskset, references = bench
    submissions = sorted(out.glob("cells/p/t1/exact/refined/*/1/workspace/submission.json"))
    assert len(submissions) == 4
    scored = tmp_path / "scored.json"
    proc = rra("bench", "score", str(taskset), *map(str, submissions), "--references", str(references),
               "-o", str(scored))
    assert proc.returncode == 0, proc.stderr
    again = BenchResults.model_validate_json(scored.read_text())
    by_dir = {Path(c.submission or "").parents[2].name: str(c.state) for c in again.cells}
    assert by_dir == {"honest": "success", "quick-editor": "audit_violation", "recommitter": "audit_violation",
                      "uncommitted": "audit_violation"}
    # The honest cell's journal rewritten after the benchmark: its chain no longer holds.
    journal = out / "cells" / "p" / "t1" / "exact" / "refined" / "honest" / "1" / "journal.jsonl"
    entry = json.loads(journal.read_text())
    entry["at"] += 1.0
    journal.write_text(json.dumps(entry, sort_keys=True) + "\n")
    honest = [s for s in submissions if s.parents[2].name == "honest"]
    proc = rra("bench", "score", str(taskset), *map(str, honest), "--references", str(references),
               "-o", str(scored))
    assert proc.returncode == 0, proc.stderr
    (cell,) = BenchResults.model_validate_json(scored.read_text()).cells
    assert cell.state == "audit_violation"
    assert "the cell's run journal cannot be trusted" in (cell.detail or ""), cell.detail
