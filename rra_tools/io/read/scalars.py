"""Scalars of the YAML 1.2 core schema: which plain scalars are null, booleans, integers or
floats, and their values. Shared by the located reader (:mod:`.source`) and the fast block
reader (:mod:`.blockyaml`), so that both resolve a scalar the same way.

>>> resolve_plain("0x1f"), resolve_plain("yes"), resolve_plain("~")
(31, 'yes', None)
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["BOOL", "FLOAT", "INT", "MAX_DECIMAL_DIGITS", "NULL", "resolve_plain", "to_float", "to_int"]

#: Plain scalars that are null, booleans, integers and floats under the YAML 1.2 core schema.
NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


def resolve_plain(value: str) -> Any:
    """The value of a plain (unquoted, untagged) scalar under the YAML 1.2 core schema."""
    if NULL.match(value):
        return None
    if BOOL.match(value):
        return value.lower() == "true"
    if INT.match(value):
        return to_int(value)
    if FLOAT.match(value):
        return to_float(value)
    return value


#: Decimal integer literals with more significant digits than this are not converted: Python
#: refuses them (and int() of a long decimal string takes quadratic time). Such a literal reads as
#: a stand-in of the same sign and 4300 digits, still far outside the 64-bit range a manifest may
#: carry, which the validator reports as RRA114 (spec/02-manifest.md#numbers).
MAX_DECIMAL_DIGITS = 4300


def to_int(value: str) -> int:
    """A core-schema integer (decimal, ``0o`` octal or ``0x`` hex) matched by :data:`INT`."""
    if value.startswith("0o"):
        return int(value[2:], 8)
    if value.startswith("0x"):
        return int(value[2:], 16)
    if len(value.lstrip("+-").lstrip("0")) > MAX_DECIMAL_DIGITS:
        stand_in: int = 10 ** (MAX_DECIMAL_DIGITS - 1)
        return -stand_in if value.startswith("-") else stand_in
    return int(value, 10)


def to_float(value: str) -> float:
    """A core-schema float matched by :data:`FLOAT` (or :data:`INT`), ``.inf`` and ``.nan`` included."""
    lowered = value.lower()
    if lowered.endswith(".inf"):
        return -math.inf if lowered.startswith("-") else math.inf
    if lowered == ".nan":
        return math.nan
    return float(value)
