"""Patch series against the upstream commit: git plumbing and the tree digest.

Layout this module assumes (documented in ``docs/builder.md``): the artifact directory is a git
work tree (its root is the repository's top level) holding the upstream repository's history,
so ``code.upstream.commit`` is an object of that repository; the repairs are made in its working
tree, and the artifact's own files (the manifest, ``patches/``, the run records, the lock file,
the guide) sit beside the code. A patch series is computed from trees, never from the user's
index or HEAD: a private index file (``GIT_INDEX_FILE``) is filled with the upstream commit and
the patches already recorded, so nothing the user staged, committed or stashed changes it.

Why git through subprocess rather than a library: the patches must be exactly what ``git apply``
(the tool reviewers use, and the one the spec names) accepts, binary files and modes included,
and the artifact is a git repository anyway; dulwich writes no binary diffs and would be a new
dependency for one command. Every call pins the options that user configuration could change
(prefixes, renames, colour, external diff drivers) so the same trees give the same bytes.

The tree digest (:func:`tree_digest`) is defined here: for every regular file or symlink of the
code, sorted by the UTF-8 bytes of its ``/``-separated path, the line
``<mode> <sha256> <path>\\0`` where mode is ``100644``, ``100755`` (any execute bit) or
``120000`` (symlink; the digest is over the link's target text); the tree digest is the SHA-256
of the concatenated lines. Directories are not entries (git does not keep empty ones). The
artifact's own files (:func:`own_paths`) and ``.git`` are excluded on both sides.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ExitStatus
from ..io.safegit import GitConfigRefused, run_git
from .errors import BuilderLayerError

__all__ = ["GitError", "TreeEntry", "apply_patch", "checkout_commit", "diff_trees", "git", "index_tree", "own_paths",
           "patched_paths", "repository_root", "tree_digest", "tree_entries", "work_tree_entries"]

#: Options that pin what user configuration could change in a diff's bytes.
DIFF_OPTIONS = ("--no-ext-diff", "--no-color", "--no-renames", "--binary", "--full-index",
                "--src-prefix=a/", "--dst-prefix=b/")


class GitError(BuilderLayerError):
    """git is missing, or a git command on the artifact failed."""

    exit_status = ExitStatus.FAILED

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def git(args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None, stdin: bytes | None = None,
        check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd`` (through :func:`rra_tools.io.safegit.run_git`: no program the
    repository's configuration names ever runs); GitError (with git's message) when it fails and
    ``check``."""
    command = ["-c", "core.quotepath=true", "-c", "diff.noprefix=false", *args]
    try:
        done = run_git(command, cwd=cwd, env=env, stdin=stdin)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH", "install git; change records are git patches") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish in {cwd} within 600 s") from None
    except GitConfigRefused as exc:
        raise GitError(str(exc), exc.hint) from None
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
        raise GitError(f"git {args[0]} failed in {cwd}: {message}")
    return done


def repository_root(root: Path) -> Path:
    """``root`` when it is the top level of a git work tree, else GitError saying what to do."""
    done = git(["rev-parse", "--show-toplevel"], cwd=root, check=False)
    top = done.stdout.decode().strip()
    if done.returncode != 0 or not top:
        raise GitError(f"{root} is not a git checkout",
                       "the artifact directory must be a clone of the upstream repository with the repairs "
                       "in its working tree (see docs/builder.md)")
    if Path(top).resolve() != root.resolve():
        raise GitError(f"{root} is inside the git repository {top} but is not its top level",
                       "put the manifest at the root of the upstream checkout")
    return root


def require_commit(root: Path, commit: str, url: str) -> None:
    """GitError unless ``commit`` is a commit object of the repository at ``root``."""
    done = git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=root, check=False)
    if done.returncode != 0:
        raise GitError(f"the upstream commit {commit!r} is not in the repository at {root}",
                       f"fetch it first: git -C {root} fetch {url} {commit}")


def own_paths(manifest_name: str, data: Mapping[str, Any]) -> tuple[str, ...]:
    """Paths (files or directories, relative, no trailing slash) that belong to the artifact and
    not to the code: the manifest, ``patches``, the run-record directory, the lock file, the
    guide, the review directory ``.rra``, the pack's ``.rraignore`` and the launchers' declared
    outputs."""
    paths = [manifest_name, "patches", ".rra", ".rraignore"]
    evidence = data.get("evidence")
    runs = evidence.get("run_records") if isinstance(evidence, Mapping) else None
    paths.append(runs if isinstance(runs, str) else "runs")
    environment = data.get("environment")
    lock = environment.get("lock") if isinstance(environment, Mapping) else None
    if isinstance(lock, Mapping) and isinstance(lock.get("path"), str):
        paths.append(lock["path"])
    guide = data.get("guide")
    if isinstance(guide, Mapping) and isinstance(guide.get("path"), str):
        paths.append(guide["path"])
    paths.extend(_declared_outputs(data))
    return tuple(dict.fromkeys(p.strip("/").removeprefix("./") for p in paths if p.strip("/")))


def _declared_outputs(data: Mapping[str, Any]) -> list[str]:
    """The launchers' declared outputs: what a run writes is not code, so a build's runs do not
    change the code the patch series must explain. A template (``results/{seed}.csv``) stands
    for the directory before its first placeholder; one that starts with a placeholder, or leads
    out of the artifact, stands for nothing. (Output paths are relative to the artifact root.)"""
    found: list[str] = []
    for launcher in data.get("launchers") or []:
        if not isinstance(launcher, Mapping):
            continue
        for output in launcher.get("outputs") or []:
            path = output.get("path") if isinstance(output, Mapping) else None
            if not isinstance(path, str):
                continue
            literal = path.split("{", 1)[0]
            if "{" in path:
                literal = literal.rsplit("/", 1)[0] if "/" in literal else ""
            parts = [part for part in literal.split("/") if part not in ("", ".")]
            if parts and ".." not in parts:
                found.append("/".join(parts))
    return found


def _excluded(path: str, own: Sequence[str]) -> bool:
    return path == ".git" or path.startswith(".git/") or any(path == o or path.startswith(f"{o}/") for o in own)


def exclude_pathspecs(own: Sequence[str]) -> list[str]:
    """git pathspecs that leave the artifact's own files out of ``git add``."""
    return [f":(exclude,literal){path}" for path in own]


@dataclass(frozen=True)
class TreeEntry:
    """One file of a code tree: git-style mode and the SHA-256 of its content (or link target)."""

    mode: str
    sha256: str


def _entry(path: Path) -> TreeEntry | None:
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return TreeEntry("120000", hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest())
    if not stat.S_ISREG(info.st_mode):
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return TreeEntry("100755" if info.st_mode & 0o111 else "100644", digest.hexdigest())


def tree_entries(directory: Path, own: Sequence[str]) -> dict[str, TreeEntry]:
    """Every file and symlink under ``directory`` (a plain checkout), minus ``own`` and ``.git``."""
    entries: dict[str, TreeEntry] = {}

    def walk(folder: Path, prefix: str) -> Iterator[tuple[str, Path]]:
        with os.scandir(folder) as listing:
            for item in listing:
                rel = f"{prefix}{item.name}"
                if _excluded(rel, own):
                    continue
                if item.is_dir(follow_symlinks=False):
                    yield from walk(Path(item.path), f"{rel}/")
                else:
                    yield rel, Path(item.path)

    for rel, path in walk(directory, ""):
        entry = _entry(path)
        if entry is not None:
            entries[rel] = entry
    return entries


def work_tree_entries(root: Path, own: Sequence[str]) -> dict[str, TreeEntry]:
    """The code of the artifact's working tree as git sees it: tracked files that still exist
    and untracked files that are not ignored, minus ``own``."""
    listed = git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root).stdout
    entries: dict[str, TreeEntry] = {}
    for raw in sorted(set(listed.split(b"\0")) - {b""}):
        rel = os.fsdecode(raw)
        if _excluded(rel, own):
            continue
        path = root / rel
        if not os.path.lexists(path) or (path.is_dir() and not path.is_symlink()):
            continue  # deleted in the working tree, or a submodule
        entry = _entry(path)
        if entry is not None:
            entries[rel] = entry
    return entries


def tree_digest(entries: Mapping[str, TreeEntry]) -> str:
    """The tree digest of ``entries`` (definition in the module docstring)."""
    digest = hashlib.sha256()
    for path in sorted(entries, key=lambda p: p.encode("utf-8", "surrogateescape")):
        entry = entries[path]
        digest.update(f"{entry.mode} {entry.sha256} ".encode() + path.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def index_tree(root: Path, commit: str, patches: Sequence[Path], *, add: Sequence[str] | None = None,
               own: Sequence[str] = ()) -> str:
    """The tree id of ``commit`` with ``patches`` applied in order and then, when ``add`` is not
    None, the working-tree state of the pathspecs ``add`` (all code when empty) staged on top.

    Works in a private index, so the user's index, HEAD and working tree are not touched. A patch
    that does not apply raises GitError naming it.
    """
    with tempfile.TemporaryDirectory(prefix="rra-index-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(["read-tree", commit], cwd=root, env=env)
        for patch in patches:
            done = git(["apply", "--cached", "--binary", str(patch)], cwd=root, env=env, check=False)
            if done.returncode != 0:
                message = done.stderr.decode("utf-8", "replace").strip()
                raise GitError(f"patch {patch.name} does not apply on the upstream commit with the patches before "
                               f"it: {message}", "re-create the series: remove the patch and record the change again")
        if add is not None:
            git(["add", "-A", "--", *(add or ["."]), *exclude_pathspecs(own)], cwd=root, env=env)
        return git(["write-tree"], cwd=root, env=env).stdout.decode().strip()


def diff_trees(root: Path, old: str, new: str) -> tuple[bytes, list[str]]:
    """The unified diff (``git apply`` format, binary included) from tree ``old`` to ``new``, and
    the paths it touches."""
    patch = git(["diff", *DIFF_OPTIONS, old, new], cwd=root).stdout
    names = git(["diff", "--no-renames", "--name-only", "-z", old, new], cwd=root).stdout
    return patch, [os.fsdecode(n) for n in names.split(b"\0") if n]


def checkout_commit(root: Path, commit: str, target: Path) -> None:
    """Write the files of ``commit`` into the empty directory ``target`` (a clean checkout that
    shares nothing with the artifact's index or working tree)."""
    with tempfile.TemporaryDirectory(prefix="rra-index-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(["read-tree", commit], cwd=root, env=env)
        git(["--work-tree", str(target), "checkout-index", "-a", "-f"], cwd=root, env=env)


def apply_patch(target: Path, patch: Path, *, reverse: bool = False) -> str | None:
    """Apply ``patch`` (``reverse``: undo it) strictly (no fuzz, no offsets beyond what git allows)
    in the plain directory ``target``; None when it applied, else git's message."""
    # GIT_CEILING_DIRECTORIES keeps git from taking a repository above the scratch directory.
    done = git(["apply", *(["-R"] if reverse else []), "--binary", "--whitespace=nowarn", str(patch.resolve())],
               cwd=target, env={"GIT_CEILING_DIRECTORIES": str(target.parent)}, check=False)
    return None if done.returncode == 0 else done.stderr.decode("utf-8", "replace").strip()


def patched_paths(target: Path, patch: Path) -> list[str]:
    """The paths ``patch`` touches, as git apply reads them (its own parser: ``--numstat``)."""
    done = git(["apply", "--numstat", "-z", str(patch.resolve())], cwd=target,
               env={"GIT_CEILING_DIRECTORIES": str(target.parent)}, check=False)
    # -z: '<added>\t<deleted>\t<path>\0' per file.
    return sorted({os.fsdecode(item.split(b"\t", 2)[2]) for item in done.stdout.split(b"\0") if item.count(b"\t") >= 2})
