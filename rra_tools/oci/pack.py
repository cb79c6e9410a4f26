"""Pack an artifact directory into an OCI image layout, deterministically (spec/05-packaging.md).

The artifact is validated while its layers are written (on another thread, so hashing the
data for validation overlaps writing the layers); the layout is built in a temporary directory
next to the destination and renamed into place only when complete, so an interrupted or
refused pack leaves nothing behind. Layers are written in parallel, each hashed as it is
written; a layer whose content does not compress is stored as plain tar.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..io.canonical import canonical_json
from ..io.links import LinkTree
from ..io.ignore import IGNORE_FILE
from ..io.paths import lexical_issue
from ..io.tree import walk_tree
from .compression import STORE_RATIO, default_compression, make_compressor, sample_ratio
from .config import ArtifactConfig, LayerEntry
from .errors import ArtifactInvalid, PackError
from .layout import BlobWriter, Descriptor, init_layout, is_layout, read_index, write_blob, write_index
from .mediatypes import (
    ANNOTATION_AUTHORS,
    ANNOTATION_CREATED,
    ANNOTATION_ID,
    ANNOTATION_LAYER_DATASET,
    ANNOTATION_LAYER_ROLE,
    ANNOTATION_LEVELS,
    ANNOTATION_LICENSES,
    ANNOTATION_REF_NAME,
    ANNOTATION_REVISION,
    ANNOTATION_RRA_VERSION,
    ANNOTATION_SOURCE,
    ANNOTATION_TITLE,
    ANNOTATION_VALIDATION,
    ARTIFACT_TYPE,
    CONFIG_MEDIA_TYPE,
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    MAX_CONFIG_BYTES,
    MAX_MANIFEST_BYTES,
    ROLES,
    VALIDATION_FORCED,
    VALIDATION_PASSED,
    layer_media_type,
)
from .roles import plan_roles
from .tarball import Entry, default_mtime, with_parents, write_tar

if TYPE_CHECKING:
    from ..validate.config import Config
    from ..validate.result import ValidationResult

__all__ = ["PackResult", "PackedLayer", "PlannedLayer", "Progress", "REF_NAME", "collect_layers", "pack"]

#: Called with (bytes of file content written so far, total bytes of file content).
Progress = Callable[[int, int], None]

#: The grammar of ``org.opencontainers.image.ref.name`` (image-spec annotations.md).
REF_NAME = re.compile(r"^[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*(?:/[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*)*$")


@dataclass(frozen=True)
class PackedLayer:
    """One layer written: its role, descriptor and uncompressed digest and size."""

    role: str
    dataset: str | None
    descriptor: Descriptor
    diff_id: str
    uncompressed_size: int
    files: int

    @property
    def ratio(self) -> float:
        """Stored size over uncompressed size (1.0 for a plain tar)."""
        return self.descriptor.size / self.uncompressed_size if self.uncompressed_size else 1.0


@dataclass(frozen=True)
class PackResult:
    """What :func:`pack` wrote."""

    layout: Path
    ref_name: str | None
    manifest: Descriptor
    config: Descriptor
    layers: tuple[PackedLayer, ...]
    #: The validation the pack was decided on.
    validation: ValidationResult
    #: True when the artifact had validation errors and was packed anyway.
    forced: bool


@dataclass
class PlannedLayer:
    """A layer to write: its role, its entries and the compression chosen for it."""

    role: str
    dataset: str | None
    entries: list[Entry]
    compression: str = ""

    @property
    def content_size(self) -> int:
        """Bytes of file content in the layer (before tar headers and compression)."""
        return sum(e.size for e in self.entries if e.kind == "file")


def pack(artifact_dir: str | Path, out_layout: str | Path, *, ref_name: str | None = None, force: bool = False,
         progress: Progress | None = None, compression: str | None = None, config: Config | None = None,
         environ: Mapping[str, str] | None = None) -> PackResult:
    """Pack ``artifact_dir`` into the OCI image layout ``out_layout``.

    ``out_layout`` is created, or, when it already is a layout, the artifact is added to it
    (replacing the manifest of the same ``ref_name``). The artifact is validated with
    ``config``; errors raise :class:`ArtifactInvalid` unless ``force``, which packs anyway and
    records ``dev.rra.validation: forced`` (a manifest that does not parse is refused even then:
    the config must hold it as JSON). ``compression`` is 'zstd' or 'gzip' (default: zstd
    when the zstandard package is installed). ``environ`` supplies ``SOURCE_DATE_EPOCH``
    (default: the process environment).
    """
    from ..io.errors import InputError, LoadError
    from ..io.read.manifest import find_manifest, load_manifest_bytes, read_manifest_bytes
    from ..validate.api import validate_path

    root = Path(artifact_dir).resolve()
    out = Path(out_layout).absolute()
    if ref_name is not None and REF_NAME.match(ref_name) is None:
        raise PackError(f"ref name {ref_name!r} does not follow the OCI grammar "
                        "(letters and digits joined by '-', '.', '_', ':', '@', '+', '--' or '/')")
    if not root.is_dir():
        raise PackError(f"{str(artifact_dir)!r} is not a directory")
    manifest_path = find_manifest(root)
    if manifest_path is None:
        raise PackError(f"{str(artifact_dir)!r} has no rra.yaml, rra.yml or rra.json")
    if manifest_path.is_symlink():
        raise PackError(f"{manifest_path.name} is a symbolic link; the manifest layer must hold the file itself")
    kind = compression or default_compression()
    if kind not in ("zstd", "gzip"):
        raise PackError(f"unknown compression {kind!r}; expected 'zstd' or 'gzip'")
    mtime = default_mtime(dict(environ) if environ is not None else None)
    mode = _destination_mode(out)

    with ThreadPoolExecutor(max_workers=1) as validator:
        validation = validator.submit(validate_path, root, config=config)
        try:
            document = load_manifest_bytes(read_manifest_bytes(manifest_path)).data
        except (LoadError, InputError):
            raise ArtifactInvalid(validation.result()) from None
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.rra-pack-", dir=out.parent))
        try:
            layers = collect_layers(root, document, manifest_path.name, skip={out, tmp})
            init_layout(tmp)
            packed = _write_layers(tmp, layers, kind, mtime, progress)
            result = validation.result()
            forced = not result.valid
            if forced and not force:
                raise ArtifactInvalid(result)
            config_desc = _write_config(tmp, document, manifest_path.name, packed)
            annotations = _annotations(document, mtime, result)
            manifest_json = {
                "schemaVersion": 2,
                "mediaType": MANIFEST_MEDIA_TYPE,
                "artifactType": ARTIFACT_TYPE,
                "config": config_desc.to_json(),
                "layers": [layer.descriptor.to_json() for layer in packed],
                "annotations": annotations,
            }
            raw = canonical_json(manifest_json)
            if len(raw) > MAX_MANIFEST_BYTES:
                raise PackError(f"the image manifest would be {len(raw)} bytes, more than the cap of "
                                f"{MAX_MANIFEST_BYTES}; too many data sources")
            manifest_desc = write_blob(tmp, raw, MANIFEST_MEDIA_TYPE, artifact_type=ARTIFACT_TYPE)
            _publish(tmp, out, mode, manifest_desc, ref_name)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return PackResult(out, ref_name, manifest_desc, config_desc, tuple(packed), result, forced)


def _destination_mode(out: Path) -> str:
    if not out.exists() and not out.is_symlink():
        return "new"
    if out.is_dir() and not out.is_symlink():
        if is_layout(out):
            read_index(out)  # refuse to add to a layout we cannot read
            return "merge"
        if not any(out.iterdir()):
            return "new"
    raise PackError(f"{str(out)!r} exists and is not an OCI image layout; choose a new directory")


def _publish(tmp: Path, out: Path, mode: str, manifest: Descriptor, ref_name: str | None) -> None:
    entry = Descriptor(manifest.mediaType, manifest.digest, manifest.size,
                       {ANNOTATION_REF_NAME: ref_name} if ref_name else None, ARTIFACT_TYPE)
    if mode == "new":
        write_index(tmp, {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": [entry.to_json()]})
        if out.is_dir():
            out.rmdir()  # empty (checked); rename cannot replace a directory on every system
        os.rename(tmp, out)
        return
    # Adding to an existing layout: blobs first (each rename is atomic and content-addressed),
    # then the index, replaced atomically, so a reader never sees a manifest without its blobs.
    blobs = out / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)
    for blob in (tmp / "blobs" / "sha256").iterdir():
        os.replace(blob, blobs / blob.name)
    index = read_index(out)
    kept = [d.to_json() for d in index.manifests
            if not ((ref_name and (d.annotations or {}).get(ANNOTATION_REF_NAME) == ref_name)
                    or (not ref_name and d.digest == manifest.digest and not d.annotations))]
    data = dict(index.data)
    data["manifests"] = [*kept, entry.to_json()]
    data.setdefault("mediaType", INDEX_MEDIA_TYPE)
    write_index(out, data)
    shutil.rmtree(tmp, ignore_errors=True)


def collect_layers(root: Path, document: Any, manifest_file: str, skip: set[Path] | None = None) -> list[PlannedLayer]:
    """The layers of the artifact at ``root``: every packed file in the layer of its role, in
    the order of :data:`ROLES` (data layers in the manifest's order)."""
    plan = plan_roles(document, manifest_file)
    groups: dict[tuple[str, str | None], list[Entry]] = {}
    walked = _walk(root, {p.resolve() for p in (skip or set())})
    _check_links(walked)
    for entry in walked:
        placed = plan.role_of(entry.name)
        if placed is not None:
            groups.setdefault(placed, []).append(entry)
    order: list[tuple[str, str | None]] = []
    for role in ROLES:
        order += [("data", ident) for ident, _ in plan.datasets] if role == "data" else [(role, None)]
    layers = []
    for role, dataset in order:
        entries = groups.get((role, dataset), [])
        if entries or role == "manifest":
            layers.append(PlannedLayer(role, dataset, with_parents(entries)))
    return layers


def _unreadable(rel: str, exc: OSError) -> None:
    raise PackError(f"directory {rel!r} cannot be read ({exc.strerror or exc}); make it readable or list it in "
                    f"{IGNORE_FILE}")


def _walk(root: Path, skip: set[Path]) -> list[Entry]:
    found: list[Entry] = []
    for rel, item in walk_tree(root, skip=skip, unreadable=_unreadable):
        path = Path(item.path)
        info = item.stat(follow_symlinks=False)
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            raise PackError(f"file name {rel!r} is not UTF-8; rename it") from None
        if "\\" in item.name or lexical_issue(rel) is not None:
            # Readers refuse such names (a Windows reader would write elsewhere): refuse them first.
            raise PackError(f"file name {rel!r} holds a backslash or starts like a drive letter; rename it")
        if stat.S_ISLNK(info.st_mode):
            found.append(Entry(rel, "symlink", target=_link_target(root, rel, path)))
        elif stat.S_ISDIR(info.st_mode):
            continue  # walk_tree enters it next
        elif stat.S_ISREG(info.st_mode):
            found.append(Entry(rel, "file", info.st_size, bool(info.st_mode & 0o111), source=path))
        else:
            what = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) \
                else "a device"
            raise PackError(f"{rel!r} is {what}, which cannot be packed; remove it or list it in {IGNORE_FILE}")
    return found


def _link_target(root: Path, rel: str, path: Path) -> str:
    target = os.readlink(path)
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
    if target.startswith("/") or "\\" in target or resolved == ".." or resolved.startswith("../"):
        raise PackError(f"symbolic link {rel!r} points outside the artifact ({target!r}); an unpacked copy "
                        f"could not follow it. Replace it with the file or list it in {IGNORE_FILE}")
    return target


def _check_links(entries: list[Entry]) -> None:
    # Each target passed alone (_link_target); together, a link can lead out through another.
    links = LinkTree("the artifact")
    for entry in entries:
        if entry.kind == "symlink":
            links.add(entry.name, entry.target)
    for problem in links.problems():
        raise PackError(f"symbolic link {problem.path!r} ({problem.target!r}) {problem.why}; an unpacked copy "
                        f"could not follow it. Replace it with the file or list it in {IGNORE_FILE}")


def _write_layers(layout: Path, layers: list[PlannedLayer], kind: str, mtime: int,
                  progress: Progress | None) -> list[PackedLayer]:
    total = sum(layer.content_size for layer in layers)
    done = 0
    lock = threading.Lock()

    def advance(n: int) -> None:
        nonlocal done
        if progress is not None:
            with lock:
                done += n
                progress(done, total)

    for layer in layers:
        files = [(e.source, e.size) for e in layer.entries if e.kind == "file" and e.source is not None]
        layer.compression = "" if sample_ratio(files, kind) >= STORE_RATIO else kind
    # Largest first, so the longest layer starts at once and the small ones fill the other cores.
    by_size = sorted(range(len(layers)), key=lambda i: -layers[i].content_size)
    workers = max(1, min(len(layers), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures: dict[int, Future[PackedLayer]] = {
            i: pool.submit(_write_layer, layout, layers[i], mtime, advance) for i in by_size}
        return [futures[i].result() for i in range(len(layers))]


def _write_layer(layout: Path, layer: PlannedLayer, mtime: int, advance: Callable[[int], None]) -> PackedLayer:
    media_type = layer_media_type(layer.role, layer.compression)
    annotations = {ANNOTATION_LAYER_ROLE: layer.role}
    name = layer.role if layer.dataset is None else f"data-{layer.dataset}"
    if layer.dataset is not None:
        annotations[ANNOTATION_LAYER_DATASET] = layer.dataset
    suffix = {"": ".tar", "zstd": ".tar.zst", "gzip": ".tar.gz"}[layer.compression]
    annotations[ANNOTATION_TITLE] = name + suffix
    files = sum(1 for e in layer.entries if e.kind != "dir")
    with BlobWriter(layout) as blob:
        if not layer.compression:
            size = write_tar(layer.entries, mtime, blob.write, advance)
            diff_id = blob.digest  # a plain layer is its own uncompressed form
        else:
            compressor = make_compressor(layer.compression)
            uncompressed = hashlib.sha256()

            def sink(view: memoryview) -> None:
                uncompressed.update(view)
                out = compressor.compress(view)
                if out:
                    blob.write(out)

            size = write_tar(layer.entries, mtime, sink, advance)
            blob.write(compressor.flush())
            diff_id = "sha256:" + uncompressed.hexdigest()
        descriptor = blob.commit(media_type, annotations)
    return PackedLayer(layer.role, layer.dataset, descriptor, diff_id, size, files)


def _write_config(layout: Path, document: Any, manifest_file: str, packed: list[PackedLayer]) -> Descriptor:
    entries = tuple(LayerEntry(p.role, p.diff_id, p.uncompressed_size, p.dataset) for p in packed)
    try:
        config = ArtifactConfig(manifest_file, document if isinstance(document, dict) else {}, entries)
        raw = config.to_bytes()
    except ValueError as exc:
        raise PackError(f"the manifest cannot be written as JSON: {exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise PackError(f"the config would be {len(raw)} bytes, more than the cap of {MAX_CONFIG_BYTES}")
    return write_blob(layout, raw, CONFIG_MEDIA_TYPE)


def _annotations(document: Any, mtime: int, result: ValidationResult) -> dict[str, str]:
    doc: Mapping[str, Any] = document if isinstance(document, Mapping) else {}

    def section(value: Any) -> Mapping[str, Any]:
        return value if isinstance(value, Mapping) else {}

    out = {ANNOTATION_CREATED: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime)),
           ANNOTATION_VALIDATION: VALIDATION_PASSED if result.valid else VALIDATION_FORCED}
    code = section(doc.get("code"))
    upstream = section(code.get("upstream"))
    authors = doc.get("paper", {}).get("authors") if isinstance(doc.get("paper"), Mapping) else None
    names = [a.get("name") for a in authors if isinstance(a, Mapping)] if isinstance(authors, list) else []
    candidates = {
        ANNOTATION_TITLE: doc.get("title"),
        ANNOTATION_ID: doc.get("id"),
        ANNOTATION_RRA_VERSION: doc.get("rra_version"),
        ANNOTATION_LICENSES: code.get("license"),
        ANNOTATION_AUTHORS: ", ".join(n for n in names if isinstance(n, str)) or None,
        ANNOTATION_SOURCE: upstream.get("url"),
        ANNOTATION_REVISION: upstream.get("commit"),
        ANNOTATION_LEVELS: ",".join(result.levels_met or []) or None,
    }
    out.update({k: v for k, v in candidates.items() if isinstance(v, str) and v})
    return out
