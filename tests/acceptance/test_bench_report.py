"""``rra bench report`` through the real CLI: the JSON against its generated schema, the numbers
against a hand count, the same bytes for the same seed, and the HTML page opened in a real
headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium), which
must log no console error and show every plot.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rra_tools.bench.report_plots import PLOTS
from rra_tools.model.schema import generated_schemas

from ..bench_synthetic import synthetic_results
from ..rra_cli import rra

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


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
    assert "## Audit findings" in md and "| hard_coded | yes |" in md


def test_same_seed_same_report(made: tuple[Path, dict[str, Any]]) -> None:
    tmp, _ = made
    results = tmp / "results.json"
    assert rra("bench", "report", str(results), "-o", str(tmp / "again")).returncode == 0
    for name in ("report.json", "report.html", "report.md"):
        assert (tmp / "again" / name).read_bytes() == (tmp / "out" / name).read_bytes(), name


def _browser() -> Any:
    missing = [p for p in (CHROMIUM, DRIVER) if shutil.which(p) is None]
    if missing:
        raise RuntimeError(f"{' and '.join(missing)} not found: apt-get install chromium chromium-driver "
                           "(.ci/run does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def test_html_renders_in_headless_chromium(made: tuple[Path, dict[str, Any]]) -> None:
    tmp, _ = made
    page = tmp / "out" / "report.html"
    driver = _browser()
    try:
        driver.get(page.as_uri())
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == [], errors
        assert driver.title == "Benchmark report: synthetic"
        # Every plot is there, drawn, and has something in it.
        figures = driver.execute_script(
            "return Array.from(document.querySelectorAll('figure')).map(f => {"
            "  const s = f.querySelector(':scope > svg'); const r = s ? s.getBoundingClientRect() : null;"
            "  return [f.id, r ? r.width : 0, r ? r.height : 0, s ? s.querySelectorAll('path').length : 0,"
            "          s ? s.textContent : '']; })")
        assert [f[0] for f in figures] == [f"plot-{ident}" for ident, _, _, _ in PLOTS]
        assert driver.execute_script("return document.querySelectorAll('svg').length") == len(PLOTS) == 6
        for ident, width, height, paths, text in figures:
            assert width > 200 and height > 100, (ident, width, height)
            if ident == "plot-factorial":
                # raw and refined only: the plot says there is nothing to analyse.
                assert "no ablation condition" in text
                continue
            assert paths > 5, (ident, paths)
        assert "Success by reproducer and condition" in figures[0][4]
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
        width, height, marks, text = driver.execute_script(
            "const s = document.querySelector('#plot-factorial > svg'); const r = s.getBoundingClientRect();"
            "return [r.width, r.height, s.querySelectorAll('path').length, s.textContent];")
        assert width > 200 and height > 100
        assert marks > 15  # a point and an error bar per effect
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
