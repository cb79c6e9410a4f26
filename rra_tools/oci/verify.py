"""Verify a packed RRA without unpacking it: structure, media types, annotations, the layer
table, size caps, and (optionally) the size and digest of every layer blob.

Problems are collected, not raised, so a report names all of them; a problem that makes the
rest unreadable (an unreadable manifest or config) ends the checks of that manifest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import ArtifactConfig, LayerEntry, match_layers, read_config
from .errors import DigestMismatch, MediaTypeError, OCIError, SizeMismatch
from .layout import (
    BlobOpener,
    Descriptor,
    LayoutProblem,
    layout_opener,
    parse_json_object,
    read_index,
    read_verified,
    select_manifest,
)
from .mediatypes import (
    ANNOTATION_VALIDATION,
    ARTIFACT_TYPE,
    MANIFEST_MEDIA_TYPE,
    MAX_MANIFEST_BYTES,
    REQUIRED_ANNOTATIONS,
    VALIDATION_FORCED,
    VALIDATION_PASSED,
)

__all__ = ["VerifiedManifest", "blob_file", "check_blob", "verify_layout", "verify_manifest"]


#: Records one problem: code, message, JSON pointer, file, hint.
_Add = Callable[..., None]


@dataclass
class VerifiedManifest:
    """The outcome of verifying one image manifest."""

    descriptor: Descriptor
    problems: list[LayoutProblem] = field(default_factory=list)
    #: The parsed image manifest, when it could be read.
    manifest: dict[str, Any] | None = None
    #: The parsed config, when it could be read.
    config: ArtifactConfig | None = None
    #: Each layer with its config entry and compression, when the layer table is consistent.
    layers: list[tuple[Descriptor, LayerEntry, str]] | None = None


def blob_file(digest: str | None) -> str:
    """The layout-relative file of a blob, for locating a problem."""
    return f"blobs/sha256/{digest[7:]}" if digest and digest.startswith("sha256:") else ""


def verify_layout(layout: Path, ref_name: str | None = None, *, check_layers: bool = True) -> list[LayoutProblem]:
    """Every problem of the image layout ``layout`` (of the manifest ``ref_name``, or of every
    manifest of its index)."""
    try:
        index = read_index(layout)
    except OCIError as exc:
        return [LayoutProblem.from_error(exc)]
    if ref_name is not None:
        try:
            chosen = [select_manifest(index, ref_name)]
        except OCIError as exc:
            return [LayoutProblem.from_error(exc, "index.json")]
    else:
        chosen = list(enumerate(index.manifests))
        if not chosen:
            return [LayoutProblem("RRA801", "index.json lists no manifest", "index.json", "/manifests")]
    opener = layout_opener(layout)
    problems: list[LayoutProblem] = []
    for _, descriptor in chosen:
        problems += verify_manifest(opener, descriptor, check_layers=check_layers).problems
    return problems


def verify_manifest(opener: BlobOpener, descriptor: Descriptor, *, check_layers: bool = True) -> VerifiedManifest:
    """Verify the image manifest ``descriptor`` points at, and what it references."""
    out = VerifiedManifest(descriptor)
    where = blob_file(descriptor.digest)

    def add(code: str, message: str, pointer: str = "", file: str = where, hint: str | None = None) -> None:
        out.problems.append(LayoutProblem(code, message, file, pointer, hint, descriptor.digest))

    if descriptor.mediaType != MANIFEST_MEDIA_TYPE:
        add("RRA806", f"manifest {descriptor.digest} has media type {descriptor.mediaType!r}; expected "
                      f"{MANIFEST_MEDIA_TYPE!r}", file="index.json")
        return out
    try:
        manifest = parse_json_object(read_verified(opener, descriptor, MAX_MANIFEST_BYTES, "manifest"),
                                     f"manifest {descriptor.digest}", descriptor.digest)
    except OCIError as exc:
        out.problems.append(LayoutProblem.from_error(exc, where))
        return out
    out.manifest = manifest
    _check_header(manifest, descriptor, add)
    _check_annotations(manifest, add)
    try:
        _, config = read_config(opener, manifest)
    except OCIError as exc:
        config_digest = manifest.get("config", {}).get("digest") if isinstance(manifest.get("config"), Mapping) else None
        out.problems.append(LayoutProblem.from_error(exc, blob_file(config_digest) if isinstance(
            config_digest, str) and not isinstance(exc, MediaTypeError) else where, "/config"))
        return out
    out.config = config
    try:
        out.layers = match_layers(manifest, config)
    except OCIError as exc:
        out.problems.append(LayoutProblem.from_error(exc, where, "/layers"))
        return out
    if check_layers:
        for i, (layer, _, _) in enumerate(out.layers):
            problem = check_blob(opener, layer)
            if problem is not None:
                out.problems.append(LayoutProblem.from_error(problem, blob_file(layer.digest), f"/layers/{i}"))
    return out


def _check_header(manifest: Mapping[str, Any], descriptor: Descriptor, add: _Add) -> None:
    if manifest.get("schemaVersion") != 2:
        add("RRA801", f"the manifest has schemaVersion {manifest.get('schemaVersion')!r}; expected 2", "/schemaVersion")
    if manifest.get("mediaType") != MANIFEST_MEDIA_TYPE:
        add("RRA806", f"the manifest has mediaType {manifest.get('mediaType')!r}; expected {MANIFEST_MEDIA_TYPE!r}",
            "/mediaType")
    if manifest.get("artifactType") != ARTIFACT_TYPE:
        add("RRA806", f"the manifest has artifactType {manifest.get('artifactType')!r}; expected {ARTIFACT_TYPE!r}",
            "/artifactType", hint="this is not a packed RRA, or it was packed by an incompatible tool")
    elif descriptor.artifactType not in (None, ARTIFACT_TYPE):
        add("RRA806", f"the index gives manifest {descriptor.digest} artifactType {descriptor.artifactType!r}; "
                      f"the manifest says {ARTIFACT_TYPE!r}", file="index.json")


def _check_annotations(manifest: Mapping[str, Any], add: _Add) -> None:
    annotations = manifest.get("annotations")
    if annotations is None:
        annotations = {}
    if not isinstance(annotations, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in annotations.items()):
        add("RRA801", "the manifest's annotations are not a map of strings", "/annotations")
        return
    for key in REQUIRED_ANNOTATIONS:
        if not annotations.get(key):
            add("RRA811", f"the manifest has no {key!r} annotation", "/annotations",
                hint="pack the artifact again with 'rra pack'")
    state = annotations.get(ANNOTATION_VALIDATION)
    if state == VALIDATION_FORCED:
        add("RRA812", "the artifact was packed with --force although validation found errors",
            f"/annotations/{ANNOTATION_VALIDATION}", hint="the findings of the embedded manifest below say which")
    elif state not in (None, "", VALIDATION_PASSED):
        add("RRA801", f"annotation {ANNOTATION_VALIDATION!r} is {state!r}; expected 'passed' or 'forced'",
            f"/annotations/{ANNOTATION_VALIDATION}")


def check_blob(opener: BlobOpener, descriptor: Descriptor) -> OCIError | None:
    """Stream the blob and compare its size and digest with the descriptor; the error, or None."""
    digest = hashlib.sha256()
    size = 0
    try:
        with opener(descriptor) as handle:
            while chunk := handle.read(1024 * 1024):
                size += len(chunk)
                if size > descriptor.size:
                    return SizeMismatch(f"blob {descriptor.digest} is larger than the {descriptor.size} bytes its "
                                        "descriptor says", digest=descriptor.digest)
                digest.update(chunk)
    except OCIError as exc:
        return exc
    if size != descriptor.size:
        return SizeMismatch(f"blob {descriptor.digest} is {size} bytes but its descriptor says {descriptor.size}",
                            digest=descriptor.digest)
    actual = "sha256:" + digest.hexdigest()
    if actual != descriptor.digest:
        return DigestMismatch(f"blob {descriptor.digest} has digest {actual}; the blob was altered",
                              digest=descriptor.digest, actual=actual)
    return None
