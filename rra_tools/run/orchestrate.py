"""Running a whole plan: launchers in order, dependents of failures skipped, signals, progress.

:func:`run_plans` is what ``rra run`` does between planning and printing, so that every caller
(the CLI, a review, a benchmark evaluator) runs a list of plans the same way:

- plans run one after another, in the order given (``plan_runs`` puts dependencies first);
- a plan whose launcher depends on a launcher that did not complete (a failed run of any of its
  seeds, a run that could not be set up, or a skipped one) is skipped, and so are its own
  dependents;
- SIGINT and SIGTERM (when ``handle_signals`` and called from the main thread) set the stop
  event: the running launcher's process group is stopped and recorded as ``interrupted``, and
  every plan not yet started is skipped. The previous handlers are restored on return;
- every step reaches the caller through :class:`PlanHooks`; output and progress of the running
  launcher through the executor's :class:`~rra_tools.run.local.RunOptions`.

Nothing is printed; a run that cannot be set up (e.g. ``GpuUnavailable``) is reported through
``on_refused`` and counted as not completed, never raised.
"""

from __future__ import annotations

import dataclasses
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import RunError
from .local import RunOptions, RunResult, execute
from .plan import RunPlan

__all__ = ["Executor", "PlanHooks", "PlanOutcome", "Refused", "Skipped", "run_plans"]

#: A function that runs one plan and writes its record (``local.execute``, ``container.execute``).
Executor = Callable[[RunPlan, RunOptions], RunResult]


@dataclass(frozen=True)
class Skipped:
    """A plan that was not started, and why (a sentence)."""

    plan: RunPlan
    reason: str
    #: True when the plan stopped before this one started (a signal, the stop event, an
    #: interrupted run); False when a dependency did not complete.
    interrupted: bool = False


@dataclass(frozen=True)
class Refused:
    """A plan whose run could not be set up: nothing was recorded."""

    plan: RunPlan
    error: RunError


@dataclass
class PlanHooks:
    """Callbacks for each step of :func:`run_plans`; each one is optional."""

    #: Before a plan starts: (plan, its 1-based position, the number of plans).
    on_start: Callable[[RunPlan, int, int], None] | None = None
    #: After a run ended, whatever way; its record is written.
    on_finish: Callable[[RunResult], None] | None = None
    #: A plan was skipped (dependency not completed, or the whole plan interrupted).
    on_skip: Callable[[Skipped], None] | None = None
    #: A run could not be set up (the executor raised a RunError).
    on_refused: Callable[[Refused], None] | None = None


@dataclass
class PlanOutcome:
    """What happened to every plan, in order of execution."""

    results: list[RunResult] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    #: The signal that interrupted the plan (SIGINT, SIGTERM), or None.
    signal: int | None = None
    #: Whether the plan stopped early (a signal, the caller's stop event, or an interrupted run).
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        """Every plan ran and every run was successful (as the levels count it)."""
        return (not self.skipped and not self.refused and not self.interrupted
                and all(r.successful for r in self.results))


def run_plans(plans: Sequence[RunPlan], options: RunOptions | None = None, *,
              executor: Executor = execute, hooks: PlanHooks | None = None,
              handle_signals: bool = True) -> PlanOutcome:
    """Run ``plans`` in order with ``executor``; skip dependents of launchers that did not
    complete; stop on SIGINT/SIGTERM (see the module docstring). Never raises a RunError."""
    hooks = hooks or PlanHooks()
    options = options or RunOptions()
    if options.stop is None:
        options = dataclasses.replace(options, stop=threading.Event())
    stop = options.stop
    assert stop is not None
    outcome = PlanOutcome()
    previous: dict[int, Any] = {}

    def on_signal(signum: int, _frame: object) -> None:
        if outcome.signal is None:
            outcome.signal = signum
        stop.set()

    # signal.signal works only in the main thread; elsewhere the caller owns the stop event.
    if handle_signals and threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    incomplete: set[str] = set()
    try:
        for i, plan in enumerate(plans, 1):
            if stop.is_set() or outcome.interrupted:
                outcome.interrupted = True
                _skip(outcome, hooks, Skipped(plan, "interrupted before it started", interrupted=True))
                continue
            blocked = [d for d in plan.launcher.depends_on if d in incomplete]
            if blocked:
                incomplete.add(plan.launcher.id)
                _skip(outcome, hooks, Skipped(plan, f"dependency {blocked[0]!r} did not complete"))
                continue
            if hooks.on_start is not None:
                hooks.on_start(plan, i, len(plans))
            try:
                result = executor(plan, options)
            except RunError as exc:
                incomplete.add(plan.launcher.id)
                refused = Refused(plan, exc)
                outcome.refused.append(refused)
                if hooks.on_refused is not None:
                    hooks.on_refused(refused)
                continue
            outcome.results.append(result)
            if not result.successful:
                incomplete.add(plan.launcher.id)
            if result.record["status"] == "interrupted":
                outcome.interrupted = True
            if hooks.on_finish is not None:
                hooks.on_finish(result)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stop.is_set():
        outcome.interrupted = True
    return outcome


def _skip(outcome: PlanOutcome, hooks: PlanHooks, skipped: Skipped) -> None:
    outcome.skipped.append(skipped)
    if hooks.on_skip is not None:
        hooks.on_skip(skipped)
