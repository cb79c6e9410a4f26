"""Where authors and CI run the validator: the pre-commit hook (run for real) and the GitHub Action."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "conformance" / "v1.0" / "bases" / "minimal"
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed snapshot of this repository for pre-commit to install the hook from."""
    snapshot = tmp_path_factory.mktemp("hook-repo")
    tracked = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    for rel in tracked:
        source = ROOT / rel
        if source.is_file() and not source.is_symlink():
            (snapshot / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / rel)
    git(snapshot, "init", "-q")
    git(snapshot, "add", "-A")
    git(snapshot, "commit", "-qm", "snapshot")
    return snapshot


def sample_repo(tmp: Path, hook_repo: Path, *, broken: bool) -> Path:
    repo = tmp / ("broken" if broken else "good")
    shutil.copytree(BASE, repo / "artifact")
    if broken:
        manifest = (repo / "artifact" / "rra.yaml").read_text().replace("launcher: train", "launcher: trian")
        (repo / "artifact" / "rra.yaml").write_text(manifest)
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, check=True, capture_output=True,
                         text=True).stdout.strip()
    config = {"repos": [{"repo": str(hook_repo), "rev": rev, "hooks": [{"id": "rra-validate"}]}]}
    with open(repo / ".pre-commit-config.yaml", "w") as handle:
        YAML().dump(config, handle)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    return repo


@pytest.mark.slow
def test_pre_commit_hook_fails_broken_and_passes_good(tmp_path: Path, hook_repo: Path) -> None:
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    good = sample_repo(tmp_path, hook_repo, broken=False)
    ok = subprocess.run([str(PRE_COMMIT), "run", "--all-files"], cwd=good, capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "rra validate" in ok.stdout and "Passed" in ok.stdout
    bad = sample_repo(tmp_path, hook_repo, broken=True)
    fail = subprocess.run([str(PRE_COMMIT), "run", "--all-files"], cwd=bad, capture_output=True, text=True, env=env)
    assert fail.returncode == 1, fail.stdout + fail.stderr
    assert "Failed" in fail.stdout and "error[RRA201] launcher 'trian' is not declared" in fail.stdout


def test_hook_definition_matches_manifest_names() -> None:
    import re

    [hook] = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "rra-validate" and hook["entry"] == "rra validate" and hook["language"] == "python"
    pattern = re.compile(hook["files"])
    assert all(pattern.search(p) for p in ("rra.yaml", "a/b/rra.yml", "x/rra.json"))
    assert not any(pattern.search(p) for p in ("rra.yaml.bak", "myrra.yaml", "docs/rra.md"))


def test_action_validate_step_runs(tmp_path: Path) -> None:
    """The composite action's validate step, run with bash as the runner would, on a broken artifact."""
    action = YAML(typ="safe").load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "validate")
    artifact = tmp_path / "artifact"
    shutil.copytree(BASE, artifact)
    (artifact / "rra.yaml").write_text((artifact / "rra.yaml").read_text().replace("launcher: train", "launcher: x"))
    output = tmp_path / "github_output"
    env = {**os.environ, "RRA_PATHS": str(artifact), "RRA_FAIL_ON": "error", "RRA_SARIF": str(tmp_path / "r.sarif"),
           "GITHUB_OUTPUT": str(output), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert output.read_text() == "exit-code=1\n"
    assert "::error file=" in proc.stdout and "RRA201" in proc.stdout
    import json

    sarif = json.loads((tmp_path / "r.sarif").read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"][0]["ruleId"] == "RRA201"
