"""A CycloneDX 1.6 SBOM of an artifact, built with cyclonedx-python-lib; byte-identical across runs.

Serial number: ``urn:uuid`` = uuid5 of the artifact digest (SHA-256 of the manifest's canonical
JSON, which pins the lock, patches and data by their digests). Timestamp: ``SOURCE_DATE_EPOCH``
when set, else the review date, else the Unix epoch.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..io.artifact import Artifact, ArtifactError
from .artifact import manifest_model
from .locks import LockFile, read_lock

__all__ = ["SBOM_NAMESPACE", "build_sbom", "sbom_for", "sbom_timestamp", "tree_digest"]

#: Namespace of the uuid5 serial numbers.
SBOM_NAMESPACE = uuid.UUID("6f1c2f64-5d0e-5b63-9a77-2b7c1c3e5a10")

_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache",
                        ".tox", "node_modules", "results"})


def sbom_timestamp(artifact: Artifact) -> datetime:
    """SOURCE_DATE_EPOCH, else the review date, else 1970-01-01T00:00:00Z."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip().isdigit():
        return datetime.fromtimestamp(int(epoch), tz=timezone.utc)
    review = manifest_model(artifact).review
    if review is not None and review.date:
        return datetime.strptime(review.date, "%Y-%m-%d").replace(tzinfo=timezone.utc)
    return datetime.fromtimestamp(0, tz=timezone.utc)


def tree_digest(root: Path, exclude: frozenset[Path] = frozenset(), *, build_outputs: bool = False) -> str:
    """SHA-256 over the sorted ``path NUL sha256 LF`` lines of the regular files under ``root``
    (hidden directories, virtual environments, caches, ``results/`` and the ``exclude``d
    directories and files left out, since runs write there; symlinks not followed). With
    ``build_outputs``, also ``build/``, ``dist/`` and ``*.egg-info/``, which building a Python
    package from its tree writes there."""
    from ..io.digest import hash_files

    def skipped(directory: str, name: str) -> bool:
        return (name in _SKIP_DIRS or name.startswith(".") or Path(directory, name) in exclude
                or (build_outputs and (name in ("build", "dist") or name.endswith(".egg-info"))))

    files: list[Path] = []
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not skipped(directory, d))
        for name in filenames:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink() and path not in exclude:
                files.append(path)
    digests = hash_files(files)
    lines = []
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        value = digests[path]
        if isinstance(value, str):
            lines.append(f"{path.relative_to(root).as_posix()}\0{value}\n")
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def _refuse_placeholders(artifact: Artifact) -> None:
    """ArtifactError when a license the SBOM would publish is placeholder text (RRA214)."""
    from ..validate.rules.unfinished import is_placeholder

    licenses = [("code.license", manifest_model(artifact).code.license)]
    licenses += [(f"data[{i}].license", source.license) for i, source in enumerate(manifest_model(artifact).data)]
    for where, value in licenses:
        if is_placeholder(value):
            raise ArtifactError(f"{artifact.manifest_path}: {where} is a placeholder ({value!r}), not a license; "
                                "fill it in before writing an SBOM ('rra validate' reports it as RRA214)")


def build_sbom(artifact: Artifact, lock: LockFile | None = None) -> str:
    """The artifact's SBOM as CycloneDX 1.6 JSON text (indent 2, trailing newline); ArtifactError
    when a license is still placeholder text."""
    _refuse_placeholders(artifact)
    from cyclonedx.model import ExternalReference, ExternalReferenceType, HashAlgorithm, HashType, Property, XsUri
    from cyclonedx.model.bom import Bom, BomMetaData
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.model.license import DisjunctiveLicense, LicenseExpression
    from cyclonedx.output.json import JsonV1Dot6
    from packageurl import PackageURL

    from .. import __version__

    manifest = manifest_model(artifact)
    digest = artifact.digest

    def sha256(value: str) -> HashType:
        return HashType(alg=HashAlgorithm.SHA_256, content=value)

    root = Component(
        type=ComponentType.APPLICATION, name=manifest.id, bom_ref=f"rra:{manifest.id}",
        description=manifest.title, hashes=[sha256(digest)],
        properties=[Property(name="rra:digest", value=f"sha256:{digest} (manifest canonical JSON)"),
                    Property(name="rra:rra_version", value=manifest.rra_version)],
    )
    components: list[Component] = []

    # The code: upstream commit (+ patches) and/or the shipped tree.
    code = manifest.code
    code_props = [Property(name="rra:patch", value=f"{i + 1:04d} {p.path} sha256:{p.sha256}")
                  for i, p in enumerate(code.patches)]
    code_refs = []
    code_hashes = []
    version = None
    if code.upstream is not None:
        version = code.upstream.commit
        code_refs.append(ExternalReference(type=ExternalReferenceType.VCS, url=XsUri(code.upstream.url),
                                           comment=f"commit {code.upstream.commit}"))
    if code.tree is not None:
        tree_root = (artifact.root / code.tree.path).resolve()
        tree = tree_digest(tree_root, frozenset({(artifact.root / manifest.evidence.run_records).resolve()}))
        code_hashes.append(sha256(tree))
        code_props.append(Property(name="rra:tree", value=f"{code.tree.path} sha256:{tree} (file listing digest)"))
        version = version or f"tree-sha256:{tree[:16]}"
    code_component = Component(
        type=ComponentType.APPLICATION, name=f"{manifest.id}-code", bom_ref="rra:code", version=version,
        licenses=[LicenseExpression(value=code.license)], external_references=code_refs, hashes=code_hashes,
        properties=code_props,
    )
    components.append(code_component)

    # Locked packages.
    for package in _unique_packages(lock):
        ptype = "conda" if package.source == "conda" else "pypi"
        purl = PackageURL(type=ptype, name=package.name, version=package.version)
        refs = []
        hashes = []
        props: list[Property] = []
        distinct = package.hashes
        if len(distinct) == 1 and distinct[0][0] == "sha256":
            hashes.append(sha256(distinct[0][1]))
        for file in package.files:
            file_hashes = [sha256(d) for a, d in file.hashes if a == "sha256"]
            if file.url:
                refs.append(ExternalReference(type=ExternalReferenceType.DISTRIBUTION, url=XsUri(file.url),
                                              hashes=file_hashes, comment=file.name))
            elif len(distinct) > 1:
                props.extend(Property(name="rra:file-sha256", value=d) for a, d in file.hashes if a == "sha256")
        if package.marker:
            props.append(Property(name="rra:marker", value=package.marker))
        if package.source not in ("index", "conda"):
            props.append(Property(name="rra:source", value=f"{package.source} {package.location or ''}".strip()))
        if package.tree_sha256:
            # The artifact's own package, installed from its tree: the tree digest is its hash.
            hashes.append(sha256(package.tree_sha256))
            props.append(Property(name="rra:tree", value=f"sha256:{package.tree_sha256} (file listing digest)"))
        components.append(Component(
            type=ComponentType.LIBRARY, name=package.name, version=package.version, purl=purl,
            bom_ref=f"{purl.to_string()}" + (f"#{package.platform}" if package.platform else ""),
            hashes=hashes, external_references=refs, properties=props,
        ))

    # Datasets.
    for source in manifest.data:
        refs = []
        if source.url:
            refs.append(ExternalReference(type=ExternalReferenceType.DISTRIBUTION, url=XsUri(source.url)))
        if source.doi:
            refs.append(ExternalReference(type=ExternalReferenceType.OTHER, url=XsUri(f"https://doi.org/{source.doi}"),
                                          comment="DOI"))
        licenses = [] if source.license.lower() == "unknown" else [DisjunctiveLicense(name=source.license)]
        children = [Component(type=ComponentType.DATA, name=f.path, bom_ref=f"rra:data:{source.id}:{f.path}",
                              hashes=[sha256(f.sha256)],
                              properties=[Property(name="rra:size", value=str(f.size))] if f.size is not None else [])
                    for f in source.files]
        single = len(source.files) == 1
        components.append(Component(
            type=ComponentType.DATA, name=source.id, bom_ref=f"rra:data:{source.id}", description=source.title,
            hashes=[sha256(source.files[0].sha256)] if single else [], licenses=licenses,
            external_references=refs, components=[] if single else children,
            properties=[Property(name="rra:access", value=str(source.access)),
                        Property(name="rra:placed-at", value=", ".join(f.path for f in source.files))],
        ))

    # The container image, pinned by digest.
    image = manifest.environment.image
    if image:
        components.append(_image_component(image))

    bom = Bom(
        serial_number=uuid.uuid5(SBOM_NAMESPACE, digest),
        metadata=BomMetaData(component=root, timestamp=sbom_timestamp(artifact)),
        components=components,
    )
    tool = Component(type=ComponentType.APPLICATION, name="rra-tools", version=__version__, bom_ref="rra-tools")
    bom.metadata.tools.components.add(tool)
    bom.register_dependency(root, components)
    for component in components:
        if component is not code_component:
            bom.register_dependency(component, [])
    bom.register_dependency(code_component, [])
    text: str = JsonV1Dot6(bom).output_as_string(indent=2)
    return text + "\n"


def _unique_packages(lock: LockFile | None) -> list[Any]:
    if lock is None:
        return []
    seen: dict[tuple[str, str | None, str | None], Any] = {}
    for package in lock.packages:
        seen.setdefault((package.name, package.version, package.platform), package)
    return [seen[k] for k in sorted(seen, key=lambda k: (k[0], k[1] or "", k[2] or ""))]


def _image_component(image: str) -> Any:
    from cyclonedx.model import HashAlgorithm, HashType
    from cyclonedx.model.component import Component, ComponentType
    from packageurl import PackageURL

    reference, _, digest = image.partition("@")
    repository = reference
    tag = None
    last = reference.rsplit("/", 1)[-1]
    if ":" in last:
        repository, tag = reference.rsplit(":", 1)
    name = repository.rsplit("/", 1)[-1]
    qualifiers = {"repository_url": repository}
    if tag:
        qualifiers["tag"] = tag
    hashes = []
    if digest.startswith("sha256:"):
        hashes.append(HashType(alg=HashAlgorithm.SHA_256, content=digest.removeprefix("sha256:")))
    purl = PackageURL(type="oci", name=name.lower(), version=digest or None, qualifiers=qualifiers)
    return Component(type=ComponentType.CONTAINER, name=repository, version=digest or tag, purl=purl,
                     bom_ref="rra:image", hashes=hashes)


def sbom_for(artifact: Artifact) -> str:
    """Read the artifact's lock (when it names one) and build its SBOM."""
    lock_ref = artifact.manifest.environment.lock
    lock_path = artifact.lock_path()
    lock = read_lock(lock_path, str(lock_ref.format), display=lock_ref.path) if lock_ref and lock_path else None
    return build_sbom(artifact, lock)
