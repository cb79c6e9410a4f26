"""The factorial analysis of ``rra bench report`` (rra_tools.bench.report.factorial) against hand
computations: main effects and interactions of a full 2^k design, a one-at-a-time design, the
paper-clustered bootstrap intervals, and results without ablations."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from rra_tools.bench.report.build import build_report
from rra_tools.model.taskset import condition_name

from .test_bench_report import HAND, _results


def _cells(rates: dict[tuple[str, ...], int], papers: int = 4, per: int = 4,
           reproducer: str = "x") -> list[tuple[str, str, str, str]]:
    """``per`` cells per paper and condition; ``rates[combo]`` of them succeed (combo: parts removed)."""
    cells = []
    for p in range(papers):
        for combo, ok in rates.items():
            for i in range(per):
                cells.append((f"p{p}/e/t", condition_name(combo), reproducer, "success" if i < ok else "missing_value"))
    return cells


def _effects(report: Any, reproducer: str | None = None) -> dict[tuple[str, ...], float | None]:
    (analysis,) = [f for f in report.factorial if f.reproducer == reproducer]
    return {tuple(e.parts): e.estimate for e in analysis.effects}


def test_full_two_part_design_by_hand() -> None:
    # Success out of 4 per paper: refined 4, without guide 3, without lock 4, without both 1.
    rates = {(): 4, ("guide",): 3, ("lock",): 4, ("lock", "guide"): 1}
    report = build_report(_results(_cells(rates)), "r.json")
    (analysis,) = report.factorial
    assert analysis.design == "full" and analysis.parts == ["lock", "guide"] and analysis.missing == []
    assert [c.condition for c in analysis.conditions] == [
        "refined", "refined-without-lock", "refined-without-guide", "refined-without-lock-guide"]
    assert [c.rate.rate for c in analysis.conditions] == [1.0, 1.0, 0.75, 0.25]
    effects = _effects(report)
    # guide: kept (1.0 + 1.0)/2 - removed (0.75 + 0.25)/2 = 0.5; lock: (1 + .75)/2 - (1 + .25)/2 = 0.25.
    assert effects[("guide",)] == pytest.approx(0.5)
    assert effects[("lock",)] == pytest.approx(0.25)
    # Interaction: half of (guide's effect with the lock 0.25 - without it 0.75) = -0.25.
    assert effects[("lock", "guide")] == pytest.approx(-0.25)
    # Every paper is alike: resampling papers cannot move an effect.
    for e in analysis.effects:
        assert e.ci_low == pytest.approx(e.estimate) and e.ci_high == pytest.approx(e.estimate)


def test_full_four_part_design_has_every_contrast() -> None:
    parts = ("repairs", "lock", "launchers", "guide")
    # Success needs the repairs, and the launchers or the guide; the lock does nothing.
    rates = {combo: 4 if "repairs" not in combo and not {"launchers", "guide"} <= set(combo) else 0
             for size in range(5) for combo in itertools.combinations(parts, size)}
    report = build_report(_results(_cells(rates, papers=3)), "r.json")
    (analysis,) = report.factorial
    assert analysis.design == "full" and len(analysis.conditions) == 16 and len(analysis.effects) == 15
    effects = _effects(report)
    # repairs: kept 3/4 of the 8 conditions succeed, removed none: 0.75.
    assert effects[("repairs",)] == pytest.approx(0.75)
    assert effects[("lock",)] == pytest.approx(0.0)
    # launchers: with repairs kept, kept -> 1, removed -> 1/2 (the guide saves half): (1 - .5)/2 = .25.
    assert effects[("launchers",)] == pytest.approx(0.25) and effects[("guide",)] == pytest.approx(0.25)
    assert effects[("launchers", "guide")] == pytest.approx(-0.25)
    assert effects[("repairs", "launchers")] == pytest.approx(0.25)
    assert effects[("repairs", "lock", "launchers", "guide")] == pytest.approx(0.0)
    assert [tuple(e.parts) for e in analysis.effects][:4] == [(p,) for p in parts]


def test_intervals_resample_papers() -> None:
    cells = _cells({(): 4, ("guide",): 2}, papers=1) + [
        (f"q{p}/e/t", c, "x", s) for p in range(5)
        for c, s in (("refined", "success"), ("refined-without-guide", "success" if p % 2 else "missing_value"))]
    report = build_report(_results(cells), "r.json", seed=3)
    (analysis,) = report.factorial
    assert analysis.design == "full"  # one part, both of its conditions
    (effect,) = analysis.effects
    assert effect.parts == ["guide"]
    # refined 9/9, without the guide (2 + 2)/9.
    assert effect.estimate == pytest.approx(1 - 4 / 9)
    assert effect.ci_low is not None and effect.ci_high is not None
    assert effect.ci_low < effect.estimate < effect.ci_high
    assert build_report(_results(cells), "r.json", seed=3) == report


def test_one_at_a_time_design() -> None:
    rates = {(): 4, ("repairs",): 1, ("guide",): 3, ("repairs", "guide"): 0}
    report = build_report(_results(_cells({k: v for k, v in rates.items() if k != ("repairs", "guide")})), "r")
    (analysis,) = report.factorial
    assert analysis.design == "one-at-a-time"
    assert analysis.missing == ["refined-without-repairs-guide"]
    assert _effects(report) == {("repairs",): pytest.approx(0.75), ("guide",): pytest.approx(0.25)}


def test_per_reproducer_analyses_and_paired_pairs() -> None:
    rates = {(): 4, ("lock",): 2}
    cells = _cells(rates, reproducer="x") + _cells({(): 4, ("lock",): 4}, reproducer="y")
    cells += [("p0/e/t", "raw", "x", "missing_value")]
    report = build_report(_results(cells), "r")
    assert [f.reproducer for f in report.factorial] == [None, "x", "y"]
    assert _effects(report) == {("lock",): pytest.approx(0.25)}
    assert _effects(report, "x") == {("lock",): pytest.approx(0.5)}
    assert _effects(report, "y") == {("lock",): pytest.approx(0.0)}
    # Pairs: raw and refined, refined and the ablation; never raw and an ablation.
    assert [(p.condition_a, p.condition_b) for p in report.paired] == [
        ("raw", "refined"), ("refined", "refined-without-lock")]


def test_no_ablation_no_analysis() -> None:
    assert build_report(_results(HAND), "r").factorial == []
    # An ablation without 'refined' has nothing to be compared with.
    assert build_report(_results([("p/e/t", "refined-without-lock", "x", "success")]), "r").factorial == []


def test_markdown_and_page_show_the_effects() -> None:
    from rra_tools.bench.report.plots import Plot
    from rra_tools.bench.report.render import render_html, render_markdown

    rates = {(): 4, ("guide",): 3, ("lock",): 4, ("lock", "guide"): 1}
    report = build_report(_results(_cells(rates)), "r.json")
    text = render_markdown(report)
    assert ("Main effects on success (all reproducers, full design): lock +25.0 pp [+25.0, +25.0]; "
            "guide +50.0 pp [+50.0, +50.0].") in text
    assert "| all (pooled) | 2-way interaction | lock × guide | -25.0 pp [-25.0, -25.0] |" in text
    # One paper: the bootstrap of a rate has no spread, so the interval is Wilson's.
    assert "| refined-without-lock-guide | lock, guide | 4/16 = 25.0 % [10.2, 49.5] (Wilson) |" in text
    page = render_html(report, {"factorial": Plot("<svg></svg>")}, {"factorial": "Effects"})
    assert "<td>lock × guide</td><td>-25.0 pp [-25.0, -25.0]</td>" in page
    assert "Main effects" not in render_markdown(build_report(_results(HAND), "r"))
