"""Writing a draft manifest as block YAML, deterministically and without a YAML library.

Every string is written as a JSON string, which is a YAML double-quoted scalar: any text (': ',
'#', a leading '&', '2024', 'true') reads back as the exact string written. Comments (the
``$schema`` line, where each value was found) are added by the caller around this text.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["to_yaml"]

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"})


def _key(key: str) -> str:
    return key if _PLAIN_KEY.fullmatch(key) and key.lower() not in _RESERVED else json.dumps(key, ensure_ascii=False)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a manifest holds no {value!r}")
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def to_yaml(data: Any, indent: int = 0) -> str:
    """Block YAML for dicts, lists and scalars; empty collections as ``{}``/``[]``.

    >>> print(to_yaml({"a": [1, {"b": "x: y"}], "c": {}}), end="")
    a:
      - 1
      - b: "x: y"
    c: {}
    """
    return "".join(_lines(data, indent))


def _lines(data: Any, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, (dict, list)) and value:
                out.append(f"{pad}{_key(str(key))}:\n")
                out.extend(_lines(value, indent + 2))
            else:
                out.append(f"{pad}{_key(str(key))}: {_inline(value)}\n")
    elif isinstance(data, list):
        for value in data:
            if isinstance(value, (dict, list)) and value:
                nested = _lines(value, indent + 2)
                # The first line of the item goes after the dash.
                out.append(f"{pad}- {nested[0][indent + 2:]}")
                out.extend(nested[1:])
            else:
                out.append(f"{pad}- {_inline(value)}\n")
    else:
        out.append(f"{pad}{_scalar(data)}\n")
    return out


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _scalar(value)
