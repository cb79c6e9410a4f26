"""The base of the conformance layer's errors; the whole tree is drawn in :mod:`rra_tools.errors`."""

from __future__ import annotations

from ..errors import RRAError

__all__ = ["ConformanceLayerError"]


class ConformanceLayerError(RRAError):
    """Base of every error the conformance suite runner raises on purpose: catch it to catch them
    all.

    It sets no exit status: each error keeps its own (the root's unless it sets one). Named for
    its layer so that it takes no name a caller already catches for a narrower failure.
    """
