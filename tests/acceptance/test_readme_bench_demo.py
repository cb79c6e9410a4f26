"""The README's main-job command ends with the bench demo: ``rra bench run`` of
examples/bench-demo, then ``rra bench report``. This runs that part of the command as the README
writes it (with this environment's rra, the scratch directory that ``mktemp -d`` makes under the
test's own temporary directory) and checks that the report tells the demo's story; and it runs
two copies of the whole command, after the install, at once: both succeed (issue 25: the command
used to ``rm -rf`` fixed paths under /tmp, so two people on one machine destroyed each other's runs)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rra_tools.bench.report.plots import PLOTS

from ..report_browser import browser as _browser
from ..report_browser import layout, layout_problems

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
#: The main command's first step after the install and the validation: a fresh scratch directory.
SCRATCH = 'scratch=$(mktemp -d) && echo "scratch directory: $scratch"'


def main_job() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"\*\*Install and run the main job.*?```sh\n(.*?)\n```", text, re.S)
    assert match, "README.md has no main-job command block"
    return match.group(1).strip()


def after_install(command: str) -> list[str]:
    """The command's steps after the venv and the install, with this environment's rra."""
    steps = command.split(" && ")
    assert steps[0] == "python3 -m venv .venv" and steps[1].startswith(".venv/bin/pip install "), steps[:2]
    return [s.replace(".venv/bin/", f"{BIN}/") for s in steps[2:]]


def bench_part(command: str) -> list[str]:
    """The scratch directory's step and the bench demo's steps (from its copy to its report)."""
    steps = command.split(" && ")
    first = next(i for i, s in enumerate(steps) if '"$scratch/bench"' in s)
    return [SCRATCH, *steps[first:]]


def scratch_of(stdout: str) -> Path:
    found = re.findall(r"^scratch directory: (.+)$", stdout, re.M)
    assert len(found) == 1, stdout[-2000:]
    return Path(found[0])


def test_main_job_uses_a_fresh_scratch_directory_and_ends_with_the_bench_report() -> None:
    command = main_job()
    steps = command.split(" && ")
    assert SCRATCH in command
    # No fixed shared path, nothing removed: every path of the runs is under the fresh directory.
    assert "/tmp" not in command and "rm -rf" not in command
    assert all("$scratch" in s for s in steps[steps.index(SCRATCH.split(" && ")[0]) + 1:]), steps
    assert steps[-1] == '.venv/bin/rra bench report "$scratch/bench/out/results.json" -o "$scratch/bench/report"'
    assert any(' bench run "$scratch/bench/taskset.yaml" ' in s for s in steps)
    assert "'.[env,report]'" in command


def test_no_readme_command_names_a_fixed_shared_path() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:sh|console)\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    for block in blocks:
        assert "/tmp/" not in block and "rm -rf" not in block, block


@pytest.mark.slow
def test_two_copies_of_the_main_command_run_at_once(tmp_path: Path) -> None:
    """Both copies of the main command (after the install) succeed side by side, each in the
    directory that mktemp made for it, with the same TMPDIR."""
    command = " && ".join(after_install(main_job()))
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    procs = [subprocess.Popen(["bash", "-c", command], cwd=REPO, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [proc.communicate(timeout=1500) for proc in procs]
    for proc, (stdout, stderr) in zip(procs, outputs):
        assert proc.returncode == 0, stdout[-2000:] + stderr[-3000:]
    scratches = [scratch_of(stdout) for stdout, _ in outputs]
    assert len(set(scratches)) == 2 and all(s.parent == tmp_path for s in scratches)
    for (stdout, _), scratch in zip(outputs, scratches):
        assert "levels claimed: available; met: available, functional, reproduced\n" in stdout
        report = json.loads((scratch / "bench" / "report" / "report.json").read_text(encoding="utf-8"))
        assert report["overall"]["rate"]["cells"] == 3 * 2 * 4 * 2
        assert len(list((scratch / "demo" / "runs" / "train").glob("*/record.json"))) == 5


@pytest.mark.slow
def test_bench_demo_runs_as_the_readme_says(tmp_path: Path) -> None:
    steps = [s.replace(".venv/bin/", f"{BIN}/") for s in bench_part(main_job())]
    started = time.monotonic()
    done = subprocess.run(["bash", "-c", " && ".join(steps)], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(tmp_path)}, timeout=900, check=False)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    where = scratch_of(done.stdout) / "bench"
    assert where.parent.parent == tmp_path
    report = json.loads((where / "report" / "report.json").read_text(encoding="utf-8"))
    assert (where / "report" / "report.html").stat().st_size > 10_000
    rates = {(g["reproducer"], g["condition"]): g["rate"] for g in report["by_reproducer_condition"]}
    states = {(g["reproducer"], g["condition"]): g["states"] for g in report["by_reproducer_condition"]}
    assert report["overall"]["rate"]["cells"] == 3 * 2 * 4 * 2
    # The honest reproducer reproduces every paper from the refined artifacts, and misses the
    # line fit from the raw code (it follows the paper's 80 % split: the recorded discrepancy).
    assert rates[("honest", "refined")]["successes"] == 6
    assert rates[("honest", "raw")]["successes"] == 4
    assert states[("honest", "raw")].get("outside_interval") == 2
    # Every cheating submission is caught by the auditor; every slow one times out.
    assert states[("cheating", "raw")] == states[("cheating", "refined")] == {"audit_violation": 6}
    assert states[("slow", "raw")] == states[("slow", "refined")] == {"infrastructure_failure": 6}
    assert {i["kind"] for i in report["infrastructure"]} == {"timeout"}
    assert sum(f["confirmed"] for f in report["findings"]) >= 12
    (pair,) = report["paired"]
    assert (pair["condition_a"], pair["condition_b"]) == ("raw", "refined") and pair["mean"] > 0
    print(f"bench demo: rra bench run + rra bench report took {elapsed:.1f} s")
    # No demo artifact has build records: without review time the break-even is undefined, in words.
    assert report["full_cost"]["break_even"][0]["verdict"].startswith("undefined: no construction cost")
    # With the demo's review-time file (as its README says), it is a number of reuses.
    again = subprocess.run([f"{BIN}/rra", "bench", "report", str(where / "out" / "results.json"), "-o",
                            str(where / "report-cost"), "--review-time", str(where / "review-time.yaml")],
                           capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    assert re.search(r"^break-even \(all artifacts\): after \d+ reuse\(s\): 175\.0000 USD / ", again.stdout, re.M), \
        again.stdout
    # The auditor against the demo's labelled sample (examples/bench-demo/audit-labels.yaml).
    evaluated = subprocess.run([f"{BIN}/rra", "bench", "audit-eval", str(where / "audit-labels.yaml")],
                               capture_output=True, text=True, timeout=300, check=False)
    assert evaluated.returncode == 0, evaluated.stderr
    printed = evaluated.stdout.splitlines()
    assert printed[1:4] == [
        "precision: 6/7 = 85.7 % [48.7, 97.4] (95 % Wilson interval)",
        "recall: 6/7 = 85.7 % [48.7, 97.4] (95 % Wilson interval)",
        "recall counting unconfirmed suspicions as caught: 6/7 = 85.7 % [48.7, 97.4] (95 % Wilson interval)"]
    assert "counted apart: 1 labelled uncertain by people, 2 without a value to audit" in printed
    assert "disagreements (2):" in printed
    assert "  counting-darts/table-1/pi/raw/sloppy/1 [success]: auditor clean, people violation (reader-b)" in printed
    # The demo's own page renders in the browser too: no console error, every plot drawn with
    # readable labels or said in words (no ablation here: no factorial plot).
    driver = _browser()
    try:
        driver.get((where / "report" / "report.html").as_uri())
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
        figures = layout(driver)
        assert layout_problems(figures) == []
        assert [f[0] for f in figures] == [f"plot-{ident}" for ident, _, _ in PLOTS]
        assert [f[0] for f in figures if not f[1]] == ["plot-factorial"]
    finally:
        driver.quit()
