"""Acceptance intervals of claims: the Student-t prediction interval with a precision floor.

For n reference observations with mean x̄ and sample standard deviation s, a new observation
is accepted inside  x̄ ± max(t(0.975, n−1) · s · √(1 + 1/n), ½ · 10^(−precision)).  The floor
keeps zero-variance references from demanding exact float equality with a printed number.
Stdlib only (no SciPy): the t quantile is found by bisection on the regularised incomplete
beta function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

__all__ = ["Interval", "acceptance_interval", "aggregate", "t_quantile"]


@dataclass(frozen=True)
class Interval:
    """An acceptance interval and how it was derived."""

    center: float
    half_width: float
    #: The t-based half width before the floor was applied.
    spread: float
    floor: float
    n: int

    @property
    def low(self) -> float:
        """Lower bound."""
        return self.center - self.half_width

    @property
    def high(self) -> float:
        """Upper bound."""
        return self.center + self.half_width

    @property
    def stable(self) -> bool:
        """True when the precision floor, not the observed spread, sets the width."""
        return self.spread <= self.floor

    def contains(self, value: float) -> bool:
        """Whether ``value`` is accepted; bounds included, with a hair of float tolerance."""
        slack = 1e-12 * max(1.0, abs(self.center))
        return self.low - slack <= value <= self.high + slack


def _betacf(a: float, b: float, x: float) -> float:
    # Continued fraction of the incomplete beta function (modified Lentz).
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _t_cdf(t: float, df: float) -> float:
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@cache
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (0.5 < p < 1).

    >>> round(t_quantile(0.975, 4), 4)
    2.7764
    """
    if not 0.5 < p < 1.0 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 < p < 1 and df >= 1, got p={p!r}, df={df!r}")
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if _t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-13 * max(1.0, high):
            break
    return (low + high) / 2.0


def _mean(values: Sequence[float]) -> float:
    """The mean, exactly rounded; finite for finite values near the float limit too (the sum of
    two 1e308 overflows, and fsum raises on that, so the terms are divided first then).

    >>> _mean([1e308, 1e308])
    1e+308
    >>> _mean([1.0, 2.0, 4.5])
    2.5
    """
    try:
        return math.fsum(values) / len(values)
    except OverflowError:
        return math.fsum(v / len(values) for v in values)


def acceptance_interval(values: Sequence[float], precision: int) -> Interval:
    """The acceptance interval of observations ``values`` for a number printed with ``precision``
    decimals; needs at least two values (the standard requires three)."""
    n = len(values)
    if n < 2:
        raise ValueError(f"an interval needs at least 2 observations, got {n}")
    mean = _mean(values)
    # d * d, not d ** 2: an overflow gives inf (a useless but harmless interval) instead of raising;
    # fsum raises on an intermediate overflow of finite terms, which is an infinite variance too.
    try:
        variance = math.fsum((v - mean) * (v - mean) for v in values) / (n - 1)
    except OverflowError:
        variance = math.inf
    spread = t_quantile(0.975, n - 1) * math.sqrt(variance) * math.sqrt(1.0 + 1.0 / n)
    floor = 0.5 * 10.0 ** (-precision)
    return Interval(mean, max(spread, floor), spread, floor, n)


def aggregate(values: Sequence[float], how: str) -> float:
    """Combine per-seed values: 'mean', 'median', 'min', 'max' or 'single' (exactly one value)."""
    if not values:
        raise ValueError("nothing to aggregate")
    if how == "mean":
        return _mean(values)
    if how == "median":
        ordered = sorted(values)
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0
    if how == "min":
        return min(values)
    if how == "max":
        return max(values)
    if how == "single":
        if len(values) != 1:
            raise ValueError(f"aggregate 'single' needs exactly one value, got {len(values)}")
        return values[0]
    raise ValueError(f"unknown aggregation {how!r}")
