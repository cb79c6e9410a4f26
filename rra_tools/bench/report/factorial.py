"""The factorial analysis of a benchmark report: each part's main effect on the success rate and
the parts' interactions, from the cells of ``refined`` and its ablations
(``refined-without-...``), with the report's bootstrap intervals (papers resampled).

The factors are the parts some ablation in the results removes. When every combination of them
was run (the task set's ``factorial``), the design is **full** and every effect of the 2^k
design is given: a part's main effect is the mean success rate of the conditions that keep it
minus the mean of those without it, and an interaction of parts A, B, ... is the contrast with
the product of their signs (+1 kept, -1 removed), over 2^(k-1): the textbook effects of a 2^k
design, computed on the conditions' success rates. Otherwise the design is **one-at-a-time**: a
part's effect is ``refined`` minus ``refined`` without it, and a pair's interaction is half the
difference of one part's effect with and without the other, where those four conditions exist.

Every effect is a linear contrast of the conditions' rates, so the bootstrap
(:meth:`~rra_tools.bench.report.build._Bootstrapper.contrasts`) draws the resampled papers once for
all of them. This module imports numpy only through that bootstrapper.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Protocol

from ...model.bench_report import Effect, Factorial, FactorialCondition, Rate
from ...model.taskset import PARTS, condition_parts

__all__ = ["factorial_analyses"]

_SUCCESS = "success"


class _Cell(Protocol):
    paper: str
    condition: str
    reproducer: str
    state: str


class _Contrasts(Protocol):
    def contrasts(self, successes: list[list[int]], cells: list[list[int]],
                  weights: list[list[float]]) -> list[tuple[float | None, float | None, float | None]]: ...

    def rate(self, cells: Sequence[Any], cluster: str) -> Rate: ...


def _design(parts: Sequence[str], present: set[tuple[str, ...]]) -> tuple[list[tuple[str, ...]], list[list[float]]]:
    """The effects (tuples of parts) and their weights over the combinations ``present`` (in the
    order of ``sorted(present)``) — full or one-at-a-time, as the module docstring says."""
    combos = sorted(present)
    index = {c: i for i, c in enumerate(combos)}
    effects: list[tuple[str, ...]] = []
    weights: list[list[float]] = []
    if len(present) == 2 ** len(parts):
        scale = 1 / 2 ** (len(parts) - 1)
        for order in range(1, len(parts) + 1):
            for chosen in itertools.combinations(parts, order):
                row = [0.0] * len(combos)
                for combo in combos:
                    sign = 1.0
                    for part in chosen:
                        sign *= -1.0 if part in combo else 1.0
                    row[index[combo]] = sign * scale
                effects.append(chosen)
                weights.append(row)
        return effects, weights
    for part in parts:
        if (part,) in index and () in index:
            row = [0.0] * len(combos)
            row[index[()]], row[index[(part,)]] = 1.0, -1.0
            effects.append((part,))
            weights.append(row)
    for a, b in itertools.combinations(parts, 2):
        square = [(), (a,), (b,), (a, b)]
        if all(c in index for c in square):
            row = [0.0] * len(combos)
            for combo, sign in zip(square, (0.5, -0.5, -0.5, 0.5)):
                row[index[combo]] = sign
            effects.append((a, b))
            weights.append(row)
    return effects, weights


def _analysis(cells: Sequence[_Cell], boot: _Contrasts, reproducer: str | None) -> Factorial | None:
    by_combo: dict[tuple[str, ...], list[_Cell]] = defaultdict(list)
    for c in cells:
        parts = condition_parts(c.condition)
        if parts is not None:
            by_combo[tuple(p for p in PARTS if p in parts)].append(c)
    if () not in by_combo or len(by_combo) < 2:
        return None
    factors = [p for p in PARTS if any(p in combo for combo in by_combo)]
    present = set(by_combo)
    effects, weights = _design(factors, present)
    full = len(present) == 2 ** len(factors)
    combos = sorted(present)
    papers = sorted({c.paper for c in cells if c.condition and condition_parts(c.condition) is not None})
    row_of = {p: i for i, p in enumerate(papers)}
    successes = [[0] * len(combos) for _ in papers]
    totals = [[0] * len(combos) for _ in papers]
    for j, combo in enumerate(combos):
        for c in by_combo[combo]:
            totals[row_of[c.paper]][j] += 1
            successes[row_of[c.paper]][j] += c.state == _SUCCESS
    conditions = [FactorialCondition(condition=by_combo[combo][0].condition, without=list(combo),
                                     rate=boot.rate(by_combo[combo], "paper"))
                  for combo in sorted(combos, key=lambda c: (len(c), [PARTS.index(p) for p in c]))]
    estimates = boot.contrasts(successes, totals, weights) if weights else []
    missing = []
    if not full:
        from ...model.taskset import condition_name

        for size in range(len(factors) + 1):
            for combo in itertools.combinations(factors, size):
                if combo not in present:
                    missing.append(condition_name(combo))
    return Factorial(
        reproducer=reproducer, parts=factors, design="full" if full else "one-at-a-time", conditions=conditions,
        effects=[Effect(parts=list(e), estimate=est, ci_low=low, ci_high=high)
                 for e, (est, low, high) in zip(effects, estimates)], missing=missing)


def factorial_analyses(cells: Sequence[_Cell], boot: _Contrasts) -> list[Factorial]:
    """The analysis of every reproducer pooled, then of each reproducer when there are several;
    empty when the cells hold no ablation (or no 'refined' to compare it with)."""
    pooled = _analysis(cells, boot, None)
    if pooled is None:
        return []
    out = [pooled]
    reproducers = sorted({c.reproducer for c in cells if condition_parts(c.condition) is not None})
    if len(reproducers) > 1:
        for name in reproducers:
            one = _analysis([c for c in cells if c.reproducer == name], boot, name)
            if one is not None:
                out.append(one)
    return out
