"""SHA-256 of files: 1 MiB reads into one reused buffer, many files hashed in parallel threads
(hashlib releases the GIL while hashing, so threads scale across cores)."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["CHUNK_SIZE", "DigestPool", "hash_files", "sha256_file"]

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


class DigestPool:
    """Hash files on worker threads as they are submitted, so hashing overlaps whatever the
    caller does meanwhile (e.g. resolving the next paths). Use as a context manager."""

    def __init__(self, workers: int | None = None, deadline: float | None = None) -> None:
        self._workers = workers if workers is not None else min(32, 2 * (os.cpu_count() or 1))
        self._deadline = deadline
        self._pool: ThreadPoolExecutor | None = None
        self._open = False
        self._futures: dict[Path, Future[str | OSError]] = {}

    def __enter__(self) -> DigestPool:
        self._open = True
        return self

    def __exit__(self, *exc: object) -> None:
        self._open = False
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _one(self, path: Path) -> str | OSError:
        try:
            return sha256_file(path, self._deadline)
        except OSError as exc:
            return exc

    def submit(self, path: Path) -> None:
        """Start hashing ``path`` (once, however often it is submitted)."""
        if not self._open:
            raise RuntimeError("DigestPool used outside its 'with' block")
        if self._pool is None:
            # Threads (and the concurrent.futures import) only once there is something to hash:
            # a run without outputs, or a manifest checked without its files (rra run's check
            # of a manifest), needs none.
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=max(1, self._workers))
        if path not in self._futures:
            self._futures[path] = self._pool.submit(self._one, path)

    def results(self) -> dict[Path, str | OSError]:
        """Wait for every submitted file; each value is the hex digest or the error that stopped it."""
        return {path: future.result() for path, future in self._futures.items()}


def hash_files(paths: Iterable[Path], workers: int | None = None,
               deadline: float | None = None) -> dict[Path, str | OSError]:
    """Hash every path, in parallel; each value is the hex digest or the error that stopped it
    (TimeoutError for files not finished before ``deadline``, a ``time.monotonic()`` value)."""
    unique = list(dict.fromkeys(paths))
    if not unique:
        return {}
    # Largest first, so a big file does not start last and leave other threads idle.
    unique.sort(key=_size, reverse=True)
    with DigestPool(min(workers or 32, len(unique)) if workers else None, deadline) as pool:
        for path in unique:
            pool.submit(path)
        return pool.results()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
