"""Unpack the layers of a packed RRA safely (spec/05-packaging.md#unpacking).

Every layer is streamed: its blob is hashed as it is read and refused past its declared size,
the decompressed bytes are hashed and refused past the uncompressed size the config declares
(so a "1 GB of zeros claiming 1 KB" layer stops after the first excess byte), and each tar entry
is checked before anything is written: no absolute path, no ``..``, no link leaving the
destination, no write through a link, no device or FIFO, no duplicate. Everything is written
into a temporary directory next to the destination, renamed into place only after every layer
verified; any failure removes it, so nothing is left behind.

Links are judged twice: each target by its text as it arrives, and, once every layer is in, all
of them together through one another (:class:`~rra_tools.io.links.LinkTree`), since
``x/y/lnk -> ../..`` makes the innocent-looking ``chain -> x/y/lnk/../../../etc/passwd`` leave
the destination, whichever of the two comes first in the stream.

Why not the standard library's ``tarfile`` with its ``data`` extraction filter: the filter judges
each member when it is extracted, against what is on disk at that moment, so the pair above is
refused in one order and extracted in the other (``chain`` first: ``x/y/lnk`` does not exist
yet, the target looks inside; then ``lnk`` itself is harmless), and ``chain`` then reads a
file of the host (checked with Python 3.11.7). Its safety also depends on the
interpreter's patch release (the 2025 filter bypasses), and it has none of the checks of
spec/05-packaging.md#unpacking beyond paths and links: duplicates, entries below a file, hard
links only to earlier regular files, names with backslashes or drive letters, entry and
metadata caps, the exact modes 0644/0755, hashing of the decompressed stream. The hand-written
reader (:mod:`.tarread`) only parses; every decision is here, tested by the hostile corpus of
tests/unit/test_oci_unpack.py.
"""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import shutil
import tempfile
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.links import LinkTree
from ..io.paths import lexical_issue
from .compression import Reader, open_decompressed
from .config import ArtifactConfig, LayerEntry, match_layers, read_config
from .errors import (
    DigestMismatch,
    DocumentTooLarge,
    OCIError,
    SizeMismatch,
    UncompressedMismatch,
    UnpackError,
    UnsafeLayer,
)
from .layout import BlobOpener, Descriptor, layout_opener
from .tarread import Member, TarReader

__all__ = ["DEFAULT_LIMITS", "DEFAULT_MAX_RATIO", "RATIO_SLACK_BYTES", "UnpackLimits", "UnpackResult",
           "check_ratio", "unpack_layers"]

_CHUNK = 1024 * 1024
_REGULAR = (b"0", b"\x00", b"7")

#: Most unpacked bytes per compressed byte of a layer (plus :data:`RATIO_SLACK_BYTES`). Source,
#: text, tables and model weights compress 2-20 times, sparse arrays a few hundred times; gzip
#: cannot pass about 1,030 times, while a few kilobytes of zstd can expand to gigabytes.
DEFAULT_MAX_RATIO = 1000
#: Added to every layer's bound, so a tiny layer (a few empty files) never meets the ratio.
RATIO_SLACK_BYTES = 1024 * 1024


@dataclass(frozen=True)
class UnpackLimits:
    """Bounds on what an unpack may write; exceeding one refuses the artifact."""

    #: Sum of the declared uncompressed sizes of the layers unpacked (None: no bound).
    max_total_bytes: int | None = None
    max_entries: int = 1_000_000
    max_name_bytes: int = 4096
    #: Largest GNU long-name or PAX record accepted.
    max_meta_bytes: int = 1024 * 1024
    #: A compressed layer may unpack to at most ``max_ratio`` times its blob's size plus
    #: :data:`RATIO_SLACK_BYTES` (None: no bound). An honest decompression bomb declares its
    #: true size, which the total bound alone lets through when it is below that bound.
    max_ratio: int | None = DEFAULT_MAX_RATIO


DEFAULT_LIMITS = UnpackLimits()


@dataclass(frozen=True)
class UnpackResult:
    """What was unpacked."""

    dest: Path
    config: ArtifactConfig
    #: Roles of the layers unpacked, in order (data layers once per data source).
    roles: tuple[str, ...]
    files: int
    bytes: int


def unpack_layers(source: Path | str | BlobOpener, manifest: Mapping[str, Any], dest: Path | str, *,
                  only_roles: Collection[str] | None = None, limits: UnpackLimits = DEFAULT_LIMITS,
                  config: ArtifactConfig | None = None, blobs_verified: bool = False) -> UnpackResult:
    """Unpack the layers of ``manifest`` (a parsed image manifest) into ``dest``.

    ``source`` is an image layout directory or a :data:`BlobOpener`. ``dest`` must not exist
    (or be an empty directory). ``only_roles`` restricts the layers unpacked. Raises a typed
    :class:`OCIError` (UnsafeLayer, DigestMismatch, SizeMismatch, UncompressedMismatch, ...)
    naming the blob digest and the entry; nothing is then left at ``dest``.

    ``blobs_verified`` says the caller has just checked every layer blob against its digest
    and size, in a place only it writes to (``pull``, which downloads them so): each blob's
    size is still bounded as it is read, but it is not hashed a second time. A plain
    (uncompressed) layer is hashed once at most in any case: its tar is its blob.
    """
    opener = layout_opener(Path(source)) if isinstance(source, (str, Path)) else source
    dest = Path(dest).absolute()
    if (dest.exists() or dest.is_symlink()) and (not dest.is_dir() or dest.is_symlink() or any(dest.iterdir())):
        raise UnpackError(f"{str(dest)!r} exists and is not empty; unpack into a new directory")
    if config is None:
        _, config = read_config(opener, manifest)
    chosen = [(d, e, c) for d, e, c in match_layers(manifest, config) if only_roles is None or e.role in only_roles]
    declared = sum(e.size for _, e, _ in chosen)
    if limits.max_total_bytes is not None and declared > limits.max_total_bytes:
        raise DocumentTooLarge(f"the layers declare {declared} bytes in all, more than the limit of "
                               f"{limits.max_total_bytes}")
    check_ratio([(d, e, c) for d, e, c in chosen], limits)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.rra-unpack-", dir=dest.parent))
    try:
        writer = _Writer(tmp, limits)
        for descriptor, entry, compression in chosen:
            _unpack_layer(opener, descriptor, entry, compression, writer, limits, blobs_verified)
        writer.finish()
        os.chmod(tmp, 0o755)  # noqa: S103 - the normalised mode of an unpacked directory
        _move_into_place(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return UnpackResult(dest, config, tuple(e.role for _, e, _ in chosen), writer.files, writer.bytes)


def check_ratio(layers: Collection[tuple[Descriptor, LayerEntry, str]], limits: UnpackLimits,
                where: str | None = None) -> None:
    """Refuse (DocumentTooLarge) a compressed layer whose declared unpacked size passes
    ``limits.max_ratio`` times its blob's size plus :data:`RATIO_SLACK_BYTES`.

    Checked on the declared sizes, before a byte of the layer is read; unpacking then cuts each
    layer's stream at its declared size, so no layer ever yields more than this bound.
    """
    if limits.max_ratio is None:
        return
    for descriptor, entry, compression in layers:
        bound = limits.max_ratio * descriptor.size + RATIO_SLACK_BYTES
        if compression and entry.size > bound:
            source = f"{where}: " if where else ""
            raise DocumentTooLarge(
                f"{source}layer {descriptor.digest} ({compression}) declares {entry.size:,} unpacked bytes from "
                f"{descriptor.size:,} compressed, more than {limits.max_ratio} times its size plus "
                f"{RATIO_SLACK_BYTES:,} bytes ({bound:,}): a decompression bomb? raise the bound with "
                "--max-ratio if you expect this (0: no bound)")


def _move_into_place(tmp: Path, dest: Path) -> None:
    # Another unpack into the same destination (two pulls at once) may finish first: one wins,
    # the other says so; neither writes into what the other made.
    taken = UnpackError(f"{str(dest)!r} was filled by someone else while unpacking (another pull into the same "
                        "directory?); it was left as it is")
    try:
        if dest.is_dir() and not dest.is_symlink():
            dest.rmdir()  # empty (checked before): rename cannot replace a directory on every system
    except FileNotFoundError:
        pass  # the other unpack removed it first; the rename below decides
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise taken from None
        raise
    try:
        os.rename(tmp, dest)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise taken from None
        raise


class _Bounded:
    """Reads ``source``, hashing (unless told not to), and raises ``excess()`` once more than
    ``limit`` bytes come."""

    def __init__(self, source: Reader, limit: int, excess: Callable[[], OCIError], *, hashing: bool = True) -> None:
        self._source = source
        self._limit = limit
        self._excess = excess
        self.hash = hashlib.sha256() if hashing else None
        self.count = 0

    def read(self, n: int = -1, /) -> bytes:
        # Ask for one byte past the limit at most, so an excess shows without reading it all.
        want = min(n if n >= 0 else _CHUNK, self._limit - self.count + 1)
        data = self._source.read(max(want, 1))
        self.count += len(data)
        if self.count > self._limit:
            raise self._excess()
        if self.hash is not None:
            self.hash.update(data)
        return data

    def drain(self) -> None:
        while self.read(_CHUNK):
            pass

    @property
    def digest(self) -> str | None:
        """``sha256:<hex>`` of what was read; None when not hashing."""
        return None if self.hash is None else "sha256:" + self.hash.hexdigest()


def _unpack_layer(opener: BlobOpener, descriptor: Descriptor, entry: LayerEntry, compression: str,
                  writer: _Writer, limits: UnpackLimits, verified: bool) -> None:
    digest = descriptor.digest
    with opener(descriptor) as blob:
        raw = _Bounded(blob, descriptor.size, lambda: SizeMismatch(
            f"layer {digest} is larger than the {descriptor.size} bytes its descriptor says", digest=digest),
            hashing=not verified)
        try:
            # A plain layer's tar is its blob: the blob's hash serves for both digests.
            plain = _Bounded(open_decompressed(compression, raw) if compression else raw, entry.size,
                             lambda: UncompressedMismatch(
                                 f"layer {digest} decompresses to more than the {entry.size} bytes its config "
                                 f"declares (a decompression bomb, or a tampered config)", digest=digest),
                             hashing=bool(compression))
            reader = TarReader(plain, digest=digest, max_meta_bytes=limits.max_meta_bytes,
                               max_name_bytes=limits.max_name_bytes)
            while (member := reader.next()) is not None:
                writer.add(member, reader, digest)
            plain.drain()  # bytes after the end-of-archive blocks count towards the digest too
        except (UncompressedMismatch, UnsafeLayer) as exc:
            # A tampered blob often shows first as a corrupt stream or a broken header; name
            # the root cause when the blob's own digest is wrong.
            _check_blob(raw, descriptor, cause=exc)
            raise
        _check_blob(raw, descriptor)
    if plain.count != entry.size:
        raise UncompressedMismatch(f"layer {digest} decompresses to {plain.count} bytes but its config declares "
                                   f"{entry.size}", digest=digest)
    # Past _check_blob the blob's digest is its descriptor's, whether hashed here or before.
    actual = plain.digest if compression else digest
    if actual != entry.diff_id:
        raise UncompressedMismatch(f"layer {digest} decompresses to {actual} but its config declares "
                                   f"{entry.diff_id}", digest=digest, actual=actual)


def _check_blob(raw: _Bounded, descriptor: Descriptor, cause: OCIError | None = None) -> None:
    try:
        raw.drain()
    except SizeMismatch:
        if cause is None:
            raise
        raise cause from None
    if raw.count != descriptor.size:
        raise SizeMismatch(f"layer {descriptor.digest} is {raw.count} bytes but its descriptor says "
                           f"{descriptor.size}", digest=descriptor.digest)
    if raw.digest is not None and raw.digest != descriptor.digest:
        raise DigestMismatch(f"layer {descriptor.digest} has digest {raw.digest}; the blob was altered",
                             digest=descriptor.digest, actual=raw.digest, entry=cause.entry if cause else None)


class _Writer:
    """Creates the checked entries under ``root``; remembers what exists to refuse duplicates,
    writes below files or links, and hard links to anything but an earlier file."""

    def __init__(self, root: Path, limits: UnpackLimits) -> None:
        self.root = root
        self.limits = limits
        self.kinds: dict[str, str] = {}
        self.files = 0
        self.bytes = 0
        self.entries = 0
        self.links = LinkTree("the destination")
        #: The layer each symbolic link came from, to name it when the link is refused.
        self.link_layers: dict[str, str] = {}

    def add(self, member: Member, reader: TarReader, digest: str) -> None:
        """Check ``member`` and create it (reading its data from ``reader``)."""

        def unsafe(why: str) -> UnsafeLayer:
            return UnsafeLayer(f"layer {digest} entry {member.name!r} {why}", digest=digest, entry=member.name)

        try:
            self._add(member, reader, digest, unsafe)
        except FileExistsError:
            # Names that differ only in case or Unicode normalisation meet on some file systems.
            raise unsafe("collides with an earlier entry on this file system") from None

    def _add(self, member: Member, reader: TarReader, digest: str, unsafe: Callable[[str], UnsafeLayer]) -> None:
        name = member.name
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise unsafe(f"is past the limit of {self.limits.max_entries} entries")
        rel = _normalise(name, unsafe)
        typeflag = member.typeflag
        if typeflag == b"5":
            if rel is None or self.kinds.get(rel) == "dir":
                return  # the root itself, or a directory another layer created too
            self._check_new(rel, unsafe)
            self._ensure_parents(rel, unsafe)
            os.mkdir(self.root / rel, 0o755)
            self.kinds[rel] = "dir"
            return
        if rel is None:
            raise unsafe("names the destination itself")
        if typeflag in (b"3", b"4"):
            raise unsafe("is a device node; layers hold only files, directories and links")
        if typeflag == b"6":
            raise unsafe("is a FIFO; layers hold only files, directories and links")
        if typeflag not in (*_REGULAR, b"2", b"1"):
            raise unsafe(f"has type {typeflag!r}, which is never unpacked")
        self._check_new(rel, unsafe)
        self._ensure_parents(rel, unsafe)
        path = self.root / rel
        if typeflag == b"2":
            target = member.linkname
            if not target or target.startswith("/") or "\\" in target:
                raise unsafe(f"is a symbolic link to {target!r}; links must be relative")
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
            if resolved == ".." or resolved.startswith("../"):
                raise unsafe(f"is a symbolic link to {target!r}, outside the destination")
            os.symlink(target, path)
            self.kinds[rel] = "symlink"
            self.links.add(rel, target)
            self.link_layers[rel] = digest
        elif typeflag == b"1":
            original = _normalise(member.linkname, lambda why: unsafe(f"is a hard link whose target {why}"))
            if original is None or self.kinds.get(original) != "file":
                raise unsafe(f"is a hard link to {member.linkname!r}, which is not a file unpacked before it")
            os.link(self.root / original, path, follow_symlinks=False)
            self.kinds[rel] = "file"
        else:
            self._write_file(path, member, reader, unsafe)
            self.kinds[rel] = "file"
            self.files += 1

    def _write_file(self, path: Path, member: Member, reader: TarReader, unsafe: Callable[[str], UnsafeLayer]) -> None:
        mode = 0o755 if member.mode & 0o111 else 0o644
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            remaining = member.size
            while remaining:
                chunk = reader.read(min(remaining, _CHUNK))
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
                remaining -= len(chunk)
                self.bytes += len(chunk)
            os.fchmod(fd, mode)  # set explicitly: the umask must not change what was packed
        finally:
            os.close(fd)

    def _check_new(self, rel: str, unsafe: Callable[[str], UnsafeLayer]) -> None:
        if rel in self.kinds:
            raise unsafe(f"duplicates an earlier entry (a {self.kinds[rel]})")

    def _ensure_parents(self, rel: str, unsafe: Callable[[str], UnsafeLayer]) -> None:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            parent = "/".join(parts[:i])
            kind = self.kinds.get(parent)
            if kind == "dir":
                continue
            if kind is not None:
                # Writing below a link would write wherever the link points.
                raise unsafe(f"lies below {parent!r}, which is a {kind}, not a directory")
            os.mkdir(self.root / parent, 0o755)
            self.kinds[parent] = "dir"

    def finish(self) -> None:
        """Refuse the artifact when a link leads outside through other links (judged on the whole
        tree: a later link can change where an earlier one leads); set the directories' modes."""
        for problem in self.links.problems():
            digest = self.link_layers[problem.path]
            raise UnsafeLayer(f"layer {digest} entry {problem.path!r} is a symbolic link to {problem.target!r}, "
                              f"which {problem.why}",
                              digest=digest, entry=problem.path)
        for rel, kind in self.kinds.items():
            if kind == "dir":
                os.chmod(self.root / rel, 0o755)  # noqa: S103 - normalised, as above


def _normalise(name: str, unsafe: Callable[[str], UnsafeLayer]) -> str | None:
    """The entry's path relative to the destination, None for the destination itself."""
    if "\x00" in name or "\\" in name:
        raise unsafe("holds a NUL or a backslash")
    if lexical_issue(name) is not None:
        why = "is an absolute path" if name.startswith("/") or (len(name) > 1 and name[1] == ":") \
            else "climbs out of the destination with '..'"
        raise unsafe(why)
    normal = posixpath.normpath(name)
    if normal in (".", ""):
        return None
    return normal
