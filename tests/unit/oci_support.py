"""Building packed artifacts by hand for the OCI tests: good ones with ``rra pack``, hostile
ones from raw tar streams, each with a config and manifest that are consistent unless a test
asks otherwise (so the check under test is the one that fires)."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rra_tools.io.canonical import canonical_json
from rra_tools.oci.compression import make_compressor
from rra_tools.oci.layout import init_layout, write_blob, write_index
from rra_tools.oci.mediatypes import (
    ANNOTATION_LAYER_DATASET,
    ANNOTATION_LAYER_ROLE,
    ANNOTATION_REF_NAME,
    ARTIFACT_TYPE,
    CONFIG_MEDIA_TYPE,
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    layer_media_type,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "digits-logreg"
REQUIRED = {
    "org.opencontainers.image.created": "1970-01-01T00:00:00Z",
    "org.opencontainers.image.title": "Hand-built",
    "org.opencontainers.image.licenses": "MIT",
    "org.opencontainers.image.authors": "Ada Example",
    "dev.rra.id": "hand-built",
    "dev.rra.rra-version": "1.0",
    "dev.rra.validation": "passed",
}


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def copy_example(dest: Path, example: Path = EXAMPLE) -> Path:
    shutil.copytree(example, dest, symlinks=True)
    return dest


@dataclass
class Member:
    """A tar entry to write as is: any name, type, link target, size or content."""

    name: str
    type: bytes = tarfile.REGTYPE
    data: bytes = b""
    linkname: str = ""
    mode: int = 0o644


def tar_bytes(members: Iterable[Member]) -> bytes:
    """A GNU tar stream of exactly these members (no checks: hostile names welcome)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for m in members:
            info = tarfile.TarInfo(m.name)
            info.type = m.type
            info.linkname = m.linkname
            info.mode = m.mode
            info.size = len(m.data) if m.type in (tarfile.REGTYPE, tarfile.AREGTYPE) else 0
            tar.addfile(info, io.BytesIO(m.data) if info.size else None)
    return buffer.getvalue()


def compress(data: bytes, kind: str) -> bytes:
    if not kind:
        return data
    comp = make_compressor(kind)
    return comp.compress(data) + comp.flush()


@dataclass
class Layer:
    """One layer of a hand-built artifact."""

    role: str
    blob: bytes
    compression: str = ""
    #: The uncompressed tar (for the config's diff_id and size); defaults to ``blob``.
    tar: bytes | None = None
    dataset: str | None = None
    #: Override what the config declares.
    declared_size: int | None = None
    declared_diff_id: str | None = None
    #: Override what the descriptor declares.
    descriptor_size: int | None = None


MANIFEST_TEXT = (EXAMPLE / "rra.yaml").read_text(encoding="utf-8")


def manifest_layer(text: str = MANIFEST_TEXT, compression: str = "") -> Layer:
    raw = tar_bytes([Member("rra.yaml", data=text.encode("utf-8"))])
    return Layer("manifest", compress(raw, compression), compression, tar=raw)


def example_files_layer() -> Layer:
    """A code layer with every file of the example but its manifest, so that the embedded
    manifest validates cleanly and only the rule under test fires."""
    names = sorted(p.name for p in EXAMPLE.iterdir() if p.is_file() and p.name != "rra.yaml")
    return Layer("code", tar_bytes([Member(name, data=(EXAMPLE / name).read_bytes()) for name in names]))


def build_layout(root: Path, layers: list[Layer], *, ref_name: str = "v1",
                 annotations: dict[str, str] | None = None, config_manifest: Any = None,
                 edit_manifest: Callable[[dict[str, Any]], None] | None = None,
                 edit_config: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """Write an image layout holding one packed artifact made of ``layers``."""
    init_layout(root)
    descriptors, table = [], []
    for layer in layers:
        tar = layer.tar if layer.tar is not None else layer.blob
        desc = write_blob(root, layer.blob, layer_media_type(layer.role, layer.compression))
        entry = {"mediaType": desc.mediaType, "digest": desc.digest,
                 "size": layer.descriptor_size if layer.descriptor_size is not None else desc.size,
                 "annotations": {ANNOTATION_LAYER_ROLE: layer.role,
                                 **({ANNOTATION_LAYER_DATASET: layer.dataset} if layer.dataset else {})}}
        descriptors.append(entry)
        row: dict[str, Any] = {"role": layer.role,
                               "diff_id": layer.declared_diff_id or sha(tar),
                               "size": layer.declared_size if layer.declared_size is not None else len(tar)}
        if layer.dataset:
            row["dataset"] = layer.dataset
        table.append(row)
    if config_manifest is None:
        from rra_tools.io.read.source import parse_document

        config_manifest = parse_document(MANIFEST_TEXT).data
    config = {"manifest_file": "rra.yaml", "manifest": config_manifest, "layers": table}
    if edit_config is not None:
        edit_config(config)
    config_desc = write_blob(root, canonical_json(config), CONFIG_MEDIA_TYPE)
    manifest = {"schemaVersion": 2, "mediaType": MANIFEST_MEDIA_TYPE, "artifactType": ARTIFACT_TYPE,
                "config": config_desc.to_json(), "layers": descriptors,
                "annotations": dict(REQUIRED if annotations is None else annotations)}
    if edit_manifest is not None:
        edit_manifest(manifest)
    manifest_desc = write_blob(root, canonical_json(manifest), MANIFEST_MEDIA_TYPE)
    write_index(root, {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": [
        {**manifest_desc.to_json(), "artifactType": ARTIFACT_TYPE,
         "annotations": {ANNOTATION_REF_NAME: ref_name}}]})
    return root


def manifest_of(layout: Path) -> tuple[dict[str, Any], Path]:
    """The parsed image manifest of the layout's first entry and its blob path."""
    index = json.loads((layout / "index.json").read_text())
    path = layout / "blobs" / "sha256" / index["manifests"][0]["digest"][7:]
    return json.loads(path.read_bytes()), path


def blob(layout: Path, digest: str) -> Path:
    return layout / "blobs" / "sha256" / digest[7:]


def leftovers(parent: Path) -> list[str]:
    """Names in ``parent`` that an unpack or pack may have left behind (temporary directories)."""
    return sorted(p.name for p in parent.iterdir() if ".rra-unpack-" in p.name or ".rra-pack-" in p.name)
