"""The results file of ``rra bench reproduce``: every attempt of every task, scored.

Each attempt ends in exactly one state, and every attempt counts in the denominator:

- ``success``: the claim's value was obtained and lies inside the acceptance interval;
- ``outside_interval``: a value was obtained and lies outside it;
- ``missing_value``: the claim's launcher exited 0 but no value of the claim was obtained (its
  output is missing or holds no value the claim's rule extracts);
- ``program_failure``: a run of the artifact failed (non-zero exit, or it could not start);
- ``infrastructure_failure``: the run could not be set up (e.g. no free GPU), timed out, or
  was interrupted.
"""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from ._base import Id, RRAModel

__all__ = ["Attempt", "AttemptState", "BenchResults", "IntervalResult", "TaskResult", "Totals"]


class AttemptState(str, Enum):
    """How one attempt ended."""

    SUCCESS = "success"
    OUTSIDE_INTERVAL = "outside_interval"
    MISSING_VALUE = "missing_value"
    PROGRAM_FAILURE = "program_failure"
    INFRASTRUCTURE_FAILURE = "infrastructure_failure"


class IntervalResult(RRAModel):
    """The acceptance interval computed from the task's reference observations."""

    low: float
    high: float
    center: float
    half_width: float
    n: int = Field(ge=2, description="Number of reference observations.")
    stability: str = Field(pattern=r"^(stable|variable)$", description="'stable' or 'variable' (spec/04-levels.md).")
    source: str = Field(pattern=r"^(task|manifest)$", description="Where the observations came from.")


class Attempt(RRAModel):
    """One attempt of a task: one run of the claim's launcher (with its dependencies)."""

    number: int = Field(ge=1, description="1-based attempt number.")
    seed: int | None = Field(default=None, description="Seed of the run, when the launcher is stochastic.")
    state: AttemptState
    value: float | None = Field(default=None, description="The claim's value obtained, when any.")
    detail: str | None = Field(default=None, description="Why the attempt did not succeed, in words.")
    record: str | None = Field(default=None, description="Run record the value (or failure) comes from, "
                               "relative to the output directory.")


class TaskResult(RRAModel):
    """A task and its attempts."""

    paper: Id
    experiment: Id
    task: Id
    artifact: str = Field(description="The artifact directory as resolved.")
    claim: Id
    launcher: Id
    interval: IntervalResult
    attempts: list[Attempt]


class Totals(RRAModel):
    """Counts over every attempt: the denominator and one count per state."""

    attempts: int = Field(ge=0)
    states: dict[str, int] = Field(description="Attempts per state; every state is listed, and they sum to 'attempts'.")
    success_rate: float | None = Field(default=None, description="success / attempts; absent with no attempt.")


class BenchResults(RRAModel):
    """The results of one ``rra bench reproduce``."""

    bench_version: str = Field(pattern=r"^1\.0$")
    mode: str = Field(pattern=r"^reproduce$", description="How the values were obtained: 'reproduce' (re-execution).")
    taskset: Id
    repeats: int = Field(ge=1)
    tasks: list[TaskResult]
    totals: Totals
