"""Colour in ``rra validate``'s text report: ``--color`` holds when piped, ``NO_COLOR`` turns the
terminal default off, ``--no-color`` always wins. Run through the real command, on a pipe and
on a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from tests.rra_cli import rra, rra_command

REPO = Path(__file__).resolve().parents[2]
BROKEN = str(REPO / "examples" / "broken" / "duplicate-id")
ESC = "\x1b["


def _on_terminal(*args: str, env: dict[str, str]) -> str:
    """Standard output of ``rra ARGS`` written to a pseudo-terminal."""
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.Popen([*rra_command(), *args], stdout=terminal, stderr=subprocess.DEVNULL,
                                env={**os.environ, **env})
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the terminal's other side closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=120)
    finally:
        os.close(controller)
    return b"".join(chunks).decode("utf-8", "replace")


def test_color_option_holds_when_piped() -> None:
    coloured = rra("validate", "--color", BROKEN)
    assert coloured.returncode == 1 and ESC in coloured.stdout
    assert ESC not in rra("validate", BROKEN).stdout


def test_terminal_default_and_no_color() -> None:
    env = {k: "" for k in ("NO_COLOR",)}
    assert ESC in _on_terminal("validate", BROKEN, env=env)
    assert ESC not in _on_terminal("validate", BROKEN, env={"NO_COLOR": "1"})
    assert ESC not in _on_terminal("validate", "--no-color", BROKEN, env=env)
    assert ESC in _on_terminal("validate", "--color", BROKEN, env={"NO_COLOR": "1"})
