"""Errors of the sandbox: a backend that cannot run here, a mount that would expose too much."""

from __future__ import annotations

from ...errors import ExitStatus
from ..errors import AgentsLayerError

__all__ = ["SandboxError"]


class SandboxError(AgentsLayerError):
    """A sandbox cannot be set up as asked (no backend, a path that must stay hidden)."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint
