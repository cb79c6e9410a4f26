"""The full cost and break-even of ``rra bench report`` (rra_tools.bench.report.cost) against hand
counts: construction from the builder's records, the reproducers' stated cost, GPU-hours measured
or reported, the auditor's CPU time, human review time, and every undefined case in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench.construction import construction_of
from rra_tools.bench.report.cost import DEFAULT_PRICES, load_review_time
from rra_tools.bench.errors import BenchError
from rra_tools.bench.report.build import build_report
from rra_tools.builder.build import STATE_PATH, StepRecord
from rra_tools.model.bench_cost import CostPrices, ReviewTime


def _task(key: str, artifact: str, construction: dict[str, Any] | None) -> dict[str, Any]:
    paper, experiment, task = key.split("/")
    out = {"paper": paper, "experiment": experiment, "task": task, "artifact": artifact, "claim": "c",
           "launcher": "l", "interval": {"low": 0, "high": 1, "center": 0.5, "half_width": 0.5, "n": 3,
                                         "stability": "stable", "source": "task"}}
    if construction is not None:
        out["construction"] = construction
    return out


def _cell(task: str, condition: str, reproducer: str, **fields: Any) -> dict[str, Any]:
    return {"cell": {"task": task, "condition": condition, "reproducer": reproducer, "repeat": 1},
            "state": "success", **fields}


BUILT = {"recorded": True, "source": STATE_PATH, "wall_s": 3600.0, "steps": 9, "decisions": 4,
         "input_tokens": 1000, "output_tokens": 200, "cost_usd": 12.0}

RESULTS: dict[str, Any] = {
    "bench_version": "1.0", "mode": "run", "taskset": "hand", "repeats": 1,
    "tasks": [_task("p1/e/a", "/x/A", BUILT), _task("p2/e/b", "/x/B", {"recorded": False})],
    "cells": [
        _cell("p1/e/a", "raw", "x", usage={"cost_usd": 1.0}, gpu_hours=0.5, gpus_assigned=1, audit_cpu_s=36.0),
        _cell("p1/e/a", "raw", "y", usage={"cost_usd": 3.0}),
        _cell("p1/e/a", "refined", "x", usage={"cost_usd": 0.5}),
        _cell("p1/e/a", "refined", "y", usage={"cost_usd": 0.5, "gpu_hours": 0.25}),
        _cell("p2/e/b", "raw", "x", usage={"cost_usd": 2.0}),
        _cell("p2/e/b", "refined", "x", usage={"cost_usd": 2.0}),
    ],
    "totals": {"attempts": 6, "states": {}},
}

REVIEW = ReviewTime.model_validate({"review_time_version": "1.0", "taskset": "hand", "entries": [
    {"task": "p1/e/a", "stage": "construction", "hours": 2, "by": "A. Reviewer"},
    {"task": "p1/e/a", "stage": "raw", "hours": 1}]})


def test_break_even_by_hand() -> None:
    cost = build_report(RESULTS, "r.json", review=REVIEW, review_source="review.yaml").full_cost
    assert cost is not None and cost.prices == DEFAULT_PRICES
    a, b = cost.artifacts
    # 12 USD stated by the agent + 2 hours of review at 50 USD.
    assert (a.artifact, a.review_hours, a.cost_usd) == ("/x/A", 2.0, pytest.approx(112.0))
    assert (b.artifact, b.construction.recorded, b.cost_usd) == ("/x/B", False, None)
    conditions = {c.condition: c for c in cost.conditions}
    # raw: 1 + 3 + 2 stated, 0.5 measured GPU-hours at 2 USD, 36 CPU-s at 0.05 USD/h, 1 h review at 50 USD.
    raw = conditions["raw"]
    assert (raw.cells, raw.reproducer_cost_usd, raw.gpu_hours, raw.gpu_hours_measured_cells) == (3, 6.0, 0.5, 1)
    assert raw.cost_usd_total == pytest.approx(6 + 1 + 0.0005 + 50)
    # refined: 0.5 + 0.5 + 2 stated, 0.25 reported GPU-hours (no executor measure).
    assert conditions["refined"].cost_usd_total == pytest.approx(3.5)
    overall, per_a, per_b = cost.break_even
    # 'all' counts artifact A only (B's construction is unknown): raw 55.0005 / 2, refined 1.5 / 2.
    saving = 55.0005 / 2 - 1.5 / 2
    assert overall.scope == "all" and per_a.scope == "/x/A"
    for be in (overall, per_a):
        assert be.construction_usd == pytest.approx(112.0)
        assert be.saving_per_reuse_usd == pytest.approx(saving)
        assert be.reuses == pytest.approx(112 / saving, abs=1e-6)
    assert overall.verdict == "after 5 reuse(s): 112.0000 USD / 26.7503 USD saved per reuse = 4.19"
    assert per_b.reuses is None
    assert per_b.verdict == ("undefined: no construction cost is recorded (no 'rra build' record in the artifact and "
                             "no 'construction' review time)")
    assert any("--gpu-hour-usd" in line for line in cost.assumptions)


def test_prices_change_the_figures() -> None:
    prices = CostPrices(gpu_hour_usd=0, cpu_hour_usd=0, human_hour_usd=0, agent_hour_usd=10)
    cost = build_report(RESULTS, "r.json", prices=prices).full_cost
    assert cost is not None
    # The agent's hour of building is now 10 USD; nothing else is priced but the stated costs.
    assert cost.artifacts[0].cost_usd == pytest.approx(22.0)
    assert cost.break_even[0].reuses == pytest.approx(22 / (4 / 2 - 1 / 2))


def test_undefined_cases_are_words() -> None:
    never = build_report(RESULTS, "r.json", review=ReviewTime.model_validate(
        {"review_time_version": "1.0", "taskset": "hand",
         "entries": [{"task": "p2/e/b", "stage": "construction", "hours": 0.5}]})).full_cost
    assert never is not None
    assert never.break_even[2].verdict == "never: a refined reproduction costs 2.0000 USD, not less than a raw one " \
                                          "(2.0000 USD)"
    only_refined = dict(RESULTS, cells=[c for c in RESULTS["cells"] if c["cell"]["condition"] == "refined"])
    cost = build_report(only_refined, "r.json").full_cost
    assert cost is not None
    assert cost.break_even[0].verdict == "undefined: no raw reproduction to compare with"
    assert cost.break_even[0].reuses is None
    free = dict(RESULTS, tasks=[_task("p1/e/a", "/x/A", {**BUILT, "cost_usd": None}), RESULTS["tasks"][1]])
    cost = build_report(free, "r.json").full_cost
    assert cost is not None and cost.break_even[0].reuses == 0.0
    assert cost.break_even[0].verdict.startswith("from the first reuse: construction cost 0.0000 USD")


def test_review_time_of_an_unknown_task_or_condition(tmp_path: Path) -> None:
    bad = ReviewTime.model_validate({"review_time_version": "1.0", "taskset": "hand", "entries": [
        {"task": "p1/e/a", "stage": "raw", "hours": 1}, {"task": "p9/e/z", "stage": "raw", "hours": 1}]})
    with pytest.raises(BenchError) as info:
        build_report(RESULTS, "r.json", review=bad, review_source="review.yaml")
    assert str(info.value) == "review-time file 'review.yaml': entries/1: task 'p9/e/z' is not a task of the results"
    only_raw = dict(RESULTS, cells=[c for c in RESULTS["cells"] if c["cell"]["condition"] == "raw"])
    refined = ReviewTime.model_validate({"review_time_version": "1.0", "taskset": "hand", "entries": [
        {"task": "p1/e/a", "stage": "refined", "hours": 1.5}]})
    with pytest.raises(BenchError) as info:
        build_report(only_raw, "r.json", review=refined, review_source="review.yaml")
    assert str(info.value) == ("review-time file 'review.yaml': entries/0: the results hold no refined cell of task "
                               "'p1/e/a' to spread its 1.5 hour(s) over")
    path = tmp_path / "review.yaml"
    path.write_text("review_time_version: '1.0'\ntaskset: hand\nentries:\n  - {task: p1/e/a, stage: lunch, hours: 1}\n",
                    encoding="utf-8")
    with pytest.raises(BenchError) as info:
        load_review_time(path)
    assert str(info.value).startswith(f"review-time file {str(path)!r} is invalid: at /entries/0/stage: Input should "
                                      "be 'construction', 'raw' or 'refined'")


def test_construction_read_from_the_build_state(tmp_path: Path) -> None:
    steps = [StepRecord("specify", status="done", wall_s=10.0, runs=1),
             StepRecord("fill", status="done", wall_s=20.5, runs=2, decisions=[{"id": "d1"}, {"id": "d2"}],
                        input_tokens=300, output_tokens=40, cost_usd=0.25, usage_reported=True),
             StepRecord("review")]
    state = tmp_path / "built" / STATE_PATH
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"rra_build_state": "1.0", "steps": [s.to_json() for s in steps]}), encoding="utf-8")
    got = construction_of(tmp_path / "built")
    assert got.model_dump(exclude_none=True) == {
        "recorded": True, "source": STATE_PATH, "wall_s": 30.5, "steps": 2, "decisions": 2, "input_tokens": 300,
        "output_tokens": 40, "cost_usd": 0.25}
    assert construction_of(tmp_path).recorded is False
    broken = tmp_path / "broken" / STATE_PATH
    broken.parent.mkdir(parents=True)
    broken.write_text("{", encoding="utf-8")
    bad = construction_of(tmp_path / "broken")
    assert not bad.recorded and bad.note is not None and "cannot be read" in bad.note


def test_the_example_of_the_docs_loads(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "bench.md").read_text(encoding="utf-8")
    block = text.split('```yaml\nreview_time_version: "1.0"', 1)[1].split("```", 1)[0]
    path = tmp_path / "review-time.yaml"
    path.write_text('review_time_version: "1.0"' + block, encoding="utf-8")
    review = load_review_time(path)
    assert [(e.task, e.stage, e.hours) for e in review.entries] == [
        ("fitting-lines/table-1/rmse", "construction", 1.5), ("fitting-lines/table-1/rmse", "raw", 0.5)]


def test_the_command_line_defaults_are_the_library_s() -> None:
    from rra_tools.cli.bench_cmd import report_command

    defaults = {p.name: p.default for p in report_command.params}
    assert {k: defaults[k] for k in DEFAULT_PRICES.model_dump()} == DEFAULT_PRICES.model_dump()
