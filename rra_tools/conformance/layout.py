"""Packing a case's artifact into an OCI image layout for the packaging cases (spec/05-packaging.md).

The steps are the suite README's "Materialising a packaging case", so that a runner in another
language builds an equivalent layout: the artifact's files are split into layers by role and
written as deterministic tar streams (this package's producer code does both), the case's raw
entries are appended, the config, image manifest and index are built, patched and stored with
their digests, and only then are the written files tampered with. Nothing here validates:
a case may describe any layout, hostile ones included.
"""

from __future__ import annotations

import hashlib
import tarfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..io.canonical import canonical_json
from ..io.read.manifest import load_manifest_bytes
from ..model.conformance import AddedEntry, Layout, LayoutEdit
from ..oci.compression import make_compressor
from ..oci.layout import init_layout, write_blob, write_index
from ..oci.mediatypes import (
    ANNOTATION_AUTHORS,
    ANNOTATION_CREATED,
    ANNOTATION_ID,
    ANNOTATION_LAYER_DATASET,
    ANNOTATION_LAYER_ROLE,
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
    ROLES,
    VALIDATION_PASSED,
    layer_media_type,
)
from ..oci.pack import PlannedLayer, collect_layers
from ..oci.tarball import BLOCK, write_tar
from .cases import CaseError, apply_patch

__all__ = ["build_layout"]

_TYPES = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
          "fifo": tarfile.FIFOTYPE, "char": tarfile.CHRTYPE, "block": tarfile.BLKTYPE}


def _tar(layer: PlannedLayer, extra: list[AddedEntry]) -> bytes:
    chunks: list[bytes] = []
    write_tar(layer.entries, 0, lambda view: chunks.append(bytes(view)))
    stream = b"".join(chunks)[:-2 * BLOCK]  # drop the end blocks; the case's entries follow
    return stream + b"".join(_raw_entry(e) for e in extra) + bytes(2 * BLOCK)


def _raw_entry(entry: AddedEntry) -> bytes:
    """One GNU tar entry exactly as the case gives it: no check of its name or target."""
    info = tarfile.TarInfo(entry.name)
    info.type = _TYPES[entry.type]
    info.mode = entry.mode
    info.linkname = entry.target
    data = entry.text.encode("utf-8") if entry.type == "file" else b""
    info.size = len(data)
    head = info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")
    return head + data + bytes(-len(data) % BLOCK)


def _layer_key(layer: PlannedLayer) -> str:
    return f"data:{layer.dataset}" if layer.role == "data" else layer.role


def _with_extra_layers(layers: list[PlannedLayer], extra: list[AddedEntry]) -> list[PlannedLayer]:
    """``layers`` plus an empty layer for each key the case adds entries to and the artifact
    lacks, placed in the order of the roles (a new data layer after the existing ones)."""
    present = {_layer_key(layer) for layer in layers}
    out = list(layers)
    for key in dict.fromkeys(e.layer for e in extra):
        if key in present:
            continue
        role, _, dataset = key.partition(":")
        rank = ROLES.index(role)
        at = next((i for i, layer in enumerate(out) if ROLES.index(layer.role) > rank), len(out))
        out.insert(at, PlannedLayer(role, dataset or None, []))
        present.add(key)
    return out


def _annotations(document: Any) -> dict[str, str]:
    """The annotations spec/05-packaging.md#annotations asks a producer for (validation: passed)."""
    doc: Mapping[str, Any] = document if isinstance(document, Mapping) else {}

    def section(value: Any) -> Mapping[str, Any]:
        return value if isinstance(value, Mapping) else {}

    code = section(doc.get("code"))
    upstream = section(code.get("upstream"))
    authors = section(doc.get("paper")).get("authors")
    names = [a.get("name") for a in authors if isinstance(a, Mapping)] if isinstance(authors, list) else []
    candidates = {
        ANNOTATION_CREATED: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(0)),
        ANNOTATION_TITLE: doc.get("title"),
        ANNOTATION_ID: doc.get("id"),
        ANNOTATION_RRA_VERSION: doc.get("rra_version"),
        ANNOTATION_LICENSES: code.get("license"),
        ANNOTATION_AUTHORS: ", ".join(n for n in names if isinstance(n, str)) or None,
        ANNOTATION_SOURCE: upstream.get("url"),
        ANNOTATION_REVISION: upstream.get("commit"),
        ANNOTATION_VALIDATION: VALIDATION_PASSED,
    }
    return {k: v for k, v in candidates.items() if isinstance(v, str) and v}


def _patched(document: Any, ops: list[Any], what: str) -> Any:
    try:
        return apply_patch(document, ops)
    except (CaseError, KeyError, IndexError, ValueError, TypeError) as exc:
        raise CaseError(f"{what} patch does not apply: {exc!r}") from None


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def build_layout(artifact: Path, manifest_name: str, spec: Layout, dest: Path) -> str:
    """Pack the artifact directory ``artifact`` into a new image layout at ``dest`` as ``spec``
    says; return the target to give an implementation (``oci-layout:DEST[:REF]``)."""
    document = load_manifest_bytes((artifact / manifest_name).read_bytes()).data
    layers = _with_extra_layers(collect_layers(artifact, document, manifest_name), spec.extra_entries)
    kind = "" if spec.compression == "none" else spec.compression
    init_layout(dest)
    descriptors: list[dict[str, Any]] = []
    table: list[dict[str, Any]] = []
    for layer in layers:
        key = _layer_key(layer)
        tar = _tar(layer, [e for e in spec.extra_entries if e.layer == key])
        if kind:
            compressor = make_compressor(kind)
            stored = compressor.compress(tar) + compressor.flush()
        else:
            stored = tar
        annotations = {ANNOTATION_LAYER_ROLE: layer.role}
        row: dict[str, Any] = {"role": layer.role, "diff_id": _sha(tar), "size": len(tar)}
        if layer.dataset is not None:
            annotations[ANNOTATION_LAYER_DATASET] = layer.dataset
            row["dataset"] = layer.dataset
        descriptors.append(write_blob(dest, stored, layer_media_type(layer.role, kind), annotations).to_json())
        table.append(row)
    config = _patched({"manifest_file": manifest_name, "manifest": document, "layers": table},
                      spec.config_patch, "config")
    config_desc = write_blob(dest, canonical_json(config), CONFIG_MEDIA_TYPE)
    manifest = _patched({"schemaVersion": 2, "mediaType": MANIFEST_MEDIA_TYPE, "artifactType": ARTIFACT_TYPE,
                         "config": config_desc.to_json(), "layers": descriptors,
                         "annotations": _annotations(document)}, spec.manifest_patch, "image manifest")
    manifest_desc = write_blob(dest, canonical_json(manifest), MANIFEST_MEDIA_TYPE)
    index = _patched({"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": [
        {**manifest_desc.to_json(), "artifactType": ARTIFACT_TYPE,
         "annotations": {ANNOTATION_REF_NAME: spec.ref_name}}]}, spec.index_patch, "index")
    write_index(dest, index)
    blobs = {"manifest": manifest_desc.digest, "config": config_desc.digest,
             **{f"layer:{i}": d["digest"] for i, d in enumerate(descriptors)}}
    for edit in spec.tamper:
        _tamper(dest, edit, blobs)
    return f"oci-layout:{dest}" + (f":{spec.select}" if spec.select else "")


def _tamper(layout: Path, edit: LayoutEdit, blobs: Mapping[str, str]) -> None:
    if edit.target in ("oci-layout", "index.json"):
        path = layout / edit.target
    elif edit.target in blobs:
        path = layout / "blobs" / "sha256" / blobs[edit.target][len("sha256:"):]
    else:
        raise CaseError(f"tamper target {edit.target!r} does not exist (the layout has {len(blobs) - 2} layers)")
    if edit.op == "remove":
        path.unlink()
    elif edit.op == "write":
        path.write_bytes(edit.text.encode("utf-8"))
    elif edit.op == "append":
        with open(path, "ab") as handle:
            handle.write(edit.text.encode("utf-8"))
    else:
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 1
        path.write_bytes(bytes(data))
