"""The environment tools' view of an artifact: its pydantic model and its manifest's lock block.

The artifact itself is the one :class:`rra_tools.io.artifact.Artifact`, loaded by
:func:`rra_tools.io.artifact.load_artifact`; the environment checks and the SBOM read more of
the manifest than the run path's plain view carries, so :func:`manifest_model` builds the
pydantic model once per artifact.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..io.artifact import Artifact, ArtifactError
from ..io.atomic import write_atomic
from ..io.read.bounded_yaml import YamlBoundsError, check_yaml

if TYPE_CHECKING:
    from ..model.manifest import Manifest

__all__ = ["manifest_model", "update_lock_block"]


def manifest_model(artifact: Artifact) -> Manifest:
    """The artifact's manifest as the pydantic model (built once per artifact); ArtifactError
    when the model refuses what the schema let through."""
    model: Manifest | None = artifact.memo.get("model")
    if model is None:
        from pydantic import ValidationError

        from ..model.manifest import Manifest

        try:
            model = Manifest.model_validate(artifact.data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = "/" + "/".join(str(p) for p in first["loc"])
            raise ArtifactError(f"{artifact.manifest_path}: invalid manifest at {where}: {first['msg']} "
                                f"(run 'rra validate' for every problem)") from None
        artifact.memo["model"] = model
    return model


def update_lock_block(manifest_path: Path, rel_path: str, fmt: str, sha256: str) -> None:
    """Set ``environment.lock`` {path, format, sha256} in the manifest, keeping the rest as written."""
    from ruamel.yaml import YAML

    from ..io.read.manifest import load_manifest_bytes

    text = manifest_path.read_text(encoding="utf-8")
    if manifest_path.suffix == ".json":
        data = dict(load_manifest_bytes(text.encode("utf-8")).data)
        data.setdefault("environment", {})["lock"] = {"path": rel_path, "format": fmt, "sha256": sha256}
        write_atomic(manifest_path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        return
    edited = _edit_in_place(text, {"path": rel_path, "format": fmt, "sha256": sha256})
    if edited is not None:
        write_atomic(manifest_path, edited.encode("utf-8"))
        return
    # No lock block to edit in place: add one through ruamel's round trip, the one reader here
    # that writes YAML back with its comments (the layout may move).
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    try:
        check_yaml(text, str(manifest_path))  # ruamel's reader has no bounds of its own
    except YamlBoundsError as exc:
        raise ArtifactError(f"cannot record the lock: {exc}") from None
    document = yaml.load(text)
    environment = document.get("environment")
    if environment is None:
        raise ArtifactError(f"{manifest_path}: the manifest has no 'environment' block to record the lock in")
    lock = environment.get("lock")
    if lock is None:
        from ruamel.yaml.comments import CommentedMap

        lock = CommentedMap()
        environment["lock"] = lock
    lock["path"] = rel_path
    lock["format"] = fmt
    lock["sha256"] = sha256
    from io import StringIO

    out = StringIO()
    yaml.dump(document, out)
    write_atomic(manifest_path, out.getvalue().encode("utf-8"))


_SCALAR = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#]+)""")


def _edit_in_place(text: str, values: dict[str, str]) -> str | None:
    """Replace the scalar values of ``environment.lock``'s keys in the text itself, so that nothing
    else in the file changes; None when the block or a key is missing or not a one-line scalar."""
    from ..io.errors import LoadError
    from ..io.read.manifest import load_manifest_bytes

    try:
        loaded = load_manifest_bytes(text.encode("utf-8"), located=True)
        lock = loaded.data["environment"]["lock"]
        if not all(isinstance(lock.get(key), str) for key in values):
            return None
    except (LoadError, KeyError, TypeError, AttributeError):
        return None
    positions = {}
    for key in values:
        where = loaded.position(("environment", "lock", key))
        if where is None:
            return None
        positions[key] = (where.line - 1, where.column - 1)
    lines = text.splitlines(keepends=True)
    # Right to left within a line, bottom to top across lines, so earlier positions stay valid.
    for key, (line, col) in sorted(positions.items(), key=lambda kv: kv[1], reverse=True):
        if line >= len(lines):
            return None
        match = _SCALAR.match(lines[line], col)
        if match is None:
            return None
        old = match.group(1)
        quote = old[0] if old[0] in "\"'" else ""
        new = f"{quote}{values[key]}{quote}" if quote else values[key]
        lines[line] = lines[line][: match.start(1)] + new + lines[line][match.end(1):]
    result = "".join(lines)
    try:
        check = load_manifest_bytes(result.encode("utf-8")).data
    except LoadError:
        return None
    lock_after = check.get("environment", {}).get("lock", {}) if isinstance(check, dict) else {}
    if any(str(lock_after.get(k)) != v for k, v in values.items()):
        return None
    return result
