"""The figures of ``rra bench report`` (rra_tools.bench.report) against hand counts: rates over
every cell, the paper-clustered bootstrap, paired differences, spreads, re-execution results."""

from __future__ import annotations

from typing import Any

import pytest

from rra_tools.bench.report import build_report, cells_of

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
    # One paper is one cluster: resampling it cannot move the rate.
    one = build_report(_results([c for c in HAND if c[0].startswith("p1")]), "r")
    assert all(g.rate.ci_low == g.rate.ci_high == g.rate.rate for g in one.by_reproducer_condition)


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
