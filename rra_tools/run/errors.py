"""Typed errors of the run layer; the CLI maps them to messages and exit codes."""

from __future__ import annotations

from ..errors import ExitStatus, RRAError
from ..io.artifact import ArtifactError  # the one artifact error, raised here too

__all__ = [
    "ArtifactError",
    "EngineUnavailable",
    "EngineUnsupported",
    "GpuUnavailable",
    "ImageUnavailable",
    "PlanError",
    "RunError",
    "RunLayerError",
]


class RunLayerError(RRAError):
    """Base of every error the run layer (planning and running launchers, extracting their results)
    raises on purpose: catch it to catch them all.

    It sets no exit status: each error keeps its own (the root's unless it sets one). Named for
    its layer so that it takes no name a caller already catches for a narrower failure. The whole
    tree is drawn in :mod:`rra_tools.errors`.
    """


class RunError(RunLayerError):
    """A run could not be planned or started; nothing was recorded."""

    exit_status = ExitStatus.USAGE


class PlanError(RunError):
    """The requested launcher, seed or parameters do not fit the manifest."""


class GpuUnavailable(RunError):
    """Not enough free accelerators for a launcher."""


class EngineUnavailable(RunError):
    """The container engine cannot be reached, or the Docker client library is not installed."""


class EngineUnsupported(RunError):
    """The container engine cannot give a launcher what it needs (GPUs on an engine that ignores
    device requests)."""


class ImageUnavailable(RunError):
    """No container image is declared or given, or the engine neither has it nor can pull it."""
