"""Step **guide**: write the reproduction guide."""

from __future__ import annotations

import hashlib
from typing import Any

from ..manifest_edit import edit_manifest
from .context import Build
from .state import digest


def inputs(build: Build) -> str:
    """Digest of the step's inputs: the manifest and the guide file."""
    artifact = build.artifact()
    guide = (artifact.data.get("guide") or {}).get("path", "REPRODUCE.md")
    path = build.root / guide
    return digest({"manifest": artifact.digest,
                    "guide": hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None})


def run(build: Build) -> None:
    """Run the step (see the module docstring)."""
    from ..guide import write_guide

    artifact = build.artifact()
    if not artifact.data.get("guide"):
        def mutate(document: Any) -> None:
            document["guide"] = {"path": "REPRODUCE.md"}

        edit_manifest(artifact.manifest_path, mutate)
    result = write_guide(build.root)
    build.steps["guide"].note = f"{build.rel(result.path)}"
