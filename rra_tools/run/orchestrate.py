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

import signal
import threading
from collections.abc import Callable, Sequence

from .errors import ArtifactError, RunError
from .local import RunOptions, RunResult, execute
from .plan import RunPlan

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Executor", "PlanHooks", "PlanOutcome", "Refused", "Skipped", "run_plans"]

#: A function that runs one plan and writes its record (``local.execute``, ``container.execute``).
Executor = Callable[[RunPlan, RunOptions], RunResult]


# Plain classes, not dataclasses: generating a dataclass costs a fraction of a millisecond at
# import, and this module is imported by every ``rra run``.


class Skipped:
    """A plan that was not started, and why (a sentence)."""

    __slots__ = ("interrupted", "plan", "reason")

    def __init__(self, plan: RunPlan, reason: str, interrupted: bool = False) -> None:
        self.plan = plan
        self.reason = reason
        #: True when the plan stopped before this one started (a signal, the stop event, an
        #: interrupted run); False when a dependency did not complete.
        self.interrupted = interrupted

    def __repr__(self) -> str:
        return f"Skipped({self.plan.launcher.id!r}, {self.reason!r}, interrupted={self.interrupted})"


class Refused:
    """A plan whose run could not be set up: nothing was recorded."""

    __slots__ = ("error", "plan")

    def __init__(self, plan: RunPlan, error: RunError | ArtifactError) -> None:
        self.plan = plan
        self.error = error

    def __repr__(self) -> str:
        return f"Refused({self.plan.launcher.id!r}, {self.error!r})"


class PlanHooks:
    """Callbacks for each step of :func:`run_plans`; each one is optional.

    - ``on_start(plan, position, total)``: before a plan starts (1-based position);
    - ``on_finish(result)``: after a run ended, whatever way; its record is written;
    - ``on_skip(skipped)``: a plan was skipped (dependency not completed, or interrupted);
    - ``on_refused(refused)``: a run could not be set up (the executor raised a RunError).
    """

    __slots__ = ("on_finish", "on_refused", "on_skip", "on_start")

    def __init__(self, on_start: Callable[[RunPlan, int, int], None] | None = None,
                 on_finish: Callable[[RunResult], None] | None = None,
                 on_skip: Callable[[Skipped], None] | None = None,
                 on_refused: Callable[[Refused], None] | None = None) -> None:
        self.on_start = on_start
        self.on_finish = on_finish
        self.on_skip = on_skip
        self.on_refused = on_refused


class PlanOutcome:
    """What happened to every plan, in order of execution: ``results`` (each run's RunResult),
    ``skipped``, ``refused``, ``signal`` (the signal that interrupted the plan, SIGINT or
    SIGTERM, or None) and ``interrupted`` (the plan stopped early: a signal, the caller's stop
    event, or an interrupted run)."""

    __slots__ = ("interrupted", "refused", "results", "signal", "skipped")

    def __init__(self) -> None:
        self.results: list[RunResult] = []
        self.skipped: list[Skipped] = []
        self.refused: list[Refused] = []
        self.signal: int | None = None
        self.interrupted = False

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
        options = options.replace(stop=threading.Event())
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
            except (RunError, ArtifactError) as exc:
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
