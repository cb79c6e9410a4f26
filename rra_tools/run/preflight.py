"""Before running: the errors ``rra validate`` finds in the manifest itself.

``rra run`` already refuses a manifest that does not conform to the schema (:func:`.plan.load_artifact`);
a schema-valid manifest can still be wrong (a claim naming an unknown launcher, a seedless
stochastic launcher, an undefined placeholder), and running it wastes hours of GPU time on
something that cannot count. The CLI refuses it unless forced.

Only the manifest is checked: the artifact's files (digests of shipped data can take minutes to
hash) and the levels (running is how an artifact earns them) are ``rra validate``'s. The answer
is a pure function of the manifest's bytes and path, the configuration and this package, so it is cached
like the parsed manifest: a repeat ``rra run`` pays a file read and a hash.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .errors import ArtifactError

__all__ = ["NOT_BLOCKING", "WARNING_ONLY", "manifest_errors", "manifest_file", "manifest_problems"]

#: Codes (prefixes) that do not block a run: levels and evidence (a run produces the evidence),
#: and placeholder text (RRA214), which changes nothing that runs: a fresh ``rra init``
#: template can be tried.
NOT_BLOCKING = ("RRA6", "RRA214")
#: Errors that do not block a run but are said as warnings: too few reference observations
#: (RRA502) are needed for the *reproduced* level, not to run, and running is how they are made
#: (a drafted manifest has one, the authors' value).
WARNING_ONLY = ("RRA502",)


def manifest_file(path: str | Path) -> Path:
    """The manifest file of ``path`` (an artifact directory or a manifest file), as
    :func:`.plan.load_artifact` finds it."""
    from ..io.errors import InputError
    from ..io.read.manifest import locate_manifest

    try:
        return locate_manifest(path)
    except InputError as exc:
        raise ArtifactError(exc.message, exc.hint) from None


def manifest_errors(manifest_path: Path) -> list[str]:
    """The errors of the manifest at ``manifest_path`` that block a run (:func:`manifest_problems`)."""
    return manifest_problems(manifest_path)[0]


def manifest_problems(manifest_path: Path) -> tuple[list[str], list[str]]:
    """The errors of the manifest at ``manifest_path`` that block a run, and those that do not
    but are said (:data:`WARNING_ONLY`), one ``file:line:col: error[CODE] message`` line each;
    empty when there is none.

    Judged with the default configuration, as the spec judges conformance: a configuration
    file would make the cache key depend on finding it, which costs the validator's imports on
    every run (and ``--force`` is there for a rule a project has chosen to ignore).
    """
    from .. import __version__
    from ..io.cache import read_json_entry, write_json_entry
    from ..io.schemas import schema_bytes

    from ..io.errors import InputError, LoadError
    from ..io.read.manifest import read_manifest_bytes

    try:
        raw = read_manifest_bytes(manifest_path)
    except InputError as exc:
        raise ArtifactError(exc.message, exc.hint) from None
    except LoadError as exc:
        raise ArtifactError(f"{manifest_path}: {exc.problem.message}") from None
    # The lines name the manifest's path: two artifacts with the same manifest bytes are two entries.
    key = hashlib.sha256(b"\0".join((b"preflight", __version__.encode(), ",".join(NOT_BLOCKING).encode(),
                                     ",".join(WARNING_ONLY).encode(), schema_bytes(),
                                     str(manifest_path).encode("utf-8", "surrogateescape"), raw))).hexdigest()
    cached = read_json_entry("preflight", key)
    if isinstance(cached, list) and len(cached) == 2 and all(
            isinstance(part, list) and all(isinstance(line, str) for line in part) for part in cached):
        return list(cached[0]), list(cached[1])
    from ..validate.api import validate_bytes
    from ..validate.diagnostics import Severity

    result = validate_bytes(raw, name=str(manifest_path), root=None)
    errors: list[str] = []
    warnings: list[str] = []
    for d in result.diagnostics:
        if d.severity == Severity.ERROR and not d.code.startswith(NOT_BLOCKING):
            where = ":".join(str(part) for part in (d.file or str(manifest_path), d.line, d.column) if part is not None)
            (warnings if d.code.startswith(WARNING_ONLY) else errors).append(f"{where}: error[{d.code}] {d.message}")
    write_json_entry("preflight", key, [errors, warnings])
    return errors, warnings
