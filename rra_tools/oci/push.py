"""Push an OCI image layout (or an artifact directory, packed first) to a registry.

Blobs go first, in parallel and largest first, each skipped when the registry already has it
(HEAD); the manifest goes last, byte for byte as it is in the layout, so its digest is the one
the layout records. A manifest with a ``subject`` is added to the referrers list (the registry's
own, or the referrers tag schema when the registry does not keep one).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import OCIError
from .layout import Descriptor, blob_path, is_layout, layout_opener, read_index, read_verified
from .mediatypes import ANNOTATION_REF_NAME, INDEX_MEDIA_TYPE, MAX_CONFIG_BYTES, MAX_MANIFEST_BYTES
from .registry import IntegrityError, Reference, RegistryClient, RegistryError

__all__ = ["PushResult", "push", "push_layout", "select_entry"]


@dataclass(frozen=True)
class PushResult:
    """Where the manifest went and what it took."""

    reference: Reference
    digest: str
    size: int
    media_type: str
    uploaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    bytes_uploaded: int = 0
    referrers_tag: str | None = None

    @property
    def pinned(self) -> Reference:
        """The pushed manifest by digest."""
        return self.reference.with_digest(self.digest)


def select_entry(layout: Path, ref_name: str | None, tag: str | None) -> Descriptor:
    """The manifest of ``layout`` to push: the one named ``ref_name``; else the only one; else the
    one whose ref name equals the destination ``tag``."""
    entries = read_index(layout).manifests

    def name(d: Descriptor) -> str | None:
        return (d.annotations or {}).get(ANNOTATION_REF_NAME)

    known = ", ".join(sorted(repr(n) for n in {name(e) for e in entries} if n)) or "none"
    if not entries:
        raise RegistryError(f"{layout}/index.json lists no manifest")
    if ref_name is not None:
        named = [e for e in entries if name(e) == ref_name]
        if not named:
            raise RegistryError(f"{layout} has no manifest named {ref_name!r} (names: {known})")
        return named[-1]
    if len(entries) == 1:
        return entries[0]
    named = [e for e in entries if tag is not None and name(e) == tag]
    if named:
        return named[-1]
    raise RegistryError(f"{layout} holds {len(entries)} manifests; choose one with --ref-name (names: {known})")


def push_layout(layout: Path, target: Reference, client: RegistryClient, *, ref_name: str | None = None,
                max_manifest_bytes: int | None = None) -> PushResult:
    """Push one manifest of ``layout`` (with everything it references) to ``target``.

    ``target`` is tagged with its tag; with only a digest, the manifest must have that digest.
    """
    from .referrers import register_referrer

    cap = max_manifest_bytes or MAX_MANIFEST_BYTES
    try:
        entry = select_entry(layout, ref_name, target.tag)
        if target.digest is not None and target.digest != entry.digest:
            raise RegistryError(f"the layout's manifest is {entry.digest}, not {target.digest}")
        before_up, before_skip = len(client.stats.uploaded), len(client.stats.skipped)
        bytes_before = client.stats.bytes_up
        data = _push_tree(layout, target.repository, entry, client, cap)
    except OCIError as exc:
        raise IntegrityError(f"{layout}: {exc.message}") from None
    digest, processed = client.put_manifest(target.repository, target.tag or entry.digest, data, entry.mediaType)
    referrers_tag = None
    manifest = json.loads(data)
    subject = manifest.get("subject")
    if isinstance(subject, dict) and not processed:
        referrers_tag = register_referrer(client, target.repository, subject, _descriptor_of(manifest, digest, data,
                                                                                               entry.mediaType))
    return PushResult(reference=target if target.tag else target.with_digest(digest), digest=digest, size=len(data),
                      media_type=entry.mediaType, uploaded=client.stats.uploaded[before_up:],
                      skipped=client.stats.skipped[before_skip:], bytes_uploaded=client.stats.bytes_up - bytes_before,
                      referrers_tag=referrers_tag)


def push(source: Path, target: Reference, client: RegistryClient, *, ref_name: str | None = None,
         pack_layout: Callable[[Path, Path], None] | None = None) -> PushResult:
    """Push ``source``: an OCI image layout as it is, or an artifact directory packed first into
    a temporary layout (removed afterwards) by ``pack_layout`` (default: :func:`rra_tools.oci.pack.pack`)."""
    if is_layout(source):
        return push_layout(source, target, client, ref_name=ref_name)
    if not source.is_dir():
        raise RegistryError(f"{str(source)!r} is neither an OCI image layout nor an artifact directory")
    packer = pack_layout or _default_pack
    scratch = Path(tempfile.mkdtemp(prefix=".rra-push-", dir=_scratch_parent(source)))
    try:
        layout = scratch / "layout"
        packer(source, layout)
        return push_layout(layout, target, client, ref_name=ref_name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _default_pack(artifact: Path, layout: Path) -> None:
    from .pack import pack

    pack(artifact, layout)


def _scratch_parent(source: Path) -> Path | None:
    # Next to the source when writable, so a big pack does not fill a small /tmp.
    parent = source.resolve().parent
    return parent if _writable(parent) else None


def _writable(path: Path) -> bool:
    import os

    return os.access(path, os.W_OK)


def _push_tree(layout: Path, repository: str, entry: Descriptor, client: RegistryClient, cap: int) -> bytes:
    """Upload every blob a manifest (or, recursively, an index) references; return its bytes."""
    data = read_verified(layout_opener(layout), entry, cap, "manifest")
    try:
        document = json.loads(data)
    except ValueError:
        raise IntegrityError(f"manifest {entry.digest} in {layout} is not JSON") from None
    if not isinstance(document, dict):
        raise IntegrityError(f"manifest {entry.digest} in {layout} is not a JSON object")
    if entry.mediaType == INDEX_MEDIA_TYPE or document.get("mediaType") == INDEX_MEDIA_TYPE or "manifests" in document:
        # An index (a multi-platform image, say): its manifests go first, by digest.
        for i, child in enumerate(document.get("manifests", [])):
            descriptor = Descriptor.from_json(child, f"index {entry.digest} manifests[{i}]")
            child_data = _push_tree(layout, repository, descriptor, client, cap)
            client.put_manifest(repository, descriptor.digest, child_data, descriptor.mediaType)
        return data
    blobs: dict[str, int] = {}
    config = document.get("config")
    if isinstance(config, dict):
        descriptor = Descriptor.from_json(config, f"manifest {entry.digest} config")
        if descriptor.size > MAX_CONFIG_BYTES:
            raise RegistryError(f"config {descriptor.digest} is {descriptor.size} bytes, more than the cap of "
                                f"{MAX_CONFIG_BYTES}")
        blobs[descriptor.digest] = descriptor.size
    for i, layer in enumerate(document.get("layers") or []):
        # Non-distributable layers (with urls) are fetched from elsewhere, never pushed.
        if isinstance(layer, dict) and not layer.get("urls"):
            descriptor = Descriptor.from_json(layer, f"manifest {entry.digest} layers[{i}]")
            blobs[descriptor.digest] = descriptor.size
    _upload_all(layout, repository, blobs, client)
    return data


def _upload_all(layout: Path, repository: str, blobs: dict[str, int], client: RegistryClient) -> None:
    """Upload blobs on a few threads, largest first; the first failure stops the rest."""
    client.transfer_all(client.upload_blob, repository, blobs, lambda digest: blob_path(layout, digest))


def _descriptor_of(manifest: dict[str, Any], digest: str, data: bytes, media_type: str) -> dict[str, Any]:
    """The descriptor a referrers list holds for a pushed manifest (distribution-spec rules)."""
    descriptor: dict[str, Any] = {"mediaType": media_type, "digest": digest, "size": len(data)}
    artifact_type = manifest.get("artifactType") or (manifest.get("config") or {}).get("mediaType")
    if artifact_type:
        descriptor["artifactType"] = artifact_type
    if manifest.get("annotations"):
        descriptor["annotations"] = manifest["annotations"]
    return descriptor
