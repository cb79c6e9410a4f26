"""Validate any target the command line accepts: an artifact directory, a manifest file, a packed
artifact in an image layout (``oci-layout:DIR[:REF]``) or in a registry (``oci://HOST/REPO:TAG``).

Dispatching lives here, above both :mod:`rra_tools.validate` (which checks a manifest and its
files) and the OCI modules (which fetch, verify and unpack a packed artifact), so neither of
those imports the other's half.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..io.limits import MAX_MANIFEST_BYTES
from ..validate.api import validate_path
from ..validate.config import Config
from ..validate.result import ValidationResult
from .validation import LAYOUT_SCHEME, parse_layout_target, validate_oci_layout

if TYPE_CHECKING:
    from .registry import Reference

__all__ = ["PACKED_SCHEMES", "REGISTRY_SCHEME", "validate_packed_target", "validate_target"]

#: Prefix of a packed artifact in a registry: ``oci://HOST/REPO:TAG`` or ``...@sha256:HEX``.
REGISTRY_SCHEME = "oci://"
#: Prefixes of the targets that name a packed artifact rather than a path.
PACKED_SCHEMES = (REGISTRY_SCHEME, LAYOUT_SCHEME)


def validate_packed_target(target: str, *, config: Config | None = None,
                           time_budget_s: float | None = None) -> tuple[ValidationResult, Reference | None]:
    """Validate the packed artifact ``oci://...`` or ``oci-layout:DIR[:REF]``.

    Returns the result and, for a registry target, its manifest pinned by digest (None when
    nothing could be fetched, and for a layout), so that a report can be attached to it.
    """
    if target.startswith(REGISTRY_SCHEME):
        # The registry client (and its HTTP stack) loads only for registry targets.
        from .pull import validate_remote

        return validate_remote(target, config=config, time_budget_s=time_budget_s)
    if not target.startswith(LAYOUT_SCHEME):
        raise ValueError(f"{target!r} is not a packed target ({' or '.join(PACKED_SCHEMES)})")
    layout, ref_name = parse_layout_target(target)
    return validate_oci_layout(layout, ref_name=ref_name, config=config, input_name=target,
                               time_budget_s=time_budget_s), None


def validate_target(target: str | Path, *, config: Config | None = None, max_bytes: int = MAX_MANIFEST_BYTES,
                    time_budget_s: float | None = None, files: bool = True) -> ValidationResult:
    """Validate a command-line target: an artifact directory, a manifest file, a packed
    artifact ``oci-layout:DIR`` / ``oci-layout:DIR:REF``, or one in a registry ``oci://HOST/REPO:TAG``.

    ``files=False`` checks a directory's or file's manifest alone (see
    :func:`rra_tools.validate.validate_path`); a packed artifact always carries its files, so it
    is checked whole.
    """
    if isinstance(target, str) and target.startswith(PACKED_SCHEMES):
        return validate_packed_target(target, config=config, time_budget_s=time_budget_s)[0]
    return validate_path(target, config=config, max_bytes=max_bytes, time_budget_s=time_budget_s, files=files)
