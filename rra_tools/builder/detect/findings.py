"""What ``rra init`` found in a raw repository, each with the file and line it came from."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Finding"]


@dataclass(frozen=True)
class Finding:
    """One item found (or noted) in the repository.

    ``item`` names what it is for (``upstream``, ``license``, ``paper.title``, ``requirement``,
    ``launcher``, ``discrepancy``, ``claim-candidate``, ...); ``file`` is relative to the
    repository root (``None`` for what git itself says); ``line`` is 1-based."""

    item: str
    value: str
    file: str | None = None
    line: int | None = None
    note: str = ""
    #: What a claim candidate is made of: ``("cell", row, column, number as printed)`` for a
    #: number in a table, ``("print", label, regex)`` for a metric a print call writes.
    parts: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """``file:line``, ``file``, or ``git`` for what no file holds."""
        if self.file is None:
            return "git"
        return f"{self.file}:{self.line}" if self.line is not None else self.file
