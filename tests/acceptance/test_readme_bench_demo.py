"""The README's main-job command ends with the bench demo: ``rra bench run`` of
examples/bench-demo, then ``rra bench report``. This runs that part of the command as the README
writes it (in a scratch directory instead of /tmp/rra-bench, with this environment's rra) and
checks that the report tells the demo's story."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rra_tools.bench.report_plots import PLOTS

from ..report_browser import browser as _browser
from ..report_browser import layout, layout_problems

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def main_job() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"\*\*Install and run the main job.*?```sh\n(.*?)\n```", text, re.S)
    assert match, "README.md has no main-job command block"
    return match.group(1).strip()


def bench_part(command: str) -> list[str]:
    steps = command.split(" && ")
    first = next(i for i, s in enumerate(steps) if "/tmp/rra-bench" in s)
    return steps[first:]


def test_main_job_ends_with_the_bench_report() -> None:
    steps = bench_part(main_job())
    assert steps[0] == "rm -rf /tmp/rra-bench"
    assert re.fullmatch(r"\.venv/bin/rra bench report /tmp/rra-bench/out/results\.json -o /tmp/rra-bench/report",
                        steps[-1]), steps[-1]
    assert any(" bench run /tmp/rra-bench/taskset.yaml " in s for s in steps)
    assert "'.[env,report]'" in main_job()


@pytest.mark.slow
def test_bench_demo_runs_as_the_readme_says(tmp_path: Path) -> None:
    where = tmp_path / "rra-bench"
    steps = [s.replace("/tmp/rra-bench", str(where)).replace(".venv/bin/", f"{BIN}/") for s in bench_part(main_job())]
    started = time.monotonic()
    done = subprocess.run(" && ".join(steps), shell=True, cwd=REPO, capture_output=True, text=True,  # noqa: S602
                          timeout=900, check=False)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
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
