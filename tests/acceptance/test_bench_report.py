"""``rra bench report`` through the real CLI: the JSON against its generated schema, the numbers
against a hand count, the same bytes for the same seed, and the HTML page opened in a real
headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium), which
must log no console error and show every plot.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rra_tools.bench.report.plots import PLOTS
from rra_tools.model.schema import generated_schemas

from ..bench_synthetic import synthetic_results
from ..report_browser import browser as _browser
from ..report_browser import layout, layout_problems
from ..rra_cli import rra


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("report")
    data = synthetic_results(3, 4, repeats=2)
    results = tmp / "results.json"
    results.write_text(json.dumps(data), encoding="utf-8")
    done = rra("bench", "report", str(results), "-o", str(tmp / "out"), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-3:] == [f"wrote {tmp / 'out' / name}"
                                             for name in ("report.json", "report.html", "report.md")]
    return tmp, data


def test_report_json_counts_every_cell(made: tuple[Path, dict[str, Any]]) -> None:
    tmp, data = made
    report = json.loads((tmp / "out" / "report.json").read_text(encoding="utf-8"))
    schema = json.loads(generated_schemas()["rra-bench-report-1.0.schema.json"])
    jsonschema.Draft202012Validator(schema).validate(report)
    cells = data["cells"]
    assert report["overall"]["rate"]["cells"] == len(cells) == 3 * 4 * 4 * 2 * 2
    assert report["overall"]["rate"]["successes"] == sum(c["state"] == "success" for c in cells)
    assert sum(report["overall"]["states"].values()) == len(cells)
    for group in report["by_reproducer_condition"]:
        mine = [c for c in cells if c["cell"]["reproducer"] == group["reproducer"]
                and c["cell"]["condition"] == group["condition"]]
        rate = group["rate"]
        assert (rate["cells"], rate["successes"]) == (len(mine), sum(c["state"] == "success" for c in mine))
        assert rate["ci_low"] <= rate["rate"] <= rate["ci_high"]
    assert {g["reproducer"] for g in report["by_reproducer_condition"]} == {"honest", "sloppy", "cheating", "slow"}
    # Every infrastructure failure and every audit finding is listed, with its evidence.
    assert len(report["infrastructure"]) == sum(c["state"] == "infrastructure_failure" for c in cells)
    assert all(f["kind"] == "timeout" for f in report["infrastructure"])
    assert len(report["findings"]) == sum(len(c.get("findings", [])) for c in cells) > 0
    assert report["findings"][0]["evidence"] == ["submission.json", "runs/train/0-2026/record.json"]
    (pair,) = report["paired"]
    assert (pair["condition_a"], pair["condition_b"], len(pair["tasks"])) == ("raw", "refined", 12)
    assert [s["condition"] for s in report["spread"]] == ["raw", "refined"]
    assert all(s["best_rate"] - s["worst_rate"] == pytest.approx(s["spread"]) for s in report["spread"])
    md = (tmp / "out" / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# Benchmark report: synthetic\n")
    assert "## Audit findings by kind" in md and "| hard_coded | " in md
    assert f"| hard_coded | {len(report['findings'])} | 0 |" in md


def test_same_seed_same_report(made: tuple[Path, dict[str, Any]]) -> None:
    tmp, _ = made
    results = tmp / "results.json"
    assert rra("bench", "report", str(results), "-o", str(tmp / "again")).returncode == 0
    for name in ("report.json", "report.html", "report.md"):
        assert (tmp / "again" / name).read_bytes() == (tmp / "out" / name).read_bytes(), name


def test_html_renders_in_headless_chromium(made: tuple[Path, dict[str, Any]]) -> None:
    tmp, _ = made
    page = tmp / "out" / "report.html"
    driver = _browser()
    try:
        driver.get(page.as_uri())
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == [], errors
        assert driver.title == "Benchmark report: synthetic"
        # Every plot is there, drawn with data and readable, or said in words.
        figures = layout(driver)
        assert layout_problems(figures) == []
        assert [f[0] for f in figures] == [f"plot-{ident}" for ident, _, _ in PLOTS]
        assert driver.execute_script("return document.querySelectorAll('svg').length") == len(PLOTS) - 1 == 7
        for ident, svg, marks, notes, _, _, width, height in figures:
            if ident == "plot-factorial":
                # raw and refined only: the page says there is nothing to analyse.
                assert (svg, notes) == (False, ["No ablation condition: there is no factorial effect to show."])
                continue
            assert svg and marks >= 1 and notes == [] and width > 200 and height > 100, (ident, marks, width, height)
        assert "Success by reproducer and condition" in driver.find_element("css selector", "#plot-by-reproducer").text
        # Text from the results is shown as text, never run.
        assert driver.execute_script("return document.scripts.length") == 0
        assert "<script>alert('escaped?')</script>" not in page.read_text(encoding="utf-8")
        # Nothing is fetched: no resource other than the page itself.
        assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    finally:
        driver.quit()


def test_factorial_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    """With ablation conditions, the page's factorial plot is drawn (every effect with its
    interval) and its tables are there."""
    import itertools

    from rra_tools.model.taskset import condition_name

    parts = ("repairs", "lock", "launchers", "guide")
    conditions = tuple(condition_name(c) for n in range(5) for c in itertools.combinations(parts, n))
    results = tmp_path / "results.json"
    results.write_text(json.dumps(synthetic_results(3, 2, repeats=1, reproducers=("honest",),
                                                    conditions=("raw", *conditions))), encoding="utf-8")
    done = rra("bench", "report", str(results), "-o", str(tmp_path / "out"), timeout=300)
    assert done.returncode == 0, done.stderr
    driver = _browser()
    try:
        driver.get((tmp_path / "out" / "report.html").as_uri())
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == [], errors
        figures = {f[0]: f for f in layout(driver)}
        assert layout_problems(list(figures.values())) == []
        _, _, marks, _, _, _, width, height = figures["plot-factorial"]
        assert width > 200 and height > 100
        assert marks >= 15  # a point and an error bar per effect
        text = driver.execute_script("return document.querySelector('#plot-factorial > svg').textContent")
        assert "launchers × guide" in text and "full design" in text
        headings = driver.execute_script("return Array.from(document.querySelectorAll('h2')).map(h => h.textContent)")
        assert any(h.startswith("Factorial effects on the success rate") for h in headings)
        assert "Main effects on success (all reproducers, full design): repairs +" in driver.find_element(
            "css selector", ".summary").text
    finally:
        driver.quit()


def test_an_html_page_with_an_error_is_caught(tmp_path: Path) -> None:
    """The browser check can fail: a page whose script errs and that lacks a plot is seen as such."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><head><link rel='icon' href='data:,'><title>x</title></head><body>"
                    "<figure id='plot-x'></figure><script>undefinedFunction()</script></body></html>")
    driver = _browser()
    try:
        driver.get(page.as_uri())
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors and "undefinedFunction" in errors[0]["message"]
        assert driver.execute_script("return document.querySelectorAll('figure svg').length") == 0
    finally:
        driver.quit()


def test_not_a_results_file(tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text('{"bench_version": "1.0", "mode": "run"}', encoding="utf-8")
    done = rra("bench", "report", str(bad))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: results file {str(bad)!r} is not a benchmark results file: at /taskset: "
                                  "Field required\n")
    bad.write_text("{", encoding="utf-8")
    done = rra("bench", "report", str(bad))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: results file {str(bad)!r} cannot be read as JSON: ")
