"""The one atomic write: a file appears whole or not at all, whoever reads it meanwhile.

Run records, locks, the manifest's lock block, SBOMs, OCI layout indexes and cache entries are
all written through :func:`write_atomic`: a hidden temporary file in the same directory
(created with ``O_EXCL``, so two writers never share one), optionally flushed to disk, then
renamed over the target. The temporary name is built from the process id, a clock and a
counter rather than by ``tempfile``, whose imports would cost every ``rra run`` about 4 ms.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

__all__ = ["scratch_name", "write_atomic"]

_COUNTER = itertools.count()


def scratch_name(prefix: str) -> str:
    """A name no other process or call of this one uses at the same time: prefix, pid, clock,
    counter (callers create it with O_EXCL or mkdir, which refuse a name that exists anyway)."""
    return f"{prefix}{os.getpid()}-{time.monotonic_ns()}-{next(_COUNTER)}"


def write_atomic(path: Path, data: bytes, *, replace: bool = True, mode: int | None = None,
                 durable: bool = True) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename; never half-written.

    ``replace=False`` refuses (FileExistsError) to overwrite an existing file. ``mode`` is the
    new file's permission bits; by default those of the file it replaces, else 0o644 as the
    umask allows.
    ``durable`` flushes the file and then its directory to disk (a cache entry need not be).
    """
    if not replace and os.path.lexists(path):
        raise FileExistsError(f"{path} exists; it is never overwritten")
    chmod = mode
    if chmod is None and replace:
        try:
            chmod = os.stat(path).st_mode & 0o777
        except OSError:
            chmod = None
    tmp = path.parent / scratch_name(f".{path.name}.")
    # A new file gets 0o644 as the umask allows (records are evidence others review).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if chmod is not None:
            os.chmod(tmp, chmod)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    # The rename is durable only once the directory entry is; some filesystems refuse the fsync.
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
