"""The acceptance interval: Student-t quantiles, the precision floor, stable/variable classes."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from rra_tools.intervals import acceptance_interval, aggregate, t_quantile


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 29, 100, 1000])
@pytest.mark.parametrize("p", [0.55, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999])
def test_t_quantile_matches_scipy(p: float, df: int) -> None:
    # The accuracy spec/04-levels.md#acceptance-interval promises: 1e-10 relative.
    assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-10)


@pytest.mark.parametrize("p", [0.6, 0.8, 0.9, 0.975, 0.999])
def test_t_quantile_closed_forms(p: float) -> None:
    # df = 1 is the Cauchy distribution and df = 2 has a closed form too: no library needed.
    assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-10)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p))), rel=1e-10)


@pytest.mark.parametrize("p, df, table", [
    (0.95, 1, 6.313752), (0.995, 1, 63.656741), (0.99, 10, 2.763769), (0.95, 30, 1.697261),
    (0.9, 5, 1.475884), (0.999, 20, 3.551808), (0.75, 4, 0.740697), (0.975, 4, 2.776445),
    (0.975, 9, 2.262157), (0.975, 29, 2.045230), (0.975, 99, 1.984217)])
def test_t_quantile_against_printed_tables(p: float, df: int, table: float) -> None:
    assert round(t_quantile(p, df), 6) == table


@pytest.mark.parametrize("p, df", [(0.5, 3), (1.0, 3), (0.3, 3), (0.975, 0)])
def test_t_quantile_refuses_what_it_does_not_compute(p: float, df: int) -> None:
    with pytest.raises(ValueError, match="t_quantile needs 0.5 < p < 1 and df >= 1"):
        t_quantile(p, df)


def test_interval_bounds_are_inclusive_with_a_hair_of_slack() -> None:
    interval = acceptance_interval([71.43] * 5, 1)  # 71.43 +- 0.05
    assert interval.contains(71.38) and interval.contains(71.48)
    slack = 1e-12 * 71.43
    assert interval.contains(interval.low - slack * 0.5) and not interval.contains(interval.low - slack * 2)
    assert interval.contains(interval.high + slack * 0.5) and not interval.contains(interval.high + slack * 2)


@pytest.mark.parametrize("centre", [0.5, -0.5, 0.9, 0.0])
def test_the_slack_is_absolute_below_a_centre_of_one(centre: float) -> None:
    # spec/04-levels.md: each bound may widen by at most 1e-12 * max(1, |mean|); for a mean
    # below 1 in size that is 1e-12 itself, never more.
    interval = acceptance_interval([centre] * 5, 1)  # centre +- 0.05
    assert interval.contains(interval.low - 0.5e-12) and not interval.contains(interval.low - 1.5e-12)
    assert interval.contains(interval.high + 0.5e-12) and not interval.contains(interval.high + 1.5e-12)


def test_interval_sums_do_not_depend_on_order() -> None:
    values = [1e16, 1.0, -1e16, 3.0, 2.0]
    assert acceptance_interval(values, 2) == acceptance_interval(sorted(values), 2)
    assert acceptance_interval(values, 2).center == pytest.approx(6.0 / 5)


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


def test_an_interval_is_immutable() -> None:
    # Intervals are cached and shared between claims (rules, results, reports): one caller
    # changing a bound must not change another's. Found by the full mutation run (frozen=False survived).
    import dataclasses

    interval = acceptance_interval([1.0, 2.0, 3.0], 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        interval.center = 0.0  # type: ignore[misc]
