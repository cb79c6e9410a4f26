"""Running the real ``rra`` command from tests, as a user's shell would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["rra", "rra_command"]


def rra_command() -> list[str]:
    """The installed ``rra`` entry point next to this interpreter, else ``python -m rra_tools``
    (both end in the same ``entry()``)."""
    script = Path(sys.executable).with_name("rra")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "rra_tools"]


def rra(*args: str, env: Mapping[str, str] | None = None, inherit_env: bool = True, cwd: Path | str | None = None,
        timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``rra ARGS`` to completion, capturing its output as text. ``env`` is added to this
    process's environment, or with ``inherit_env=False`` is the whole environment."""
    environment = {**os.environ, **(env or {})} if inherit_env else dict(env or {})
    return subprocess.run([*rra_command(), *args], capture_output=True, text=True, env=environment, cwd=cwd,
                          timeout=timeout, check=False)
