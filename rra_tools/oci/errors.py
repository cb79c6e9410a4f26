"""Typed errors of packing, reading and unpacking OCI layouts.

Each reading error carries the rule code (RRA8xx) that ``rra validate oci-layout:`` reports for
it, the digest of the blob concerned and, for layer entries, the entry's name, so a caller can
name exactly what was refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..errors import ExitStatus, RRAError

if TYPE_CHECKING:
    from ..validate.result import ValidationResult

__all__ = [
    "ArtifactInvalid",
    "BlobMissing",
    "DigestMismatch",
    "DocumentTooLarge",
    "LayerRoleError",
    "LayoutError",
    "MediaTypeError",
    "OCIError",
    "OCILayerError",
    "PackError",
    "SizeMismatch",
    "UncompressedMismatch",
    "UnpackError",
    "UnsafeLayer",
]


class OCILayerError(RRAError):
    """Base of every error the oci layer (packing, OCI layouts, registries, provenance) raises on
    purpose: catch it to catch them all.

    It sets no exit status: each error keeps its own (the root's unless it sets one). Named for
    its layer so that it takes no name a caller already catches for a narrower failure. The whole
    tree is drawn in :mod:`rra_tools.errors`.
    """


class OCIError(OCILayerError):
    """A layout, blob or layer cannot be trusted; ``code`` is the rule code reported for it."""

    exit_status = ExitStatus.FAILED

    code: ClassVar[str] = "RRA801"

    def __init__(self, message: str, *, digest: str | None = None, entry: str | None = None,
                 hint: str | None = None, file: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.digest = digest
        self.entry = entry
        self.hint = hint
        #: The layout file concerned ("oci-layout", "index.json"), when it is not a blob.
        self.file = file

    def describe(self) -> str:
        """The rule code, then the message: ``RRA803 blob ... does not match its digest``."""
        return f"{self.code} {self.message}"


class LayoutError(OCIError):
    """The directory is not a readable OCI image layout, or a document in it is malformed."""

    code = "RRA801"


class BlobMissing(OCIError):
    """A descriptor names a blob the layout does not hold."""

    code = "RRA802"


class DigestMismatch(OCIError):
    """A blob's SHA-256 differs from its descriptor's digest."""

    code = "RRA803"

    def __init__(self, message: str, *, digest: str | None = None, actual: str | None = None,
                 entry: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, digest=digest, entry=entry, hint=hint)
        self.actual = actual


class SizeMismatch(OCIError):
    """A blob's size differs from its descriptor's size."""

    code = "RRA804"


class DocumentTooLarge(OCIError):
    """An image manifest, config or index.json is larger than the cap readers enforce."""

    code = "RRA805"


class MediaTypeError(OCIError):
    """A media type or artifact type is not the one the packaging format requires."""

    code = "RRA806"


class LayerRoleError(OCIError):
    """The config's layer table and the manifest's layers disagree, or a role is missing."""

    code = "RRA807"


class UnsafeLayer(OCIError):
    """A layer entry would write outside the destination, or is of a type never unpacked."""

    code = "RRA808"


class UncompressedMismatch(DigestMismatch):
    """A layer decompresses to other bytes, or more bytes, than its config entry declares."""

    code = "RRA809"


class UnpackError(OCILayerError):
    """Unpacking cannot start: the destination exists, or the limits are exceeded."""

    exit_status = ExitStatus.FAILED


class PackError(OCILayerError):
    """An artifact directory cannot be packed (a FIFO, an escaping symlink, an unreadable file)."""

    exit_status = ExitStatus.USAGE


class ArtifactInvalid(PackError):
    """Validation of the artifact found errors and packing was not forced."""

    exit_status = ExitStatus.FINDINGS

    def __init__(self, result: ValidationResult) -> None:
        errors = sum(1 for d in result.diagnostics if d.severity.label == "error")
        super().__init__(f"the artifact has {errors} validation error(s)")
        self.result = result
