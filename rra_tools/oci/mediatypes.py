"""Media types, roles and annotation keys of an RRA packed as an OCI artifact (spec/05-packaging.md)."""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "ANNOTATION_AUTHORS",
    "ANNOTATION_CREATED",
    "ANNOTATION_ID",
    "ANNOTATION_LAYER_DATASET",
    "ANNOTATION_LAYER_ROLE",
    "ANNOTATION_LEVELS",
    "ANNOTATION_LICENSES",
    "ANNOTATION_REF_NAME",
    "ANNOTATION_REVISION",
    "ANNOTATION_RRA_VERSION",
    "ANNOTATION_SOURCE",
    "ANNOTATION_TITLE",
    "ANNOTATION_VALIDATION",
    "ANNOTATION_VERSION",
    "ARTIFACT_TYPE",
    "COMPRESSIONS",
    "CONFIG_MEDIA_TYPE",
    "EMPTY_MEDIA_TYPE",
    "INDEX_MEDIA_TYPE",
    "LAYOUT_VERSION",
    "MANIFEST_MEDIA_TYPE",
    "MAX_CONFIG_BYTES",
    "MAX_INDEX_BYTES",
    "MAX_MANIFEST_BYTES",
    "REQUIRED_ANNOTATIONS",
    "ROLES",
    "VALIDATION_FORCED",
    "VALIDATION_PASSED",
    "layer_media_type",
    "parse_layer_media_type",
]

#: ``artifactType`` of the image manifest of every packed RRA.
ARTIFACT_TYPE: Final = "application/vnd.rra.artifact.v1"
#: Media type of the config blob: canonical JSON of the manifest plus the layer table.
CONFIG_MEDIA_TYPE: Final = "application/vnd.rra.config.v1+json"
MANIFEST_MEDIA_TYPE: Final = "application/vnd.oci.image.manifest.v1+json"
INDEX_MEDIA_TYPE: Final = "application/vnd.oci.image.index.v1+json"
EMPTY_MEDIA_TYPE: Final = "application/vnd.oci.empty.v1+json"
#: Content of the ``oci-layout`` file's ``imageLayoutVersion``.
LAYOUT_VERSION: Final = "1.0.0"

#: Layer roles, in the order their layers appear in the manifest.
ROLES: Final = ("manifest", "code", "environment", "docs", "data", "records")
#: Compression suffixes of layer media types; "" is a plain (uncompressed) tar.
COMPRESSIONS: Final = ("", "zstd", "gzip")

#: Registries commonly refuse image manifests above 4 MiB; readers refuse them too, before parsing.
MAX_MANIFEST_BYTES: Final = 4 * 1024 * 1024
#: The config embeds the whole manifest (at most 16 MiB as a file, spec/01-overview.md#limits);
#: its JSON form may be somewhat larger than the YAML, hence twice that.
MAX_CONFIG_BYTES: Final = 32 * 1024 * 1024
#: index.json of a layout: descriptors only.
MAX_INDEX_BYTES: Final = 4 * 1024 * 1024

# OCI pre-defined annotation keys (image-spec annotations.md).
ANNOTATION_CREATED: Final = "org.opencontainers.image.created"
ANNOTATION_TITLE: Final = "org.opencontainers.image.title"
ANNOTATION_VERSION: Final = "org.opencontainers.image.version"
ANNOTATION_REVISION: Final = "org.opencontainers.image.revision"
ANNOTATION_SOURCE: Final = "org.opencontainers.image.source"
ANNOTATION_LICENSES: Final = "org.opencontainers.image.licenses"
ANNOTATION_AUTHORS: Final = "org.opencontainers.image.authors"
ANNOTATION_REF_NAME: Final = "org.opencontainers.image.ref.name"

# Ours, under the reverse-DNS prefix of rra.dev.
ANNOTATION_ID: Final = "dev.rra.id"
ANNOTATION_RRA_VERSION: Final = "dev.rra.rra-version"
ANNOTATION_VALIDATION: Final = "dev.rra.validation"
ANNOTATION_LEVELS: Final = "dev.rra.levels"
ANNOTATION_LAYER_ROLE: Final = "dev.rra.layer.role"
ANNOTATION_LAYER_DATASET: Final = "dev.rra.layer.dataset"

#: Values of ``dev.rra.validation``.
VALIDATION_PASSED: Final = "passed"
VALIDATION_FORCED: Final = "forced"

#: Annotations every packed RRA's image manifest carries.
REQUIRED_ANNOTATIONS: Final = (
    ANNOTATION_CREATED, ANNOTATION_TITLE, ANNOTATION_LICENSES, ANNOTATION_AUTHORS,
    ANNOTATION_ID, ANNOTATION_RRA_VERSION, ANNOTATION_VALIDATION,
)

_LAYER = re.compile(r"^application/vnd\.rra\.layer\.v1\.(?P<role>[a-z]+)\.tar(?:\+(?P<comp>zstd|gzip))?$")


def layer_media_type(role: str, compression: str = "") -> str:
    """The media type of a layer of ``role`` compressed with ``compression`` ('' for plain tar).

    >>> layer_media_type("code", "zstd")
    'application/vnd.rra.layer.v1.code.tar+zstd'
    """
    if role not in ROLES:
        raise ValueError(f"unknown layer role {role!r}; expected one of {', '.join(ROLES)}")
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown compression {compression!r}; expected 'zstd', 'gzip' or ''")
    return f"application/vnd.rra.layer.v1.{role}.tar" + (f"+{compression}" if compression else "")


def parse_layer_media_type(media_type: str) -> tuple[str, str] | None:
    """(role, compression) of an RRA layer media type, or None when it is not one.

    >>> parse_layer_media_type("application/vnd.rra.layer.v1.data.tar")
    ('data', '')
    """
    match = _LAYER.match(media_type)
    if match is None or match["role"] not in ROLES:
        return None
    return match["role"], match["comp"] or ""
