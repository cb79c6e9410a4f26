"""A reproducer's submission: the value it obtained for each task, the evidence each value rests
on, the changes it made to the code, and the usage it reports.

A reproducer writes one submission per attempt (``rra bench run`` tells it where, through
``RRA_BENCH_SUBMISSION``); ``rra bench score`` reads submissions made elsewhere. Every path is
relative to the attempt's workspace: evidence outside it does not count (the auditor reports it).
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field, StringConstraints

from ._base import Id, RRAModel
from .taskset import ConditionName, TaskKey

__all__ = ["DeclaredChange", "Evidence", "Submission", "SubmittedValue", "Usage"]

Text = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


class Evidence(RRAModel):
    """What a value rests on; every path relative to the workspace."""

    run_record: Text | None = Field(
        default=None, description="The run record (record.json written by 'rra run') of the run that produced "
        "the value.")
    output: Text | None = Field(
        default=None, description="The output file the value was read from (one of the record's outputs).")
    script: Text | None = Field(default=None, description="The script or launcher the run executed.")


class SubmittedValue(RRAModel):
    """The value a reproducer obtained for one task."""

    task: TaskKey
    value: Union[Annotated[float, Field(allow_inf_nan=False)], str, list[Union[Annotated[float, Field(
        allow_inf_nan=False)], str]]] = Field(
        description="The claim's value, after extraction and scaling, as a JSON number; for a task whose claim is of "
        "kind string, set or list (RRA 1.2), the answer: a string, or an array of numbers and strings.")
    evidence: Evidence | None = Field(default=None, description="What the value rests on.")


class DeclaredChange(RRAModel):
    """A change the reproducer made to a file of the code it was given, and why."""

    path: Text = Field(description="The changed (or removed) file, relative to the workspace.")
    rationale: Text = Field(description="Why it was changed.")


class Usage(RRAModel):
    """What an attempt consumed, as the reproducer reports it (the evaluator measures wall time too)."""

    tokens: int | None = Field(default=None, ge=0, description="Model tokens, input and output together.")
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False, description="Cost in US dollars.")
    wall_s: float | None = Field(default=None, ge=0, allow_inf_nan=False, description="Wall-clock seconds.")
    gpu_hours: float | None = Field(default=None, ge=0, allow_inf_nan=False, description="GPU-hours.")


class Submission(RRAModel):
    """One attempt's submission."""

    submission_version: Annotated[str, StringConstraints(pattern=r"^1\.0$")] = Field(
        description="Version of the submission format: '1.0'.")
    reproducer: Id | None = Field(default=None, description="Name of the reproducer that made it.")
    condition: ConditionName | None = Field(
        default=None, description="'raw', 'refined' or an ablation 'refined-without-...'; read by 'rra bench "
        "score' (default: refined).")
    repeat: int | None = Field(default=None, ge=1, description="1-based attempt number; read by 'rra bench score'.")
    values: list[SubmittedValue] = Field(
        default_factory=list, description="One value per task; a task without a value is scored missing_value. "
        "An entry that does not parse is a parse failure of its task, not of the others.")
    changes: list[DeclaredChange] = Field(
        default_factory=list, description="Files of the given code the reproducer changed; a run of changed code "
        "that is not declared here is an audit violation.")
    usage: Usage | None = Field(default=None, description="What the attempt consumed.")
