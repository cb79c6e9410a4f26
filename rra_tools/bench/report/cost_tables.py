"""The full-cost tables of a benchmark report (:class:`~rra_tools.model.bench_cost.FullCost`),
as (title, header, rows) for both renderings of :mod:`.render`: the cost per condition,
the construction of each artifact, the break-even, and the assumptions printed beside it."""

from __future__ import annotations

from ...model.bench_cost import FullCost

__all__ = ["cost_tables"]


def _usd(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def cost_tables(cost: FullCost) -> list[tuple[str, list[str], list[list[str]]]]:
    """The tables of ``cost``, in the order the report shows them."""
    p = cost.prices
    conditions = [[c.condition, str(c.cells), f"${c.reproducer_cost_usd:.4f} ({c.cost_cells} cells)", str(c.tokens),
                   f"{c.wall_hours:.4g}", f"{c.gpu_hours:.4g} ({c.gpu_hours_measured_cells} measured)",
                   f"{c.audit_cpu_s:.3f} s CPU / {c.audit_wall_s:.3f} s", f"{c.review_hours:g}",
                   _usd(c.cost_usd_total), _usd(c.cost_usd_per_cell)] for c in cost.conditions]
    artifacts = []
    for a in cost.artifacts:
        k = a.construction
        recorded = ("not recorded" + (f" ({k.note})" if k.note else "") if not k.recorded else
                    f"{k.steps} steps, {k.wall_s:.1f} s, {k.decisions} decisions, "
                    f"{k.input_tokens}+{k.output_tokens} tokens, agent {_usd(k.cost_usd)}")
        artifacts.append([", ".join(a.tasks), recorded, f"{a.review_hours:g}", _usd(a.cost_usd)])
    breakeven = [[b.scope if b.scope == "all" else _scope(cost, b.scope),
                  _usd(b.construction_usd), _usd(b.raw_per_cell_usd), _usd(b.refined_per_cell_usd),
                  _usd(b.saving_per_reuse_usd), "–" if b.reuses is None else f"{b.reuses:.2f}", b.verdict]
                 for b in cost.break_even]
    prices = (f"prices: GPU-hour ${p.gpu_hour_usd:g}, CPU-hour ${p.cpu_hour_usd:g}, hour of human review "
              f"${p.human_hour_usd:g}, agent/reproducer hour ${p.agent_hour_usd:g}"
              + (f"; human review time from {cost.review_time}" if cost.review_time else "; no human review time given"))
    return [
        ("Full cost per condition",
         ["condition", "cells", "stated cost", "tokens", "wall hours", "GPU-hours", "audit", "review hours",
          "total", "per reproduction"], conditions or [["no cell", "", "", "", "", "", "", "", "", ""]]),
        ("Construction of the refined artifacts", ["tasks", "builder's records", "review hours", "construction"],
         artifacts),
        ("Break-even number of reuses",
         ["scope", "construction", "raw / reproduction", "refined / reproduction", "saved / reuse", "reuses",
          "verdict"], breakeven),
        ("Cost assumptions", ["assumption"], [[prices], *([a] for a in cost.assumptions)]),
    ]


def _scope(cost: FullCost, artifact: str) -> str:
    """An artifact's break-even row is named by its tasks (the artifact path is long)."""
    for a in cost.artifacts:
        if a.artifact == artifact:
            return ", ".join(a.tasks)
    return artifact
