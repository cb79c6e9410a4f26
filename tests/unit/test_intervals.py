"""The acceptance interval: Student-t quantiles, the precision floor, stable/variable classes."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from rra_tools.intervals import acceptance_interval, aggregate, t_quantile


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 29, 100, 1000])
def test_t_quantile_matches_scipy(df: int) -> None:
    assert t_quantile(0.975, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-10)


def test_interval_formula() -> None:
    values = [96.4, 97.1, 96.9, 96.2, 97.3]
    interval = acceptance_interval(values, precision=1)
    n, mean, s = 5, sum(values) / 5, stats.tstd(values)
    expected = stats.t.ppf(0.975, n - 1) * s * math.sqrt(1 + 1 / n)
    assert interval.center == pytest.approx(mean)
    assert interval.half_width == pytest.approx(expected)
    assert not interval.stable
    assert interval.contains(mean + expected * 0.999) and not interval.contains(mean + expected * 1.001)


def test_zero_variance_uses_precision_floor() -> None:
    interval = acceptance_interval([0.9, 0.9, 0.9], precision=2)
    assert (interval.low, interval.high) == (pytest.approx(0.895), pytest.approx(0.905))
    assert interval.stable
    # A correctly rounded printed number is accepted, the next one is not.
    assert interval.contains(0.9) and interval.contains(0.905) and not interval.contains(0.91)


def test_aggregations() -> None:
    assert aggregate([1, 2, 3, 10], "median") == 2.5
    assert aggregate([1, 2, 3], "mean") == 2
    assert (aggregate([1, 5], "min"), aggregate([1, 5], "max")) == (1, 5)
    with pytest.raises(ValueError, match="exactly one value"):
        aggregate([1, 2], "single")
    with pytest.raises(ValueError, match="at least 2 observations"):
        acceptance_interval([1.0], 1)
