"""Running launchers: plans, the local executor, GPU assignment, run records, metrics, results,
and :func:`run_plans`, which runs a whole plan (order, dependencies, signals, progress).

The container executor is :mod:`.container`; it needs the ``container`` extra (the docker package).

The library never prints: progress and output reach the caller through callbacks in
:class:`RunOptions`, and problems are typed errors (:mod:`.errors`) or messages in the record.
"""

from .errors import (
    ArtifactError,
    EngineUnavailable,
    EngineUnsupported,
    GpuUnavailable,
    ImageUnavailable,
    PlanError,
    RunError,
)
from .local import Progress, RunOptions, RunResult, execute
from .orchestrate import PlanHooks, PlanOutcome, Refused, Skipped, run_plans
from .plan import Artifact, RunPlan, launcher_order, load_artifact, parse_overrides, plan_runs

__all__ = [
    "Artifact",
    "ArtifactError",
    "EngineUnavailable",
    "EngineUnsupported",
    "GpuUnavailable",
    "ImageUnavailable",
    "PlanError",
    "PlanHooks",
    "PlanOutcome",
    "Progress",
    "Refused",
    "RunError",
    "RunOptions",
    "RunPlan",
    "RunResult",
    "Skipped",
    "execute",
    "launcher_order",
    "load_artifact",
    "parse_overrides",
    "plan_runs",
    "run_plans",
]
