"""An artifact as the environment tools see it: its manifest, its lock, and their digests."""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ExitStatus, RRAError
from ..io.canonical import canonical_digest
from ..io.paths import MANIFEST_NAMES as _MANIFEST_NAMES
from ..model.manifest import Manifest

__all__ = ["Artifact", "ArtifactError", "canonical_digest", "load_artifact", "update_lock_block", "write_atomic"]



class ArtifactError(RRAError):
    """The artifact or its manifest cannot be used (missing, unreadable, invalid)."""

    exit_status = ExitStatus.USAGE


@dataclass(frozen=True)
class Artifact:
    """A loaded artifact: root directory, manifest file, parsed data and model."""

    root: Path
    manifest_path: Path
    data: dict[str, Any]
    manifest: Manifest

    @property
    def digest(self) -> str:
        """SHA-256 of the manifest's canonical JSON (the artifact digest run records carry)."""
        return canonical_digest(self.data)

    def lock_path(self) -> Path | None:
        """Where the manifest's lock file is, or None when the manifest names none; ArtifactError when
        the path leads out of the artifact (absolute, '..', or a symlink pointing outside)."""
        lock = self.manifest.environment.lock
        if lock is None:
            return None
        return self.inside(lock.path)

    def inside(self, rel: str) -> Path:
        """``rel`` under the artifact root; ArtifactError when it leads out of the root."""
        from ..io.paths import PathIssue, resolve_inside

        resolved = resolve_inside(self.root, rel, kind="any")
        if resolved.issue in (PathIssue.ABSOLUTE, PathIssue.PARENT, PathIssue.SYMLINK_ESCAPE):
            raise ArtifactError(f"path {rel!r} leads out of the artifact ({resolved.issue.value})")
        return self.root / rel


def _find(path: Path) -> Path:
    if path.is_dir():
        for name in _MANIFEST_NAMES:
            if (path / name).is_file():
                return path / name
        raise ArtifactError(f"no manifest ({', '.join(_MANIFEST_NAMES)}) in {str(path)!r}")
    if path.is_file():
        return path
    raise ArtifactError(f"no such artifact: {str(path)!r}")


def load_artifact(path: Path) -> Artifact:
    """Load the artifact at ``path`` (a directory or a manifest file); ArtifactError when unusable."""
    from pydantic import ValidationError
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    manifest_path = _find(path)
    try:
        text = manifest_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"cannot read {str(manifest_path)!r}: {exc}") from None
    try:
        data = YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        raise ArtifactError(f"{manifest_path}: invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ArtifactError(f"{manifest_path}: the manifest is not a mapping")
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/" + "/".join(str(p) for p in first["loc"])
        raise ArtifactError(f"{manifest_path}: invalid manifest at {where}: {first['msg']} "
                            f"(run 'rra validate' for every problem)") from None
    return Artifact(root=manifest_path.parent, manifest_path=manifest_path, data=data, manifest=manifest)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and a rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.chmod(tmp, path.stat().st_mode & 0o777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def update_lock_block(manifest_path: Path, rel_path: str, fmt: str, sha256: str) -> None:
    """Set ``environment.lock`` {path, format, sha256} in the manifest, keeping the rest as written."""
    from ruamel.yaml import YAML

    text = manifest_path.read_text(encoding="utf-8")
    if manifest_path.suffix == ".json":
        data = json.loads(text)
        data.setdefault("environment", {})["lock"] = {"path": rel_path, "format": fmt, "sha256": sha256}
        write_atomic(manifest_path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        return
    edited = _edit_in_place(text, {"path": rel_path, "format": fmt, "sha256": sha256})
    if edited is not None:
        write_atomic(manifest_path, edited.encode("utf-8"))
        return
    # No lock block to edit in place: add one through a round trip (comments are kept, layout may move).
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
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
    from ruamel.yaml import YAML

    document = YAML(typ="rt").load(text)
    try:
        lock = document["environment"]["lock"]
        positions = {key: lock.lc.value(key) for key in values}
    except (KeyError, TypeError, AttributeError):
        return None
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
    check = YAML(typ="safe", pure=True).load(result)
    lock_after = check.get("environment", {}).get("lock", {}) if isinstance(check, dict) else {}
    if any(str(lock_after.get(k)) != v for k, v in values.items()):
        return None
    return result
