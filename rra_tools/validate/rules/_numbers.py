"""Numbers as the rules read them (spec/02-manifest.md#numbers): never an exception for a huge one."""

from __future__ import annotations

from typing import Any

__all__ = ["INT_LIMIT", "as_int", "as_number"]

#: Integers a manifest may carry (spec/02-manifest.md#numbers); larger ones are RRA114.
INT_LIMIT = 2**63


def as_number(value: Any) -> float | None:
    """``value`` as binary64 when it is a number the manifest may carry; None for an integer
    outside the 64-bit range (the schema layer reports it as RRA114, once)."""
    kind = type(value)
    if kind is float:
        return float(value)  # exact types first: rules call this for every observation
    if kind is int:
        return float(value) if -INT_LIMIT <= value < INT_LIMIT else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not -INT_LIMIT <= value < INT_LIMIT:
        return None
    return float(value)


def as_int(value: Any) -> int | None:
    """``value`` as an integer when it is one: ``4`` and ``4.0`` alike (an integer is a number
    without a fractional part, as in JSON Schema), within the manifest's integer range."""
    if type(value) is int:  # the common case first: rules call this for every seed
        return value if -INT_LIMIT <= value < INT_LIMIT else None
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float):
        if not value.is_integer():
            return None
        value = int(value)
    if isinstance(value, int) and -INT_LIMIT <= value < INT_LIMIT:
        return value
    return None
