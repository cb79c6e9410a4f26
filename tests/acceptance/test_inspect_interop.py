"""Inspect AI interop (issue 22 item 4): the tiny task set as an Inspect Task, run end to end by
Inspect's own ``eval`` with its ``mockllm/model`` (no key, no network), each command of the solver
run in RRA's bubblewrap sandbox over the cell's workspace, each sample scored by RRA's auditor and
interval; the eval log imported into a results file that ``rra bench report`` renders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.solver import Generate, Solver, TaskState, solver  # noqa: E402
from inspect_ai.util import sandbox  # noqa: E402

from rra_tools.interop.inspect import import_eval_log, rra_task  # noqa: E402
from rra_tools.model.bench_results import BenchResults  # noqa: E402

from ..bench_tiny import REPRODUCERS, tiny_artifact, tiny_taskset  # noqa: E402
from ..rra_cli import rra  # noqa: E402

pytestmark = pytest.mark.slow


@solver
def scripted(script: str) -> Solver:
    """Ask the mock model once (its turn is in the log), then run ``script`` in the sandbox."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await generate(state)
        ran = await sandbox().exec(["python3", "-c", script])
        state.metadata["exec"] = {"returncode": ran.returncode, "stderr": ran.stderr[-2000:]}
        return state

    return solve


def _mock_model(turns: int) -> Any:
    """Inspect's mockllm/model with scripted turns that state their usage (else mockllm counts
    tokens with tiktoken, whose encoding file is downloaded: no network here)."""
    outputs = []
    for _ in range(turns):
        output = ModelOutput.from_content(model="mockllm/model", content="I will run the launcher and submit.")
        output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        outputs.append(output)
    return get_model("mockllm/model", custom_outputs=outputs)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("inspect")
    tiny_artifact(tmp / "tiny")
    taskset, references = tiny_taskset(tmp, repeats=1, conditions=["refined"], limits={"wall_clock_s": 120})
    logs: dict[str, Any] = {}
    for name in ("honest", "typist"):
        task = rra_task(str(taskset), str(references), "refined", out=str(tmp / f"out-{name}"), sandbox="bwrap",
                        reproducer=name, solver=scripted(REPRODUCERS[name]))
        (log,) = inspect_eval(task, model=_mock_model(2), log_dir=str(tmp / f"logs-{name}"), display="none")
        logs[name] = log
    return {"tmp": tmp, "taskset": taskset, "references": references, "logs": logs}


def _verdicts(log: Any) -> dict[str, Any]:
    return {s.id: s.scores["rra_verdict"] for s in log.samples}


def test_one_sample_per_task_and_condition_scored_by_rra(evaluated: dict[str, Any]) -> None:
    log = evaluated["logs"]["honest"]
    assert log.status == "success", log.error
    assert sorted(s.metadata["rra_task"] for s in log.samples) == ["p/t1/exact", "p/t1/var"]
    for sample in log.samples:
        assert sample.metadata["rra_condition"] == "refined"
        assert "submission.json" in str(sample.input)  # the hand-over is the input
        assert sample.metadata["exec"]["returncode"] == 0, sample.metadata["exec"]
        assert sample.output.model == "mockllm/model"
    for key, score in _verdicts(log).items():
        result = score.metadata["rra_cell_result"]
        assert score.value == "C", score.explanation
        assert result["state"] == "success" and result["inside"] is True
        assert result["cell"]["reproducer"] == "honest" and result["value"] == 0.8125
        # (the exact task's value equals its references: an unconfirmed note, as in rra bench run)
        assert not [f for f in result["findings"] if f["confirmed"]]
        # The run happened in RRA's workspace: its run record is the submission's evidence.
        workspace = Path(result["workspace"])
        assert workspace.parts[0] == "cells"


def test_typed_value_is_an_audit_violation(evaluated: dict[str, Any]) -> None:
    log = evaluated["logs"]["typist"]
    assert log.status == "success", log.error
    for score in _verdicts(log).values():
        assert score.value == "I"
        assert score.metadata["rra_cell_result"]["state"] == "audit_violation"
        assert score.explanation.startswith("audit_violation")


def test_commands_ran_in_the_bwrap_sandbox(evaluated: dict[str, Any]) -> None:
    out = evaluated["tmp"] / "out-honest"
    assert len(list(out.rglob("inspect/exec-1/reproducer.stdout.log"))) == 2
    results = [json.loads(p.read_text()) for p in out.rglob("result.json")]
    assert len(results) == 2 and all(r["state"] == "success" for r in results)
    for result in results:
        assert result["sandbox"]["backend"] == "bwrap" and result["sandbox"]["network"] == "proxy-only"
        assert "RRA_BENCH_SUBMISSION" in result["sandbox"]["env"]


def test_eval_log_imports_into_bench_report(evaluated: dict[str, Any]) -> None:
    tmp = evaluated["tmp"]
    for name, log in evaluated["logs"].items():
        results = import_eval_log(log.location)
        assert results.mode == "score" and len(results.cells) == 2
        states = {str(c.state) for c in results.cells}
        assert states == ({"success"} if name == "honest" else {"audit_violation"})
        path = tmp / f"results-{name}.json"
        proc = rra("bench", "import-inspect", log.location, "-o", str(path))
        assert proc.returncode == 0, proc.stderr
        assert BenchResults.model_validate_json(path.read_text()).cells == results.cells
        report = rra("bench", "report", str(path), "-o", str(tmp / f"report-{name}"))
        assert report.returncode == 0, report.stderr


def test_inspect_eval_from_the_shell_finds_the_task(tmp_path: Path) -> None:
    """``inspect eval rra_tools/rra`` through the package's ``inspect_ai`` entry point (declared in
    pyproject.toml; when this checkout's install predates it, a stand-in declaration on
    PYTHONPATH), the solver a file of its own, the log imported by ``rra bench import-inspect``."""
    import os
    import subprocess
    import sys
    from importlib.metadata import entry_points

    tiny_artifact(tmp_path / "tiny")
    taskset, references = tiny_taskset(tmp_path, repeats=1, conditions=["refined"], limits={"wall_clock_s": 120})
    (tmp_path / "solver.py").write_text(
        "from inspect_ai.solver import solver\nfrom inspect_ai.util import sandbox\n\n"
        "@solver\ndef honest():\n    async def solve(state, generate):\n"
        f"        await sandbox().exec(['python3', '-c', {REPRODUCERS['honest']!r}])\n"
        "        return state\n    return solve\n", encoding="utf-8")
    env = dict(os.environ)
    if not any(ep.name == "rra_tools" for ep in entry_points(group="inspect_ai")):
        info = tmp_path / "ep" / "rra_tools_inspect_ep-0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rra-tools-inspect-ep\nVersion: 0\n")
        (info / "entry_points.txt").write_text("[inspect_ai]\nrra_tools = rra_tools.interop.inspect.registry\n")
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "ep"), env.get("PYTHONPATH", "")])
    inspect_cli = Path(sys.executable).with_name("inspect")
    proc = subprocess.run([str(inspect_cli), "eval", "rra_tools/rra", "-T", f"taskset={taskset}",
                           "-T", f"references={references}", "-T", "sandbox=bwrap", "-T", "reproducer=shell",
                           "-T", f"out={tmp_path / 'out'}", "--model", "mockllm/model",
                           "--solver", f"{tmp_path / 'solver.py'}@honest", "--log-dir", str(tmp_path / "logs"),
                           "--display", "plain"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (log,) = (tmp_path / "logs").glob("*.eval")
    out = rra("bench", "import-inspect", str(log), "-o", str(tmp_path / "results.json"))
    assert out.returncode == 0, out.stderr
    assert "success: 2" in out.stdout
    results = BenchResults.model_validate_json((tmp_path / "results.json").read_text())
    assert {c.cell.reproducer for c in results.cells} == {"shell"}


def test_missing_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from rra_tools.interop.inspect import INSTALL_HINT, InspectMissing

    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    with pytest.raises(InspectMissing) as caught:
        rra_task("tasks.json")
    assert caught.value.hint == INSTALL_HINT == "pip install 'rra-tools[inspect]'"


def test_import_of_a_log_without_verdicts_is_refused(evaluated: dict[str, Any], tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample

    (log,) = inspect_eval(Task(dataset=[Sample(input="hi")], solver=[]), model=_mock_model(0),
                          log_dir=str(tmp_path), display="none")
    proc = rra("bench", "import-inspect", log.location, "--taskset", str(evaluated["taskset"]))
    assert proc.returncode == 2 and "holds no RRA verdict" in proc.stderr
