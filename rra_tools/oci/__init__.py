"""RRA artifacts as OCI artifacts: media types, the image layout, deterministic packing and
safe unpacking (spec/05-packaging.md). Registry transfer lives in the registry modules.

Importing this package is cheap: compression libraries load only when a layer is written or read.
"""

from .errors import (
    ArtifactInvalid,
    BlobMissing,
    DigestMismatch,
    DocumentTooLarge,
    LayerRoleError,
    LayoutError,
    MediaTypeError,
    OCIError,
    PackError,
    SizeMismatch,
    UncompressedMismatch,
    UnpackError,
    UnsafeLayer,
)
from .layout import BlobOpener, Descriptor, LayoutProblem, blob_path, read_index, resolve, write_blob
from .pack import PackResult, pack
from .unpack import UnpackLimits, UnpackResult, unpack_layers
from .verify import verify_layout
from .mediatypes import (
    ARTIFACT_TYPE,
    CONFIG_MEDIA_TYPE,
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    MAX_CONFIG_BYTES,
    MAX_MANIFEST_BYTES,
    ROLES,
    layer_media_type,
    parse_layer_media_type,
)

__all__ = [
    "ARTIFACT_TYPE",
    "CONFIG_MEDIA_TYPE",
    "INDEX_MEDIA_TYPE",
    "MANIFEST_MEDIA_TYPE",
    "MAX_CONFIG_BYTES",
    "MAX_MANIFEST_BYTES",
    "ROLES",
    "ArtifactInvalid",
    "BlobMissing",
    "BlobOpener",
    "Descriptor",
    "DigestMismatch",
    "DocumentTooLarge",
    "LayerRoleError",
    "LayoutError",
    "LayoutProblem",
    "MediaTypeError",
    "OCIError",
    "PackError",
    "PackResult",
    "SizeMismatch",
    "UncompressedMismatch",
    "UnpackError",
    "UnpackLimits",
    "UnpackResult",
    "UnsafeLayer",
    "blob_path",
    "layer_media_type",
    "pack",
    "parse_layer_media_type",
    "read_index",
    "resolve",
    "unpack_layers",
    "verify_layout",
    "write_blob",
]
