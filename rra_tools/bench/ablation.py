"""Ablations: a refined artifact without some of its parts, made from a copy of it.

Each part (:class:`~rra_tools.model.taskset.Part`) has one transformation, a function of the
copied artifact's directory and its manifest data (the ``rra.json`` about to be written there),
which it changes in place and returns what it removed (:class:`Removal`); everything else stays
byte for byte as it was. :func:`ablate` applies several, in the canonical order of the parts
(repairs, lock, launchers, guide), and :func:`transformed_digest` is the tree digest of the
result, recorded in the cell's results. What each one does (docs/bench.md#ablations):

- ``repairs``: the code goes back to the upstream commit: the patch series (``code.patches``)
  is applied in reverse, last patch first, by ``git apply -R`` (the builder's patch machinery,
  the same that applies the series forward); then the patch files, ``code.patches`` and the
  change records that name one of the patches go. The rest (manifest, lock, launchers, guide,
  data) is kept. A patch that does not reverse cleanly (the artifact's code is not upstream plus
  the series) is a BenchError naming it. An artifact without a patch series loses nothing.
- ``lock``: the lock file ``environment.lock.path`` and the field ``environment.lock``.
- ``launchers``: the manifest's ``launchers`` and each claim's ``launcher``. The manifest then
  no longer loads as an RRA manifest (both are required): ``rra run`` refuses it, and the
  reproducer has to find how the code is run (the guide, when it is kept, still says).
- ``guide``: the guide file (``guide.path``, default ``REPRODUCE.md``) and the field ``guide``.

The transformations never touch run records or outputs (a refined workspace has none) and never
read the reference values (the manifest they get holds placeholders).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..builder.patches import apply_patch, patched_paths, tree_digest, tree_entries
from ..guide_text import guide_path
from ..io.paths import PathIssue, resolve_inside
from ..model.taskset import PARTS
from .errors import BenchError

__all__ = ["TRANSFORMATIONS", "Removal", "ablate", "transformed_digest", "without_guide", "without_launchers",
           "without_lock", "without_repairs"]


@dataclass
class Removal:
    """What one transformation removed: files deleted, files reverted to the upstream commit, and
    manifest fields dropped (JSON pointers)."""

    part: str
    files: list[str] = field(default_factory=list)
    reverted: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)


Manifest = MutableMapping[str, Any]


def _inside(root: Path, rel: str) -> Path:
    # The copy keeps the artifact's symbolic links: never delete or patch anything a path would
    # reach outside it.
    resolved = resolve_inside(root, rel, kind="any")
    if resolved.issue not in (None, PathIssue.MISSING):
        raise BenchError(f"the manifest names {rel!r}, which is not a file inside the artifact")
    return root / rel


def _delete(root: Path, rel: str, removal: Removal) -> None:
    path = _inside(root, rel)
    if path.is_file() or path.is_symlink():
        path.unlink()
        removal.files.append(rel)


def without_repairs(root: Path, manifest: Manifest) -> Removal:
    """The code at the upstream commit: the patch series reversed (see the module docstring)."""
    removal = Removal("repairs")
    code = manifest.get("code")
    series = list(code.get("patches") or []) if isinstance(code, MutableMapping) else []
    if not series:
        return removal
    reverted: list[str] = []
    for entry in reversed(series):
        rel = str(entry["path"])
        patch = _inside(root, rel)
        if not patch.is_file():
            raise BenchError(f"patch {rel} of code.patches is not in the artifact; the repairs cannot be removed")
        problem = apply_patch(root, patch, reverse=True)
        if problem is not None:
            raise BenchError(f"patch {rel} does not reverse cleanly on the artifact's code (the code is not the "
                             f"upstream commit with the series applied): {problem}",
                             "check the series with 'rra change verify' in the artifact")
        reverted.extend(patched_paths(root, patch))
    names = {str(e["path"]) for e in series}
    for rel in sorted(names):
        _delete(root, rel, removal)
    removal.reverted = sorted(set(reverted) - set(removal.files))
    assert isinstance(code, MutableMapping)
    del code["patches"]
    removal.fields.append("/code/patches")
    changes = manifest.get("changes")
    if isinstance(changes, list):
        kept = [c for c in changes if not (isinstance(c, MutableMapping) and c.get("patch") in names)]
        if len(kept) != len(changes):
            removal.fields += [f"/changes/{i}" for i, c in enumerate(changes) if c not in kept]
            if kept:
                manifest["changes"] = kept
            else:
                del manifest["changes"]
    # A series kept under patches/ leaves that folder empty: it goes too (git keeps no empty folder).
    for folder in sorted({os.path.dirname(n) for n in names if os.path.dirname(n)}, key=len, reverse=True):
        path = root / folder
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return removal


def without_lock(root: Path, manifest: Manifest) -> Removal:
    """No environment lock: its file and ``environment.lock``."""
    removal = Removal("lock")
    environment = manifest.get("environment")
    lock = environment.get("lock") if isinstance(environment, MutableMapping) else None
    if isinstance(lock, MutableMapping):
        assert isinstance(environment, MutableMapping)
        if isinstance(lock.get("path"), str):
            _delete(root, lock["path"], removal)
        del environment["lock"]
        removal.fields.append("/environment/lock")
    return removal


def without_launchers(root: Path, manifest: Manifest) -> Removal:
    """No launchers: the manifest's ``launchers`` and each claim's ``launcher``."""
    removal = Removal("launchers")
    if "launchers" in manifest:
        del manifest["launchers"]
        removal.fields.append("/launchers")
    for i, claim in enumerate(manifest.get("claims") or []):
        if isinstance(claim, MutableMapping) and "launcher" in claim:
            del claim["launcher"]
            removal.fields.append(f"/claims/{i}/launcher")
    return removal


def without_guide(root: Path, manifest: Manifest) -> Removal:
    """No reproduction guide: its file and ``guide``."""
    removal = Removal("guide")
    _delete(root, guide_path(manifest), removal)
    if "guide" in manifest:
        del manifest["guide"]
        removal.fields.append("/guide")
    return removal


#: Part -> its transformation, in the canonical order of the parts.
TRANSFORMATIONS: dict[str, Callable[[Path, Manifest], Removal]] = {
    "repairs": without_repairs, "lock": without_lock, "launchers": without_launchers, "guide": without_guide}
assert tuple(TRANSFORMATIONS) == PARTS


def ablate(root: Path, manifest: Manifest, parts: Iterable[str]) -> list[Removal]:
    """Remove ``parts`` from the artifact copied at ``root`` whose manifest data is ``manifest``
    (changed in place; the caller writes it), in canonical order; what each removed."""
    wanted = set(parts)
    return [transform(root, manifest) for part, transform in TRANSFORMATIONS.items() if part in wanted]


def transformed_digest(root: Path) -> str:
    """The tree digest (``rra_tools.builder.patches``) of every file under ``root``."""
    return tree_digest(tree_entries(root, ()))
