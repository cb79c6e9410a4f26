"""Re-execution mode: run each task's launcher in a fresh copy of its artifact and score every
attempt against the task's acceptance interval.

Each attempt copies the artifact (without its run records) into
``<out>/work/<paper>/<experiment>/<task>/attempt-<n>/``, plans the claim's launcher with its
dependencies (:mod:`rra_tools.run.plan`), runs the plans with :func:`rra_tools.run.run_plans`
exactly as ``rra run`` does, and reads the claim's value from the new run records the way
``rra results`` does (:func:`rra_tools.run.results.claim_values`). A stochastic launcher runs
one declared seed per attempt (the first ``repeats`` seeds, in order, cycling when fewer are
declared); any other launcher runs ``repeats`` times.

Every attempt ends in one state of :class:`~rra_tools.model.bench_results.AttemptState` and
counts in the denominator; nothing is dropped. A run that could not be set up, timed out, was
interrupted or was killed with SIGKILL (the kernel's out-of-memory killer sends it) is an
infrastructure failure; any other failed run is a program failure.
"""

from __future__ import annotations

import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..io.artifact import load_artifact
from ..model.bench_results import (
    REPRODUCE_STATES,
    Attempt,
    AttemptState,
    BenchResults,
    IntervalResult,
    TaskResult,
)
from ..run.errors import ArtifactError, PlanError
from ..run.local import RunOptions
from ..run.orchestrate import PlanOutcome, run_plans
from ..run.plan import RunPlan, find_launcher, launcher_order, plan_runs
from ..run.results import claim_values, latest_successful
from .errors import BenchError
from .scoring import totals as count_states
from .taskset import LoadedTaskSet, ResolvedTask

__all__ = ["reproduce"]

#: Called after each attempt with the task and the scored attempt (for progress output).
OnAttempt = Callable[[ResolvedTask, Attempt], None]


def _seed_for(task: ResolvedTask, number: int) -> int | None:
    launcher = find_launcher(task.artifact, task.launcher)
    if not launcher.stochastic:
        return None
    seeds = list(launcher.seeds)
    return seeds[(number - 1) % len(seeds)] if seeds else number - 1


def _plans(root: Path, launcher_id: str, seed: int | None) -> list[RunPlan]:
    artifact = load_artifact(root)
    plans: list[RunPlan] = []
    for launcher in launcher_order(artifact, [launcher_id]):
        if launcher.id == launcher_id:
            plans.extend(plan_runs(artifact, launcher.id, seed=seed))
        else:
            plans.extend(plan_runs(artifact, launcher.id, all_seeds=True))
    return plans


def _failure(outcome: PlanOutcome, out: Path, task: ResolvedTask) -> tuple[AttemptState, str, str | None] | None:
    """The state, detail and record of the first run that did not succeed; None when all did."""
    for refused in outcome.refused:
        return AttemptState.INFRASTRUCTURE_FAILURE, f"{refused.plan.launcher.id}: {refused.error}", None
    for result in outcome.results:
        if result.successful:
            continue
        record: dict[str, Any] = result.record
        where = result.record_path.relative_to(out).as_posix()
        messages = record.get("messages") or []
        said = f": {messages[0]}" if messages else ""
        status = record["status"]
        detail = f"{record['launcher']}: {status}{said}"
        if status in ("timeout", "interrupted") or record.get("killed_by") == int(signal.SIGKILL):
            return AttemptState.INFRASTRUCTURE_FAILURE, detail, where
        if status == "completed":
            detail = f"{record['launcher']}: exit status {record.get('exit_status')}"
        metrics = record.get("metrics") or {}
        if (record["launcher"] == task.launcher and record.get("exit_status") == 0
                and task.task.claim not in metrics):
            # The program ended well but left no value of the claim (the runner marks such a
            # run failed): the number is missing, which is not the same as a crash.
            return AttemptState.MISSING_VALUE, detail, where
        return AttemptState.PROGRAM_FAILURE, detail, where
    for skipped in outcome.skipped:
        state = AttemptState.INFRASTRUCTURE_FAILURE if skipped.interrupted else AttemptState.PROGRAM_FAILURE
        return state, f"{skipped.plan.launcher.id}: {skipped.reason}", None
    return None


def _attempt(task: ResolvedTask, number: int, out: Path) -> tuple[Attempt, bool]:
    """Run and score one attempt; also whether a signal interrupted it."""
    seed = _seed_for(task, number)
    workspace = out / "work" / task.paper / task.experiment / task.task.id / f"attempt-{number}"
    runs = task.artifact.runs_dir.relative_to(task.artifact.root).parts[0]
    # The copy leaves the artifact's earlier run records behind: only this attempt's count.
    shutil.copytree(task.artifact.root, workspace, symlinks=True,
                    ignore=shutil.ignore_patterns(runs, "__pycache__"))
    try:
        plans = _plans(workspace, task.launcher, seed)
    except (PlanError, ArtifactError) as exc:
        return Attempt(number=number, seed=seed, state=AttemptState.PROGRAM_FAILURE,
                       detail=f"cannot plan the run: {exc}"), False
    outcome = run_plans(plans, RunOptions())
    failed = _failure(outcome, out, task)
    if failed is not None:
        state, detail, record = failed
        return Attempt(number=number, seed=seed, state=state, detail=detail, record=record), outcome.signal is not None
    copy = load_artifact(workspace)
    best, _ = latest_successful(copy)
    found = [(s, v, w) for s, _, v, w in claim_values(task.task.claim, task.launcher, best) if s == seed]
    if not found:
        return Attempt(number=number, seed=seed, state=AttemptState.MISSING_VALUE,
                       detail=f"no run record of {task.launcher!r} has a value of claim {task.task.claim!r}"), False
    _, value, where = found[0]
    record = (workspace / where).relative_to(out).as_posix()
    if task.interval.contains(value):
        return Attempt(number=number, seed=seed, state=AttemptState.SUCCESS, value=value, record=record), False
    return Attempt(number=number, seed=seed, state=AttemptState.OUTSIDE_INTERVAL, value=value, record=record,
                   detail=f"{value!r} is outside [{task.interval.low!r}, {task.interval.high!r}]"), False


def reproduce(taskset: LoadedTaskSet, out: Path, on_attempt: OnAttempt | None = None) -> BenchResults:
    """Run every task ``repeats`` times in fresh copies under ``out`` and score each attempt.

    BenchError when ``out/work`` already exists (attempts never mix with an earlier benchmark's).
    A signal stops the benchmark: the attempts not started are recorded as infrastructure
    failures ("interrupted before it started"), so the denominator stays whole.
    """
    work = out / "work"
    if work.exists():
        raise BenchError(f"{str(work)!r} already exists; give an output directory of a new benchmark",
                         "use -o with a new directory")
    out = out.resolve()
    repeats = taskset.model.repeats
    results: list[TaskResult] = []
    stopped = False
    for task in taskset.tasks:
        attempts: list[Attempt] = []
        for number in range(1, repeats + 1):
            if stopped:
                attempt = Attempt(number=number, seed=_seed_for(task, number),
                                  state=AttemptState.INFRASTRUCTURE_FAILURE,
                                  detail="interrupted before it started")
            else:
                attempt, stopped = _attempt(task, number, out)
            attempts.append(attempt)
            if on_attempt is not None:
                on_attempt(task, attempt)
        iv = task.interval
        results.append(TaskResult(
            paper=task.paper, experiment=task.experiment, task=task.task.id, artifact=str(task.artifact.root),
            claim=task.task.claim, launcher=task.launcher,
            interval=IntervalResult(low=iv.low, high=iv.high, center=iv.center, half_width=iv.half_width, n=iv.n,
                                    stability="stable" if iv.stable else "variable", source=task.source),
            attempts=attempts))
    totals = count_states((str(a.state) for t in results for a in t.attempts), REPRODUCE_STATES)
    return BenchResults(bench_version="1.0", mode="reproduce", taskset=taskset.model.id, repeats=repeats,
                        tasks=results, totals=totals)
