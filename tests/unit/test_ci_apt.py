""".ci/run waits for another apt process (a fresh cloud machine's unattended-upgrades) instead of
failing at once: its apt helpers are run for real while this test holds apt's locks for a while.

The locks are the ones apt and dpkg take (fcntl locks on the package lists' and dpkg's frontend
lock files); taking them needs root, as installing does.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOCKS = ("/var/lib/apt/lists/lock", "/var/lib/dpkg/lock-frontend")
HOLD_S = 3.0

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("apt-get") is None or shutil.which("dpkg") is None,
    reason="needs root on a Debian-like machine (apt-get, dpkg) to hold apt's locks; run it there as root")


def _hold_locks(taken: threading.Event) -> None:
    handles = []
    for lock in LOCKS:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o640)
        fcntl.lockf(fd, fcntl.LOCK_EX)
        handles.append(fd)
    taken.set()
    time.sleep(HOLD_S)
    for fd in handles:
        os.close(fd)  # releases the lock


def test_apt_helpers_wait_for_the_locks() -> None:
    taken = threading.Event()
    holder = threading.Thread(target=_hold_locks, args=(taken,))
    holder.start()
    assert taken.wait(30)
    start = time.monotonic()
    # No sources (nothing is fetched) and a package that is installed (nothing is downloaded):
    # both commands still take their lock, which is what is tested.
    script = ('set -euo pipefail; SUDO=""; RRA_APT_LOCK_WAIT=60; . .ci/apt.sh; '
              'apt_update -o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts=/nonexistent; '
              'apt_install --no-download coreutils')
    done = subprocess.run(["bash", "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=False)
    elapsed = time.monotonic() - start
    holder.join()
    assert done.returncode == 0, done.stderr
    assert elapsed >= HOLD_S - 0.5, f"returned after {elapsed:.1f} s, before the locks were released"
    assert "apt: another apt process holds the package lists; waiting up to 60s" in done.stderr


def test_ci_run_installs_through_the_helpers() -> None:
    text = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert ". .ci/apt.sh" in text and "apt_update" in text and "apt_install" in text
    assert "apt-get update" not in text and "apt-get install" not in text
