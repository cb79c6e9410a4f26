"""Resolve a manifest's relative paths inside the artifact root, refusing every way out."""

from __future__ import annotations

import os
import posixpath
import stat
from enum import Enum
from pathlib import Path

from ..plain import Frozen

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


#: Where a relative path leads: its real path, its normalised text, and whether its lstat (or
#: that of a folder above it) failed.
_Place = tuple[str, str, bool]


class ResolvedPath(Frozen):
    """The outcome of resolving one relative path."""

    __slots__ = ("path", "issue", "detail")

    def __init__(self, path: Path | None, issue: PathIssue | None = None, detail: str = "") -> None:
        self.path, self.issue, self.detail = path, issue, detail


def lexical_issue(rel: str) -> PathIssue | None:
    """ABSOLUTE or PARENT when ``rel`` leaves the root by its text alone, else None.

    >>> lexical_issue("../data.csv")
    <PathIssue.PARENT: 'parent'>
    """
    if rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":" and rel[0].isalpha()):
        return PathIssue.ABSOLUTE
    # No '..' anywhere (most paths) means no part is '..': the split is skipped.
    if ".." in rel and any(part == ".." for part in rel.replace("\\", "/").split("/")):
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
    one per path component. The folder part of each path (its text before the last ``/``) is
    remembered too, so a path whose folder was met before costs one step, not one per component.
    """

    def __init__(self, root: Path | str) -> None:
        self.real_root = os.path.realpath(root)
        self._below_root = self.real_root.rstrip(os.sep) + os.sep
        # The place of every relative path met, keyed by its normalised text (the walk's
        # prefixes) and by the text of each folder part as written. A prefix whose lstat failed
        # (missing, below a file, unreadable) is marked: it fails for every path below it too,
        # so nothing there can be a symlink and no call is made for them. Outputs of 10,000
        # launchers under a runs/ folder that does not exist yet cost one lstat.
        self._places: dict[str, _Place] = {"": (self.real_root, "", False)}

    def real_path(self, rel: str) -> str:
        """The real path of ``rel`` (which must pass :func:`lexical_issue`); it may not exist
        and may lie outside the root when a symlink leads there."""
        if ".." in rel:
            # Not a path of the manifest's (lexical_issue refuses it): the plain walk, as always.
            return self._walk(posixpath.normpath(rel))[0]
        return self._locate(rel)[0]

    def leads_out(self, rel: str) -> str | None:
        """The real path of ``rel`` (which must pass :func:`lexical_issue`) when it lies outside
        the root, else None: :meth:`real_path` and :meth:`inside` in one call.

        A path below a folder met before that is missing inside the root stays inside (no
        symlink can be below it, and no part of the path is '..'): it is answered from that
        folder (its first part, or the nearest one remembered), without a step.
        """
        if ".." in rel:
            real = self.real_path(rel)
            return None if self.inside(real) else real
        # The first part first: outputs of 10,000 launchers under one missing runs/ folder.
        place = self._places.get(rel.partition("/")[0])
        if place is None or not place[2]:
            folder = rel
            while True:  # ends: "" (the root) is always known
                folder = folder.rpartition("/")[0]
                place = self._places.get(folder)
                if place is not None:
                    break
            if place[2] and self.inside(place[0]):
                return None
            # On from that folder (its place is that of its text, whichever key held it).
            head, _, tail = rel.rpartition("/")
            if len(head) > len(folder):
                for part in head[len(folder):].split("/"):
                    if part not in (".", ""):
                        place = self._step(place, part)
                self._places[head] = place
            real = place[0] if tail in ("", ".") else self._step(place, tail)[0]
        elif self.inside(place[0]):
            return None
        else:
            real = self._locate(rel)[0]
        return None if self.inside(real) else real

    def _locate(self, rel: str) -> _Place:
        head, _, tail = rel.rpartition("/")
        place = self._places.get(head)
        if place is None:
            place = self._places[head] = self._walk(head)
        return place if tail in ("", ".") else self._step(place, tail)

    def _walk(self, path: str) -> _Place:
        # Iterative (a hostile path may have thousands of parts); '.' and empty parts are
        # skipped, as posixpath.normpath drops them.
        place = self._places[""]
        for part in path.split("/"):
            if part not in (".", ""):
                place = self._step(place, part)
        return place

    def _step(self, place: _Place, part: str) -> _Place:
        """The place of ``part`` in the folder at ``place``."""
        real, prefix, absent = place
        prefix = f"{prefix}/{part}" if prefix else part
        known = self._places.get(prefix)
        if known is not None:
            return known
        # Everything above ``part`` is resolved already: only a symlink here can move us.
        real = real + part if real.endswith("/") else f"{real}/{part}"  # os.path.join, without its checks
        if not absent:
            try:
                mode = os.lstat(real).st_mode
            except (OSError, ValueError):
                absent = True
            else:
                if stat.S_ISLNK(mode):
                    real = os.path.realpath(real)
        known = self._places[prefix] = (real, prefix, absent)
        return known

    def inside(self, real: str) -> bool:
        """Whether the real path ``real`` is the root or below it."""
        return real == self.real_root or real.startswith(self._below_root)

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
