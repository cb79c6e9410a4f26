"""Runs in progress, and runs whose ``rra run`` died before writing their record.

While a run goes on, its directory holds ``record.pending``: the record as far as it is known
when the process starts (:func:`~rra_tools.run.outcome.record_head`: launcher, argv, seed,
start, host, environment...), held under an exclusive ``flock``. The launcher inherits the
locked descriptor, so the lock lives as long as ``rra run`` *or* the launcher does. When the
record is written, the file is removed.

A ``record.pending`` that nobody holds belongs to a run whose ``rra run`` was killed (SIGKILL,
the out-of-memory killer) or whose machine stopped. :func:`finish_orphaned_runs`, which
``rra run`` and ``rra results`` call, turns it into a truthful record: status
``interrupted``, no exit status (it is not known), ``ended`` the last write to the run's logs,
no outputs or metrics (they were never checked, and may have changed since), and a message
saying all of that. A run directory with neither a record nor a pending record is reported,
never guessed at.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from ..model.vocab import RunStatus
from .outcome import assemble_record, log_file
from .plan import Artifact
from ..io.atomic import scratch_name, write_atomic
from .records import record_bytes, utc_stamp

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["PENDING_NAME", "Pending", "Unfinished", "finish_orphaned_runs"]

PENDING_NAME = "record.pending"


class Pending:
    """The pending record of a run in progress, locked for as long as its descriptor is open
    (in this process and in the launcher that inherits it)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self.fd = path, fd

    @classmethod
    def start(cls, directory: Path, head: dict[str, Any]) -> Pending:
        """Write ``head`` to ``directory/record.pending``, locked before it appears under that
        name (so no one can take it for an orphan while it is written)."""
        path = directory / PENDING_NAME
        tmp = directory / scratch_name(".pending-")
        wfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        fd = -1
        try:
            # The launcher inherits the locked descriptor: open it read-only, so it cannot write.
            fd = os.open(tmp, os.O_RDONLY | os.O_CLOEXEC)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(wfd, record_bytes({**head, "rra_pid": os.getpid()}))
            os.rename(tmp, path)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        finally:
            os.close(wfd)
        return cls(path, fd)

    def finish(self) -> None:
        """The record is written: remove the pending one and let go of it."""
        try:
            os.unlink(self.path)
        except OSError:
            pass
        # Closing (not LOCK_UN, which would unlock the launcher's inherited copy as well).
        os.close(self.fd)


class Unfinished:
    """A run directory without a record, as :func:`finish_orphaned_runs` found it.

    ``directory``: the run directory, relative to the artifact root; ``state``: 'finished'
    (its record was written now), 'running' (its rra run or launcher still lives) or
    'unknown' (no pending record: nothing to finish it from); ``record``: the record written
    now (relative to the root), when state is 'finished'.
    """

    __slots__ = ("directory", "record", "state")

    def __init__(self, directory: str, state: str, record: str | None = None) -> None:
        self.directory, self.state, self.record = directory, state, record

    def __repr__(self) -> str:
        return f"Unfinished({self.directory!r}, {self.state!r}, {self.record!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Unfinished)
                and (self.directory, self.state, self.record) == (other.directory, other.state, other.record))

    def __hash__(self) -> int:
        return hash((self.directory, self.state, self.record))


def _rel(artifact: Artifact, path: Path) -> str:
    return path.relative_to(artifact.root).as_posix() if path.is_relative_to(artifact.root) else str(path)


def finish_orphaned_runs(artifact: Artifact) -> list[Unfinished]:
    """Every run directory of ``artifact`` without a record: finish those whose ``rra run``
    died, report the others. Never raises for a directory it cannot read (it is skipped).

    ``rra run`` calls this every time, so it costs one ``stat`` per run directory (scandir,
    not pathlib: a history of a few hundred runs is well under a millisecond).
    """
    found: list[Unfinished] = []
    known = {launcher.id for launcher in artifact.manifest.launchers}
    try:
        launchers = sorted(e.path for e in os.scandir(artifact.runs_dir)
                           if e.name in known and e.is_dir(follow_symlinks=False))
    except OSError:
        return found
    for launcher_dir in launchers:
        try:
            directories = sorted(e.path for e in os.scandir(launcher_dir) if e.is_dir(follow_symlinks=False))
        except OSError:
            continue
        for path in directories:
            if os.path.lexists(os.path.join(path, "record.json")):
                continue
            directory = Path(path)
            pending = directory / PENDING_NAME
            if not pending.is_file() or pending.is_symlink():
                if (directory / "stdout.log").exists():  # a run directory, not something else
                    found.append(Unfinished(_rel(artifact, directory), "unknown"))
                continue
            try:
                found.append(_finish(artifact, directory, pending))
            except (OSError, ValueError, KeyError, TypeError):
                found.append(Unfinished(_rel(artifact, directory), "unknown"))
    return found


def _finish(artifact: Artifact, directory: Path, pending: Path) -> Unfinished:
    fd = os.open(pending, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return Unfinished(_rel(artifact, directory), "running")
        if (directory / "record.json").exists():  # written between our look and the lock
            return Unfinished(_rel(artifact, directory), "finished", _rel(artifact, directory / "record.json"))
        with os.fdopen(os.dup(fd), "rb") as handle:
            head = json.loads(handle.read(16 * 1024 * 1024))
        if not isinstance(head, dict):
            raise ValueError("pending record is not an object")
        rra_pid = head.pop("rra_pid", None)
        container = head.pop("container", None)
        started = datetime.strptime(head["started"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
        logs, last = [], started.timestamp()
        for stream in ("stdout", "stderr"):
            if (directory / f"{stream}.log").is_file():
                logs.append(log_file(directory, stream))
                last = max(last, (directory / f"{stream}.log").stat().st_mtime)
        ended = datetime.fromtimestamp(last, timezone.utc)
        now = utc_stamp(datetime.now(timezone.utc))
        who = "rra run" if rra_pid is None else f"rra run (pid {rra_pid})"
        message = (f"{who} ended without writing this record: it was killed (e.g. by SIGKILL or the "
                   f"out-of-memory killer) or its machine stopped, and the launcher's process group was "
                   f"stopped with it. This record was written from what was known when the run started, "
                   f"at {now} by process {os.getpid()}. The exit status is not known; 'ended' is the last "
                   f"write to the run's logs; outputs and metrics were not checked.")
        record = assemble_record(head, ended=ended, duration_s=max(0.0, last - started.timestamp()),
                                 status=RunStatus.INTERRUPTED, exit_status=None, killed_by=None,
                                 container=container, outputs=[], missing=[], logs=logs,
                                 metrics={}, stray=[], messages=[message])
        write_atomic(directory / "record.json", record_bytes(record), replace=False)
        try:
            os.unlink(pending)
        except OSError:
            pass
        return Unfinished(_rel(artifact, directory), "finished", _rel(artifact, directory / "record.json"))
    finally:
        os.close(fd)
