"""An environment that cannot be built is a repair decision, not a dead end; a repair that changes
the requirements is locked again before the next attempt runs (issue 24's corpus: old pins that
failed to build from source stopped the build outright, and a repaired pin was tried in the old
environment)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from rra_tools.builder.build import BuildOptions, build
from rra_tools.run import locked_env
from rra_tools.run.errors import ArtifactError
from tests.builder_repos import make_repo

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "scripted_agent.py"


def test_an_environment_that_cannot_be_built_is_repaired_and_locked_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RRA_CACHE_DIR", str(tmp_path / "cache"))
    real = locked_env.locked_environment
    calls: list[int] = []

    def first_fails(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:  # what uv says when a pin has no wheel and its sdist does not build
            raise ArtifactError("--env locked: installing the packages of pylock.toml (hash-checked) failed: "
                                "numpy==1.15.4: Failed to build")
        return real(*args, **kwargs)

    monkeypatch.setattr(locked_env, "locked_environment", first_fails)
    raw = make_repo("deterministic-metrics", tmp_path)
    said: list[str] = []
    result = build(BuildOptions(raw=raw, artifact=tmp_path / "artifact", sandbox="none", review_env="current",
                                agent=shlex.join([sys.executable, str(AGENT), "environment-repair"])), said.append)
    root = result.artifact
    request = json.loads((root / ".rra/build/decisions/repair-environment-1.request.json").read_text())
    assert (request["kind"], request["step"], request["attempt"]) == ("repair", "execute", 1)
    assert request["question"].startswith("the environment of the lock cannot be built")
    assert "numpy==1.15.4: Failed to build" in request["log_tail"]
    assert "recorded change requirements-in: patches/0002-requirements-in.patch (requirements.in)" in said \
        or any(line.startswith("recorded change requirements-in: ") for line in said)
    # The repair changed requirements.in: the lock is made again before the launcher's next attempt.
    assert "execute changed the inputs of lock: running it again" in said
    steps = {s.name: s for s in result.steps}
    assert (steps["lock"].runs, steps["execute"].runs, steps["review"].status) == (2, 2, "done")
    assert steps["execute"].outputs["environment_repairs"] == 1
    record = json.loads(next((root / "runs/evaluate").glob("*/record.json")).read_text())
    assert record["host"]["environment"] == "locked"
