"""The bench demo (examples/bench-demo): its raw repositories have the commits the task set and the
manifests name, its reference observations are what its artifacts' launchers really print, and
re-execution (``rra bench reproduce``) followed by ``rra bench report`` runs end to end on it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from rra_tools.model.bench_results import BenchResults

from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "bench-demo"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo with its raw repositories made by setup.sh, as the README does."""
    copy = tmp_path_factory.mktemp("demo") / "bench-demo"
    shutil.copytree(DEMO, copy)
    done = subprocess.run(["sh", str(copy / "setup.sh")], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return copy


def _yaml(path: Path) -> dict:  # type: ignore[type-arg]
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_setup_makes_the_commits_the_task_set_names(demo: Path) -> None:
    taskset = _yaml(demo / "taskset.yaml")
    for paper in taskset["papers"]:
        for task in paper["experiments"][0]["tasks"]:
            repo = demo / task["raw"]["repository"]
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                                  check=True).stdout.strip()
            assert head == task["raw"]["commit"], task["id"]
            manifest = (demo / task["artifact"] / "rra.yaml").read_text(encoding="utf-8")
            assert re.search(rf'commit: "{head}"', manifest), task["artifact"]


def test_the_demo_task_set_is_clean_under_bench_check() -> None:
    """Issue 25: the project's own demo warned (RRA957: the manifests' observations had no
    provenance). With or without the private references file, nothing is reported."""
    for extra in ([], ["--references", str(DEMO / "references.private.yaml")]):
        done = rra("bench", "check", str(DEMO / "taskset.yaml"), *extra, "--fail-on", "info")
        assert (done.returncode, done.stdout) == (0, "1 input(s) checked: 1 clean; 0 error(s), 0 warning(s), 0 info\n"), \
            done.stdout + done.stderr


def test_references_are_what_the_launchers_print_and_reproduce_runs(demo: Path) -> None:
    out = demo / "reproduced"
    done = rra("bench", "reproduce", str(demo / "taskset.yaml"), "-o", str(out), timeout=600)
    assert done.returncode == 0, done.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text(encoding="utf-8"))
    private = {r["task"]: [o["value"] for o in r["observations"]]
               for r in _yaml(demo / "references.private.yaml")["references"]}
    for task in results.tasks:
        key = f"{task.paper}/{task.experiment}/{task.task}"
        for attempt in task.attempts:
            assert attempt.state == "success", (key, attempt)
            # Deterministic launchers print the same number every run; the stochastic one, seed by
            # seed, the number recorded for that seed.
            assert attempt.value == private[key][attempt.seed or 0], (key, attempt.seed)
    stability = {t.task: t.interval.stability for t in results.tasks}
    assert stability == {"rmse": "stable", "accuracy": "stable", "pi": "variable"}
    done = rra("bench", "report", str(out / "results.json"), "-o", str(demo / "report"), timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads((demo / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["overall"]["rate"]["successes"] == report["overall"]["rate"]["cells"] == 6
