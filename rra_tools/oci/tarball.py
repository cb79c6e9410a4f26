"""Deterministic tar streams: the same files give the same bytes on any machine and checkout.

Entries are sorted component by component (so a directory precedes its contents), every
mtime is one fixed value (``SOURCE_DATE_EPOCH`` when set, else 0), owners are uid/gid 0 with
empty user and group names, modes are 0644 (0755 for directories and for files with any
execute bit), and headers use the GNU format with no PAX records, so no access or change
time ever reaches the archive. Names longer than the 100-byte header field use GNU
``././@LongLink`` entries, whose own header fields are fixed too.

Why not ``tarfile`` (benchmarks/bench_libraries.py, 2026-12-05): made as deterministic as it can
be (GNU format, mtime, owners and modes set per member), it still pads the archive to a
10,240-byte record and fills header fields its own way, so its bytes are not these (a layer's
digest is part of the standard's packing), and it took 1.9x the time to stream 128 MiB (164 ms
against 88 ms: it copies each file through its own buffer and cannot hand the stream to a
hashing sink without an intermediate file object).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import PackError

__all__ = [
    "BLOCK",
    "Entry",
    "default_mtime",
    "header",
    "sort_key",
    "tar_size",
    "with_parents",
    "write_tar",
]

BLOCK = 512
#: Bytes read from a file per call; large reads keep the per-call cost negligible.
READ_CHUNK = 4 * 1024 * 1024
_GNU_MAGIC = b"ustar  \x00"
_LONG_NAME = b"././@LongLink"

#: Receives the next piece of the stream. The buffer may be reused after the call returns,
#: so a sink consumes (hashes, compresses, writes) it before returning.
Sink = Callable[[memoryview], None]


@dataclass(frozen=True)
class Entry:
    """One entry of a tar stream."""

    #: POSIX path relative to the artifact root, without a trailing slash.
    name: str
    #: "file", "dir" or "symlink".
    kind: str
    size: int = 0
    executable: bool = False
    #: Target of a symbolic link, as written in the link.
    target: str = ""
    #: The file to read the content from (kind "file").
    source: Path | None = None


def default_mtime(environ: dict[str, str] | None = None) -> int:
    """The mtime written for every entry: ``SOURCE_DATE_EPOCH`` when set, else 0 (1970-01-01).

    >>> default_mtime({"SOURCE_DATE_EPOCH": "1700000000"})
    1700000000
    """
    env = os.environ if environ is None else environ
    value = env.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return 0
    if not value.isdigit() or int(value) >= 8 ** 11:
        raise PackError(f"SOURCE_DATE_EPOCH is {value!r}; expected a non-negative integer number of seconds")
    return int(value)


def sort_key(name: str) -> tuple[bytes, ...]:
    """Order of entries: component by component, by UTF-8 bytes.

    >>> sorted(["a/b", "a-b", "a"], key=sort_key)
    ['a', 'a/b', 'a-b']
    """
    return tuple(part.encode("utf-8") for part in name.split("/"))


def with_parents(entries: Iterable[Entry]) -> list[Entry]:
    """``entries`` plus a directory entry for every ancestor, sorted by :func:`sort_key`."""
    out = {e.name: e for e in entries}
    for name in list(out):
        parts = name.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent not in out:
                out[parent] = Entry(parent, "dir")
    return sorted(out.values(), key=lambda e: sort_key(e.name))


def _octal(value: int, width: int) -> bytes:
    return b"%0*o\x00" % (width - 1, value)


def _size_field(size: int) -> bytes:
    if size < 8 ** 11:
        return _octal(size, 12)
    # GNU base-256: a leading 0x80 byte, then the number big-endian in the remaining 11 bytes.
    return b"\x80" + size.to_bytes(11, "big")


def _block(name: bytes, mode: int, size: int, mtime: int, typeflag: bytes, linkname: bytes) -> bytes:
    buf = bytearray(BLOCK)
    buf[0:len(name)] = name
    buf[100:108] = _octal(mode, 8)
    buf[108:116] = _octal(0, 8)
    buf[116:124] = _octal(0, 8)
    buf[124:136] = _size_field(size)
    buf[136:148] = _octal(mtime, 12)
    buf[148:156] = b" " * 8
    buf[156:157] = typeflag
    buf[157:157 + len(linkname)] = linkname
    buf[257:265] = _GNU_MAGIC
    # uname, gname, devmajor, devminor stay NUL: no user names, no device numbers.
    buf[148:156] = b"%06o\x00 " % sum(buf)
    return bytes(buf)


def _long(data: bytes, typeflag: bytes) -> bytes:
    payload = data + b"\x00"
    return _block(_LONG_NAME, 0o644, len(payload), 0, typeflag, b"") + _pad(payload)


def _pad(data: bytes) -> bytes:
    return data + b"\x00" * (-len(data) % BLOCK)


def header(entry: Entry, mtime: int) -> bytes:
    """The header block(s) of ``entry``: a GNU long-name record first when the name (or link
    target) does not fit in 100 bytes."""
    name = entry.name.encode("utf-8") + (b"/" if entry.kind == "dir" else b"")
    link = entry.target.encode("utf-8")
    prefix = b""
    if len(name) > 100:
        prefix += _long(name, b"L")
    if len(link) > 100:
        prefix += _long(link, b"K")
    if entry.kind == "file":
        return prefix + _block(name[:100], 0o755 if entry.executable else 0o644, entry.size, mtime, b"0", b"")
    if entry.kind == "dir":
        return prefix + _block(name[:100], 0o755, 0, mtime, b"5", b"")
    if entry.kind == "symlink":
        return prefix + _block(name[:100], 0o777, 0, mtime, b"2", link[:100])
    raise ValueError(f"unknown entry kind {entry.kind!r}")


def tar_size(entries: Iterable[Entry]) -> int:
    """The exact length of the stream :func:`write_tar` produces for ``entries``."""
    total = 2 * BLOCK
    for entry in entries:
        total += len(header(entry, 0))
        if entry.kind == "file":
            total += entry.size + (-entry.size % BLOCK)
    return total


def write_tar(entries: Iterable[Entry], mtime: int, sink: Sink,
              on_content: Callable[[int], None] | None = None) -> int:
    """Write the tar stream of ``entries`` (in the order given) into ``sink``; return its length.

    ``on_content`` is told how many file bytes were just written (for progress). A file whose
    size changed since it was listed raises PackError: its header already declared the size.
    """
    buffer = bytearray(READ_CHUNK)
    view = memoryview(buffer)
    total = 0
    for entry in entries:
        head = header(entry, mtime)
        sink(memoryview(head))
        total += len(head)
        if entry.kind != "file" or entry.source is None:
            continue
        total += _copy_file(entry, sink, buffer, view, on_content)
        padding = -entry.size % BLOCK
        if padding:
            sink(memoryview(bytes(padding)))
            total += padding
    end = bytes(2 * BLOCK)
    sink(memoryview(end))
    return total + len(end)


def _copy_file(entry: Entry, sink: Sink, buffer: bytearray, view: memoryview,
               on_content: Callable[[int], None] | None) -> int:
    assert entry.source is not None
    try:
        # O_NOFOLLOW: a file swapped for a symlink after listing is refused, not followed.
        fd = os.open(entry.source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise PackError(f"cannot read {entry.name!r}: {exc.strerror or exc}") from None
    remaining = entry.size
    with os.fdopen(fd, "rb", buffering=0) as handle:
        while remaining:
            n = handle.readinto(view[:min(remaining, len(buffer))])
            if not n:
                raise PackError(f"{entry.name!r} shrank while it was being packed; pack again")
            sink(view[:n])
            remaining -= n
            if on_content is not None:
                on_content(n)
        if handle.read(1):
            raise PackError(f"{entry.name!r} grew while it was being packed; pack again")
    return entry.size
