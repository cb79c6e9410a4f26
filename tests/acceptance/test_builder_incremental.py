"""Incremental rebuilds: after a change record, ``rra build`` re-runs only the launchers whose
inputs the change touched (the script a launcher runs, the repository modules it imports, the
launchers it depends on), not every launcher from scratch."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.builder_repos import make_repo
from tests.rra_cli import rra

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "scripted_agent.py"


def ran(stderr: str) -> list[str]:
    return [line.split()[2].rstrip(":") for line in stderr.splitlines() if line.startswith("build: running ")]


def test_a_change_record_re_runs_only_the_launchers_it_touched(tmp_path: Path) -> None:
    raw = make_repo("dvc-pipeline", tmp_path)
    artifact = tmp_path / "artifact"
    build = ["build", str(raw), "-o", str(artifact), "--agent", shlex.join([sys.executable, str(AGENT), "dvc-pipeline"]),
             "--review-env", "current", "--build-env", "current"]
    first = rra(*build)
    assert first.returncode == 0, first.stderr
    assert ran(first.stderr) == ["generate", "prepare", "train", "evaluate"]
    # The author changes evaluate.py (the last stage), and records it.
    script = artifact / "src/evaluate.py"
    script.write_text(script.read_text() + "# rounding as in the paper's Table 1\n")
    recorded = rra("change", "record", "evaluate-comment", "src/evaluate.py", "-C", str(artifact), "--kind", "config",
                   "--rationale", "a comment for readers; no statement changes", "--evidence",
                   "diff: one line starting with # appended", "--alters-method", "no")
    assert recorded.returncode == 0, recorded.stderr
    again = rra(*build)
    assert again.returncode == 0, again.stderr
    # Only evaluate runs again in the execute step.
    assert ran(again.stderr) == ["evaluate"]
    for stage in ("generate", "prepare", "train"):
        assert f"build: {stage}: not run again: its inputs did not change since runs/{stage}/" in again.stderr
    state = json.loads((artifact / ".rra/build/state.json").read_text())
    execute = next(s for s in state["steps"] if s["name"] == "execute")
    assert set(execute["outputs"]["launcher_inputs"]) == {"generate", "prepare", "train", "evaluate"}
    # A change to the first stage re-runs it and every stage after it: their inputs are its outputs.
    first_stage = artifact / "src/generate.py"
    first_stage.write_text(first_stage.read_text() + "# the data of Section 4.1\n")
    assert rra("change", "record", "generate-comment", "src/generate.py", "-C", str(artifact), "--kind", "config",
               "--rationale", "a comment for readers; no statement changes", "--evidence",
               "diff: one line starting with # appended", "--alters-method", "no").returncode == 0
    third = rra(*build)
    assert third.returncode == 0, third.stderr
    assert ran(third.stderr) == ["generate", "prepare", "train", "evaluate"]
