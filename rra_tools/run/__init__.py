"""Running launchers: plans, the local executor, GPU assignment, run records, metrics, results.

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
from .plan import Artifact, RunPlan, launcher_order, load_artifact, parse_overrides, plan_runs

__all__ = [
    "Artifact",
    "ArtifactError",
    "EngineUnavailable",
    "EngineUnsupported",
    "GpuUnavailable",
    "ImageUnavailable",
    "PlanError",
    "Progress",
    "RunError",
    "RunOptions",
    "RunPlan",
    "RunResult",
    "execute",
    "launcher_order",
    "load_artifact",
    "parse_overrides",
    "plan_runs",
]
