"""The full cost through the real CLI: ``rra bench run`` records the construction cost from the
artifact's build records, GPU-hours measured on the devices the executor assigned (fake GPUs
from ``RRA_GPU_INVENTORY``) and the auditor's time; ``rra bench report --review-time`` adds human
review time and prints the break-even with its assumptions."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from rra_tools.builder.build import STATE_PATH, StepRecord
from rra_tools.model.schema import generated_schemas

from ..bench_tiny import tiny_artifact, tiny_taskset
from ..rra_cli import rra

#: Raw-code reproductions state 3 USD, refined ones 1 USD; neither submits a value.
REPRODUCER = ('if [ "$RRA_BENCH_CONDITION" = raw ]; then c=3; else c=1; fi; sleep 0.2; '
              'printf \'{"submission_version":"1.0","values":[],"usage":{"cost_usd":%s}}\' $c '
              '> "$RRA_BENCH_SUBMISSION"')


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("cost")
    root = tiny_artifact(tmp / "tiny")
    manifest = json.loads((root / "rra.json").read_text(encoding="utf-8"))
    manifest["launchers"][0]["resources"]["gpus"] = 1
    (root / "rra.json").write_text(json.dumps(manifest), encoding="utf-8")
    # What 'rra build' leaves in the artifact: 0.5 USD stated by its agent over two steps.
    steps = [StepRecord("specify", status="done", wall_s=12.0, runs=1),
             StepRecord("execute", status="done", wall_s=30.0, runs=1, decisions=[{"id": "repair-1"}],
                        input_tokens=5000, output_tokens=800, cost_usd=0.5, usage_reported=True)]
    state = root / STATE_PATH
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"rra_build_state": "1.0", "steps": [s.to_json() for s in steps]}), encoding="utf-8")
    taskset, references = tiny_taskset(tmp, repeats=1, limits={"wall_clock_s": 60})
    inventory = json.dumps([{"index": 0, "model": "Fake GPU", "memory_mib": 1024}])
    done = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(tmp / "out"),
               "--reproducer", f"pay={REPRODUCER}",
               env={"RRA_GPU_INVENTORY": inventory, "RRA_GPU_LOCK_DIR": str(tmp / "locks")}, timeout=300)
    assert done.returncode == 0, done.stderr
    return tmp


def test_results_hold_construction_gpu_hours_and_audit_time(benchmark: Path) -> None:
    data = json.loads((benchmark / "out" / "results.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(generated_schemas()["rra-bench-results-1.0.schema.json"])).validate(data)
    for task in data["tasks"]:
        assert task["gpus"] == 1
        assert task["construction"] == {"recorded": True, "source": STATE_PATH, "wall_s": 42.0, "steps": 2,
                                        "decisions": 1, "input_tokens": 5000, "output_tokens": 800, "cost_usd": 0.5}
    assert len(data["cells"]) == 4
    for cell in data["cells"]:
        assert cell["gpus_assigned"] == 1
        assert cell["gpu_hours"] == pytest.approx(cell["wall_s"] / 3600, abs=1e-9)
        assert cell["wall_s"] >= 0.2
        assert cell["audit_cpu_s"] >= 0 and cell["audit_wall_s"] >= 0


def test_report_prints_the_break_even_and_its_assumptions(benchmark: Path) -> None:
    review = benchmark / "review-time.yaml"
    review.write_text("review_time_version: '1.0'\ntaskset: tiny-bench\nentries:\n"
                      "  - {task: p/t1/var, stage: construction, hours: 0.1, by: A. Reviewer}\n", encoding="utf-8")
    out = benchmark / "report"
    done = rra("bench", "report", str(benchmark / "out" / "results.json"), "-o", str(out), "--review-time",
               str(review), "--gpu-hour-usd", "3", timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    cost = report["full_cost"]
    assert cost["prices"] == {"gpu_hour_usd": 3.0, "cpu_hour_usd": 0.05, "human_hour_usd": 50.0,
                              "agent_hour_usd": 0.0}
    (artifact,) = cost["artifacts"]
    # 0.5 USD the agent stated + 0.1 hour of review at 50 USD; one artifact serves both tasks.
    assert artifact["cost_usd"] == pytest.approx(5.5) and artifact["tasks"] == ["p/t1/exact", "p/t1/var"]
    overall = cost["break_even"][0]
    assert overall["scope"] == "all"
    # 3 USD against 1 USD a reproduction, plus a few seconds of GPU and audit time each.
    assert overall["saving_per_reuse_usd"] == pytest.approx(2.0, abs=0.01)
    assert overall["reuses"] == pytest.approx(2.75, abs=0.02)
    line = next(x for x in done.stdout.splitlines() if x.startswith("break-even"))
    assert line.startswith("break-even (all artifacts): after 3 reuse(s): 5.5000 USD / ")
    md = (out / "report.md").read_text(encoding="utf-8")
    for title in ("## Full cost per condition", "## Construction of the refined artifacts",
                  "## Break-even number of reuses", "## Cost assumptions"):
        assert title in md
    assert "prices: GPU-hour $3, CPU-hour $0.05, hour of human review $50, agent/reproducer hour $0; human " \
           f"review time from {review}" in md
    assert "<h2>Break-even number of reuses</h2>" in (out / "report.html").read_text(encoding="utf-8")


def test_review_time_naming_another_task(benchmark: Path) -> None:
    review = benchmark / "bad-review.yaml"
    review.write_text("review_time_version: '1.0'\ntaskset: tiny-bench\nentries:\n"
                      "  - {task: p/t1/nope, stage: refined, hours: 1}\n", encoding="utf-8")
    done = rra("bench", "report", str(benchmark / "out" / "results.json"), "-o", str(benchmark / "r2"),
               "--review-time", str(review), timeout=300)
    assert done.returncode != 0
    assert done.stderr.startswith(f"error: review-time file {str(review)!r}: entries/0: task 'p/t1/nope' is not a "
                                  "task of the results\n"), done.stderr
    assert "Traceback" not in done.stderr
