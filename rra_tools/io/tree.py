"""The entries of an artifact directory that a pack holds: the one walk of ``rra pack`` and of
``rra validate DIR``.

Both must agree on what belongs to the artifact (what ``.rraignore`` and version-control
metadata leave out), or validation would pass a tree that packing then refuses, or judge files
that are never shipped. The walk never leaves the root: a symbolic link is yielded as a link and
never entered, whatever it points at, and the ignore file is read only when it resolves inside
the root (one that leads out is itself a link that escapes, which both callers report).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

from .ignore import IGNORE_FILE, VCS_NAMES, IgnoreRules
from .paths import RootResolver

__all__ = ["ignore_rules", "walk_tree"]


def ignore_rules(root: Path) -> IgnoreRules:
    """The rules of ``root``'s ``.rraignore``; none when it is missing, not a regular file, or
    leads out of the root."""
    resolved = RootResolver(root).resolve(IGNORE_FILE, kind="file")
    if resolved.path is None:
        return IgnoreRules()
    return IgnoreRules.parse(resolved.path.read_text(encoding="utf-8", errors="replace"))


def walk_tree(root: Path, *, skip: Collection[Path] = (), rules: IgnoreRules | None = None,
              unreadable: Callable[[str, OSError], None] | None = None) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """``(relative POSIX path, entry)`` for every entry under ``root`` that is packed.

    Directories are yielded before what they hold, each directory's entries in name order; a
    directory in ``skip`` (real paths, e.g. a layout being written inside the root) is left out
    with everything below it, as is what ``rules`` (by default the root's ``.rraignore``) or
    :data:`VCS_NAMES` exclude. Entries are not judged: names that are not UTF-8, FIFOs and links
    are yielded for the caller to refuse or report. A directory that cannot be listed raises
    its OSError, or, with ``unreadable``, is passed to it (relative path, error) and skipped.
    """
    if rules is None:
        rules = ignore_rules(root)
    stack = [("", str(root))]
    while stack:
        prefix, directory = stack.pop()
        try:
            with os.scandir(directory) as it:
                items = sorted(it, key=lambda d: d.name)
        except OSError as exc:
            if unreadable is None or not prefix:
                raise
            unreadable(prefix.rstrip("/"), exc)
            continue
        for item in items:
            if item.name in VCS_NAMES:
                continue
            rel = f"{prefix}{item.name}"
            is_dir = item.is_dir(follow_symlinks=False)
            if (is_dir and skip and Path(item.path) in skip) or rules.ignored(rel, is_dir):
                continue
            yield rel, item
            if is_dir:
                stack.append((rel + "/", item.path))
