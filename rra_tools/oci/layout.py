"""Read and write an OCI image layout: ``oci-layout``, ``index.json`` and ``blobs/sha256/<hex>``.

Blobs are written through a temporary file in the blob directory and renamed to their digest
only when complete, so a reader never sees a partial blob under a digest name. Every read of a
document (index, manifest, config) is bounded before parsing and verified against its descriptor.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO

from ..io.atomic import write_atomic
from ..io.canonical import canonical_json
from .errors import BlobMissing, DigestMismatch, DocumentTooLarge, LayoutError, OCIError, SizeMismatch
from .mediatypes import (
    ANNOTATION_REF_NAME,
    INDEX_MEDIA_TYPE,
    LAYOUT_VERSION,
    MAX_INDEX_BYTES,
    MAX_MANIFEST_BYTES,
    MANIFEST_MEDIA_TYPE,
)

__all__ = [
    "BlobOpener",
    "BlobWriter",
    "Descriptor",
    "LayoutProblem",
    "blob_path",
    "init_layout",
    "is_layout",
    "layout_opener",
    "read_blob",
    "read_index",
    "read_verified",
    "resolve",
    "select_manifest",
    "write_blob",
    "write_index",
]

_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
#: Bytes per read and write when streaming blobs.
CHUNK = 1024 * 1024

#: Opens the blob of a descriptor for reading; raises BlobMissing when there is none. A layout
#: directory gives one (:func:`layout_opener`); a registry client can give another.
BlobOpener = Callable[["Descriptor"], BinaryIO]


@dataclass(frozen=True)
class Descriptor:
    """An OCI content descriptor. Field names are those of the JSON form, so that
    ``Descriptor(**data)`` and :meth:`to_json` round-trip."""

    mediaType: str  # noqa: N815 -- the OCI field name, kept so JSON and Python agree
    digest: str
    size: int
    annotations: Mapping[str, str] | None = None
    artifactType: str | None = None  # noqa: N815

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this descriptor (absent optional fields are left out)."""
        out: dict[str, Any] = {"mediaType": self.mediaType, "digest": self.digest, "size": self.size}
        if self.artifactType is not None:
            out["artifactType"] = self.artifactType
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        return out

    @property
    def hex(self) -> str:
        """The 64 hex digits of the digest."""
        return self.digest.split(":", 1)[1]

    @classmethod
    def from_json(cls, data: Any, where: str = "descriptor") -> Descriptor:
        """Check and read a descriptor object; LayoutError naming ``where`` when malformed.

        >>> Descriptor.from_json({"mediaType": "a/b", "digest": "sha256:" + "0" * 64, "size": 2}).size
        2
        """
        if not isinstance(data, Mapping):
            raise LayoutError(f"{where} is not a JSON object")
        media_type, digest, size = data.get("mediaType"), data.get("digest"), data.get("size")
        if not isinstance(media_type, str) or not media_type:
            raise LayoutError(f"{where} has no mediaType string")
        if not isinstance(digest, str) or _DIGEST.match(digest) is None:
            raise LayoutError(f"{where} has digest {digest!r}; expected 'sha256:' and 64 lower-case hex digits",
                              digest=digest if isinstance(digest, str) else None)
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise LayoutError(f"{where} has size {size!r}; expected a non-negative integer", digest=digest)
        annotations = data.get("annotations")
        if annotations is not None and not (isinstance(annotations, Mapping) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in annotations.items())):
            raise LayoutError(f"{where} has annotations that are not a map of strings", digest=digest)
        artifact_type = data.get("artifactType")
        if artifact_type is not None and not isinstance(artifact_type, str):
            raise LayoutError(f"{where} has an artifactType that is not a string", digest=digest)
        return cls(media_type, digest, size, dict(annotations) if annotations else None, artifact_type)


@dataclass(frozen=True)
class LayoutProblem:
    """One problem found while verifying a layout: the rule code, where, and what."""

    code: str
    message: str
    #: File in the layout ("index.json", "blobs/sha256/<hex>"), or "" for the layout itself.
    file: str = ""
    #: JSON pointer inside that file, when the problem is a value of a document.
    pointer: str = ""
    hint: str | None = None
    digest: str | None = None
    entry: str | None = None

    @classmethod
    def from_error(cls, error: OCIError, file: str = "", pointer: str = "") -> LayoutProblem:
        """The problem an :class:`OCIError` describes."""
        return cls(error.code, error.message, error.file or file, pointer, error.hint, error.digest, error.entry)


def blob_path(layout: Path, digest: str) -> Path:
    """Where the blob ``digest`` lives in ``layout``; LayoutError for a malformed digest, so that a
    hostile digest string can never name a path outside ``blobs/sha256``."""
    if _DIGEST.match(digest) is None:
        raise LayoutError(f"digest {digest!r} is not 'sha256:' and 64 lower-case hex digits", digest=digest)
    return Path(layout) / "blobs" / "sha256" / digest[7:]


def is_layout(path: Path) -> bool:
    """True when ``path`` is a directory holding an ``oci-layout`` file."""
    return (Path(path) / "oci-layout").is_file()


def init_layout(path: Path) -> None:
    """Create an empty layout at ``path`` (the directory may exist and be empty)."""
    path = Path(path)
    (path / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
    write_atomic(path / "oci-layout", canonical_json({"imageLayoutVersion": LAYOUT_VERSION}), mode=0o644)
    write_index(path, {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": []})


def write_index(layout: Path, index: Mapping[str, Any]) -> None:
    """Replace ``index.json`` atomically (a reader sees the old or the new index, never half)."""
    write_atomic(Path(layout) / "index.json", canonical_json(index), mode=0o644)


def _unlink(path: str | Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


#: Large writes are hashed on another thread while the data is written: hashlib and os.write
#: both release the GIL, so a blob costs max(hash, write) instead of their sum.
_PARALLEL_HASH_FROM = 1024 * 1024
_HASHER = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="rra-hash")


class BlobWriter:
    """Stream bytes into a new blob, hashing while writing; :meth:`commit` names it by digest.

    Use as a context manager: leaving the block without a commit removes the partial file.
    """

    def __init__(self, layout: Path) -> None:
        self._dir = Path(layout) / "blobs" / "sha256"
        self._dir.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=".partial-", dir=self._dir)
        self._file: IO[bytes] | None = os.fdopen(fd, "wb", buffering=0)
        self._hash = hashlib.sha256()
        self.size = 0

    def __enter__(self) -> BlobWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append ``data``."""
        if self._file is None:
            raise ValueError("blob already committed or aborted")
        pending = _HASHER.submit(self._hash.update, data) if len(data) >= _PARALLEL_HASH_FROM else None
        if pending is None:
            self._hash.update(data)
        try:
            view = memoryview(data)
            while view:  # unbuffered writes may be short
                written = self._file.write(view)
                view = view[written or 0:]
        finally:
            if pending is not None:
                pending.result()  # the caller may reuse the buffer once we return
        self.size += len(data)

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of what was written so far."""
        return "sha256:" + self._hash.hexdigest()

    def commit(self, media_type: str, annotations: Mapping[str, str] | None = None,
               artifact_type: str | None = None) -> Descriptor:
        """Close the blob, move it to its digest's name and return its descriptor."""
        if self._file is None:
            raise ValueError("blob already committed or aborted")
        self._file.close()
        self._file = None
        digest = self.digest
        os.chmod(self._tmp, 0o644)
        os.replace(self._tmp, self._dir / digest[7:])
        return Descriptor(media_type, digest, self.size, dict(annotations) if annotations else None, artifact_type)

    def abort(self) -> None:
        """Drop the partial blob (no-op after commit)."""
        if self._file is not None:
            self._file.close()
            self._file = None
            _unlink(self._tmp)


def write_blob(layout: Path, data: bytes | BinaryIO, media_type: str = "application/octet-stream",
               annotations: Mapping[str, str] | None = None, artifact_type: str | None = None) -> Descriptor:
    """Store ``data`` (bytes, or a binary stream read to its end) as a blob; return its descriptor."""
    with BlobWriter(layout) as writer:
        if isinstance(data, (bytes, bytearray, memoryview)):
            writer.write(data)
        else:
            while chunk := data.read(CHUNK):
                writer.write(chunk)
        return writer.commit(media_type, annotations, artifact_type)


def layout_opener(layout: Path) -> BlobOpener:
    """A :data:`BlobOpener` reading the blobs of ``layout``."""

    def open_blob(descriptor: Descriptor) -> BinaryIO:
        path = blob_path(layout, descriptor.digest)
        try:
            # O_NOFOLLOW: a blob replaced by a symlink (to /dev/zero, say) is refused, not followed.
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            raise BlobMissing(f"blob {descriptor.digest} is not in the layout", digest=descriptor.digest,
                              hint="copy the layout again; a blob was lost") from None
        except OSError as exc:
            raise BlobMissing(f"blob {descriptor.digest} cannot be opened: {exc.strerror or exc}",
                              digest=descriptor.digest) from None
        handle = os.fdopen(fd, "rb")
        if not _is_regular(fd):
            handle.close()
            raise BlobMissing(f"blob {descriptor.digest} is not a regular file", digest=descriptor.digest)
        return handle

    return open_blob


def _is_regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


def read_verified(opener: BlobOpener, descriptor: Descriptor, max_bytes: int, what: str = "blob") -> bytes:
    """The bytes of a small blob (a manifest or config), refused above ``max_bytes`` before
    reading, and verified against the descriptor's size and digest."""
    if descriptor.size > max_bytes:
        raise DocumentTooLarge(f"{what} {descriptor.digest} is {descriptor.size} bytes, more than the cap of "
                               f"{max_bytes}", digest=descriptor.digest)
    with opener(descriptor) as handle:
        data = handle.read(descriptor.size + 1)
    if len(data) != descriptor.size:
        raise SizeMismatch(f"{what} {descriptor.digest} is {'more than ' if len(data) > descriptor.size else ''}"
                           f"{len(data) if len(data) <= descriptor.size else descriptor.size} bytes, but its "
                           f"descriptor says {descriptor.size}", digest=descriptor.digest)
    actual = "sha256:" + hashlib.sha256(data).hexdigest()
    if actual != descriptor.digest:
        raise DigestMismatch(f"{what} {descriptor.digest} has digest {actual}; the blob was altered",
                             digest=descriptor.digest, actual=actual)
    return data


def read_blob(layout: Path, descriptor: Descriptor, max_bytes: int) -> bytes:
    """:func:`read_verified` on a layout directory."""
    return read_verified(layout_opener(layout), descriptor, max_bytes)


def parse_json_object(data: bytes, what: str, digest: str | None = None) -> dict[str, Any]:
    """``data`` parsed as a JSON object; LayoutError otherwise."""
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise LayoutError(f"{what} is not valid JSON: {exc}", digest=digest) from None
    if not isinstance(value, dict):
        raise LayoutError(f"{what} is not a JSON object", digest=digest)
    return value


def _read_file(path: Path, cap: int, what: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise LayoutError(f"the layout has no {what} file", hint="is this an OCI image layout directory?",
                          file=what) from None
    except OSError as exc:
        raise LayoutError(f"{what} cannot be opened: {exc.strerror or exc}", file=what) from None
    with os.fdopen(fd, "rb") as handle:
        if not _is_regular(fd):
            raise LayoutError(f"{what} is not a regular file", file=what)
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise DocumentTooLarge(f"{what} is more than the cap of {cap} bytes", file=what)
    return data


@dataclass
class Index:
    """A parsed ``index.json``: the raw object and its manifest descriptors."""

    data: dict[str, Any]
    manifests: list[Descriptor] = field(default_factory=list)


def read_index(layout: Path) -> Index:
    """Check ``oci-layout`` and read ``index.json``; LayoutError (or DocumentTooLarge) when either
    is missing or malformed."""
    layout = Path(layout)
    if not layout.is_dir():
        raise LayoutError(f"{str(layout)!r} is not a directory")
    try:
        marker = parse_json_object(_read_file(layout / "oci-layout", 4096, "oci-layout"), "oci-layout")
        version = marker.get("imageLayoutVersion")
        if not isinstance(version, str) or not version.startswith("1."):
            raise LayoutError(f"oci-layout has imageLayoutVersion {version!r}; expected '1.0.0'")
    except OCIError as exc:
        exc.file = "oci-layout"
        raise
    try:
        data = parse_json_object(_read_file(layout / "index.json", MAX_INDEX_BYTES, "index.json"), "index.json")
        if data.get("schemaVersion") != 2:
            raise LayoutError(f"index.json has schemaVersion {data.get('schemaVersion')!r}; expected 2")
        manifests = data.get("manifests")
        if not isinstance(manifests, list):
            raise LayoutError("index.json has no 'manifests' list")
        descriptors = [Descriptor.from_json(m, f"index.json manifests[{i}]") for i, m in enumerate(manifests)]
    except OCIError as exc:
        exc.file = "index.json"
        raise
    return Index(data, descriptors)


def select_manifest(index: Index, ref_name: str | None = None) -> tuple[int, Descriptor]:
    """(position, descriptor) of the manifest named ``ref_name`` in the index, or of its only
    image manifest when no name is given; LayoutError when there is none or it is ambiguous."""
    if ref_name is not None:
        found = [(i, d) for i, d in enumerate(index.manifests)
                 if (d.annotations or {}).get(ANNOTATION_REF_NAME) == ref_name]
        if not found:
            names = sorted({(d.annotations or {}).get(ANNOTATION_REF_NAME, "") for d in index.manifests} - {""})
            raise LayoutError(f"index.json has no manifest named {ref_name!r}",
                              hint=f"names in the layout: {', '.join(names) or 'none'}")
        return found[-1]
    candidates = [(i, d) for i, d in enumerate(index.manifests) if d.mediaType == MANIFEST_MEDIA_TYPE]
    if len(candidates) != 1:
        raise LayoutError(f"index.json holds {len(candidates)} image manifests; name one with a ref name",
                          hint="use 'oci-layout:DIR:REF'")
    return candidates[0]


def resolve(layout: Path, ref_name: str | None = None) -> tuple[Descriptor, dict[str, Any]]:
    """The descriptor and parsed JSON of the image manifest ``ref_name`` (or the only one),
    read within the size cap and verified against its digest."""
    index = read_index(layout)
    _, descriptor = select_manifest(index, ref_name)
    if descriptor.mediaType != MANIFEST_MEDIA_TYPE:
        from .errors import MediaTypeError

        raise MediaTypeError(f"manifest {descriptor.digest} has media type {descriptor.mediaType!r}; "
                             f"expected {MANIFEST_MEDIA_TYPE!r}", digest=descriptor.digest)
    raw = read_verified(layout_opener(layout), descriptor, MAX_MANIFEST_BYTES, "manifest")
    return descriptor, parse_json_object(raw, f"manifest {descriptor.digest}", descriptor.digest)

