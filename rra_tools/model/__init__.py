"""pydantic models of every RRA document; the single source of truth for the JSON Schemas."""

from __future__ import annotations


TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

    from .manifest import Manifest

__all__ = ["Manifest"]


def __getattr__(name: str) -> Any:
    # Lazy, so that importing a light submodule (vocab) does not build every model.
    if name == "Manifest":
        from .manifest import Manifest

        return Manifest
    raise AttributeError(name)
