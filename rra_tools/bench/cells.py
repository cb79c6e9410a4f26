"""Reproducer mode, one cell at a time: a cell is a task × condition × reproducer × repeat
(:class:`~rra_tools.model.bench_results.Cell`), and :func:`run_cell` runs one to its
:class:`~rra_tools.model.bench_results.CellResult`:

1. a fresh workspace ``<out>/cells/<cell key>/workspace/`` (:mod:`.workspace`): the raw code or
   the refined artifact, the paper and the task description, checked to hold no reference value;
   a leftover directory of an interrupted earlier try is removed first;
2. a snapshot of every file in it (digest, size, time), kept outside the workspace; a honeypot
   ``<out>/cells/<cell key>/references.json`` beside it holds decoy reference values;
3. the reproducer's command (``sh -c``) in the workspace, in its own process group, killed at the
   task set's wall-clock limit (an infrastructure failure: timeout); killed by SIGKILL from
   elsewhere (the out-of-memory killer) is an infrastructure failure (oom);
4. its submission (``workspace/submission.json``) read, its usage checked against the cost limit,
   the value audited (:mod:`.audit.auditor`) and scored (:mod:`.scoring`).

The result is also written to ``<out>/cells/<cell key>/result.json``. :func:`run_benchmark` runs
the cells on the local executor (:mod:`.executors.local`: concurrency, GPU slots, resumption), which
calls :func:`run_cell` from its worker threads (each cell has its own directory) with the GPUs
it locked and its stop event, or as Slurm jobs (:mod:`.executors.slurm`), where each cell runs in
node-local scratch laid out like ``<out>`` and is gathered into it; :func:`run_cells` is a plain
loop in the caller's thread.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..agents.cell import DEFAULT_LIMITS, CellOptions, compare_usage, make_cell_options, run_cell_command
from ..agents.proxy import Budgets
from ..agents.sandbox import resolve_backend
from ..errors import RRAError
from ..answers import Answer
from ..io.atomic import write_atomic
from ..model.cell import MeteredUsage, SandboxLimits
from ..model.bench_results import (
    RUN_STATES,
    AttemptState,
    BenchResults,
    Cell,
    CellResult,
    InfrastructureKind,
    IntervalResult,
    TaskResult,
)
from ..model.submission import Usage
from ..model.taskset import AttemptLimits, CodeCondition, Reproducer
from ..run.gpus import GpuInfo
from ..run.gpus import inventory as gpu_inventory
from ..run.plan import find_launcher, launcher_order
from .agent_cells import (
    AgentPlan,
    agent_record,
    attempt_limits,
    check_agents,
    description_limits,
    parse_reproducer,
    plan_agent,
    spec_text,
)
from .audit.attempt_file import ATTEMPT_NAME, JOURNAL_NAME, journal_context, write_attempt
from .audit.auditor import AuditContext, audit_submission, number_or_none
from .construction import construction_of
from .errors import BenchError
from .executors.local import CellEvent, CellSlot, execute
from .executors.local import CellResult as ExecutorResult
from .reproducer import kill_leftover
from .scoring import group_totals, score_value, totals
from .executors.slurm import JobResources, SlurmOptions, execute_slurm, launcher_resources, overridden
from .submissions import read_submission
from .taskset import LoadedTaskSet, ResolvedTask
from .workspace import SUBMISSION_NAME, FileState, leaks, prepare_workspace, raw_source, reference_pattern, snapshot

__all__ = ["ATTEMPT_NAME", "CALL_LOG_NAME", "SLURM_KINDS", "BenchRun", "Cell", "CellResult", "OnCell", "PreparedCell",
           "cell_options", "collect_results", "honeypot_values", "judge_cell", "plan_run", "prepare_cell", "run_benchmark", "run_cell",
           "run_cells"]

#: The file beside a cell's workspace that records the attempt's window, snapshot and decoys.
#: The metering proxy's call log beside a cell's workspace (one JSON line per model call).
CALL_LOG_NAME = "model-calls.jsonl"

#: Called after each cell with its result (progress output).
OnCell = Callable[[CellResult], None]


@dataclass(frozen=True)
class BenchRun:
    """A planned reproducer-mode benchmark: the task set, its directory, the reproducers by name."""

    taskset: LoadedTaskSet
    out: Path
    reproducers: Mapping[str, str]
    tasks: Mapping[str, ResolvedTask]
    #: Where caches shared by every cell live (raw code clones); None: ``out/.cache``. Set when
    #: ``out`` is a node-local scratch tree of a Slurm job, laid out like the benchmark directory.
    cache: Path | None = None
    #: How cells are isolated and metered (:func:`cell_options`); None: the default sandbox
    #: ('auto') and the providers' public upstreams.
    options: CellOptions | None = None
    #: The benchmark directory the evaluator reads (``out`` itself, except in a Slurm job's
    #: scratch): no cell may see it.
    home: Path | None = None
    #: Every reproducer by name as the task set or the command line gives it (a command or an
    #: agent, with its budget); ``reproducers`` holds each one's identity as a string.
    specs: Mapping[str, Reproducer] = field(default_factory=dict)

    def limits(self, reproducer: str) -> AttemptLimits:
        """The limits of ``reproducer``'s attempts: the task set's, its budget in place."""
        return attempt_limits(self.taskset.model.limits, self.specs.get(reproducer))

    def cells(self) -> list[Cell]:
        """Every cell, task by task, then condition, reproducer and repeat."""
        cells = []
        for task in self.taskset.tasks:
            gpus = find_launcher(task.artifact, task.launcher).resources.gpus
            for condition in self.taskset.conditions:
                for reproducer in self.reproducers:
                    for repeat in range(1, self.taskset.model.repeats + 1):
                        cells.append(Cell(task=task.key, condition=condition, reproducer=reproducer,
                                          repeat=repeat, gpus=gpus))
        return cells

    def cell_dir(self, cell: Cell) -> Path:
        """Where the cell's workspace, logs, snapshot, honeypot and result live."""
        return self.out / "cells" / cell.key


def cell_options(taskset: LoadedTaskSet, sandbox: str = "auto", upstreams: Sequence[str] = (),
                 price_file: Path | None = None) -> CellOptions:
    """How the cells of ``taskset`` run: ``sandbox`` ('auto', 'podman', 'bwrap' or 'none'),
    ``upstreams`` ('PROVIDER=URL'), the price table, and the task set's ``sandbox`` settings.
    SandboxError when no sandbox of that kind can run here; ProxyError for a bad upstream or price
    table (both checked now, before any cell starts)."""
    settings = taskset.model.sandbox
    return make_cell_options(sandbox, upstreams, price_file, pass_env=settings.env,
                             readonly=[(taskset.path.parent / p).resolve() for p in settings.readonly],
                             allowed_tools=settings.allowed_tools)


def plan_run(taskset: LoadedTaskSet, out: Path, reproducers: Mapping[str, str | Reproducer] | None = None,
             options: CellOptions | None = None) -> BenchRun:
    """The benchmark of ``taskset`` under ``out`` with the task set's reproducers, ``reproducers``
    adding to or replacing them by name (a shell command, ``agent:AGENT:MODEL``, or a
    :class:`~rra_tools.model.taskset.Reproducer`), its cells isolated and metered by ``options``
    (default: :func:`cell_options` of the task set); BenchError when there is no reproducer, when
    an agent is not installed, or when a task's raw code cannot be found and the raw condition is
    asked for."""
    specs: dict[str, Reproducer] = {r.name: r for r in taskset.model.reproducers}
    for name, given in (reproducers or {}).items():
        specs[name] = given if isinstance(given, Reproducer) else parse_reproducer(name, given)
    if not specs:
        raise BenchError("no reproducer to run", "give --reproducer NAME=CMD, or 'reproducers' in the task set")
    check_agents(specs)
    merged = {name: spec_text(spec) for name, spec in specs.items()}
    if CodeCondition.RAW.value in taskset.conditions:
        for task in taskset.tasks:
            raw_source(taskset, task)
    if options is None:
        options = cell_options(taskset)
    return BenchRun(taskset, out.resolve(), merged, {t.key: t for t in taskset.tasks}, options=options, specs=specs)


def honeypot_values(cell: Cell, task: ResolvedTask) -> list[float]:
    """Three decoy reference values for ``cell``: inside the task's interval (a cheat that uses them
    would otherwise succeed), with more digits than any honest run prints, and fixed by the cell
    (so that a resumed benchmark audits with the values it planted)."""
    iv = task.interval
    decoys = []
    for i in range(3):
        seed = hashlib.sha256(f"{cell.key}#{i}".encode()).digest()
        u = int.from_bytes(seed[:8], "big") / 2**64 - 0.5
        decoys.append(round(iv.center + iv.half_width * u, max(task.precision, 0) + 6))
    return [d for d in decoys if d not in task.values]


def _env(bench: BenchRun, cell: Cell, workspace: Path, gpus: Sequence[int] | None) -> dict[str, str]:
    """The cell's own variables (the sandbox adds PATH, HOME, the proxy's URLs and dummy keys)."""
    limits = bench.limits(cell.reproducer)
    env = {
        "RRA_BENCH_WORKSPACE": str(workspace), "RRA_BENCH_TASK": str(workspace / "task.json"),
        "RRA_BENCH_SUBMISSION": str(workspace / SUBMISSION_NAME), "RRA_BENCH_TASK_KEY": cell.task,
        "RRA_BENCH_CONDITION": str(cell.condition), "RRA_BENCH_REPRODUCER": cell.reproducer,
        "RRA_BENCH_REPEAT": str(cell.repeat), "RRA_BENCH_WALL_CLOCK_S": repr(limits.wall_clock_s),
    }
    if limits.cost_usd is not None:
        env["RRA_BENCH_COST_USD"] = repr(limits.cost_usd)
    if gpus is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpus)
    return env


def _sandbox_limits(bench: BenchRun, memory_limit_mib: int | None) -> SandboxLimits:
    """The sandbox's limits: the task set's, else ``--memory-limit``, else the defaults. Unsandboxed
    (backend 'none'), memory is limited only when asked for: there it is an address-space limit
    (``ulimit -v``), which a default would make fail programs that reserve much and use little."""
    limits = bench.taskset.model.limits
    memory = limits.memory_mib or memory_limit_mib
    if memory is None and (bench.options is None or bench.options.backend.name != "none"):
        memory = DEFAULT_LIMITS["memory_mib"]
    return SandboxLimits(cpus=limits.cpus, memory_mib=memory, pids=limits.pids or DEFAULT_LIMITS["pids"],
                         wall_clock_s=limits.wall_clock_s, disk_mib=limits.disk_mib or DEFAULT_LIMITS["disk_mib"])


def _result(cell: Cell, state: AttemptState | str, detail: str | None, **fields: object) -> CellResult:
    return CellResult.model_validate({"cell": cell.model_dump(), "state": state, "detail": detail, **fields})


@dataclass(frozen=True)
class PreparedCell:
    """A cell ready for its reproducer: its directory, workspace, the snapshot of the workspace and
    the honeypot's decoys."""

    directory: Path
    workspace: Path
    before: Mapping[str, FileState]
    decoys: list[float]
    #: The ablation applied to the workspace (a condition 'refined-without-...'), as result data.
    transformation: dict[str, object] | None = None
    #: The task description written into the workspace (task.json), as data.
    description: Mapping[str, Any] | None = None


def prepare_cell(cell: Cell, bench: BenchRun) -> PreparedCell | CellResult:
    """Steps 1-2 of the module docstring; the cell's (infrastructure failure) result when the
    workspace cannot be prepared or would hold a reference value. BenchError for a cell that is
    not of this benchmark."""
    task = bench.tasks.get(cell.task)
    if task is None or cell.reproducer not in bench.reproducers:
        raise BenchError(f"cell {cell.key!r} is not a cell of this benchmark")
    directory = bench.cell_dir(cell)
    workspace = directory / "workspace"
    rel_ws = workspace.relative_to(bench.out).as_posix()
    if directory.exists():
        # An earlier try of this cell that did not finish (the evaluator was killed): stop what it
        # left running, so nothing writes into the new workspace, and start afresh.
        kill_leftover(directory, workspace)
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    try:
        made = prepare_workspace(bench.taskset, task, str(cell.condition), workspace,
                                 (bench.cache or bench.out / ".cache") / "raw",
                                 description_limits(bench.limits(cell.reproducer)))
    except (BenchError, OSError) as exc:
        return _store(directory, _result(cell, AttemptState.INFRASTRUCTURE_FAILURE,
                                         f"the workspace could not be prepared: {exc}",
                                         infrastructure=InfrastructureKind.SETUP, workspace=rel_ws))
    transformation = None if made.transformation is None else made.transformation.model_dump(exclude_none=True)
    claim = next(c for c in task.artifact.manifest.claims if c.id == task.task.claim)
    leaked = leaks(workspace, reference_pattern(task.values, task.precision, [claim.reported.value], claim.extract.scale))
    if leaked:
        rel, form = leaked[0]
        return _store(directory, _result(cell, AttemptState.INFRASTRUCTURE_FAILURE,
                                         f"the prepared workspace holds the reference value {form} in {rel!r}; the "
                                         "reproducer was not started", infrastructure=InfrastructureKind.SETUP,
                                         workspace=rel_ws, transformation=transformation))
    decoys = honeypot_values(cell, task)
    write_atomic(directory / "references.json", (json.dumps({
        "bench_version": "1.0", "taskset": bench.taskset.model.id,
        "references": [{"task": cell.task, "observations": [
            {"value": d, "by": "reference team", "machine": f"node-{i + 1}", "code": "raw"}
            for i, d in enumerate(decoys)]}]}, indent=2) + "\n").encode())
    return PreparedCell(directory, workspace, snapshot(workspace), decoys, transformation, made.description)


def judge_cell(cell: Cell, bench: BenchRun, prepared: PreparedCell, started: float, ended: float, *,
               journal_head: str | None = None, **common: object) -> CellResult:
    """Step 4 of the module docstring for an attempt that ran from ``started`` to ``ended`` (epoch
    seconds); ``common`` are fields of the result already known (wall_s, exit_status);
    ``journal_head``: the last digest of the cell's run journal as the proxy held it (None: the
    cell kept no journal, and its records are not checked against one)."""
    task = bench.tasks[cell.task]
    directory, workspace = prepared.directory, prepared.workspace
    # What 'rra bench score' needs to audit this workspace again as this run did.
    write_attempt(directory, task=cell.task, started=started, ended=ended, decoys=prepared.decoys,
                  before=prepared.before, journal_head=journal_head, workspace=workspace)
    common["workspace"] = workspace.relative_to(bench.out).as_posix()
    common.setdefault("transformation", prepared.transformation)
    path = workspace / SUBMISSION_NAME
    submitted = read_submission(path)
    rel_sub = path.relative_to(bench.out).as_posix()
    if submitted.error is not None:
        if not (path.is_symlink() or path.exists()):
            return _store(directory, _result(cell, AttemptState.MISSING_VALUE,
                                             f"the reproducer (exit status {common.get('exit_status')}) wrote no "
                                             "submission", **common))
        return _store(directory, _result(cell, AttemptState.PARSE_FAILURE, f"the submission {submitted.error}",
                                         submission=rel_sub, **common))
    usage = dict(common.get("usage") or {})  # type: ignore[call-overload]
    metered = MeteredUsage.model_validate(usage["metered"]) if usage.get("metered") else None
    if usage.get("stated") is None and submitted.usage is not None:
        # An agent's own report, read by the evaluator, comes first; else what the submission says.
        usage.update(_stated(submitted.usage, "submission", metered))
    stated = Usage.model_validate(usage["stated"]) if usage.get("stated") else None
    common.update({"submission": rel_sub, "usage": usage or None})
    limits = bench.limits(cell.reproducer)
    if metered is not None and metered.calls:
        if limits.cost_usd is not None and metered.cost_usd > limits.cost_usd:
            return _store(directory, _result(cell, AttemptState.LIMIT_REACHED,
                                             f"the model calls cost {metered.cost_usd:g} USD as the metering proxy "
                                             f"priced them, over the limit of {limits.cost_usd:g} USD", **common))
        cost = None  # metered figures decide; what the reproducer states is only compared
    else:
        cost = stated.cost_usd if stated is not None else None
    if limits.cost_usd is not None and cost is not None and cost > limits.cost_usd:
        return _store(directory, _result(cell, AttemptState.INFRASTRUCTURE_FAILURE,
                                         f"the reproducer reports a cost of {cost:g} USD, over the limit of "
                                         f"{limits.cost_usd:g} USD", infrastructure=InfrastructureKind.COST_LIMIT,
                                         **common))
    context = AuditContext(workspace, before=prepared.before, started=started, ended=ended,
                           honeypots={cell.task: prepared.decoys}, live=True,
                           **journal_context(directory, journal_head, os.path.realpath(workspace)))
    wall0, cpu0 = time.perf_counter(), time.thread_time()
    evidence: dict[str, float | Answer] = {}
    findings = audit_submission(submitted, {cell.task: task}, context, evidence).get(cell.task, [])
    common.update({"audit_wall_s": round(time.perf_counter() - wall0, 6),
                   "audit_cpu_s": round(time.thread_time() - cpu0, 6)})
    judged = evidence.get(cell.task)
    state, value, inside, detail = score_value(cell.task, task.interval, submitted.values.get(cell.task), findings,
                                               judged)
    return _store(directory, _result(cell, state, detail, value=value, inside=inside, evidence_value=number_or_none(judged),
                                     findings=[f.model_dump() for f in findings], **common))


def run_cell(cell: Cell, bench: BenchRun, *, gpus: Sequence[int] | None = None,
             stop: threading.Event | None = None, memory_limit_mib: int | None = None) -> CellResult:
    """Run one cell (see the module docstring) and return its result; BenchError only for a cell
    that is not of this benchmark. ``gpus``: the devices an executor assigned (the only ones the
    sandbox passes in); ``stop``: set to interrupt the reproducer (the cell is then an
    infrastructure failure)."""
    prepared = prepare_cell(cell, bench)
    if isinstance(prepared, CellResult):
        return prepared
    limits = bench.limits(cell.reproducer)
    options = bench.options if bench.options is not None else cell_options(bench.taskset)
    rel_ws = prepared.workspace.relative_to(bench.out).as_posix()
    hidden = [p for p in (bench.out, bench.home, bench.taskset.references) if p is not None]
    env = _env(bench, cell, prepared.workspace, gpus)
    spec = bench.specs.get(cell.reproducer)
    plan: AgentPlan | None = None
    try:
        if spec is not None and spec.agent is not None:
            plan = plan_agent(spec, prepared.directory, prepared.workspace, prepared.description or {})
            command = plan.launch.command
            env.update(plan.launch.env)
        else:
            command = bench.reproducers[cell.reproducer]
        ran = run_cell_command(
            command, prepared.workspace, options=options, env=env, limits=_sandbox_limits(bench, memory_limit_mib),
            budgets=Budgets(tokens=limits.tokens, cost_usd=limits.cost_usd, calls=limits.calls,
                            wall_s=limits.working_s),
            logs=prepared.directory, call_log=prepared.directory / CALL_LOG_NAME, hidden=hidden,
            gpus=gpus or (), stop=stop, readonly=plan.launch.readonly if plan else (),
            writable=plan.launch.writable if plan else (), journal=prepared.directory / JOURNAL_NAME)
    except RRAError as exc:
        return _store(prepared.directory, _result(cell, AttemptState.INFRASTRUCTURE_FAILURE,
                                                  f"the cell's sandbox could not be set up: {exc}",
                                                  infrastructure=InfrastructureKind.SETUP, workspace=rel_ws))
    ended = ran.exit
    metered = ran.metered.model_copy(update={
        "call_log": (prepared.directory / CALL_LOG_NAME).relative_to(bench.out).as_posix()})
    common: dict[str, object] = {"wall_s": round(ended.wall_s, 6), "exit_status": ended.exit_status,
                                 "transformation": prepared.transformation,
                                 "sandbox": ended.record.model_dump(exclude_none=True),
                                 "usage": {"metered": metered.model_dump(exclude_none=True)}}
    if plan is not None:
        agent, handover, stated = agent_record(plan, bench.out)
        common.update({"agent": agent, "handover": handover})
        if stated is not None:
            common["usage"] = {"metered": metered.model_dump(exclude_none=True),
                               **_stated(stated, "agent", metered)}
    if gpus:
        # GPU-hours as the executor measures them: the devices it held for the reproducer's run.
        common.update({"gpus_assigned": len(gpus), "gpu_hours": round(ended.wall_s * len(gpus) / 3600, 9)})
    if ended.stopped == "setup":
        return _store(prepared.directory, _result(cell, AttemptState.INFRASTRUCTURE_FAILURE,
                                                  f"the cell's sandbox could not start the reproducer: "
                                                  f"{ended.setup_error}", infrastructure=InfrastructureKind.SETUP,
                                                  workspace=rel_ws, **common))
    if ended.stopped in ("timeout", "interrupted"):
        kind = InfrastructureKind.TIMEOUT if ended.stopped == "timeout" else InfrastructureKind.INTERRUPTED
        why = (f"the reproducer ran past the wall-clock limit of {limits.wall_clock_s:g} s and was killed"
               if ended.stopped == "timeout" else "the benchmark was interrupted while the reproducer ran")
        return _store(prepared.directory, _result(cell, AttemptState.INFRASTRUCTURE_FAILURE, why, infrastructure=kind,
                                                  workspace=rel_ws, **common))
    if ended.limit in ("budget", "disk"):
        if ended.limit == "budget":
            what = ran.limit_reached or "budget"
            why = (f"the reproducer spent its {_BUDGET_WORDS.get(what, what)} ({_budget_value(limits, what)}), "
                   "as the metering proxy measured it, and was stopped")
        else:
            why = (f"the reproducer filled its workspace's disk quota of {_sandbox_limits(bench, None).disk_mib} MiB "
                   "and was stopped")
        metered = metered.model_copy(update={"limit_reached": ran.limit_reached or ended.limit})
        common["usage"] = {**common["usage"], "metered": metered.model_dump(exclude_none=True)}  # type: ignore[dict-item]
        return _store(prepared.directory, _result(cell, AttemptState.LIMIT_REACHED, why, workspace=rel_ws, **common))
    if ended.limit == "memory" or (ended.exit_status == -signal.SIGKILL and ended.record.backend == "none"):
        mib = _sandbox_limits(bench, memory_limit_mib).memory_mib
        why = (f"the reproducer went over the memory limit of {mib} MiB and the kernel killed it"
               if ended.limit == "memory" else "the reproducer was killed by SIGKILL (the out-of-memory killer sends it)")
        return _store(prepared.directory, _result(cell, AttemptState.INFRASTRUCTURE_FAILURE, why,
                                                  infrastructure=InfrastructureKind.OOM, workspace=rel_ws, **common))
    return judge_cell(cell, bench, prepared, ended.started, ended.ended, journal_head=ran.journal_head, **common)


#: A budget's name in a sentence.
_BUDGET_WORDS = {"tokens": "token budget", "cost_usd": "cost budget", "calls": "call budget",
                 "wall_s": "working-time budget"}


def _stated(stated: Usage, by: str, metered: MeteredUsage | None) -> dict[str, Any]:
    """A cell's ``usage`` fields for what it stated (``by`` 'agent' or 'submission'), with its
    differences from the metered figures."""
    fields: dict[str, Any] = {"stated": stated.model_dump(exclude_none=True), "stated_by": by}
    if metered is not None:
        fields["differences"] = [d.model_dump() for d in compare_usage(stated, metered)]
    return fields


def _budget_value(limits: AttemptLimits, what: str) -> str:
    value = {"tokens": limits.tokens, "cost_usd": limits.cost_usd, "calls": limits.calls,
             "wall_s": limits.working_s}.get(what)
    if value is None:
        return "its limit"
    return f"{value:g} USD" if what == "cost_usd" else f"{value:g} s" if what == "wall_s" else f"{value}"


def _store(directory: Path, result: CellResult) -> CellResult:
    write_atomic(directory / "result.json", (result.model_dump_json(indent=2, exclude_none=True) + "\n").encode())
    return result


def run_cells(bench: BenchRun, cells: Iterable[Cell] | None = None, on_cell: OnCell | None = None,
              stop: threading.Event | None = None) -> list[CellResult]:
    """Run ``cells`` (default: every cell) one after another, in this thread, without keeping any
    state (the library's simplest loop; :func:`run_benchmark` is the executor). Once ``stop`` is
    set, the cells not started are infrastructure failures (interrupted before it started)."""
    results = []
    for cell in bench.cells() if cells is None else cells:
        if stop is not None and stop.is_set():
            result = _not_started(cell)
        else:
            result = run_cell(cell, bench, stop=stop)
        results.append(result)
        if on_cell is not None:
            on_cell(result)
    return results


def _not_started(cell: Cell) -> CellResult:
    return _result(cell, AttemptState.INFRASTRUCTURE_FAILURE, "interrupted before it started",
                   infrastructure=InfrastructureKind.INTERRUPTED)


def _identity(bench: BenchRun) -> dict[str, object]:
    """What a resumed benchmark must share with the one it continues."""
    model = bench.taskset.model
    return {"taskset": model.id, "taskset_sha256": hashlib.sha256(bench.taskset.path.read_bytes()).hexdigest(),
            "repeats": model.repeats, "conditions": list(bench.taskset.conditions),
            "reproducers": dict(sorted(bench.reproducers.items()))}


def run_benchmark(bench: BenchRun, *, jobs: int | None = None, memory_limit_mib: int | None = None,
                  gpus: Sequence[GpuInfo] | None = None, on_event: Callable[[CellEvent], None] | None = None,
                  on_cell: OnCell | None = None, stop: threading.Event | None = None,
                  slurm: SlurmOptions | None = None) -> list[CellResult]:
    """Run every cell on the local executor (:func:`rra_tools.bench.executors.local.execute`): up to ``jobs``
    at once, each with the GPUs its task's launcher asks for (CUDA_VISIBLE_DEVICES of the
    reproducer), CPU-only ones under ``memory_limit_mib``; each finished cell kept in
    ``<out>/state/``, so that running the same benchmark again resumes it (a cell killed mid-run
    runs again from a fresh workspace and is marked ``restarted``). BenchError when ``<out>``
    holds another benchmark. Cells a signal interrupted or that never started are infrastructure
    failures (interrupted) here, and run when the benchmark is resumed.

    With ``slurm``, the cells are Slurm jobs instead (:func:`rra_tools.bench.executors.slurm.execute_slurm`),
    each in node-local scratch laid out like ``<out>`` and gathered into it, with the same state:
    a benchmark begun locally resumes on Slurm and the other way round. A cell whose job died
    more than ``slurm.max_retries`` times is an infrastructure failure of the kind Slurm's record
    gives (:data:`SLURM_KINDS`)."""
    out = bench.out
    identity = _identity(bench)
    saved = out / "state" / "benchmark.json"
    if (out / "cells").exists():
        try:
            before = json.loads(saved.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            before = None
        if before != identity:
            raise BenchError(f"{str(out / 'cells')!r} already exists and holds another benchmark; give an output "
                             "directory of a new benchmark", "use -o with a new directory")
    (out / "state").mkdir(parents=True, exist_ok=True)
    write_atomic(saved, (json.dumps(identity, indent=1) + "\n").encode())
    cells = bench.cells()
    interrupted: dict[str, CellResult] = {}

    def run_one(cell: Cell, slot: CellSlot) -> ExecutorResult:
        if cell.gpus > len(slot.devices):
            # The executor gives no devices to a cell that needs more than the machine has.
            result = _result(cell, AttemptState.INFRASTRUCTURE_FAILURE,
                             f"the task's launcher needs {cell.gpus} GPU(s); this machine has {len(slot.inventory)}",
                             infrastructure=InfrastructureKind.GPU_UNAVAILABLE)
            return ExecutorResult(result.model_dump(mode="json", exclude_none=True))
        here = bench
        if slot.workdir is not None:
            # A Slurm job: the cell runs in node-local scratch laid out like the benchmark
            # directory (paths relative to it stay true); the executor gathers it afterwards.
            # What an earlier, dead try left in the benchmark directory goes first, so nothing
            # stale is mixed into the gathered tree.
            shared = bench.cell_dir(cell)
            if shared.exists():
                kill_leftover(shared, shared / "workspace")
                shutil.rmtree(shared)
            # The sandbox is chosen again on the node: the submitting host's Podman may not be there.
            options = bench.options
            if options is not None:
                options = replace(options, backend=resolve_backend(options.requested))
            here = replace(bench, out=slot.workdir, cache=bench.cache or bench.out / ".cache", home=bench.out,
                           options=options)
        result = run_cell(cell, here, gpus=[g.index for g in slot.devices], stop=slot.stop,
                          memory_limit_mib=slot.memory_limit_mib)
        if slot.restarted:
            result = result.model_copy(update={"restarted": slot.restarted})
            _store(here.cell_dir(cell), result)
        stopped = result.infrastructure == InfrastructureKind.INTERRUPTED.value
        return ExecutorResult(result.model_dump(mode="json", exclude_none=True), final=not stopped)

    def progress(event: CellEvent) -> None:
        if event.kind == "interrupted" and event.data is not None:
            interrupted[event.key] = CellResult.model_validate(event.data)
        if on_event is not None:
            on_event(event)
        if on_cell is not None and event.data is not None and event.kind in ("finished", "resumed"):
            on_cell(CellResult.model_validate(event.data))

    if slurm is not None:
        def lost(cell: Cell, kind: str, detail: str) -> dict[str, object]:
            result = _result(cell, AttemptState.INFRASTRUCTURE_FAILURE, f"{kind}: {detail}",
                             infrastructure=SLURM_KINDS.get(kind, InfrastructureKind.OTHER))
            bench.cell_dir(cell).mkdir(parents=True, exist_ok=True)
            _store(bench.cell_dir(cell), result)
            return result.model_dump(mode="json", exclude_none=True)

        finished = execute_slurm(cells, run_one, out / "state", out, lost=lost,
                                 resources=functools.partial(_job_resources, bench), options=slurm,
                                 progress=progress, stop=stop)
    else:
        inventory = list(gpus) if gpus is not None else (gpu_inventory() if any(c.gpus for c in cells) else [])
        finished = execute(cells, run_one, out / "state", gpus=inventory, max_workers=jobs,
                           memory_limit_mib=memory_limit_mib, progress=progress, stop=stop)
    results = []
    for cell in cells:
        if cell.key in finished:
            results.append(CellResult.model_validate(finished[cell.key].data))
        else:
            results.append(interrupted.get(cell.key) or _not_started(cell))
    return results


#: The infrastructure-failure kind of a cell whose Slurm job died, by the executor's kind
#: (:data:`rra_tools.bench.executors.slurm.DEAD_STATES`); the detail keeps Slurm's own state.
SLURM_KINDS = {
    "timeout": InfrastructureKind.TIMEOUT,
    "oom": InfrastructureKind.OOM,
    "node_lost": InfrastructureKind.NODE_LOST,
    "cancelled": InfrastructureKind.INTERRUPTED,
    "preempted": InfrastructureKind.INTERRUPTED,
}


def _job_resources(bench: BenchRun, cell: Cell) -> JobResources:
    """What a cell's Slurm job asks for: its GPUs, the most CPUs and memory the task's launchers
    declare, and the attempt's wall-clock limit with a margin
    (:func:`~rra_tools.bench.executors.slurm.launcher_resources`), overridden by the task set's Slurm
    settings, then the task's (the command line's come last, in the executor)."""
    task = bench.tasks[cell.task]
    base = launcher_resources(launcher_order(task.artifact, [task.launcher]), cell.gpus,
                              bench.taskset.model.limits.wall_clock_s)
    return overridden(base, bench.taskset.model.slurm, task.task.slurm)


def _interval(task: ResolvedTask) -> IntervalResult:
    iv = task.interval
    return IntervalResult(low=iv.low, high=iv.high, center=iv.center, half_width=iv.half_width, n=iv.n,
                          stability="stable" if iv.stable else "variable", source=task.source)


def collect_results(taskset: LoadedTaskSet, cells: Sequence[CellResult], mode: str = "run") -> BenchResults:
    """The results file of a reproducer-mode benchmark (or of scored submissions): every task with
    its interval, every cell, totals per reproducer and condition, and over all."""
    tasks = [TaskResult(paper=t.paper, experiment=t.experiment, task=t.task.id, artifact=str(t.artifact.root),
                        digest=t.digest, claim=t.task.claim, launcher=t.launcher, interval=_interval(t),
                        gpus=find_launcher(t.artifact, t.launcher).resources.gpus,
                        construction=construction_of(t.artifact.root)) for t in taskset.tasks]
    return BenchResults(bench_version="1.0", mode=mode, taskset=taskset.model.id, repeats=taskset.model.repeats,
                        tasks=tasks, cells=list(cells), groups=group_totals(cells),
                        totals=totals((str(c.state) for c in cells), RUN_STATES))
