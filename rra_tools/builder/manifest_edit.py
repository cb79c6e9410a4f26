"""Editing ``rra.yaml`` in place: comments and layout kept, the result checked, written atomically.

The builder's commands add entries (change records, patches, discrepancies, observations) to a
manifest the user wrote by hand. ruamel.yaml's round-trip mode keeps comments, key order, quotes
and flow/block style of what is already there; new entries are written in block style with the
sequence indentation the file already uses. The edited text must still be a manifest that
conforms to the schema (checked by :func:`rra_tools.io.artifact.checked_manifest`) before it
replaces the file through :func:`rra_tools.io.atomic.write_atomic`; nothing is written otherwise.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ExitStatus
from ..io.artifact import ArtifactError, checked_manifest
from ..io.atomic import write_atomic
from ..io.read.bounded_yaml import YamlBoundsError, check_yaml
from .errors import BuilderLayerError

__all__ = ["EditError", "edit_manifest", "quoted"]


class EditError(BuilderLayerError):
    """The manifest cannot be edited (not YAML the round-trip parser reads, not a mapping, or
    the edit would make it invalid); nothing was written."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def quoted(text: str) -> str:
    """``text`` written double-quoted: for values YAML 1.1 readers would take for booleans
    ('yes', 'no') or numbers."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    value: str = DoubleQuotedScalarString(text)
    return value


def _sequence_offset(text: str) -> int:
    """How far the file indents ``- `` under its parent key (0 or 2, the two common styles)."""
    match = re.search(r"^[A-Za-z_][\w-]*:[ \t]*(?:#.*)?\n( *)- ", text, re.MULTILINE)
    return len(match.group(1)) if match else 0


def edit_manifest(manifest_path: Path, mutate: Callable[[Any], None]) -> bytes:
    """Apply ``mutate`` to the round-trip document of ``manifest_path`` and write the result
    atomically when it is still a valid manifest; returns the new bytes."""
    if manifest_path.suffix == ".json":
        raise EditError(f"{manifest_path}: the builder edits YAML manifests only", "convert it to rra.yaml")
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    raw = manifest_path.read_bytes()
    text = raw.decode("utf-8")
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap the user's long lines
    offset = _sequence_offset(text)
    yaml.indent(mapping=2, sequence=offset + 2, offset=offset)
    try:
        check_yaml(text, str(manifest_path))  # ruamel's reader has no bounds of its own
        document = yaml.load(text)
    except YamlBoundsError as exc:
        raise EditError(f"cannot be read for editing: {exc}") from None
    except YAMLError as exc:
        raise EditError(f"{manifest_path}: cannot be read for editing: {exc}") from None
    if not hasattr(document, "get"):
        raise EditError(f"{manifest_path}: the manifest is not a mapping")
    mutate(document)
    out = io.StringIO()
    yaml.dump(document, out)
    new = out.getvalue().encode("utf-8")
    try:
        checked_manifest(manifest_path, new)
    except ArtifactError as exc:
        raise EditError(f"the edit would leave an invalid manifest: {exc}", "nothing was written") from None
    write_atomic(manifest_path, new)
    return new
