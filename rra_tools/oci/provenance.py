"""Provenance of an artifact's results: an in-toto Statement v1 with a SLSA Provenance v1 predicate.

The statement is made from the artifact's run records (what ran, with which arguments, parameters
and seeds, when, on what) and its manifest (the code commit and patches, the lock, the container
image and the datasets it depends on). Its subject is the packed artifact's manifest digest, the
one ``rra push`` publishes, or the artifact's files. The output depends only on those inputs:
no clock, no host name, keys sorted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ExitStatus
from .errors import OCILayerError

__all__ = [
    "BUILDER_ID",
    "BUILD_TYPE",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "ProvenanceError",
    "Subject",
    "build_statement",
    "check_statement",
    "statement_bytes",
    "subjects_from_files",
]

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
#: What the build is: launchers of an RRA run from its run records (documented in docs/oci.md).
BUILD_TYPE = "https://github.com/rra-standard/rra-tools/blob/main/docs/oci.md#build-type-rra-run-v1"
#: Who ran it: ``rra run`` (local or container executor), as the run records tell.
BUILDER_ID = "https://github.com/rra-standard/rra-tools/blob/main/docs/oci.md#builder-rra-run"

_HEX = re.compile(r"^[0-9a-f]+$")
_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
_IMAGE_DIGEST = re.compile(r"@sha256:([0-9a-f]{64})$")


class ProvenanceError(OCILayerError):
    """The statement cannot be made: no records, an unreadable record, an unusable artifact."""

    exit_status = ExitStatus.FAILED


@dataclass(frozen=True)
class Subject:
    """What the statement is about: a name and its digests (algorithm -> lower-case hex)."""

    name: str
    digest: Mapping[str, str]

    @classmethod
    def manifest(cls, name: str, digest: str) -> Subject:
        """The packed artifact, by its OCI manifest digest ('sha256:<hex>')."""
        algorithm, _, hexpart = digest.partition(":")
        return cls(name, {algorithm: hexpart})

    def to_json(self) -> dict[str, Any]:
        """The ResourceDescriptor of the subject."""
        return {"name": self.name, "digest": dict(sorted(self.digest.items()))}


def subjects_from_files(root: Path, paths: Iterable[Path]) -> list[Subject]:
    """One subject per file (relative POSIX path, SHA-256), sorted by name."""
    from ..io.digest import hash_files

    files = sorted(set(paths))
    digests = hash_files(files)
    out = []
    for path in files:
        value = digests[path]
        if isinstance(value, OSError):
            raise ProvenanceError(f"cannot read {path}: {value.strerror or value}")
        out.append(Subject(path.relative_to(root).as_posix(), {"sha256": value}))
    return sorted(out, key=lambda s: s.name)


def _records(root: Path, runs: Path) -> list[tuple[str, Mapping[str, Any], str]]:
    """(path relative to root, record, sha256 of the file) of every run record, in path order."""
    from ..io.read.run_records import read_run_record

    if not runs.is_dir():
        return []
    out = []
    problems = []
    for path in sorted(runs.rglob("*.json")):
        if path.name.startswith("."):
            continue  # records are written through hidden temporary files
        record = read_run_record(root, path)
        if isinstance(record, str):
            problems.append(record)
            continue
        out.append((path.relative_to(root).as_posix(), record, hashlib.sha256(path.read_bytes()).hexdigest()))
    if problems:
        raise ProvenanceError("; ".join(problems))
    return out


def build_statement(artifact: Path, subjects: list[Subject]) -> dict[str, Any]:
    """The in-toto statement for the artifact directory ``artifact`` about ``subjects``."""
    from .. import __version__
    from ..env.artifact import manifest_model
    from ..io.artifact import ArtifactError, load_artifact

    if not subjects:
        raise ProvenanceError("a statement needs at least one subject")
    try:
        loaded = load_artifact(artifact)
        runs_dir = loaded.runs_dir
    except ArtifactError as exc:
        raise ProvenanceError(str(exc)) from None
    records = _records(loaded.root, runs_dir)
    if not records:
        rel = runs_dir.relative_to(loaded.root).as_posix() if runs_dir.is_relative_to(loaded.root) else runs_dir
        raise ProvenanceError(f"no run records under {str(rel)!r}; run the launchers first ('rra run')")
    # The full model (code, data): the run path's lighter view leaves those out.
    try:
        manifest = manifest_model(loaded)
    except ArtifactError as exc:
        raise ProvenanceError(str(exc)) from None
    records.sort(key=lambda item: (str(item[1].get("launcher")), str(item[1].get("started", "")), item[0]))

    runs = []
    executors: set[str] = set()
    hosts: dict[str, dict[str, Any]] = {}
    byproducts = []
    for rel, record, sha in records:
        run: dict[str, Any] = {"launcher": record.get("launcher"), "record": rel}
        for key in ("argv", "cwd", "parameters", "seed", "artifact_digest", "status", "exit_status"):
            if key in record:
                run[key] = record[key]
        runs.append(run)
        if isinstance(record.get("executor"), str):
            executors.add(record["executor"])
        host = record.get("host")
        if isinstance(host, Mapping):
            fingerprint = {k: host[k] for k in ("os", "machine", "python", "packages_digest") if k in host}
            gpus = host.get("gpus")
            if isinstance(gpus, list):
                fingerprint["gpus"] = sorted(str(g.get("model")) for g in gpus if isinstance(g, Mapping))
            hosts[json.dumps(fingerprint, sort_keys=True)] = fingerprint
        byproducts.append({"name": rel, "digest": {"sha256": sha}, "mediaType": "application/json"})
        for output in record.get("outputs") or []:
            if isinstance(output, Mapping) and isinstance(output.get("sha256"), str):
                byproducts.append({"name": str(output.get("path")), "digest": {"sha256": output["sha256"]},
                                   "annotations": {"launcher": str(record.get("launcher")), "record": rel}})

    dependencies: list[dict[str, Any]] = []
    code = manifest.code
    if code.upstream is not None:
        upstream: dict[str, Any] = {"name": "code", "digest": {"gitCommit": code.upstream.commit}}
        if "://" in code.upstream.url:
            upstream["uri"] = f"git+{code.upstream.url}@{code.upstream.commit}"
        else:  # scp-like 'git@host:path' is not a URI
            upstream["annotations"] = {"url": code.upstream.url}
        dependencies.append(upstream)
    for patch in code.patches:
        dependencies.append({"name": patch.path, "digest": {"sha256": patch.sha256},
                             "annotations": {"role": "patch"}})
    environment = manifest.environment
    if environment.lock is not None:
        dependencies.append({"name": environment.lock.path, "digest": {"sha256": environment.lock.sha256},
                             "annotations": {"role": "lock", "format": _plain(environment.lock.format)}})
    if environment.image:
        uri = environment.image if "://" in environment.image else f"oci://{environment.image}"
        image: dict[str, Any] = {"name": "image", "uri": uri, "annotations": {"role": "image"}}
        pinned = _IMAGE_DIGEST.search(environment.image)
        if pinned:
            image["digest"] = {"sha256": pinned.group(1)}
        dependencies.append(image)
    for source in manifest.data:
        for item in source.files:
            entry: dict[str, Any] = {"name": item.path, "digest": {"sha256": item.sha256},
                                     "annotations": {"role": "data", "dataset": source.id,
                                                     "license": source.license, "access": _plain(source.access)}}
            if source.url:
                entry["uri"] = source.url
            dependencies.append(entry)

    started = sorted(str(r.get("started")) for _, r, _ in records if isinstance(r.get("started"), str))
    ended = sorted(str(r.get("ended")) for _, r, _ in records if isinstance(r.get("ended"), str))
    metadata: dict[str, Any] = {}
    if started:
        metadata["startedOn"] = started[0]
    if ended:
        metadata["finishedOn"] = ended[-1]
    return {
        "_type": STATEMENT_TYPE,
        "subject": [s.to_json() for s in subjects],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "artifact": {"id": manifest.id, "manifest_digest": {"sha256": loaded.digest}},
                    "runs": runs,
                },
                "internalParameters": {
                    "executors": sorted(executors),
                    "hosts": [hosts[k] for k in sorted(hosts)],
                },
                "resolvedDependencies": dependencies,
            },
            "runDetails": {
                "builder": {"id": BUILDER_ID, "version": {"rra-tools": __version__}},
                "metadata": metadata,
                "byproducts": byproducts,
            },
        },
    }


def statement_bytes(statement: Mapping[str, Any]) -> bytes:
    """The file form: JSON, sorted keys, two-space indent, UTF-8, final newline."""
    return (json.dumps(statement, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def _plain(value: object) -> str:
    from enum import Enum

    return str(value.value) if isinstance(value, Enum) else str(value)


def check_statement(data: Any) -> list[str]:
    """Structural problems of an in-toto Statement v1 with a SLSA Provenance v1 predicate; empty
    when it has every required field with the right types (no network schemas involved).

    >>> check_statement({"_type": "x"})[0]
    "_type is 'x'; expected 'https://in-toto.io/Statement/v1'"
    """
    problems: list[str] = []
    if not isinstance(data, Mapping):
        return ["the statement is not a JSON object"]
    if data.get("_type") != STATEMENT_TYPE:
        problems.append(f"_type is {data.get('_type')!r}; expected {STATEMENT_TYPE!r}")
    subjects = data.get("subject")
    if not isinstance(subjects, list) or not subjects:
        problems.append("subject is not a non-empty list")
    else:
        for i, subject in enumerate(subjects):
            problems += _check_descriptor(subject, f"subject[{i}]", need_digest=True)
    if data.get("predicateType") != PREDICATE_TYPE:
        problems.append(f"predicateType is {data.get('predicateType')!r}; expected {PREDICATE_TYPE!r}")
    predicate = data.get("predicate")
    if not isinstance(predicate, Mapping):
        return problems + ["predicate is not an object"]
    build = predicate.get("buildDefinition")
    if not isinstance(build, Mapping):
        problems.append("predicate.buildDefinition is not an object")
    else:
        if not _is_uri(build.get("buildType")):
            problems.append("predicate.buildDefinition.buildType is not a URI")
        if not isinstance(build.get("externalParameters"), Mapping):
            problems.append("predicate.buildDefinition.externalParameters is not an object")
        if "internalParameters" in build and not isinstance(build["internalParameters"], Mapping):
            problems.append("predicate.buildDefinition.internalParameters is not an object")
        deps = build.get("resolvedDependencies", [])
        if not isinstance(deps, list):
            problems.append("predicate.buildDefinition.resolvedDependencies is not a list")
        else:
            for i, dep in enumerate(deps):
                problems += _check_descriptor(dep, f"predicate.buildDefinition.resolvedDependencies[{i}]")
    details = predicate.get("runDetails")
    if not isinstance(details, Mapping):
        problems.append("predicate.runDetails is not an object")
    else:
        builder = details.get("builder")
        if not isinstance(builder, Mapping) or not _is_uri(builder.get("id")):
            problems.append("predicate.runDetails.builder.id is not a URI")
        metadata = details.get("metadata", {})
        if not isinstance(metadata, Mapping):
            problems.append("predicate.runDetails.metadata is not an object")
        else:
            for key in ("startedOn", "finishedOn"):
                if key in metadata and not (isinstance(metadata[key], str) and _RFC3339.match(metadata[key])):
                    problems.append(f"predicate.runDetails.metadata.{key} is not an RFC 3339 timestamp")
        products = details.get("byproducts", [])
        if not isinstance(products, list):
            problems.append("predicate.runDetails.byproducts is not a list")
        else:
            for i, product in enumerate(products):
                problems += _check_descriptor(product, f"predicate.runDetails.byproducts[{i}]")
    return problems


def _is_uri(value: Any) -> bool:
    return isinstance(value, str) and re.match(r"^[a-z][a-z0-9+.-]*:\S+$", value) is not None


def _check_descriptor(value: Any, where: str, need_digest: bool = False) -> list[str]:
    """A ResourceDescriptor has at least one of uri, digest, content; digests are hex strings."""
    if not isinstance(value, Mapping):
        return [f"{where} is not an object"]
    problems = []
    if not any(k in value for k in ("uri", "digest", "content")):
        problems.append(f"{where} has none of uri, digest, content")
    if need_digest and not isinstance(value.get("name"), str):
        problems.append(f"{where}.name is not a string")
    digest = value.get("digest")
    if need_digest and not digest:
        problems.append(f"{where}.digest is missing")
    if digest is not None:
        if not isinstance(digest, Mapping) or not digest:
            problems.append(f"{where}.digest is not a non-empty object")
        else:
            for algorithm, hexpart in digest.items():
                if ((algorithm == "gitCommit" or algorithm.startswith("sha"))
                        and not (isinstance(hexpart, str) and _HEX.match(hexpart))):
                    problems.append(f"{where}.digest.{algorithm} is not lower-case hex")
    if "uri" in value and not _is_uri(value["uri"]):
        problems.append(f"{where}.uri is not a URI")
    return problems
