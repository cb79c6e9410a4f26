"""Whether to colour what goes to a stream: one decision for every command."""

from __future__ import annotations

import os
from typing import TextIO

__all__ = ["color_wanted"]


def color_wanted(option: bool | None, stream: TextIO) -> bool:
    """``--color``/``--no-color`` when given; else no colour when ``NO_COLOR`` is set to anything
    but the empty string (https://no-color.org); else colour when ``stream`` is a terminal.

    >>> import io
    >>> color_wanted(True, io.StringIO()), color_wanted(None, io.StringIO())
    (True, False)
    """
    if option is not None:
        return option
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False
