"""Errors of the benchmark evaluator."""

from __future__ import annotations

from ..errors import ExitStatus, RRAError

__all__ = ["BenchError"]


class BenchError(RRAError):
    """A task set cannot be read or used (unreadable, invalid, a task naming a missing artifact or claim)."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint
