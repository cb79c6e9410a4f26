"""pydantic models of every RRA document; the single source of truth for the JSON Schemas."""

from .manifest import Manifest

__all__ = ["Manifest"]
