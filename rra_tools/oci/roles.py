"""Which layer each file of an artifact goes into, decided from the manifest alone.

Every packed file belongs to exactly one layer. In order of precedence: the manifest file
(role ``manifest``), the lock file (``environment``), the guide, the citation file and the
root's README/LICENSE/COPYING/NOTICE/CITATION files (``docs``), the files of each shipped data
source (``data``, one layer per source), run records and declared launcher outputs
(``records``), and everything else (``code``). Files of a data source that is not shipped
(``shipped: false``) are fetched by whoever runs the artifact, so they are never packed.

The manifest is read tolerantly: a forced pack of a manifest with schema errors still gets
sensible roles.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DOC_PREFIXES", "RolePlan", "plan_roles"]

#: Files at the artifact root whose names start with one of these (any case) are documentation.
DOC_PREFIXES = ("readme", "license", "licence", "copying", "notice", "citation")
_PLACEHOLDER = re.compile(r"\{[^{}/]*\}")


def _norm(path: Any) -> str | None:
    if not isinstance(path, str) or not path or path.startswith("/"):
        return None
    normal = posixpath.normpath(path)
    return None if normal == ".." or normal.startswith("../") else normal


@dataclass
class RolePlan:
    """The role of each path, from the manifest."""

    manifest_file: str
    environment: set[str] = field(default_factory=set)
    docs: set[str] = field(default_factory=set)
    #: (data source id, its file paths), for shipped sources, in manifest order.
    datasets: list[tuple[str, set[str]]] = field(default_factory=list)
    #: Files of sources that are not shipped: left out of every layer.
    fetched: set[str] = field(default_factory=set)
    records_dirs: list[str] = field(default_factory=list)
    outputs: list[re.Pattern[str]] = field(default_factory=list)

    def role_of(self, rel: str) -> tuple[str, str | None] | None:
        """(role, data source id or None) of the file ``rel``, or None when it is not packed."""
        if rel == self.manifest_file:
            return "manifest", None
        if rel in self.environment:
            return "environment", None
        if rel in self.docs or ("/" not in rel and rel.lower().startswith(DOC_PREFIXES)):
            return "docs", None
        for ident, paths in self.datasets:
            if rel in paths:
                return "data", ident
        if rel in self.fetched:
            return None
        if any(rel == d or rel.startswith(d + "/") for d in self.records_dirs):
            return "records", None
        if any(p.fullmatch(rel) for p in self.outputs):
            return "records", None
        return "code", None


def plan_roles(data: Any, manifest_file: str) -> RolePlan:
    """The role plan of a manifest (parsed, possibly invalid) stored as ``manifest_file``."""
    plan = RolePlan(manifest_file)
    doc: Mapping[str, Any] = data if isinstance(data, Mapping) else {}

    def section(value: Any) -> Mapping[str, Any]:
        return value if isinstance(value, Mapping) else {}

    def entries(value: Any) -> list[Mapping[str, Any]]:
        return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []

    lock = _norm(section(section(doc.get("environment")).get("lock")).get("path"))
    if lock:
        plan.environment.add(lock)
    for path in (section(doc.get("guide")).get("path"), section(doc.get("paper")).get("citation_file")):
        if (normal := _norm(path)) is not None:
            plan.docs.add(normal)
    seen: set[str] = set()
    for source in entries(doc.get("data")):
        paths = {p for f in entries(source.get("files")) if (p := _norm(f.get("path"))) is not None}
        ident = source.get("id")
        if source.get("shipped") is True and isinstance(ident, str) and ident not in seen:
            seen.add(ident)
            plan.datasets.append((ident, paths))
        else:
            plan.fetched |= paths
    records = _norm(section(doc.get("evidence")).get("run_records", "runs"))
    if records and records != ".":
        plan.records_dirs.append(records)
    for launcher in entries(doc.get("launchers")):
        for output in entries(launcher.get("outputs")):
            path = _norm(output.get("path"))
            if path is None or path == ".":
                continue
            # {seed} and {parameter} stand for one path component's worth of text.
            pattern = "[^/]*".join(re.escape(part) for part in _PLACEHOLDER.split(path))
            # An output may be a directory: everything below it is output too.
            plan.outputs.append(re.compile(f"{pattern}(?:/.*)?", re.DOTALL))
    return plan
