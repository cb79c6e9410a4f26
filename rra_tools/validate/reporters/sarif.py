"""SARIF 2.1.0 report (``--format sarif``) for GitHub code scanning and other SARIF viewers.

One run; the driver lists every rule of the catalog, so a viewer can show rules that found
nothing. Paths under the working directory are written relative to ``%SRCROOT%`` (the working
directory), which is what code scanning expects when ``rra validate`` runs at the repository
root. Each result carries a ``partialFingerprints`` entry computed from the rule, file, JSON
pointer and message only, so the same finding keeps its identity when lines move.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from ... import __version__
from ..catalog import RULES, Rule
from ..diagnostics import Diagnostic, Severity
from ..result import ValidationReport, ValidationResult

__all__ = [
    "FINGERPRINT_KEY",
    "INFORMATION_URI",
    "SARIF_SCHEMA",
    "SRCROOT",
    "fingerprint",
    "render_sarif",
    "sarif_dict",
    "source_path",
]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://rra.dev"
#: The base every relative artifact URI is resolved against: the working directory.
SRCROOT = "%SRCROOT%"
#: Name (and version) of the fingerprint; bump the version if what it hashes changes.
FINGERPRINT_KEY = "rra/v1"

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# Tags by the hundreds digit of a code, after the groups of the catalog.
_AREAS = {"0": "reading", "1": "schema", "2": "references", "3": "files", "4": "pinning",
          "5": "experiments", "6": "levels"}


def source_path(name: str, cwd: Path) -> tuple[str, bool] | None:
    """``name`` as a POSIX path relative to ``cwd`` (True) or absolute (False).

    None for names that are no file: ``-`` and pseudo-names such as ``<stdin>``.

    >>> source_path("./art/rra.yaml", Path("/work"))
    ('art/rra.yaml', True)
    >>> source_path("../elsewhere/rra.yaml", Path("/work/repo"))
    ('/work/elsewhere/rra.yaml', False)
    """
    if name == "-" or (name.startswith("<") and name.endswith(">")):
        return None
    path = PurePath(name)
    if not path.is_absolute():
        relative = posixpath.normpath(path.as_posix())
        if relative != ".." and not relative.startswith("../"):
            return relative, True
        path = PurePath(os.path.normpath(cwd / path))
    try:
        return path.relative_to(cwd).as_posix(), True
    except ValueError:
        return path.as_posix(), False


def fingerprint(code: str, file: str | None, pointer: str, message: str) -> str:
    """A stable hash identifying a finding independently of its line and column."""
    data = json.dumps([code, file, pointer, message], ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _rule(rule: Rule) -> dict[str, Any]:
    tags = ["rra"]
    area = _AREAS.get(rule.code[3:4])
    if area is not None:
        tags.append(area)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "helpUri": rule.url,
        "help": {"text": f"{rule.summary} See {rule.url}",
                 "markdown": f"{rule.summary}\n\n[{rule.code} {rule.name}]({rule.url})"},
        "defaultConfiguration": {
            "enabled": rule.enabled and rule.status != "removed",
            "level": _LEVELS[rule.severity],
        },
        "properties": {"tags": tags, "section": rule.section},
    }


def _location(d: Diagnostic, result: ValidationResult, cwd: Path) -> tuple[dict[str, Any], str | None]:
    location: dict[str, Any] = {}
    where = source_path(d.file or result.input, cwd)
    shown: str | None = None
    if where is not None:
        shown, relative = where
        artifact = ({"uri": quote(shown, safe="/"), "uriBaseId": SRCROOT} if relative
                    else {"uri": Path(shown).as_uri()})
        physical: dict[str, Any] = {"artifactLocation": artifact}
        if d.line is not None:
            region = {"startLine": d.line}
            if d.column is not None:
                region["startColumn"] = d.column
            physical["region"] = region
        location["physicalLocation"] = physical
    if d.pointer:
        # The whole document (pointer "") has no name; viewers show an empty logical location.
        location["logicalLocations"] = [{"fullyQualifiedName": d.pointer}]
    return location, shown


def _result(d: Diagnostic, result: ValidationResult, index: dict[str, int], cwd: Path) -> dict[str, Any]:
    location, shown = _location(d, result, cwd)
    text = d.message if d.hint is None else f"{d.message}\nhint: {d.hint}"
    out: dict[str, Any] = {"ruleId": d.code}
    if d.code in index:
        out["ruleIndex"] = index[d.code]
    out["level"] = _LEVELS[d.severity]
    out["message"] = {"text": text}
    if location:
        out["locations"] = [location]
    out["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint(d.code, shown, d.pointer, d.message)}
    return out


def sarif_dict(report: ValidationReport, cwd: Path | None = None) -> dict[str, Any]:
    """The SARIF log as a JSON-compatible dict; relative paths are taken against ``cwd``."""
    cwd = Path.cwd() if cwd is None else cwd
    index = {code: i for i, code in enumerate(RULES)}
    root_uri = cwd.as_uri()
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "rra",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule(rule) for rule in RULES.values()],
            }},
            "originalUriBaseIds": {SRCROOT: {"uri": root_uri if root_uri.endswith("/") else root_uri + "/"}},
            # Columns count characters, as the manifest reader does, not UTF-16 code units.
            "columnKind": "unicodeCodePoints",
            "results": [_result(d, r, index, cwd) for r in report.results for d in r.diagnostics],
        }],
    }


def render_sarif(report: ValidationReport) -> str:
    """The report as a SARIF 2.1.0 log with one run, paths relative to the working directory."""
    return json.dumps(sarif_dict(report), indent=2, ensure_ascii=True) + "\n"
