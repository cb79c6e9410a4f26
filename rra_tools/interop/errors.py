"""The base of the interop layer's errors; the whole tree is drawn in :mod:`rra_tools.errors`."""

from __future__ import annotations

from ..errors import RRAError

__all__ = ["InteropLayerError"]


class InteropLayerError(RRAError):
    """Base of every error the interop wings (Inspect AI, CORE-Bench) raises on purpose: catch it to
    catch them all.

    It sets no exit status: each error keeps its own (the root's unless it sets one). Named for
    its layer so that it takes no name a caller already catches for a narrower failure.
    """
