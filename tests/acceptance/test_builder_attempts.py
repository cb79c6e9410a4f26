"""A failed attempt of ``rra build``'s execute step is kept as the repair's evidence, but set
aside: it is no run record (levels, results and the review see only the repaired code's runs) and
``.rraignore`` leaves it out of a pack unless its line is deleted."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from rra_tools.io.tree import walk_tree
from tests.builder_repos import make_repo
from tests.rra_cli import rra

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "scripted_agent.py"


def test_a_failed_attempt_is_kept_aside_and_not_packed(tmp_path: Path) -> None:
    raw = make_repo("stale-python", tmp_path)
    artifact = tmp_path / "artifact"
    done = rra("build", str(raw), "-o", str(artifact), "--agent", shlex.join([sys.executable, str(AGENT), "stale-python"]),
               "--review-env", "current", "--build-env", "current")
    assert done.returncode == 0, done.stderr
    attempts = sorted((artifact / ".rra/build/attempts/score").iterdir())
    assert len(attempts) == 1 and (attempts[0] / "stderr.log").is_file()
    record = json.loads((attempts[0] / "record.json").read_text())
    assert (record["exit_status"], record["status"]) == (1, "completed")
    assert f"build: score: failed attempt kept in .rra/build/attempts/score/{attempts[0].name} (not a run record)" \
        in done.stderr
    # The repair request cites the attempt where it is now.
    request = json.loads((artifact / ".rra/build/decisions/repair-score-1.request.json").read_text())
    assert request["run_record"] == f".rra/build/attempts/score/{attempts[0].name}/record.json"
    # Every record left among the run records is a successful one.
    records = [json.loads(p.read_text()) for p in (artifact / "runs").glob("*/*/record.json")]
    assert records and {(r["status"], r["exit_status"]) for r in records} == {("completed", 0)}
    # Not packed (the pack's walk honours .rraignore), and the line says how to pack them.
    ignore = (artifact / ".rraignore").read_text()
    assert "/.rra/build/attempts/\n" in ignore and "delete the next line to pack them" in ignore
    packed = {rel for rel, _ in walk_tree(artifact)}
    assert ".rra/build/decisions" in packed and not any(p.startswith(".rra/build/attempts") for p in packed)
    # .rraignore is the artifact's own file: the patch series still proves the code.
    assert rra("change", "verify", "-C", str(artifact)).returncode == 0
