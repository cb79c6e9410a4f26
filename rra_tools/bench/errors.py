"""Errors of the benchmark evaluator."""

from __future__ import annotations

from ..errors import ExitStatus, RRAError

__all__ = ["BenchError", "BenchLayerError"]


class BenchLayerError(RRAError):
    """Base of every error the benchmark evaluator raises on purpose: catch it to catch them all.

    It sets no exit status: each error keeps its own (the root's unless it sets one). Named for
    its layer so that it takes no name a caller already catches for a narrower failure. The whole
    tree is drawn in :mod:`rra_tools.errors`.
    """


class BenchError(BenchLayerError):
    """A task set cannot be read or used (unreadable, invalid, a task naming a missing artifact or claim)."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint
