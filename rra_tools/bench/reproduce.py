"""Re-execution mode: run each task's launcher in a fresh copy of its artifact and score every
attempt against the task's acceptance interval.

Each attempt copies the artifact (without its run records) into
``<out>/work/<paper>/<experiment>/<task>/attempt-<n>/``, plans the claim's launcher with its
dependencies (:mod:`rra_tools.run.plan`), runs the plans with :func:`rra_tools.run.run_plans`
exactly as ``rra run`` does, and reads the claim's value from the new run records the way
``rra results`` does (:func:`rra_tools.run.results.claim_values`). A stochastic launcher runs
one declared seed per attempt (the first ``repeats`` seeds, in order, cycling when fewer are
declared); any other launcher runs ``repeats`` times.

Attempts are cells of the local executor (:mod:`.executors.local`): they run side by side, each with
the GPUs its launchers need, and a killed benchmark resumes where it stopped.

Every attempt ends in one state of :class:`~rra_tools.model.bench_results.AttemptState` and
counts in the denominator; nothing is dropped. A run that could not be set up, timed out, was
interrupted or was killed with SIGKILL (the kernel's out-of-memory killer sends it) is an
infrastructure failure; any other failed run is a program failure.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shlex
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents.cell import DEFAULT_LIMITS, CellOptions, run_cell_command
from ..answers import AnswerInterval, answer_text
from ..agents.proxy import Budgets
from ..agents.sandbox import resolve_backend
from ..errors import RRAError
from ..io.artifact import Artifact, load_artifact
from ..io.atomic import write_atomic
from ..model.bench_results import (
    REPRODUCE_STATES,
    Attempt,
    AttemptState,
    BenchResults,
    IntervalResult,
    TaskResult,
)
from ..run.errors import ArtifactError, PlanError
from ..model.cell import SandboxLimits
from ..run.gpus import INVENTORY_ENV, GpuInfo
from ..run.gpus import inventory as gpu_inventory
from ..run.local import MEMORY_LIMIT_NOTE
from ..run.orchestrate import run_plans
from ..run.plan import RunPlan, find_launcher, launcher_order
from ..run.results import claim_answers, claim_values, latest_successful
from .attempt_cell import Outcome, outcome_of, plans_of, read_outcome
from .construction import construction_of
from .errors import BenchError
from .executors.local import CellEvent, CellResult, CellSlot, execute
from .scoring import totals as count_states
from .executors.slurm import JobResources, SlurmOptions, execute_slurm, launcher_resources, overridden
from .taskset import LoadedTaskSet, ResolvedTask

__all__ = ["AttemptCell", "reproduce"]

#: Seconds a sandboxed attempt gets beyond its launchers' timeouts (copying, planning, records).
CELL_MARGIN_S = 60.0

#: Called after each attempt with the task and the scored attempt (for progress output).
OnAttempt = Callable[[ResolvedTask, Attempt], None]


def _seed_for(task: ResolvedTask, number: int) -> int | None:
    launcher = find_launcher(task.artifact, task.launcher)
    if not launcher.stochastic:
        return None
    seeds = list(launcher.seeds)
    return seeds[(number - 1) % len(seeds)] if seeds else number - 1


def _failure(outcome: Outcome, workspace: Path, root: Path,
             task: ResolvedTask) -> tuple[AttemptState, str, str | None] | None:
    """The state, detail and record of the first run that did not succeed; None when all did."""
    for launcher, error in outcome.refused:
        return AttemptState.INFRASTRUCTURE_FAILURE, f"{launcher}: {error}", None
    for rel, successful in outcome.results:
        if successful:
            continue
        directory = workspace / rel
        try:
            record: dict[str, Any] = json.loads((directory / "record.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return AttemptState.PROGRAM_FAILURE, f"the run record {rel}/record.json cannot be read", None
        where = (directory / "record.json").relative_to(root).as_posix()
        messages = record.get("messages") or []
        said = f": {messages[0]}" if messages else ""
        status = record["status"]
        detail = f"{record['launcher']}: {status}{said}"
        if status in ("timeout", "interrupted") or record.get("killed_by") == int(signal.SIGKILL):
            return AttemptState.INFRASTRUCTURE_FAILURE, detail, where
        if _out_of_memory(directory, record):
            return AttemptState.INFRASTRUCTURE_FAILURE, f"{record['launcher']}: out of memory{said}", where
        if status == "completed":
            detail = f"{record['launcher']}: exit status {record.get('exit_status')}"
        metrics = record.get("metrics") or {}
        if (record["launcher"] == task.launcher and record.get("exit_status") == 0
                and task.task.claim not in metrics):
            # The program ended well but left no value of the claim (the runner marks such a
            # run failed): the number is missing, which is not the same as a crash.
            return AttemptState.MISSING_VALUE, detail, where
        return AttemptState.PROGRAM_FAILURE, detail, where
    for launcher, reason, interrupted in outcome.skipped:
        state = AttemptState.INFRASTRUCTURE_FAILURE if interrupted else AttemptState.PROGRAM_FAILURE
        return state, f"{launcher}: {reason}", None
    return None


@dataclass(frozen=True)
class AttemptCell:
    """One attempt of one task: a cell of the executor."""

    key: str
    gpus: int
    task: ResolvedTask
    number: int


def _cells(taskset: LoadedTaskSet) -> list[AttemptCell]:
    cells: list[AttemptCell] = []
    for task in taskset.tasks:
        # The attempt's runs go one after another, so it needs as many devices as its hungriest launcher.
        need = max((launcher.resources.gpus for launcher in launcher_order(task.artifact, [task.launcher])),
                   default=0)
        cells.extend(AttemptCell(f"{task.key}/attempt-{n}", need, task, n)
                     for n in range(1, taskset.model.repeats + 1))
    return cells


def _job_resources(taskset: LoadedTaskSet, cell: AttemptCell) -> JobResources:
    """What an attempt's Slurm job asks for: its GPUs, the most CPUs and memory its launchers
    declare, and the sum of their time limits with a margin for copying and setup
    (:func:`~rra_tools.bench.executors.slurm.launcher_resources`), overridden by the task set's Slurm
    settings, then the task's (the command line's come last, in the executor)."""
    order = launcher_order(cell.task.artifact, [cell.task.launcher])
    base = launcher_resources(order, cell.gpus, sum(launcher.resources.timeout_s for launcher in order))
    return overridden(base, taskset.model.slurm, cell.task.task.slurm)


def _out_of_memory(result_dir: Path, record: dict[str, Any]) -> bool:
    """A failed run under a memory limit whose error output says it ran out of memory."""
    if not any(str(m).startswith(MEMORY_LIMIT_NOTE) for m in record.get("messages") or []):
        return False
    try:
        with open(result_dir / "stderr.log", "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 65536))
            tail = handle.read()
    except OSError:
        return False
    return any(sign in tail for sign in _OOM_SIGNS)


#: What a program says when an allocation fails under RLIMIT_AS (Python, C, C++, numpy).
_OOM_SIGNS = (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc", b"Unable to allocate")


def _keep_interrupted(workspace: Path) -> None:
    """Move the workspace of an attempt that was killed mid-run aside (its evidence is kept)."""
    k = 1
    while (aside := workspace.with_name(f"{workspace.name}.interrupted-{k}")).exists():
        k += 1
    workspace.rename(aside)


def _in_cell(cell: AttemptCell, workspace: Path, seed: int | None, plans: Sequence[RunPlan], slot: CellSlot,
             options: CellOptions) -> Outcome | Attempt:
    """Run the attempt's plans in a cell's sandbox (:mod:`.attempt_cell`): the outcome the inner
    run wrote, or the attempt's result when the cell itself failed or was stopped."""
    number = cell.number
    limits = SandboxLimits(
        wall_clock_s=sum(p.launcher.resources.timeout_s for p in plans) + CELL_MARGIN_S,
        memory_mib=slot.memory_limit_mib or DEFAULT_LIMITS["memory_mib"], pids=DEFAULT_LIMITS["pids"])
    logs = workspace.with_name(f"{workspace.name}.cell")
    shutil.rmtree(logs, ignore_errors=True)
    env = {}
    if slot.devices:
        # The leased devices are the only ones inside, numbered from 0 as CUDA numbers them.
        env[INVENTORY_ENV] = json.dumps([{**g.as_dict(), "index": i} for i, g in enumerate(slot.devices)])
    command = shlex.join([sys.executable, "-m", "rra_tools.bench.attempt_cell", str(workspace), cell.task.launcher,
                          "-" if seed is None else str(seed),
                          "-" if slot.memory_limit_mib is None else str(slot.memory_limit_mib)])
    try:
        ran = run_cell_command(command, workspace, options=options, env=env, limits=limits, budgets=Budgets(),
                               logs=logs, call_log=logs / "model-calls.jsonl", gpus=[g.index for g in slot.devices],
                               stop=slot.stop)
    except RRAError as exc:
        return Attempt(number=number, seed=seed, state=AttemptState.INFRASTRUCTURE_FAILURE,
                       detail=f"the attempt's sandbox could not be set up: {exc}")
    ended = ran.exit
    if ended.stopped is not None:
        why = {"setup": f"the attempt's sandbox could not start it: {ended.setup_error}",
               "timeout": f"the attempt ran past {limits.wall_clock_s:g} s (its launchers' timeouts) and was killed",
               "interrupted": "the benchmark was interrupted while the attempt ran",
               "limit": f"the attempt's sandbox stopped it ({ended.limit})"}[ended.stopped]
        return Attempt(number=number, seed=seed, state=AttemptState.INFRASTRUCTURE_FAILURE, detail=why)
    outcome = read_outcome(workspace)
    if outcome is None:
        return Attempt(number=number, seed=seed, state=AttemptState.INFRASTRUCTURE_FAILURE,
                       detail=f"the attempt's runner in the sandbox ended (exit status {ended.exit_status}) without "
                       f"saying what ran; its output is in {logs}")
    return outcome


def _attempt(cell: AttemptCell, out: Path, slot: CellSlot, options: CellOptions | None = None) -> tuple[Attempt, bool]:
    """Run and score one attempt; also whether the stop event interrupted it."""
    task, number = cell.task, cell.number
    seed = _seed_for(task, number)
    rel = Path("work", task.paper, task.experiment, task.task.id, f"attempt-{number}")
    if (out / rel).exists():
        _keep_interrupted(out / rel)
    # In a Slurm job the attempt runs in node-local scratch laid out like ``out``; the executor
    # gathers it into ``out`` afterwards, so paths relative to the root stay true.
    root = slot.workdir or out
    workspace = root / rel
    if workspace.exists():
        _keep_interrupted(workspace)
    runs = task.artifact.runs_dir.relative_to(task.artifact.root).parts[0]
    # The copy leaves the artifact's earlier run records behind: only this attempt's count.
    shutil.copytree(task.artifact.root, workspace, symlinks=True,
                    ignore=shutil.ignore_patterns(runs, "__pycache__"))
    try:
        plans = plans_of(workspace, task.launcher, seed)
    except (PlanError, ArtifactError) as exc:
        return Attempt(number=number, seed=seed, state=AttemptState.PROGRAM_FAILURE,
                       detail=f"cannot plan the run: {exc}"), False
    if options is not None and options.backend.name != "none":
        ran = _in_cell(cell, workspace, seed, plans, slot, options)
        if isinstance(ran, Attempt):
            return ran, slot.stop.is_set()
        outcome = ran
    else:
        outcome = outcome_of(run_plans(plans, slot.run_options(), handle_signals=False), workspace)
    stopped = slot.stop.is_set() and outcome.interrupted
    failed = _failure(outcome, workspace, root, task)
    if failed is not None:
        state, detail, record = failed
        return Attempt(number=number, seed=seed, state=state, detail=detail, record=record), stopped
    copy = load_artifact(workspace)
    best, _ = latest_successful(copy)
    if task.kind != "number":
        return _answer_attempt(copy, task, best, number, seed, workspace, root), False
    found = [(s, v, w) for s, _, v, w in claim_values(task.task.claim, task.launcher, best) if s == seed]
    if not found:
        return Attempt(number=number, seed=seed, state=AttemptState.MISSING_VALUE,
                       detail=f"no run record of {task.launcher!r} has a value of claim {task.task.claim!r}"), False
    _, value, where = found[0]
    record = (workspace / where).relative_to(root).as_posix()
    if task.interval.contains(value):
        return Attempt(number=number, seed=seed, state=AttemptState.SUCCESS, value=value, record=record), False
    return Attempt(number=number, seed=seed, state=AttemptState.OUTSIDE_INTERVAL, value=value, record=record,
                   detail=f"{value!r} is outside [{task.interval.low!r}, {task.interval.high!r}]"), False


def _answer_attempt(copy: Artifact, task: ResolvedTask, best: Mapping[Any, tuple[Mapping[str, Any], str]],
                    number: int, seed: int | None, workspace: Path, root: Path) -> Attempt:
    """An attempt of a task whose claim is a string, set or list: the answer the run's output
    gives (records keep numbers only), matched with the task's expected answer."""
    claim = next(c for c in copy.manifest.claims if c.id == task.task.claim)
    answers, problems = claim_answers(copy, claim, best)
    found = [(a, w) for s, _, a, w in answers if s == seed]
    if not found:
        why = f" ({problems[0]})" if problems else ""
        return Attempt(number=number, seed=seed, state=AttemptState.MISSING_VALUE,
                       detail=f"no run record of {task.launcher!r} has an output holding the answer of claim "
                       f"{task.task.claim!r}{why}")
    answer, where = found[0]
    record = (workspace / where).relative_to(root).as_posix()
    mismatch = task.interval.mismatch(answer) if isinstance(task.interval, AnswerInterval) else "not an answer task"
    if mismatch is None:
        return Attempt(number=number, seed=seed, state=AttemptState.SUCCESS, record=record)
    return Attempt(number=number, seed=seed, state=AttemptState.OUTSIDE_INTERVAL, record=record,
                   detail=f"the answer {answer_text(answer)} does not match: {mismatch}")


def _identity(taskset: LoadedTaskSet) -> dict[str, Any]:
    """What a resumed benchmark must share with the one it continues."""
    digest = hashlib.sha256(taskset.path.read_bytes()).hexdigest()
    return {"taskset": taskset.model.id, "taskset_sha256": digest, "repeats": taskset.model.repeats}


def _check_resumable(out: Path, identity: dict[str, Any]) -> None:
    work, saved = out / "work", out / "state" / "benchmark.json"
    if not work.exists():
        return
    try:
        before = json.loads(saved.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        before = None
    if before != identity:
        raise BenchError(f"{str(work)!r} already exists and holds another benchmark (or one made before "
                         f"benchmarks could be resumed); give an output directory of a new benchmark",
                         "use -o with a new directory")


def reproduce(taskset: LoadedTaskSet, out: Path, on_attempt: OnAttempt | None = None, *,
              jobs: int | None = None, memory_limit_mib: int | None = None,
              gpus: Sequence[GpuInfo] | None = None, on_event: Callable[[CellEvent], None] | None = None,
              stop: threading.Event | None = None, slurm: SlurmOptions | None = None,
              options: CellOptions | None = None) -> BenchResults:
    """Run every task ``repeats`` times in fresh copies under ``out`` and score each attempt.

    Attempts are cells of :func:`rra_tools.bench.executors.local.execute`: up to ``jobs`` at once (default
    the number of cores), each with the GPUs its launchers need, CPU-only ones under
    ``memory_limit_mib``. Each finished attempt is kept in ``out/state/``: running the same task
    set into the same ``out`` again resumes it, running only the attempts that have no result
    (an attempt killed mid-run is run again and marked ``restarted``). With ``slurm``, the
    attempts are Slurm jobs (:func:`rra_tools.bench.executors.slurm.execute_slurm`) instead, with the same
    state: a benchmark started locally resumes on Slurm and the other way round. BenchError when
    ``out/work`` holds another benchmark. A signal stops the benchmark: the attempts it
    interrupted or never started are recorded as infrastructure failures, and are run when the
    benchmark is resumed. With ``options`` (a sandbox other than 'none'), each attempt runs in a
    cell's sandbox (:mod:`.attempt_cell`); without, on this machine as ``rra run`` runs.
    """
    out = out.resolve()
    identity = _identity(taskset)
    _check_resumable(out, identity)
    state = out / "state"
    state.mkdir(parents=True, exist_ok=True)
    write_atomic(state / "benchmark.json", (json.dumps(identity, indent=1) + "\n").encode())
    cells = _cells(taskset)
    interrupted: dict[str, Attempt] = {}

    def run_one(cell: AttemptCell, slot: CellSlot) -> CellResult:
        t0 = time.monotonic()
        here = options
        if here is not None and slot.workdir is not None:
            # A Slurm job: the sandbox is chosen again on the node.
            here = dataclasses.replace(here, backend=resolve_backend(here.requested))
        attempt, stopped = _attempt(cell, out, slot, here)
        update: dict[str, Any] = {"wall_s": round(time.monotonic() - t0, 3)}
        if slot.restarted:
            update["restarted"] = slot.restarted
        attempt = attempt.model_copy(update=update)
        return CellResult(attempt.model_dump(mode="json", exclude_none=True), final=not stopped)

    by_key = {c.key: c for c in cells}

    def progress(event: CellEvent) -> None:
        if event.kind == "interrupted" and event.data is not None:
            interrupted[event.key] = Attempt.model_validate(event.data)
        if on_event is not None:
            on_event(event)
        if on_attempt is not None and event.data is not None and event.kind in ("finished", "resumed"):
            on_attempt(by_key[event.key].task, Attempt.model_validate(event.data))

    if slurm is not None:
        def lost(cell: AttemptCell, kind: str, detail: str) -> dict[str, Any]:
            return Attempt(number=cell.number, seed=_seed_for(cell.task, cell.number),
                           state=AttemptState.INFRASTRUCTURE_FAILURE,
                           detail=f"{kind}: {detail}").model_dump(mode="json", exclude_none=True)

        finished = execute_slurm(cells, run_one, state, out, lost=lost, resources=functools.partial(_job_resources, taskset),
                                 options=slurm, progress=progress, stop=stop)
    else:
        inventory = list(gpus) if gpus is not None else (gpu_inventory() if any(c.gpus for c in cells) else [])
        finished = execute(cells, run_one, state, gpus=inventory, max_workers=jobs,
                           memory_limit_mib=memory_limit_mib, progress=progress, stop=stop)
    repeats = taskset.model.repeats
    results: list[TaskResult] = []
    for task in taskset.tasks:
        attempts: list[Attempt] = []
        for number in range(1, repeats + 1):
            key = f"{task.key}/attempt-{number}"
            if key in finished:
                attempts.append(Attempt.model_validate(finished[key].data))
            elif key in interrupted:
                attempts.append(interrupted[key])
            else:
                attempts.append(Attempt(number=number, seed=_seed_for(task, number),
                                        state=AttemptState.INFRASTRUCTURE_FAILURE,
                                        detail="interrupted before it started"))
        iv = task.interval
        results.append(TaskResult(
            paper=task.paper, experiment=task.experiment, task=task.task.id, artifact=str(task.artifact.root),
            digest=task.digest, claim=task.task.claim, launcher=task.launcher,
            interval=IntervalResult(low=iv.low, high=iv.high, center=iv.center, half_width=iv.half_width, n=iv.n,
                                    stability="stable" if iv.stable else "variable", source=task.source),
            gpus=find_launcher(task.artifact, task.launcher).resources.gpus,
            construction=construction_of(task.artifact.root), attempts=attempts))
    totals = count_states((str(a.state) for t in results for a in t.attempts), REPRODUCE_STATES)
    return BenchResults(bench_version="1.0", mode="reproduce", taskset=taskset.model.id, repeats=repeats,
                        tasks=results, totals=totals)
