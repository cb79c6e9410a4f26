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


@pytest.mark.parametrize("a, b", [(0.5, 0.5), (2.0, 0.5), (0.5, 3.0), (15.0, 0.5), (3.0, 7.0)])
@pytest.mark.parametrize("x", [0.0, 1e-9, 0.1, 0.5, 0.62, 0.9, 0.999999, 1.0])
def test_incomplete_beta_matches_scipy_on_both_branches_and_the_ends(a: float, b: float, x: float) -> None:
    # The t quantile rests on the regularised incomplete beta function; both of its continued-
    # fraction branches (x below and above (a+1)/(a+b+2)) and the ends 0 and 1 are exact here.
    from scipy import special

    from rra_tools.intervals import _incomplete_beta

    assert _incomplete_beta(a, b, x) == pytest.approx(special.betainc(a, b, x), rel=1e-10, abs=1e-300)


def test_stable_when_the_spread_equals_the_floor() -> None:
    # Two observations 0.1 apart: s = 0.1/sqrt(2), spread = t(0.975, 1) * s * sqrt(1.5).
    spread = t_quantile(0.975, 1) * (0.1 / math.sqrt(2)) * math.sqrt(1.5)
    interval = acceptance_interval([0.0, 0.1], 2)
    assert interval.spread == pytest.approx(spread) and not interval.stable
    assert acceptance_interval([5.0, 5.0], 0).stable  # zero spread, floor 0.5
    from rra_tools.intervals import Interval

    assert Interval(0.0, 0.5, 0.5, 0.5, 3).stable and not Interval(0.0, 0.5, 0.5000001, 0.5, 3).stable


def test_aggregate_of_nothing_and_unknown_ways() -> None:
    with pytest.raises(ValueError, match="nothing to aggregate"):
        aggregate([], "mean")
    with pytest.raises(ValueError, match="unknown aggregation 'mode'"):
        aggregate([1.0], "mode")
    assert aggregate([3.0, 1.0, 2.0], "median") == 2.0 and aggregate([7.0], "single") == 7.0


@pytest.mark.parametrize("t", [-3.0, -0.4, 0.0, 0.3, 0.9999, 1.0, 2.5])
@pytest.mark.parametrize("df", [1, 4, 30])
def test_t_cdf_matches_scipy_on_both_sides_of_zero(t: float, df: int) -> None:
    from rra_tools.intervals import _t_cdf

    assert _t_cdf(t, df) == pytest.approx(stats.t.cdf(t, df), rel=1e-10)
