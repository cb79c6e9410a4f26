"""Whether a locked package applies here: its PEP 508 environment marker, evaluated."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["marker_applies"]


def marker_applies(marker: str | None, environment: Mapping[str, str] | None = None) -> bool:
    """True when ``marker`` holds for ``environment`` (PEP 508 variables; default: this
    interpreter's), or cannot be judged: an unreadable marker, or one naming a variable the
    environment lacks, counts the package in, so that a comparison with the lock reports it
    rather than hides it.

    >>> marker_applies('sys_platform == "win32"', {"sys_platform": "linux"})
    False
    >>> marker_applies("python_version >= '3'", {})
    True
    """
    if not marker:
        return True
    # packaging.markers takes about 18 ms to import: only locks with markers pay for it.
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

    try:
        parsed = Marker(marker)
        if environment is None:
            return parsed.evaluate()
        return parsed.evaluate({**environment, "extra": ""})
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True
