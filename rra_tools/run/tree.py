"""What a run changed in the artifact tree outside the places it may write.

A launcher may write its declared outputs and nothing else inside the artifact: anything else
(a cache next to the code, a patched config, a deleted file) makes the next run differ from
this one and the record untruthful. The executor takes a snapshot of file metadata before the
run and compares it afterwards; nothing is read or hashed, so the cost is one ``lstat`` per file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

__all__ = ["OutputState", "Snapshot", "output_state", "stray_writes", "take_snapshot"]

#: rel path -> (size, mtime in ns, inode, mode)
Snapshot = dict[str, tuple[int, int, int, int]]

#: rel path below an output ('' for the output itself) -> (size, mtime ns, ctime ns, inode, mode)
OutputState = dict[str, tuple[int, int, int, int, int]]

#: Version-control metadata is not the artifact's content (git touches its index on status).
_SKIPPED_NAMES = frozenset({".git", ".hg", ".svn"})


def _allowed(rel: str, allowed: tuple[str, ...]) -> bool:
    return any(rel == a or rel.startswith(a + "/") for a in allowed)


def _walk(root: str, skip: Callable[[str, str], bool]) -> Iterator[tuple[str, os.stat_result, bool]]:
    """(relative path, lstat, is a directory) of every entry under ``root``, links not followed;
    an entry for which ``skip(rel, name)`` holds is left out with everything below it, and an
    entry that vanishes or cannot be read is passed over (the tree may change while walked)."""
    stack = [("", root)]
    while stack:
        rel_dir, directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if skip(rel, entry.name):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir:
                stack.append((rel, entry.path))
            yield rel, info, is_dir


def take_snapshot(root: Path, allowed: Iterable[str]) -> Snapshot:
    """Metadata of every file and symlink under ``root`` outside the ``allowed`` relative paths
    (an allowed path covers everything below it)."""
    allowed_paths = tuple(a.strip("/") for a in allowed if a.strip("/"))
    out: Snapshot = {}
    skip = lambda rel, name: name in _SKIPPED_NAMES or _allowed(rel, allowed_paths)  # noqa: E731
    for rel, info, is_dir in _walk(str(root), skip):
        if not is_dir:
            out[rel] = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)
    return out


def stray_writes(before: Snapshot, after: Snapshot) -> list[str]:
    """Sorted relative paths created, changed or removed between the two snapshots.

    >>> stray_writes({"a": (1, 1, 1, 0), "b": (1, 1, 2, 0)}, {"a": (2, 5, 1, 0), "c": (0, 9, 3, 0)})
    ['a', 'b', 'c']
    """
    changed = {rel for rel, meta in after.items() if before.get(rel) != meta}
    removed = set(before) - set(after)
    return sorted(changed | removed)


def output_state(path: Path) -> OutputState | None:
    """Metadata of a declared output: the file, or the directory and everything under it
    (directories included, links not followed); None when nothing is there.

    Two states differ exactly when something in the output was created, changed, renamed or
    removed in between. The change time is part of it: a tool that restores an old
    modification time (``cp -p``, an archive extracted with its times) still changes it.
    """
    try:
        info = os.lstat(path)
    except OSError:
        return None
    out: OutputState = {"": (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)}
    if not os.path.isdir(path) or os.path.islink(path):
        return out
    for rel, meta, _is_dir in _walk(str(path), lambda _rel, _name: False):
        out[rel] = (meta.st_size, meta.st_mtime_ns, meta.st_ctime_ns, meta.st_ino, meta.st_mode)
    return out
