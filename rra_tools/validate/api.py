"""The library entry points: validate a path (directory or manifest file) or raw bytes.

A packed artifact (``oci-layout:DIR``, ``oci://HOST/REPO:TAG``) is validated by
:mod:`rra_tools.oci.targets`, which needs the OCI layer as well as this one.

Registries call these on uploads: nothing from the artifact is executed, no path outside the
artifact root is followed, and reading is bounded (see :mod:`rra_tools.io.limits`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from ..io.errors import InputError, LoadError, Problem
from ..io.limits import MAX_MANIFEST_BYTES
from ..io.read.manifest import collector_paused, find_manifest, load_manifest_bytes, locate_manifest, read_manifest_bytes
from .config import Config
from .engine import diagnostic_from_problem, run_layers
from .result import ValidationReport, ValidationResult

__all__ = ["MANIFEST_NAMES", "find_manifest", "validate_bytes", "validate_path", "validate_path_file",
           "validate_paths"]

from ..io.paths import MANIFEST_NAMES  # re-exported: part of the library API


def validate_bytes(
    raw: bytes,
    *,
    name: str = "<bytes>",
    root: Path | None = None,
    config: Config | None = None,
    max_bytes: int = MAX_MANIFEST_BYTES,
    time_budget_s: float | None = None,
) -> ValidationResult:
    """Validate manifest bytes; file rules resolve paths under ``root`` (skipped when None).

    ``max_bytes`` caps the manifest size; ``time_budget_s`` caps the wall time of the checks
    (when it runs out the result carries RRA008 and is not valid).
    """
    config = config or Config()
    deadline = None if time_budget_s is None else time.monotonic() + time_budget_s
    result = ValidationResult(input=name, manifest=name, files_checked=root is not None)
    with collector_paused():
        try:
            loaded = load_manifest_bytes(raw, max_bytes=max_bytes)
        except LoadError as exc:
            result.source_text = exc.text
            result.diagnostics.append(diagnostic_from_problem(exc.problem, name, config))
            return result
        result.source_text = loaded.text
        run_layers(loaded.source, root, config, result, deadline)
        # Freed while the collector is paused: a collection as it resumes would walk every value
        # of the document first (56 ms of the 10,000-launcher manifest's 0.7 s).
        del loaded
    return result


def validate_path(path: str | Path, *, config: Config | None = None, max_bytes: int = MAX_MANIFEST_BYTES,
                  time_budget_s: float | None = None, files: bool = True) -> ValidationResult:
    """Validate an artifact directory (holding rra.yaml) or a manifest file; budgets as for
    :func:`validate_bytes`.

    With ``files=False`` the manifest is checked alone, as if read from standard input: the
    checks of the artifact's files are skipped (a registry checking a manifest before its
    files arrive) and the result says so (``files_checked`` is False).
    """
    config = config or Config()
    given = str(path)
    try:
        manifest = locate_manifest(path)
    except InputError as exc:
        return _unreadable(given, config, exc.message, exc.hint)
    return validate_path_file(manifest, given, config, max_bytes, time_budget_s, files=files)


def validate_path_file(manifest: Path, given: str, config: Config, max_bytes: int,
                       time_budget_s: float | None = None, *, files: bool = True) -> ValidationResult:
    """Validate the manifest file ``manifest`` (reported as input ``given``); its directory is
    the artifact root unless ``files`` is False."""
    shown = os.path.normpath(str(manifest))
    try:
        raw = read_manifest_bytes(manifest, max_bytes)
    except InputError as exc:
        return _unreadable(given, config, exc.message, exc.hint)
    except LoadError as exc:
        result = ValidationResult(input=given, manifest=shown, files_checked=files)
        result.diagnostics.append(diagnostic_from_problem(exc.problem, shown, config))
        return result
    result = validate_bytes(raw, name=shown, root=manifest.parent if files else None, config=config,
                            max_bytes=max_bytes, time_budget_s=time_budget_s)
    result.input = given
    return result


def validate_paths(paths: Iterable[str | Path], *, config: Config | None = None) -> ValidationReport:
    """Validate several inputs; one result each, in the order given."""
    return ValidationReport([validate_path(p, config=config) for p in paths])


def _unreadable(given: str, config: Config, message: str, hint: str | None = None) -> ValidationResult:
    result = ValidationResult(input=given, unreadable=True)
    result.diagnostics.append(diagnostic_from_problem(Problem("RRA001", message, hint=hint), None, config))
    return result
