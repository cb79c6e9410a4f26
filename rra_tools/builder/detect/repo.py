"""A raw repository as ``rra init`` reads it: git's view of its files and of its upstream.

Files are listed by ``git ls-files --cached --others --exclude-standard`` so that ignored trees
(data, checkpoints, virtual environments: often most of a research repository) are never walked.
The ``git`` command is used rather than dulwich/pygit2 because neither is a dependency here and
every machine that has a repository has git; it is run with a fixed, small set of arguments,
through :mod:`rra_tools.io.safegit`, so that no program the repository's ``.git/config`` names
(``core.fsmonitor``, filter drivers, hooks...) ever runs.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import ExitStatus, RRAError
from ...io.safegit import GitConfigRefused, run_git

__all__ = ["GitError", "RawRepo", "is_raw_repo", "parse_upstream_option"]

#: Files larger than this are not read for detection (a data file named README.md, ...).
MAX_READ_BYTES = 2 * 1024 * 1024
_COMMIT = re.compile(r"[0-9a-f]{40}")


class GitError(RRAError):
    """git is missing or could not describe the repository."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def is_raw_repo(directory: Path) -> bool:
    """Whether ``directory`` is the root of a git working tree (``.git`` directory or file)."""
    return (directory / ".git").exists()


def parse_upstream_option(value: str) -> tuple[str, str]:
    """Split ``URL@COMMIT`` (the commit a full 40-hex id), else :class:`GitError`.

    >>> parse_upstream_option("https://example.org/a.git@" + "0" * 40)[1] == "0" * 40
    True
    """
    url, sep, commit = value.rpartition("@")
    if not sep or not url or _COMMIT.fullmatch(commit) is None:
        raise GitError(f"--upstream {value!r} is not URL@COMMIT with a full 40-hex commit",
                       hint="e.g. --upstream https://github.com/org/repo@<40-hex commit>; "
                            "'git rev-parse HEAD' prints the commit")
    return url, commit


def _git(root: Path, *args: str) -> str | None:
    git = shutil.which("git")
    if git is None:
        raise GitError("git is not installed; rra init reads the repository's files and commit through git",
                       hint="install git, or run 'rra init' on a directory without .git for a blank template")
    try:
        # The repository is untrusted: run_git never runs a program its configuration names.
        done = run_git(args, cwd=root, git=git, timeout=120)
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish in {root} within 120 s") from None
    except GitConfigRefused as exc:
        raise GitError(str(exc), exc.hint) from None
    return done.stdout.decode("utf-8", "surrogateescape") if done.returncode == 0 else None


@dataclass
class RawRepo:
    """The repository root and the files git would show (tracked or untracked, not ignored)."""

    root: Path
    files: list[str] = field(default_factory=list)
    _texts: dict[str, str | None] = field(default_factory=dict, repr=False)
    _index: frozenset[str] = field(default=frozenset(), repr=False)
    _trees: dict[str, ast.Module | None] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._index = frozenset(self.files)

    @classmethod
    def open(cls, root: Path) -> RawRepo:
        """List ``root``'s files through git; :class:`GitError` when git cannot."""
        listing = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        if listing is None:
            raise GitError(f"git cannot list the files of {root}")
        files = sorted({name for name in listing.split("\0") if name})
        return cls(root=root, files=files)

    def upstream(self) -> tuple[str | None, str | None]:
        """(URL of the ``origin`` remote or of the only remote, HEAD commit); ``None`` for what git lacks."""
        commit = _git(self.root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
        url = _git(self.root, "remote", "get-url", "origin")
        if url is None:
            remotes = (_git(self.root, "remote") or "").split()
            url = _git(self.root, "remote", "get-url", remotes[0]) if len(remotes) == 1 else None
        return (url.strip() or None) if url else None, (commit.strip() or None) if commit else None

    def modified(self) -> bool:
        """Whether tracked files differ from HEAD (the commit then does not hold what is read)."""
        # Submodules are left out: git would run in them, under configurations not read here.
        status = _git(self.root, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all")
        return bool(status and status.strip())

    def has(self, name: str) -> bool:
        """Whether git lists ``name`` (a path relative to the root)."""
        return name in self._index

    def text(self, name: str) -> str | None:
        """The text of a listed file (UTF-8, undecodable bytes replaced), or ``None`` if it is absent,
        not a regular file inside the root, or too large to be a file worth reading."""
        if name in self._texts:
            return self._texts[name]
        text: str | None = None
        if self.has(name):
            path = self.root / name
            try:
                # A symlink could point out of the repository: detection reads only regular files.
                if not path.is_symlink() and path.is_file() and path.stat().st_size <= MAX_READ_BYTES:
                    text = path.read_bytes().decode("utf-8", errors="replace")
            except OSError:
                text = None
        self._texts[name] = text
        return text

    def tree(self, name: str) -> ast.Module | None:
        """The parsed Python source of a listed file (parsed once, never run), or ``None``."""
        if name not in self._trees:
            text = self.text(name)
            tree: ast.Module | None = None
            if text is not None:
                try:
                    tree = ast.parse(text, filename=name)
                except (SyntaxError, ValueError, MemoryError, RecursionError):
                    tree = None
            self._trees[name] = tree
        return self._trees[name]

    def first(self, *names: str) -> str | None:
        """The first of ``names`` that is listed (case-insensitively for the file name)."""
        lowered = {name.lower(): name for name in self.files if "/" not in name}
        for name in names:
            if self.has(name):
                return name
            found = lowered.get(name.lower())
            if found is not None:
                return found
        return None
