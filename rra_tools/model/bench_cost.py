"""The full cost of a reproduction (issue 14 item 3): what building a refined artifact cost, what
each reproduction consumed, what people spent reviewing, and the break-even number of reuses.

- :class:`Construction` sits in a results file beside each task: the builder's own records of
  the task's artifact (``.rra/build/state.json`` of ``rra build``: agent time, tokens, cost).
- :class:`ReviewTime` is the file people fill in (``rra bench report --review-time FILE``): the
  hours they spent reviewing an artifact before release (``construction``) or reviewing the
  reproductions of a task under one condition (``raw``, ``refined``).
- :class:`FullCost` is the report's cost table and break-even, with the prices it assumed.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import RRAModel
from .taskset import TaskKey

__all__ = ["ArtifactCost", "BreakEven", "ConditionCost", "Construction", "CostPrices", "FullCost", "ReviewStage",
           "ReviewTime", "ReviewTimeEntry"]

Text = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


class Construction(RRAModel):
    """What building a task's artifact cost, as ``rra build`` recorded it in the artifact."""

    recorded: bool = Field(description="Whether the artifact holds the builder's records; false: it was not "
                           "built by 'rra build' (or its records were left out), and every figure below is 0.")
    source: str | None = Field(default=None, description="The record read, relative to the artifact "
                               "('.rra/build/state.json').")
    wall_s: float = Field(default=0.0, ge=0, description="Wall-clock seconds of every build step, over every run "
                          "of the build (the agent's time and the runs it started).")
    steps: int = Field(default=0, ge=0, description="Build steps that ran at least once.")
    decisions: int = Field(default=0, ge=0, description="Decisions the agent (or a person) answered.")
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(default=None, ge=0, description="The cost the agent stated, US dollars; absent "
                                   "when it stated none.")
    note: str | None = Field(default=None, description="Why the records could not be read, when they could not.")


class ReviewStage(str, Enum):
    """What people reviewed."""

    CONSTRUCTION = "construction"
    RAW = "raw"
    REFINED = "refined"


class ReviewTimeEntry(RRAModel):
    """Hours people spent on one review."""

    task: TaskKey = Field(description="The task: for 'construction', the task's artifact was reviewed (one "
                          "artifact's entries count once however many of its tasks they name); for 'raw' or "
                          "'refined', the reproductions of this task under that condition were.")
    stage: ReviewStage = Field(description="'construction' (the refined artifact, before release), 'raw' or "
                               "'refined' (the reproductions under that condition, every cell of the task together).")
    hours: float = Field(ge=0, le=100000, allow_inf_nan=False, description="Hours spent, by everyone together.")
    by: Text | None = Field(default=None, description="Who reviewed (a person or a team).")
    note: Text | None = Field(default=None, description="What the review was.")


class ReviewTime(RRAModel):
    """Human review time, entered by the people who spent it."""

    review_time_version: Annotated[str, StringConstraints(pattern=r"^1\.0$")] = Field(
        description="Version of the format: '1.0'.")
    taskset: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")] = Field(
        description="Id of the task set the entries belong to.")
    entries: list[ReviewTimeEntry] = Field(min_length=1)


class CostPrices(RRAModel):
    """The prices the costs are converted with (each a command-line option of rra bench report)."""

    gpu_hour_usd: float = Field(ge=0, description="One GPU-hour.")
    cpu_hour_usd: float = Field(ge=0, description="One CPU-hour (the auditor's CPU time).")
    human_hour_usd: float = Field(ge=0, description="One hour of a person's review.")
    agent_hour_usd: float = Field(ge=0, description="One wall-clock hour of a builder agent or a reproducer, on top "
                                  "of the cost it states (0: only what it states counts).")


class ArtifactCost(RRAModel):
    """What building (and reviewing) one refined artifact cost."""

    artifact: str = Field(description="The artifact, as the results name it.")
    tasks: list[str] = Field(description="The tasks it serves.")
    construction: Construction
    review_hours: float = Field(ge=0, description="Human review of the artifact ('construction' entries).")
    cost_usd: float | None = Field(default=None, description="Agent cost + agent hours x price + review hours x "
                                   "price; absent when nothing was recorded (no build record, no review time).")


class ConditionCost(RRAModel):
    """What the cells of one condition consumed, and their cost per cell."""

    condition: str
    cells: int = Field(ge=0)
    reproducer_cost_usd: float = Field(description="Cost the reproducers stated, summed.")
    cost_cells: int = Field(ge=0, description="Cells whose reproducer stated a cost.")
    tokens: int = Field(ge=0)
    wall_hours: float = Field(ge=0, description="The reproducers' wall-clock hours, measured.")
    gpu_hours: float = Field(ge=0, description="GPU-hours: measured by the executor (wall x GPUs assigned) where "
                             "it ran the cell, else as the reproducer reported them.")
    gpu_hours_measured_cells: int = Field(ge=0, description="Cells whose GPU-hours the executor measured.")
    audit_cpu_s: float = Field(ge=0, description="The auditor's own CPU seconds.")
    audit_wall_s: float = Field(ge=0, description="The auditor's own wall-clock seconds.")
    review_hours: float = Field(ge=0, description="Human review of these reproductions ('raw'/'refined' entries).")
    cost_usd_total: float
    cost_usd_per_cell: float | None = Field(default=None, description="cost_usd_total / cells.")


class BreakEven(RRAModel):
    """After how many reuses a refined artifact has paid for its construction."""

    scope: str = Field(description="'all' (every artifact together) or an artifact.")
    construction_usd: float | None = None
    raw_per_cell_usd: float | None = None
    refined_per_cell_usd: float | None = None
    saving_per_reuse_usd: float | None = Field(default=None, description="raw_per_cell_usd - refined_per_cell_usd.")
    reuses: float | None = Field(default=None, description="construction_usd / saving_per_reuse_usd; absent when "
                                 "undefined (see 'verdict').")
    verdict: str = Field(description="The figure in words, or why it is undefined.")


class FullCost(RRAModel):
    """The full cost of the benchmark's reproductions and the break-even of its refined artifacts."""

    prices: CostPrices
    assumptions: list[str] = Field(description="How each figure was computed, in words (printed beside it).")
    artifacts: list[ArtifactCost]
    conditions: list[ConditionCost]
    break_even: list[BreakEven] = Field(description="'all' first, then one per artifact.")
    review_time: str | None = Field(default=None, description="The review-time file read, if any.")
