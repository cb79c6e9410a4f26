"""The one manifest loader: every command reads ``rra.yaml`` / ``rra.json`` through here.

It finds the manifest of an artifact directory, reads its bytes under the size cap, decodes and
parses them within the bounds of :mod:`..limits` (nesting depth, expanded alias size, value
count), and returns the data with what reading found (duplicate keys), the text, source
positions and the manifest digest. Positions cost time on large documents and only findings
need them, so they are computed on the first :meth:`LoadedManifest.position` call unless asked
for up front (``located=True``).

Errors: :class:`~..errors.InputError` when there is nothing to read (missing path, a directory
without a manifest, a FIFO, an unreadable file); :class:`~..errors.LoadError` with one located
:class:`~..errors.Problem` when the bytes are not a manifest document (over the size cap, not
UTF-8, a YAML syntax error, over a bound). Callers turn them into diagnostics (``validate``) or
typed errors of their own layer.

>>> loaded = load_manifest_bytes(b"id: demo\\nid: again\\n")
>>> loaded.data, [p.code for p in loaded.problems]
({'id': 'demo'}, ['RRA005'])
>>> loaded.digest[:12]
'2b67bf9bbf4b'
"""

from __future__ import annotations

import gc
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...plain import Plain
from ..errors import InputError, LoadError, Problem
from ..limits import MAX_MANIFEST_BYTES
from ..paths import MANIFEST_NAMES

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

    # The readers are imported when a document is parsed: `rra run` finds most manifests in
    # its cache of checked manifests and never parses.
    from .source import Position, SourceDocument

__all__ = [
    "MANIFEST_NAMES",
    "LoadedManifest",
    "collector_paused",
    "find_manifest",
    "load_manifest",
    "load_manifest_bytes",
    "locate_manifest",
    "manifest_digest",
    "read_manifest_bytes",
]

_TOO_LARGE_HINT = "a manifest holds references, not contents: move data out of it"


class LoadedManifest(Plain):
    """A read manifest: its data, what reading found, its text, positions and digest (``path``:
    the manifest file, when it was read from one)."""

    __slots__ = ("source", "path", "_digest")
    _unshown = ("_digest",)

    def __init__(self, source: SourceDocument, path: Path | None = None, _digest: str | None = None) -> None:
        self.source, self.path, self._digest = source, path, _digest

    @property
    def data(self) -> Any:
        """The document as plain data (dicts, lists, str, int, float, bool, None)."""
        return self.source.data

    @property
    def text(self) -> str:
        """The decoded text of the document."""
        return self.source.text

    @property
    def problems(self) -> list[Problem]:
        """What reading found without failing (duplicate keys: the first value is kept)."""
        return self.source.problems

    @property
    def values(self) -> int:
        """How many values the document holds (aliases counted at each use)."""
        return self.source.values

    def position(self, pointer: tuple[str | int, ...]) -> Position | None:
        """Where the value at ``pointer`` is written (the nearest enclosing value if absent)."""
        return self.source.position(pointer)

    @property
    def digest(self) -> str:
        """Hex SHA-256 of the manifest's canonical JSON: the artifact digest run records carry.

        Raises ValueError when the document holds a value JSON cannot carry (NaN, Infinity).
        """
        if self._digest is None:
            self._digest = manifest_digest(self.data)
        return self._digest


def manifest_digest(data: Any) -> str:
    """Hex SHA-256 of the canonical JSON of manifest ``data`` (ValueError for NaN or Infinity)."""
    from ..canonical import canonical_json

    return hashlib.sha256(canonical_json(data)).hexdigest()


def find_manifest(directory: Path) -> Path | None:
    """The manifest file of an artifact directory (first of :data:`MANIFEST_NAMES`), or None."""
    for name in MANIFEST_NAMES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def locate_manifest(path: str | Path) -> Path:
    """The manifest file for ``path``: the path itself, or the manifest of the directory it names.

    Raises :class:`InputError` when the path does not exist or names a directory without one.
    """
    given = str(path)
    target = Path(path)
    try:
        info = os.stat(target)
    except OSError as exc:
        raise InputError(f"cannot open {given!r}: {exc.strerror or exc}",
                         "check the path" if isinstance(exc, FileNotFoundError) else None) from None
    if stat.S_ISDIR(info.st_mode):
        manifest = find_manifest(target)
        if manifest is None:
            raise InputError(f"directory {given!r} has no {' or '.join(MANIFEST_NAMES)}",
                             "give the artifact directory or its manifest file")
        return manifest
    return target


def read_manifest_bytes(manifest: Path, max_bytes: int = MAX_MANIFEST_BYTES) -> bytes:
    """The bytes of the manifest file ``manifest``, never more than ``max_bytes``.

    Raises :class:`InputError` when it cannot be opened or is not a regular file (a FIFO would
    block the reader), :class:`LoadError` (RRA006) when it is over the cap.
    """
    shown = os.path.normpath(str(manifest))
    try:
        info = os.stat(manifest)
    except OSError as exc:
        raise InputError(f"cannot open {shown!r}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        what = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device" if (
            stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)) else "not a regular file"
        raise InputError(f"{shown!r} is {what}; a manifest is a regular file")
    if info.st_size > max_bytes:
        raise LoadError(_too_large(info.st_size, max_bytes))
    try:
        # O_NONBLOCK: a FIFO swapped in after the check above cannot block the open.
        fd = os.open(manifest, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read {shown!r}: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:  # grew since the stat
        raise LoadError(_too_large(len(raw), max_bytes))
    return raw


def load_manifest_bytes(raw: bytes, *, max_bytes: int = MAX_MANIFEST_BYTES, located: bool = False,
                        path: Path | None = None) -> LoadedManifest:
    """Read manifest ``raw`` bytes (YAML 1.2 or JSON); :class:`LoadError` when they are not one.

    With ``located`` the source positions of every value are recorded while parsing; otherwise
    the fastest reader that gives the same data is used and positions are worked out on demand.
    """
    from .source import decode_text, parse_document

    if len(raw) > max_bytes:
        raise LoadError(_too_large(len(raw), max_bytes))
    text = decode_text(raw)
    try:
        with collector_paused():
            source = parse_document(text, located=located)
    except LoadError as exc:
        raise LoadError(exc.problem, text) from None
    return LoadedManifest(source, path)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a document is read (and, by the
    validator, checked).

    A parsed manifest is a tree (no cycles to collect), yet every collection walks all of its
    objects: with a million values that is a third of the run. Reference counting still frees
    everything; the collector is restored (if it was on) when the document is done.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_manifest(path: str | Path, *, max_bytes: int = MAX_MANIFEST_BYTES, located: bool = False) -> LoadedManifest:
    """Find, read and parse the manifest at ``path`` (an artifact directory or a manifest file)."""
    manifest = locate_manifest(path)
    return load_manifest_bytes(read_manifest_bytes(manifest, max_bytes), max_bytes=max_bytes, located=located,
                               path=manifest)


def _too_large(size: int, cap: int) -> Problem:
    return Problem("RRA006", f"manifest is {size} bytes, more than the cap of {cap}", None, None, _TOO_LARGE_HINT)
