"""Validate a packed RRA: verify the OCI artifact, unpack it safely into a temporary directory
and run the normal validator on the embedded manifest (spec/05-packaging.md#validating-a-packed-artifact).

It needs both the OCI layer and the validator, so it lives here, above :mod:`rra_tools.validate`,
which knows nothing of packing.

Nothing from the artifact is executed; unpacking is bounded by :class:`UnpackLimits`; every
layer digest is checked while it streams. A registry client reuses this by fetching into a
temporary layout and calling :func:`validate_oci_layout`, or by passing its own blob opener
to :func:`validate_oci_artifact`.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

from ..io.errors import Problem
from ..io.limits import MAX_MANIFEST_BYTES
from ..validate.api import validate_path_file
from ..validate.catalog import RULES
from ..validate.config import Config
from ..validate.diagnostics import Diagnostic
from ..validate.engine import diagnostic_from_problem
from ..validate.result import ValidationResult
from .errors import OCIError, UnpackError
from .layout import BlobOpener, Descriptor, LayoutProblem, layout_opener, read_index, select_manifest
from .unpack import UnpackLimits, unpack_layers
from .verify import verify_manifest

__all__ = ["VALIDATE_LIMITS", "parse_layout_target", "validate_oci_artifact", "validate_oci_layout"]

#: What validation unpacks at most: 64 GiB in all, the default entry and metadata bounds.
VALIDATE_LIMITS = UnpackLimits(max_total_bytes=64 * 1024 ** 3)
#: Prefix of a layout target on the command line: ``oci-layout:DIR`` or ``oci-layout:DIR:REF``.
LAYOUT_SCHEME = "oci-layout:"


def parse_layout_target(target: str) -> tuple[Path, str | None]:
    """(directory, ref name or None) of ``oci-layout:DIR[:REF]``; a trailing ``:REF`` is a ref
    name only when ``DIR:REF`` is not itself a directory.

    >>> parse_layout_target("oci-layout:out:v1")
    (PosixPath('out'), 'v1')
    """
    rest = target[len(LAYOUT_SCHEME):] if target.startswith(LAYOUT_SCHEME) else target
    head, sep, ref = rest.rpartition(":")
    if sep and head and ref and "/" not in ref and not Path(rest).is_dir():
        return Path(head), ref
    return Path(rest), None


def validate_oci_layout(layout: str | Path, *, ref_name: str | None = None, config: Config | None = None,
                        input_name: str | None = None, limits: UnpackLimits = VALIDATE_LIMITS,
                        time_budget_s: float | None = None, scratch: Path | None = None) -> ValidationResult:
    """Validate the packed RRA ``ref_name`` (or the only manifest) of the image layout ``layout``;
    it is unpacked into a temporary directory under ``scratch`` (default: the system's)."""
    config = config or Config()
    layout = Path(layout)
    name = input_name or f"{LAYOUT_SCHEME}{layout}" + (f":{ref_name}" if ref_name else "")
    result = ValidationResult(input=name)
    if not layout.is_dir():
        result.unreadable = True
        result.diagnostics.append(diagnostic_from_problem(Problem(
            "RRA001", f"cannot open {str(layout)!r}: not a directory", hint="give the directory of an OCI image layout"),
            None, config))
        return result
    try:
        _, descriptor = select_manifest(read_index(layout), ref_name)
    except OCIError as exc:
        _add(result, LayoutProblem.from_error(exc, "index.json"), str(layout), config)
        return result
    return validate_oci_artifact(layout_opener(layout), descriptor, config=config, input_name=name,
                                 file_base=str(layout), limits=limits, time_budget_s=time_budget_s, scratch=scratch)


def validate_oci_artifact(opener: BlobOpener, descriptor: Descriptor, *, config: Config | None = None,
                          input_name: str, file_base: str | None = None, limits: UnpackLimits = VALIDATE_LIMITS,
                          time_budget_s: float | None = None, scratch: Path | None = None) -> ValidationResult:
    """Validate the packed RRA whose image manifest is ``descriptor``, reading blobs through
    ``opener``. Diagnostics about blobs name ``file_base/blobs/sha256/<hex>`` (or the input name
    when there is no ``file_base``); those about the embedded manifest name ``<input>!/rra.yaml``.
    The artifact is unpacked into a temporary directory under ``scratch`` (default: the system's)."""
    config = config or Config()
    result = ValidationResult(input=input_name)
    base = file_base or input_name
    # Layer blobs are not hashed here: unpacking checks each one as it streams.
    verified = verify_manifest(opener, descriptor, check_layers=False)
    for problem in verified.problems:
        _add(result, problem, base, config)
    if verified.manifest is None or verified.config is None or verified.layers is None:
        return _finish(result)
    with tempfile.TemporaryDirectory(prefix="rra-validate-", dir=scratch) as work:
        dest = Path(work) / "artifact"
        try:
            unpack_layers(opener, verified.manifest, dest, limits=limits, config=verified.config)
        except OCIError as exc:
            index = next((i for i, (d, _, _) in enumerate(verified.layers) if d.digest == exc.digest), None)
            file = f"blobs/sha256/{exc.digest[7:]}" if exc.digest else ""
            _add(result, LayoutProblem.from_error(exc, file, f"/layers/{index}" if index is not None else ""),
                 base, config)
            return _finish(result)
        except (UnpackError, OSError) as exc:
            _add(result, LayoutProblem("RRA801", f"the artifact cannot be unpacked: {exc}"), base, config)
            return _finish(result)
        shown = f"{input_name}!/{verified.config.manifest_file}"
        manifest_path = dest / verified.config.manifest_file
        if manifest_path.is_symlink() or not manifest_path.is_file():
            _add(result, LayoutProblem("RRA807", f"the manifest layer holds no file {verified.config.manifest_file!r}",
                                       f"blobs/sha256/{verified.layers[0][0].hex}", "/layers/0"), base, config)
            return _finish(result)
        _compare_embedded(result, manifest_path, verified.config.manifest, shown, base, descriptor, config)
        inner = validate_path_file(manifest_path, input_name, config, MAX_MANIFEST_BYTES, time_budget_s)
        prefix = str(dest)
        for diagnostic in inner.diagnostics:
            result.diagnostics.append(_relocate(diagnostic, prefix, shown))
        result.manifest = shown
        result.source_text = inner.source_text
        result.levels_claimed = inner.levels_claimed
        result.levels_met = inner.levels_met
        result.unreadable = inner.unreadable
    return _finish(result)


def _compare_embedded(result: ValidationResult, manifest_path: Path, embedded: object, shown: str, base: str,
                      descriptor: Descriptor, config: Config) -> None:
    from ..io.canonical import canonical_json
    from ..io.read.manifest import load_manifest_bytes, read_manifest_bytes

    try:
        data = load_manifest_bytes(read_manifest_bytes(manifest_path)).data
        same = canonical_json(data) == canonical_json(embedded)
    except Exception:  # noqa: BLE001 -- an unparsable file is reported by the validator itself
        return
    if not same:
        _add(result, LayoutProblem(
            "RRA810", f"the config's copy of the manifest differs from {shown}; one of them was altered after packing",
            f"blobs/sha256/{descriptor.hex}", "/config", "pack the artifact again"), base, config)


def _relocate(diagnostic: Diagnostic, prefix: str, shown: str) -> Diagnostic:
    file = diagnostic.file
    if file is not None and (file == prefix or file.startswith(prefix + os.sep)):
        file = shown.rsplit("!/", 1)[0] + "!/" + os.path.relpath(file, prefix).replace(os.sep, "/")
    return dataclasses.replace(diagnostic, file=file, message=diagnostic.message.replace(prefix + os.sep, ""))


def _add(result: ValidationResult, problem: LayoutProblem, base: str, config: Config) -> None:
    rule = RULES[problem.code]
    if not config.enabled(rule):
        return
    file = os.path.join(base, problem.file) if problem.file else base
    message = problem.message if problem.entry is None or problem.entry in problem.message \
        else f"{problem.message} (entry {problem.entry!r})"
    result.diagnostics.append(diagnostic_from_problem(
        Problem(problem.code, message, hint=problem.hint, pointer=problem.pointer), file, config))


def _finish(result: ValidationResult) -> ValidationResult:
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result
