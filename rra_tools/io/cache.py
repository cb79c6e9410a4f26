"""Where rra caches what it derives from content: environments by lock digest, parsed locks."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_VAR", "cache_root"]

#: Environment variable naming the cache directory.
CACHE_VAR = "RRA_CACHE_DIR"


def cache_root() -> Path:
    """The cache directory: ``$RRA_CACHE_DIR``, else ``$XDG_CACHE_HOME/rra``, else ``~/.cache/rra``."""
    configured = os.environ.get(CACHE_VAR)
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "rra"
