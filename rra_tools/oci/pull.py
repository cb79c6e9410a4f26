"""Pull an artifact from a registry: into a verified OCI image layout, or unpacked.

Nothing fetched is trusted before it is verified: the manifest against the requested digest (or
the registry's Docker-Content-Digest for a tag) within a size cap, the config within the same
cap, every layer streamed to disk while hashed and renamed into place only when size and digest
match. The layout is assembled in a temporary directory and renamed into place. ``pull``
instead unpacks each layer as it arrives (the unpacker hashes and bounds the blob as it
streams, as it does for a layout on disk) into a temporary directory that becomes the output
only when every digest matched; a connection lost mid-blob makes it fall back to fetching a
verified layout first. Either way a failed pull leaves nothing behind.

Before any layer is downloaded, ``pull`` checks that the manifest is an RRA's (its
``artifactType``) and that what its config declares fits the :class:`UnpackLimits` (64 GiB and
1,000,000 entries by default) and the free space next to the output: a small layer that
honestly expands to terabytes is refused before it costs a byte of disk. The declared sizes are
binding: unpacking refuses a layer as soon as it yields more than its config says.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from .errors import DocumentTooLarge, MediaTypeError, OCIError
from .layout import Descriptor, blob_path, init_layout, write_index
from .mediatypes import (
    ANNOTATION_LAYER_ROLE,
    ANNOTATION_REF_NAME,
    ARTIFACT_TYPE,
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    MAX_CONFIG_BYTES,
    MAX_MANIFEST_BYTES,
)
from .registry import (
    BlobStream,
    Fetched,
    MalformedError,
    Progress,
    Reference,
    RegistryClient,
    RegistryError,
    StreamBroken,
)

if TYPE_CHECKING:
    from ..validate.config import Config
    from ..validate.result import ValidationResult
    from .config import ArtifactConfig
    from .unpack import UnpackLimits

__all__ = ["DEFAULT_MAX_ENTRIES", "DEFAULT_MAX_UNPACKED_BYTES", "PullResult", "check_unpackable", "fetch_layout",
           "pull", "role_of", "validate_remote"]

#: What ``pull`` unpacks at most by default: the sum of the layers' uncompressed sizes.
DEFAULT_MAX_UNPACKED_BYTES = 64 * 1024 ** 3
#: ... and the number of tar entries.
DEFAULT_MAX_ENTRIES = 1_000_000

#: Called with the manifest and the verified config bytes, before any layer is fetched.
Vet = Callable[[dict[str, Any], bytes], None]


@dataclass(frozen=True)
class PullResult:
    """What was fetched and where it went."""

    reference: Reference
    digest: str
    manifest: dict[str, Any]
    layout: Path | None = None
    output: Path | None = None
    blobs: list[str] = field(default_factory=list)
    bytes: int = 0
    roles: list[str] = field(default_factory=list)


def role_of(layer: dict[str, Any]) -> str | None:
    """The role annotation of a layer descriptor, if it has one."""
    value = (layer.get("annotations") or {}).get(ANNOTATION_LAYER_ROLE)
    return value if isinstance(value, str) else None


def fetch_layout(source: Reference, layout: Path, client: RegistryClient, *, roles: Iterable[str] | None = None,
                 max_manifest_bytes: int | None = None, max_config_bytes: int | None = None,
                 vet: Vet | None = None) -> PullResult:
    """Fetch ``source`` (manifest, config, layers — only the layers of ``roles`` when given) into a
    new OCI image layout at ``layout``, which must not exist. All or nothing.

    ``vet(manifest, config_bytes)`` may refuse the artifact (by raising) before any layer is
    fetched."""
    if layout.exists():
        raise RegistryError(f"{layout} exists; pull into a new directory")
    layout.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{layout.name}.part-", dir=layout.parent))
    try:
        result = _fetch_into(source, scratch, client, roles, max_manifest_bytes or MAX_MANIFEST_BYTES,
                             max_config_bytes or MAX_CONFIG_BYTES, vet)
        try:
            os.rename(scratch, layout)
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                raise
            raise RegistryError(f"{layout} appeared while pulling (another pull into the same place?); "
                                "it was left as it is") from None
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return PullResult(result.reference, result.digest, result.manifest, layout, None, result.blobs, result.bytes,
                      result.roles)


@dataclass(frozen=True)
class _Head:
    """A fetched manifest (checked), the layers chosen from it and its config's bytes (checked)."""

    fetched: Fetched
    manifest: dict[str, Any]
    layers: list[dict[str, Any]]
    config_data: bytes


def _fetch_head(source: Reference, client: RegistryClient, roles: Iterable[str] | None, cap: int,
                config_cap: int) -> _Head:
    fetched = client.get_manifest(source.repository, source.reference, max_bytes=cap)
    try:
        manifest = json.loads(fetched.data)
    except ValueError:
        raise MalformedError(f"manifest {fetched.digest} is not JSON") from None
    if fetched.media_type == INDEX_MEDIA_TYPE or "manifests" in manifest:
        choices = ", ".join(str(m.get("digest")) for m in manifest.get("manifests", [])[:5] if isinstance(m, dict))
        raise RegistryError(f"{source} is an image index, not an artifact manifest; pull one of its manifests "
                            f"by digest ({choices})")
    config = manifest.get("config")
    layers = manifest.get("layers")
    if not isinstance(config, dict) or not isinstance(layers, list) or not all(isinstance(x, dict) for x in layers):
        raise MalformedError(f"manifest {fetched.digest} has no config and layers")
    try:
        # Checked descriptors only: a digest becomes a file name, a size a read limit.
        Descriptor.from_json(config, f"manifest {fetched.digest} config")
        for i, layer in enumerate(layers):
            Descriptor.from_json(layer, f"manifest {fetched.digest} layers[{i}]")
    except OCIError as exc:
        raise MalformedError(exc.message) from None
    wanted = None if roles is None else set(roles)
    if wanted is not None:
        present = {role_of(layer) for layer in layers}
        unknown = sorted(wanted - {r for r in present if r})
        if unknown:
            have = ", ".join(sorted(r for r in present if r)) or "none"
            raise RegistryError(f"{source} has no layer with role {', '.join(map(repr, unknown))} (roles: {have})")
        layers = [layer for layer in layers if role_of(layer) in wanted]
    config_data = client.fetch_blob_bytes(source.repository, str(config["digest"]), int(config["size"]),
                                          config_cap)
    return _Head(fetched, manifest, layers, config_data)


def _result(source: Reference, head: _Head, layout: Path | None, output: Path | None) -> PullResult:
    sizes = {str(layer["digest"]): int(layer["size"]) for layer in head.layers}
    return PullResult(source, head.fetched.digest, head.manifest, layout, output,
                      [head.fetched.digest, str(head.manifest["config"]["digest"]), *sizes], sum(sizes.values()),
                      sorted({r for r in (role_of(x) for x in head.layers) if r}))


def _fetch_into(source: Reference, layout: Path, client: RegistryClient, roles: Iterable[str] | None,
                cap: int, config_cap: int, vet: Vet | None) -> PullResult:
    head = _fetch_head(source, client, roles, cap, config_cap)
    fetched, manifest = head.fetched, head.manifest
    init_layout(layout)
    _write_small(layout, fetched.digest, fetched.data)
    _write_small(layout, str(manifest["config"]["digest"]), head.config_data)
    if vet is not None:
        vet(manifest, head.config_data)
    todo = {str(layer["digest"]): int(layer["size"]) for layer in head.layers}
    _download_all(layout, source.repository, todo, client)
    media_type = fetched.media_type or MANIFEST_MEDIA_TYPE
    descriptor: dict[str, Any] = {"mediaType": media_type, "digest": fetched.digest, "size": len(fetched.data)}
    if source.tag:
        descriptor["annotations"] = {ANNOTATION_REF_NAME: source.tag}
    if manifest.get("artifactType"):
        descriptor["artifactType"] = manifest["artifactType"]
    write_index(layout, {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": [descriptor]})
    return _result(source, head, layout, None)


def _write_small(layout: Path, digest: str, data: bytes) -> None:
    path = blob_path(layout, digest)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _download_all(layout: Path, repository: str, blobs: dict[str, int], client: RegistryClient) -> None:
    for digest in blobs:
        blob_path(layout, digest).parent.mkdir(parents=True, exist_ok=True)
    client.transfer_all(client.download_blob, repository, blobs, lambda digest: blob_path(layout, digest))


def pull(source: Reference, output: Path, client: RegistryClient, *, roles: Iterable[str] | None = None,
         unpack: Callable[[Path, dict[str, Any], Path, list[str] | None], object] | None = None,
         limits: UnpackLimits | None = None) -> PullResult:
    """Fetch ``source`` and unpack its layers into the new directory ``output``; all or nothing.

    Before a layer is fetched, :func:`check_unpackable` refuses a manifest that is no RRA's and
    declared sizes beyond ``limits`` (default: 64 GiB, 1,000,000 entries) or the free space.
    By default each layer is unpacked as it streams in (:func:`rra_tools.oci.unpack.unpack_layers`
    with ``limits``: every tar entry checked, every digest verified, its work renamed into place
    only at the end); a connection lost mid-blob falls back to fetching a verified layout first.
    ``unpack(layout, manifest, output, roles)``, when given, is called on such a layout instead.
    """
    from .unpack import UnpackLimits

    limits = limits or UnpackLimits(max_total_bytes=DEFAULT_MAX_UNPACKED_BYTES, max_entries=DEFAULT_MAX_ENTRIES)
    wanted = None if roles is None else sorted(set(roles))
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise RegistryError(f"{output} exists and is not empty; pull into a new directory")
    parent = output.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    if unpack is None:
        try:
            return _pull_streamed(source, output, client, wanted, limits, parent)
        except StreamBroken as exc:
            # Nothing is left of the streamed attempt. Whole blobs are retried one by one.
            client.emit(Progress("retry", "", 1, 2, f"{exc}; fetching every blob whole, then unpacking"))
    scratch = Path(tempfile.mkdtemp(prefix=f".{output.name}.pull-", dir=parent))
    try:
        layout = scratch / "layout"

        def vet(manifest: dict[str, Any], config: bytes) -> None:
            from .config import ArtifactConfig

            parsed = ArtifactConfig.parse(config, str(manifest["config"]["digest"]))
            check_unpackable(manifest, parsed, wanted, limits, parent, where=str(source))

        result = fetch_layout(source, layout, client, roles=roles, vet=vet)
        if unpack is not None:
            unpack(layout, result.manifest, output, wanted)
        else:
            from .unpack import unpack_layers

            # fetch_layout has just checked every blob, in a scratch directory of our own.
            unpack_layers(layout, result.manifest, output, only_roles=wanted, limits=limits, blobs_verified=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return PullResult(result.reference, result.digest, result.manifest, None, output, result.blobs, result.bytes,
                      result.roles)


def _pull_streamed(source: Reference, output: Path, client: RegistryClient, roles: list[str] | None,
                   limits: UnpackLimits, parent: Path) -> PullResult:
    """Unpack each layer as it arrives: one pass over the bytes, no layout written and read
    back. The unpacker hashes each blob as it reads it and removes its work unless every size
    and digest matches, as it does for a layout on disk."""
    from .config import ArtifactConfig
    from .unpack import unpack_layers

    head = _fetch_head(source, client, roles, MAX_MANIFEST_BYTES, MAX_CONFIG_BYTES)
    config = ArtifactConfig.parse(head.config_data, str(head.manifest["config"]["digest"]))
    check_unpackable(head.manifest, config, roles, limits, parent, where=str(source), streamed=True)

    def opener(descriptor: Descriptor) -> BinaryIO:
        stream: BlobStream = client.open_blob(source.repository, descriptor.digest, descriptor.size)
        return cast(BinaryIO, stream)  # unpacking uses only read() and the with block, which it has

    unpack_layers(opener, head.manifest, output, only_roles=roles, limits=limits, config=config)
    return _result(source, head, None, output)


def check_unpackable(manifest: Mapping[str, Any], config: ArtifactConfig, roles: Collection[str] | None,
                     limits: UnpackLimits, parent: Path, *, where: str, streamed: bool = False) -> None:
    """Refuse, before anything is unpacked (or fetched), an artifact that is no RRA or whose
    layers (of ``roles``) declare more than ``limits.max_total_bytes`` or than ``parent``'s free
    space, or a compressed layer declaring more than ``limits.max_ratio`` times its size
    (:func:`~rra_tools.oci.unpack.check_ratio`).

    MediaTypeError for the artifact type, DocumentTooLarge for the sizes; ``where`` names the source.
    """
    from .config import match_layers
    from .unpack import check_ratio

    kind = manifest.get("artifactType")
    if kind != ARTIFACT_TYPE:
        raise MediaTypeError(f"{where} is not an RRA artifact: its artifactType is {kind!r}, not {ARTIFACT_TYPE!r}; "
                             "'rra pull --layout' fetches any artifact as it is")
    chosen = [(d, e) for d, e, _ in match_layers(manifest, config)
              if roles is None or e.role in roles]
    unpacked = sum(e.size for _, e in chosen)
    if limits.max_total_bytes is not None and unpacked > limits.max_total_bytes:
        raise DocumentTooLarge(f"{where} unpacks to {unpacked:,} bytes, more than the limit of "
                               f"{limits.max_total_bytes:,}; raise it with --max-unpacked-bytes if you expect this")
    check_ratio([(d, e, c) for d, e, c in match_layers(manifest, config) if roles is None or e.role in roles],
                 limits, where)
    # Unless streamed, the blobs land in a temporary layout beside the output while the files are written.
    needed = unpacked + (0 if streamed else sum(d.size for d, _ in chosen))
    try:
        free = shutil.disk_usage(parent).free
    except OSError:
        return
    if needed > free:
        raise DocumentTooLarge(f"{where} needs {needed:,} bytes (its layers and their unpacked files) but "
                               f"{parent} has {free:,} bytes free")


def validate_remote(target: str, *, config: Config | None = None, time_budget_s: float | None = None,
                    client: RegistryClient | None = None) -> tuple[ValidationResult, Reference | None]:
    """Validate the packed RRA at ``oci://HOST/REPO:TAG`` (or ``@sha256:...``): fetch it into a
    temporary layout (size caps, every digest checked) and validate that like ``oci-layout:``.

    Returns the result and the manifest pinned by digest (None when nothing could be fetched).
    A blob that fails its digest or size check, a document over its cap or a malformed manifest
    is a finding (RRA803 / RRA804 / RRA805 / RRA801); an unreachable registry or a missing
    manifest makes the input unreadable (RRA001).
    """
    from ..validate.config import Config as DefaultConfig
    from .validation import validate_oci_artifact
    from .layout import layout_opener, read_index, select_manifest

    config = config or DefaultConfig()
    try:
        source = Reference.parse(target)
        client = client or RegistryClient(source.registry)
        with tempfile.TemporaryDirectory(prefix="rra-validate-oci-") as work:
            layout = Path(work) / "layout"
            fetched = fetch_layout(source, layout, client)
            _, descriptor = select_manifest(read_index(layout))
            result = validate_oci_artifact(layout_opener(layout), descriptor, config=config, input_name=target,
                                           file_base=target, time_budget_s=time_budget_s)
    except RegistryError as exc:
        return _failed(target, config, exc), None
    except OCIError as exc:  # the fetched layout itself is unreadable (index.json, no manifest)
        return _failed(target, config, MalformedError(exc.message)), None
    return result, source.with_digest(fetched.digest)


def _failed(target: str, config: Config, error: RegistryError) -> ValidationResult:
    from ..io.errors import Problem
    from ..validate.engine import diagnostic_from_problem
    from ..validate.result import ValidationResult as Result

    unreadable = error.code == "RRA001"
    result = Result(input=target, unreadable=unreadable)
    hint = ("check the reference and that the registry is reachable" if unreadable
            else "the registry holds content that does not match its descriptors; push the artifact again")
    result.diagnostics.append(diagnostic_from_problem(Problem(error.code, str(error), hint=hint), target, config))
    return result
