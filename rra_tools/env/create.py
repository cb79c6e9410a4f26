"""Build a virtual environment from a lock, hash-checked, in a cache keyed by the lock's digest.

The environment lives in ``<cache>/envs/<sha256[:16]>`` (cache: ``RRA_CACHE_DIR``, else
``~/.cache/rra``). Its marker file ``.rra-env.json`` is written last, atomically: a directory
without it is an interrupted build and is rebuilt; one with it is reused as is.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ExitStatus
from ..io.cache import CACHE_VAR, cache_root
from ..io.digest import sha256_file
from ..io.atomic import write_atomic
from .errors import EnvLayerError
from .locks import LockFile, read_lock

if TYPE_CHECKING:
    from ..io.artifact import Artifact
    from .own_package import PackageSource
from .resolve import find_uv

__all__ = ["CACHE_VAR", "MARKER", "CreateError", "CreatedEnv", "cache_root", "create_env", "hashed_requirements",
           "uv_compiles_for"]

#: File that marks a complete environment; written last.
MARKER = ".rra-env.json"
#: Version of what a built environment holds; a marker of another version is rebuilt. 2: bytecode
#: compiled at install (a run's clean shell sets PYTHONDONTWRITEBYTECODE, so an environment without
#: it would compile every imported module, e.g. scikit-learn's, on every run).
ENV_FORMAT = 2


class CreateError(EnvLayerError):
    """The environment could not be built; the message says why."""

    exit_status = ExitStatus.FAILED


@dataclass(frozen=True)
class CreatedEnv:
    """A built (or reused) environment."""

    path: Path
    python: Path
    lock_sha256: str
    reused: bool
    packages: int


def hashed_requirements(lock: LockFile) -> str:
    """The lock as pip requirements, every line ``name==version [; marker] --hash=...`` (for --require-hashes)."""
    if lock.format == "conda-lock":
        raise CreateError(f"{lock.path}: a conda-lock lock holds conda packages, which pip and uv cannot "
                          "install; use 'conda-lock install' for it")
    lines = []
    problems = []
    for package in lock.packages:
        if package.tree_sha256 is not None:
            continue  # the artifact's own package: installed from its tree (create_env)
        if package.source in ("directory", "vcs") or not package.hashes or package.version is None:
            where = f"{lock.path}:{package.line}" if package.line else lock.path
            problems.append(f"{where}: {package.name} ({package.source} {package.location or ''}) has no "
                            "hashes and cannot be installed hash-checked".replace(" )", ")"))
            continue
        marker = f" ; {package.marker}" if package.marker else ""
        hashes = " ".join(f"--hash={alg}:{digest}" for alg, digest in package.hashes)
        lines.append(f"{package.name}=={package.version}{marker} {hashes}")
    if problems:
        raise CreateError("\n".join(problems))
    return "\n".join(lines) + "\n"


def create_env(lock_path: Path, fmt: str, *, python: str | None = None, cache: Path | None = None,
               expected_sha256: str | None = None, display: str | None = None,
               artifact: Artifact | None = None) -> CreatedEnv:
    """Build (or reuse) the environment for the lock at ``lock_path``; refuse when hashes do not match.

    A lock that holds the artifact's own package (``environment.package``) needs ``artifact``:
    the package's tree must still have the digest the lock records, checked on every call."""
    shown = display or str(lock_path)
    try:
        digest = sha256_file(lock_path)
    except OSError as exc:
        raise CreateError(f"cannot read the lock file {shown!r}: {exc.strerror or exc}") from None
    if expected_sha256 is not None and digest != expected_sha256:
        raise CreateError(f"lock file {shown!r} has sha256 {digest!r}, the manifest records {expected_sha256!r}; "
                          "refusing to build from a lock the manifest does not pin (run 'rra lock' to re-record)")
    root = (cache or cache_root()) / "envs"
    # Another interpreter than this one builds another environment from the same lock.
    same_python = python is None or os.path.realpath(python) == os.path.realpath(sys.executable)
    target = root / (digest[:16] if same_python else f"{digest[:16]}-{hashlib.sha256(str(python).encode()).hexdigest()[:8]}")
    marker = target / MARKER
    # Only a lock that holds the artifact's own package is read before a reuse (its tree is
    # checked every time); for any other the warm path stays a digest and a marker.
    lock = read_lock(lock_path, fmt, display=shown) if _names_own_package(lock_path) else None
    own = _own_package(lock, artifact, shown) if lock is not None else None
    existing = _read_marker(marker, digest)
    if existing is not None:
        return CreatedEnv(path=target, python=target / "bin" / "python", lock_sha256=digest, reused=True,
                          packages=existing)
    lock = lock or read_lock(lock_path, fmt, display=shown)
    requirements = hashed_requirements(lock)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{digest[:16]}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # one builder per environment; others wait and then reuse
        existing = _read_marker(marker, digest)
        if existing is not None:
            return CreatedEnv(path=target, python=target / "bin" / "python", lock_sha256=digest, reused=True,
                              packages=existing)
        if target.exists():
            shutil.rmtree(target)  # an interrupted build: no marker
        uv = find_uv()
        venv_args = [uv, "venv", "--quiet", "--no-python-downloads", "--python", python or sys.executable,
                     str(target)]
        try:
            _run(venv_args, f"creating the virtual environment in {target}")
            with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="rra-hashed-", delete=False) as handle:
                handle.write(requirements)
            compiles = uv_compiles_for(target)
            try:
                _run([uv, "pip", "install", "--quiet", "--python", str(target / "bin" / "python"),
                      "--require-hashes", "--no-deps", *(["--compile-bytecode"] if compiles else []),
                      "-r", handle.name],
                     f"installing the packages of {shown} (hash-checked)")
            finally:
                os.unlink(handle.name)
            if not compiles:
                # The environment's own compileall, which every Python has.
                _run([str(target / "bin" / "python"), "-m", "compileall", "-q", str(target / "lib")],
                     f"compiling the packages of {shown} to bytecode")
            if own is not None and artifact is not None:
                _install_own_package(uv, target, own, artifact)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)  # never leave a half-built environment behind
            raise
        record = {"lock_sha256": digest, "lock": shown, "format": fmt, "packages": len(lock.packages),
                  "python": python or sys.executable, "env_format": ENV_FORMAT}
        write_atomic(marker, (json.dumps(record, sort_keys=True, indent=2) + "\n").encode("utf-8"))
    return CreatedEnv(path=target, python=target / "bin" / "python", lock_sha256=digest, reused=False,
                      packages=len(lock.packages))


def uv_compiles_for(env: Path) -> bool:
    """Whether ``uv pip install --compile-bytecode`` can compile for the environment ``env``:
    uv's compiler script needs Python 3.7 (``py_compile.PycInvalidationMode``), and a lock of a
    paper's Python 3.6 is built with 3.6 (its ``pyvenv.cfg`` says which)."""
    import re

    try:
        config = (env / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    found = re.search(r"^version(?:_info)?\s*=\s*(\d+)\.(\d+)", config, re.M)
    return found is None or (int(found.group(1)), int(found.group(2))) >= (3, 7)


def _names_own_package(lock_path: Path) -> bool:
    try:
        with open(lock_path, "rb") as handle:
            return b"tree-sha256" in handle.read()
    except OSError:
        return True  # read_lock says why it cannot be read


def _own_package(lock: LockFile, artifact: Artifact | None, shown: str) -> PackageSource | None:
    """The artifact's own package the lock holds, its tree checked against the lock's digest."""
    own = [p for p in lock.packages if p.tree_sha256 is not None]
    if not own:
        return None
    from packaging.utils import canonicalize_name

    from .own_package import own_package, package_tree_digest

    locked = own[0]
    source = own_package(artifact) if artifact is not None else None
    if source is None or canonicalize_name(source.name) != locked.name:
        raise CreateError(f"{shown} holds the artifact's own package {locked.name!r}, but the manifest's "
                          "environment.package does not name it; run 'rra lock' again")
    tree = package_tree_digest(artifact, source) if artifact is not None else ""
    if tree != locked.tree_sha256:
        raise CreateError(f"the tree of package {source.name!r} ({source.rel}) has sha256 {tree}, the lock "
                          f"{shown} records {locked.tree_sha256}: the code changed since it was locked; run "
                          "'rra lock' to record it")
    return source


def _install_own_package(uv: str, target: Path, source: PackageSource, artifact: Artifact) -> None:
    """Install the package from a copy of its tree: no dependencies (the lock installed them), no
    build isolation (the lock installed the build requirements), no index (nothing is fetched)."""
    from .own_package import staged_copy, temporary_directory

    with temporary_directory() as tmp:
        copy = staged_copy(source, artifact, Path(tmp))
        _run([uv, "pip", "install", "--quiet", "--python", str(target / "bin" / "python"), "--no-deps",
              "--no-build-isolation", "--no-index", *(["--compile-bytecode"] if uv_compiles_for(target) else []),
              str(copy)],
             f"installing the artifact's package {source.name!r} from {source.rel}")


def _read_marker(marker: Path, digest: str) -> int | None:
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("lock_sha256") != digest or data.get("env_format") != ENV_FORMAT:
        return None
    packages = data.get("packages", 0)
    return packages if isinstance(packages, int) else 0


def _run(argv: list[str], what: str) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False,
                          env={**os.environ, "UV_NO_PROGRESS": "1"})
    if proc.returncode != 0:
        detail = proc.stderr.strip()[-3000:]
        if "hash mismatch" in detail.lower():
            raise CreateError(f"{what}: refused, a downloaded file does not match the lock's hash; "
                              f"the lock or the index is not what was locked.\n{detail}")
        raise CreateError(f"{what} failed:\n{detail}")
