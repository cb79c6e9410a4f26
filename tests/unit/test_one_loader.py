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
#: manifest's lock block (the one ruamel API that writes YAML back with its comments); the reader
#: of conda-lock files (with line numbers of their own); the builder's round-trip editor that adds
#: change records, discrepancies and observations. All but the first read text rra did not
#: write, so each checks it with the bounded loader first (issue 24: billion laughs).
RUAMEL_ALLOWED = {"io/read/source.py", "env/artifact.py", "env/locks.py", "builder/manifest_edit.py"}


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
    assert sorted(loaders) == ["io/read/manifest.py:load_manifest", "io/read/manifest.py:load_manifest_bytes",
                               "io/read/source.py:parse_document"]
    importers = set()
    for rel, tree in _modules().items():
        for node in ast.walk(tree):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(name.startswith("ruamel") for name in names):
                importers.add(rel)
    assert importers <= RUAMEL_ALLOWED, sorted(importers - RUAMEL_ALLOWED)
    # Every round-trip reader of another file checks the text within the loader's bounds first.
    unchecked = [rel for rel in sorted(importers - {"io/read/source.py"})
                 if not any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "check_yaml"
                            for node in ast.walk(_modules()[rel]))]
    assert unchecked == [], unchecked
    # Outside io/, nobody parses documents with the reader itself: they go through io.read.manifest.
    users = set()
    for rel, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("io.read.source") \
                    and any(a.name in ("parse_document", "decode_text") for a in node.names):
                users.add(rel)
    assert not {u for u in users if not u.startswith("io/")}, sorted(users)


def test_the_loader_reads_without_cyclic_collections() -> None:
    # A parsed manifest holds no cycles, and a collection walks every object of it: the loader
    # pauses the collector while it reads (rra run and the builder load manifests too), and
    # restores it after.
    import gc
    import json

    from rra_tools.io.read.manifest import load_manifest_bytes

    raw = json.dumps({"rra_version": "1.0", "x-values": [{"a": [i]} for i in range(50_000)]}).encode()
    raw_yaml = b"a:\n" + b"".join(b"- b: [%d]\n" % i for i in range(50_000))
    load_manifest_bytes(b"a: 1\n")  # the readers are imported on first use, outside the pause
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    assert gc.isenabled()
    gc.callbacks.append(count)
    try:
        loaded = load_manifest_bytes(raw)
        loaded_yaml = load_manifest_bytes(raw_yaml)
    finally:
        gc.callbacks.remove(count)
    # At most one collection when the collector comes back on after each read (without the
    # pause: over a hundred, most of them while the document is built). That collection is
    # usually of the young generation, but it is an older one when the young generation's
    # collections since the last older one reach its threshold (the suite's earlier tests decide
    # that), so only the count is pinned.
    assert len(collections) <= 2, collections
    assert gc.isenabled()
    assert len(loaded.data["x-values"]) == 50_000 and len(loaded_yaml.data["a"]) == 50_000
