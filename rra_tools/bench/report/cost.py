"""The full cost of a benchmark's reproductions and the break-even of its refined artifacts
(``rra bench report``; docs/bench.md#full-cost-and-break-even).

A **reproduction** is one cell (one attempt of one task by one reproducer), failed ones
included: a reproducer that fails has spent its cost all the same. Its cost, in US dollars, adds
what the reproducer stated, its GPU-hours (measured by the executor where it assigned GPUs, else
as reported) and its wall-clock hours at their prices, the auditor's CPU-hours, and the hours
people spent reviewing the reproductions of its task under its condition (spread over those
cells). An artifact's **construction** cost adds what the builder's agent stated, its wall-clock
hours and the hours people spent reviewing the artifact.

The **break-even number of reuses** is construction ÷ (cost per raw reproduction − cost per
refined reproduction): after that many reproductions from the refined artifact instead of the
raw code, building it has paid for itself. When it is undefined (nothing recorded about the
construction, a condition without cells, or a refined reproduction that is not cheaper) the
verdict says so in words.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ...model.bench_cost import (
    ArtifactCost,
    BreakEven,
    ConditionCost,
    Construction,
    CostPrices,
    FullCost,
    ReviewStage,
    ReviewTime,
)
from ..errors import BenchError

__all__ = ["DEFAULT_PRICES", "full_cost", "load_review_time"]

#: The prices assumed unless rra bench report is given others (US dollars per hour): a rented
#: data-centre GPU, a cloud CPU core, an hour of a researcher's review; an agent's or a
#: reproducer's own time is not priced unless asked (its stated cost is counted).
DEFAULT_PRICES = CostPrices(gpu_hour_usd=2.0, cpu_hour_usd=0.05, human_hour_usd=50.0, agent_hour_usd=0.0)

_RAW, _REFINED = "raw", "refined"


def load_review_time(path: Path) -> ReviewTime:
    """The review-time file at ``path`` (YAML or JSON), checked against its model."""
    from pydantic import ValidationError

    from ..taskset import read_document

    data = read_document(path, "review-time file")
    try:
        return ReviewTime.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "/".join(str(p) for p in error["loc"])
        raise BenchError(f"review-time file {str(path)!r} is invalid: at /{where}: {error['msg']}",
                         "see schemas/rra-review-time-1.0.schema.json") from None


class _Cell(Protocol):
    """What the cost needs of a report cell (``rra_tools.bench.report.build.ReportCell``)."""

    task: str
    condition: str
    wall_s: float | None
    cost_usd: float | None
    tokens: int | None
    gpu_hours: float | None
    gpu_hours_measured: float | None
    audit_cpu_s: float | None
    audit_wall_s: float | None


def _artifacts(data: Mapping[str, Any]) -> dict[str, tuple[list[str], Construction]]:
    """Artifact -> (its task keys, its construction), from the results' tasks."""
    out: dict[str, tuple[list[str], Construction]] = {}
    for task in data.get("tasks", []):
        name = str(task.get("digest") or task["artifact"])
        key = f"{task['paper']}/{task['experiment']}/{task['task']}"
        raw = task.get("construction")
        construction = Construction.model_validate(raw) if raw is not None else Construction(recorded=False)
        out.setdefault(name, ([], construction))[0].append(key)
    return out


def _review_hours(review: ReviewTime | None, source: str | None, pairs: set[tuple[str, str]],
                  artifact_of: Mapping[str, str]) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """Hours per artifact (construction) and per (task, condition); BenchError for an entry that
    names a task the results do not hold, or reproductions they have no cell of."""
    known = set(artifact_of)
    per_artifact: dict[str, float] = defaultdict(float)
    per_task: dict[tuple[str, str], float] = defaultdict(float)
    for index, entry in enumerate(review.entries if review is not None else []):
        if entry.task not in known:
            raise BenchError(f"review-time file {source!r}: entries/{index}: task {entry.task!r} is not a task of "
                             "the results", "name a task as '<paper>/<experiment>/<task>' of the benchmark")
        if entry.stage == ReviewStage.CONSTRUCTION:
            per_artifact[artifact_of[entry.task]] += entry.hours
        elif (entry.task, ReviewStage(entry.stage).value) not in pairs:
            raise BenchError(f"review-time file {source!r}: entries/{index}: the results hold no "
                             f"{ReviewStage(entry.stage).value} cell of task {entry.task!r} to spread its {entry.hours:g} hour(s) "
                             "over", "enter review time of reproductions the benchmark ran")
        else:
            per_task[(entry.task, ReviewStage(entry.stage).value)] += entry.hours
    return per_artifact, per_task


def _cell_cost(c: _Cell, prices: CostPrices) -> float:
    gpu = c.gpu_hours_measured if c.gpu_hours_measured is not None else (c.gpu_hours or 0.0)
    return ((c.cost_usd or 0.0) + gpu * prices.gpu_hour_usd + (c.audit_cpu_s or 0.0) / 3600 * prices.cpu_hour_usd
            + (c.wall_s or 0.0) / 3600 * prices.agent_hour_usd)


def _condition(condition: str, cells: Sequence[_Cell], review_hours: float, prices: CostPrices) -> ConditionCost:
    total = sum(_cell_cost(c, prices) for c in cells) + review_hours * prices.human_hour_usd
    return ConditionCost(
        condition=condition, cells=len(cells), reproducer_cost_usd=round(sum(c.cost_usd or 0.0 for c in cells), 9),
        cost_cells=sum(c.cost_usd is not None for c in cells), tokens=sum(c.tokens or 0 for c in cells),
        wall_hours=round(sum(c.wall_s or 0.0 for c in cells) / 3600, 9),
        gpu_hours=round(sum(c.gpu_hours_measured if c.gpu_hours_measured is not None else (c.gpu_hours or 0.0)
                            for c in cells), 9),
        gpu_hours_measured_cells=sum(c.gpu_hours_measured is not None for c in cells),
        audit_cpu_s=round(sum(c.audit_cpu_s or 0.0 for c in cells), 6),
        audit_wall_s=round(sum(c.audit_wall_s or 0.0 for c in cells), 6), review_hours=review_hours,
        cost_usd_total=round(total, 9), cost_usd_per_cell=round(total / len(cells), 9) if cells else None)


def _usd(value: float) -> str:
    return f"{value:.4f} USD"


def _break_even(scope: str, construction: float | None, raw: ConditionCost | None,
                refined: ConditionCost | None) -> BreakEven:
    raw_c = raw.cost_usd_per_cell if raw is not None else None
    ref_c = refined.cost_usd_per_cell if refined is not None else None
    saving = raw_c - ref_c if raw_c is not None and ref_c is not None else None
    reuses: float | None = None
    if construction is None:
        verdict = ("undefined: no construction cost is recorded (no 'rra build' record in the artifact and no "
                   "'construction' review time)")
    elif raw_c is None:
        verdict = "undefined: no raw reproduction to compare with"
    elif ref_c is None:
        verdict = "undefined: no refined reproduction to compare with"
    elif saving is None or saving <= 0:
        verdict = f"never: a refined reproduction costs {_usd(ref_c)}, not less than a raw one ({_usd(raw_c)})"
    elif construction == 0:
        reuses = 0.0
        verdict = f"from the first reuse: construction cost {_usd(0)} and each reuse saves {_usd(saving)}"
    else:
        reuses = round(construction / saving, 6)
        verdict = (f"after {math.ceil(construction / saving - 1e-9)} reuse(s): {_usd(construction)} / "
                   f"{_usd(saving)} saved per reuse = {construction / saving:.2f}")
    return BreakEven(scope=scope, construction_usd=construction, raw_per_cell_usd=raw_c, refined_per_cell_usd=ref_c,
                     saving_per_reuse_usd=None if saving is None else round(saving, 9), reuses=reuses,
                     verdict=verdict)


def _assumptions(prices: CostPrices) -> list[str]:
    return [
        "A reuse is one reproduction: one cell (an attempt of one task by one reproducer), failed cells included; "
        "the cost per reproduction is the mean over every cell of the condition.",
        f"Reproduction cost = the cost the reproducer stated + GPU-hours x {prices.gpu_hour_usd:g} USD (measured by "
        f"the executor as wall time x GPUs assigned, else as the reproducer reported them) + the auditor's "
        f"CPU-hours x {prices.cpu_hour_usd:g} USD + the reproducer's wall-clock hours x {prices.agent_hour_usd:g} "
        f"USD + hours of human review of the reproductions x {prices.human_hour_usd:g} USD.",
        f"Construction cost = the cost the builder's agent stated (rra build's records in the artifact) + its "
        f"wall-clock hours x {prices.agent_hour_usd:g} USD + hours of human review of the artifact x "
        f"{prices.human_hour_usd:g} USD; tokens are in the stated costs, not priced again.",
        "'all' counts only the artifacts whose construction cost is recorded, and the cells of their tasks.",
        "Prices are options of rra bench report: --gpu-hour-usd, --cpu-hour-usd, --human-hour-usd, "
        "--agent-hour-usd.",
    ]


def full_cost(data: Mapping[str, Any], cells: Sequence[_Cell], *, prices: CostPrices = DEFAULT_PRICES,
              review: ReviewTime | None = None, review_source: str | None = None) -> FullCost:
    """The full cost of the results ``data`` whose report cells are ``cells`` (each with the
    attributes of :class:`_Cell`); BenchError when ``review`` names a task not in the results."""
    artifacts = _artifacts(data)
    artifact_of = {t: name for name, (tasks, _) in artifacts.items() for t in tasks}
    if review is not None and review.taskset != data.get("taskset"):
        raise BenchError(f"review-time file {review_source!r} is for task set {review.taskset!r}, not "
                         f"{data.get('taskset')!r}")
    by_task: dict[str, dict[str, list[_Cell]]] = defaultdict(lambda: defaultdict(list))
    for c in cells:
        by_task[c.task][c.condition].append(c)
    pairs = {(task, condition) for task, groups in by_task.items() for condition in groups}
    per_artifact, per_task = _review_hours(review, review_source, pairs, artifact_of)

    def costs(keys: set[str]) -> dict[str, ConditionCost]:
        groups: dict[str, list[_Cell]] = defaultdict(list)
        hours: dict[str, float] = defaultdict(float)
        for key in keys:
            for condition, members in by_task.get(key, {}).items():
                groups[condition].extend(members)
        for (key, condition), h in per_task.items():
            if key in keys:
                hours[condition] += h
        return {condition: _condition(condition, groups[condition], hours[condition], prices)
                for condition in sorted(groups)}

    rows: list[ArtifactCost] = []
    break_even: list[BreakEven] = []
    known: set[str] = set()
    known_usd = 0.0
    for name, (tasks, construction) in sorted(artifacts.items()):
        hours = per_artifact.get(name, 0.0)
        usd: float | None = None
        if construction.recorded or name in per_artifact:
            usd = round((construction.cost_usd or 0.0) + construction.wall_s / 3600 * prices.agent_hour_usd
                        + hours * prices.human_hour_usd, 9)
            known.update(tasks)
            known_usd += usd
        rows.append(ArtifactCost(artifact=name, tasks=sorted(tasks), construction=construction, review_hours=hours,
                                 cost_usd=usd))
        mine = costs(set(tasks))
        break_even.append(_break_even(name, usd, mine.get(_RAW), mine.get(_REFINED)))
    every = costs(set(by_task))
    known_costs = costs(known)
    overall = _break_even("all", round(known_usd, 9) if known else None, known_costs.get(_RAW),
                          known_costs.get(_REFINED))
    return FullCost(prices=prices, assumptions=_assumptions(prices), artifacts=rows,
                    conditions=list(every.values()), break_even=[overall, *break_even], review_time=review_source)
