"""``rra init``: write a starting manifest that editors validate as you type."""

from __future__ import annotations

import platform
import re
from pathlib import Path

from .. import SPEC_VERSION
from ..model.schema import SCHEMA_BASE_URL

__all__ = ["AlreadyExists", "scaffold", "scaffold_text"]

SCHEMA_URL = f"{SCHEMA_BASE_URL}/{SPEC_VERSION}/manifest.schema.json"


class AlreadyExists(Exception):
    """The directory already has a manifest; nothing was written."""


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._").lower()
    return (slug or "artifact")[:128]


def scaffold_text(artifact_id: str, title: str, python: str | None = None) -> str:
    """The text of a new rra.yaml: schema-valid, with TODOs where only the author knows the answer."""
    version = python or ".".join(platform.python_version_tuple()[:2])
    return f"""\
# yaml-language-server: $schema={SCHEMA_URL}
# A Refined Reproducible Artifact. Fill in the TODOs, then run: rra validate .
rra_version: "{SPEC_VERSION}"
id: {artifact_id}
title: "{title}"
paper:
  title: "TODO: title of the paper"
  authors:
    - name: "TODO: first author"
code:
  license: "TODO: SPDX license, e.g. MIT"
  tree:
    path: "."
environment:
  interpreter:
    version: "{version}"
launchers:
  - id: main
    description: "TODO: what this step computes"
    argv: [python, main.py, --seed, "{{seed}}"]
    seeds: [0, 1, 2, 3, 4]
    resources:
      timeout_s: 3600
      expected_runtime_s: 600
claims: []
"""


def scaffold(directory: Path, *, artifact_id: str | None = None, title: str | None = None) -> Path:
    """Write ``directory/rra.yaml``; raise :class:`AlreadyExists` rather than overwrite a manifest."""
    from ..validate.api import find_manifest

    existing = find_manifest(directory) if directory.is_dir() else None
    if existing is not None:
        raise AlreadyExists(f"{existing} already exists; nothing was written")
    directory.mkdir(parents=True, exist_ok=True)
    name = directory.resolve().name
    target = directory / "rra.yaml"
    text = scaffold_text(artifact_id or _slug(name), (title or name).replace('"', "'"))
    # Exclusive creation: a manifest that appears meanwhile is never overwritten.
    with open(target, "x", encoding="utf-8") as handle:
        handle.write(text)
    return target
