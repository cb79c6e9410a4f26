"""The report holds a real benchmark (issue 23 item 9): rendered at 36 papers × 8 reproducers ×
2 conditions × 3 repeats (1,728 cells) and at 1,029 tasks, and opened in headless Chromium,
which measures it: no two text boxes of a chart overlap or leave it, every chart has data or a
sentence instead, nothing runs off the page, refuted findings are counted rather than listed,
and screenshots of each figure (saved beside the report) are not blank."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench.report.build import write_report
from rra_tools.bench.report.plots import PLOTS

from ..bench_synthetic import synthetic_results
from ..report_browser import browser, ink, layout, layout_problems, screenshot

#: Eight reproducers as a real benchmark names them (agent.model), behaving as the synthetic
#: honest, sloppy, cheating and slow ones.
REPRODUCERS = ("honest-claude-code.claude-opus-4-5-20251101", "honest-codex.gpt-5.1-codex-max",
               "honest-mini-swe-agent.qwen3-coder-480b-a35b-instruct", "sloppy-openhands.gpt-4.1-mini",
               "sloppy-aider.deepseek-v3.2", "cheating-hal-generalist.o4-mini-high",
               "slow-inspect-react.gemini-2.5-pro", "honest-core-agent.claude-sonnet-4-5")
LONG_EVIDENCE = "runs/" + "/".join(f"seed-{i}-of-a-very-deeply-nested-output-directory" for i in range(8)) + \
    "/metrics-with-no-space-in-its-name.json"


def _render(tmp: Path, data: dict[str, Any]) -> Path:
    results = tmp / "results.json"
    results.write_text(json.dumps(data), encoding="utf-8")
    write_report(results, tmp / "out")
    return tmp / "out"


@pytest.fixture(scope="module")
def papers36(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,728 cells, no cost reported, some 800 refuted findings, one evidence path of 400 characters."""
    data = synthetic_results(36, 1, repeats=3, reproducers=REPRODUCERS, usage=False, refuted=0.9)
    assert len(data["cells"]) == 36 * 8 * 2 * 3 == 1728
    cheat = next(c for c in data["cells"] if c.get("findings") and c["findings"][0]["confirmed"])
    cheat["findings"][0]["evidence"].append(LONG_EVIDENCE)
    return _render(tmp_path_factory.mktemp("papers36"), data)


@pytest.fixture(scope="module")
def tasks1029(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,029 tasks (147 papers × 7) by two reproducers under two conditions: 4,116 cells, with costs."""
    data = synthetic_results(147, 7, repeats=1, reproducers=REPRODUCERS[:2])
    assert (len(data["tasks"]), len(data["cells"])) == (1029, 4116)
    return _render(tmp_path_factory.mktemp("tasks1029"), data)


def _open(out: Path, shots: Path) -> tuple[list[list[Any]], dict[str, Any]]:
    """The page's figures as the browser lays them out, and what else it measures; a screenshot
    of each figure and of the top of the page are saved in ``shots``."""
    driver = browser()
    try:
        driver.get((out / "report.html").as_uri())
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == [], errors
        figures = layout(driver)
        shots.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(shots / "page-top.png"))
        for ident, *_ in figures:
            screenshot(driver, shots / f"{ident}.png", f"#{ident}")
        # Every folded list opened: even then nothing is wider than the window.
        page = driver.execute_script(
            "document.querySelectorAll('details').forEach(d => d.open = true);"
            "const cell = Array.from(document.querySelectorAll('td')).find(td => td.textContent.includes('metrics-with'));"
            "return {scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,"
            "  cell: cell ? [cell.getBoundingClientRect().right, document.body.getBoundingClientRect().right] : null,"
            "  rows: document.querySelectorAll('tr').length, folded: document.querySelectorAll('details').length,"
            "  headings: Array.from(document.querySelectorAll('h2')).map(h => h.textContent)};")
    finally:
        driver.quit()
    return figures, page


def _check_shots(shots: Path, figures: list[list[Any]]) -> None:
    for ident, svg, *_ in figures:
        png = shots / f"{ident}.png"
        assert png.stat().st_size > 2000, png
        # A chart is lines, bars and text; a sentence alone is a little text.
        assert ink(png) > (0.02 if svg else 0.001), (png, ink(png))
    assert ink(shots / "page-top.png") > 0.02


def test_1728_cells_in_chromium(papers36: Path, tmp_path: Path) -> None:
    started = time.perf_counter()
    figures, page = _open(papers36, tmp_path / "shots")
    assert layout_problems(figures) == []
    shown = {ident: (svg, notes) for ident, svg, _, notes, *_ in figures}
    assert list(shown) == [f"plot-{ident}" for ident, _, _ in PLOTS]
    # No cost anywhere: said in words, not drawn as empty axes.
    assert shown["plot-pareto"] == (False, [
        "No cost was reported (metered or stated) by any cell: there is no accuracy–cost plot."])
    assert shown["plot-cost-time"] == (True, [
        "No cost was reported (metered or stated) by any cell: there is no cost to plot."])
    assert shown["plot-factorial"][0] is False
    for ident in ("plot-by-reproducer", "plot-by-paper", "plot-paired", "plot-spread", "plot-by-stability"):
        assert shown[ident] == (True, []), ident
    # 8 reproducers and 36 papers: a row each, every name readable (no overlap: above).
    width, height = next(f[6:8] for f in figures if f[0] == "plot-by-paper")
    assert height > 36 * 2 * 8  # at least 8 px per bar
    # Nothing runs off the page, the 400-character evidence path included.
    assert page["scroll"] <= page["client"], page
    assert page["cell"] is not None and page["cell"][0] <= page["cell"][1] + 1, page["cell"]
    # Refuted findings are counted by kind; only confirmed ones are listed.
    report = json.loads((papers36 / "report.json").read_text(encoding="utf-8"))
    refuted = sum(not f["confirmed"] for f in report["findings"])
    confirmed = sum(f["confirmed"] for f in report["findings"])
    assert refuted > 700 and confirmed > 100
    assert page["rows"] < refuted
    assert "not confirmed by the trace" not in (papers36 / "report.html").read_text(encoding="utf-8")
    assert "Audit findings by kind" in page["headings"]
    md = (papers36 / "report.md").read_text(encoding="utf-8")
    assert f"| reference_read | 0 | {sum(f['kind'] == 'reference_read' for f in report['findings'])} |" in md
    assert md.count("not confirmed by the trace") == 0
    _check_shots(tmp_path / "shots", figures)
    assert time.perf_counter() - started < 30


def test_1029_tasks_in_chromium(tasks1029: Path, tmp_path: Path) -> None:
    figures, page = _open(tasks1029, tmp_path / "shots")
    assert layout_problems(figures) == []
    shown = {ident: (svg, marks, notes) for ident, svg, marks, notes, *_ in figures}
    # 147 papers: a ranked strip, one point per paper and condition, not 147 names.
    assert shown["plot-by-paper"][:2] == (True, 2)
    assert shown["plot-pareto"][0] is True and shown["plot-pareto"][2] == []
    assert shown["plot-cost-time"] == (True, shown["plot-cost-time"][1], [])
    assert page["scroll"] <= page["client"], page
    report = json.loads((tasks1029 / "report.json").read_text(encoding="utf-8"))
    assert len(report["pareto"]) == 4 and any(p["frontier"] for p in report["pareto"])
    _check_shots(tmp_path / "shots", figures)


def test_the_layout_check_can_fail(tmp_path: Path) -> None:
    """A page whose labels overlap (as the crowded bars of a real benchmark did), one whose chart
    is empty axes, and one with neither chart nor sentence are each caught."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><head><link rel='icon' href='data:,'><title>x</title></head><body>"
        "<figure id='plot-crowded'><svg width='300' height='100'><g id='crowded-data-0'>"
        "<rect x='10' y='10' width='50' height='50'/></g>"
        "<text x='10' y='90' font-size='12'>paper-10</text><text x='30' y='92' font-size='12'>paper-11</text>"
        "<text x='280' y='50' font-size='12'>clipped label</text></svg></figure>"
        "<figure id='plot-empty'><svg width='300' height='100'><text x='10' y='20'>axes</text></svg></figure>"
        "<figure id='plot-nothing'><figcaption>x</figcaption></figure></body></html>", encoding="utf-8")
    driver = browser()
    try:
        driver.get(page.as_uri())
        problems = layout_problems(layout(driver))
    finally:
        driver.quit()
    assert problems == ["plot-crowded: 'paper-10' overlaps 'paper-11'", "plot-crowded: 'clipped label' is outside "
                        "the figure", "plot-empty: a chart without data", "plot-nothing: neither a chart nor a sentence"]
