"""A raw repository as ``rra init`` reads it: its files, and (for a git working tree) its upstream.

In a git working tree, files are listed by ``git ls-files --cached --others --exclude-standard``
so that ignored trees (data, checkpoints, virtual environments: often most of a research
repository) are never walked. The ``git`` command is used rather than dulwich/pygit2 because
neither is a dependency here and every machine that has a repository has git; it is run with a
fixed, small set of arguments, through :mod:`rra_tools.io.safegit`, so that no program the
repository's ``.git/config`` names (``core.fsmonitor``, filter drivers, hooks...) ever runs.

A plain directory (a tarball, a Zenodo archive, a Code Ocean capsule: no ``.git``) is walked
instead, as git would list it: the top-level ``.gitignore`` is honoured when there is one (read
with :class:`rra_tools.io.ignore.IgnoreRules`, gitignore's semantics), and what is never code is
left out whatever it says: version-control metadata, virtual environments (a directory holding
``pyvenv.cfg`` or ``conda-meta``), byte-code caches and tool caches (:data:`SKIPPED_DIRS`).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import ExitStatus
from ...io.ignore import VCS_NAMES, IgnoreRules
from ...io.safegit import GitConfigRefused, run_git
from ..errors import BuilderLayerError

__all__ = ["GitError", "MAX_WALKED", "RawRepo", "SKIPPED_DIRS", "is_draftable", "is_raw_repo",
           "parse_upstream_option", "without_credentials"]

#: Files larger than this are not read for detection (a data file named README.md, ...).
MAX_READ_BYTES = 2 * 1024 * 1024
_COMMIT = re.compile(r"[0-9a-f]{40}")
#: ``scheme://userinfo@`` at the start of a URL (the userinfo may not hold '/', '?' or '#').
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#@]*)@")
#: What a finding's note says when a URL lost its userinfo.
CREDENTIALS_REMOVED = "credentials removed from the origin URL"
#: Directories of a plain directory that hold no code of the repository, whatever its .gitignore
#: says: caches of Python and its tools, and the packages of a build or an editor.
SKIPPED_DIRS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
                          ".ipynb_checkpoints", ".eggs", "node_modules", ".idea", ".vscode"}) | VCS_NAMES
#: Files a plain directory's walk lists at most: an archive holding more is mostly data, and the
#: walk of an untrusted directory must end.
MAX_WALKED = 200_000


class GitError(BuilderLayerError):
    """git is missing or could not describe the repository."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def is_raw_repo(directory: Path) -> bool:
    """Whether ``directory`` is the root of a git working tree (``.git`` directory or file)."""
    return (directory / ".git").exists()


def is_draftable(directory: Path) -> bool:
    """Whether ``rra init`` drafts from ``directory``: a git working tree, or a plain directory
    that holds anything (an empty or missing one gets the blank template)."""
    if is_raw_repo(directory):
        return True
    try:
        with os.scandir(directory) as entries:
            return any(True for _ in entries)
    except OSError:
        return False


def _is_environment(path: str) -> bool:
    """Whether the directory ``path`` is a virtual environment or a conda environment."""
    return os.path.isfile(os.path.join(path, "pyvenv.cfg")) or os.path.isdir(os.path.join(path, "conda-meta"))


def _walk(root: Path) -> tuple[list[str], bool]:
    """The files of a plain directory, as git would list them (see the module docstring), and
    whether the walk stopped at :data:`MAX_WALKED`. Symbolic links are listed, never entered."""
    gitignore = root / ".gitignore"
    rules = IgnoreRules()
    if gitignore.is_file() and not gitignore.is_symlink():
        try:
            rules = IgnoreRules.parse(gitignore.read_bytes()[:MAX_READ_BYTES].decode("utf-8", "replace"))
        except OSError:
            pass
    names: list[str] = []
    stack = [("", str(root))]
    while stack:
        prefix, directory = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue  # an unreadable directory holds nothing detection can read
        for entry in entries:
            rel = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name in SKIPPED_DIRS or rules.ignored(rel, True) or _is_environment(entry.path):
                    continue
                stack.append((rel + "/", entry.path))
            elif not rules.ignored(rel, False):
                names.append(rel)
                if len(names) >= MAX_WALKED:
                    return names, True
    return names, False


def parse_upstream_option(value: str) -> tuple[str, str]:
    """Split ``URL@COMMIT`` (the commit a full 40-hex id), else :class:`GitError`.

    >>> parse_upstream_option("https://example.org/a.git@" + "0" * 40)[1] == "0" * 40
    True
    """
    url, sep, commit = value.rpartition("@")
    if not sep or not url or _COMMIT.fullmatch(commit) is None:
        shown = without_credentials(value)[0]  # an error line must not print a token either
        raise GitError(f"--upstream {shown!r} is not URL@COMMIT with a full 40-hex commit",
                       hint="e.g. --upstream https://github.com/org/repo@<40-hex commit>; "
                            "'git rev-parse HEAD' prints the commit")
    return url, commit


def without_credentials(url: str) -> tuple[str, bool]:
    """``url`` without the user name and password before its host, and whether any was removed.

    A clone URL such as ``https://user:TOKEN@host/repo.git`` carries a secret; what rra writes
    (the manifest, the artifact's remote) or prints must not. An ``ssh://`` user name alone is an
    account, not a secret, and stays; ``git@host:path`` (no scheme) has no password to hold.

    >>> without_credentials("https://alice:ghp_x@github.com/lab/x.git")
    ('https://github.com/lab/x.git', True)
    >>> without_credentials("ssh://git@host/x.git")
    ('ssh://git@host/x.git', False)
    """
    match = _USERINFO.match(url)
    if match is None:
        return url, False
    scheme, userinfo = match.group(1), match.group(2)
    user, has_password, _ = userinfo.partition(":")
    kept = f"{user}@" if scheme.lower().startswith("ssh") and not has_password and user else ""
    if kept == f"{userinfo}@":
        return url, False
    return scheme + kept + url[match.end():], True


def _git(root: Path, *args: str) -> str | None:
    done = _run(root, *args)
    return done.stdout.decode("utf-8", "surrogateescape") if done.returncode == 0 else None


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
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
    return done


def _has_surrogates(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


@dataclass
class RawRepo:
    """The repository root and the files git would show (tracked or untracked, not ignored)."""

    root: Path
    files: list[str] = field(default_factory=list)
    _texts: dict[str, str | None] = field(default_factory=dict, repr=False)
    _index: frozenset[str] = field(default=frozenset(), repr=False)
    _trees: dict[str, ast.Module | None] = field(default_factory=dict, repr=False)
    #: Listed files whose names are not UTF-8, shown with ``\\xNN`` escapes: left out of
    #: ``files`` (a UTF-8 manifest cannot name them), reported by the caller.
    undecodable: list[str] = field(default_factory=list, repr=False)
    #: Whether :meth:`upstream` removed a user name or password from the remote's URL.
    credentials_removed: bool = field(default=False, repr=False)
    #: Whether the root is a git working tree (else a plain directory, walked).
    is_git: bool = True
    #: Whether a plain directory's walk stopped at :data:`MAX_WALKED` files.
    truncated: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self._index = frozenset(self.files)

    @classmethod
    def open(cls, root: Path) -> RawRepo:
        """List ``root``'s files through git (a plain directory: by walking it); :class:`GitError`
        when git cannot."""
        if not is_raw_repo(root):
            walked, truncated = _walk(root)
            return cls._of(root, set(walked), is_git=False, truncated=truncated)
        done = _run(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git cannot list the files of {root}" + (f": {said[0]}" if said else ""),
                           hint="rra reads no system or user git configuration (its safe.directory included: "
                                "the repository is untrusted input); run rra as the repository's owner, or on a "
                                "copy" if "dubious ownership" in " ".join(said) else None)
        listing = done.stdout.decode("utf-8", "surrogateescape")
        return cls._of(root, {name for name in listing.split("\0") if name})

    @classmethod
    def _of(cls, root: Path, names: set[str], *, is_git: bool = True, truncated: bool = False) -> RawRepo:
        # Decoded with surrogateescape (git's output here, os.scandir's names for a walk): a name
        # that is not UTF-8 holds lone surrogates, which no UTF-8 text (the manifest, the output)
        # can carry.
        undecodable = {name for name in names if not name.isascii() and _has_surrogates(name)}
        shown = sorted(name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                       for name in undecodable)
        return cls(root=root, files=sorted(names - undecodable), undecodable=shown, is_git=is_git,
                   truncated=truncated)

    def upstream(self) -> tuple[str | None, str | None]:
        """(URL of the ``origin`` remote or of the only remote, HEAD commit); ``None`` for what git lacks
        (both, for a plain directory). The URL never carries credentials (:func:`without_credentials`);
        ``credentials_removed`` then says some were there."""
        if not self.is_git:
            return None, None
        commit = _git(self.root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
        url = _git(self.root, "remote", "get-url", "origin")
        if url is None:
            remotes = (_git(self.root, "remote") or "").split()
            url = _git(self.root, "remote", "get-url", remotes[0]) if len(remotes) == 1 else None
        clean: str | None = None
        if url and url.strip():
            clean, self.credentials_removed = without_credentials(url.strip())
        return clean, (commit.strip() or None) if commit else None

    def modified(self) -> bool:
        """Whether tracked files differ from HEAD (the commit then does not hold what is read)."""
        if not self.is_git:
            return False
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
