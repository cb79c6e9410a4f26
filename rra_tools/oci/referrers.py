"""Referrers: SBOMs, provenance and validation reports attached to an artifact by ``subject``.

Attaching pushes a small manifest whose ``subject`` is the artifact's manifest. Registries that
implement the Referrers API keep the list themselves (they answer the manifest PUT with an
``OCI-Subject`` header); for the others (Distribution 2.8 among them) the client keeps it, as the
distribution-spec prescribes, in an image index tagged ``<alg>-<hex>`` after the subject's digest
(read, add if absent, write back). Discovery asks ``GET /v2/<name>/referrers/<digest>`` first and
reads that tag when the registry answers 404.

Referrer manifests carry no timestamp by default, so attaching the same file twice yields the
same manifest digest and the list does not grow.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .registry import (
    OCI_INDEX,
    OCI_MANIFEST,
    IntegrityError,
    NotFoundError,
    Reference,
    RegistryClient,
    RegistryError,
    TooLargeError,
)

__all__ = [
    "CYCLONEDX_JSON",
    "EMPTY_CONFIG",
    "EMPTY_MEDIA_TYPE",
    "IN_TOTO_JSON",
    "KINDS",
    "MAX_REFERRER_FILE_BYTES",
    "REPORT_JSON",
    "Referrer",
    "attach",
    "attach_bytes",
    "discover",
    "fallback_tag",
    "referrer_manifest",
    "register_referrer",
]

CYCLONEDX_JSON = "application/vnd.cyclonedx+json"
IN_TOTO_JSON = "application/vnd.in-toto+json"
#: A validation report: ``rra validate -f json`` output (schemas/rra-report-1.0.schema.json).
REPORT_JSON = "application/vnd.rra.report.v1+json"
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
#: The empty JSON object: the config of an artifact that has no config (image-spec 1.1).
EMPTY_CONFIG = b"{}"
TITLE = "org.opencontainers.image.title"
#: Largest file attached as a referrer; SBOMs and reports are documents, not datasets.
MAX_REFERRER_FILE_BYTES = 64 * 1024 * 1024


def kinds() -> dict[str, str]:
    """Referrer kind (the ``rra attach`` option) -> artifactType."""
    return {"sbom": CYCLONEDX_JSON, "provenance": IN_TOTO_JSON, "report": REPORT_JSON}


KINDS = ("sbom", "provenance", "report")


@dataclass(frozen=True)
class Referrer:
    """One manifest that refers to a subject."""

    digest: str
    media_type: str
    size: int
    artifact_type: str | None
    annotations: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_descriptor(cls, descriptor: Mapping[str, Any]) -> Referrer:
        """From a descriptor of a referrers list."""
        annotations = descriptor.get("annotations") or {}
        return cls(str(descriptor.get("digest", "")), str(descriptor.get("mediaType", "")),
                   int(descriptor.get("size", 0)),
                   str(descriptor["artifactType"]) if descriptor.get("artifactType") else None,
                   {str(k): str(v) for k, v in annotations.items()} if isinstance(annotations, Mapping) else {})

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output (descriptor field names)."""
        out: dict[str, Any] = {"mediaType": self.media_type, "digest": self.digest, "size": self.size}
        if self.artifact_type:
            out["artifactType"] = self.artifact_type
        if self.annotations:
            out["annotations"] = dict(sorted(self.annotations.items()))
        return out


def fallback_tag(digest: str) -> str:
    """The referrers tag of ``digest``: ``<alg>-<ref>``, algorithm cut to 32 and reference to 64
    characters, characters a tag cannot hold replaced by '-'.

    >>> fallback_tag("sha256:" + "ab" * 32) == "sha256-" + "ab" * 32
    True
    """
    algorithm, _, encoded = digest.partition(":")
    clean = re.compile(r"[^a-zA-Z0-9._-]")
    return f"{clean.sub('-', algorithm)[:32]}-{clean.sub('-', encoded)[:64]}"


def referrer_manifest(subject: Mapping[str, Any], artifact_type: str, blob: Mapping[str, Any],
                      annotations: Mapping[str, str] | None = None) -> bytes:
    """The manifest bytes of a referrer: empty config, one layer (the attached file), ``subject``.

    Compact JSON with sorted keys, so the same inputs always give the same digest.
    """
    manifest: dict[str, Any] = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": artifact_type,
        "config": {"mediaType": EMPTY_MEDIA_TYPE, "digest": _sha256(EMPTY_CONFIG), "size": len(EMPTY_CONFIG),
                   "data": "e30="},
        "layers": [dict(blob)],
        "subject": {k: subject[k] for k in ("mediaType", "digest", "size") if k in subject},
    }
    if annotations:
        manifest["annotations"] = dict(sorted(annotations.items()))
    return json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode("utf-8")


def attach_bytes(client: RegistryClient, subject: Reference, data: bytes, artifact_type: str, *, title: str,
                 annotations: Mapping[str, str] | None = None) -> Referrer:
    """Attach ``data`` (of media type ``artifact_type``) to ``subject``; returns the referrer."""
    fetched = client.get_manifest(subject.repository, subject.reference)
    subject_descriptor = {"mediaType": fetched.media_type or OCI_MANIFEST, "digest": fetched.digest,
                          "size": len(fetched.data)}
    client.upload_bytes(subject.repository, EMPTY_CONFIG)
    digest, _ = client.upload_bytes(subject.repository, data)
    blob = {"mediaType": artifact_type, "digest": digest, "size": len(data), "annotations": {TITLE: title}}
    # The title also goes on the manifest, whose annotations every referrers list repeats, so
    # that discovery can name the file without fetching each referrer.
    annotations = {TITLE: title, **(annotations or {})}
    manifest = referrer_manifest(subject_descriptor, artifact_type, blob, annotations)
    pushed, processed = client.put_manifest(subject.repository, _sha256(manifest), manifest, OCI_MANIFEST)
    descriptor: dict[str, Any] = {"mediaType": OCI_MANIFEST, "digest": pushed, "size": len(manifest),
                                  "artifactType": artifact_type}
    descriptor["annotations"] = dict(sorted(annotations.items()))
    if not processed:
        register_referrer(client, subject.repository, subject_descriptor, descriptor)
    return Referrer.from_descriptor(descriptor)


def attach(client: RegistryClient, subject: Reference, path: Path, kind: str, *,
           annotations: Mapping[str, str] | None = None) -> Referrer:
    """Attach the file at ``path`` as a referrer of ``kind`` ('sbom', 'provenance' or 'report')."""
    types = kinds()
    if kind not in types:
        raise RegistryError(f"unknown referrer kind {kind!r}; one of {', '.join(KINDS)}")
    size = path.stat().st_size
    if size > MAX_REFERRER_FILE_BYTES:
        raise TooLargeError(f"{path} is {size} bytes, more than the {MAX_REFERRER_FILE_BYTES} bytes a referrer "
                            "may hold")
    data = path.read_bytes()
    return attach_bytes(client, subject, data, types[kind], title=path.name, annotations=annotations)


def register_referrer(client: RegistryClient, repository: str, subject: Mapping[str, Any],
                      descriptor: Mapping[str, Any]) -> str:
    """Add ``descriptor`` to the referrers tag of ``subject`` (read, add if absent, write back).

    Returns the tag. Registries without conditional writes cannot stop two clients from
    updating the same list at the same moment; the later write wins (documented in docs/oci.md).
    """
    tag = fallback_tag(str(subject["digest"]))
    manifests = _tag_index(client, repository, tag)
    if any(m.get("digest") == descriptor["digest"] for m in manifests):
        return tag
    manifests.append(dict(descriptor))
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}
    data = json.dumps(index, sort_keys=True, separators=(",", ":")).encode("utf-8")
    client.put_manifest(repository, tag, data, OCI_INDEX)
    return tag


def _tag_index(client: RegistryClient, repository: str, tag: str) -> list[dict[str, Any]]:
    try:
        fetched = client.get_manifest(repository, tag, accept=(OCI_INDEX,))
    except NotFoundError:
        return []
    try:
        index = json.loads(fetched.data)
    except ValueError:
        raise IntegrityError(f"the referrers tag {tag!r} in {repository} is not JSON") from None
    if not isinstance(index, dict) or not isinstance(index.get("manifests"), list) or (
            index.get("mediaType", OCI_INDEX) != OCI_INDEX):
        # distribution-spec: a referrers tag that is not an image index is a failure, not a reset.
        raise RegistryError(f"the referrers tag {tag!r} in {repository} does not hold an image index; "
                            "refusing to overwrite it")
    return [m for m in index["manifests"] if isinstance(m, dict)]


def discover(client: RegistryClient, subject: Reference, artifact_type: str | None = None) -> tuple[str, list[Referrer], str]:
    """The referrers of ``subject``: (subject digest, referrers sorted by type and digest, source).

    ``source`` is 'api' when the registry's Referrers API answered, 'tag' for the fallback.
    """
    if subject.digest is not None:
        digest = subject.digest
    else:
        digest = client.get_manifest(subject.repository, subject.reference).digest
    listed = client.referrers_api(subject.repository, digest, artifact_type)
    source = "api"
    if listed is None:
        source = "tag"
        listed = _tag_index(client, subject.repository, fallback_tag(digest))
    found = [Referrer.from_descriptor(d) for d in listed]
    if artifact_type:
        # The API may ignore the filter (no OCI-Filters-Applied); the tag list is never filtered.
        found = [r for r in found if r.artifact_type == artifact_type]
    unique = {r.digest: r for r in found}
    return digest, sorted(unique.values(), key=lambda r: (r.artifact_type or "", r.digest)), source


def _sha256(data: bytes) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()
