"""Collecting a review's findings, each located: the manifest's file:line and JSON pointer for a
finding about a manifest value, a run record or run directory for one about a run.

A finding is plain JSON data with the fields of
:class:`rra_tools.model.review_report.ReviewFinding` (absent optionals left out): the review's
command path does not import pydantic, whose import alone would cost it about 0.25 s of CPU.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...io.artifact import Artifact
from ...io.read.manifest import LoadedManifest, load_manifest_bytes
from ...validate.diagnostics import Diagnostic, pointer_text
from .codes import review_code

__all__ = ["Finding", "Findings", "compact"]

#: One finding, as the report holds it.
Finding = dict[str, Any]

_ORDER = {"error": 0, "warning": 1, "info": 2}


class Findings:
    """The findings of one review, with what locating them needs."""

    def __init__(self, artifact: Artifact) -> None:
        self.artifact = artifact
        self.items: list[Finding] = []
        self._loaded: LoadedManifest | None = None

    @property
    def manifest_name(self) -> str:
        """The manifest file, relative to the artifact root."""
        return self.rel(self.artifact.manifest_path)

    def rel(self, path: Path) -> str:
        """``path`` relative to the artifact root when inside it, else as given."""
        try:
            return path.resolve().relative_to(self.artifact.root).as_posix()
        except ValueError:
            return str(path)

    def _line(self, pointer: tuple[str | int, ...]) -> int | None:
        if self._loaded is None:
            # Positions are worked out only when a finding needs one (a clean artifact never does).
            self._loaded = load_manifest_bytes(self.artifact.manifest_path.read_bytes(), path=self.artifact.manifest_path)
        position = self._loaded.position(pointer)
        if position is None:
            return None
        return position.key_line or position.line

    def at(self, code: str, message: str, pointer: tuple[str | int, ...], *, hint: str | None = None,
           severity: str | None = None, record: str | None = None) -> None:
        """A finding about the manifest value at ``pointer``."""
        self._add(code, message, severity, file=self.manifest_name, line=self._line(pointer),
                  pointer=pointer_text(pointer), record=record, hint=hint)

    def run(self, code: str, message: str, record: str | None, *, hint: str | None = None,
            severity: str | None = None, file: str | None = None) -> None:
        """A finding about a run, located at its record (or run directory)."""
        self._add(code, message, severity, file=file or record, line=None, pointer=None, record=record, hint=hint)

    def _add(self, code: str, message: str, severity: str | None, *, file: str | None, line: int | None,
             pointer: str | None, record: str | None, hint: str | None) -> None:
        kind = review_code(code)
        self.items.append(_finding(code, kind.name, severity or kind.severity, message, file=file, line=line,
                                   pointer=pointer, record=record, hint=hint))

    def add_diagnostics(self, diagnostics: Iterable[Diagnostic]) -> None:
        """The validator's findings, under their own codes; a placeholder (RRA214) that a review
        finding already names at the same place is left out."""
        named = {(f.get("pointer"), f.get("file")) for f in self.items}
        for d in diagnostics:
            file = self.rel(Path(d.file)) if d.file else None
            pointer = d.pointer or None
            if d.code == "RRA214" and (pointer, file) in named:
                continue
            self.items.append(_finding(d.code, d.name, d.severity.label, d.message, file=file, line=d.line,
                                       pointer=pointer, record=None, hint=d.hint))

    def sorted(self) -> list[Finding]:
        """Errors first, then warnings, then information; in each, by place."""
        return sorted(self.items, key=lambda f: (_ORDER[f["severity"]], f.get("file") or "", f.get("line") or 0,
                                                 f["code"]))


def compact(**fields: Any) -> dict[str, Any]:
    """``fields`` without those that are None (the report leaves absent optionals out)."""
    return {key: value for key, value in fields.items() if value is not None}


def _finding(code: str, name: str, severity: str, message: str, **where: Any) -> Finding:
    """A finding in the field order of the model, without the optionals that are None."""
    finding: Finding = {"code": code, "name": name, "severity": severity, "message": message}
    finding.update((key, value) for key, value in where.items() if value is not None)
    return finding
