"""Benchmark task sets: papers → experiments → tasks, each task a claim of an artifact with the
reference observations that decide whether a reproduction succeeded.

A task names its artifact by a path relative to the task-set file and the claim by its id. Its
reference observations (at least 3, 5 as the norm), each with provenance, define the acceptance
interval exactly as ``spec/04-levels.md`` does for a claim; when a task gives none, the claim's
own reference observations in the artifact's manifest are used.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import Id, RRAModel

__all__ = ["BenchObservation", "CodeCondition", "Experiment", "Paper", "Task", "TaskSet"]

#: The smallest number of reference observations a task may carry (spec/04-levels.md).
MIN_OBSERVATIONS = 3

Text = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


class CodeCondition(str, Enum):
    """Which code produced an observation: the upstream code as published, or the RRA."""

    RAW = "raw"
    REFINED = "refined"


class BenchObservation(RRAModel):
    """One independent reference value of the task's claim, with where it came from."""

    value: float = Field(allow_inf_nan=False, description="The value, after extraction and scaling.")
    by: Text = Field(description="Who made the run (a person, a lab or a tool).")
    machine: Text = Field(description="The machine it ran on (hardware and software, in words).")
    code: CodeCondition = Field(description="'raw' (upstream code) or 'refined' (the RRA).")
    run_record: Text | None = Field(
        default=None, description="The run record of the run, when it was kept (a path or a URL).")


class Task(RRAModel):
    """One claim of one artifact to reproduce."""

    id: Id
    artifact: Text = Field(description="Path of the artifact directory, relative to the task-set file.")
    claim: Id = Field(description="Id of the claim in the artifact's manifest.")
    reference: list[BenchObservation] | None = Field(
        default=None, min_length=MIN_OBSERVATIONS,
        description="At least 3 (5 recommended) reference observations; when omitted, the claim's "
        "reference observations in the artifact's manifest are used (at least 3 are needed there).")


class Experiment(RRAModel):
    """A group of tasks of one paper (a table, a figure)."""

    id: Id
    tasks: list[Task] = Field(min_length=1, description="The tasks; ids unique within the experiment.")


class Paper(RRAModel):
    """A paper and the experiments taken from it."""

    id: Id
    title: Text | None = Field(default=None, description="The paper's title.")
    experiments: list[Experiment] = Field(min_length=1, description="The experiments; ids unique within the paper.")


class TaskSet(RRAModel):
    """A benchmark: papers, their experiments and tasks, and how often each task is attempted."""

    bench_version: Annotated[str, StringConstraints(pattern=r"^1\.0$")] = Field(
        description="Version of the task-set format: '1.0'.")
    id: Id
    repeats: int = Field(
        default=3, ge=1, le=100,
        description="Attempts per task. A stochastic launcher runs its first 'repeats' declared seeds, "
        "one attempt each; any other launcher runs 'repeats' times.")
    papers: list[Paper] = Field(min_length=1, description="The papers; ids unique within the task set.")
