"""Benchmark task sets: papers → experiments → tasks, each task a claim of an artifact with the
reference observations that decide whether a reproduction succeeded.

A task names its artifact by a path relative to the task-set file or an OCI reference (``oci://``) and the claim by its id. Its
reference observations (at least 3, 5 as the norm), each with provenance, define the acceptance
interval exactly as ``spec/04-levels.md`` does for a claim; when a task gives none, they come from
the private references file (:class:`TaskReferences`, read only by the evaluator), else from the
claim's own reference observations in the artifact's manifest.

Reproducer mode (``rra bench run``) hands each task to named reproducer commands under
conditions: ``raw`` (the upstream code at the pinned commit, with the paper), ``refined`` (the
RRA), and ablations of the refined artifact (:class:`Ablation`: the RRA without some of its
parts, :class:`Part`), ``repeats`` times each, within the task set's per-attempt limits. A
``factorial`` list of parts stands for every combination of them (2^k ablations, ``refined``
itself among them). Each condition has a name (:func:`condition_name`), the cells' and the
reports' key: ``raw``, ``refined``, ``refined-without-lock-guide``.

Either mode may run its cells as Slurm jobs (``--executor slurm``); :class:`SlurmSettings` in the
task set, and per task, say where and with what (docs/bench.md: the command line overrides a
task's settings, which override the task set's, which override what the launchers' ``resources``
in the manifest ask for).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import Field, StringConstraints, model_validator

from ._base import Id, RRAModel

__all__ = ["AGENTS", "CONDITION_PATTERN", "MIN_OBSERVATIONS", "PARTS", "Ablation", "AblationParts", "AgentName",
           "AttemptLimits", "ReproducerBudget", "SandboxSettings",
           "BenchObservation", "CodeCondition", "ConditionName", "Experiment", "Paper", "Part", "RawCode", "Reproducer",
           "SlurmSettings", "Task", "TaskKey", "TaskReference", "TaskReferences", "TaskSet", "condition_name",
           "condition_parts"]

#: The smallest number of reference observations a task may carry (spec/04-levels.md).
MIN_OBSERVATIONS = 3

Text = Annotated[str, StringConstraints(min_length=1, max_length=4096)]

#: 'paper/experiment/task': a task's key, unique within its task set.
TaskKey = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}/[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
                              r"/[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"),
    Field(description="A task's key: '<paper id>/<experiment id>/<task id>'."),
]

Commit = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]

#: A Slurm partition, account, QOS or GRES type name (no spaces, commas or shell characters).
SlurmName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]


class SlurmSettings(RRAModel):
    """Where and with what a cell's Slurm job runs (``--executor slurm``). Every field is optional;
    one set here overrides what the launchers' ``resources`` ask for (and a task's overrides the
    task set's); the command line's options override both. The local executor ignores them."""

    partition: SlurmName | None = Field(default=None, description="Partition (default: the cluster's default).")
    account: SlurmName | None = Field(default=None, description="Account the jobs are charged to.")
    qos: SlurmName | None = Field(default=None, description="Quality of service.")
    time_min: int | None = Field(
        default=None, ge=1, le=366 * 24 * 60,
        description="Time limit of each job, minutes (default: from the launchers' timeout_s, or the attempt's "
        "wall-clock limit in reproducer mode, x 1.25 + 5).")
    cpus: int | None = Field(default=None, ge=1, le=4096,
                             description="CPUs per job (default: the most any of the task's launchers asks for, else 1).")
    mem_gb: float | None = Field(
        default=None, gt=0, le=1024 * 1024,
        description="Memory per job, GB (Slurm's G: GiB) (default: the most ram_gib any of the task's launchers asks "
        "for, else the partition's default).")
    gpus: int | None = Field(default=None, ge=0, le=4096,
                             description="GPUs per job, --gres=gpu:N (default: the launchers' gpus).")
    gpu_type: SlurmName | None = Field(
        default=None, description="GRES type of the GPUs, --gres=gpu:TYPE:N (e.g. 'a100'; default: any).")


class CodeCondition(str, Enum):
    """Which code produced an observation: the upstream code as published, or the RRA."""

    RAW = "raw"
    REFINED = "refined"


class Part(str, Enum):
    """A part of a refined artifact that an ablation removes (docs/bench.md#ablations)."""

    #: The patch series: the code goes back to the upstream commit (the series reversed), the
    #: patch files, ``code.patches`` and the change records go.
    REPAIRS = "repairs"
    #: The environment lock: the lock file and ``environment.lock``.
    LOCK = "lock"
    #: The launchers: the manifest's ``launchers`` and each claim's ``launcher``.
    LAUNCHERS = "launchers"
    #: The reproduction guide (``REPRODUCE.md``, or the file ``guide.path`` names) and ``guide``.
    GUIDE = "guide"


#: The parts in their canonical order: the order of a condition's name and of the report.
PARTS: tuple[str, ...] = tuple(p.value for p in Part)

#: A condition's name: 'raw', 'refined', or 'refined-without-' and the parts removed, joined by '-'.
CONDITION_PATTERN = r"^(raw|refined|refined-without(-(repairs|lock|launchers|guide))+)$"
ConditionName = Annotated[str, StringConstraints(pattern=CONDITION_PATTERN), Field(
    description="A condition: 'raw', 'refined', or an ablation 'refined-without-<part>[-<part>...]' "
    "(parts: repairs, lock, launchers, guide).")]


def condition_name(without: Iterable[str]) -> str:
    """The name of the refined artifact without the parts ``without`` (canonical order).

    >>> condition_name(["guide", "lock"])
    'refined-without-lock-guide'
    >>> condition_name([])
    'refined'
    """
    removed = set(without)
    ordered = [p for p in PARTS if p in removed]
    return "refined-without-" + "-".join(ordered) if ordered else "refined"


def condition_parts(name: str) -> tuple[str, ...] | None:
    """The parts an ablation's ``name`` removes (``()`` for 'refined'); None for 'raw'.

    >>> condition_parts("refined-without-repairs-guide")
    ('repairs', 'guide')
    """
    if name == CodeCondition.RAW.value:
        return None
    if name == CodeCondition.REFINED.value:
        return ()
    return tuple(name.removeprefix("refined-without-").split("-"))


class AblationParts(RRAModel):
    """What an ablation removes from the refined artifact."""

    without: list[Part] = Field(min_length=1, max_length=len(Part), description="The parts removed, each once: "
                                "repairs, lock, launchers, guide.")


class Ablation(RRAModel):
    """A condition that is the refined artifact minus some of its parts: ``{refined: {without: [lock]}}``."""

    refined: AblationParts

    @property
    def name(self) -> str:
        """The condition's name (:func:`condition_name`)."""
        return condition_name(str(p) for p in self.refined.without)


class BenchObservation(RRAModel):
    """One independent reference value of the task's claim, with where it came from."""

    value: Union[Annotated[float, Field(allow_inf_nan=False)], Text, list[Union[Annotated[float, Field(
        allow_inf_nan=False)], Text]]] = Field(
        description="The value, after extraction and scaling; for a claim of kind string, set or list (RRA 1.2), "
        "the answer: a string, or a list of numbers and strings.")
    by: Text = Field(description="Who made the run (a person, a lab or a tool).")
    machine: Text = Field(description="The machine it ran on (hardware and software, in words).")
    code: CodeCondition = Field(description="'raw' (upstream code) or 'refined' (the RRA).")
    run_record: Text | None = Field(
        default=None, description="The run record of the run, when it was kept (a path or a URL).")


class RawCode(RRAModel):
    """Where the raw condition's code comes from: a git repository and a commit."""

    repository: Text = Field(
        description="A git repository: a directory (relative to the task-set file) or a URL git can clone.")
    commit: Commit | None = Field(
        default=None, description="The commit to check out (40 hex digits); default: the artifact's "
        "code.upstream.commit.")


class Task(RRAModel):
    """One claim of one artifact to reproduce."""

    id: Id
    artifact: Text = Field(
        description="The artifact: a directory, relative to the task-set file, or an OCI reference "
        "'oci://HOST[:PORT]/REPO:TAG' or 'oci://HOST[:PORT]/REPO@sha256:<hex>', pulled, verified and cached "
        "once per digest.")
    claim: Id = Field(description="Id of the claim in the artifact's manifest.")
    reference: list[BenchObservation] | None = Field(
        default=None, min_length=MIN_OBSERVATIONS,
        description="At least 3 (5 recommended) reference observations; when omitted, those of the private "
        "references file are used, else the claim's reference observations in the artifact's manifest "
        "(at least 3 are needed there). A public task set leaves them out.")
    raw: RawCode | None = Field(
        default=None, description="The raw condition's code; default: the artifact's code.upstream (url and "
        "commit), checked out from the artifact directory when it is a git repository holding the commit.")
    slurm: SlurmSettings | None = Field(
        default=None, description="Slurm settings of this task's jobs; each field set overrides the task set's.")


class Experiment(RRAModel):
    """A group of tasks of one paper (a table, a figure)."""

    id: Id
    tasks: list[Task] = Field(min_length=1, description="The tasks; ids unique within the experiment.")


class Paper(RRAModel):
    """A paper and the experiments taken from it."""

    id: Id
    title: Text | None = Field(default=None, description="The paper's title.")
    file: Text | None = Field(
        default=None, description="The paper itself (PDF or text), relative to the task-set file; copied into "
        "every workspace of its tasks as paper/<file name>.")
    experiments: list[Experiment] = Field(min_length=1, description="The experiments; ids unique within the paper.")


#: The coding agents a reproducer may name (``rra_tools.agents.adapters`` has one adapter each).
AGENTS = ("claude-code", "codex", "gemini-cli", "mini-swe-agent")
AgentName = Literal["claude-code", "codex", "gemini-cli", "mini-swe-agent"]

#: A model id as the provider spells it ('claude-sonnet-4-5', 'gpt-5.5', 'openai/gpt-5-mini').
ModelId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$")]


class ReproducerBudget(RRAModel):
    """A reproducer's own budget per attempt: each figure set replaces the task set's limit of the
    same name for this reproducer's cells (the metering proxy enforces it)."""

    tokens: int | None = Field(default=None, ge=1, description="Model tokens (input, cached and output).")
    cost_usd: float | None = Field(default=None, ge=0, description="Cost in US dollars, as the metering proxy "
                                   "prices the calls.")
    calls: int | None = Field(default=None, ge=1, description="Model calls.")


class Reproducer(RRAModel):
    """A reproducer: a named shell command started in each workspace, or a coding agent run
    through its adapter (``rra bench run``; docs/agents.md)."""

    #: A reproducer is a command or an agent with its model (exactly one: checked below).
    _rra_any_of: ClassVar[tuple[dict[str, Any], ...]] = ({"required": ["command"]}, {"required": ["agent", "model"]})

    name: Id
    command: Text | None = Field(default=None, description="Run with 'sh -c' in the workspace; the environment "
                                 "names the task description and where to write the submission (docs/bench.md).")
    agent: AgentName | None = Field(
        default=None, description="A coding agent run through its adapter, at its pinned version, with the "
        "hand-over as its prompt (docs/agents.md): claude-code, codex, gemini-cli or mini-swe-agent.")
    model: ModelId | None = Field(default=None, description="The model the agent uses, as its provider names it "
                                  "(with 'agent' only).")
    budget: ReproducerBudget | None = Field(
        default=None, description="This reproducer's budget per attempt (tokens, cost_usd, calls), replacing the "
        "task set's limits of the same name.")

    @model_validator(mode="after")
    def _command_or_agent(self) -> Reproducer:
        if (self.command is None) == (self.agent is None):
            raise ValueError("a reproducer needs exactly one of 'command' and 'agent'")
        if (self.agent is None) != (self.model is None):
            raise ValueError("'model' goes with 'agent', and an agent needs its 'model'")
        return self


class AttemptLimits(RRAModel):
    """Limits of one attempt of one reproducer on one task."""

    wall_clock_s: float = Field(
        default=3600, gt=0, le=30 * 86400,
        description="Wall-clock seconds; past it the reproducer's process group is killed and the attempt is an "
        "infrastructure failure (timeout).")
    cost_usd: float | None = Field(
        default=None, ge=0, description="Cost in US dollars of the model calls, as the metering proxy prices them: "
        "past it the proxy refuses further calls and the attempt is limit_reached. Without metering (a cell with "
        "no call), a reproducer that reports more is an infrastructure failure (cost_limit).")
    tokens: int | None = Field(default=None, ge=1, description="Model tokens (input, cached and output) the "
                               "metering proxy lets through; past it the attempt is limit_reached.")
    calls: int | None = Field(default=None, ge=1, description="Model calls the metering proxy lets through; past it "
                              "the attempt is limit_reached.")
    working_s: float | None = Field(
        default=None, gt=0, description="Working seconds the metering proxy lets a cell use (its wall time less the "
        "time spent waiting to retry the upstream's 429 and 5xx answers); past it the next model call is refused "
        "and the attempt is limit_reached. wall_clock_s stays the hard limit (infrastructure: timeout).")
    cpus: float | None = Field(default=None, gt=0, le=4096, description="CPUs of the sandbox (a CPU-time share; "
                               "default: no cap).")
    memory_mib: int | None = Field(default=None, ge=16, description="Memory of the sandbox, MiB (default 16384, or "
                                   "--memory-limit); past it the kernel kills the cell (infrastructure: oom).")
    pids: int | None = Field(default=None, ge=8, description="Processes and threads at once in the sandbox "
                             "(default 4096): a fork bomb stops there.")
    disk_mib: int | None = Field(default=None, ge=1, description="What the workspace may hold, MiB (default 20480); "
                                 "past it the attempt is limit_reached.")


class SandboxSettings(RRAModel):
    """What a task set lets into its cells' sandboxes beyond the default (docs/bench.md#isolation)."""

    env: list[Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = Field(
        default_factory=list, description="Names of the evaluator's environment variables passed into every cell "
        "(no other variable is).")
    readonly: list[Text] = Field(default_factory=list, description="Host paths shown read-only in every cell: the "
                                 "reproducers' installations (relative paths: to the task set's directory).")
    allowed_tools: list[Annotated[str, StringConstraints(pattern=r"^[a-z_]+$")]] = Field(
        default_factory=list, description="Provider-side tools the metering proxy lets through (web_search, "
        "web_fetch, code_execution, mcp); by default they are removed from every request.")


def _default_conditions() -> list[CodeCondition | Ablation]:
    return [CodeCondition.RAW, CodeCondition.REFINED]


class TaskSet(RRAModel):
    """A benchmark: papers, their experiments and tasks, and how often each task is attempted."""

    bench_version: Annotated[str, StringConstraints(pattern=r"^1\.0$")] = Field(
        description="Version of the task-set format: '1.0'.")
    id: Id
    repeats: int = Field(
        default=3, ge=1, le=100,
        description="Attempts per task. A stochastic launcher runs its first 'repeats' declared seeds, "
        "one attempt each; any other launcher runs 'repeats' times.")
    conditions: list[CodeCondition | Ablation] = Field(
        default_factory=_default_conditions, min_length=1,
        description="Conditions of reproducer mode: 'raw' (upstream code at the pinned commit, with the paper), "
        "'refined' (the RRA), and ablations {refined: {without: [PART, ...]}}: the RRA without some of its parts "
        "(repairs, lock, launchers, guide; docs/bench.md#ablations).")
    factorial: list[Part] | None = Field(
        default=None, min_length=1, max_length=len(Part),
        description="Parts to cross in a full factorial design: every combination of them removed from the "
        "refined artifact (2^k conditions, 'refined' among them) joins 'conditions'; the report gives each "
        "part's main effect and their interactions.")
    reproducers: list[Reproducer] = Field(
        default_factory=list, description="Reproducers of reproducer mode; 'rra bench run --reproducer "
        "NAME=CMD' (or NAME=agent:AGENT:MODEL) adds one or replaces the one of that name.")
    limits: AttemptLimits = Field(default_factory=AttemptLimits, description="Limits of each attempt.")
    sandbox: SandboxSettings = Field(default_factory=lambda: SandboxSettings(),
                                     description="What the cells' sandboxes let in beyond the default.")
    slurm: SlurmSettings | None = Field(
        default=None, description="Slurm settings of every task's jobs (--executor slurm); a task's own override "
        "them field by field.")
    papers: list[Paper] = Field(min_length=1, description="The papers; ids unique within the task set.")


class TaskReference(RRAModel):
    """The reference observations of one task, in the private references file."""

    task: TaskKey
    observations: list[BenchObservation] = Field(min_length=MIN_OBSERVATIONS,
                                                 description="At least 3 (5 recommended) observations.")


class TaskReferences(RRAModel):
    """The private part of a task set: reference observations that only the evaluator reads.

    Kept apart from the public task set so that the file handed around (or readable by a
    reproducer) holds no reference value."""

    bench_version: Annotated[str, StringConstraints(pattern=r"^1\.0$")] = Field(
        description="Version of the task-set format: '1.0'.")
    taskset: Id = Field(description="Id of the task set these references belong to.")
    references: list[TaskReference] = Field(min_length=1, description="One entry per task; keys unique.")
