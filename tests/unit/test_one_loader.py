"""One of each: manifest loader, artifact type, artifact error, atomic write (issue 11, item 2).

A second copy of any of them is how the four loaders came about; this test fails when one
reappears, and names it.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rra_tools"

#: Modules that may import ruamel.yaml, and why: the one reader; the round-trip editor of the
#: manifest's lock block (the one ruamel API that writes YAML back with its comments); two readers
#: of files that are not manifests (conda-lock and environment.yml, with line numbers of their own);
#: the builder's round-trip editor that adds change records, discrepancies and observations.
RUAMEL_ALLOWED = {"io/source.py", "env/artifact.py", "env/locks.py", "env/resolve.py", "builder/manifest_edit.py"}


@cache
def _modules() -> dict[str, ast.Module]:
    return {path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(PACKAGE.rglob("*.py"))}


def _defined(kind: type[ast.AST], name_test: object) -> list[str]:
    out = []
    for rel, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, kind) and callable(name_test) and name_test(node.name):  # type: ignore[attr-defined]
                out.append(f"{rel}:{node.name}")  # type: ignore[attr-defined]
    return out


def test_one_artifact_type_and_one_artifact_error() -> None:
    assert _defined(ast.ClassDef, lambda n: n == "Artifact") == ["io/artifact.py:Artifact"]
    assert _defined(ast.ClassDef, lambda n: n == "ArtifactError") == ["io/artifact.py:ArtifactError"]


def test_one_atomic_write() -> None:
    assert _defined(ast.FunctionDef, lambda n: "atomic" in n) == ["io/atomic.py:write_atomic"]


def test_one_manifest_loader() -> None:
    loaders = _defined(ast.FunctionDef, lambda n: n in ("load_manifest", "load_manifest_bytes", "parse_document"))
    assert sorted(loaders) == ["io/manifest.py:load_manifest", "io/manifest.py:load_manifest_bytes",
                               "io/source.py:parse_document"]
    importers = set()
    for rel, tree in _modules().items():
        for node in ast.walk(tree):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(name.startswith("ruamel") for name in names):
                importers.add(rel)
    assert importers <= RUAMEL_ALLOWED, sorted(importers - RUAMEL_ALLOWED)
    # Outside io/, nobody parses documents with the reader itself: they go through io.manifest.
    users = set()
    for rel, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("io.source") \
                    and any(a.name in ("parse_document", "decode_text") for a in node.names):
                users.add(rel)
    assert not {u for u in users if not u.startswith("io/")}, sorted(users)
