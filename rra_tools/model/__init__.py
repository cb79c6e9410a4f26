"""pydantic models of every RRA document; the single source of truth for the JSON Schemas."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .manifest import Manifest

__all__ = ["Manifest"]


def __getattr__(name: str) -> Any:
    # Lazy, so that importing a light submodule (vocab) does not build every model.
    if name == "Manifest":
        from .manifest import Manifest

        return Manifest
    raise AttributeError(name)
