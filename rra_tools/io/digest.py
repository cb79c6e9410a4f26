"""SHA-256 of files: 1 MiB reads into one reused buffer, many files hashed in parallel threads
(hashlib releases the GIL while hashing, so threads scale across cores)."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["CHUNK_SIZE", "hash_files", "sha256_file"]

#: Bytes read per call; large enough that the per-call overhead vanishes next to hashing.
CHUNK_SIZE = 1024 * 1024


def sha256_file(path: Path, deadline: float | None = None) -> str:
    """Hex SHA-256 of the file at ``path``; TimeoutError once ``time.monotonic()`` passes ``deadline``."""
    digest = hashlib.sha256()
    buffer = bytearray(CHUNK_SIZE)
    view = memoryview(buffer)
    # O_NONBLOCK so that a FIFO swapped in after the caller's check cannot block the open.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb", buffering=0) as handle:
        while True:
            n = handle.readinto(buffer)
            if not n:
                break
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"time budget exhausted while hashing {path}")
            digest.update(view[:n])
    return digest.hexdigest()


def hash_files(paths: Iterable[Path], workers: int | None = None,
                deadline: float | None = None) -> dict[Path, str | OSError]:
    """Hash every path, in parallel; each value is the hex digest or the error that stopped it
    (TimeoutError for files not finished before ``deadline``, a ``time.monotonic()`` value)."""

    def _one(path: Path) -> str | OSError:
        try:
            return sha256_file(path, deadline)
        except OSError as exc:
            return exc

    unique = list(dict.fromkeys(paths))
    if not unique:
        return {}
    if workers is None:
        workers = min(32, 2 * (os.cpu_count() or 1))
    if len(unique) == 1 or workers <= 1:
        return {p: _one(p) for p in unique}
    # Largest first, so a big file does not start last and leave other threads idle.
    unique.sort(key=_size, reverse=True)
    with ThreadPoolExecutor(max_workers=min(workers, len(unique))) as pool:
        return dict(zip(unique, pool.map(_one, unique)))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
