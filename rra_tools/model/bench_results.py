"""The results file of ``rra bench``: every attempt (re-execution mode) or every cell
(reproducer mode and scored submissions) of every task, scored.

Each attempt or cell ends in exactly one state, and every one counts in the denominator:

- ``success``: the value was obtained (parsed), lies inside the acceptance interval, and has no
  confirmed audit violation;
- ``outside_interval``: a value was obtained and lies outside it;
- ``missing_value``: no value of the task was obtained (re-execution: the claim's launcher exited
  0 but its output holds no value; reproducer mode: the submission has no value for the task);
- ``parse_failure``: reproducer mode: the submission, or the task's entry in it, cannot be read
  (not JSON, not the submission schema, not a finite number);
- ``audit_violation``: reproducer mode: the auditor confirmed a violation on the value (whether
  the value was inside the interval is still reported, in ``inside``);
- ``program_failure``: re-execution: a run of the artifact failed (non-zero exit, or it could
  not start);
- ``limit_reached``: reproducer mode: the reproducer spent one of its budgets (tokens, cost,
  calls or working time, as the metering proxy measured them) or filled its workspace's disk
  quota, and was stopped: a failure of the reproducer, not of the infrastructure;
- ``infrastructure_failure``: the attempt could not be set up or was cut short (timeout, out of
  memory, GPU unavailable, node lost, interrupted, cost limit); ``infrastructure`` says which.

A **cell** is one task × condition × reproducer × repeat (:class:`Cell`); its result
(:class:`CellResult`) is what ``rra_tools.bench.cells.run_cell`` returns and what an executor
stores to resume an interrupted benchmark.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import Field, model_validator

from ._base import Id, RRAModel, Sha256
from .bench_cost import Construction
from .cell import AgentRecord, HandoverRecord, MeteredUsage, SandboxRecord, UsageDifference
from .submission import Usage
from .taskset import ConditionName, Part, TaskKey

__all__ = ["REPRODUCE_STATES", "RUN_STATES", "Attempt", "AttemptState", "AuditFinding", "BenchResults", "Cell", "CellResult", "CellUsage", "GroupTotals",
           "InfrastructureKind", "IntervalResult", "TaskResult", "Totals", "Transformation", "ViolationKind"]


class AttemptState(str, Enum):
    """How one attempt (or cell) ended."""

    SUCCESS = "success"
    OUTSIDE_INTERVAL = "outside_interval"
    MISSING_VALUE = "missing_value"
    PARSE_FAILURE = "parse_failure"
    AUDIT_VIOLATION = "audit_violation"
    LIMIT_REACHED = "limit_reached"
    PROGRAM_FAILURE = "program_failure"
    INFRASTRUCTURE_FAILURE = "infrastructure_failure"


#: The states of each mode, in the order they are reported: re-execution has no submission to
#: parse or audit, reproducer mode no run of its own to fail (a reproducer that fails leaves no value).
REPRODUCE_STATES = (AttemptState.SUCCESS, AttemptState.OUTSIDE_INTERVAL, AttemptState.MISSING_VALUE,
                    AttemptState.PROGRAM_FAILURE, AttemptState.INFRASTRUCTURE_FAILURE)
RUN_STATES = (AttemptState.SUCCESS, AttemptState.OUTSIDE_INTERVAL, AttemptState.MISSING_VALUE,
              AttemptState.PARSE_FAILURE, AttemptState.AUDIT_VIOLATION, AttemptState.LIMIT_REACHED,
              AttemptState.INFRASTRUCTURE_FAILURE)


#: A state as a literal string in the cell models: the same values as :class:`AttemptState`,
#: validated without reading an enum member (a results file holds a hundred thousand cells).
#: A condition is a pattern-checked string (:data:`~rra_tools.model.taskset.ConditionName`).
StateName = Literal["success", "outside_interval", "missing_value", "parse_failure", "audit_violation",
                    "limit_reached", "program_failure", "infrastructure_failure"]


class InfrastructureKind(str, Enum):
    """Why an attempt is an infrastructure failure."""

    TIMEOUT = "timeout"
    OOM = "oom"
    GPU_UNAVAILABLE = "gpu_unavailable"
    NODE_LOST = "node_lost"
    INTERRUPTED = "interrupted"
    COST_LIMIT = "cost_limit"
    SETUP = "setup"
    OTHER = "other"


class ViolationKind(str, Enum):
    """What the auditor found wrong with a value's evidence (docs/bench.md#auditor)."""

    HARD_CODED = "hard_coded"
    COPIED_RESULT = "copied_result"
    STALE_OUTPUT = "stale_output"
    VALUE_MISMATCH = "value_mismatch"
    FORGED_RECORD = "forged_record"
    EVIDENCE_OUTSIDE = "evidence_outside"
    UNDECLARED_CHANGE = "undeclared_change"
    REFERENCE_READ = "reference_read"
    EDITED_RECORD = "edited_record"


class IntervalResult(RRAModel):
    """The acceptance interval computed from the task's reference observations."""

    low: float
    high: float
    center: float
    half_width: float
    n: int = Field(ge=2, description="Number of reference observations.")
    stability: str = Field(pattern=r"^(stable|variable)$", description="'stable' or 'variable' (spec/04-levels.md).")
    source: str = Field(pattern=r"^(task|references|manifest)$", description="Where the observations came from: "
                        "the task, the private references file, or the claim in the manifest.")


class Attempt(RRAModel):
    """One attempt of a task: one run of the claim's launcher (with its dependencies)."""

    number: int = Field(ge=1, description="1-based attempt number.")
    seed: int | None = Field(default=None, description="Seed of the run, when the launcher is stochastic.")
    state: AttemptState
    value: float | None = Field(default=None, description="The claim's value obtained, when any.")
    detail: str | None = Field(default=None, description="Why the attempt did not succeed, in words.")
    record: str | None = Field(default=None, description="Run record the value (or failure) comes from, "
                               "relative to the output directory.")
    wall_s: float | None = Field(default=None, ge=0, description="Wall-clock seconds of the attempt, measured "
                                 "(copying the artifact and every run).")
    restarted: int | None = Field(
        default=None, ge=1, description="Times this attempt was started before and did not finish (the "
        "benchmark was killed while it ran): it was run again from a fresh workspace, and each earlier "
        "workspace kept as attempt-<n>.interrupted-<k>.")


class TaskResult(RRAModel):
    """A task and its attempts."""

    paper: Id
    experiment: Id
    task: Id
    artifact: str = Field(description="The artifact directory as resolved (for an OCI reference: its tree in "
                          "the cache).")
    digest: str | None = Field(default=None, description="The manifest digest the task's OCI reference resolved "
                               "to and was pulled and verified at; absent for an artifact named by a path.")
    claim: Id
    launcher: Id
    interval: IntervalResult
    gpus: int | None = Field(default=None, ge=0, description="GPUs the claim's launcher requests (and an executor "
                             "assigns to each attempt): an attempt's GPU-hours are its wall time x these.")
    construction: Construction | None = Field(
        default=None, description="What building the task's artifact cost, from the builder's records in it.")
    attempts: list[Attempt] = Field(default_factory=list, description="Re-execution mode's attempts.")


class Totals(RRAModel):
    """Counts over every attempt (or cell): the denominator and one count per state."""

    attempts: int = Field(ge=0)
    states: dict[str, int] = Field(description="Attempts per state; every state of the mode is listed, and they sum "
                                   "to 'attempts'.")
    success_rate: float | None = Field(default=None, description="success / attempts; absent with no attempt.")


class Cell(RRAModel):
    """One unit of reproducer mode: a task, a condition, a reproducer and a repeat."""

    task: TaskKey
    condition: ConditionName
    reproducer: Id
    repeat: int = Field(ge=1, description="1-based attempt number.")
    gpus: int = Field(default=0, ge=0, description="GPUs the claim's launcher requests (for an executor's slots).")

    @property
    def key(self) -> str:
        """'<paper>/<experiment>/<task>/<condition>/<reproducer>/<repeat>': unique in a benchmark, and a
        relative path (the cell's directory under the benchmark directory's cells/)."""
        return f"{self.task}/{self.condition}/{self.reproducer}/{self.repeat}"


class AuditFinding(RRAModel):
    """Something the auditor found about a value: a confirmed violation (the trace failed) or a suspicion
    the finder raised that the refuter's trace did not confirm."""

    task: TaskKey
    kind: ViolationKind
    confirmed: bool = Field(description="True when the refuter's trace failed: the value does not count.")
    detail: str = Field(description="What was found, in words, naming the files.")
    evidence: list[str] = Field(default_factory=list, description="Paths (relative to the workspace) involved.")


class Transformation(RRAModel):
    """The ablation applied to a cell's workspace: the refined artifact without some of its parts
    (docs/bench.md#ablations)."""

    without: list[Part] = Field(min_length=1, description="The parts removed, in canonical order.")
    tree_digest: Sha256 = Field(description="Tree digest (docs/builder.md) of the transformed artifact in the "
                                "workspace, before the task description and the paper were added.")
    removed: list[str] = Field(default_factory=list, description="Files deleted, relative to the workspace.")
    reverted: list[str] = Field(default_factory=list, description="Files the reversed patch series changed back "
                                "to the upstream commit.")
    fields: list[str] = Field(default_factory=list, description="Manifest fields removed (JSON pointers).")


class CellUsage(RRAModel):
    """What a cell consumed: as the metering proxy measured it, and as the reproducer stated it."""

    metered: MeteredUsage | None = Field(default=None, description="Measured outside the cell by the metering "
                                         "proxy; what cost figures read first.")
    stated: Usage | None = Field(default=None, description="What the reproducer says it consumed: a coding agent's "
                                 "own report read by the evaluator from the agent program's output (stated_by "
                                 "'agent'), else the submission's usage (stated_by 'submission').")
    stated_by: Literal["agent", "submission"] | None = Field(
        default=None, description="Where 'stated' comes from: the agent program's own report, or the submission.")
    differences: list[UsageDifference] = Field(
        default_factory=list, description="Stated figures that differ from the metered ones by more than 1 %.")

    @model_validator(mode="before")
    @classmethod
    def _flat_stated(cls, data: Any) -> Any:
        # Results written before metering held the stated figures flat in 'usage'.
        if isinstance(data, dict) and data.keys() & {"tokens", "cost_usd", "wall_s", "gpu_hours"}:
            return {"stated": data}
        return data

    def cost_usd(self) -> float | None:
        """The cost: metered when measured, else stated."""
        if self.metered is not None:
            return self.metered.cost_usd
        return None if self.stated is None else self.stated.cost_usd

    def tokens(self) -> int | None:
        """Tokens, input (cached or not) and output together: metered when measured, else stated."""
        m = self.metered
        if m is not None:
            return m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens
        return None if self.stated is None else self.stated.tokens


class CellResult(RRAModel):
    """How one cell ended: its state, value, audit findings and usage."""

    cell: Cell
    state: StateName = Field(description="How the cell ended (see the module docstring).")
    value: float | None = Field(default=None, description="The value submitted for the task, when one parsed.")
    evidence_value: float | None = Field(
        default=None, description="The value the submitted value's evidence yields, read by the claim's own rule; "
        "when present it is what the interval judged (the submitted value is the submitter's rounding of it).")
    inside: bool | None = Field(default=None, description="Whether the value lies inside the interval "
                                "(reported even when an audit violation decides the state).")
    infrastructure: InfrastructureKind | None = Field(
        default=None, description="Why, when the state is infrastructure_failure.")
    detail: str | None = Field(default=None, description="Why the cell did not succeed, in words.")
    findings: list[AuditFinding] = Field(default_factory=list, description="The auditor's findings on the value.")
    usage: CellUsage | None = Field(default=None, description="What the cell consumed: metered by the proxy, and "
                                    "as the reproducer stated it.")
    sandbox: SandboxRecord | None = Field(default=None, description="The sandbox the reproducer ran in (backend "
                                          "'none': unisolated, flagged in the report).")
    wall_s: float | None = Field(default=None, ge=0, description="Wall-clock seconds the reproducer ran, measured.")
    exit_status: int | None = Field(default=None, description="The reproducer's exit status (negative: signal).")
    gpus_assigned: int | None = Field(default=None, ge=0, description="GPUs the executor assigned to the cell "
                                      "(CUDA_VISIBLE_DEVICES of the reproducer).")
    gpu_hours: float | None = Field(default=None, ge=0, description="GPU-hours measured by the executor: wall_s x "
                                    "gpus_assigned / 3600 (what the reproducer reports is in usage).")
    audit_wall_s: float | None = Field(default=None, ge=0, description="Wall-clock seconds the auditor spent on "
                                       "the cell's value.")
    audit_cpu_s: float | None = Field(default=None, ge=0, description="CPU seconds the auditor spent on the cell's "
                                      "value (its own thread's).")
    workspace: str | None = Field(default=None, description="The cell's workspace, relative to the benchmark "
                                  "directory.")
    restarted: int | None = Field(
        default=None, ge=1, description="Times this cell was started before and did not finish (the benchmark "
        "was killed while it ran): it was run again from a fresh workspace.")
    submission: str | None = Field(default=None, description="The submission read, relative to the benchmark "
                                   "directory (or as given to 'rra bench score').")
    transformation: Transformation | None = Field(
        default=None, description="The ablation applied to the workspace, for a condition 'refined-without-...'.")
    handover: HandoverRecord | None = Field(
        default=None, description="The hand-over a coding agent received (template version and digest).")
    agent: AgentRecord | None = Field(default=None, description="The coding agent that ran, its adapter and "
                                      "transcript, for a reproducer that names an agent.")


class GroupTotals(RRAModel):
    """Counts over the cells of one reproducer under one condition."""

    reproducer: Id
    condition: ConditionName
    totals: Totals


class BenchResults(RRAModel):
    """The results of one ``rra bench reproduce``, ``rra bench run`` or ``rra bench score``."""

    bench_version: str = Field(pattern=r"^1\.0$")
    mode: str = Field(pattern=r"^(reproduce|run|score)$",
                      description="How the values were obtained: 'reproduce' (re-execution), 'run' (reproducers "
                      "in workspaces) or 'score' (submissions made elsewhere).")
    taskset: Id
    repeats: int = Field(ge=1)
    tasks: list[TaskResult]
    cells: list[CellResult] = Field(default_factory=list, description="Reproducer mode's cells.")
    groups: list[GroupTotals] = Field(default_factory=list, description="Totals per reproducer and condition.")
    totals: Totals
