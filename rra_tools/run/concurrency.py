"""Runs of one artifact at the same time: who may write which output, and who else was running.

Two ``rra run`` processes may run launchers of the same artifact side by side (two seeds on two
GPUs). Two things must still hold for every record:

- **Its outputs are its own.** A run holds its declared outputs for as long as it runs: an
  exclusive ``flock`` on a lock file per output path and a shared one per directory above it,
  so two runs whose outputs are the same path, or one inside the other (a directory output
  ``out`` and a file ``out/ok-1.json``), never run at the same time. The second is refused
  (:class:`OutputBusy`, naming the run that holds the output), as a run finding its GPUs
  taken is; outputs in different places (``out/ok-0.json`` and ``out/ok-1.json``) do not
  conflict.
- **Its stray writes are its own.** The stray-write check compares the tree before and after
  the run; a file another run changed in between looks the same. A run therefore registers
  itself while it runs, and learns at the end whether any other run of the artifact was
  active during its own: then a change outside the declared outputs cannot be attributed,
  and the record says so instead of claiming it (see ``outcome.write_record``).

The lock files live outside the artifact, in ``RRA_RUN_LOCK_DIR`` (default
``rra-run-locks-<uid>`` in the temporary directory), one folder per artifact (by its real
path). The run's locked descriptors are inherited by its launcher, so they are held for as
long as the launcher lives, even if ``rra run`` is killed. Locks are per machine and user:
runs of one artifact from two machines on a shared filesystem, or by two users, are not seen.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import posixpath
from collections.abc import Mapping
from pathlib import Path

from .errors import RunError
from .plan import RunPlan
from ..io.atomic import scratch_name

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["LOCK_DIR_ENV", "OutputBusy", "RunSlot", "enter"]

LOCK_DIR_ENV = "RRA_RUN_LOCK_DIR"


class OutputBusy(RunError):
    """A declared output is being written by another run of the same artifact."""


def _lock_root(environ: Mapping[str, str]) -> Path:
    given = environ.get(LOCK_DIR_ENV)
    if given:
        return Path(given)
    # A per-user name in a shared temporary directory: enter() refuses a folder that is a link
    # or that another user made, so no one else can hand us their locks.
    bases = [environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")] + ["/tmp", "/var/tmp"]  # noqa: S108
    base = next((b for b in bases if b and os.path.isdir(b) and os.access(b, os.W_OK)), "/tmp")  # noqa: S108
    return Path(base) / f"rra-run-locks-{os.getuid()}"


def _open_locked(path: Path, mode: int) -> int | None:
    """An fd of ``path`` (created if need be) locked with ``mode`` without waiting; None if taken."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _held(path: Path) -> bool:
    """Whether some live process holds ``path`` locked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _claims(outputs: list[str]) -> tuple[list[str], list[str]]:
    """The paths to hold exclusively (the outputs) and shared (every directory above one)."""
    exclusive = sorted({posixpath.normpath(rel).strip("/") for rel in outputs} - {"", "."})
    above = {posixpath.dirname(p) for p in exclusive}
    shared: set[str] = set()
    for parent in above:
        while parent:
            shared.add(parent)
            parent = posixpath.dirname(parent)
    return exclusive, sorted(shared - set(exclusive))


class RunSlot:
    """A run's place among the runs of its artifact: its output locks and its registration."""

    def __init__(self, folder: Path, fds: list[int], entry: Path, seq: int, others_at_start: list[str]) -> None:
        self.folder, self._fds, self.entry, self.seq = folder, fds, entry, seq
        self.others_at_start = others_at_start

    @property
    def fds(self) -> tuple[int, ...]:
        """The locked descriptors, for the launcher to inherit."""
        return tuple(self._fds)

    def concurrent(self) -> list[str]:
        """The other runs of the artifact that were active at some time during this one: each
        described as 'run <launcher> <seed> (pid N)', or 'N run(s) that started and ended meanwhile'."""
        found = list(self.others_at_start)
        with _SeqLock(self.folder) as seq:
            started_since = seq.value - self.seq
            for entry in _active(self.folder):
                if entry.name != self.entry.name and _held(entry):
                    described = _describe(entry)
                    if described not in found:
                        found.append(described)
                        started_since -= 1
        if started_since > 0:
            found.append(f"{started_since} run(s) that started and ended meanwhile")
        return found

    def release(self) -> None:
        """Close the descriptors (never LOCK_UN: a launcher that inherited them may still live)."""
        try:
            os.unlink(self.entry)
        except OSError:
            pass
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()


class _SeqLock:
    """The artifact's run counter, read and written under an exclusive lock."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "seq"
        self.value = 0

    def __enter__(self) -> _SeqLock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        raw = os.read(self.fd, 64).strip()
        self.value = int(raw) if raw.isdigit() else 0
        return self

    def bump(self) -> int:
        self.value += 1
        # Fixed width, written in place: truncating costs milliseconds on some filesystems.
        os.pwrite(self.fd, f"{self.value:020d}".encode(), 0)
        return self.value

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)


def _active(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in (folder / "active").iterdir() if p.suffix == ".run")
    except OSError:
        return []


def _describe(entry: Path) -> str:
    try:
        data: Any = json.loads(entry.read_text(encoding="utf-8"))
        seed = "noseed" if data.get("seed") is None else f"seed {data['seed']}"
        return f"run {data['launcher']} {seed} (pid {data['pid']})"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return entry.stem


def enter(plan: RunPlan, environ: Mapping[str, str] | None = None) -> RunSlot:
    """Take ``plan``'s outputs and register the run; OutputBusy, naming the holder, when another
    run of the artifact holds one. Taken before the run directory is made, so a refused run
    leaves nothing behind."""
    env = os.environ if environ is None else environ
    key = hashlib.sha256(os.path.realpath(plan.artifact.root).encode()).hexdigest()[:32]
    folder = _lock_root(env) / key
    try:
        (folder / "paths").mkdir(parents=True, exist_ok=True, mode=0o700)
        (folder / "active").mkdir(exist_ok=True, mode=0o700)
        info = os.lstat(folder.parent)
    except OSError as exc:
        raise RunError(f"cannot create the run lock folder {str(folder)!r}: {exc.strerror or exc}") from None
    if not os.path.isdir(folder.parent) or os.path.islink(folder.parent) or info.st_uid != os.getuid():
        raise RunError(f"the run lock folder {str(folder.parent)!r} is not a directory of this user; "
                       f"remove it or set {LOCK_DIR_ENV}")
    exclusive, shared = _claims([rel for _, rel, _ in plan.outputs])
    fds: list[int] = []
    try:
        for rel, mode in [(r, fcntl.LOCK_EX) for r in exclusive] + [(r, fcntl.LOCK_SH) for r in shared]:
            fd = _open_locked(folder / "paths" / f"{hashlib.sha256(rel.encode()).hexdigest()[:32]}.lock", mode)
            if fd is None:
                raise OutputBusy(_busy_message(plan, rel, folder))
            fds.append(fd)
        with _SeqLock(folder) as seq:
            mine = seq.bump()
            others = [_describe(e) for e in _active(folder) if _held(e)]
            entry = folder / "active" / f"{mine:012d}.run"
            tmp = folder / "active" / scratch_name(".new-")
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            fds.append(fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, json.dumps({"pid": os.getpid(), "launcher": plan.launcher.id, "seed": plan.seed,
                                     "outputs": [rel for _, rel, _ in plan.outputs]}).encode())
            os.rename(tmp, entry)
        # Entries of runs that ended (or were killed) are dropped by whoever comes next.
        for stale in _active(folder):
            if stale != entry and not _held(stale):
                try:
                    os.unlink(stale)
                except OSError:
                    pass
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return RunSlot(folder, fds, entry, mine, others)


def _busy_message(plan: RunPlan, rel: str, folder: Path) -> str:
    """Which output is taken, and by which run (from the registrations of live runs)."""
    ident = next((i for i, r, _ in plan.outputs if posixpath.normpath(r).strip("/") == rel), None)
    what = f"output {ident!r} ({rel})" if ident else f"directory {rel!r} (above an output)"
    holders = []
    for entry in _active(folder):
        if not _held(entry):
            continue
        try:
            outputs = json.loads(entry.read_text(encoding="utf-8")).get("outputs", [])
        except (OSError, ValueError, AttributeError):
            outputs = []
        if any(_overlap(rel, posixpath.normpath(o).strip("/")) for o in outputs):
            holders.append(_describe(entry))
    holder = f" by {holders[0]}" if holders else " by another run"
    return (f"launcher {plan.launcher.id!r}: {what} is being written{holder} of this artifact; "
            f"run it when that run has ended")


def _overlap(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")
