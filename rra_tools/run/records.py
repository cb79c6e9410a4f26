"""Where runs go and how records are written: a fresh directory per run, atomic record files."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..io.atomic import scratch_name

__all__ = ["REDACTED", "SECRET_NAME", "fresh_private_dir", "new_run_dir", "record_bytes", "redact", "utc_stamp"]

REDACTED = "[redacted]"
#: Environment variable names whose values are never recorded.
SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)


def fresh_private_dir(prefix: str) -> str:
    """Create a new directory only this user can enter in the first usable temporary directory
    ($TMPDIR, $TEMP, $TMP, /tmp, /var/tmp, the order ``tempfile`` uses); OSError from the last
    when none is usable."""
    bases = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")] + ["/tmp", "/var/tmp"]  # noqa: S108
    error: OSError | None = None
    for base in dict.fromkeys(b for b in bases if b):
        while True:
            path = os.path.join(base, scratch_name(prefix))
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            except OSError as exc:  # missing or not writable: try the next one
                error = exc
                break
            return path
    assert error is not None
    raise error


def redact(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the values of secret-looking names replaced by '[redacted]'.

    >>> redact({"API_TOKEN": "abc", "LANG": "C.UTF-8"})
    {'API_TOKEN': '[redacted]', 'LANG': 'C.UTF-8'}
    """
    return {k: (REDACTED if SECRET_NAME.search(k) else v) for k, v in env.items()}


def utc_stamp(moment: datetime) -> str:
    """ISO 8601 UTC with microseconds, e.g. '2026-01-31T12:00:00.123456Z'."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_run_dir(runs_dir: Path, launcher: str, seed: int | None, moment: datetime) -> Path:
    """Create ``runs/<launcher>/<seed|noseed>-<UTC timestamp>/``; never reuse an existing one."""
    parent = runs_dir / launcher
    parent.mkdir(parents=True, exist_ok=True)
    base = f"{'noseed' if seed is None else seed}-{moment.astimezone(timezone.utc).strftime('%Y%m%dT%H%M%S.%fZ')}"
    for attempt in range(1000):
        candidate = parent / (base if attempt == 0 else f"{base}-{attempt}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"cannot create a new run directory under {parent}")


def record_bytes(record: dict[str, Any]) -> bytes:
    """The record as written: JSON, two-space indent, UTF-8; NaN and infinities are refused
    (they are not JSON)."""
    return (json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
