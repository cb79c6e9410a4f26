"""What validating one input produced, and the report over all inputs."""

from __future__ import annotations

from dataclasses import dataclass, field

from .diagnostics import Diagnostic, Severity

__all__ = ["ValidationReport", "ValidationResult"]


@dataclass
class ValidationResult:
    """Findings for one input path, most important first."""

    input: str
    manifest: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    levels_claimed: list[str] | None = None
    levels_met: list[str] | None = None
    #: True when the input could not be opened at all (exit code 2 territory).
    unreadable: bool = False
    #: Manifest text, kept so reporters can quote the offending line.
    source_text: str | None = None
    #: False when the manifest was checked without its artifact's files (standard input, bytes,
    #: ``--manifest-only``): file checks were skipped and no level can be met.
    files_checked: bool = True
    _lines: tuple[str, list[str]] | None = field(default=None, init=False, repr=False, compare=False)

    def count(self, severity: Severity) -> int:
        """Number of findings of exactly ``severity``."""
        return sum(1 for d in self.diagnostics if d.severity == severity)

    @property
    def valid(self) -> bool:
        """True when nothing of severity error was found."""
        return not self.unreadable and self.count(Severity.ERROR) == 0

    def worst(self) -> Severity | None:
        """Highest severity found, or None when clean."""
        return max((d.severity for d in self.diagnostics), default=None)

    def source_line(self, line: int) -> str | None:
        """Text of 1-based ``line`` of the manifest, when known."""
        text = self.source_text
        if text is None:
            return None
        # Split once per text, not per finding: a 10,000-launcher manifest with hundreds of
        # findings would be split hundreds of times (source_text may be replaced, hence the check).
        kept = self._lines
        if kept is None or kept[0] is not text:
            # Only YAML line breaks count; str.splitlines() would also split on \v, \f and others.
            kept = self._lines = (text, text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        lines = kept[1]
        return lines[line - 1] if 1 <= line <= len(lines) else None


@dataclass
class ValidationReport:
    """Results for every input of one validation run."""

    results: list[ValidationResult] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        """Total findings of exactly ``severity``."""
        return sum(r.count(severity) for r in self.results)

    @property
    def any_unreadable(self) -> bool:
        """True when some input could not be opened."""
        return any(r.unreadable for r in self.results)

    def fails(self, threshold: Severity) -> bool:
        """True when some finding is at or above ``threshold``."""
        return any(d.severity >= threshold for r in self.results for d in r.diagnostics)
