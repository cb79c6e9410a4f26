"""Reading the repository's YAML files (CITATION.cff, MLproject, dvc.yaml, environment.yml, ...)
through the project's one document loader (bounded: size, depth, aliases), so each value found
has its line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...io.errors import LoadError
from ...io.read.manifest import LoadedManifest, load_manifest_bytes
from .findings import Finding
from .repo import RawRepo

__all__ = ["YamlFile", "read_yaml"]


@dataclass
class YamlFile:
    """A parsed YAML file of the repository, with a way to locate its values."""

    name: str
    doc: LoadedManifest

    @property
    def data(self) -> Any:
        """The parsed data."""
        return self.doc.data

    def line(self, *pointer: str | int) -> int | None:
        """Line of the value at ``pointer`` (the nearest enclosing one when it is absent)."""
        position = self.doc.position(tuple(pointer))
        return position.line if position is not None else None

    def finding(self, item: str, value: object, *pointer: str | int, note: str = "") -> Finding:
        """A :class:`Finding` located at ``pointer`` in this file."""
        return Finding(item, str(value), self.name, self.line(*pointer), note)


def read_yaml(repo: RawRepo, name: str, problems: list[Finding]) -> YamlFile | None:
    """The parsed file, or ``None`` when it is absent; a file that does not parse is reported in
    ``problems`` (detection goes on without it) rather than raised."""
    text = repo.text(name)
    if text is None or not text.strip():
        return None
    try:
        # Without positions: the fast reader; a position asked for later re-reads the text once.
        doc = load_manifest_bytes(text.encode("utf-8"))
    except LoadError as exc:
        problems.append(Finding("unreadable", name, name, exc.problem.line,
                                f"not valid YAML, skipped: {exc.problem.message}"))
        return None
    return YamlFile(name, doc)
