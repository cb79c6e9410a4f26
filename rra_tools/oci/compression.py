"""Layer compression: deterministic zstd and gzip writers, bounded readers, and the sampling
that decides whether a layer is worth compressing at all.

Both writers are byte-for-byte deterministic for a given library version: zstd runs
single-threaded at a fixed level with no content size in the frame header (so parameters never
depend on the input's size), and gzip has a hand-written header with mtime 0, no file name and
the "unknown" OS byte, so the host system leaves no trace.
"""

from __future__ import annotations

import bisect
import os
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, BinaryIO, Protocol, cast

from .errors import UncompressedMismatch

__all__ = [
    "GZIP_LEVEL",
    "STORE_RATIO",
    "ZSTD_LEVEL",
    "Compressor",
    "Reader",
    "default_compression",
    "make_compressor",
    "open_decompressed",
    "sample_ratio",
    "zstd_available",
]

#: zstd's own default level: several hundred MB/s per core with a good ratio on source code.
ZSTD_LEVEL = 3
GZIP_LEVEL = 6
#: A layer whose samples compress to at least this fraction of their size is stored as plain
#: tar: saving under 10 % is not worth the time every reader spends decompressing.
STORE_RATIO = 0.9
#: Sampling: this many windows of this many bytes, spread evenly over the layer's content.
SAMPLE_WINDOWS = 16
SAMPLE_BYTES = 64 * 1024


class Compressor(Protocol):
    """The streaming interface of zlib's and zstandard's compress objects."""

    def compress(self, data: Any) -> bytes: ...  # noqa: D102

    def flush(self) -> bytes: ...  # noqa: D102


class Reader(Protocol):
    """Anything with ``read(n)`` returning at most ``n`` bytes (b"" at the end)."""

    def read(self, n: int = -1, /) -> bytes: ...  # noqa: D102


def zstd_available() -> bool:
    """True when the ``zstandard`` package can be imported."""
    try:
        import zstandard  # noqa: F401
    except ImportError:
        return False
    return True


def default_compression() -> str:
    """'zstd' when zstandard is installed, else 'gzip' (always available)."""
    return "zstd" if zstd_available() else "gzip"


class _GzipCompressor:
    """gzip (RFC 1952) with a fixed header: mtime 0, no name, XFL 0, OS 255 (unknown)."""

    def __init__(self, level: int = GZIP_LEVEL) -> None:
        self._deflate = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
        self._crc = 0
        self._size = 0
        self._header: bytes | None = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"

    def compress(self, data: Any) -> bytes:
        self._crc = zlib.crc32(data, self._crc)
        self._size += len(data)
        out = self._deflate.compress(data)
        if self._header is not None:
            out, self._header = self._header + out, None
        return out

    def flush(self) -> bytes:
        out = (self._header or b"") + self._deflate.flush()
        self._header = None
        return out + struct.pack("<II", self._crc & 0xFFFFFFFF, self._size & 0xFFFFFFFF)


def make_compressor(kind: str) -> Compressor:
    """A fresh deterministic compressor: ``kind`` is 'zstd' or 'gzip'."""
    if kind == "gzip":
        return _GzipCompressor()
    if kind == "zstd":
        import zstandard

        # threads=0: one thread, so output never depends on the worker count or the machine.
        cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True, write_content_size=False,
                                        threads=0)
        return cctx.compressobj()
    raise ValueError(f"unknown compression {kind!r}; expected 'zstd' or 'gzip'")


class _GzipReader:
    """Decompress gzip from ``source``, at most ``n`` bytes per read, members one after another."""

    def __init__(self, source: Reader, chunk: int) -> None:
        self._source = source
        self._chunk = chunk
        self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._pending = b""
        self._done = False

    def read(self, n: int = -1, /) -> bytes:
        if n < 0:
            raise ValueError("bounded reads only")
        while not self._done:
            if self._d.eof:
                # A member ended; what follows is another member or the end of the stream.
                # unused_data holds all input past the member (unconsumed_tail repeats part of it).
                self._pending = self._d.unused_data
                self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                if not self._pending:
                    self._pending = self._source.read(self._chunk)
                    if not self._pending:
                        self._done = True
                        break
            if not self._pending:
                self._pending = self._source.read(self._chunk)
                if not self._pending:
                    raise UncompressedMismatch("the layer's gzip stream is truncated")
            try:
                out = self._d.decompress(self._pending, n)
            except zlib.error as exc:
                raise UncompressedMismatch(f"the layer's gzip stream is corrupt: {exc}") from None
            self._pending = self._d.unconsumed_tail
            if out:
                return out
        return b""


def open_decompressed(kind: str, source: BinaryIO | Reader, chunk: int = 1024 * 1024) -> Reader:
    """A bounded reader of the decompressed bytes of ``source``; ``kind`` is '', 'zstd' or 'gzip'.

    Every read returns at most the size asked for, however much the input expands, so a
    caller that counts bytes can stop a decompression bomb after the first excess byte.
    """
    if kind == "":
        return source
    if kind == "gzip":
        return _GzipReader(source, chunk)
    if kind == "zstd":
        import zstandard

        # The default window limit (128 MiB) stands: a frame asking for more is refused
        # instead of allocating it. read_across_frames: every frame counts towards the digest.
        dctx = zstandard.ZstdDecompressor()
        reader: Reader = dctx.stream_reader(cast(IO[bytes], source), read_size=chunk, read_across_frames=True, closefd=False)
        return _ZstdErrors(reader)
    raise ValueError(f"unknown compression {kind!r}")


class _ZstdErrors:
    """Report a corrupt zstd stream as the typed error the rest of the reader expects."""

    def __init__(self, reader: Reader) -> None:
        self._reader = reader

    def read(self, n: int = -1, /) -> bytes:
        import zstandard

        try:
            return self._reader.read(n)
        except zstandard.ZstdError as exc:
            raise UncompressedMismatch(f"the layer's zstd stream is corrupt: {exc}") from None


def sample_ratio(files: Sequence[tuple[Path, int]], kind: str) -> float:
    """Compressed size over raw size of samples of the files' concatenated content.

    Up to :data:`SAMPLE_WINDOWS` windows of :data:`SAMPLE_BYTES` at evenly spaced offsets (all
    of the content when it is smaller), each compressed on its own at the fastest level of
    ``kind``. Depends only on the files' content, so the decision is as deterministic as the
    rest of the pack.
    """
    sizes = [size for _, size in files]
    total = sum(sizes)
    if total == 0:
        return 1.0
    starts = [0]
    for size in sizes[:-1]:
        starts.append(starts[-1] + size)
    if total <= SAMPLE_WINDOWS * SAMPLE_BYTES:
        windows = [(0, total)]
    else:
        step = (total - SAMPLE_BYTES) / (SAMPLE_WINDOWS - 1)
        windows = [(int(k * step), SAMPLE_BYTES) for k in range(SAMPLE_WINDOWS)]
    raw = packed = 0
    for offset, length in windows:
        data = _read_span(files, starts, offset, length)
        raw += len(data)
        packed += len(_fast_compress(data, kind))
    return packed / raw if raw else 1.0


def _read_span(files: Sequence[tuple[Path, int]], starts: list[int], offset: int, length: int) -> bytes:
    parts: list[bytes] = []
    i = bisect.bisect_right(starts, offset) - 1
    while length > 0 and i < len(files):
        path, size = files[i]
        inner = offset - starts[i]
        take = min(length, size - inner)
        if take > 0:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                parts.append(os.pread(fd, take, inner))
            finally:
                os.close(fd)
            length -= take
            offset += take
        i += 1
    return b"".join(parts)


def _fast_compress(data: bytes, kind: str) -> bytes:
    if kind == "zstd":
        import zstandard

        return zstandard.ZstdCompressor(level=1, threads=0).compress(data)
    return zlib.compress(data, 1)
