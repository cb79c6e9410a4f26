"""The one artifact type: an artifact directory whose manifest conforms to the published schema.

:func:`load_artifact` finds and reads the manifest through the one loader (:mod:`.read.manifest`),
checks it against the published JSON Schema and returns an :class:`Artifact`: root, manifest
file, data, digest and the plain view of what running needs (:mod:`rra_tools.model.manifest_view`, generated
from the models). ``rra run``, ``rra env``, ``rra sbom``, ``rra results`` and provenance all
start from it; semantic rules stay ``rra validate``'s business.

Parsing and the compiled schema validator cost about 30 ms of imports on every ``rra run``, so
a checked manifest is cached under ``<cache>/manifests/`` (see :mod:`.cache`), keyed by the
manifest's bytes, the schema's bytes and this package's version: an entry is a pure function
of its key, and a manifest that fails is never cached.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import ExitStatus
from ..plain import Frozen
from .errors import IOLayerError, InputError, LoadError
from ..model.manifest_view import ManifestSpec, read_manifest
from .paths import lexical_issue

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Artifact", "ArtifactError", "checked_manifest", "load_artifact"]


class ArtifactError(IOLayerError):
    """The artifact or its manifest cannot be used: missing, unreadable, not a valid manifest,
    or a path in it leading out of the artifact."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class Artifact(Frozen):
    """A loaded artifact: root directory, manifest file, data (schema-valid) and digest.

    ``digest`` is the SHA-256 of the manifest's canonical JSON (sorted keys, compact
    separators, UTF-8): the artifact digest run records, SBOMs and provenance carry. ``memo``
    holds views that higher layers derive from the data once and keep with the artifact (e.g.
    the pydantic model, :func:`rra_tools.env.artifact.manifest_model`), by name; it is neither
    shown nor compared.
    """

    __slots__ = ("root", "manifest_path", "data", "digest", "memo", "_manifest")
    _unshown = _uncompared = ("memo", "_manifest")

    def __init__(self, root: Path, manifest_path: Path, data: Mapping[str, Any], digest: str,
                 memo: dict[str, Any] | None = None) -> None:
        self.root, self.manifest_path, self.data, self.digest = root, manifest_path, data, digest
        self.memo: dict[str, Any] = {} if memo is None else memo
        self._manifest: ManifestSpec | None = None

    @property
    def manifest(self) -> ManifestSpec:
        """What running needs, as plain record classes with the models' names and defaults (read once)."""
        if self._manifest is None:
            self._manifest = read_manifest(self.data)
        return self._manifest

    def inside(self, rel: str) -> Path:
        """``rel`` under the artifact root; ArtifactError when it leads out of the root."""
        from .paths import PathIssue, resolve_inside

        resolved = resolve_inside(self.root, rel, kind="any")
        if resolved.issue in (PathIssue.ABSOLUTE, PathIssue.PARENT, PathIssue.SYMLINK_ESCAPE):
            raise ArtifactError(f"path {rel!r} leads out of the artifact ({resolved.issue.value})")
        return self.root / rel

    def lock_path(self) -> Path | None:
        """Where the manifest's lock file is, or None when it names none; ArtifactError when the
        path leads out of the artifact (absolute, '..', or a symlink pointing outside)."""
        lock = self.manifest.environment.lock
        return None if lock is None else self.inside(lock.path)

    @property
    def runs_dir(self) -> Path:
        """The run-record directory (evidence.run_records), inside the root."""
        rel = self.manifest.evidence.run_records
        path = self.root / rel
        real = os.path.realpath(path)
        if lexical_issue(rel) is not None or not (real == str(self.root) or real.startswith(f"{self.root}{os.sep}")):
            raise ArtifactError(f"evidence.run_records {rel!r} leaves the artifact root")
        return path


def load_artifact(path: str | Path) -> Artifact:
    """Load the artifact at ``path`` (a directory or its manifest file); ArtifactError if unusable.

    The manifest must conform to the published schema (checked by the compiled validator; on a
    failure jsonschema names the best-matching problem).
    """
    from .read.manifest import locate_manifest, read_manifest_bytes

    try:
        manifest_path = locate_manifest(path)
        raw = read_manifest_bytes(manifest_path)
    except InputError as exc:
        raise ArtifactError(exc.message, exc.hint) from None
    except LoadError as exc:
        raise ArtifactError(f"{path}: {exc.problem.message}", exc.problem.hint) from None
    data, digest = checked_manifest(manifest_path, raw)
    return Artifact(manifest_path.parent.resolve(), manifest_path, data, digest)


def checked_manifest(manifest_path: Path, raw: bytes) -> tuple[dict[str, Any], str]:
    """The manifest ``raw`` (read from ``manifest_path``) as data that conforms to the published
    schema, and its digest; ArtifactError if it is not a manifest or does not conform. Cached."""
    from .. import __version__
    from .cache import read_json_entry, write_json_entry
    from .schemas import schema_bytes

    key = hashlib.sha256(b"\0".join((__version__.encode(), schema_bytes(), raw))).hexdigest()
    cached = read_json_entry("manifests", key)
    if isinstance(cached, dict) and isinstance(cached.get("data"), dict) and isinstance(cached.get("digest"), str):
        return cached["data"], cached["digest"]
    from .read.manifest import load_manifest_bytes
    from .schemas import compiled_is_valid

    try:
        loaded = load_manifest_bytes(raw, path=manifest_path)
    except LoadError as exc:
        p = exc.problem
        where = f"{manifest_path}:{p.line}:{p.column}" if p.line is not None else f"{manifest_path}"
        raise ArtifactError(f"{where}: {p.message}") from None
    data = loaded.data
    from .limits import has_out_of_range_integer

    # The compiled validator reads an integer beyond 64 bits as a float and may accept it.
    if (not loaded.source.integers_in_range and has_out_of_range_integer(data, loaded.text)) or compiled_is_valid(data) is not True:
        problem = _schema_problem(data)
        if problem is not None:
            message, where, count = problem
            raise ArtifactError(f"{manifest_path}: not a valid manifest: {message} at {where!r} "
                                f"({count} problem(s); 'rra validate' lists them)")
    if not isinstance(data, dict):  # the schema requires an object; this tells mypy
        raise ArtifactError(f"{manifest_path}: not a valid manifest: not a mapping")
    try:
        digest = loaded.digest
    except ValueError as exc:
        raise ArtifactError(f"{manifest_path}: {exc}") from None
    write_json_entry("manifests", key, {"digest": digest, "data": data})
    return data, digest


def _schema_problem(data: Any) -> tuple[str, str, int] | None:
    """(message, pointer, number of problems) of the best-matching schema error, or None.

    Only reached when the compiled validator is missing or said "invalid"; ``rra validate``
    lists every problem with its position.
    """
    from .limits import out_of_range_integers, out_of_range_message
    from .schemas import import_jsonschema_lean, load_schema

    huge = list(out_of_range_integers(data))
    if huge:  # jsonschema has no bound for most numbers; the standard does (spec/02-manifest.md#numbers)
        path, value = huge[0]
        return out_of_range_message(value), "/".join(str(part) for part in path), len(huge)
    jsonschema = import_jsonschema_lean()
    errors = list(jsonschema.Draft202012Validator(load_schema()).iter_errors(data))
    if not errors:
        return None
    best = jsonschema.exceptions.best_match(errors)
    return str(best.message), "/".join(str(part) for part in best.absolute_path), len(errors)
