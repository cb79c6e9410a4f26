"""Ctrl-C ends any command with one line and exit status 130 (spec: docs/architecture.md)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from ..rra_cli import rra_command


def _wait_reading_a_pipe(pid: int, timeout_s: float = 60) -> None:
    # SIGINT before Python has installed its handler would kill the process outright: wait until
    # the command blocks on its standard input.
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if "pipe" in Path(f"/proc/{pid}/wchan").read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} never waited on its standard input")


def test_ctrl_c_while_validate_reads_standard_input() -> None:
    proc = subprocess.Popen([*rra_command(), "validate", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait_reading_a_pipe(proc.pid)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    # Not click's "Aborted!" with status 1, which rra validate uses for findings.
    assert (proc.returncode, out, err) == (130, "", "error: interrupted (Ctrl-C) before the command finished\n")
