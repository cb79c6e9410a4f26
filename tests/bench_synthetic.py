"""Synthetic results of a reproducer-mode benchmark, for the report's tests and its benchmark
(``benchmarks/bench_report.py``): built through the results models and their scoring, so they
are what ``rra bench run`` writes, at any size, from a seed."""

from __future__ import annotations

import random
from typing import Any

from rra_tools.bench.scoring import group_totals, totals
from rra_tools.model.bench_results import (
    AttemptState,
    AuditFinding,
    BenchResults,
    Cell,
    CellResult,
    CellUsage,
    IntervalResult,
    TaskResult,
    ViolationKind,
)
from rra_tools.model.cell import MeteredUsage
from rra_tools.model.submission import Usage

REPRODUCERS = ("honest", "sloppy", "cheating", "slow")
CONDITIONS = ("raw", "refined")


def synthetic_results(papers: int, tasks_per_paper: int, repeats: int = 3, seed: int = 0,
                      reproducers: tuple[str, ...] = REPRODUCERS,
                      conditions: tuple[str, ...] = CONDITIONS, *, usage: bool = True,
                      refuted: float = 0.0) -> dict[str, Any]:
    """``papers`` × ``tasks_per_paper`` tasks, each run by every reproducer under every condition
    (default: raw and refined; ablations 'refined-without-...' lose success with each part gone)
    ``repeats`` times: papers × tasks × reproducers × conditions × repeats cells.

    A reproducer behaves as the one of :data:`REPRODUCERS` its name starts with ('slow-agent' is
    slow). Without ``usage`` no cell reports a cost, tokens or time of its own; ``refuted`` is the
    share of successful cells that carry a finding the auditor refuted (drawn from a generator of
    their own: the other figures stay what they were)."""
    rng = random.Random(seed)
    doubts = random.Random(seed + 1)
    tasks: list[TaskResult] = []
    cells: list[CellResult] = []
    for p in range(papers):
        paper_skill = rng.uniform(-0.2, 0.1)
        for t in range(tasks_per_paper):
            variable = rng.random() < 0.3
            tasks.append(TaskResult(
                paper=f"paper-{p}", experiment="e", task=f"t{t}", artifact=f"artifacts/p{p}", claim="c",
                launcher="l", interval=IntervalResult(low=0.9, high=1.1, center=1.0, half_width=0.1, n=5,
                                                      stability="variable" if variable else "stable", source="task")))
            key = f"paper-{p}/e/t{t}"
            for reproducer in reproducers:
                for condition in conditions:
                    for repeat in range(1, repeats + 1):
                        cell = _cell(rng, key, reproducer, condition, repeat, paper_skill, variable)
                        if not usage:
                            cell = cell.model_copy(update={"usage": None})
                        if refuted and cell.state == AttemptState.SUCCESS and doubts.random() < refuted:
                            kind = doubts.choice([ViolationKind.REFERENCE_READ, ViolationKind.COPIED_RESULT,
                                                  ViolationKind.STALE_OUTPUT])
                            cell = cell.model_copy(update={"findings": [AuditFinding(
                                task=key, kind=kind, confirmed=False, detail=f"{kind.value}: not confirmed by the "
                                "trace", evidence=[f"runs/train/{repeat}/record.json"])]})
                        cells.append(cell)
    results = BenchResults(bench_version="1.0", mode="run", taskset="synthetic", repeats=repeats, tasks=tasks,
                           cells=cells, groups=group_totals(cells), totals=totals(str(c.state) for c in cells))
    return results.model_dump(mode="json", exclude_none=True)


def _cell(rng: random.Random, task: str, reproducer: str, condition: str, repeat: int, skill: float,
          variable: bool) -> CellResult:
    cell = Cell(task=task, condition=condition, reproducer=reproducer, repeat=repeat)  # type: ignore[arg-type]
    stated = Usage(tokens=rng.randint(1000, 90000), cost_usd=round(rng.uniform(0.05, 2.0), 3),
                   wall_s=round(rng.uniform(5, 300), 1), gpu_hours=0.0)
    # As a sandboxed cell's: the proxy's figures, equal to what the reproducer stated (no draw more
    # from the generator, so the figures of the rest stay what they were).
    tokens, cost = stated.tokens or 0, stated.cost_usd or 0.0
    usage = CellUsage(stated=stated, metered=MeteredUsage(
        calls=max(1, tokens // 5000), input_tokens=tokens * 3 // 4, output_tokens=tokens - tokens * 3 // 4,
        cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0, cost_usd=cost,
        price_table="rra-prices 2026-12-01"))
    wall = stated.wall_s
    if reproducer.startswith("slow") and rng.random() < 0.7:
        return CellResult(cell=cell, state=AttemptState.INFRASTRUCTURE_FAILURE, infrastructure="timeout",
                          detail="the reproducer ran past its 600 s limit", usage=usage, wall_s=600.0)
    if reproducer.startswith("cheating") and rng.random() < 0.8:
        finding = AuditFinding(task=task, kind=ViolationKind.HARD_CODED, confirmed=True,
                               detail="value 0.97 appears in no output produced during the attempt",
                               evidence=["submission.json", "runs/train/0-2026/record.json"])
        return CellResult(cell=cell, state=AttemptState.AUDIT_VIOLATION, value=0.97, inside=True,
                          detail=f"hard_coded: {finding.detail}", findings=[finding], usage=usage, wall_s=wall)
    p = 0.9 if condition.startswith("refined") else 0.65
    removed = set(condition.removeprefix("refined-without-").split("-")) if "-without-" in condition else set()
    # An ablation loses by part; launchers and guide stand in for each other (an interaction).
    p -= 0.2 * ("repairs" in removed) + 0.02 * ("lock" in removed) + 0.15 * ({"launchers", "guide"} <= removed)
    p -= 0.05 * (len(removed & {"launchers", "guide"}) == 1)
    p += skill - (0.25 if reproducer.startswith("sloppy") else 0) - (0.1 if variable else 0)
    if rng.random() < p:
        return CellResult(cell=cell, state=AttemptState.SUCCESS, value=1.0, inside=True, usage=usage, wall_s=wall)
    state = rng.choice([AttemptState.OUTSIDE_INTERVAL, AttemptState.MISSING_VALUE, AttemptState.PARSE_FAILURE])
    value = 1.3 if state == AttemptState.OUTSIDE_INTERVAL else None
    return CellResult(cell=cell, state=state, value=value, inside=False if value is not None else None,
                      detail=f"{state.value} <script>alert('escaped?')</script>", usage=usage, wall_s=wall)
