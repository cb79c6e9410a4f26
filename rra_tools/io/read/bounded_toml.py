"""The one TOML reader for files rra did not write (pyproject.toml, Pipfile, pylock.toml...).

``tomllib`` parses nested arrays and inline tables by recursion, so a file nested 100,000 deep
(a few hundred kilobytes) ends in ``RecursionError`` far from the file that caused it. This
reader refuses, before parsing, a text over :data:`MAX_TOML_BYTES` or nested deeper than
:data:`MAX_TOML_DEPTH` (brackets and braces counted outside strings and comments), and turns
any ``RecursionError`` left into the same error: a ``tomllib.TOMLDecodeError``, which every
caller already reports with the file's name.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from ..limits import MAX_DEPTH, MAX_MANIFEST_BYTES

__all__ = ["MAX_TOML_BYTES", "MAX_TOML_DEPTH", "loads"]

#: Largest TOML text read, in bytes (a lock file of a thousand packages is about 1 MiB).
MAX_TOML_BYTES = MAX_MANIFEST_BYTES
#: Deepest nesting of arrays and inline tables (a pyproject.toml nests three or four).
MAX_TOML_DEPTH = MAX_DEPTH

# Strings and comments, whichever starts first (multi-line strings before single-line ones);
# what is left holds the brackets that nest.
_NOT_STRUCTURE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*')
_BRACKETS = re.compile(r"[^\[\]{}]+")


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` outside strings and comments (a table header
    ``[[a]]`` counts 2).

    >>> nesting_depth('a = [[1], {b = "[[["}]  # [[[')
    2
    """
    depth = deepest = 0
    for char in _BRACKETS.sub("", _NOT_STRUCTURE.sub("", text)):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(depth - 1, 0)
    return deepest


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)`` within the bounds; ``tomllib.TOMLDecodeError`` when it is not
    valid TOML or is beyond them."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TOML_BYTES:
        raise tomllib.TOMLDecodeError(f"{size} bytes, more than the {MAX_TOML_BYTES} read")
    depth = nesting_depth(text)
    if depth > MAX_TOML_DEPTH:
        raise tomllib.TOMLDecodeError(f"arrays or tables nested {depth} deep, more than {MAX_TOML_DEPTH}")
    try:
        return tomllib.loads(text)
    except RecursionError:  # the count above missed a nesting tomllib sees
        raise tomllib.TOMLDecodeError(f"nested deeper than Python can parse (more than {MAX_TOML_DEPTH})") from None
