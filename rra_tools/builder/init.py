"""``rra init``: write a starting manifest that editors validate as you type."""

from __future__ import annotations

import json
import platform
import re
import unicodedata
from pathlib import Path

from .. import SPEC_VERSION
from ..errors import ExitStatus
from ..io.schemas import schema_path
from .errors import BuilderLayerError

__all__ = ["AlreadyExists", "InvalidValue", "check_id", "check_title", "scaffold", "scaffold_text", "schema_modeline"]


class AlreadyExists(BuilderLayerError):
    """The directory already has a manifest; nothing was written."""

    exit_status = ExitStatus.USAGE


class InvalidValue(BuilderLayerError, ValueError):
    """An id or title given for the new manifest is not valid there; nothing was written."""

    exit_status = ExitStatus.USAGE


#: The manifest's id pattern (``rra_tools.model._base.Id``), without importing pydantic.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_id(value: str) -> str:
    """``value`` when it is a valid artifact id, else :class:`InvalidValue` with a suggestion.

    >>> check_id("a: b")
    Traceback (most recent call last):
    ...
    rra_tools.builder.init.InvalidValue: artifact id 'a: b' is not valid: use 1-128 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit, e.g. 'a-b'
    """
    if _ID.fullmatch(value) is None:
        raise InvalidValue(f"artifact id {value!r} is not valid: use 1-128 ASCII letters, digits, '.', '_' or '-', "
                           f"starting with a letter or digit, e.g. {_slug(value)!r}")
    return value


def check_title(value: str) -> str:
    """``value`` when it can be a one-line title, else :class:`InvalidValue`."""
    if not value.strip():
        raise InvalidValue("the title is empty; give the artifact a title")
    bad = next((ch for ch in value if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")), None)
    if bad is not None:
        raise InvalidValue(f"title {value!r} holds the control character U+{ord(bad):04X}; a title is one line "
                           "of visible text")
    return value


def schema_modeline() -> str:
    """The first line of a manifest ``rra init`` writes: it points an editor's YAML language
    server at the manifest schema installed with this tool, which resolves offline.

    The schemas' ``$id`` URLs are not served yet (docs/ci.md#editors has the plan), so the line
    names the installed file: its absolute path, or its ``file://`` URI when the path holds a
    space (the language server reads the value up to the first space)."""
    path = schema_path("manifest")
    shown = path.as_uri() if any(ch.isspace() for ch in str(path)) else path.as_posix()
    return f"# yaml-language-server: $schema={shown}\n"


def _quoted(value: str) -> str:
    # A JSON string is a YAML double-quoted scalar: any text (': ', quotes, '#', a leading '&',
    # an id like 2024 or true) stays the exact string given.
    return json.dumps(value, ensure_ascii=False)


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._").lower()
    return (slug or "artifact")[:128]


def scaffold_text(artifact_id: str, title: str, python: str | None = None) -> str:
    """The text of a new rra.yaml: schema-valid, with TODOs where only the author knows the answer."""
    version = python or ".".join(platform.python_version_tuple()[:2])
    return schema_modeline() + f"""\
# A Refined Reproducible Artifact. Fill in the TODOs, then run: rra validate .
rra_version: "{SPEC_VERSION}"
id: {_quoted(artifact_id)}
title: {_quoted(title)}
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
    """Write ``directory/rra.yaml``; raise :class:`AlreadyExists` rather than overwrite a manifest,
    and :class:`InvalidValue` for an id or title the manifest cannot hold."""
    from ..validate.api import find_manifest

    name = directory.resolve().name
    artifact_id = check_id(artifact_id if artifact_id is not None else _slug(name))
    title = check_title(title if title is not None else name)
    existing = find_manifest(directory) if directory.is_dir() else None
    if existing is not None:
        raise AlreadyExists(f"{existing} already exists; nothing was written")
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "rra.yaml"
    text = scaffold_text(artifact_id, title)
    # Exclusive creation: a manifest that appears meanwhile is never overwritten.
    with open(target, "x", encoding="utf-8") as handle:
        handle.write(text)
    return target
