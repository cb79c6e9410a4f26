"""Where rra caches what it derives from content: environments by lock digest, parsed locks,
checked manifests.

Every entry is a pure function of the bytes its key names (a digest), so an entry is either
right or absent: a missing, unreadable or corrupt one is recomputed, and failing to write one
(a read-only home, a full disk) changes nothing but speed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CACHE_VAR", "cache_root", "read_json_entry", "write_json_entry"]

#: Environment variable naming the cache directory.
CACHE_VAR = "RRA_CACHE_DIR"


def cache_root() -> Path:
    """The cache directory: ``$RRA_CACHE_DIR``, else ``$XDG_CACHE_HOME/rra``, else ``~/.cache/rra``."""
    configured = os.environ.get(CACHE_VAR)
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "rra"


def _entry(kind: str, key: str) -> Path:
    return cache_root() / kind / f"{key}.json"


def read_json_entry(kind: str, key: str) -> Any | None:
    """The JSON value cached as ``<cache>/<kind>/<key>.json``; None when absent or unreadable."""
    try:
        return json.loads(_entry(kind, key).read_bytes())
    except (OSError, ValueError):
        return None


def write_json_entry(kind: str, key: str, value: Any) -> None:
    """Cache ``value`` as ``<cache>/<kind>/<key>.json``: written whole through a rename, so a
    concurrent reader sees the old entry, the new one or none; errors are ignored."""
    from .atomic import write_atomic

    path = _entry(kind, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
        # Not flushed to disk: an entry lost in a crash is recomputed.
        write_atomic(path, data, durable=False)
    except (OSError, ValueError):
        pass
