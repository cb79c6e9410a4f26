"""The config blob of a packed RRA: the manifest as canonical JSON and the table of layers.

Each layer entry gives the role of the layer and the digest and size of its *uncompressed*
tar, so that a reader can stop decompressing as soon as a layer yields more than declared.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..io.canonical import canonical_json
from .errors import LayerRoleError, LayoutError, MediaTypeError
from .layout import BlobOpener, Descriptor, parse_json_object, read_verified
from .mediatypes import (
    ANNOTATION_LAYER_DATASET,
    ANNOTATION_LAYER_ROLE,
    CONFIG_MEDIA_TYPE,
    MAX_CONFIG_BYTES,
    ROLES,
    parse_layer_media_type,
)

__all__ = ["ArtifactConfig", "LayerEntry", "MANIFEST_FILE_NAMES", "match_layers", "read_config"]

#: Names the manifest file may have inside the manifest layer.
MANIFEST_FILE_NAMES = ("rra.yaml", "rra.yml", "rra.json")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True)
class LayerEntry:
    """One layer as the config describes it."""

    role: str
    #: ``sha256:<hex>`` of the uncompressed tar.
    diff_id: str
    #: Size in bytes of the uncompressed tar.
    size: int
    #: Id of the data source, for a layer of role ``data`` only.
    dataset: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this entry."""
        out: dict[str, Any] = {"role": self.role, "diff_id": self.diff_id, "size": self.size}
        if self.dataset is not None:
            out["dataset"] = self.dataset
        return out


@dataclass(frozen=True)
class ArtifactConfig:
    """The parsed config blob."""

    manifest_file: str
    manifest: Mapping[str, Any]
    layers: tuple[LayerEntry, ...]

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the config."""
        return {"manifest_file": self.manifest_file, "manifest": self.manifest,
                "layers": [layer.to_json() for layer in self.layers]}

    def to_bytes(self) -> bytes:
        """The config blob: canonical JSON, so equal configs are equal bytes."""
        return canonical_json(self.to_json())

    @classmethod
    def parse(cls, raw: bytes, digest: str | None = None) -> ArtifactConfig:
        """Read a config blob; LayoutError (or LayerRoleError for the layer table) when malformed."""
        data = parse_json_object(raw, f"config {digest or ''}".strip(), digest)
        name = data.get("manifest_file")
        if name not in MANIFEST_FILE_NAMES:
            raise LayoutError(f"config has manifest_file {name!r}; expected one of "
                              f"{', '.join(MANIFEST_FILE_NAMES)}", digest=digest)
        manifest = data.get("manifest")
        if not isinstance(manifest, dict):
            raise LayoutError("config has no 'manifest' object", digest=digest)
        layers = data.get("layers")
        if not isinstance(layers, list):
            raise LayoutError("config has no 'layers' list", digest=digest)
        entries = []
        for i, item in enumerate(layers):
            entries.append(_entry(item, f"config layers[{i}]", digest))
        return cls(str(name), manifest, tuple(entries))


def _entry(item: Any, where: str, digest: str | None) -> LayerEntry:
    if not isinstance(item, dict):
        raise LayerRoleError(f"{where} is not an object", digest=digest)
    role, diff_id, size, dataset = item.get("role"), item.get("diff_id"), item.get("size"), item.get("dataset")
    if role not in ROLES:
        raise LayerRoleError(f"{where} has role {role!r}; expected one of {', '.join(ROLES)}", digest=digest)
    if not isinstance(diff_id, str) or _DIGEST.match(diff_id) is None:
        raise LayerRoleError(f"{where} has diff_id {diff_id!r}; expected 'sha256:' and 64 hex digits", digest=digest)
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise LayerRoleError(f"{where} has size {size!r}; expected a non-negative integer", digest=digest)
    if role == "data":
        if not isinstance(dataset, str) or _ID.match(dataset) is None:
            raise LayerRoleError(f"{where} is a data layer without a valid 'dataset' id", digest=digest)
    elif dataset is not None:
        raise LayerRoleError(f"{where} has a 'dataset' but role {role!r}", digest=digest)
    return LayerEntry(str(role), diff_id, size, dataset)


def match_layers(manifest: Mapping[str, Any], config: ArtifactConfig) -> list[tuple[Descriptor, LayerEntry, str]]:
    """Pair each layer descriptor of the image ``manifest`` with its config entry and compression.

    Raises MediaTypeError for a layer that is not an RRA layer, and LayerRoleError when the
    table and the layers disagree (count, order, role, data source), when the manifest layer is
    missing or not first, or when a role other than ``data`` appears twice.
    """
    layers = manifest.get("layers")
    if not isinstance(layers, list):
        raise LayoutError("the manifest has no 'layers' list")
    descriptors = [Descriptor.from_json(item, f"manifest layers[{i}]") for i, item in enumerate(layers)]
    if len(descriptors) != len(config.layers):
        raise LayerRoleError(f"the manifest has {len(descriptors)} layers but the config describes "
                             f"{len(config.layers)}")
    out: list[tuple[Descriptor, LayerEntry, str]] = []
    seen: set[tuple[str, str | None]] = set()
    for i, (descriptor, entry) in enumerate(zip(descriptors, config.layers)):
        parsed = parse_layer_media_type(descriptor.mediaType)
        if parsed is None:
            raise MediaTypeError(f"layer {i} has media type {descriptor.mediaType!r}, which is not an RRA layer "
                                 "type", digest=descriptor.digest)
        role, compression = parsed
        annotations = descriptor.annotations or {}
        if role != entry.role:
            raise LayerRoleError(f"layer {i} has role {role!r} in its media type but {entry.role!r} in the config",
                                 digest=descriptor.digest)
        if annotations.get(ANNOTATION_LAYER_ROLE, role) != role:
            raise LayerRoleError(f"layer {i} has role {role!r} in its media type but "
                                 f"{annotations[ANNOTATION_LAYER_ROLE]!r} in its annotation", digest=descriptor.digest)
        if annotations.get(ANNOTATION_LAYER_DATASET) != entry.dataset:
            raise LayerRoleError(f"layer {i} names data source {annotations.get(ANNOTATION_LAYER_DATASET)!r} but "
                                 f"the config names {entry.dataset!r}", digest=descriptor.digest)
        key = (role, entry.dataset)
        if key in seen:
            what = f"data source {entry.dataset!r}" if role == "data" else f"role {role!r}"
            raise LayerRoleError(f"layer {i} repeats {what}", digest=descriptor.digest)
        seen.add(key)
        out.append((descriptor, entry, compression))
    if not out or out[0][1].role != "manifest":
        raise LayerRoleError("the first layer is not the manifest layer")
    return out


def read_config(opener: BlobOpener, manifest: Mapping[str, Any]) -> tuple[Descriptor, ArtifactConfig]:
    """The config descriptor and parsed config of an image manifest, read within the cap and
    verified against its digest."""
    descriptor = Descriptor.from_json(manifest.get("config"), "manifest config")
    if descriptor.mediaType != CONFIG_MEDIA_TYPE:
        raise MediaTypeError(f"the config has media type {descriptor.mediaType!r}; expected {CONFIG_MEDIA_TYPE!r}",
                             digest=descriptor.digest)
    raw = read_verified(opener, descriptor, MAX_CONFIG_BYTES, "config")
    return descriptor, ArtifactConfig.parse(raw, descriptor.digest)
