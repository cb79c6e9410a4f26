"""The benchmark's state directory, shared by both executors (:mod:`.local` runs cells here,
:mod:`.slurm` as Slurm jobs): what each keeps there is the same, so a benchmark started by one
resumes on the other.

Layout of ``state_dir``:

- ``cells/<digest>.json``: a finished cell's result (``key``, ``result``, ``restarted``,
  ``started``, ``ended``, ``devices``; ``slurm`` when a Slurm job made it), written atomically
  and flushed before anything else is said about the cell;
- ``started/<digest>.json``: the marker of a cell that was started (the number of starts so far;
  ``slurm_job`` for a Slurm job), removed once its result is kept;
- ``lock``: held (``flock``) by the executor running the benchmark (:class:`StateLock`).

``<digest>`` is :func:`cell_digest` of the cell's key: keys hold slashes and may be long.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...io.atomic import write_atomic
from ..errors import BenchError

__all__ = ["Finished", "StateLock", "cell_digest", "cell_path", "check_unique", "load_finished", "now",
           "read_json", "started_path", "unlink_quietly", "write_json"]


@dataclass(frozen=True)
class Finished:
    """A cell's result as kept in the state directory."""

    key: str
    data: dict[str, Any]
    #: Times the cell was started before and did not finish (the benchmark was killed).
    restarted: int = 0
    #: True when the result was read from the state directory (finished by an earlier run).
    resumed: bool = False
    started: str | None = None
    ended: str | None = None


def cell_digest(key: str) -> str:
    """The name of a cell's files in the state directory (and of its Slurm scratch directory)."""
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def cell_path(state_dir: Path, key: str) -> Path:
    """Where the result of the cell ``key`` is kept."""
    return state_dir / "cells" / f"{cell_digest(key)}.json"


def started_path(state_dir: Path, key: str) -> Path:
    """Where the start marker of the cell ``key`` is kept."""
    return state_dir / "started" / f"{cell_digest(key)}.json"


def now() -> str:
    """The time now, UTC, ISO 8601 to the millisecond with a ``Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_json(path: Path, data: dict[str, Any], durable: bool = True) -> None:
    """Write a state file atomically; ``durable=False`` skips the flush to disk (markers, whose
    loss after a machine crash only undercounts restarts)."""
    write_atomic(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode(), durable=durable)


def read_json(path: Path) -> dict[str, Any] | None:
    """A state file's object; None when there is none. BenchError naming the file when it cannot
    be read or is not a JSON object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise BenchError(f"cannot read the benchmark state file {str(path)!r}: {exc}",
                         "remove it to run that cell again") from None
    if not isinstance(data, dict):
        raise BenchError(f"the benchmark state file {str(path)!r} is not a JSON object",
                         "remove it to run that cell again")
    return data


def unlink_quietly(path: Path) -> None:
    """Remove a marker that may already be gone."""
    try:
        os.unlink(path)
    except OSError:
        pass


def check_unique(keys: Iterable[str]) -> None:
    """BenchError naming a key two cells share (their results would overwrite each other)."""
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            raise BenchError(f"two cells of the benchmark have the key {key!r}")
        seen.add(key)


def load_finished(state_dir: Path, keys: Iterable[str]) -> dict[str, Finished]:
    """The results kept in ``state_dir`` for ``keys`` (those that have one)."""
    found: dict[str, Finished] = {}
    for key in keys:
        data = read_json(cell_path(state_dir, key))
        if data is None:
            continue
        if data.get("key") != key:
            raise BenchError(f"the benchmark state file for {key!r} holds the result of {data.get('key')!r}",
                             "remove it to run that cell again")
        found[key] = Finished(key=key, data=data["result"], restarted=int(data.get("restarted", 0)),
                              resumed=True, started=data.get("started"), ended=data.get("ended"))
    return found


class StateLock:
    """The state directory's lock: one executor per benchmark at a time. Entering it raises
    BenchError (naming the holder's pid) when another process holds it."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "lock"
        self.fd = -1

    def __enter__(self) -> StateLock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 32, 0).decode(errors="replace").strip() or "another process"
            os.close(self.fd)
            raise BenchError(f"another benchmark is running in {str(self.path.parent)!r} (pid {holder})",
                             "wait for it to end, or give another output directory") from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(os.getpid()).encode(), 0)
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)
