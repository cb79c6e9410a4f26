"""Diagnostics: one finding with its stable code, severity, location, hint and docs link."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from .. import SPEC_VERSION

__all__ = ["DOCS_BASE_URL", "Diagnostic", "Severity", "escape_pointer", "pointer_text"]

#: Rule pages are versioned with the standard, so a link in an old report keeps its meaning.
DOCS_BASE_URL = f"https://rra.dev/rules/{SPEC_VERSION}"


class Severity(IntEnum):
    """How serious a finding is; ordered so that ``max()`` gives the worst."""

    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        """Lower-case name used in every output format."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        """Parse 'error', 'warning' or 'info'; raise ValueError naming the choices otherwise."""
        try:
            return cls[text.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}; expected 'error', 'warning' or 'info'") from None


def escape_pointer(part: str | int) -> str:
    """Escape one reference token of an RFC 6901 JSON pointer."""
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer_text(parts: tuple[str | int, ...]) -> str:
    """Render a path of keys and indices as an RFC 6901 JSON pointer.

    >>> pointer_text(("launchers", 0, "argv"))
    '/launchers/0/argv'
    """
    return "".join("/" + escape_pointer(p) for p in parts)


@dataclass(frozen=True)
class Diagnostic:
    """One finding, located in a file and in the document."""

    code: str
    name: str
    severity: Severity
    message: str
    pointer: str = ""
    file: str | None = None
    line: int | None = None
    column: int | None = None
    hint: str | None = None
    url: str = ""

    def sort_key(self) -> tuple[int, int, str, int, int, str]:
        """Most important first: severity, then reading problems before the rest, then position."""
        stage = 0 if self.code < "RRA100" else 1
        return (-int(self.severity), stage, self.file or "", self.line or 0, self.column or 0, self.code)
