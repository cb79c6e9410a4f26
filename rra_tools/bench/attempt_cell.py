"""A re-execution attempt of ``rra bench reproduce`` run inside a cell's sandbox.

The attempt's copy of the artifact is the cell's workspace. Inside, this module's :func:`main`
plans the claim's launcher with its dependencies and runs the plans exactly as the unsandboxed
attempt does (``rra_tools.run.run_plans``), then writes what happened to every plan
(:class:`Outcome`) to :data:`OUTCOME_NAME` in the workspace; outside, the evaluator reads it
back with the run records and scores the attempt as before. The sandbox gives the launchers no
network, no other attempt, no host path but the artifact's copy, and the leased GPUs only.

Usage inside: ``python -m rra_tools.bench.attempt_cell WORKSPACE LAUNCHER SEED|- MEMORY_MIB|-``
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["OUTCOME_NAME", "Outcome", "main", "outcome_of", "plans_of", "read_outcome"]

#: Where the inner run writes its outcome, relative to the workspace.
OUTCOME_NAME = ".rra/attempt-outcome.json"


@dataclass
class Outcome:
    """What happened to every plan of an attempt: runs refused at set-up (launcher, error), runs
    made (record directory relative to the workspace, successful), plans skipped (launcher,
    reason, interrupted), and whether the attempt stopped early."""

    refused: list[tuple[str, str]] = field(default_factory=list)
    results: list[tuple[str, bool]] = field(default_factory=list)
    skipped: list[tuple[str, str, bool]] = field(default_factory=list)
    interrupted: bool = False


def outcome_of(outcome: Any, workspace: Path) -> Outcome:
    """The :class:`Outcome` of a ``rra_tools.run.orchestrate.PlanOutcome`` of runs in ``workspace``."""
    return Outcome(refused=[(r.plan.launcher.id, str(r.error)) for r in outcome.refused],
                   results=[(Path(r.directory).relative_to(workspace).as_posix(), bool(r.successful))
                            for r in outcome.results],
                   skipped=[(s.plan.launcher.id, s.reason, bool(s.interrupted)) for s in outcome.skipped],
                   interrupted=bool(outcome.interrupted))


def read_outcome(workspace: Path) -> Outcome | None:
    """The outcome the inner run wrote, or None when there is none (or it cannot be read)."""
    try:
        data = json.loads((workspace / OUTCOME_NAME).read_text(encoding="utf-8"))
        return Outcome(refused=[(str(a), str(b)) for a, b in data["refused"]],
                       results=[(str(a), bool(b)) for a, b in data["results"]],
                       skipped=[(str(a), str(b), bool(c)) for a, b, c in data["skipped"]],
                       interrupted=bool(data["interrupted"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def plans_of(root: Path, launcher_id: str, seed: int | None) -> list[Any]:
    """The plans of an attempt of ``launcher_id`` (``seed``) in the artifact at ``root``: its
    dependencies first, with all their seeds. PlanError or ArtifactError when it cannot be planned."""
    from ..io.artifact import load_artifact
    from ..run.plan import launcher_order, plan_runs

    artifact = load_artifact(root)
    plans: list[Any] = []
    for launcher in launcher_order(artifact, [launcher_id]):
        if launcher.id == launcher_id:
            plans.extend(plan_runs(artifact, launcher.id, seed=seed))
        else:
            plans.extend(plan_runs(artifact, launcher.id, all_seeds=True))
    return plans


def main(argv: list[str]) -> int:
    """The inner run (module docstring); 0 when the outcome was written, 2 for bad arguments."""
    if len(argv) != 4:
        sys.stderr.write("usage: python -m rra_tools.bench.attempt_cell WORKSPACE LAUNCHER SEED|- MEMORY_MIB|-\n")
        return 2
    from ..io.atomic import write_atomic
    from ..run.local import RunOptions
    from ..run.orchestrate import run_plans

    workspace, launcher = Path(argv[0]), argv[1]
    seed = None if argv[2] == "-" else int(argv[2])
    memory = None if argv[3] == "-" else int(argv[3])
    plans = plans_of(workspace, launcher, seed)
    outcome = run_plans(plans, RunOptions(memory_limit_mib=memory), handle_signals=True)
    path = workspace / OUTCOME_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(asdict(outcome_of(outcome, workspace))) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
