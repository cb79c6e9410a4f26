"""Resolve a manifest's relative paths inside the artifact root, refusing every way out."""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

__all__ = ["MANIFEST_NAMES", "PathIssue", "ResolvedPath", "RootResolver", "lexical_issue", "resolve_inside"]

#: File names looked for, in this order, when an artifact directory is given.
MANIFEST_NAMES = ("rra.yaml", "rra.yml", "rra.json")


class PathIssue(Enum):
    """Why a path cannot be used."""

    ABSOLUTE = "absolute"
    PARENT = "parent"
    SYMLINK_ESCAPE = "symlink-escape"
    MISSING = "missing"
    NOT_REGULAR = "not-regular"
    NOT_DIRECTORY = "not-directory"


@dataclass(frozen=True)
class ResolvedPath:
    """The outcome of resolving one relative path."""

    path: Path | None
    issue: PathIssue | None = None
    detail: str = ""


def lexical_issue(rel: str) -> PathIssue | None:
    """ABSOLUTE or PARENT when ``rel`` leaves the root by its text alone, else None.

    >>> lexical_issue("../data.csv")
    <PathIssue.PARENT: 'parent'>
    """
    if rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":" and rel[0].isalpha()):
        return PathIssue.ABSOLUTE
    if any(part == ".." for part in rel.replace("\\", "/").split("/")):
        return PathIssue.PARENT
    return None


def resolve_inside(root: Path, rel: str, *, kind: str = "file") -> ResolvedPath:
    """Resolve ``rel`` under ``root``; ``kind`` is 'file', 'dir' or 'any'.

    Never follows a path out of the root: symlinks are resolved and the result must stay
    inside the real root. Nothing is opened, so FIFOs and devices are safe to meet.
    """
    return RootResolver(root).resolve(rel, kind=kind)


class RootResolver:
    """:func:`resolve_inside` for many paths under one root.

    The real path of each directory is computed once and shared by every path below it: a
    manifest with 10,000 outputs in a few directories costs one ``lstat`` per path instead of
    one per path component.
    """

    def __init__(self, root: Path | str) -> None:
        self.real_root = os.path.realpath(root)
        self._dirs: dict[str, str] = {"": self.real_root}
        # Prefixes whose lstat failed (missing, below a file, unreadable): it fails for every
        # path below them too, so nothing there can be a symlink and no call is made for them.
        # Outputs of 10,000 launchers under a runs/ folder that does not exist yet cost one lstat.
        self._absent: set[str] = set()

    def real_path(self, rel: str) -> str:
        """The real path of ``rel`` (which must pass :func:`lexical_issue`); it may not exist
        and may lie outside the root when a symlink leads there."""
        real = self.real_root
        prefix = ""
        absent = False
        for part in posixpath.normpath(rel).split("/"):
            if part in (".", ""):
                continue
            prefix = f"{prefix}/{part}" if prefix else part
            cached = self._dirs.get(prefix)
            if cached is None:
                # Everything above ``part`` is resolved already: only a symlink here can move us.
                cached = os.path.join(real, part)
                if absent:
                    self._absent.add(prefix)
                else:
                    try:
                        mode = os.lstat(cached).st_mode
                    except (OSError, ValueError):
                        self._absent.add(prefix)
                    else:
                        if stat.S_ISLNK(mode):
                            cached = os.path.realpath(cached)
                self._dirs[prefix] = cached
            real = cached
            absent = prefix in self._absent
        return real

    def inside(self, real: str) -> bool:
        """Whether the real path ``real`` is the root or below it."""
        return real == self.real_root or real.startswith(self.real_root.rstrip(os.sep) + os.sep)

    def resolve(self, rel: str, *, kind: str = "file") -> ResolvedPath:
        """Like :func:`resolve_inside` under this resolver's root."""
        issue = lexical_issue(rel)
        if issue is not None:
            return ResolvedPath(None, issue)
        real = self.real_path(rel)
        if not self.inside(real):
            return ResolvedPath(None, PathIssue.SYMLINK_ESCAPE, real)
        try:
            info = os.stat(real)
        except FileNotFoundError:
            return ResolvedPath(None, PathIssue.MISSING)
        except OSError as exc:  # a symlink loop, a permission problem
            return ResolvedPath(None, PathIssue.MISSING, exc.strerror or str(exc))
        if kind == "file" and not stat.S_ISREG(info.st_mode):
            return ResolvedPath(None, PathIssue.NOT_REGULAR, _describe(info.st_mode))
        if kind == "dir" and not stat.S_ISDIR(info.st_mode):
            return ResolvedPath(None, PathIssue.NOT_DIRECTORY, _describe(info.st_mode))
        return ResolvedPath(Path(real))


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"
