"""A cell's budgets and the running totals the proxy keeps against them.

Budgets are checked before each call is forwarded and again after each answer, so the moment a
figure reaches its budget :attr:`Ledger.limit_event` is set and every later call is refused.
The call that crosses a budget is answered (its cost was unknown until it was made); the next
one is not. Calls in flight count against the call budget when they are admitted, and under a
token or cost budget at most :data:`MAX_IN_FLIGHT` calls are forwarded at once (the others wait
their turn): an agent that fires many calls at once cannot overshoot a budget by more than the
calls already under way. Figures:

- ``tokens``: every token processed, input + cache read + cache written + output (as the
  providers' own totals count them);
- ``cost_usd``: the priced cost (an unpriced model's calls count 0);
- ``calls``: model calls answered by the upstream;
- ``wall_s``: working time, the seconds since the proxy started less the seconds spent waiting to
  retry an upstream's 429 or 5xx (a rate limit is not the agent's time, as in Inspect AI's
  working limit). A watcher thread sets the limit when it passes even if no call comes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ...model.cell import MeteredUsage
from .errors import ProxyError
from .usage import Usage

__all__ = ["BUDGET_NAMES", "MAX_IN_FLIGHT", "Budgets", "Ledger"]

#: The budgets, in the order they are checked (the first one spent is the one named).
BUDGET_NAMES = ("tokens", "cost_usd", "calls", "wall_s")

#: Calls forwarded at once under a token or cost budget; more wait until one ends.
MAX_IN_FLIGHT = 4


@dataclass(frozen=True)
class Budgets:
    """What a cell may spend through the proxy; None is no limit.

    >>> Budgets(tokens=-1)
    Traceback (most recent call last):
    ...
    rra_tools.agents.proxy.errors.ProxyError: the tokens budget must be >= 0, got -1
    """

    tokens: int | None = None
    cost_usd: float | None = None
    calls: int | None = None
    wall_s: float | None = None

    def __post_init__(self) -> None:
        for name in BUDGET_NAMES:
            value = getattr(self, name)
            if value is not None and not value >= 0:  # also refuses NaN
                raise ProxyError(f"the {name} budget must be >= 0, got {value!r}")

    def message(self, name: str) -> str:
        """What a refused call is told when budget ``name`` is spent."""
        value = getattr(self, name)
        if name == "tokens":
            return f"rra: the cell's token budget ({value}) is spent"
        if name == "cost_usd":
            return f"rra: the cell's cost budget ({value:g} USD) is spent"
        if name == "calls":
            return f"rra: the cell's call budget ({value}) is spent"
        return f"rra: the cell's working-time budget ({value:g} s) is spent"


class Ledger:
    """The running totals of one proxy and the state of its budgets; every method is thread-safe."""

    def __init__(self, budgets: Budgets) -> None:
        self.budgets = budgets
        # A condition, so that calls over MAX_IN_FLIGHT can wait for one to end.
        self._lock = threading.Condition(threading.Lock())
        self.in_flight = 0
        self.started = time.monotonic()
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read_tokens = 0
        self.cache_write_tokens = 0
        self.reasoning_tokens = 0
        self.cost_usd = 0.0
        self.retries = 0
        self.refused = 0
        self.waiting_s = 0.0
        self.unpriced: set[str] = set()
        # Waits under way: their number and the sum of their start times give the time they
        # have waited so far without a list of them.
        self._waits = 0
        self._wait_starts = 0.0
        self.limit_event = threading.Event()
        self.limit_reached: str | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    # Working time and the watcher of the wall_s budget.

    def _working_s(self, now: float) -> float:
        # Called with the lock held.
        waited = self.waiting_s + self._waits * now - self._wait_starts
        return now - self.started - waited

    def working_s(self) -> float:
        """Seconds since the proxy started, less the seconds spent waiting to retry."""
        with self._lock:
            return self._working_s(time.monotonic())

    def start_watch(self) -> None:
        """Start the thread that sets the limit when the working-time budget passes (if there is one)."""
        if self.budgets.wall_s is None or self._watcher is not None:
            return
        self._watcher = threading.Thread(target=self._watch, name="rra-proxy-wall-clock", daemon=True)
        self._watcher.start()

    def stop_watch(self) -> None:
        """Stop the watcher thread."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()

    def _watch(self) -> None:
        budget = self.budgets.wall_s
        assert budget is not None
        while not self._stop.is_set():
            with self._lock:
                left = budget - self._working_s(time.monotonic())
                if left <= 0:
                    self._reach("wall_s")
                    return
            # Waiting to retry moves the end later: sleep only until the earliest it can be.
            self._stop.wait(left)

    # Budgets.

    def _reach(self, name: str) -> None:
        # Called with the lock held; the first budget reached is the one recorded.
        if self.limit_reached is None:
            self.limit_reached = name
        self.limit_event.set()

    def _spent(self) -> str | None:
        # Called with the lock held.
        budgets = self.budgets
        if budgets.tokens is not None and (self.input_tokens + self.output_tokens + self.cache_read_tokens
                                           + self.cache_write_tokens) >= budgets.tokens:
            return "tokens"
        if budgets.cost_usd is not None and self.cost_usd >= budgets.cost_usd:
            return "cost_usd"
        if budgets.calls is not None and self.calls >= budgets.calls:
            return "calls"
        if budgets.wall_s is not None and self._working_s(time.monotonic()) >= budgets.wall_s:
            return "wall_s"
        return None

    def admit(self) -> str | None:
        """None when a call may be forwarded (it is then in flight until :meth:`release`); else the
        name of the budget spent (the call is then counted as refused and the limit is set). Under
        a token or cost budget, waits while MAX_IN_FLIGHT calls are under way."""
        budgets = self.budgets
        with self._lock:
            if budgets.tokens is not None or budgets.cost_usd is not None:
                while self.in_flight >= MAX_IN_FLIGHT and self._spent() is None:
                    self._lock.wait(0.5)
            spent = self._spent()
            if spent is None and budgets.calls is not None and self.calls + self.in_flight >= budgets.calls:
                spent = "calls"
            if spent is not None:
                self.refused += 1
                self._reach(spent)
                return spent
            self.in_flight += 1
            return None

    def release(self) -> None:
        """A call admitted by :meth:`admit` has ended (answered or not)."""
        with self._lock:
            self.in_flight -= 1
            self._lock.notify()

    # Totals.

    def refuse(self) -> None:
        """Count a call refused for another reason than a budget (an unknown route)."""
        with self._lock:
            self.refused += 1

    def record(self, usage: Usage | None, model: str | None, cost: float | None, *, answered: bool) -> None:
        """Add one forwarded model call: its usage (None when the answer stated none), the model
        it named, its cost (None when unpriced) and whether the upstream answered it at all."""
        with self._lock:
            if answered:
                self.calls += 1
            if usage is not None:
                self.input_tokens += usage.input_tokens
                self.output_tokens += usage.output_tokens
                self.cache_read_tokens += usage.cache_read_tokens
                self.cache_write_tokens += usage.cache_write_tokens
                self.reasoning_tokens += usage.reasoning_tokens
                if cost is None:
                    self.unpriced.add(model or "(no model named)")
                else:
                    self.cost_usd += cost
            spent = self._spent()
            if spent is not None:
                self._reach(spent)

    def retry(self) -> None:
        """Count one retry of an upstream's answer."""
        with self._lock:
            self.retries += 1

    def begin_wait(self) -> float:
        """Note that a wait to retry starts now; the start time, for :meth:`end_wait`."""
        with self._lock:
            now = time.monotonic()
            self._waits += 1
            self._wait_starts += now
            return now

    def end_wait(self, started: float) -> None:
        """Note that the wait begun at ``started`` is over."""
        with self._lock:
            now = time.monotonic()
            self._waits -= 1
            self._wait_starts -= started
            self.waiting_s += now - started

    def snapshot(self, price_table: str, call_log: str | None) -> MeteredUsage:
        """The totals so far as a cell's record holds them."""
        with self._lock:
            return MeteredUsage(
                calls=self.calls, input_tokens=self.input_tokens, output_tokens=self.output_tokens,
                cache_read_tokens=self.cache_read_tokens, cache_write_tokens=self.cache_write_tokens,
                reasoning_tokens=self.reasoning_tokens, cost_usd=self.cost_usd, price_table=price_table,
                retries=self.retries, refused=self.refused, waiting_s=self.waiting_s,
                unpriced_models=sorted(self.unpriced), call_log=call_log, limit_reached=self.limit_reached)
