"""``rra bench reproduce`` through the real CLI: a task set over a copy of
``examples/digits-logreg`` and a deterministic shell-script artifact built here, whose tasks land
inside their interval, outside it, with no value, on a failing program and on a timeout
(an infrastructure failure). Every attempt is
scored and counted in the denominator."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rra_tools.model.bench_results import BenchResults
from rra_tools.model.schema import generated_schemas

from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
FP = {"hardware": "x86_64", "software": "sh"}

SCRIPTS = {
    "emit.sh": "mkdir -p out\nprintf '{\"score\": 0.5}' > out/metrics.json\n",
    "empty.sh": "mkdir -p out\nprintf '{}' > out/empty.json\n",
    "fail.sh": "echo about to fail >&2\nexit 3\n",
    "slow.sh": "exec sleep 30\n",
}


def _claim(ident: str, launcher: str, output: str) -> dict[str, Any]:
    return {"id": ident, "paper_location": {"table": "1"}, "launcher": launcher,
            "metric": {"name": "score", "unit": "", "direction": "higher"},
            "extract": {"output": output, "json_pointer": "/score"},
            "reported": {"value": 0.5, "precision": 2},
            "reference": {"observations": [{"value": 0.5, "seed": s, "fingerprint": FP} for s in range(3)]}}


def shell_artifact(root: Path) -> Path:
    """A deterministic artifact of shell scripts: 'score' is always 0.5."""
    def launcher(ident: str, script: str, outputs: list[dict[str, str]], timeout_s: float = 30) -> dict[str, Any]:
        return {"id": ident, "argv": ["sh", script], "stochastic": False, "outputs": outputs,
                "resources": {"timeout_s": timeout_s, "expected_runtime_s": 0.5}}

    manifest = {
        "rra_version": "1.0", "id": "shell", "title": "Deterministic shell artifact",
        "paper": {"title": "Shell", "authors": [{"name": "Test"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [launcher("emit", "emit.sh", [{"id": "m", "path": "out/metrics.json", "format": "json"}]),
                      launcher("empty", "empty.sh", [{"id": "e", "path": "out/empty.json", "format": "json"}]),
                      launcher("fail", "fail.sh", [{"id": "f", "path": "out/fail.json", "format": "json"}]),
                      launcher("slow", "slow.sh", [{"id": "s", "path": "out/slow.json", "format": "json"}],
                               timeout_s=1)],
        "claims": [_claim("score", "emit", "m"), _claim("absent", "empty", "e"), _claim("broken", "fail", "f"),
                   _claim("late", "slow", "s")],
    }
    root.mkdir(parents=True)
    (root / "rra.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    for name, body in SCRIPTS.items():
        (root / name).write_text(body, encoding="utf-8")
    return root


def observations(*values: float) -> list[dict[str, Any]]:
    return [{"value": v, "by": "test", "machine": "x86_64", "code": "refined"} for v in values]


def taskset(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "examples" / "digits-logreg", tmp_path / "artifacts" / "digits",
                    ignore=shutil.ignore_patterns("results", "runs", "__pycache__"))
    shell_artifact(tmp_path / "artifacts" / "shell")
    data = {
        "bench_version": "1.0", "id": "demo", "repeats": 2,
        "papers": [
            {"id": "digits", "experiments": [{"id": "table-1", "tasks": [
                {"id": "accuracy", "artifact": "artifacts/digits", "claim": "test-accuracy"}]}]},
            {"id": "shell", "experiments": [{"id": "e1", "tasks": [
                {"id": "inside", "artifact": "artifacts/shell", "claim": "score",
                 "reference": observations(0.5, 0.5, 0.5)},
                {"id": "outside", "artifact": "artifacts/shell", "claim": "score",
                 "reference": observations(0.9, 0.9, 0.9)},
                {"id": "no-value", "artifact": "artifacts/shell", "claim": "absent"},
                {"id": "crash", "artifact": "artifacts/shell", "claim": "broken"},
                {"id": "too-slow", "artifact": "artifacts/shell", "claim": "late"}]}]},
        ],
    }
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    jsonschema.Draft202012Validator(json.loads(generated_schemas()["rra-taskset-1.0.schema.json"])).validate(data)
    return path


def test_reproduce_scores_every_attempt(tmp_path: Path) -> None:
    path = taskset(tmp_path)
    out = tmp_path / "out"
    proc = rra("bench", "reproduce", str(path), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(generated_schemas()["rra-bench-results-1.0.schema.json"])).validate(data)
    results = BenchResults.model_validate(data)
    states = {f"{t.paper}/{t.task}": [(a.seed, a.state) for a in t.attempts] for t in results.tasks}
    assert states == {
        # A stochastic launcher: one declared seed per attempt.
        "digits/accuracy": [(0, "success"), (1, "success")],
        "shell/inside": [(None, "success"), (None, "success")],
        "shell/outside": [(None, "outside_interval"), (None, "outside_interval")],
        "shell/no-value": [(None, "missing_value"), (None, "missing_value")],
        "shell/crash": [(None, "program_failure"), (None, "program_failure")],
        "shell/too-slow": [(None, "infrastructure_failure"), (None, "infrastructure_failure")],
    }
    # Every attempt is in the denominator, whatever its state.
    assert results.totals.attempts == 12
    assert results.totals.states == {"success": 4, "outside_interval": 2, "missing_value": 2,
                                     "program_failure": 2, "infrastructure_failure": 2}
    assert results.totals.success_rate == pytest.approx(4 / 12)
    digits, inside, outside, no_value, crash, slow = results.tasks
    # The digits task takes its 5 observations from the manifest; the values are the recorded ones.
    assert (digits.interval.source, digits.interval.n, digits.interval.stability) == ("manifest", 5, "variable")
    assert [a.value for a in digits.attempts] == [pytest.approx(96.88888888888889, abs=1e-9)] * 2
    assert (inside.interval.source, inside.interval.stability) == ("task", "stable")
    assert (inside.interval.low, inside.interval.high) == pytest.approx((0.495, 0.505))
    assert outside.attempts[0].value == 0.5
    assert outside.attempts[0].detail is not None and "is outside [0.895" in outside.attempts[0].detail
    assert crash.attempts[0].detail == "fail: exit status 3"
    assert no_value.attempts[0].detail is not None and no_value.attempts[0].detail.startswith("empty: failed: ")
    assert no_value.attempts[0].record is not None and no_value.attempts[0].value is None
    assert slow.attempts[0].detail is not None and slow.attempts[0].detail.startswith("slow: timeout")
    # Each attempt ran in its own copy; its record is named relative to the output directory.
    record = inside.attempts[1].record
    assert record is not None and record.startswith("work/shell/e1/inside/attempt-2/runs/emit/")
    assert json.loads((out / record).read_text())["metrics"] == {"score": 0.5}
    # The source artifacts are left alone.
    assert not (tmp_path / "artifacts" / "shell" / "runs").exists()
    assert "4/12 attempts succeeded (33.3 %): success 4, outside_interval 2, missing_value 2, " \
           "program_failure 2, infrastructure_failure 2" in proc.stdout
    assert "shell/e1/outside" in proc.stdout and "outside_interval 0.5; outside_interval 0.5" in proc.stdout


def test_usage_errors_name_the_task(tmp_path: Path) -> None:
    shell_artifact(tmp_path / "shell")
    task = {"id": "t", "artifact": "shell", "claim": "nope"}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"bench_version": "1.0", "id": "x",
                                "papers": [{"id": "p", "experiments": [{"id": "e", "tasks": [task]}]}]}))
    proc = rra("bench", "reproduce", str(path), "-o", str(tmp_path / "out"))
    assert proc.returncode == 2
    # The task-set check runs first (as 'rra bench check'): every error, located.
    assert proc.stderr.startswith(f"{path}:1:")
    assert ("error[RRA954] task 'p/e/t': artifact 'shell' has no claim 'nope' (it has 'score', 'absent', 'broken', "
            "'late')\n") in proc.stderr
    task.update(claim="score", reference=observations(0.5, 0.5))
    path.write_text(json.dumps({"bench_version": "1.0", "id": "x",
                                "papers": [{"id": "p", "experiments": [{"id": "e", "tasks": [task]}]}]}))
    proc = rra("bench", "reproduce", str(path), "-o", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert "error: task set " in proc.stderr
    assert "error[RRA951] at /papers/0/experiments/0/tasks/0/reference: List should have at least 3 items" \
        in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("sandbox", ["bwrap", "podman", "none"])
def test_the_launchers_run_in_the_attempts_sandbox(tmp_path: Path, sandbox: str) -> None:
    """An artifact's launcher that reads a file of the host by its absolute path and reaches for
    the network: in a sandbox it finds neither (and still scores), unsandboxed it reads the file."""
    secret = tmp_path / "secret.txt"
    secret.write_text("host-secret\n")
    root = shell_artifact(tmp_path / "artifacts" / "shell")
    # What it found goes into its declared output (an undeclared file would fail the run).
    (root / "emit.sh").write_text(f"""mkdir -p out
python3 - <<'PY'
import json, socket
try:
    peek = open({str(secret)!r}).read()
except OSError as exc:
    peek = str(exc)
try:
    socket.create_connection(("1.1.1.1", 443), 2)
    net = "connected"
except OSError as exc:
    net = str(exc)
json.dump({{"score": 0.5, "peek": peek, "net": net}}, open("out/metrics.json", "w"))
PY
""")
    data = {"bench_version": "1.0", "id": "peek", "repeats": 1, "papers": [{"id": "shell", "experiments": [
        {"id": "e1", "tasks": [{"id": "inside", "artifact": "artifacts/shell", "claim": "score",
                                "reference": observations(0.5, 0.5, 0.5)}]}]}]}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "out"
    proc = rra("bench", "reproduce", str(path), "-o", str(out), "--sandbox", sandbox)
    assert proc.returncode == 0, proc.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    assert [a.state for a in results.tasks[0].attempts] == ["success"]
    seen = json.loads((out / "work/shell/e1/inside/attempt-1/out/metrics.json").read_text())
    if sandbox == "none":
        assert seen["peek"] == "host-secret\n" and "--sandbox none" in proc.stderr
    else:
        assert "No such file or directory" in seen["peek"]
        assert "Network is unreachable" in seen["net"], seen
