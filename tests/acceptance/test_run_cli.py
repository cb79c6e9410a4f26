"""``rra run`` and ``rra results`` as a user runs them: real subprocesses, signals, concurrent
GPU runs, and the digits example end to end."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rra_tools.run.gpus import INVENTORY_ENV, LOCK_DIR_ENV
from rra_tools.validate import validate_path

from ..rra_cli import rra
from .test_run_local import make_artifact

REPO = Path(__file__).resolve().parents[2]


def records(root: Path, launcher: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((root / "runs" / launcher).glob("*/record.json"))]


@pytest.fixture()
def art(tmp_path: Path) -> Path:
    return make_artifact(tmp_path / "art")


def test_run_streams_output_and_exits_0(art: Path) -> None:
    proc = rra("run", str(art), "ok", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    assert "seed 1 done acc=0.5\n" in proc.stdout
    assert "[rra] run ok seed 1 (1/1): python ok.py 1" in proc.stderr
    assert "[rra] ok seed 1: completed, exit 0" in proc.stderr
    assert [r["seed"] for r in records(art, "ok")] == [1]


def test_run_all_seeds_and_default_artifact(art: Path) -> None:
    proc = rra("run", "ok", "--all-seeds", cwd=art)
    assert proc.returncode == 0, proc.stderr
    assert sorted(r["seed"] for r in records(art, "ok")) == [0, 1]


def test_failed_run_exits_1(art: Path) -> None:
    proc = rra("run", str(art), "fail")
    assert proc.returncode == 1
    assert "[rra]   process exited with status 3" in proc.stderr


def test_usage_errors_exit_2(art: Path) -> None:
    proc = rra("run", str(art), "nope")
    assert proc.returncode == 2
    assert "error: unknown launcher 'nope'; the manifest declares 'ok', " in proc.stderr
    proc = rra("run", str(art), "missing", "--param", "colour=red")
    assert proc.returncode == 2
    assert "error: launcher 'missing' has no parameter 'colour' (it has 'flavour')" in proc.stderr
    proc = rra("run", str(art), "fail", "--seed", "3")
    assert proc.returncode == 2
    assert "error: launcher 'fail' is not stochastic; it takes no seed" in proc.stderr
    assert not (art / "runs").exists()


def test_param_override_reaches_outputs(art: Path) -> None:
    proc = rra("run", str(art), "missing", "--param", "flavour=spicy")
    assert proc.returncode == 1
    (record,) = records(art, "missing")
    assert record["parameters"] == {"flavour": "spicy"}
    assert record["missing_outputs"] == [{"id": "never", "path": "out/never-spicy.json"}]


def test_sigint_records_interrupted(art: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "rra_tools", "run", str(art), "slow"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    (record,) = records(art, "slow")
    assert record["status"] == "interrupted" and record["exit_status"] is None
    assert record["messages"][0].startswith("interrupted after ")
    assert "interrupted; remaining runs skipped" in err


def test_sigterm_records_interrupted(art: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "rra_tools", "run", str(art), "slow"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 1
    (record,) = records(art, "slow")
    assert record["status"] == "interrupted"


def test_concurrent_gpu_runs_get_disjoint_devices(art: Path, tmp_path: Path) -> None:
    env = dict(os.environ)
    env[INVENTORY_ENV] = json.dumps([{"index": 0, "model": "Fake"}, {"index": 1, "model": "Fake"}])
    env[LOCK_DIR_ENV] = str(tmp_path / "locks")
    procs = [subprocess.Popen([sys.executable, "-m", "rra_tools", "run", str(art), "gpu"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        # each launcher prints its devices, then waits for the 'go' file: both hold a GPU now
        seen = []
        for proc in procs:
            assert proc.stdout is not None
            seen.append(proc.stdout.readline())
        assert sorted(seen) == ["CUDA_VISIBLE_DEVICES=0\n", "CUDA_VISIBLE_DEVICES=1\n"]
        third = rra("run", str(art), "gpu", env=env)
        assert third.returncode == 1
        assert "[rra] error: launcher 'gpu' needs 1 GPU(s); only 0 of 2 are free" in third.stderr
    finally:
        (art / "out").mkdir(exist_ok=True)
        (art / "out" / "go").touch()
        outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sorted(r["gpus"][0] for r in records(art, "gpu")) == [0, 1]


def test_too_many_gpus_is_a_clear_error(art: Path, tmp_path: Path) -> None:
    env = dict(os.environ)
    env[INVENTORY_ENV] = json.dumps([{"index": 0, "model": "Fake"}])
    env[LOCK_DIR_ENV] = str(tmp_path / "locks")
    proc = rra("run", str(art), "gpu3", env=env)
    assert proc.returncode == 1
    assert "[rra] error: launcher 'gpu3' needs 3 GPU(s); this machine has 1" in proc.stderr


def test_results_json(art: Path) -> None:
    assert rra("run", str(art), "ok", "--all-seeds").returncode == 0
    proc = rra("results", str(art), "--format", "json")
    data = json.loads(proc.stdout)
    by_id = {c["claim"]: c for c in data["claims"]}
    assert by_id["ok-acc"]["obtained"] == pytest.approx(50.05)
    assert by_id["ok-acc"]["inside"] is True
    assert [v["seed"] for v in by_id["ok-acc"]["values"]] == [0, 1]
    assert by_id["bad-acc"]["inside"] is None
    assert by_id["bad-acc"]["problem"] == "no successful run record has a value"
    assert proc.returncode == 1


@pytest.mark.slow
def test_digits_example_end_to_end(tmp_path: Path) -> None:
    work = tmp_path / "digits"
    shutil.copytree(REPO / "examples" / "digits-logreg", work, ignore=shutil.ignore_patterns("runs", "results"))
    proc = rra("run", "--all", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert len(list((work / "runs" / "train").glob("*/record.json"))) == 5
    text = rra("results", cwd=work)
    assert text.returncode == 0, text.stdout + text.stderr
    assert "  verdict   inside\n" in text.stdout
    assert "met: available, functional, reproduced" in text.stdout
    result = validate_path(work)
    assert result.levels_met == ["available", "functional", "reproduced"]
    assert not result.diagnostics or all(d.severity.value != "error" for d in result.diagnostics)


def test_bad_gpu_inventory_is_a_usage_error(art: Path) -> None:
    env = dict(os.environ, **{INVENTORY_ENV: "not json"})
    proc = rra("run", str(art), "fail", env=env)
    assert proc.returncode == 2
    assert "error: RRA_GPU_INVENTORY is not a JSON list of GPU objects: " in proc.stderr


def test_run_all_follows_dependencies_and_skips_dependents_of_failures(tmp_path: Path) -> None:
    root = tmp_path / "deps"
    root.mkdir()
    base = {"stochastic": False, "resources": {"timeout_s": 30, "expected_runtime_s": 1}}
    doc = {
        "rra_version": "1.0", "id": "deps", "title": "Dependencies",
        "paper": {"title": "T", "authors": [{"name": "A"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [
            {"id": "report", "argv": ["python", "-c", "print('report')"], "depends_on": ["train"], **base},
            {"id": "train", "argv": ["python", "-c", "print('train')"], "depends_on": ["prep"], **base},
            {"id": "prep", "argv": ["python", "-c", "print('prep')"], **base},
            {"id": "broken", "argv": ["python", "-c", "raise SystemExit(2)"], **base},
            {"id": "after-broken", "argv": ["python", "-c", "print('no')"], "depends_on": ["broken"], **base},
        ],
    }
    (root / "rra.yaml").write_text(json.dumps(doc), encoding="utf-8")
    proc = rra("run", "--all", str(root))
    assert proc.returncode == 1
    assert proc.stdout.split() == ["prep", "train", "report"]
    assert "[rra] skip after-broken: dependency 'broken' did not complete" in proc.stderr
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["broken", "prep", "report", "train"]


def test_docs_library_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    work = tmp_path / "digits"
    shutil.copytree(REPO / "examples" / "digits-logreg", work, ignore=shutil.ignore_patterns("runs", "results"))
    text = (REPO / "docs" / "run.md").read_text(encoding="utf-8")
    one, plan = re.findall(r"```python\n(.*?)```", text, re.S)
    exec(compile(one.replace('"examples/digits-logreg"', repr(str(work))), "docs/run.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("completed {'test-accuracy': ")
    exec(compile(plan.replace('"examples/digits-logreg"', repr(str(work))), "docs/run.md", "exec"), {})
    assert capsys.readouterr().out.endswith("train completed\nTrue 1 []\n")


def test_everything_printed_reaches_the_pipe_before_the_fast_exit(tmp_path: Path) -> None:
    # `rra run` ends with os._exit (no interpreter finalization); what it and the launcher
    # printed must still all arrive, and the exit status must be the run's.
    from .test_run_local import _tree_artifact

    root = _tree_artifact(tmp_path / "art", "for i in range(100000):\n    print(f'line {i}')\n")
    proc = rra("run", str(root), "job")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"line {i}" for i in range(100000)]
    assert proc.stderr.rstrip("\n").splitlines()[-1].startswith("[rra] job noseed: completed, exit 0")
    bad = rra("run", str(root), "job", "--seed", "x")
    assert bad.returncode == 2 and "'x' is not a valid integer" in bad.stderr


def test_manifest_with_errors_is_not_run_unless_forced(art: Path) -> None:
    data = json.loads((art / "rra.yaml").read_text())
    data["claims"][0]["launcher"] = "nope"  # RRA201: the claim names no launcher of the manifest
    (art / "rra.yaml").write_text(json.dumps(data, indent=1))
    proc = rra("run", str(art), "ok", "--seed", "1")
    assert (proc.returncode, proc.stdout) == (2, "")
    lines = proc.stderr.splitlines()
    assert lines[0] == "error: the manifest has 1 error(s) ('rra validate' explains them):"
    assert lines[1].startswith(f"  {art / 'rra.yaml'}:") and "error[RRA201] " in lines[1]
    assert lines[2:] == ["nothing was run; fix them, or run anyway with --force"]
    assert not (art / "runs").exists()
    forced = rra("run", str(art), "ok", "--seed", "1", "--force")
    assert forced.returncode == 0, forced.stderr
    assert forced.stderr.startswith("warning: the manifest has 1 error(s) ('rra validate' explains them):\n")
    assert [r["seed"] for r in records(art, "ok")] == [1]


def test_artifact_alone_suggests_the_launcher_form(art: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ids = [launcher["id"] for launcher in json.loads((art / "rra.yaml").read_text())["launchers"]]
    for where, given in ((elsewhere, str(art)), (art, ".")):
        proc = rra("run", given, cwd=where)
        assert (proc.returncode, proc.stdout) == (2, "")
        # Never "unknown launcher '.'": the argument is the artifact, whose launcher is missing.
        assert f"Error: {given!r} is the artifact; give the launcher to run after it: rra run {given} ok (its " \
               f"launchers: {', '.join(ids)}), or run them all: rra run {given} --all\n" in proc.stderr
        assert "unknown launcher" not in proc.stderr
        assert not (art / "runs").exists()


def test_dot_is_the_artifact_and_its_only_launcher_runs(art: Path) -> None:
    data = json.loads((art / "rra.yaml").read_text())
    data["launchers"] = [launcher for launcher in data["launchers"] if launcher["id"] == "ok"]
    data["claims"] = [claim for claim in data["claims"] if claim["launcher"] == "ok"]
    (art / "rra.yaml").write_text(json.dumps(data, indent=1))
    proc = rra("run", ".", cwd=art)
    assert proc.returncode == 0, proc.stderr
    assert "[rra] run ok seed 0 (1/1): python ok.py 0" in proc.stderr
    assert [r["seed"] for r in records(art, "ok")] == [0]
    proc = rra("run", ".", "ok", "--seed", "1", cwd=art)  # rra run [ARTIFACT] LAUNCHER with '.'
    assert proc.returncode == 0, proc.stderr
    assert sorted(r["seed"] for r in records(art, "ok")) == [0, 1]


def test_a_launcher_named_like_a_directory_is_the_launcher(art: Path) -> None:
    (art / "ok").mkdir()  # the manifest of '.' declares 'ok': a launcher first, not a directory
    proc = rra("run", "ok", "--seed", "1", cwd=art)
    assert proc.returncode == 0, proc.stderr
    assert [r["seed"] for r in records(art, "ok")] == [1]


def test_dot_with_a_broken_manifest_says_what_is_wrong_with_it(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").write_text("rra_version: [\n")
    proc = rra("run", ".", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("error: rra.yaml:2:1: YAML syntax error: "), proc.stderr
    assert "unknown launcher" not in proc.stderr


@pytest.mark.parametrize("kept", [1, 2])
def test_too_few_reference_observations_do_not_stop_a_run(art: Path, kept: int) -> None:
    # A drafted manifest holds one observation (the authors' value); the runs make the others,
    # so RRA502 is said as a warning and the launcher runs, as its hint says.
    data = json.loads((art / "rra.yaml").read_text())
    for claim in data["claims"]:
        claim["reference"]["observations"] = claim["reference"]["observations"][:kept]
    (art / "rra.yaml").write_text(json.dumps(data, indent=1))
    proc = rra("run", str(art), "ok", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    claims = len(data["claims"])
    assert lines[0] == (f"warning: the manifest has {claims} error(s) that do not stop a run (the runs are how they "
                        "are mended; 'rra validate' explains them):")
    assert claims > 1 and all("error[RRA502] " in line for line in lines[1:1 + claims])
    assert "nothing was run" not in proc.stderr
    assert [r["seed"] for r in records(art, "ok")] == [1]
