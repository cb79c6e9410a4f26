"""The report of a benchmark (``rra bench report``): the figures its HTML page and Markdown
summary show, as schema'd JSON.

Every rate counts every cell of its group in the denominator, whatever state it ended in
(an infrastructure failure or an audit violation is a failure, never a dropped cell).
Confidence intervals are percentile intervals of a bootstrap that resamples **papers** (with
their tasks and cells) with replacement: tasks of one paper share code, data and authors, so
they are not independent draws, and resampling cells would understate the uncertainty. Where
the bootstrap has no spread (a rate of 0 or 100 %, or a single paper: every resample is the
rate itself), the interval is the Wilson score interval of successes over cells instead, and
``Rate.interval`` says so.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import RRAModel
from .bench_cost import FullCost

__all__ = ["Bootstrap", "BenchReport", "CostTime", "Effect", "Factorial", "FactorialCondition", "Finding", "GroupRate",
           "InfrastructureFailure", "PairedDifference", "ParetoPoint", "Rate", "ReproducerSpread", "TaskDifference"]


class Rate(RRAModel):
    """Successes over cells, with the bootstrap confidence interval of the rate."""

    successes: int = Field(ge=0)
    cells: int = Field(ge=0, description="The denominator: every cell of the group.")
    rate: float | None = Field(default=None, description="successes / cells; absent with no cell.")
    ci_low: float | None = Field(default=None, description="Lower end of the confidence interval.")
    ci_high: float | None = Field(default=None, description="Upper end of the confidence interval.")
    interval: Literal["bootstrap", "wilson"] | None = Field(
        default=None, description="How the interval was made: 'bootstrap' (percentile, papers resampled) or "
        "'wilson' (Wilson score interval of successes over cells, where the bootstrap has no spread: a rate of 0 "
        "or 100 %, or one paper); absent with no cell.")
    papers: int = Field(ge=0, description="Papers (the bootstrap's clusters) the group's cells come from.")


class GroupRate(RRAModel):
    """The success rate of one group of cells, and how each of its cells ended."""

    reproducer: str | None = Field(default=None, description="The reproducer, when grouped by it.")
    condition: str | None = Field(default=None, description="The condition ('raw', 'refined', "
                                  "'refined-without-...'), when grouped by it.")
    stability: str | None = Field(default=None, description="'stable' or 'variable', when grouped by it.")
    paper: str | None = Field(default=None, description="The paper, when grouped by it.")
    rate: Rate
    states: dict[str, int] = Field(description="Cells per state; they sum to rate.cells.")


class TaskDifference(RRAModel):
    """One task's success rates under two conditions (over every reproducer and repeat)."""

    task: str
    paper: str
    rate_a: float
    rate_b: float
    difference: float = Field(description="rate_b - rate_a.")


class PairedDifference(RRAModel):
    """Per-task differences of success rate between two conditions, over the tasks run under both."""

    condition_a: str
    condition_b: str
    tasks: list[TaskDifference]
    mean: float | None = Field(default=None, description="Mean of the per-task differences.")
    ci_low: float | None = None
    ci_high: float | None = None


class ReproducerSpread(RRAModel):
    """The best and the worst reproducer under one condition."""

    condition: str
    best: str
    best_rate: float
    worst: str
    worst_rate: float
    spread: float = Field(description="best_rate - worst_rate.")
    reproducers: int = Field(ge=1)


class CostTime(RRAModel):
    """What the cells of one condition consumed: wall time measured, the rest as reported."""

    condition: str
    cells: int = Field(ge=0)
    wall_s_cells: int = Field(ge=0, description="Cells with a wall time.")
    wall_s_mean: float | None = None
    wall_s_total: float = 0.0
    cost_cells: int = Field(default=0, ge=0, description="Cells whose reproducer reported a cost.")
    cost_usd_total: float = 0.0
    cost_usd_mean: float | None = None
    tokens_total: int = 0
    gpu_hours_total: float = 0.0


class ParetoPoint(RRAModel):
    """One reproducer under one condition on the accuracy-cost plane (as HAL plots agents)."""

    reproducer: str
    condition: str
    cells: int = Field(ge=0)
    rate: float | None = Field(default=None, description="Success rate over every cell of the group.")
    cost_cells: int = Field(ge=0, description="Cells with a cost (metered, else stated).")
    cost_usd_mean: float | None = Field(default=None, description="Mean cost per cell over the cells with one; "
                                        "absent when none reported a cost.")
    frontier: bool = Field(description="On the Pareto frontier: no other point costs as little or less and "
                           "succeeds as often or more, one of them strictly.")


class InfrastructureFailure(RRAModel):
    """A cell cut short or never set up, and why."""

    cell: str
    kind: str = Field(description="timeout, oom, gpu_unavailable, node_lost, interrupted, cost_limit, setup or other.")
    detail: str | None = None


class Finding(RRAModel):
    """An audit finding with the evidence the auditor names."""

    cell: str
    task: str
    kind: str
    confirmed: bool
    detail: str
    evidence: list[str] = Field(default_factory=list)


class FactorialCondition(RRAModel):
    """One condition of a factorial analysis: the refined artifact without some parts, and its rate."""

    condition: str
    without: list[str] = Field(description="The parts removed (none: 'refined').")
    rate: Rate


class Effect(RRAModel):
    """A factorial effect on the success rate, in rate units (0.1 = 10 percentage points).

    With one part, its main effect: the mean rate of the conditions that keep the part minus the
    mean rate of those without it, over every combination of the other parts (positive: the part
    helps). With several, their interaction (the usual 2^k contrast: the product of the parts'
    +1 kept / -1 removed signs, over 2^(k-1)). In a one-at-a-time design, a part's effect is
    'refined' minus 'refined' without that part, and a pair's interaction is half the difference
    of one part's effect with and without the other, where the four conditions exist."""

    parts: list[str] = Field(min_length=1)
    estimate: float | None = Field(default=None, description="The effect; absent when a condition has no cell.")
    ci_low: float | None = None
    ci_high: float | None = None


class Factorial(RRAModel):
    """Main effects and interactions of the parts of a refined artifact, from the cells of 'refined'
    and its ablations (docs/bench.md#factorial-analysis)."""

    reproducer: str | None = Field(default=None, description="The reproducer; absent: every reproducer pooled.")
    parts: list[str] = Field(description="The parts some ablation removes, in canonical order.")
    design: Literal["full", "one-at-a-time"] = Field(
        description="'full' when every combination of the parts was run, else 'one-at-a-time'.")
    conditions: list[FactorialCondition]
    effects: list[Effect] = Field(description="Main effects, then interactions by order.")
    missing: list[str] = Field(default_factory=list, description="Conditions a full factorial design of the parts "
                               "needs that the results lack.")


class Bootstrap(RRAModel):
    """How the confidence intervals were computed."""

    resamples: int = Field(ge=1)
    seed: int
    confidence: float = Field(gt=0, lt=1)
    cluster: str = Field(description="The unit resampled: 'paper'.")


class BenchReport(RRAModel):
    """The report of one benchmark's results."""

    report_version: str = Field(pattern=r"^1\.0$")
    taskset: str
    mode: str = Field(description="The results' mode: 'reproduce', 'run' or 'score'.")
    results: str = Field(description="The results file the report was made from.")
    bootstrap: Bootstrap
    overall: GroupRate
    by_reproducer_condition: list[GroupRate]
    by_stability: list[GroupRate] = Field(description="Grouped by task class (stable or variable) and condition.")
    by_paper: list[GroupRate] = Field(description="Grouped by paper and condition.")
    paired: list[PairedDifference] = Field(description="One entry per pair of conditions: raw and refined, and "
                                           "refined and each ablation.")
    spread: list[ReproducerSpread] = Field(description="One entry per condition.")
    cost_time: list[CostTime] = Field(description="One entry per condition.")
    pareto: list[ParetoPoint] = Field(default_factory=list, description="Accuracy against mean cost per "
                                      "reproducer and condition, cheapest first; the frontier marked.")
    infrastructure: list[InfrastructureFailure]
    findings: list[Finding]
    stable_tasks: int = Field(ge=0)
    variable_tasks: int = Field(ge=0)
    factorial: list[Factorial] = Field(
        default_factory=list, description="Factorial analyses of the ablation conditions: every reproducer "
        "pooled, then each reproducer (when there are several); empty without ablation conditions.")
    unisolated: list[str] = Field(default_factory=list, description="Cells whose reproducer ran with --sandbox "
                                  "none: on the evaluator's machine, able to read anything and reach the network.")
    price_tables: list[str] = Field(default_factory=list, description="The price tables (name and date) the "
                                    "metered costs come from.")
    full_cost: FullCost | None = Field(
        default=None, description="The full cost of the reproductions (construction, reproducers, GPU-hours, "
        "audit, human review) and the break-even number of reuses of the refined artifacts, with the prices and "
        "assumptions behind them.")
