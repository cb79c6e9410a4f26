"""The figures of ``rra bench report`` (rra_tools.bench.report.build) against hand counts: rates over
every cell, the paper-clustered bootstrap, paired differences, spreads, re-execution results."""

from __future__ import annotations

from typing import Any

import pytest

from rra_tools.bench.report.build import build_report, cells_of

from ..bench_synthetic import synthetic_results


def _results(cells: list[tuple[str, str, str, str]]) -> dict[str, Any]:
    """Reproducer-mode results from (task key, condition, reproducer, state) tuples."""
    tasks = sorted({c[0] for c in cells})
    return {
        "bench_version": "1.0", "mode": "run", "taskset": "hand", "repeats": 1,
        "tasks": [{"paper": t.split("/")[0], "experiment": t.split("/")[1], "task": t.split("/")[2],
                   "artifact": "a", "claim": "c", "launcher": "l",
                   "interval": {"low": 0, "high": 1, "center": 0.5, "half_width": 0.5, "n": 3,
                                "stability": "variable" if t.endswith("v") else "stable", "source": "task"}}
                  for t in tasks],
        "cells": [{"cell": {"task": t, "condition": c, "reproducer": r, "repeat": i + 1}, "state": s}
                  for i, (t, c, r, s) in enumerate(cells)],
        "totals": {"attempts": len(cells), "states": {}},
    }


HAND = [
    ("p1/e/a", "raw", "x", "success"), ("p1/e/a", "refined", "x", "success"),
    ("p1/e/bv", "raw", "x", "outside_interval"), ("p1/e/bv", "refined", "x", "success"),
    ("p2/e/c", "raw", "x", "infrastructure_failure"), ("p2/e/c", "refined", "x", "audit_violation"),
    ("p2/e/c", "raw", "y", "success"), ("p2/e/c", "refined", "y", "success"),
]


def test_rates_count_every_cell() -> None:
    report = build_report(_results(HAND), "r.json")
    assert (report.overall.rate.successes, report.overall.rate.cells) == (5, 8)
    rates = {(g.reproducer, g.condition): (g.rate.successes, g.rate.cells) for g in report.by_reproducer_condition}
    # The infrastructure failure and the audit violation stay in their denominators.
    assert rates == {("x", "raw"): (1, 3), ("x", "refined"): (2, 3), ("y", "raw"): (1, 1), ("y", "refined"): (1, 1)}
    assert {(g.stability, g.condition): g.rate.cells for g in report.by_stability} == {
        ("stable", "raw"): 3, ("stable", "refined"): 3, ("variable", "raw"): 1, ("variable", "refined"): 1}
    assert (report.stable_tasks, report.variable_tasks) == (2, 1)
    assert [(i.cell, i.kind) for i in report.infrastructure] == [("p2/e/c/raw/x/5", "other")]


def test_paired_differences_and_spread() -> None:
    report = build_report(_results(HAND), "r.json")
    (pair,) = report.paired
    assert (pair.condition_a, pair.condition_b) == ("raw", "refined")
    # a: 1 -> 1; bv: 0 -> 1; c: 1/2 -> 1/2 (over both reproducers).
    assert [(d.task, d.difference) for d in pair.tasks] == [("p1/e/a", 0.0), ("p1/e/bv", 1.0), ("p2/e/c", 0.0)]
    assert pair.mean == pytest.approx(1 / 3)
    spread = {s.condition: (s.best, s.worst, s.spread) for s in report.spread}
    assert spread["raw"] == ("y", "x", pytest.approx(2 / 3))
    assert spread["refined"] == ("y", "x", pytest.approx(1 / 3))


def test_bootstrap_resamples_papers_and_is_seeded() -> None:
    data = synthetic_results(20, 2, repeats=1)
    a, b = build_report(data, "r", seed=0), build_report(data, "r", seed=0)
    assert a == b
    other = build_report(data, "r", seed=7)
    assert [g.rate.ci_low for g in a.by_reproducer_condition] != [g.rate.ci_low for g in other.by_reproducer_condition]
    for g in a.by_reproducer_condition:
        assert g.rate.ci_low is not None and g.rate.ci_high is not None and g.rate.rate is not None
        assert g.rate.ci_low <= g.rate.rate <= g.rate.ci_high
        assert g.rate.papers == 20
    assert all(g.rate.interval == "bootstrap" for g in a.by_reproducer_condition)
    # One paper is one cluster: resampling it cannot move the rate, so the interval is Wilson's
    # over the cells (1 of 2: [9.5 %, 90.5 %]), not the point [50 %, 50 %].
    one = build_report(_results([c for c in HAND if c[0].startswith("p1")]), "r")
    (raw, refined) = one.by_reproducer_condition
    assert (raw.rate.interval, round(raw.rate.ci_low or 0, 4), round(raw.rate.ci_high or 0, 4)) == (
        "wilson", 0.0945, 0.9055)
    assert (refined.rate.rate, refined.rate.interval, refined.rate.ci_high) == (1.0, "wilson", 1.0)


def test_no_interval_is_a_point_at_0_or_100_percent() -> None:
    """0/80 and 80/80 over 40 papers: every bootstrap resample gives the same rate; the report
    gives the Wilson interval instead of [0, 0] and [100, 100]."""
    cells = [(f"p{i}/e/t{j}", "raw", "x", "parse_failure") for i in range(40) for j in range(2)]
    cells += [(f"p{i}/e/t{j}", "refined", "x", "success") for i in range(40) for j in range(2)]
    # A reproducer whose papers differ: its rate (and the overall rate) have spread.
    cells += [(f"p{i}/e/t0", "raw", "y", "success" if i % 3 else "parse_failure") for i in range(40)]
    report = build_report(_results(cells), "r")
    rates = {g.condition: g.rate for g in report.by_reproducer_condition if g.reproducer == "x"}
    assert (rates["raw"].successes, rates["raw"].cells, rates["raw"].interval) == (0, 80, "wilson")
    assert rates["raw"].ci_low == 0.0 and rates["raw"].ci_high == pytest.approx(0.0458, abs=1e-4)
    assert rates["refined"].ci_low == pytest.approx(0.9542, abs=1e-4) and rates["refined"].ci_high == 1.0
    # Rates with spread keep their bootstrap interval.
    assert {g.reproducer: g.rate.interval for g in report.by_reproducer_condition if g.reproducer == "y"} == {
        "y": "bootstrap"}
    assert report.overall.rate.interval == "bootstrap"


def test_pareto_frontier() -> None:
    """Points that no other point beats on both cost and success are on the frontier; a point
    without a reported cost is listed last and is never on it."""
    def cell(task: str, reproducer: str, state: str, cost: float | None) -> dict[str, Any]:
        return {"cell": {"task": task, "condition": "raw", "reproducer": reproducer, "repeat": 1}, "state": state,
                **({} if cost is None else {"usage": {"cost_usd": cost}})}

    data = _results([])
    data["tasks"] = _results([("p/e/a", "raw", "x", "success"), ("p/e/b", "raw", "x", "success")])["tasks"]
    # cheap: 1/2 at $1; dear: 2/2 at $3; worse: 1/2 at $2 (beaten by cheap); same: 1/2 at $1 (ties cheap); none: no cost.
    for name, states, cost in (("cheap", ("success", "parse_failure"), 1.0), ("dear", ("success", "success"), 3.0),
                               ("worse", ("success", "parse_failure"), 2.0),
                               ("same", ("parse_failure", "success"), 1.0), ("none", ("success", "success"), None)):
        data["cells"] += [cell(t, name, s, cost) for t, s in zip(("p/e/a", "p/e/b"), states)]
    report = build_report(data, "r")
    assert [(p.reproducer, p.cost_usd_mean, p.rate, p.frontier) for p in report.pareto] == [
        ("cheap", 1.0, 0.5, True), ("same", 1.0, 0.5, True), ("worse", 2.0, 0.5, False), ("dear", 3.0, 1.0, True),
        ("none", None, 1.0, False)]


def test_reexecution_attempts_are_cells() -> None:
    data = {"bench_version": "1.0", "mode": "reproduce", "taskset": "t", "repeats": 2, "tasks": [
        {"paper": "p", "experiment": "e", "task": "t", "artifact": "a", "claim": "c", "launcher": "l",
         "interval": {"low": 0, "high": 1, "center": 0.5, "half_width": 0.5, "n": 3, "stability": "stable",
                      "source": "task"},
         "attempts": [{"number": 1, "state": "success", "wall_s": 2.0},
                      {"number": 2, "state": "infrastructure_failure", "detail": "train: timeout: timed out after 1 s",
                       "wall_s": 4.0}]}],
        "totals": {"attempts": 2, "states": {}}}
    cells = cells_of(data)
    assert [(c.key, c.condition, c.reproducer, c.infrastructure) for c in cells] == [
        ("p/e/t/attempt-1", "refined", "re-execution", None), ("p/e/t/attempt-2", "refined", "re-execution", "timeout")]
    report = build_report(data, "r")
    assert report.paired == [] and report.cost_time[0].wall_s_mean == 3.0
