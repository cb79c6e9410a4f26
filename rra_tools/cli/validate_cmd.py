"""``rra validate``: build the configuration, validate every input, render, pick the exit code."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import ExitStatus
from ..validate.config import Config, find_config, load_config
from ..validate.diagnostics import Severity
from ..validate.result import ValidationReport, ValidationResult
from .output import echo

__all__ = ["PACKED_SCHEMES", "run_validate"]

#: Targets naming a packed artifact: rra_tools.oci.targets.PACKED_SCHEMES (a test keeps them
#: equal), spelled here so that validating a plain path never imports the OCI package.
PACKED_SCHEMES = ("oci://", "oci-layout:")


def _split(value: str | None) -> frozenset[str] | None:
    if value is None:
        return None
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def build_config(paths: tuple[str, ...], config_file: str | None, **overrides: object) -> Config:
    """The configuration file's settings with command-line overrides on top."""
    from ..validate.config import parse_config

    if config_file is not None:
        base = load_config(Path(config_file))
    else:
        first = next((p for p in paths if p != "-"), ".")
        start = Path(first)
        found = find_config(start if start.is_dir() else start.parent)
        base = load_config(found) if found is not None else Config()
    table: dict[str, object] = {}
    for key in ("select", "extend_select", "ignore"):
        value = overrides.get(key)
        if value is not None:
            table[key.replace("_", "-")] = sorted(value)  # type: ignore[call-overload]
    checked = parse_config(table, "command line")
    return base.merged(select=checked.select, extend_select=checked.extend_select or None,
                       ignore=checked.ignore or None, fail_on=overrides.get("fail_on"))


def run_validate(paths: tuple[str, ...], *, fmt: str, fail_on: str | None, select: str | None,
                 extend_select: str | None, ignore: str | None, config_file: str | None,
                 color: bool | None, output: str | None, attach_report: bool = False,
                 manifest_only: bool = False) -> int:
    """Validate ``paths`` and write the report; return the exit code. With ``attach_report``,
    the JSON report of each ``oci://`` target is attached to it as a referrer; with
    ``manifest_only``, manifests are checked without their artifact's files (as ``-`` is)."""
    from ..io.limits import MAX_MANIFEST_BYTES
    from ..validate.api import validate_bytes, validate_path
    from ..validate.reporters import render

    config = build_config(paths, config_file, select=_split(select), extend_select=_split(extend_select),
                          ignore=_split(ignore), fail_on=Severity.parse(fail_on) if fail_on else None)
    packed = [p for p in paths if p.startswith(PACKED_SCHEMES)]
    if manifest_only and packed:
        echo(f"error: --manifest-only checks a manifest without its files; {packed[0]!r} is a packed "
                   "artifact, which is always checked with its files", err=True)
        return ExitStatus.USAGE
    report = ValidationReport()
    remote: list[tuple[ValidationResult, object]] = []
    for path in paths:
        if path == "-":
            # One byte over the cap is enough to refuse; never buffer an unbounded stream.
            raw = sys.stdin.buffer.read(MAX_MANIFEST_BYTES + 1)
            # No artifact root: the spec skips file checks for standard input, whatever the
            # working directory holds (spec/01-overview.md, "Validators").
            result = validate_bytes(raw, name="<stdin>", root=None, config=config)
            result.input = "-"
        elif path.startswith(PACKED_SCHEMES):
            from ..oci.targets import validate_packed_target

            result, pinned = validate_packed_target(path, config=config)
            if pinned is not None:
                remote.append((result, pinned))
        else:
            result = validate_path(path, config=config, files=not manifest_only)
        report.results.append(result)
    from .terminal import color_wanted

    # A report written to a file is coloured only on request; --color also holds when piped.
    use_color = color_wanted(color, sys.stdout) if output is None else bool(color)
    text = render(report, fmt, color=use_color)
    if output is not None:
        Path(output).write_text(text, encoding="utf-8")
    else:
        # color= keeps echo from stripping the escapes when standard output is not a terminal.
        echo(text, nl=False, color=use_color)
    if attach_report and not _attach_reports(remote):
        return ExitStatus.USAGE
    if report.any_unreadable:
        return ExitStatus.USAGE
    threshold = config.fail_on if config.fail_on is not None else Severity.ERROR
    return ExitStatus.FINDINGS if report.fails(threshold) else ExitStatus.OK


def _attach_reports(remote: list[tuple[ValidationResult, object]]) -> bool:
    """Attach each oci:// target's JSON report to the manifest it validated; False on failure."""
    from ..oci.referrers import REPORT_JSON, attach_bytes
    from ..oci.registry import Reference, RegistryClient, RegistryError
    from ..validate.reporters import render

    for result, pinned in remote:
        assert isinstance(pinned, Reference)
        data = render(ValidationReport([result]), "json").encode("utf-8")
        try:
            with RegistryClient(pinned.registry) as client:
                referrer = attach_bytes(client, pinned, data, REPORT_JSON, title="rra-validation-report.json")
        except RegistryError as exc:
            echo(f"error: attaching the report to {pinned}: {exc}", err=True)
            return False
        echo(f"attached the validation report {referrer.digest} to {pinned}", err=True)
    return True
