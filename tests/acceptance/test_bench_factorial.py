"""The factorial demo (examples/bench-demo/factorial.yaml) through the real CLI: the three demo
artifacts, each without every combination of its four parts, handed to the literal reproducer
(48 real cells), then ``rra bench report``. The report must show the main effects the demo is
built to have: the repair matters (the spam filter fails without it), the launchers and the guide
each save the line fit when the other is gone (so their interaction is negative), and the lock
changes nothing (the demo's code needs no package). Every ablated cell records what was removed
and the digest of its tree."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from rra_tools.model.bench_report import BenchReport
from rra_tools.model.bench_results import BenchResults

from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "bench-demo"


@pytest.fixture(scope="module")
def factorial(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BenchResults, BenchReport]:
    copy = tmp_path_factory.mktemp("factorial") / "bench-demo"
    shutil.copytree(DEMO, copy)
    env = {**os.environ, "BENCH_DEMO": str(copy)}
    out = copy / "out"
    done = rra("bench", "run", str(copy / "factorial.yaml"), "-o", str(out), env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text(encoding="utf-8"))
    done = rra("bench", "report", str(out / "results.json"), "-o", str(copy / "report"), timeout=300)
    assert done.returncode == 0, done.stderr
    report = BenchReport.model_validate_json((copy / "report" / "report.json").read_text(encoding="utf-8"))
    return copy, results, report


def test_every_combination_ran_and_records_its_transformation(
        factorial: tuple[Path, BenchResults, BenchReport]) -> None:
    _, results, _ = factorial
    assert len(results.cells) == 3 * 16
    states = {(c.cell.task.split("/")[0], c.cell.condition): c.state for c in results.cells}
    assert {s for (paper, _), s in states.items() if paper == "counting-darts"} == {"success"}
    # The spam filter needs its repair, whatever else is there.
    assert {cond for (paper, cond), s in states.items() if paper == "filtering-spam" and s != "success"} == {
        cond for (paper, cond) in states if paper == "filtering-spam" and "repairs" in cond}
    # The line fit misses (the paper's 80 % split) only without both the launchers and the guide.
    assert {cond for (paper, cond), s in states.items() if paper == "fitting-lines" and s != "success"} == {
        cond for (paper, cond) in states if paper == "fitting-lines" and "launchers-guide" in cond}
    by_key = {c.cell.key: c for c in results.cells}
    assert by_key["filtering-spam/table-2/accuracy/refined/literal/1"].transformation is None
    cell = by_key["filtering-spam/table-2/accuracy/refined-without-repairs-lock/literal/1"]
    assert cell.transformation is not None
    assert cell.transformation.without == ["repairs", "lock"]
    assert cell.transformation.removed == ["0001-corpus-path.patch", "requirements.lock"]
    assert cell.transformation.reverted == ["classify.py"]
    assert cell.transformation.fields == ["/code/patches", "/changes/0", "/environment/lock"]
    digests = {c.transformation.tree_digest for c in results.cells if c.transformation is not None}
    # Each ablation of each artifact is its own tree, except that 'repairs' changes nothing in the
    # two artifacts without a patch series (X and repairs + X are one tree there): 15 + 8 + 8.
    assert len(digests) == 15 + 8 + 8


def test_report_shows_the_main_effects(factorial: tuple[Path, BenchResults, BenchReport]) -> None:
    copy, _, report = factorial
    pooled = report.factorial[0]
    assert pooled.design == "full" and pooled.parts == ["repairs", "lock", "launchers", "guide"]
    effects = {tuple(e.parts): e.estimate for e in pooled.effects}
    assert len(effects) == 15
    # Out of 3 tasks: the repair decides 1 (+1/3); launchers and guide each 1/2 of one task (+1/6).
    assert effects[("repairs",)] == pytest.approx(1 / 3)
    assert effects[("lock",)] == pytest.approx(0.0, abs=1e-12)
    assert effects[("launchers",)] == pytest.approx(1 / 6)
    assert effects[("guide",)] == pytest.approx(1 / 6)
    assert effects[("launchers", "guide")] == pytest.approx(-1 / 6)
    for e in pooled.effects:
        assert e.ci_low is not None and e.ci_high is not None and e.estimate is not None
        assert e.ci_low - 1e-12 <= e.estimate <= e.ci_high + 1e-12
    markdown = (copy / "report" / "report.md").read_text(encoding="utf-8")
    assert "Main effects on success (all reproducers, full design): repairs +33.3 pp [" in markdown
    assert "| all (pooled) | main effect | lock | +0.0 pp [+0.0, +0.0] |" in markdown
    page = (copy / "report" / "report.html").read_text(encoding="utf-8")
    assert '<figure id="plot-factorial"><svg' in page and "launchers × guide" in page
    assert json.loads((copy / "report" / "report.json").read_text())["factorial"][0]["design"] == "full"


def test_wrong_conditions_are_located_errors_of_the_cli(tmp_path: Path) -> None:
    text = (DEMO / "factorial.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("factorial: [repairs, lock, launchers, guide]", "factorial: [repairs, docs]"),
                   encoding="utf-8")
    shutil.copytree(DEMO / "artifacts", tmp_path / "artifacts")
    done = rra("bench", "run", str(bad), "-o", str(tmp_path / "out"))
    assert done.returncode == 2
    # The task-set check runs first (as 'rra bench check'): every error, located.
    assert done.stderr.startswith(f"{bad}:10:22: error[RRA951] at /factorial/1: Input should be 'repairs', 'lock', "
                                  "'launchers' or 'guide'\n10 | factorial: [repairs, docs]\n")
    assert done.stderr.endswith(f"error: task set {str(bad)!r} has 1 error(s); 'rra bench check' lists them\n")
    done = rra("bench", "run", str(DEMO / "factorial.yaml"), "--condition", "refined-without-docs",
               "-o", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "error: unknown condition 'refined-without-docs'"
    assert not (tmp_path / "out").exists()
